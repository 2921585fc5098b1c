//! Built-in toolchain presets: install directories read+exec, caches as
//! private copy-on-write layers (the command may write, the host's copy
//! never changes), never credential files (those stay in the secret list).
//!
//! A cache the host later executes or trusts without re-checking (cargo's
//! crate archives and extracted sources, npx's packages, pip's and uv's
//! wheels, playwright's browsers) is therefore never writable from inside.

use std::path::{Path, PathBuf};

use crate::policy::{Grant, Policy};

/// Known preset names.
pub const PRESETS: &[&str] = &["rust", "node", "python"];

/// Files whose presence in the workspace selects a preset.
pub const DETECT: &[(&str, &[&str])] = &[
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
];

/// Presets detected from the workspace's files.
pub fn detect(workspace: &Path) -> Vec<&'static str> {
    DETECT
        .iter()
        .filter(|(_, files)| files.iter().any(|f| workspace.join(f).exists()))
        .map(|(name, _)| *name)
        .collect()
}

fn env_dir(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// (read+exec, private layer, read-only) path lists of a preset, before
/// filtering out what does not exist. `None` for an unknown name.
pub fn preset_paths(name: &str, home: &Path) -> Option<[Vec<PathBuf>; 3]> {
    let h = |p: &str| home.join(p);
    Some(match name {
        "rust" => {
            let cargo = env_dir("CARGO_HOME").unwrap_or_else(|| h(".cargo"));
            let rustup = env_dir("RUSTUP_HOME").unwrap_or_else(|| h(".rustup"));
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
            let nvm = env_dir("NVM_DIR").unwrap_or_else(|| h(".nvm"));
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
            let pyenv = env_dir("PYENV_ROOT").unwrap_or_else(|| h(".pyenv"));
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
            if let Some(v) = env_dir("VIRTUAL_ENV") {
                exec.push(v);
            }
            [
                exec,
                vec![h(".cache/uv"), h(".cache/pypoetry/cache"), h(".cache/pip")],
                vec![],
            ]
        }
        _ => return None,
    })
}

/// Grant every preset's toolchain installations read+exec (not their
/// caches), so that the interpreter a command finds on PATH is the one it
/// finds outside (a pyenv python in a node project), with provenance
/// `toolchains (PATH)`.
pub fn apply_toolchains(policy: &mut Policy, home: &Path) {
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
        && let Some(t) = env_dir("CARGO_TARGET_DIR").filter(|p| p.is_dir())
        && !t.starts_with(&policy.workspace)
    {
        // A shared build directory outside the workspace: builds work in a
        // private layer over it; the host's binaries there never change
        // (a preset must not widen writes beyond the workspace).
        policy.overlay.push(Grant::new(t, &src));
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
