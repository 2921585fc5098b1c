//! Policy assembly: [`Policy::from_layers`] merges [`Layer`]s (user config,
//! workspace config, flags; or a gateway server's facts and table) over the
//! defaults, adds what the host requires (name resolution for host
//! networking, toolchain installations, presets, `registries`), and says
//! which layer set each value ([`Provenance`]).
//!
//! Order of the result's lists: every layer's grants in layer order, the
//! DNS grant, toolchains, presets. Later layers win for scalars.

use std::path::{Path, PathBuf};

use crate::policy::config::expand_path;
use crate::policy::layers::{Layer, LayerKind, LimitKey, Sourced};
use crate::policy::policy_error::PolicyError;
use crate::policy::presets;
use crate::policy::provenance::Provenance;
use crate::policy::workspace::Workspace;
use crate::policy::{Grant, NetPolicy, Policy};

/// What assembly needs to know about the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerHost {
    /// Home directory: toolchains and presets are granted only with one.
    pub home: Option<PathBuf>,
    /// Base of any path still relative after the layers (the caller's cwd).
    pub cwd: PathBuf,
    /// Where `/etc/resolv.conf` points when it is a link out of `/etc`.
    pub resolv_target: Option<PathBuf>,
    /// Provenance of that grant.
    pub dns_source: String,
    /// Expand the `registries` keyword of an allow list (from the presets)
    /// and check the final lists; off when the caller expands them itself.
    pub expand_registries: bool,
    /// The command to run (its words detect toolchain presets, as the
    /// files from the working directory up to the workspace do).
    pub command: Vec<String>,
}

impl LayerHost {
    /// This host, as `skarn run` sees it.
    pub fn probe(home: Option<PathBuf>, cwd: PathBuf) -> LayerHost {
        LayerHost {
            home,
            cwd,
            resolv_target: resolv_conf_target(),
            dns_source: "default (DNS for --net)".into(),
            expand_registries: true,
            command: Vec::new(),
        }
    }
}

/// Where `/etc/resolv.conf` points when it is a symlink out of `/etc`
/// (systemd-resolved keeps it in /run, which is not granted otherwise).
pub fn resolv_conf_target() -> Option<PathBuf> {
    let rc = Path::new("/etc/resolv.conf");
    std::fs::canonicalize(rc)
        .ok()
        .filter(|t| rc.is_symlink() && !t.starts_with("/etc"))
}

fn limit_slot(policy: &mut Policy, key: LimitKey) -> &mut Option<u64> {
    match key {
        LimitKey::Timeout => &mut policy.limits.timeout_secs,
        LimitKey::Memory => &mut policy.limits.memory_mb,
        LimitKey::MaxProcs => &mut policy.limits.max_procs,
        LimitKey::MaxFileSize => &mut policy.limits.max_file_size_mb,
    }
}

fn set_bool(dst: &mut bool, v: &Option<Sourced<bool>>, key: &str, prov: &mut Provenance) {
    if let Some(s) = v {
        *dst = s.value;
        prov.set(key, &s.source);
    }
}

impl Policy {
    /// Merge `layers` (earliest first) over the default policy for
    /// `workspace`. Pure apart from reading the host's files for presets,
    /// toolchains and `registries`.
    pub fn from_layers(
        workspace: &Workspace,
        layers: &[Layer],
        host: &LayerHost,
    ) -> Result<(Policy, Provenance), PolicyError> {
        let mut p = Policy::new(&workspace.path);
        let mut prov = Provenance::default();
        p.cwd = workspace.cwd.clone();
        p.sources
            .insert("workspace".into(), workspace.source.clone());
        prov.set("workspace", &workspace.source);
        let mut presets: Vec<Sourced<String>> = Vec::new();
        let mut allow: Vec<String> = Vec::new();
        let mut deny: Vec<String> = Vec::new();
        let (mut max_bytes, mut max_conns) = (None, None);
        for l in layers {
            p.read.extend(l.read.iter().cloned());
            p.write.extend(l.write.iter().cloned());
            p.exec.extend(l.exec.iter().cloned());
            p.deny_read.extend(l.deny_read.iter().cloned());
            if let Some(n) = &l.net {
                p.net = n.value.clone();
                p.sources.insert("net".into(), n.source.clone());
                prov.set("net", &n.source);
            }
            for h in &l.allow_hosts {
                allow.push(h.value.clone());
                prov.set(format!("allow_hosts.{}", h.value), &h.source);
            }
            for h in &l.deny_hosts {
                deny.push(h.value.clone());
                prov.set(format!("deny_hosts.{}", h.value), &h.source);
            }
            if let Some(m) = &l.net_max_bytes_mib {
                max_bytes = Some(m.value);
                prov.set("net_max_bytes", &m.source);
            }
            if let Some(m) = &l.net_max_connections {
                max_conns = Some(m.value);
                prov.set("net_max_connections", &m.source);
            }
            if let Some(ps) = &l.presets {
                presets = ps.clone();
                let src: Vec<&str> = ps.iter().map(|s| s.source.as_str()).collect();
                prov.set("preset", src.join(", "));
            }
            for (key, v) in &l.limits {
                *limit_slot(&mut p, *key) = (v.value != 0).then_some(v.value);
                p.sources.insert(key.name().into(), v.source.clone());
                prov.set(key.name(), &v.source);
            }
            for e in &l.allow_env {
                p.allow_env.push(e.value.clone());
                prov.set(format!("allow_env.{}", e.value), &e.source);
            }
            set_bool(
                &mut p.protect_persistence,
                &l.protect_persistence,
                "protect_persistence",
                &mut prov,
            );
            set_bool(&mut p.fail_closed, &l.fail_closed, "fail_closed", &mut prov);
            set_bool(
                &mut p.allow_home_workspace,
                &l.allow_home_workspace,
                "allow_home_workspace",
                &mut prov,
            );
            set_bool(
                &mut p.trust_home_config_workspace,
                &l.trust_home_config_workspace,
                "trust_home_config_workspace",
                &mut prov,
            );
            set_bool(
                &mut p.private_home,
                &l.private_home,
                "private_home",
                &mut prov,
            );
            if let Some(w) = &l.workspace_layer {
                p.workspace_layer = w.value;
                p.sources.insert("workspace_layer".into(), w.source.clone());
                prov.set("workspace_layer", &w.source);
            }
            if let Some(k) = &l.state_keep {
                p.state_keep = Some(k.value);
                prov.set("state_keep", &k.source);
            }
            if let Some(k) = &l.scan_cache_max {
                p.scan_cache_max = Some(k.value);
                prov.set("scan_cache_max", &k.source);
            }
            if let Some(w) = &l.walk_max_dirs {
                p.walk_max_dirs = Some(w.value);
                prov.set("walk_max_dirs", &w.source);
            }
        }
        let is_allow = matches!(p.net, NetPolicy::AllowHosts(_));
        if !is_allow
            && layers.iter().any(|l| {
                l.kind == LayerKind::Flags
                    && (!l.deny_hosts.is_empty()
                        || l.net_max_bytes_mib.is_some()
                        || l.net_max_connections.is_some())
            })
        {
            return Err(PolicyError::Flag(
                "--deny-host, --net-max-bytes and --net-max-connections need --net allow:..."
                    .into(),
            ));
        }
        if let NetPolicy::AllowHosts(l) = &mut p.net {
            // 0 means no limit, as for every other limit.
            l.max_total_bytes = max_bytes
                .filter(|m: &u64| *m > 0)
                .map(|m| m.saturating_mul(1 << 20));
            l.max_connections = max_conns.filter(|n| *n > 0);
        }
        if let (Some(t), NetPolicy::AllowOutbound | NetPolicy::AllowAll) =
            (&host.resolv_target, &p.net)
        {
            p.read.push(Grant::new(t, &host.dns_source));
        }
        if presets.is_empty() {
            // Nothing named (or an empty list): detect from the workspace.
            presets.push(Sourced::new("auto".into(), "default"));
        }
        if let Some(h) = &host.home {
            presets::apply_toolchains(&mut p, h);
            for s in &presets {
                match s.value.as_str() {
                    "none" => {}
                    "auto" => {
                        for d in
                            presets::detect_for(&workspace.path, p.cwd.as_deref(), &host.command)
                        {
                            presets::apply(&mut p, d, h, &format!("detected, {}", s.source));
                        }
                    }
                    n => {
                        presets::apply(&mut p, n, h, &s.source);
                    }
                }
            }
        }
        // Paths are taken as written; make sure they are absolute (before
        // `registries`, which must know every writable path).
        for g in p
            .read
            .iter_mut()
            .chain(p.write.iter_mut())
            .chain(p.exec.iter_mut())
            .chain(p.deny_read.iter_mut())
        {
            if !g.path.is_absolute() {
                g.path = expand_path(&g.path.to_string_lossy(), &host.cwd, host.home.as_deref());
            }
        }
        finish_net(&mut p, allow, deny, &presets, host, &mut prov)?;
        Ok((p, prov))
    }
}

/// Put the host lists into an allow policy, `registries` expanded.
fn finish_net(
    p: &mut Policy,
    allow_in: Vec<String>,
    deny: Vec<String>,
    presets: &[Sourced<String>],
    host: &LayerHost,
    prov: &mut Provenance,
) -> Result<(), PolicyError> {
    let ws = p.workspace.clone();
    // Discovery trusts nothing the sandbox may write.
    let writable: Vec<PathBuf> = p.write.iter().map(|g| g.path.clone()).collect();
    let NetPolicy::AllowHosts(list) = &mut p.net else {
        return Ok(());
    };
    if !host.expand_registries {
        list.allow = allow_in;
        list.deny = deny;
        return Ok(());
    }
    let mut tools: Vec<&str> = Vec::new();
    for s in presets {
        match s.value.as_str() {
            "auto" => tools.extend(presets::detect_for(&ws, p.cwd.as_deref(), &host.command)),
            "none" => {}
            n => tools.extend(presets::PRESETS.iter().copied().filter(|p| *p == n)),
        }
    }
    let mut allow = Vec::new();
    for a in allow_in {
        if a == skarn_egress::registries::KEYWORD {
            let found = skarn_egress::registries::discover(&ws, &writable, &tools);
            prov.notes
                .extend(found.notes.iter().map(|n| format!("net: registries: {n}")));
            allow.extend(found.patterns);
        } else {
            allow.push(a);
        }
    }
    allow.dedup();
    if allow.is_empty() {
        return Err(PolicyError::Net(
            "--net allow: no host to allow (is `registries` all there is, with no preset?)".into(),
        ));
    }
    list.allow = allow;
    list.deny = deny;
    skarn_egress::Rules::parse(&list.allow, &list.deny)
        .map_err(|e| PolicyError::Net(e.to_string()))?;
    Ok(())
}

#[cfg(test)]
#[path = "assemble_tests/mod.rs"]
mod tests;
