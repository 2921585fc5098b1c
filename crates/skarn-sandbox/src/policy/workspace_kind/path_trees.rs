//! The trees host programs run from, as workspaces (atk22g F14, F23;
//! atk22m F8): a directory on the caller's `PATH` or one inside it, the
//! installation prefix above a `PATH` directory named `bin` (its `lib`,
//! `libexec`, `share`, `src`: the code the programs there load, a Go
//! SDK's standard library, a flutter `bin/cache`), the prefix of a
//! program a `PATH` entry links to, and the toolchain roots the
//! environment names (`$GOROOT`, `$RUSTUP_HOME`, `$CARGO_HOME`,
//! `$NVM_DIR`, ...). A workspace that is or lies in one of them
//! would let a run change what the host runs next, where git shows
//! nothing.

use std::path::{Path, PathBuf};

/// Variables naming a toolchain's installation root: programs the host
/// runs (and the code they load) live below each.
const ROOT_VARS: &[&str] = &[
    "GOROOT",
    "RUSTUP_HOME",
    "CARGO_HOME",
    "NVM_DIR",
    "N_PREFIX",
    "VOLTA_HOME",
    "PNPM_HOME",
    "BUN_INSTALL",
    "DENO_INSTALL",
    "PYENV_ROOT",
    "RBENV_ROOT",
    "RVM_PATH",
    "SDKMAN_DIR",
    "ASDF_DATA_DIR",
    "ASDF_DIR",
    "MISE_DATA_DIR",
    "JAVA_HOME",
    "ANDROID_HOME",
    "ANDROID_SDK_ROOT",
    "FLUTTER_ROOT",
    "GEM_HOME",
    "npm_config_prefix",
    "NPM_CONFIG_PREFIX",
];

/// Names of one prefix's `bin` looked up on `PATH` at most (links).
const MAX_BIN_NAMES: usize = 512;

/// `PATH` entries looked at, at most.
const MAX_PATH_ENTRIES: usize = 1000;

/// Whether `dir` is a Python environment (its `bin` on `PATH` is an
/// activated environment; the planner keeps such an environment inside a
/// writable grant read-only whole).
fn is_python_env(dir: &Path) -> bool {
    ["pyvenv.cfg", "conda-meta"]
        .iter()
        .any(|m| std::fs::symlink_metadata(dir.join(m)).is_ok())
}

/// The `PATH` entries, a leading `~` taken as the home (bash expands it
/// when it searches: atk22g F14).
fn path_entries() -> Vec<PathBuf> {
    let Some(path) = std::env::var_os("PATH") else {
        return Vec::new();
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    std::env::split_paths(&path)
        .take(MAX_PATH_ENTRIES)
        .map(|d| match (&home, d.to_str()) {
            (Some(h), Some("~")) => h.clone(),
            (Some(h), Some(s)) if s.starts_with("~/") => h.join(&s[2..]),
            _ => d,
        })
        .collect()
}

/// Why `ws` (canonical) is a tree host programs run from, if it is one;
/// `homes` are the homes (canonical) no prefix may hold.
pub(super) fn reason(ws: &Path, homes: &[PathBuf]) -> Option<String> {
    let entries = path_entries();
    // A relative or empty entry (`.`, a trailing `:`) is the directory a
    // host shell is in: the workspace (or a directory in it) for every
    // shell started there.
    if let Some(d) = entries.iter().find(|d| !d.is_absolute()) {
        return Some(format!(
            "your PATH has the relative entry {:?} (`.`, an empty entry or a relative name): in \
             {} it names the workspace or a directory in it, so a program the command put there \
             would run for a host shell started there (remove the entry from PATH)",
            d.display().to_string(),
            ws.display()
        ));
    }
    let reals: Vec<(PathBuf, PathBuf)> = entries
        .into_iter()
        .map(|d| (std::fs::canonicalize(&d).unwrap_or(d.clone()), d))
        .collect();
    for (real, d) in &reals {
        if ws.starts_with(real) {
            let how = if ws == real { "is" } else { "lies in" };
            return Some(format!(
                "{} {how} the PATH directory {}: a program the command put there would run on \
                 the host",
                ws.display(),
                d.display()
            ));
        }
        if let Some(r) = prefix_reason(ws, real, &d.display().to_string(), homes) {
            return Some(r);
        }
    }
    if let Some(r) = linked_prefix(ws, &reals, homes) {
        return Some(r);
    }
    if let Some(r) = super::launchers::reason(ws, &reals, homes) {
        return Some(r);
    }
    #[cfg(unix)]
    if let Some(r) = super::startup_dirs::reason(ws, homes) {
        return Some(r);
    }
    for var in ROOT_VARS {
        let Some(root) = super::env_dir(var) else {
            continue;
        };
        if !super::is_prefix(&root, homes) {
            continue;
        }
        // A toolchain home inside the workspace (a project-local
        // `CARGO_HOME`, `RBENV_ROOT`) is the planner's: what the host runs
        // from it is kept read-only there (`run_tool_homes_22`).
        if ws.starts_with(&root) {
            let how = if ws == root { "is" } else { "lies in" };
            return Some(format!(
                "{} {how} ${var} ({}), a toolchain's installation the host runs programs and \
                 loads code from",
                ws.display(),
                root.display()
            ));
        }
    }
    None
}

/// Why `ws` is, lies in or holds the installation prefix of the `PATH`
/// directory `real` (canonical; named `bin`), shown as `shown`.
fn prefix_reason(ws: &Path, real: &Path, shown: &str, homes: &[PathBuf]) -> Option<String> {
    // (A missing `bin` makes no installation: the planner reserves it.)
    if real.file_name().is_none_or(|n| n != "bin") || !real.is_dir() {
        return None;
    }
    let prefix = real.parent()?;
    if !super::is_prefix(prefix, homes) {
        // `~/bin` on `PATH`: the home is no prefix, but the trees its
        // programs take their code from are (atk22g F23).
        let lib = ["lib", "libexec"]
            .iter()
            .map(|n| prefix.join(n))
            .find(|l| prefix.parent().is_some() && ws.starts_with(l))?;
        return Some(format!(
            "{} lies in {}, the installation tree of the programs your PATH runs from {shown}: code the command put there would run in the host's next call",
            ws.display(),
            lib.display()
        ));
    }
    // A repository's own `bin` on `PATH` (direnv's `PATH_add bin`): the
    // planner keeps that `bin` read-only, and the rest is the project's
    // code, which git shows.
    if super::vcs::is_repository_top(prefix) {
        return None;
    }
    let env = is_python_env(prefix);
    if ws.starts_with(prefix) {
        let how = if ws == prefix { "is" } else { "lies in" };
        let what = if env {
            "a virtual environment whose programs are on your PATH"
        } else {
            "the installation tree of the programs your PATH runs"
        };
        return Some(format!(
            "{} {how} {}, {what} (from {shown}): code the command put there would run in the \
             host's next call",
            ws.display(),
            prefix.display()
        ));
    }
    // An environment inside the workspace is kept read-only whole by the
    // planner (its `bin`, `lib` and `pyvenv.cfg`): an activated project
    // environment stays usable.
    if prefix.starts_with(ws) && !env {
        return Some(format!(
            "{} holds {}, the installation tree of the programs your PATH runs from {shown}: \
             code the command put in it would run in the host's next call",
            ws.display(),
            prefix.display()
        ));
    }
    None
}

/// A prefix `ws` is or lies in whose `bin` a `PATH` entry links to
/// (`/usr/local/bin/go -> ~/sdk/go/bin/go`): only the ancestors of `ws`
/// that have a `bin` are looked at, so the cost does not grow with the
/// `PATH` directories' size.
fn linked_prefix(ws: &Path, reals: &[(PathBuf, PathBuf)], homes: &[PathBuf]) -> Option<String> {
    for a in ws.ancestors() {
        if !super::is_prefix(a, homes)
            || super::vcs::is_repository_top(a)
            || crate::policy::SYSTEM_EXEC_DIRS
                .iter()
                .any(|s| a.starts_with(s))
        {
            continue;
        }
        let bin = a.join("bin");
        let Ok(rd) = std::fs::read_dir(&bin) else {
            continue;
        };
        let Ok(real_bin) = std::fs::canonicalize(&bin) else {
            continue;
        };
        for e in rd.flatten().take(MAX_BIN_NAMES) {
            for (real, d) in reals {
                let link = real.join(e.file_name());
                if !std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()) {
                    continue;
                }
                if std::fs::canonicalize(&link).is_ok_and(|t| t.starts_with(&real_bin)) {
                    let how = if ws == a { "is" } else { "lies in" };
                    return Some(format!(
                        "{} {how} {}, the installation tree of {} (a link in the PATH \
                         directory {}): code the command put there would run in the host's \
                         next call",
                        ws.display(),
                        a.display(),
                        link.display(),
                        d.display()
                    ));
                }
            }
        }
    }
    None
}
