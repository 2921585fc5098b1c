//! [`Layer`]: the settings one source of policy gives (the user's config
//! file, the workspace's `skarn.toml`, the command line, a gateway
//! server's table), each value with its provenance. [`crate::policy::assemble`]
//! merges a list of layers into a [`crate::Policy`].
//!
//! Merge rules (later layers are applied after earlier ones):
//! - grant lists, `allow_env`, allowed and denied hosts add up;
//! - scalars (`net`, limits, booleans) take the last layer's value;
//! - the preset selection is replaced by the last layer that names one.

use std::path::Path;

use crate::policy::config::{ConfigError, RunConfig};
use crate::policy::presets;
use crate::policy::{Grant, HostList, NetPolicy, split_list};

/// A value and the layer that set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Where it was set (`--net`, `/ws/skarn.toml:3:7`, ...).
    pub source: String,
}

impl<T> Sourced<T> {
    /// Shorthand constructor.
    pub fn new(value: T, source: impl Into<String>) -> Sourced<T> {
        Sourced {
            value,
            source: source.into(),
        }
    }
}

/// One resource limit key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LimitKey {
    /// Wall-clock seconds.
    Timeout,
    /// Per-process data, MiB.
    Memory,
    /// Processes.
    MaxProcs,
    /// Largest file, MiB.
    MaxFileSize,
}

impl LimitKey {
    /// Every key, in report order.
    pub const ALL: [LimitKey; 4] = [
        LimitKey::Timeout,
        LimitKey::Memory,
        LimitKey::MaxProcs,
        LimitKey::MaxFileSize,
    ];

    /// The config key (`timeout`, `memory`, `max_procs`, `max_file_size`).
    pub fn name(self) -> &'static str {
        match self {
            LimitKey::Timeout => "timeout",
            LimitKey::Memory => "memory",
            LimitKey::MaxProcs => "max_procs",
            LimitKey::MaxFileSize => "max_file_size",
        }
    }

    /// The key for a config name.
    pub fn from_name(name: &str) -> Option<LimitKey> {
        LimitKey::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The flag spelling (`--max-procs`).
    pub fn flag(self) -> String {
        format!("--{}", self.name().replace('_', "-"))
    }
}

/// Whether a layer is a config file or the command line (some checks
/// differ: flags must be coherent on their own, a file may leave
/// `deny_hosts` unused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LayerKind {
    /// A configuration file or table.
    #[default]
    Config,
    /// The command line.
    Flags,
}

/// The settings one source gives; `None` / empty means "not set here".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layer {
    /// Config file or command line.
    pub kind: LayerKind,
    /// Read-only grants (absolute paths).
    pub read: Vec<Grant>,
    /// Read-write grants.
    pub write: Vec<Grant>,
    /// Read+execute grants.
    pub exec: Vec<Grant>,
    /// Never readable.
    pub deny_read: Vec<Grant>,
    /// Network policy.
    pub net: Option<Sourced<NetPolicy>>,
    /// Host patterns added to the allow list (may hold `registries`).
    pub allow_hosts: Vec<Sourced<String>>,
    /// Host patterns never reached.
    pub deny_hosts: Vec<Sourced<String>>,
    /// Total proxy traffic, MiB.
    pub net_max_bytes_mib: Option<Sourced<u64>>,
    /// Connections at once through the proxy (0 = default).
    pub net_max_connections: Option<Sourced<usize>>,
    /// Toolchain presets (`auto`, `none`, `rust`, ...); `Some(empty)`
    /// selects none at all.
    pub presets: Option<Vec<Sourced<String>>>,
    /// Resource limits (0 = no limit).
    pub limits: Vec<(LimitKey, Sourced<u64>)>,
    /// Secret-looking variables kept.
    pub allow_env: Vec<Sourced<String>>,
    /// Keep workspace persistence paths read-only.
    pub protect_persistence: Option<Sourced<bool>>,
    /// Refuse to run unconfined.
    pub fail_closed: Option<Sourced<bool>>,
    /// Accept a workspace holding the home directory.
    pub allow_home_workspace: Option<Sourced<bool>>,
    /// Keep a grant a home configuration file names writable (ADR 0160).
    pub trust_home_config_workspace: Option<Sourced<bool>>,
    /// A private, discarded home.
    pub private_home: Option<Sourced<bool>>,
    /// How the workspace is written (ADR 0130).
    pub workspace_layer: Option<Sourced<crate::policy::WorkspaceLayerMode>>,
    /// Directories the walk of the writable grants before a run reads at
    /// most (ADR 0204).
    pub walk_max_dirs: Option<Sourced<u64>>,
    /// `state_keep` (ADR 0289; the user's own file only).
    pub state_keep: Option<Sourced<std::time::Duration>>,
    /// `scan_cache_max` in bytes (ADR 0317; the user's own file only).
    pub scan_cache_max: Option<Sourced<u64>>,
}

/// Directories the walk before a run reads at most by default (ADR 0204).
pub(crate) const WALK_MAX_DIRS_DEFAULT: u64 = 50_000;

/// The most directories `walk_max_dirs` may ask for.
pub(crate) const WALK_MAX_DIRS_LIMIT: u64 = 2_000_000;

/// Why a `walk_max_dirs` value is refused, if it is.
pub(crate) fn check_walk_max_dirs(n: u64) -> Result<(), String> {
    let max = WALK_MAX_DIRS_LIMIT;
    if n == 0 || n > max {
        return Err(format!("walk_max_dirs must be 1 to {max}, not {n}"));
    }
    Ok(())
}

/// The network spellings accepted.
pub const NET_HELP: &str = "deny, loopback, outbound, all or allow:PATTERN[,PATTERN...]";

/// Check each host pattern (the `registries` keyword is expanded later).
pub fn check_patterns(list: &[String]) -> Result<(), String> {
    for p in list {
        if p != skarn_egress::registries::KEYWORD {
            skarn_egress::Pattern::parse(p).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Check a preset name.
pub(crate) fn check_preset(p: &str) -> Result<(), String> {
    if p == "auto" || p == "none" || presets::PRESETS.contains(&p) {
        Ok(())
    } else {
        Err(format!(
            "unknown preset {p:?} (expected auto, none, rust, node, python or go)"
        ))
    }
}

impl Layer {
    /// The `[run]` section of a loaded config file; every value is checked
    /// here and an error names `file:line:column`.
    pub fn from_config(c: &RunConfig, home: Option<&Path>) -> Result<Layer, ConfigError> {
        let r = &c.run;
        let mut l = Layer::default();
        for (key, list, dst) in [
            ("read", &r.read, &mut l.read),
            ("write", &r.write, &mut l.write),
            ("exec", &r.exec, &mut l.exec),
            ("deny_read", &r.deny_read, &mut l.deny_read),
        ] {
            for v in list {
                let p = c.resolve(v.get_ref(), home);
                // Like `--read`/`--exec`: a grant of nothing is a mistake
                // (a typo, another machine's path), said rather than
                // granted in silence. (`write` keeps its own rule: a
                // missing directory is made when the run starts.)
                if matches!(key, "read" | "exec") && std::fs::symlink_metadata(&p).is_err() {
                    return Err(c.error(
                        v.span(),
                        format!(
                            "{key} {:?}: no such file or directory ({}); create it or remove the entry",
                            v.get_ref(),
                            p.display()
                        ),
                    ));
                }
                dst.push(Grant::new(p, c.at(v.span())));
            }
        }
        if let Some(n) = &r.net {
            let net = NetPolicy::parse(n.get_ref()).ok_or_else(|| {
                c.error(
                    n.span(),
                    format!("net must be {NET_HELP}, not {:?}", n.get_ref()),
                )
            })?;
            if let NetPolicy::AllowHosts(h) = &net {
                check_patterns(&h.allow).map_err(|m| c.error(n.span(), m))?;
                let at = c.at(n.span());
                l.allow_hosts
                    .extend(h.allow.iter().map(|a| Sourced::new(a.clone(), &at)));
            }
            l.net = Some(Sourced::new(net, c.at(n.span())));
        }
        for h in &r.allow_hosts {
            let list = split_list(h.get_ref());
            check_patterns(&list).map_err(|m| c.error(h.span(), m))?;
            let at = c.at(h.span());
            l.allow_hosts
                .extend(list.into_iter().map(|a| Sourced::new(a, &at)));
            if l.net.is_none() {
                // `allow_hosts` alone implies `net = "allow:..."`.
                l.net = Some(Sourced::new(NetPolicy::AllowHosts(HostList::default()), at));
            }
        }
        for h in &r.deny_hosts {
            let list = split_list(h.get_ref());
            check_patterns(&list).map_err(|m| c.error(h.span(), m))?;
            let at = c.at(h.span());
            l.deny_hosts
                .extend(list.into_iter().map(|a| Sourced::new(a, &at)));
        }
        if let Some(w) = &r.workspace_layer {
            let mode = crate::policy::WorkspaceLayerMode::parse(w.get_ref()).ok_or_else(|| {
                c.error(
                    w.span(),
                    format!(
                        "workspace_layer must be \"cow\" or \"direct\", not {:?}",
                        w.get_ref()
                    ),
                )
            })?;
            l.workspace_layer = Some(Sourced::new(mode, c.at(w.span())));
        }
        if let Some(w) = &r.walk_max_dirs {
            check_walk_max_dirs(*w.get_ref()).map_err(|m| c.error(w.span(), m))?;
            l.walk_max_dirs = Some(Sourced::new(*w.get_ref(), c.at(w.span())));
        }
        if let Some(k) = &r.state_keep {
            let d = k
                .get_ref()
                .duration(skarn_units::DurationUnit::Secs)
                .map_err(|e| c.error(k.span(), format!("state_keep: {e}")))?;
            l.state_keep = Some(Sourced::new(d, c.at(k.span())));
        }
        if let Some(k) = &r.scan_cache_max {
            let n = k
                .get_ref()
                .size(skarn_units::SizeUnit::Bytes)
                .map_err(|e| c.error(k.span(), format!("scan_cache_max: {e}")))?;
            l.scan_cache_max = Some(Sourced::new(n, c.at(k.span())));
        }
        if let Some(p) = &r.preset {
            let at = c.at(p.span());
            let mut names = Vec::new();
            for s in p.get_ref().to_vec() {
                check_preset(&s).map_err(|m| c.error(p.span(), m))?;
                names.push(Sourced::new(s, &at));
            }
            l.presets = Some(names);
        }
        for (key, n, at) in c.limits()? {
            if let Some(k) = LimitKey::from_name(key) {
                l.limits.push((k, Sourced::new(n, at)));
            }
        }
        // `allow_env` entries carry no span in the file's shape: the file
        // is their provenance.
        let file = c.path.display().to_string();
        l.allow_env = r
            .allow_env
            .iter()
            .map(|n| Sourced::new(n.clone(), &file))
            .collect();
        for (v, dst) in [
            (r.protect_persistence, &mut l.protect_persistence),
            (r.fail_closed, &mut l.fail_closed),
            (r.allow_home_workspace, &mut l.allow_home_workspace),
            (
                r.trust_home_config_workspace,
                &mut l.trust_home_config_workspace,
            ),
            (r.private_home, &mut l.private_home),
        ] {
            *dst = v.map(|b| Sourced::new(b, &file));
        }
        Ok(l)
    }
}
