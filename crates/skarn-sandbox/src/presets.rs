//! Built-in toolchain presets: install directories read+exec, caches
//! read-write, never credential files (those stay in the secret list).

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

/// (read+exec, read-write, read-only) path lists of a preset, before
/// filtering out what does not exist. `None` for an unknown name.
pub fn preset_paths(name: &str, home: &Path) -> Option<[Vec<PathBuf>; 3]> {
    let h = |p: &str| home.join(p);
    Some(match name {
        "rust" => {
            let cargo = env_dir("CARGO_HOME").unwrap_or_else(|| h(".cargo"));
            let rustup = env_dir("RUSTUP_HOME").unwrap_or_else(|| h(".rustup"));
            // A shared build directory the user points cargo at must stay
            // writable, or every build fails to create it.
            let target_dir = env_dir("CARGO_TARGET_DIR").into_iter();
            [
                vec![rustup, cargo.join("bin")],
                target_dir
                    .chain([
                        cargo.join("registry"),
                        cargo.join("git"),
                        // cargo's package-cache locks and last-use database.
                        cargo.join(".package-cache"),
                        cargo.join(".package-cache-mutate"),
                        cargo.join(".global-cache"),
                    ])
                    .collect(),
                vec![
                    cargo.join("config.toml"),
                    cargo.join("config"),
                    // Extracted crate sources: cargo builds from them without
                    // re-checking, so a write here would run in the host's
                    // next build. Crates not yet extracted need `--write`.
                    cargo.join("registry/src"),
                    cargo.join("git/checkouts"),
                ],
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
                ],
                // npx runs cached packages without re-checking them.
                vec![h(".node-gyp"), h(".cache/node-gyp"), h(".npm/_npx")],
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
                vec![h(".cache/uv"), h(".cache/pypoetry/cache")],
                // pip installs cached wheels without a hash check.
                vec![h(".cache/pip")],
            ]
        }
        _ => return None,
    })
}

/// Add a preset's existing paths to `policy`, with provenance `source`.
/// Returns false for an unknown preset.
pub fn apply(policy: &mut Policy, name: &str, home: &Path, source: &str) -> bool {
    let Some([exec, write, read]) = preset_paths(name, home) else {
        return false;
    };
    let src = format!("preset {name} ({source})");
    let keep = |p: &PathBuf| p.exists();
    policy
        .exec
        .extend(exec.into_iter().filter(keep).map(|p| Grant::new(p, &src)));
    policy
        .write
        .extend(write.into_iter().filter(keep).map(|p| Grant::new(p, &src)));
    policy
        .read
        .extend(read.into_iter().filter(keep).map(|p| Grant::new(p, &src)));
    true
}
