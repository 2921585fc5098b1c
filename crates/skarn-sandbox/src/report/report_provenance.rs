//! The restriction report's `provenance`: for each setting of the policy,
//! which kind of layer set it ([`Origin`]) and where ([`SettingSource`]),
//! built from the assembled policy and its [`Provenance`].
//!
//! Keys (stable): the scalar settings are always present (`workspace`,
//! `net`, `preset`, `timeout`, `memory`, `max_procs`, `max_file_size`,
//! `protect_persistence`, `fail_closed`, `private_home`,
//! `allow_home_workspace`), with origin `default` when no layer set them;
//! list entries and `net_max_*` are present when a layer set them
//! (`allow_env.NAME`, `allow_hosts.PATTERN`, `deny_hosts.PATTERN`); grants
//! set by a flag, a config file or a preset are `read.PATH`, `write.PATH`,
//! `exec.PATH`, `deny_read.PATH`, `overlay.PATH` (PATH as granted).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::policy::provenance::{DEFAULT, Provenance};
use crate::policy::{Grant, Policy};

/// Which kind of layer set a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Nobody set it: Skarn's default (or a default grant).
    Default,
    /// A toolchain preset (named or detected).
    Preset,
    /// `~/.config/skarn/config.toml`.
    UserConfig,
    /// The workspace's `skarn.toml`.
    WorkspaceConfig,
    /// The command line.
    Flag,
    /// Anything else (a gateway server's table, a path found on the host).
    Other,
}

impl Origin {
    /// Classify a provenance string as the assembly writes them: `--net`,
    /// `preset rust (detected, default)`, `default (system)`,
    /// `/ws/skarn.toml:3:7`, `/home/u/.config/skarn/config.toml:2:1`.
    pub fn of(source: &str) -> Origin {
        if source.starts_with("--") {
            Origin::Flag
        } else if source.starts_with("preset ") {
            Origin::Preset
        } else if source == DEFAULT || source.starts_with("default ") {
            Origin::Default
        } else if let Some(file) = config_file(source) {
            if file.ends_with("/.config/skarn/config.toml") {
                Origin::UserConfig
            } else if file.ends_with("/skarn.toml") {
                Origin::WorkspaceConfig
            } else {
                Origin::Other
            }
        } else {
            Origin::Other
        }
    }
}

/// The file of a config source: `/dir/file:line:column`, or the bare
/// absolute path for values without a position (`allow_env` entries).
fn config_file(source: &str) -> Option<&str> {
    if !source.starts_with('/') {
        return None;
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mut parts = source.rsplitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(col), Some(line), Some(file)) if digits(col) && digits(line) => Some(file),
        _ => Some(source),
    }
}

/// Who set one setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingSource {
    /// The kind of layer.
    pub origin: Origin,
    /// Where exactly (`--net`, `/ws/skarn.toml:3:7`, `default`).
    pub source: String,
    /// The value in force, for settings the report shows nowhere else
    /// and for `net` and the limits (`loopback`, `30 s`, `false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

impl SettingSource {
    fn new(source: &str, value: Option<String>) -> SettingSource {
        SettingSource {
            origin: Origin::of(source),
            source: source.to_string(),
            value,
        }
    }

    /// The source as shown in `--report`: the workspace's file as
    /// `./skarn.toml:L:C`, the user's as `~/.config/skarn/config.toml:L:C`.
    pub fn short(&self) -> String {
        short_source(&self.source)
    }
}

/// A source as shown in `--report` (config files shortened).
pub(crate) fn short_source(source: &str) -> String {
    let Some(file) = config_file(source) else {
        return source.to_string();
    };
    let pos = &source[file.len()..];
    match Origin::of(source) {
        Origin::WorkspaceConfig => format!("./skarn.toml{pos}"),
        Origin::UserConfig => format!("~/.config/skarn/config.toml{pos}"),
        _ => source.to_string(),
    }
}

fn size(v: Option<u64>, unit: &str) -> String {
    v.map_or_else(|| "none".to_string(), |n| format!("{n}{unit}"))
}

/// The report's `provenance` for `policy`, assembled with `prov` (see the
/// module documentation for the keys).
pub fn for_report(policy: &Policy, prov: &Provenance) -> BTreeMap<String, SettingSource> {
    let l = &policy.limits;
    let scalars: [(&str, Option<String>); 12] = [
        ("workspace", Some(policy.workspace.display().to_string())),
        ("net", Some(policy.net.as_str().to_string())),
        ("preset", None),
        ("timeout", Some(size(l.timeout_secs, " s"))),
        ("memory", Some(size(l.memory_mb, " MiB"))),
        ("max_procs", Some(size(l.max_procs, ""))),
        ("max_file_size", Some(size(l.max_file_size_mb, " MiB"))),
        (
            "protect_persistence",
            Some(policy.protect_persistence.to_string()),
        ),
        ("fail_closed", Some(policy.fail_closed.to_string())),
        ("private_home", Some(policy.private_home.to_string())),
        (
            "workspace_layer",
            Some(policy.workspace_layer.as_str().to_string()),
        ),
        (
            "allow_home_workspace",
            Some(policy.allow_home_workspace.to_string()),
        ),
    ];
    let mut out = BTreeMap::new();
    for (key, value) in scalars {
        out.insert(key.to_string(), SettingSource::new(prov.get(key), value));
    }
    if let Some(w) = out.get_mut("workspace") {
        // Chosen by `--workspace` or `--workspace-root cwd`, else by default.
        w.origin = if w.source.starts_with("--") || w.source.contains("--workspace-root cwd") {
            Origin::Flag
        } else {
            Origin::Default
        };
    }
    for (key, source) in &prov.values {
        out.entry(key.clone())
            .or_insert_with(|| SettingSource::new(source, None));
    }
    let lists: [(&str, &[Grant]); 5] = [
        ("read", &policy.read),
        ("write", &policy.write),
        ("exec", &policy.exec),
        ("deny_read", &policy.deny_read),
        ("overlay", &policy.overlay),
    ];
    for (list, grants) in lists {
        for g in grants {
            let s = SettingSource::new(&g.source, None);
            if !matches!(s.origin, Origin::Default) {
                out.insert(format!("{list}.{}", g.path.display()), s);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::NetPolicy;

    #[test]
    fn sources_are_classified_by_the_layer_that_wrote_them() {
        let cases = [
            ("--net", Origin::Flag),
            ("--no-private-home", Origin::Flag),
            ("preset rust (detected, default)", Origin::Preset),
            ("default", Origin::Default),
            ("default (toolchains)", Origin::Default),
            ("/ws/skarn.toml:3:7", Origin::WorkspaceConfig),
            ("/home/u/.config/skarn/config.toml:12:1", Origin::UserConfig),
            ("/ws/other.toml:3:7", Origin::Other),
            ("/ws/skarn.toml", Origin::WorkspaceConfig),
            ("/ws/skarn.toml:x:7", Origin::Other),
            (
                "[servers.x.sandbox] net (/srv/skarn.toml:4:1)",
                Origin::Other,
            ),
            ("workspace: the current directory", Origin::Other),
        ];
        for (s, want) in cases {
            assert_eq!(Origin::of(s), want, "{s}");
        }
    }

    #[test]
    fn config_files_are_shortened_for_humans() {
        assert_eq!(short_source("/ws/a b/skarn.toml:3:7"), "./skarn.toml:3:7");
        assert_eq!(
            short_source("/home/u/.config/skarn/config.toml:2:9"),
            "~/.config/skarn/config.toml:2:9"
        );
        assert_eq!(short_source("/ws/skarn.toml"), "./skarn.toml");
        assert_eq!(short_source("--read"), "--read");
        assert_eq!(short_source("/x/other.toml:1:1"), "/x/other.toml:1:1");
    }

    #[test]
    fn every_scalar_is_present_and_only_non_default_grants_are_listed() {
        let mut p = Policy::new("/ws");
        p.net = NetPolicy::AllowLoopback;
        p.private_home = false;
        p.limits.timeout_secs = Some(30);
        p.read.push(Grant::new("/opt/x", "--read"));
        p.read.push(Grant::new("/data", "/ws/skarn.toml:4:9"));
        p.exec
            .push(Grant::new("/h/.rustup", "default (toolchains)"));
        p.overlay
            .push(Grant::new("/h/.cargo/registry", "preset rust (--preset)"));
        let mut prov = Provenance::default();
        prov.set("workspace", "the current directory");
        prov.set("net", "/ws/skarn.toml:2:7");
        prov.set("timeout", "--timeout");
        prov.set("private_home", "--no-private-home");
        prov.set("allow_env.MY_TOKEN", "/h/.config/skarn/config.toml:3:1");
        let r = for_report(&p, &prov);
        let get = |k: &str| r.get(k).cloned().unwrap_or_else(|| panic!("{k} missing"));
        assert_eq!(get("net").origin, Origin::WorkspaceConfig);
        assert_eq!(get("net").value.as_deref(), Some("loopback"));
        assert_eq!(get("timeout").origin, Origin::Flag);
        assert_eq!(get("timeout").value.as_deref(), Some("30 s"));
        assert_eq!(get("private_home").value.as_deref(), Some("false"));
        assert_eq!(get("memory").origin, Origin::Default);
        assert_eq!(get("memory").source, "default");
        assert_eq!(get("workspace").origin, Origin::Default);
        assert_eq!(get("allow_env.MY_TOKEN").origin, Origin::UserConfig);
        assert_eq!(get("read./opt/x").origin, Origin::Flag);
        assert_eq!(get("read./data").origin, Origin::WorkspaceConfig);
        assert_eq!(get("overlay./h/.cargo/registry").origin, Origin::Preset);
        assert!(
            !r.contains_key("exec./h/.rustup"),
            "default grants stay out"
        );
        for k in ["preset", "fail_closed", "allow_home_workspace", "max_procs"] {
            assert_eq!(get(k).origin, Origin::Default, "{k}");
        }
    }

    #[test]
    fn a_workspace_named_on_the_command_line_is_a_flag() {
        let p = Policy::new("/ws");
        for (why, want) in [
            ("--workspace", Origin::Flag),
            ("the current directory (--workspace-root cwd)", Origin::Flag),
            (
                "the git work tree holding the current directory /ws/a (--workspace-root repo, \
                 the default)",
                Origin::Default,
            ),
        ] {
            let mut prov = Provenance::default();
            prov.set("workspace", why);
            assert_eq!(for_report(&p, &prov)["workspace"].origin, want, "{why}");
        }
    }
}
