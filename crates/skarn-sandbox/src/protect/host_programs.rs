//! Places the host's own configuration makes host programs run or read
//! (host side, before planning): the files the global and system git
//! configuration includes, the programs and directories it names
//! (`core.pager`, `core.editor`, `sequence.editor`, `init.templateDir`,
//! credential helpers, diff and merge tools, filters, `gpg.program`, ...),
//! and the directories of the caller's `PATH`. Any of them inside a
//! writable grant would let a command plant what the host runs next; the
//! planner keeps each such place read-only (reserved when missing).

use std::path::{Path, PathBuf};

use crate::protect::git::gitconfig;
use crate::protect::trusted::link_hops_to;

/// Include files read per configuration file, at most (a bound).
const MAX_INCLUDE_DEPTH: u32 = 10;

/// The global and system git configuration files (those git reads
/// without a repository), in git's order.
pub(crate) fn global_git_files(home: &Path) -> Vec<PathBuf> {
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
    // The bytes git uses (see `gitconfig::decode_bytes`).
    let p = if let Some(rest) = v.strip_prefix("~/") {
        home.join(gitconfig::value_path(rest))
    } else if v == "~" {
        home.to_path_buf()
    } else {
        base.join(gitconfig::value_path(v))
    };
    Some(crate::policy::config::normalize(&p))
}

/// Every file the global and system git configuration include (any
/// condition), with how it is reached.
pub(crate) fn global_git_includes(home: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for f in global_git_files(home) {
        walk(&f, home, 0, &mut out, &mut Vec::new());
    }
    out
}

/// The programs and directories the global and system git configuration
/// (with its includes) names, with the key naming each.
pub fn global_git_programs(home: &Path) -> Vec<(PathBuf, String, bool)> {
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
            // `credential.helper = store --file X`: X holds the tokens.
            let store = it.section == "credential" && v.contains("store");
            let via = format!("{} of {}", it.key(), f.display());
            for p in command_paths(v, home) {
                out.push((p, via.clone(), store));
            }
        }
    }
    // GIT_CONFIG_COUNT / GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n: the same
    // keys given by the environment.
    for (it, via) in env_config_items() {
        if let Some(v) = it.value.as_deref()
            && names_program(&it)
        {
            for p in command_paths(v, home) {
                out.push((p, via.clone(), false));
            }
        }
    }
    out
}

/// The items of git's configuration the environment gives
/// (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_<n>`, `GIT_CONFIG_VALUE_<n>`), each
/// with how it is named.
pub(crate) fn env_config_items() -> Vec<(gitconfig::Item, String)> {
    let n: usize = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let mut out = Vec::new();
    for i in 0..n.min(1000) {
        let (Ok(k), Ok(v)) = (
            std::env::var(format!("GIT_CONFIG_KEY_{i}")),
            std::env::var(format!("GIT_CONFIG_VALUE_{i}")),
        ) else {
            continue;
        };
        let parts: Vec<&str> = k.split('.').collect();
        let (Some(first), Some(last)) = (parts.first(), parts.last()) else {
            continue;
        };
        let it = gitconfig::Item {
            section: first.to_ascii_lowercase(),
            sub: (parts.len() > 2).then(|| parts[1..parts.len() - 1].join(".")),
            name: last.to_ascii_lowercase(),
            value: Some(v),
        };
        out.push((it, format!("GIT_CONFIG_KEY_{i} ({k})")));
    }
    // GIT_CONFIG_PARAMETERS: the `-c` items a git command passes on.
    let params = std::env::var("GIT_CONFIG_PARAMETERS").unwrap_or_default();
    for (k, v) in crate::protect::git::config_parameters::parse(&params) {
        let parts: Vec<&str> = k.split('.').collect();
        let (Some(first), Some(last)) = (parts.first(), parts.last()) else {
            continue;
        };
        if parts.len() < 2 {
            continue;
        }
        let it = gitconfig::Item {
            section: first.to_ascii_lowercase(),
            sub: (parts.len() > 2).then(|| parts[1..parts.len() - 1].join(".")),
            name: last.to_ascii_lowercase(),
            value: v,
        };
        out.push((it, format!("GIT_CONFIG_PARAMETERS ({k})")));
    }
    out
}

/// The files a git configuration file `f` includes (any condition,
/// recursively, bounded), with how each is reached.
pub(crate) fn includes_of(f: &Path, home: &Path, out: &mut Vec<(PathBuf, String)>) {
    walk(f, home, 0, out, &mut Vec::new());
}

/// A git configuration file's text, as [`global_git_programs`] reads it
/// (a final link followed; `None` when missing).
pub(crate) fn read_git_file(f: &Path) -> Result<Option<String>, &'static str> {
    read(f)
}

/// The paths a shell command line names as the shell would expand them:
/// absolute, `~/`, `$HOME/...` and `${VAR}/...` words, also after `=` in
/// an option (`--file=X`); relative words are not paths git resolves.
pub fn command_paths(v: &str, home: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for word in v.split(|c: char| c.is_whitespace() || c == '|' || c == ';' || c == '&') {
        for part in word.split('=') {
            let t = part
                .trim_start_matches('!')
                .trim_matches('"')
                .trim_matches('\'');
            let t = expand_vars(t, home);
            if (t.starts_with('/') || t.starts_with("~/"))
                && let Some(p) = expand(&t, Path::new("/"), home)
            {
                out.push(p);
            }
        }
    }
    out
}

/// `$VAR` and `${VAR}` at the start of a word, from this environment
/// (`HOME` from `home`).
fn expand_vars(t: &str, home: &Path) -> String {
    let Some(rest) = t.strip_prefix('$') else {
        return t.to_string();
    };
    let (name, tail) = if let Some(r) = rest.strip_prefix('{') {
        match r.split_once('}') {
            Some((n, tail)) => (n, tail),
            None => return t.to_string(),
        }
    } else {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        (&rest[..end], &rest[end..])
    };
    let value = if name == "HOME" {
        Some(home.display().to_string())
    } else {
        std::env::var(name).ok()
    };
    match value {
        Some(v) => format!("{v}{}", tail.trim_start_matches('"')),
        None => t.to_string(),
    }
}

/// Whether a git configuration key names a program (see
/// [`crate::protect::git::program_keys`]).
pub(crate) fn names_program(it: &gitconfig::Item) -> bool {
    crate::protect::git::program_keys::names_program(it)
}

pub(crate) fn read(f: &Path) -> Result<Option<String>, &'static str> {
    // The global files are the user's own: follow a final link (a
    // dotfiles repository), unlike a repository's files.
    match std::fs::metadata(f) {
        Ok(m) if m.is_file() && m.len() <= gitconfig::MAX_FILE => {}
        Ok(_) => return Err("not a small regular file"),
        Err(_) => return Ok(None),
    }
    std::fs::read(f)
        .map(|b| Some(gitconfig::decode_bytes(&b)))
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

/// The directories of `PATH` as a shell looks them up: relative ones
/// (and an empty entry, the current directory) against `cwd`, a leading
/// `~` against `home` (bash expands it there).
pub fn path_dirs(cwd: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let Some(p) = std::env::var_os("PATH") else {
        return Vec::new();
    };
    std::env::split_paths(&p)
        .take(1000)
        .map(|d| {
            let s = d.to_string_lossy();
            if let (Some(rest), Some(h)) = (s.strip_prefix("~/"), home) {
                h.join(rest)
            } else if d.is_absolute() {
                d
            } else {
                crate::policy::config::normalize(&cwd.join(d))
            }
        })
        .collect()
}

/// Entries of one `PATH` directory looked at for links, at most.
pub const MAX_PATH_DIR_ENTRIES: usize = 65_536;

/// What a `PATH` directory `dir` (real place `real`) makes the host run
/// besides its own entries: the places its links lead to (`~/bin/foo ->
/// ../dotfiles/scripts/foo.sh`, system directories included, at most
/// [`MAX_PATH_DIR_ENTRIES`] entries) and, for the `bin` of a virtual environment (`pyvenv.cfg`
/// or `conda-meta` beside it), the environment itself (its python loads
/// `.pth` files and modules from `lib`).
pub fn path_dir_places(
    dir: &Path,
    real: &Path,
    cache: &mut crate::policy::canonical::CanonicalCache,
) -> Vec<crate::protect::trusted::Trusted> {
    use crate::protect::trusted::Trusted;
    let mut out = Vec::new();
    if let Some(env) = real.parent()
        && ["pyvenv.cfg", "conda-meta"]
            .iter()
            .any(|m| std::fs::symlink_metadata(env.join(m)).is_ok())
    {
        let via = format!(
            "the environment whose bin is the PATH entry {}",
            dir.display()
        );
        out.push(Trusted::new(env, env.to_path_buf(), via, false));
    }
    // System directories too (h22b D): `/usr/local/bin/tool ->
    // ~/proj/tool` is the user's own link, and the host's next `tool`
    // runs what the workspace holds. Only links are resolved.
    let Ok(rd) = std::fs::read_dir(real) else {
        return out;
    };
    let system = |p: &Path| {
        crate::policy::SYSTEM_EXEC_DIRS
            .iter()
            .any(|s| p.starts_with(s))
    };
    let in_system = system(real);
    for e in rd.flatten().take(MAX_PATH_DIR_ENTRIES) {
        if !e.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        let p = e.path();
        // In a system directory, a link to a name of the same directory
        // (`python3 -> python3.12`) leads where that entry leads, and that
        // entry is looked at itself: skipped (most of `/usr/bin`'s links).
        if in_system
            && crate::policy::link_facts::read_link(&p)
                .is_ok_and(|t| t.components().count() == 1 && !t.has_root())
        {
            continue;
        }
        // A chain that stays in system directories is no place a run can
        // change: not carried (the planner would drop it). Walked once,
        // link by link, before the exact resolution.
        if in_system {
            let (hops, end) = link_hops_to(&p);
            if hops.len() < 40 && system(&end) && hops.iter().all(|h| system(h)) {
                continue;
            }
        }
        if let Some(target) = cache.resolve(&p) {
            let via = format!(
                "{} (a link in the PATH entry {})",
                p.display(),
                dir.display()
            );
            out.push(Trusted::new(&p, target, via, false));
        }
    }
    out
}

/// The caller-environment list, kept as data in [`crate::protect::env_places`]
/// (a leaf: the environment-file judge reads it too).
pub(crate) use crate::protect::env_places::ENV_PLACES;

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
        let h = home.unwrap_or(Path::new("/nonexistent"));
        for word in v.split(':') {
            for p in command_paths(word, h) {
                out.push((p, format!("${var}"), *secret));
            }
            // An option glued to its path (`-I/dir`, `-r/x.rb`, `@/argfile`).
            for w in word.split_whitespace() {
                if w.starts_with(['-', '@'])
                    && let Some(i) = w.find('/')
                {
                    for p in command_paths(&w[i..], h) {
                        out.push((p, format!("${var}"), *secret));
                    }
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
            .map(|(p, _, _)| p)
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
