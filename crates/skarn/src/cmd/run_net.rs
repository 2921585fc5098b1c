//! `--net` / `[run] net`, `allow_hosts`, `deny_hosts`, `--deny-host`: the
//! network part of `skarn run`'s policy (issue 11).

use std::path::Path;

use anyhow::bail;
use skarn_sandbox::config::RunConfig;
use skarn_sandbox::policy::split_list;
use skarn_sandbox::{HostList, NetPolicy, Policy, presets};

use super::run::Args;

/// Host lists gathered from config files and flags (lists add up).
#[derive(Debug, Default)]
pub struct NetAcc {
    allow: Vec<String>,
    deny: Vec<String>,
}

const NET_HELP: &str = "deny, loopback, outbound, all or allow:PATTERN[,PATTERN...]";

impl NetAcc {
    /// One config file's `[run]` network keys.
    pub fn add_config(&mut self, policy: &mut Policy, c: &RunConfig) -> anyhow::Result<()> {
        let r = &c.run;
        let mut set_here = false;
        if let Some(n) = &r.net {
            let net = NetPolicy::parse(n.get_ref()).ok_or_else(|| {
                c.error(
                    n.span(),
                    format!("net must be {NET_HELP}, not {:?}", n.get_ref()),
                )
            })?;
            if let NetPolicy::AllowHosts(l) = &net {
                check_all(&l.allow).map_err(|m| c.error(n.span(), m))?;
                self.allow.extend(l.allow.iter().cloned());
            }
            policy.net = net;
            policy.sources.insert("net".into(), c.at(n.span()));
            set_here = true;
        }
        for h in &r.allow_hosts {
            check_all(&split_list(h.get_ref())).map_err(|m| c.error(h.span(), m))?;
            self.allow.extend(split_list(h.get_ref()));
            if !set_here {
                policy.net = NetPolicy::AllowHosts(HostList::default());
                policy.sources.insert("net".into(), c.at(h.span()));
                set_here = true;
            }
        }
        for h in &r.deny_hosts {
            check_all(&split_list(h.get_ref())).map_err(|m| c.error(h.span(), m))?;
            self.deny.extend(split_list(h.get_ref()));
        }
        Ok(())
    }

    /// `--net`, `--deny-host`, `--net-max-*`.
    pub fn add_flags(&mut self, policy: &mut Policy, args: &Args) -> anyhow::Result<()> {
        let mut chosen: Option<NetPolicy> = None;
        for n in &args.net {
            let Some(net) = NetPolicy::parse(n) else {
                bail!("--net must be {NET_HELP}, not {n:?}");
            };
            match (&net, &chosen) {
                (NetPolicy::AllowHosts(l), None | Some(NetPolicy::AllowHosts(_))) => {
                    if l.allow.is_empty() {
                        bail!("--net {n:?}: the allow list is empty");
                    }
                    check_all(&l.allow).map_err(|m| anyhow::anyhow!("--net: {m}"))?;
                    self.allow.extend(l.allow.iter().cloned());
                    chosen = Some(net);
                }
                (_, Some(prev)) if *prev != net => {
                    bail!("--net {n:?} conflicts with --net {}", prev.as_str());
                }
                _ => chosen = Some(net),
            }
        }
        if let Some(net) = chosen {
            policy.net = net;
            policy.sources.insert("net".into(), "--net".into());
        }
        for d in &args.deny_host {
            check_all(&split_list(d)).map_err(|m| anyhow::anyhow!("--deny-host: {m}"))?;
            self.deny.extend(split_list(d));
        }
        let is_allow = matches!(policy.net, NetPolicy::AllowHosts(_));
        if !is_allow
            && (!args.deny_host.is_empty()
                || args.net_max_bytes.is_some()
                || args.net_max_connections.is_some())
        {
            bail!("--deny-host, --net-max-bytes and --net-max-connections need --net allow:...");
        }
        if let NetPolicy::AllowHosts(l) = &mut policy.net {
            l.max_total_bytes = args.net_max_bytes.map(|m| m.saturating_mul(1 << 20));
            l.max_connections = args.net_max_connections.filter(|n| *n > 0);
        }
        Ok(())
    }

    /// Expand `registries`, put the lists into the policy.
    pub fn finish(
        self,
        policy: &mut Policy,
        ws: &Path,
        preset_names: &[(String, String)],
    ) -> anyhow::Result<()> {
        let NetPolicy::AllowHosts(list) = &mut policy.net else {
            return Ok(());
        };
        let mut tools: Vec<&str> = Vec::new();
        for (name, _) in preset_names {
            match name.as_str() {
                "auto" => tools.extend(presets::detect(ws)),
                "none" => {}
                n => tools.extend(presets::PRESETS.iter().copied().filter(|p| *p == n)),
            }
        }
        let mut allow = Vec::new();
        for a in self.allow {
            if a == skarn_egress::registries::KEYWORD {
                let found = skarn_egress::registries::discover(ws, &tools);
                for n in &found.notes {
                    eprintln!("skarn: net: registries: {n}");
                }
                allow.extend(found.patterns);
            } else {
                allow.push(a);
            }
        }
        allow.dedup();
        if allow.is_empty() {
            bail!("--net allow: no host to allow (is `registries` all there is, with no preset?)");
        }
        list.allow = allow;
        list.deny = self.deny;
        skarn_egress::Rules::parse(&list.allow, &list.deny)?;
        Ok(())
    }
}

/// Check each pattern (the `registries` keyword is expanded later).
fn check_all(list: &[String]) -> Result<(), String> {
    for p in list {
        if p != skarn_egress::registries::KEYWORD {
            skarn_egress::Pattern::parse(p).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}
