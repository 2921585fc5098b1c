//! What a workspace's mise configuration makes mise load on its own
//! (attack pass h22b F). With `mise activate`, every `cd` into the project
//! applies its `[env]`: `_.source` scripts are run by a shell, `_.file`
//! files (dotenv, JSON, YAML) set variables (`LD_PRELOAD`, `BASH_ENV`),
//! `_.path` directories go in front of `PATH`; `[hooks]` commands run on
//! enter, leave and cd. The configuration files are protected by name
//! ([`crate::protect::persistence`]); the files they name are not, so a
//! run could rewrite `scripts/env.sh` and the host's next `cd` would run
//! it. [`named`] reads them as mise does (relative to the project root,
//! `{{config_root}}` and `~` expanded): the planner keeps each read-only
//! (reserved when missing), and a missing `_.path` directory is checked
//! after the run like `.envrc`'s `PATH_add` ones.

use std::path::{Path, PathBuf};

/// Configuration files mise reads in a project directory (relative), in
/// no particular order (all are read).
const FILES: &[&str] = &[
    "mise.toml",
    ".mise.toml",
    "mise.local.toml",
    ".mise.local.toml",
    ".mise/config.toml",
    ".mise/config.local.toml",
    "mise/config.toml",
    ".config/mise.toml",
    ".config/mise/config.toml",
    ".config/mise/config.local.toml",
];

/// Bytes read per file, at most.
const MAX_BYTES: u64 = 1 << 20;
/// Paths kept, at most.
const MAX_PATHS: usize = 256;

/// What [`named`] found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Named {
    /// Files mise runs or loads (`_.source`, `_.file`, hook scripts).
    pub files: Vec<PathBuf>,
    /// Directories mise puts in front of `PATH` (`_.path`).
    pub path_dirs: Vec<PathBuf>,
}

/// The files and `PATH` directories the mise configuration of the
/// project `ws` names (and of its `conf.d` files).
pub fn named(ws: &Path, home: Option<&Path>) -> Named {
    let mut out = Named::default();
    let mut files: Vec<PathBuf> = FILES.iter().map(|f| ws.join(f)).collect();
    // The per-environment files (`mise.<env>.toml`, `.mise.<env>.local.toml`,
    // `.config/mise/config.<env>.toml`): the host's shell may name any
    // environment later, so all are read.
    for (d, config_dir) in [
        (ws.to_path_buf(), false),
        (ws.join(".config"), false),
        (ws.join(".config/mise"), true),
        (ws.join(".mise"), true),
        (ws.join("mise"), true),
    ] {
        if let Ok(rd) = std::fs::read_dir(&d) {
            files.extend(
                rd.flatten()
                    .filter(|e| {
                        let n = e.file_name();
                        let n = n.to_string_lossy();
                        if config_dir {
                            n.starts_with("config.") && n.ends_with(".toml")
                        } else {
                            crate::protect::grant_walk::mise_env_file(&n)
                        }
                    })
                    .map(|e| e.path())
                    .take(64),
            );
        }
    }
    files.sort();
    files.dedup();
    for d in [".mise/conf.d", ".config/mise/conf.d"] {
        if let Ok(rd) = std::fs::read_dir(ws.join(d)) {
            files.extend(
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                    .take(64),
            );
        }
    }
    for f in files {
        let Some(text) = read(&f) else { continue };
        let Ok(v) = text.parse::<toml::Table>() else {
            // Unparsable: mise would refuse it too.
            continue;
        };
        read_env(v.get("env"), ws, home, &mut out);
        read_hooks(v.get("hooks"), ws, home, &mut out.files);
    }
    for v in [&mut out.files, &mut out.path_dirs] {
        v.sort();
        v.dedup();
        v.truncate(MAX_PATHS);
    }
    out
}

fn read(f: &Path) -> Option<String> {
    let m = std::fs::metadata(f).ok()?;
    if !m.is_file() || m.len() > MAX_BYTES {
        return None;
    }
    std::fs::read_to_string(f).ok()
}

/// `[env]` as a table, or `[[env]]` as an array of tables.
fn read_env(env: Option<&toml::Value>, ws: &Path, home: Option<&Path>, out: &mut Named) {
    let tables: Vec<&toml::Table> = match env {
        Some(toml::Value::Table(t)) => vec![t],
        Some(toml::Value::Array(a)) => a.iter().filter_map(|v| v.as_table()).collect(),
        _ => return,
    };
    for t in tables {
        let Some(under) = t.get("_").and_then(|v| v.as_table()) else {
            continue;
        };
        for (key, into_path) in [("source", false), ("file", false), ("path", true)] {
            for p in values(under.get(key)) {
                if let Some(p) = resolve(&p, ws, home) {
                    if into_path {
                        out.path_dirs.push(p);
                    } else {
                        out.files.push(p);
                    }
                }
            }
        }
    }
}

/// The path-like words of `[hooks]` commands (`enter = "./scripts/x"`).
fn read_hooks(hooks: Option<&toml::Value>, ws: &Path, home: Option<&Path>, out: &mut Vec<PathBuf>) {
    let Some(t) = hooks.and_then(|h| h.as_table()) else {
        return;
    };
    for v in t.values() {
        for cmd in values(Some(v)) {
            for w in crate::protect::shell_words::words(&cmd) {
                if w.contains('/')
                    && let Some(p) = resolve(&w, ws, home)
                {
                    out.push(p);
                }
            }
        }
    }
}

/// A string, an array of strings, or tables with `path` (or `run` for a
/// hook) — every string given.
fn values(v: Option<&toml::Value>) -> Vec<String> {
    match v {
        Some(toml::Value::String(s)) => vec![s.clone()],
        Some(toml::Value::Array(a)) => a.iter().flat_map(|x| values(Some(x))).collect(),
        Some(toml::Value::Table(t)) => ["path", "run", "script"]
            .iter()
            .flat_map(|k| values(t.get(*k)))
            .collect(),
        _ => Vec::new(),
    }
}

/// A configured path as mise resolves it: `{{config_root}}` (and
/// `{{ config_root }}`) is the project, `~/` the home, a relative path
/// is below the project. Other templates may stand for anything: the
/// literal part before them (a directory of the project) is kept.
fn resolve(v: &str, ws: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let root = ws.display().to_string();
    let mut s = v
        .replace("{{config_root}}", &root)
        .replace("{{ config_root }}", &root);
    if let Some(i) = s.find("{{") {
        s.truncate(i);
        s = s.trim_end_matches('/').to_string();
        if s.is_empty() {
            return Some(ws.to_path_buf());
        }
    }
    for h in ["{{env.HOME}}", "{{ env.HOME }}"] {
        if let (Some(rest), Some(home)) = (v.strip_prefix(h), home) {
            let rest = rest.trim_start_matches('/');
            return resolve(rest, home, Some(home)).filter(|_| !rest.contains("{{"));
        }
    }
    let p = if let Some(rest) = s.strip_prefix("~/") {
        home?.join(rest)
    } else {
        ws.join(&s)
    };
    Some(crate::policy::config::normalize(&p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_files_paths_and_hooks_are_named() {
        let t = skarn_test_support::TempDir::new("mise-env");
        let ws = t.path().to_path_buf();
        std::fs::write(
            ws.join("mise.toml"),
            "[env]\n_.source = \"./scripts/env.sh\"\n_.file = [\".env.json\", {path = \"x.env\"}]\n\
             _.path = [\"{{config_root}}/tools\", \"bin\"]\n\
             [hooks]\nenter = \"./scripts/enter.sh --x\"\n",
        )
        .unwrap();
        let n = named(&ws, None);
        for f in ["scripts/env.sh", ".env.json", "x.env", "scripts/enter.sh"] {
            assert!(n.files.contains(&ws.join(f)), "{f}: {n:?}");
        }
        assert_eq!(n.path_dirs, vec![ws.join("bin"), ws.join("tools")]);
    }

    #[test]
    fn an_unknown_template_keeps_its_literal_directory() {
        let ws = Path::new("/w");
        assert_eq!(
            resolve("scripts/{{env.X}}.sh", ws, None),
            Some(PathBuf::from("/w/scripts"))
        );
        assert_eq!(resolve("{{env.X}}", ws, None), Some(PathBuf::from("/w")));
    }
}
