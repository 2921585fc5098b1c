//! What an untrusted policy layer may still do: narrow.
//!
//! A workspace `skarn.toml` the user has not trusted (see [`crate::policy::trust`])
//! keeps only the settings that make the sandbox stricter than what the
//! layers before it (and the defaults) give: more secret paths, more
//! refused hosts, a stricter network, lower limits, `protect_persistence`,
//! `fail_closed` and `private_home` on, `allow_home_workspace` off, a wider
//! walk before the run (`walk_max_dirs`: it only costs time), no
//! presets. Every other setting it holds (grants, `allow_env`, allowed
//! hosts, a wider network, higher or no limits, toolchain presets, the
//! booleans the other way) is dropped and named, so the caller can say so.

use crate::policy::layers::{Layer, LimitKey, Sourced};
use crate::policy::{Limits, NetPolicy};

/// How open a network policy is (higher: more). An allow list is wider
/// than `loopback`: its namespace has the same private `lo`, and a proxy
/// that reaches the listed hosts besides (atk24h F1).
fn openness(n: &NetPolicy) -> u8 {
    match n {
        NetPolicy::DenyAll => 0,
        NetPolicy::AllowLoopback => 1,
        NetPolicy::AllowHosts(_) => 2,
        NetPolicy::AllowOutbound => 3,
        NetPolicy::AllowAll => 4,
    }
}

fn default_limit(k: LimitKey) -> u64 {
    let d = Limits::default();
    match k {
        LimitKey::Timeout => d.timeout_secs,
        LimitKey::Memory => d.memory_mb,
        LimitKey::MaxProcs => d.max_procs,
        LimitKey::MaxFileSize => d.max_file_size_mb,
    }
    .unwrap_or(0)
}

/// `layer` with only what narrows the policy `before` gives, and the
/// names of the settings dropped (`write`, `net`, ...), each once.
pub fn narrow(layer: Layer, before: &[Layer]) -> (Layer, Vec<String>) {
    let mut dropped: Vec<String> = Vec::new();
    let mut drop = |key: &str| {
        if !dropped.iter().any(|d| d == key) {
            dropped.push(key.to_owned());
        }
    };
    let mut out = Layer {
        kind: layer.kind,
        deny_read: layer.deny_read,
        deny_hosts: layer.deny_hosts,
        ..Layer::default()
    };
    for (key, list) in [
        ("read", &layer.read),
        ("write", &layer.write),
        ("exec", &layer.exec),
    ] {
        if !list.is_empty() {
            drop(key);
        }
    }
    if !layer.allow_env.is_empty() {
        drop("allow_env");
    }
    let net_before = before
        .iter()
        .rev()
        .find_map(|l| l.net.as_ref().map(|n| n.value.clone()))
        .unwrap_or_default();
    if let Some(n) = layer.net {
        let (new, old) = (openness(&n.value), openness(&net_before));
        if new < old {
            // Stricter: an allow list under a wider policy keeps its hosts
            // (still narrower than what was there).
            if matches!(n.value, NetPolicy::AllowHosts(_)) {
                out.allow_hosts = layer.allow_hosts.clone();
            }
            out.net = Some(n);
        } else if new > old || matches!(n.value, NetPolicy::AllowHosts(_)) {
            drop("net");
        }
    }
    if out.allow_hosts.is_empty() && !layer.allow_hosts.is_empty() {
        drop("allow_hosts");
    }
    if layer.net_max_bytes_mib.is_some() || layer.net_max_connections.is_some() {
        drop("net limits");
    }
    if let Some(ps) = layer.presets {
        let before_named = before.iter().any(|l| l.presets.is_some());
        if ps.iter().all(|p| p.value == "none") {
            out.presets = Some(ps);
        } else if before_named || ps.iter().any(|p| p.value != "auto") {
            drop("preset");
        }
    }
    for (k, v) in layer.limits {
        let old = before
            .iter()
            .rev()
            .find_map(|l| l.limits.iter().rev().find(|(lk, _)| *lk == k))
            .map_or_else(|| default_limit(k), |(_, s)| s.value);
        if v.value != 0 && (old == 0 || v.value <= old) {
            out.limits.push((k, v));
        } else if v.value != old {
            drop(k.name());
        }
    }
    let keep = |v: Option<Sourced<bool>>, strict: bool, name: &str, drop: &mut dyn FnMut(&str)| {
        v.and_then(|s| {
            if s.value == strict {
                Some(s)
            } else {
                drop(name);
                None
            }
        })
    };
    out.protect_persistence = keep(
        layer.protect_persistence,
        true,
        "protect_persistence",
        &mut drop,
    );
    out.fail_closed = keep(layer.fail_closed, true, "fail_closed", &mut drop);
    out.private_home = keep(layer.private_home, true, "private_home", &mut drop);
    // A wider walk only spends time before the run (ADR 0204): kept when it
    // raises the bound, dropped when it lowers it (a narrower walk keeps
    // fewer repositories read-only).
    if let Some(w) = layer.walk_max_dirs {
        let old = before
            .iter()
            .rev()
            .find_map(|l| l.walk_max_dirs.as_ref().map(|s| s.value))
            .unwrap_or(crate::policy::layers::WALK_MAX_DIRS_DEFAULT);
        if w.value >= old {
            out.walk_max_dirs = Some(w);
        } else {
            drop("walk_max_dirs");
        }
    }
    // The layer is the stricter mode: a file skarn does not trust may ask
    // for it, never turn it off.
    out.workspace_layer = layer.workspace_layer.and_then(|w| {
        if w.value == crate::policy::WorkspaceLayerMode::Cow {
            Some(w)
        } else {
            drop("workspace_layer");
            None
        }
    });
    out.allow_home_workspace = keep(
        layer.allow_home_workspace,
        false,
        "allow_home_workspace",
        &mut drop,
    );
    out.trust_home_config_workspace = keep(
        layer.trust_home_config_workspace,
        false,
        "trust_home_config_workspace",
        &mut drop,
    );
    (out, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Grant;

    fn s<T>(v: T) -> Sourced<T> {
        Sourced::new(v, "ws")
    }

    /// atk24h F1: an allow list is wider than the user's `loopback`;
    /// `loopback` under an allow list narrows.
    #[test]
    fn an_allow_list_does_not_narrow_loopback() {
        let user = |n: NetPolicy| Layer {
            net: Some(Sourced::new(n, "user")),
            ..Layer::default()
        };
        let hosts = NetPolicy::parse("allow:example.test").unwrap();
        let ws = Layer {
            net: Some(s(hosts.clone())),
            ..Layer::default()
        };
        let (l, dropped) = narrow(ws, &[user(NetPolicy::AllowLoopback)]);
        assert!(l.net.is_none(), "{dropped:?}");
        assert!(dropped.iter().any(|d| d == "net"));
        let ws = Layer {
            net: Some(s(NetPolicy::AllowLoopback)),
            ..Layer::default()
        };
        let (l, _) = narrow(ws, &[user(hosts)]);
        assert_eq!(l.net.map(|n| n.value), Some(NetPolicy::AllowLoopback));
    }

    #[test]
    fn widening_is_dropped_narrowing_kept() {
        let wide = Layer {
            write: vec![Grant::new("/out", "ws")],
            read: vec![Grant::new("/r", "ws")],
            deny_read: vec![Grant::new("/secret", "ws")],
            net: Some(s(NetPolicy::AllowAll)),
            allow_env: vec![s("TOKEN".into())],
            fail_closed: Some(s(false)),
            protect_persistence: Some(s(false)),
            private_home: Some(s(false)),
            allow_home_workspace: Some(s(true)),
            limits: vec![(LimitKey::Timeout, s(0)), (LimitKey::Memory, s(512))],
            presets: Some(vec![s("rust".into())]),
            ..Layer::default()
        };
        let (l, dropped) = narrow(wide, &[]);
        assert!(l.write.is_empty() && l.read.is_empty() && l.allow_env.is_empty());
        assert_eq!(l.deny_read.len(), 1);
        assert!(l.net.is_none() && l.presets.is_none());
        assert!(l.fail_closed.is_none() && l.protect_persistence.is_none());
        assert!(l.private_home.is_none() && l.allow_home_workspace.is_none());
        assert_eq!(l.limits.len(), 1, "memory 512 MiB is below the default");
        for k in [
            "write",
            "read",
            "net",
            "allow_env",
            "fail_closed",
            "timeout",
            "preset",
        ] {
            assert!(dropped.iter().any(|d| d == k), "{k}: {dropped:?}");
        }
        // Stricter than the user's own setting: kept.
        let user = Layer {
            net: Some(s(NetPolicy::AllowAll)),
            ..Layer::default()
        };
        let strict = Layer {
            net: Some(s(NetPolicy::DenyAll)),
            fail_closed: Some(s(true)),
            presets: Some(vec![s("none".into())]),
            ..Layer::default()
        };
        let (l, dropped) = narrow(strict, &[user]);
        assert_eq!(l.net.unwrap().value, NetPolicy::DenyAll);
        assert!(l.fail_closed.is_some() && l.presets.is_some());
        assert!(dropped.is_empty(), "{dropped:?}");
        // An allow list adds hosts to an allow list: dropped.
        let user = Layer {
            net: Some(s(NetPolicy::parse("allow:a.test").unwrap())),
            ..Layer::default()
        };
        let more = Layer {
            net: Some(s(NetPolicy::parse("allow:b.test").unwrap())),
            allow_hosts: vec![s("b.test".into())],
            ..Layer::default()
        };
        let (l, dropped) = narrow(more, &[user]);
        assert!(l.net.is_none() && l.allow_hosts.is_empty(), "{dropped:?}");
    }

    /// A wider walk before the run only costs time (ADR 0204): kept; a
    /// narrower one keeps fewer repositories read-only: dropped.
    #[test]
    fn the_walk_may_be_widened_not_narrowed() {
        let walk = |n| Layer {
            walk_max_dirs: Some(s(n)),
            ..Layer::default()
        };
        let (l, dropped) = narrow(walk(400_000), &[]);
        assert_eq!(l.walk_max_dirs.map(|w| w.value), Some(400_000));
        assert!(dropped.is_empty());
        let (l, dropped) = narrow(walk(10), &[]);
        assert!(l.walk_max_dirs.is_none());
        assert_eq!(dropped, vec!["walk_max_dirs".to_owned()]);
        let (l, _) = narrow(walk(100_000), &[walk(200_000)]);
        assert!(l.walk_max_dirs.is_none(), "below the user's own bound");
    }
}
