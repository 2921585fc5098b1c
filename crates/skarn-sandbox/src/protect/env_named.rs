//! Files any variable of the caller names: the shape rule behind the
//! named list (attack atk22g F1).
//!
//! [`crate::protect::host_programs::ENV_PLACES`] lists the variables whose
//! programs are known to read or run a file on their own (`BASH_ENV`,
//! `VIMINIT`, `LESSKEYIN`, ...). No list is complete: every tool has its
//! `FOO_CONFIG`/`FOORC`, and a variable that names a workspace file is
//! exactly how a host program comes to run what the workspace holds. So
//! every other variable of the caller whose value names an existing
//! regular file (an absolute or `~/` word, `:`-separated lists and glued
//! options read as for the listed ones) makes that file a trusted place:
//! kept read-only where it lies inside a writable grant, and refused to
//! the agent's file tools. Directories are left out (a variable naming
//! the project, a build directory or an environment must not freeze
//! it), and so are names that do not exist yet (outputs a tool is told
//! to write: only the listed variables reserve a missing name).
//! Budgeted: a hostile environment cannot make the scan costly.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Variables read here at most.
const MAX_VARS: usize = 512;
/// Values longer than this are not read.
const MAX_VALUE: usize = 16 * 1024;
/// Candidate words of one variable at most.
const MAX_WORDS: usize = 32;
/// Places kept at most.
const MAX_PLACES: usize = 256;

/// Variables whose files are outputs tools rewrite as part of their job,
/// or that name the current position rather than a configuration.
const NOT_CONFIGURATION: &[&str] = &[
    "PWD",
    "OLDPWD",
    "_",
    "COVERAGE_FILE",
    "HISTFILE",
    // Set by git for the hooks it runs: the index a hook's command updates.
    "GIT_INDEX_FILE",
];

/// The existing files every variable of `vars` that is not in `listed`
/// names: (place, how it is named, false).
pub fn places(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    home: Option<&Path>,
    listed: &[&str],
) -> Vec<(PathBuf, String, bool)> {
    let h = home.unwrap_or(Path::new("/nonexistent"));
    let mut out: Vec<(PathBuf, String, bool)> = Vec::new();
    for (k, v) in vars.into_iter().take(MAX_VARS) {
        let (Some(k), Some(v)) = (k.to_str(), v.to_str()) else {
            continue;
        };
        if v.len() > MAX_VALUE
            || NOT_CONFIGURATION.contains(&k)
            || listed.contains(&k)
            || !(v.contains('/'))
        {
            continue;
        }
        let mut words = Vec::new();
        for part in v.split(':') {
            words.extend(crate::protect::host_programs::command_paths(part, h));
            // An option glued to its path (`-I/dir`, `@/argfile`).
            for w in part.split_whitespace() {
                if w.starts_with(['-', '@'])
                    && let Some(i) = w.find('/')
                {
                    words.extend(crate::protect::host_programs::command_paths(&w[i..], h));
                }
            }
            if words.len() >= MAX_WORDS {
                break;
            }
        }
        words.truncate(MAX_WORDS);
        for p in words {
            if !out.iter().any(|(q, _, _)| *q == p) && p.is_file() {
                out.push((p, format!("${k} (a file a host program may read)"), false));
                if out.len() >= MAX_PLACES {
                    return out;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn existing_files_of_unlisted_variables_are_named() {
        let d = std::env::temp_dir().join(format!("skarn-env-named-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("dir")).unwrap();
        for f in ["vimrc", "rg", "argfile", "out", "listed"] {
            std::fs::write(d.join(f), "x").unwrap();
        }
        let s = |p: &str| d.join(p).display().to_string();
        let vars: Vec<(OsString, OsString)> = [
            ("VIMINIT_X", format!("source {}", s("vimrc"))),
            ("RIPGREP_CONFIG_PATH", s("rg")),
            ("TOOL_OPTS", format!("-q @{}", s("argfile"))),
            ("PROJECT_DIR", s("dir")),
            ("REPORT", s("missing.xml")),
            ("COVERAGE_FILE", s("out")),
            ("BASH_ENV", s("listed")),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
        let got: Vec<PathBuf> = places(vars, None, &["BASH_ENV"])
            .into_iter()
            .map(|(p, _, _)| p)
            .collect();
        assert_eq!(got, vec![d.join("vimrc"), d.join("rg"), d.join("argfile")]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_hostile_environment_is_bounded() {
        let vars = (0..5000).map(|i| {
            (
                OsString::from(format!("V{i}")),
                OsString::from("/etc/hostname:".repeat(100)),
            )
        });
        assert!(places(vars, None, &[]).len() <= 1);
    }
}
