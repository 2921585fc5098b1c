//! The program files an unconfined server runs from a project directory
//! (ADR 0095): `skarn trust` records their digests with the file's, and a
//! trusted file whose unconfined server's program changed since (the agent,
//! confined, may write the project) counts as untrusted until the user
//! trusts it again.
//!
//! Counted: the command (a relative one with a slash against the server's
//! `cwd`, the gateway's directory and the file's directory; a bare name
//! through `PATH`) and every argument naming an existing file, resolved
//! the same way; each kept when its directory is a project directory (not
//! a system, home or `PATH` directory, which sandboxed commands cannot
//! write: `skarn_sandbox::policy::workspace_kind::non_project`).

use std::path::{Path, PathBuf};

use super::{Config, ServerTransport};

impl Config {
    /// The program files of each unconfined stdio server that lie in a
    /// project directory, with the server's alias; sorted, unique.
    pub fn unconfined_programs(&self) -> Vec<(String, PathBuf)> {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        let file_dir = self
            .path
            .as_ref()
            .and_then(|p| std::path::absolute(p).ok())
            .and_then(|p| p.parent().map(Path::to_path_buf));
        let here = std::env::current_dir().ok();
        let mut out = Vec::new();
        for s in self.servers.iter().filter(|s| s.enabled) {
            let ServerTransport::Stdio {
                command,
                args,
                cwd,
                sandbox,
                ..
            } = &s.transport
            else {
                continue;
            };
            if sandbox.enabled != Some(false) {
                continue;
            }
            let bases: Vec<&Path> = [cwd.as_deref(), here.as_deref(), file_dir.as_deref()]
                .into_iter()
                .flatten()
                .collect();
            let mut names: Vec<PathBuf> = Vec::new();
            if command.contains('/') || Path::new(command).is_absolute() {
                names.extend(bases.iter().map(|b| b.join(command)));
            } else if let Some(p) = std::env::var_os("PATH") {
                names.extend(
                    std::env::split_paths(&p)
                        .filter(|d| d.is_absolute())
                        .map(|d| d.join(command))
                        .find(|f| f.is_file()),
                );
            }
            for a in args {
                names.extend(bases.iter().map(|b| b.join(a)));
            }
            for n in names {
                let Ok(real) = std::fs::canonicalize(&n) else {
                    continue;
                };
                let in_project = real.is_file()
                    && real.parent().is_some_and(|d| {
                        skarn_sandbox::policy::workspace_kind::non_project(d, home.as_deref())
                            .is_none()
                    });
                let entry = (s.alias.clone(), real);
                if in_project && !out.contains(&entry) {
                    out.push(entry);
                }
            }
        }
        out.sort();
        out
    }
}
