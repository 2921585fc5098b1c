//! What a server is never granted as "its installation" (atk27m F3, F3b,
//! F3c): a directory decided by what it IS (links resolved, compared by
//! device and inode), not by how the server's command spells it. Never
//! `/`, a home (the user's, the password database's, the server's
//! `env.HOME`) or a directory holding one, `~/.local`, nor a directory
//! holding a place the user keeps secrets in (the deny list's home and
//! system paths, every configured secret's `file` source and value
//! places). A `PREFIX` of `PREFIX/bin/NAME` inside a home must also look
//! like an installation (`lib`, `lib64`, `libexec`, `share` or `include`
//! beside `bin`, and no `.git`): a dotfiles repository reached through
//! `~/bin -> ~/dotfiles/bin` is not one. Otherwise the server gets its
//! program file (and its `#!` interpreter) alone.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A directory's identity.
type Id = (u64, u64);

fn id(p: &Path) -> Option<Id> {
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// The identities of `p` and every directory above it.
fn chain(p: &Path) -> Vec<Id> {
    let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut v: Vec<Id> = real.ancestors().filter_map(id).collect();
    // The name as given too (a bind-mount alias's parents differ).
    v.extend(p.ancestors().filter_map(id));
    v
}

/// The homes and secret places installation roots are checked against.
#[derive(Debug, Default, Clone)]
pub(crate) struct InstallGuard {
    /// Every home and `~/.local`: never granted themselves.
    broad: Vec<Id>,
    /// A home or secret place and every directory above it: a root that
    /// is one of these holds them.
    above: Vec<Id>,
    /// The homes' canonical paths (a `PREFIX` inside one must look like
    /// an installation).
    homes: Vec<PathBuf>,
}

impl InstallGuard {
    /// For a server whose environment's `HOME` is `server_home`.
    pub(crate) fn new(server_home: Option<&Path>) -> Self {
        let user_home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        let passwd = skarn_sandbox::linux::host_probe::passwd_home(uid);
        let mut homes: Vec<PathBuf> = [
            user_home.clone(),
            passwd,
            server_home.map(Path::to_path_buf),
        ]
        .into_iter()
        .flatten()
        .collect();
        homes.sort();
        homes.dedup();
        let mut places: Vec<PathBuf> = Vec::new();
        for h in &homes {
            places.extend(skarn_sandbox::policy::secret_paths_of(h));
        }
        if let Ok(Some((home, cfg))) = crate::secret_vars::user_config() {
            places.extend(cfg.value_places(Some(&home)));
        }
        let mut g = Self::default();
        for h in &homes {
            g.broad.extend(id(h));
            g.broad.extend(id(&h.join(".local")));
            g.above.extend(chain(h));
            g.homes
                .push(std::fs::canonicalize(h).unwrap_or_else(|_| h.clone()));
        }
        g.broad.extend(id(Path::new("/")));
        for p in places {
            if std::fs::symlink_metadata(&p).is_ok() {
                g.above.extend(chain(&p));
            }
        }
        g.above.sort_unstable();
        g.above.dedup();
        g
    }

    /// Why `root` is not granted as an installation (`None`: it may be).
    /// `prefix`: it is the `PREFIX` of a `PREFIX/bin/NAME` program.
    pub(crate) fn refuses(&self, root: &Path, prefix: bool) -> Option<&'static str> {
        let Some(me) = id(root) else {
            return Some("it cannot be looked at");
        };
        if self.broad.contains(&me) {
            return Some("it is a home, ~/.local or /");
        }
        if self.above.contains(&me) {
            return Some("it holds a home or a place secrets are kept in");
        }
        if prefix {
            let real = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
            if self.homes.iter().any(|h| real.starts_with(h)) && !looks_installed(&real) {
                return Some(
                    "it lies in a home and is no installation (no lib or share beside bin)",
                );
            }
        }
        None
    }
}

/// `bin` beside the usual directories of an installation, and no
/// repository of the user's own files.
fn looks_installed(prefix: &Path) -> bool {
    let dir = |n: &str| std::fs::symlink_metadata(prefix.join(n)).is_ok_and(|m| m.is_dir());
    ["lib", "lib64", "libexec", "share", "include"]
        .iter()
        .any(|n| dir(n))
        && std::fs::symlink_metadata(prefix.join(".git")).is_err()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_home_what_holds_it_and_a_repository_in_it_are_no_installation() {
        let d = skarn_test_support::TempDir::new("install_guard");
        let home = d.path().join("home");
        let dots = home.join("dotfiles");
        std::fs::create_dir_all(dots.join("bin")).unwrap();
        std::fs::create_dir_all(dots.join(".git")).unwrap();
        std::fs::create_dir_all(dots.join("share")).unwrap();
        let tool = home.join(".pyenv/versions/3.12");
        std::fs::create_dir_all(tool.join("lib")).unwrap();
        std::fs::create_dir_all(tool.join("bin")).unwrap();
        let link = d.path().join("linked");
        std::os::unix::fs::symlink(&home, &link).unwrap();
        let outside = d.path().join("opt/t");
        std::fs::create_dir_all(outside.join("bin")).unwrap();
        let g = InstallGuard::new(Some(&link));
        assert!(g.refuses(&home, true).is_some());
        assert!(g.refuses(&link, false).is_some());
        assert!(g.refuses(d.path(), false).is_some());
        assert!(g.refuses(&dots, true).is_some());
        assert!(g.refuses(&tool, true).is_none());
        assert!(g.refuses(&outside, true).is_none());
    }
}
