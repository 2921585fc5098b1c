//! The command-line [`Layer`] of `skarn run`: each flag checked on its own
//! (`--read` of a missing path, conflicting `--net`s, a bad pattern), with
//! the flag's name as provenance.

use std::path::{Path, PathBuf};

use crate::policy::config::normalize;
use crate::policy::layers::{
    Layer, LayerKind, LimitKey, NET_HELP, Sourced, check_patterns, check_preset,
};
use crate::policy::policy_error::PolicyError;
use crate::policy::{Grant, NetPolicy, default_secret_paths, split_list};

/// Which grant flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantFlag {
    /// `--read`.
    Read,
    /// `--write`.
    Write,
    /// `--exec`.
    Exec,
    /// `--deny-read`.
    DenyRead,
}

impl GrantFlag {
    /// The flag spelling.
    pub fn name(self) -> &'static str {
        match self {
            GrantFlag::Read => "--read",
            GrantFlag::Write => "--write",
            GrantFlag::Exec => "--exec",
            GrantFlag::DenyRead => "--deny-read",
        }
    }
}

/// Where paths given on the command line are resolved.
#[derive(Debug, Clone, Copy)]
pub struct FlagContext<'a> {
    /// The current directory (relative paths).
    pub cwd: &'a Path,
    /// The resolved workspace.
    pub workspace: &'a Path,
    /// The home directory.
    pub home: Option<&'a Path>,
}

fn flag_error(msg: impl Into<String>) -> PolicyError {
    PolicyError::Flag(msg.into())
}

/// Whether `p` is (or lies under) one of the default secret paths.
fn is_secret(p: &Path, home: Option<&Path>) -> bool {
    default_secret_paths(home).iter().any(|s| p.starts_with(s))
}

impl Layer {
    /// An empty command-line layer.
    pub fn flags() -> Layer {
        Layer {
            kind: LayerKind::Flags,
            ..Layer::default()
        }
    }

    /// Add `--read/--write/--exec/--deny-read PATH`. A grant of a missing
    /// path is an error, except `--write` of a directory that may not exist
    /// yet: it is made (at its canonical place, never through a link a
    /// command could have planted in the workspace, never a secret path).
    pub fn grant_flag(
        &mut self,
        flag: GrantFlag,
        path: &Path,
        at: FlagContext<'_>,
    ) -> Result<(), PolicyError> {
        let a = normalize(&at.cwd.join(path));
        let name = flag.name();
        if flag == GrantFlag::DenyRead {
            self.deny_read.push(Grant::new(a, name));
            return Ok(());
        }
        if std::fs::symlink_metadata(&a).is_err() {
            let real: PathBuf = crate::policy::canonical::canonical_lossy(&a).unwrap_or(a.clone());
            let planted = crate::policy::canonical::first_symlink(&a)
                .is_some_and(|l| l.starts_with(at.workspace));
            if flag == GrantFlag::Write
                && !planted
                && !is_secret(&a, at.home)
                && !is_secret(&real, at.home)
            {
                std::fs::create_dir_all(&real).map_err(|e| {
                    flag_error(format!("--write {}: cannot create it: {e}", path.display()))
                })?;
            } else {
                return Err(flag_error(format!(
                    "{name} {}: no such file or directory",
                    path.display()
                )));
            }
        }
        let dst = match flag {
            GrantFlag::Read => &mut self.read,
            GrantFlag::Write => &mut self.write,
            _ => &mut self.exec,
        };
        dst.push(Grant::new(a, name));
        Ok(())
    }

    /// `--net` (repeatable: `allow:` lists add up, other values must
    /// agree), `--deny-host`, `--net-max-bytes` (MiB), `--net-max-connections`.
    pub fn net_flags(
        &mut self,
        nets: &[String],
        deny_hosts: &[String],
        max_bytes_mib: Option<u64>,
        max_connections: Option<usize>,
    ) -> Result<(), PolicyError> {
        let mut chosen: Option<NetPolicy> = None;
        for n in nets {
            let Some(net) = NetPolicy::parse(n) else {
                return Err(flag_error(format!("--net must be {NET_HELP}, not {n:?}")));
            };
            match (&net, &chosen) {
                (NetPolicy::AllowHosts(l), None | Some(NetPolicy::AllowHosts(_))) => {
                    if l.allow.is_empty() {
                        return Err(flag_error(format!("--net {n:?}: the allow list is empty")));
                    }
                    check_patterns(&l.allow).map_err(|m| flag_error(format!("--net: {m}")))?;
                    self.allow_hosts
                        .extend(l.allow.iter().map(|a| Sourced::new(a.clone(), "--net")));
                    chosen = Some(net);
                }
                (_, Some(prev)) if *prev != net => {
                    return Err(flag_error(format!(
                        "--net {n:?} conflicts with --net {}",
                        prev.as_str()
                    )));
                }
                _ => chosen = Some(net),
            }
        }
        self.net = chosen.map(|n| Sourced::new(n, "--net"));
        for d in deny_hosts {
            let list = split_list(d);
            check_patterns(&list).map_err(|m| flag_error(format!("--deny-host: {m}")))?;
            self.deny_hosts
                .extend(list.into_iter().map(|h| Sourced::new(h, "--deny-host")));
        }
        self.net_max_bytes_mib = max_bytes_mib.map(|m| Sourced::new(m, "--net-max-bytes"));
        self.net_max_connections =
            max_connections.map(|n| Sourced::new(n, "--net-max-connections"));
        Ok(())
    }

    /// `--walk-max-dirs N`.
    pub fn walk_flag(&mut self, dirs: Option<u64>) -> Result<(), PolicyError> {
        if let Some(n) = dirs {
            crate::policy::layers::check_walk_max_dirs(n)
                .map_err(|m| flag_error(format!("--walk-max-dirs: {m}")))?;
            self.walk_max_dirs = Some(Sourced::new(n, "--walk-max-dirs"));
        }
        Ok(())
    }

    /// `--preset NAME` (repeatable; replaces the config files' choice).
    pub fn preset_flags(&mut self, names: &[String]) -> Result<(), PolicyError> {
        if names.is_empty() {
            return Ok(());
        }
        let mut v = Vec::new();
        for p in names {
            check_preset(p).map_err(flag_error)?;
            v.push(Sourced::new(p.clone(), "--preset"));
        }
        self.presets = Some(v);
        Ok(())
    }

    /// `--timeout`, `--memory`, `--max-procs`, `--max-file-size` (0 = none).
    pub fn limit_flag(&mut self, key: LimitKey, value: Option<u64>) {
        if let Some(v) = value {
            self.limits.push((key, Sourced::new(v, key.flag())));
        }
    }

    /// A boolean flag that, when given, sets `slot` to `value`.
    pub fn bool_flag(slot: &mut Option<Sourced<bool>>, given: bool, value: bool, flag: &str) {
        if given {
            *slot = Some(Sourced::new(value, flag));
        }
    }
}
