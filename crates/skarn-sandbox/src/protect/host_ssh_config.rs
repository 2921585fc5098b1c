//! Places the user's ssh configuration names (host side, before
//! planning): the files `~/.ssh/config` includes, the keys, certificates
//! and sockets it names, and the programs host ssh runs from it. Each is
//! hidden from the run.

use std::path::{Path, PathBuf};

use crate::protect::host_programs::{command_paths, read};

/// `~/.ssh/config` keywords naming a key, a certificate or a socket
/// (a secret wherever it lies, `~/dotfiles/keys/id_work` too).
const SSH_FILES: &[&str] = &[
    "identityfile",
    "certificatefile",
    "identityagent",
    "controlpath",
    "revokedhostkeys",
    "pkcs11provider",
    "securitykeyprovider",
];

/// `~/.ssh/config` keywords naming a program host ssh runs.
const SSH_COMMANDS: &[&str] = &["proxycommand", "localcommand", "knownhostscommand"];

/// `Include` files of `~/.ssh/config` (recursively, bounded): each file,
/// and for a glob its directory (a new matching file must not appear);
/// and the keys, certificates, sockets and programs those files name
/// ([`SSH_FILES`], [`SSH_COMMANDS`]). All are hidden from the run.
pub fn ssh_includes(home: &Path) -> Vec<(PathBuf, String)> {
    ssh_config_places(home, home.join(".ssh/config"))
}

/// [`ssh_includes`] of the ssh configuration file `start` (one an ssh
/// command line names with `-F`).
pub fn ssh_config_places(home: &Path, start: PathBuf) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut todo = vec![start];
    let mut seen = 0;
    while let Some(f) = todo.pop() {
        seen += 1;
        if seen > 64 {
            break;
        }
        let Ok(Some(text)) = read(&f) else { continue };
        for line in text.lines() {
            let l = line.trim();
            let Some((k, rest)) = l.split_once(|c: char| c.is_whitespace() || c == '=') else {
                continue;
            };
            let k = k.to_ascii_lowercase();
            if SSH_COMMANDS.contains(&k.as_str()) {
                // Programs host ssh runs: hidden like the keys.
                for p in command_paths(rest, home) {
                    out.push((p, format!("{k} of {}", f.display())));
                }
                continue;
            }
            if SSH_FILES.contains(&k.as_str()) {
                // Keys, certificates, agent and master sockets: `%d` is the
                // home; a name with other tokens or a glob, its directory.
                let w = rest.trim().trim_matches('"').replace("%d", "~");
                let p = if let Some(r) = w.strip_prefix("~/") {
                    home.join(r)
                } else if w.starts_with('/') {
                    PathBuf::from(&w)
                } else {
                    continue;
                };
                let p = if w.contains(['%', '*', '?', '[']) {
                    // (Only a directory of the home's: `/tmp/ssh-%r`'s
                    // directory is everyone's.)
                    match p.parent() {
                        Some(d) if d.starts_with(home) && d != home => d.to_path_buf(),
                        _ => continue,
                    }
                } else {
                    p
                };
                out.push((p, format!("{k} of {}", f.display())));
                continue;
            }
            if k != "include" {
                continue;
            }
            for w in rest.split_whitespace() {
                let w = w.trim_matches('"');
                let p = if let Some(r) = w.strip_prefix("~/") {
                    home.join(r)
                } else if w.starts_with('/') {
                    PathBuf::from(w)
                } else {
                    home.join(".ssh").join(w)
                };
                let via = format!("Include of {}", f.display());
                if w.contains(['*', '?', '[']) {
                    if let Some(dir) = p.parent() {
                        out.push((dir.to_path_buf(), via));
                    }
                } else {
                    out.push((p.clone(), via));
                    todo.push(p);
                }
            }
        }
    }
    out
}
