//! Places the host's own configuration makes host programs run or read
//! (host side, before planning): the files the global and system git
//! configuration includes, the programs and directories it names
//! (`core.pager`, `core.editor`, `sequence.editor`, `init.templateDir`,
//! credential helpers, diff and merge tools, filters, `gpg.program`, ...),
//! and the directories of the caller's `PATH`. Any of them inside a
//! writable grant would let a command plant what the host runs next; the
//! planner keeps each such place read-only (reserved when missing).

use std::path::{Path, PathBuf};

use crate::gitconfig;

/// Include files read per configuration file, at most (a bound).
const MAX_INCLUDE_DEPTH: u32 = 10;

/// The global and system git configuration files (those git reads
/// without a repository), in git's order.
pub fn global_git_files(home: &Path) -> Vec<PathBuf> {
    let env = |n: &str| {
        std::env::var_os(n)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let mut v = vec![env("GIT_CONFIG_SYSTEM").unwrap_or_else(|| PathBuf::from("/etc/gitconfig"))];
    let xdg = env("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config"));
    v.push(xdg.join("git/config"));
    v.push(home.join(".gitconfig"));
    if let Some(g) = env("GIT_CONFIG_GLOBAL") {
        v.push(g);
    }
    v
}

/// `~` and relative paths of a git configuration value, as git reads them.
fn expand(v: &str, base: &Path, home: &Path) -> Option<PathBuf> {
    let v = v.trim().trim_matches('"').trim_matches('\'');
    if v.is_empty() {
        return None;
    }
    let p = if let Some(rest) = v.strip_prefix("~/") {
        home.join(rest)
    } else if v == "~" {
        home.to_path_buf()
    } else {
        base.join(v)
    };
    Some(crate::config::normalize(&p))
}

/// Every file the global and system git configuration include (any
/// condition), with how it is reached.
pub fn global_git_includes(home: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for f in global_git_files(home) {
        walk(&f, home, 0, &mut out, &mut Vec::new());
    }
    out
}

/// The programs and directories the global and system git configuration
/// (with its includes) names, with the key naming each.
pub fn global_git_programs(home: &Path) -> Vec<(PathBuf, String)> {
    let mut files: Vec<PathBuf> = global_git_files(home);
    files.extend(global_git_includes(home).into_iter().map(|(p, _)| p));
    let mut out = Vec::new();
    for f in files {
        let Ok(Some(text)) = read(&f) else { continue };
        for it in gitconfig::parse(&text).items {
            let Some(v) = it.value.as_deref() else {
                continue;
            };
            if !names_program(&it) {
                continue;
            }
            let base = f.parent().unwrap_or(Path::new("/"));
            for tok in v.split_whitespace() {
                let tok = tok
                    .trim_start_matches('!')
                    .trim_matches('"')
                    .trim_matches('\'');
                if (tok.starts_with('/') || tok.starts_with("~/"))
                    && let Some(p) = expand(tok, base, home)
                {
                    out.push((p, format!("{} of {}", it.key(), f.display())));
                }
            }
        }
    }
    out
}

/// Whether a git configuration key names a program (or a directory of
/// programs) git runs.
fn names_program(it: &gitconfig::Item) -> bool {
    let (sec, name) = (it.section.as_str(), it.name.as_str());
    matches!(
        (sec, name),
        (
            "core",
            "pager" | "editor" | "fsmonitor" | "hookspath" | "sshcommand" | "askpass"
        ) | ("sequence", "editor")
            | ("init", "templatedir")
            | ("credential", "helper")
            | ("diff", "command" | "textconv" | "external")
            | ("merge", "driver")
            | ("difftool" | "mergetool", "cmd" | "path")
            | ("filter", "clean" | "smudge" | "process")
            | ("gpg", "program")
            | ("interactive", "difffilter")
            | ("pager", _)
            | ("alias", _)
            | ("sendemail", "smtpserver" | "tocmd" | "cccmd")
            | ("uploadpack", "packobjectshook")
    )
}

fn read(f: &Path) -> Result<Option<String>, &'static str> {
    // The global files are the user's own: follow a final link (a
    // dotfiles repository), unlike a repository's files.
    match std::fs::metadata(f) {
        Ok(m) if m.is_file() && m.len() <= gitconfig::MAX_FILE => {}
        Ok(_) => return Err("not a small regular file"),
        Err(_) => return Ok(None),
    }
    std::fs::read(f)
        .map(|b| Some(String::from_utf8_lossy(&b).into_owned()))
        .map_err(|_| "unreadable")
}

fn walk(
    f: &Path,
    home: &Path,
    depth: u32,
    out: &mut Vec<(PathBuf, String)>,
    seen: &mut Vec<PathBuf>,
) {
    if depth > MAX_INCLUDE_DEPTH || seen.iter().any(|s| s == f) {
        return;
    }
    seen.push(f.to_path_buf());
    let Ok(Some(text)) = read(f) else { return };
    let base = f.parent().unwrap_or(Path::new("/"));
    for it in gitconfig::parse(&text).items {
        if matches!(it.section.as_str(), "include" | "includeif")
            && it.name == "path"
            && let Some(p) = it.value.as_deref().and_then(|v| expand(v, base, home))
        {
            out.push((p.clone(), format!("include.path of {}", f.display())));
            walk(&p, home, depth + 1, out, seen);
        }
    }
}

/// The absolute directories of `PATH` (as given; the caller resolves).
pub fn path_dirs() -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .filter(|d| d.is_absolute())
                .collect()
        })
        .unwrap_or_default()
}

/// Environment variables of the caller naming a file or directory a host
/// program reads on its own (start-up files, configuration homes) or a
/// program it runs: (variable, secret).
pub const ENV_PLACES: &[(&str, bool)] = &[
    ("XDG_CONFIG_HOME", false),
    ("XDG_DATA_HOME", false),
    ("XDG_STATE_HOME", false),
    ("ZDOTDIR", false),
    ("BASH_ENV", false),
    ("ENV", false),
    ("INPUTRC", false),
    ("PYTHONSTARTUP", false),
    ("GIT_CONFIG_GLOBAL", false),
    ("NPM_CONFIG_USERCONFIG", false),
    ("PIP_CONFIG_FILE", false),
    ("MYVIMRC", false),
    ("EDITOR", false),
    ("VISUAL", false),
    ("PAGER", false),
    ("GIT_EDITOR", false),
    ("GIT_PAGER", false),
    ("GIT_SSH", false),
    ("GIT_SSH_COMMAND", false),
    ("GIT_ASKPASS", false),
    ("SSH_ASKPASS", false),
    ("SUDO_ASKPASS", false),
    ("BROWSER", false),
    ("SHELL", false),
    ("GNUPGHOME", true),
    ("KUBECONFIG", true),
    ("AWS_SHARED_CREDENTIALS_FILE", true),
    ("AWS_CONFIG_FILE", true),
    ("DOCKER_CONFIG", true),
    ("CLOUDSDK_CONFIG", true),
    ("AZURE_CONFIG_DIR", true),
    ("GH_CONFIG_DIR", true),
    ("NETRC", true),
    ("PASSWORD_STORE_DIR", true),
    ("GOOGLE_APPLICATION_CREDENTIALS", true),
];

/// The places [`ENV_PLACES`] name in this process's environment (each
/// absolute or `~/` word of the value; `:`-separated lists split), with
/// how each is named and whether it is a secret.
pub fn env_places(home: Option<&Path>) -> Vec<(PathBuf, String, bool)> {
    let mut out = Vec::new();
    for (var, secret) in ENV_PLACES {
        let Some(v) = std::env::var_os(var) else {
            continue;
        };
        let v = v.to_string_lossy().into_owned();
        for word in v.split(|c: char| c.is_whitespace() || c == ':') {
            let w = word.trim_matches('"').trim_matches('\'');
            let p = match (w.strip_prefix("~/"), home) {
                (Some(rest), Some(h)) => h.join(rest),
                _ if w.starts_with('/') => PathBuf::from(w),
                _ => continue,
            };
            out.push((crate::config::normalize(&p), format!("${var}"), *secret));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_and_includes_are_named() {
        let d = std::env::temp_dir().join(format!("skarn-host-programs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join(".gitconfig"),
            "[core]\n pager = \"/ws/bin/pager --x\"\n[include]\n path = inc.cfg\n\
             [alias]\n st = !~/ws/st.sh\n[user]\n name = /not/a/program\n",
        )
        .unwrap();
        std::fs::write(d.join("inc.cfg"), "[init]\n templateDir = ~/tpl\n").unwrap();
        let inc = global_git_includes(&d);
        assert!(inc.iter().any(|(p, _)| *p == d.join("inc.cfg")), "{inc:?}");
        let progs: Vec<PathBuf> = global_git_programs(&d)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        for want in [
            PathBuf::from("/ws/bin/pager"),
            d.join("ws/st.sh"),
            d.join("tpl"),
        ] {
            assert!(progs.contains(&want), "{want:?} not in {progs:?}");
        }
        assert!(!progs.contains(&PathBuf::from("/not/a/program")));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
