//! Built-in toolchain presets: install directories read+exec, caches as
//! private copy-on-write layers (the command may write, the host's copy
//! never changes), never credential files (those stay in the secret list).
//!
//! A cache the host later executes or trusts without re-checking (cargo's
//! crate archives and extracted sources, npx's packages, pip's and uv's
//! wheels, playwright's browsers) is therefore never writable from inside.

use std::path::{Path, PathBuf};

use super::toolchain_env::Shape;
use crate::policy::{Grant, Policy};

/// Names, in the private lists, of files (never kept in a store).
const CACHE_FILES: &[&str] = &[".package-cache", ".package-cache-mutate", ".global-cache"];

/// Known preset names.
pub(crate) const PRESETS: &[&str] = &["rust", "node", "python", "go"];

/// Files whose presence in the workspace selects a preset.
pub(crate) const DETECT: &[(&str, &[&str])] = &[
    ("rust", &["Cargo.toml"]),
    ("node", &["package.json"]),
    (
        "python",
        &[
            "pyproject.toml",
            "setup.py",
            "setup.cfg",
            "requirements.txt",
            "Pipfile",
            "tox.ini",
            "pytest.ini",
        ],
    ),
    ("go", &["go.mod", "go.work"]),
];

/// Presets detected from the workspace's files.
pub fn detect(workspace: &Path) -> Vec<&'static str> {
    DETECT
        .iter()
        .filter(|(_, files)| files.iter().any(|f| workspace.join(f).exists()))
        .map(|(name, _)| *name)
        .collect()
}

/// Programs whose use selects a preset (a version suffix such as
/// `python3.11` or `pip3` is ignored).
pub(crate) const COMMANDS: &[(&str, &[&str])] = &[
    ("rust", &["cargo", "rustc", "rustup", "rustdoc"]),
    (
        "node",
        &[
            "npm", "npx", "pnpm", "pnpx", "yarn", "yarnpkg", "node", "corepack",
        ],
    ),
    (
        "python",
        &[
            "pip", "pipx", "python", "uv", "uvx", "poetry", "pdm", "hatch", "tox", "pytest",
        ],
    ),
    ("go", &["go", "gofmt"]),
];

/// Most bytes of the command's words looked at for programs.
const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// Presets detected from the files of every directory from `cwd` (when it
/// lies in the workspace) up to the workspace, and from the programs the
/// command names (its words, also inside a `sh -c` script), in the order
/// of [`PRESETS`].
pub(crate) fn detect_for(
    workspace: &Path,
    cwd: Option<&Path>,
    command: &[String],
) -> Vec<&'static str> {
    let mut found: Vec<&'static str> = Vec::new();
    let start = cwd
        .filter(|c| c.starts_with(workspace))
        .unwrap_or(workspace);
    for dir in start.ancestors() {
        found.extend(detect(dir));
        if dir == workspace {
            break;
        }
    }
    found.extend(from_command(command));
    PRESETS
        .iter()
        .copied()
        .filter(|p| found.contains(p))
        .collect()
}

/// Presets named by the programs in `command`'s words.
pub(crate) fn from_command(command: &[String]) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut budget = MAX_COMMAND_BYTES;
    for arg in command {
        let mut end = budget.min(arg.len());
        while !arg.is_char_boundary(end) {
            end -= 1;
        }
        let arg = &arg[..end];
        budget = budget.saturating_sub(arg.len());
        for word in arg.split(|c: char| c.is_whitespace() || ";&|()`'\"$<>".contains(c)) {
            let base = word.rsplit('/').next().unwrap_or(word);
            let base = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
            for (preset, progs) in COMMANDS {
                if progs.contains(&base) && !out.contains(preset) {
                    out.push(*preset);
                }
            }
        }
        if budget == 0 {
            break;
        }
    }
    out
}

/// The caller's `var` when it names a directory of `shape`
/// ([`super::toolchain_env`]: a variable must not widen a grant).
fn env_dir(var: &str, shape: Shape, home: &Path) -> Option<PathBuf> {
    let v = std::env::var_os(var).map(PathBuf::from)?;
    super::toolchain_env::vetted(&v, shape, home)
}

/// (read+exec, private layer, read-only) path lists of a preset, before
/// filtering out what does not exist. `None` for an unknown name.
pub(crate) fn preset_paths(name: &str, home: &Path) -> Option<[Vec<PathBuf>; 3]> {
    let h = |p: &str| home.join(p);
    Some(match name {
        "rust" => {
            let cargo =
                env_dir("CARGO_HOME", Shape::CargoHome, home).unwrap_or_else(|| h(".cargo"));
            let rustup =
                env_dir("RUSTUP_HOME", Shape::Rustup, home).unwrap_or_else(|| h(".rustup"));
            [
                vec![rustup, cargo.join("bin")],
                vec![
                    cargo.join("registry"),
                    cargo.join("git"),
                    // cargo's package-cache locks and last-use database.
                    cargo.join(".package-cache"),
                    cargo.join(".package-cache-mutate"),
                    cargo.join(".global-cache"),
                ],
                vec![cargo.join("config.toml"), cargo.join("config")],
            ]
        }
        "node" => {
            let nvm = env_dir("NVM_DIR", Shape::Nvm, home).unwrap_or_else(|| h(".nvm"));
            [
                vec![
                    nvm,
                    h(".volta"),
                    h(".local/share/fnm"),
                    h(".local/share/pnpm"),
                    h(".bun"),
                ],
                vec![
                    h(".npm/_cacache"),
                    h(".npm/_logs"),
                    h(".cache/yarn"),
                    h(".yarn/berry"),
                    h(".cache/node"),
                    h(".cache/pnpm"),
                    h(".cache/ms-playwright"),
                    h(".npm/_npx"),
                    h(".node-gyp"),
                    h(".cache/node-gyp"),
                ],
                vec![],
            ]
        }
        "python" => {
            let pyenv = env_dir("PYENV_ROOT", Shape::Pyenv, home).unwrap_or_else(|| h(".pyenv"));
            // pyenv's shims are rewritten after every `pip install`
            // (`pyenv rehash`, whose failure fails the install): a private
            // layer the command may rewrite, never the host's.
            let shims = pyenv.join("shims");
            let mut exec = vec![
                pyenv,
                h(".local/bin"),
                h(".local/lib"),
                h(".local/share/virtualenvs"),
                h(".cache/pypoetry/virtualenvs"),
                h(".local/share/uv"),
                h(".local/pipx"),
                h("miniconda3"),
                h("anaconda3"),
                h(".conda"),
            ];
            if let Some(v) = env_dir("VIRTUAL_ENV", Shape::Venv, home) {
                exec.push(v);
            }
            [
                exec,
                vec![
                    h(".cache/uv"),
                    h(".cache/pypoetry/cache"),
                    h(".cache/pip"),
                    // `pip install --user`: the user site and its scripts,
                    // kept for this workspace's next runs over the host's.
                    h(".local/lib"),
                    h(".local/bin"),
                    shims,
                ],
                vec![],
            ]
        }
        "go" => {
            // Go's module cache is trusted by the host's `go build` once
            // downloaded (checksums are checked only when fetching), and
            // its build cache by action id: both are private layers.
            let var = |k: &str| std::env::var(k).ok();
            let d = super::go_env::go_dirs(home, &var).vetted(home);
            let mut exec = vec![d.bin, h("sdk")];
            exec.extend(d.root);
            [exec, vec![d.mod_cache, d.build_cache], vec![]]
        }
        _ => return None,
    })
}

/// Grant every preset's toolchain installations read+exec (not their
/// caches), so that the interpreter a command finds on PATH is the one it
/// finds outside (a pyenv python in a node project), with provenance
/// `toolchains (PATH)`.
pub(crate) fn apply_toolchains(policy: &mut Policy, home: &Path) {
    for name in PRESETS {
        if let Some([exec, _, _]) = preset_paths(name, home) {
            for p in exec.into_iter().filter(|p| p.exists()) {
                if !policy.exec.iter().any(|g| g.path == p) {
                    policy.exec.push(Grant::new(p, "default (toolchains)"));
                }
            }
        }
    }
}

/// Add a preset's existing paths to `policy`, with provenance `source`.
/// Returns false for an unknown preset.
pub fn apply(policy: &mut Policy, name: &str, home: &Path, source: &str) -> bool {
    let Some([exec, private, read]) = preset_paths(name, home) else {
        return false;
    };
    let src = format!("preset {name} ({source})");
    let keep = |p: &PathBuf| p.exists();
    policy
        .exec
        .extend(exec.into_iter().filter(keep).map(|p| Grant::new(p, &src)));
    if name == "rust"
        && let Some(t) = env_dir("CARGO_TARGET_DIR", Shape::CargoTarget, home)
        && !t.starts_with(&policy.workspace)
    {
        // A shared build directory outside the workspace: builds work in a
        // private layer over it; the host's binaries there never change
        // (a preset must not widen writes beyond the workspace).
        policy.overlay.push(Grant::new(t, &src));
    }
    for p in &private {
        // Kept in the workspace's store when the run has one (ADR 0175):
        // the cache directories, also those the host never made (a first
        // `cargo build` on this machine); cargo's lock and database files
        // stay private copies.
        let file = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| CACHE_FILES.contains(&n));
        if !file && !p.is_file() && !policy.cache_dirs.contains(p) {
            policy.cache_dirs.push(p.clone());
        }
    }
    for p in private {
        // Directories and files alike (cargo's lock files and its
        // `.global-cache` database, whose rows tell the host's cargo what
        // to delete): a private copy the command may change, never the
        // host's.
        if p.is_dir() || p.is_file() {
            policy.overlay.push(Grant::new(p, &src));
        }
    }
    policy
        .read
        .extend(read.into_iter().filter(keep).map(|p| Grant::new(p, &src)));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn programs_in_the_command_select_presets() {
        assert_eq!(from_command(&words(&["npm", "create", "vite"])), ["node"]);
        assert_eq!(
            from_command(&words(&[
                "sh",
                "-c",
                "cd x && /usr/bin/python3.11 -m pip install ."
            ])),
            ["python"]
        );
        assert_eq!(
            from_command(&words(&["pip3", "install", "-U", "x"])),
            ["python"]
        );
        assert_eq!(
            from_command(&words(&["bash", "-c", "cargo build;npx eslint"])),
            ["rust", "node"]
        );
        assert_eq!(
            from_command(&words(&["sh", "-c", "go test ./... && gofmt -l ."])),
            ["go"]
        );
        assert!(from_command(&words(&["make", "test"])).is_empty());
        assert!(from_command(&words(&["echo", "cargoes"])).is_empty());
    }

    #[test]
    fn files_from_the_working_directory_up_to_the_workspace() {
        let t = std::env::temp_dir().join(format!("skarn-presets-{}", std::process::id()));
        let sub = t.join("ws/pkg/web");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(t.join("ws/pkg/package.json"), "{}").unwrap();
        std::fs::write(t.join("Cargo.toml"), "").unwrap(); // above the workspace
        let ws = t.join("ws");
        assert_eq!(detect_for(&ws, Some(&sub), &[]), ["node"]);
        assert!(detect_for(&ws, None, &[]).is_empty());
        assert_eq!(detect_for(&ws, None, &words(&["uv", "sync"])), ["python"]);
        std::fs::remove_dir_all(&t).unwrap();
    }
}
