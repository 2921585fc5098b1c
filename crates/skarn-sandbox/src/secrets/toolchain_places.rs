//! The tools' own credential places, looked up by name rather than by a
//! walk: the names below an installation or a toolchain root (for a walk
//! cut short, atk22m F4) and the system's fixed places of each tool's
//! search order (atk27p F3, atk22m F2).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::policy::Policy;

/// The tools' fixed places below a prefix or a toolchain root: looked up
/// by name in every directory a walk cut short did not list (fail
/// closed: atk22m F4).
pub(super) const PLACES: &[&str] = &[
    "etc/npmrc",
    "etc/gitconfig",
    "etc/pip.conf",
    "pip.conf",
    "pip.ini",
    ".condarc",
    "condarc",
    ".mambarc",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pypirc",
    "credentials",
    "credentials.toml",
    ".netrc",
    ".git-credentials",
    "conf/settings.xml",
    "gradle.properties",
];

/// The version and environment directories of the version managers'
/// layouts (`*`: each directory there), where the [`PLACES`] of each
/// installation lie: looked at below a root whose walk was cut short.
pub(super) const LAYOUTS: &[&str] = &[
    "",
    "versions/*",
    "versions/node/*",
    "envs/*",
    "tools/image/node/*",
    "node-versions/*/installation",
    "installs/*/*",
    "candidates/*/*",
    "toolchains/*",
];

/// The directories `pattern` ([`LAYOUTS`]) names below `dir` (at most
/// 256 for each `*`).
pub(super) fn layout_dirs(dir: &Path, pattern: &str) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for part in pattern.split('/').filter(|p| !p.is_empty()) {
        out = out
            .into_iter()
            .flat_map(|d| -> Vec<PathBuf> {
                if part == "*" {
                    std::fs::read_dir(&d)
                        .into_iter()
                        .flatten()
                        .flatten()
                        .take(256)
                        .map(|e| e.path())
                        .filter(|p| p.is_dir())
                        .collect()
                } else {
                    vec![d.join(part)]
                }
            })
            .filter(|p| p.is_dir())
            .collect();
    }
    out
}

/// The system's fixed credential places a run of `policy` reads (each
/// tool's search order, [`crate::secrets::tool_configs::config_files`]): those in
/// a directory the run reads other than the home (whose files the
/// private home replaces) and outside the places it writes.
pub(super) fn fixed_places(
    policy: &Policy,
    home: Option<&Path>,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Vec<PathBuf> {
    let readable = super::roots::readable(policy);
    crate::secrets::tool_configs::config_files(env, home, &policy.workspace)
        .into_iter()
        .filter(|p| {
            readable
                .iter()
                .any(|r| p.starts_with(r) && !home.is_some_and(|h| h.starts_with(r)))
        })
        .collect()
}
