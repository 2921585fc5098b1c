//! Files and programs the home's cloud tool configurations name
//! (`~/.kube/config`, `~/.aws/config`), host side, before planning.

use std::path::{Path, PathBuf};

use crate::protect::host_programs::{command_paths, read};

/// Cloud tool configurations of the home and the keys they name: (file,
/// separator, keys naming a secret file, keys naming a program the host
/// tool runs). A client key of `~/.kube/config` kept in a dotfiles
/// repository is as secret as the config itself.
const CLOUD_CONFIGS: &[(&str, char, &[&str], &[&str])] = &[
    (
        ".kube/config",
        ':',
        &[
            "client-key",
            "client-certificate",
            "certificate-authority",
            "tokenfile",
        ],
        &["command", "cmd-path"],
    ),
    (
        ".aws/config",
        '=',
        &["web_identity_token_file", "ca_bundle"],
        &["credential_process"],
    ),
];

/// Files and programs `~/.kube/config` and `~/.aws/config` name
/// ([`CLOUD_CONFIGS`]): (place, why, secret). Files are secrets, hidden
/// like the configs (a relative name is relative to the config's
/// directory); programs are trusted places (read-only in a writable grant).
pub fn cloud_config_places(home: &Path) -> Vec<(PathBuf, String, bool)> {
    let mut out = Vec::new();
    for (name, sep, files, programs) in CLOUD_CONFIGS {
        let f = home.join(name);
        let Ok(Some(text)) = read(&f) else { continue };
        for line in text.lines() {
            let l = line.trim().trim_start_matches("- ").trim();
            let Some((k, v)) = l.split_once(*sep) else {
                continue;
            };
            let k = k.trim().to_ascii_lowercase();
            let v = v.trim().trim_matches(['"', '\'']);
            let via = format!("{k} of {}", f.display());
            if programs.contains(&k.as_str()) {
                for p in command_paths(v, home) {
                    out.push((p, via.clone(), false));
                }
            } else if files.contains(&k.as_str()) && !v.is_empty() {
                let p = if let Some(r) = v.strip_prefix("~/") {
                    home.join(r)
                } else {
                    // (Absolute stays absolute.)
                    f.parent().unwrap_or(home).join(v)
                };
                out.push((p, via, true));
            }
            if out.len() >= 256 {
                return out;
            }
        }
    }
    out
}
