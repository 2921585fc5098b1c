//! What was denied during a run, from what the kernel and skarn recorded
//! (issue 23 item 6, ADR 0182), and the one line printed when the command
//! failed and something was: the network namespace's count of
//! connections and name lookups that found no route (the kernel's
//! `OutNoRoutes` counters of the run's own namespace), the allow-list
//! proxy's refusals, and changes to protected paths a layer refused. A
//! command that fails with nothing recorded (`exit 7`, a failing test)
//! gets no line; `--report` then says what the sandbox denies by policy.
//!
//! The fix is said to a person at a terminal only (a flag); an agent
//! behind the hook or the gateway's `run` tool ([`Caller`]) gets the fact
//! (issue 24 item 5: the host in the line is the one the command chose).

use serde::{Deserialize, Serialize};

use crate::report::{Denial, RestrictionReport};

/// Who started the run, as `SKARN_CALLER` says (`hook`, `gateway`); a
/// terminal otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Caller {
    /// A person (or script) that can pass flags.
    #[default]
    Terminal,
    /// An agent's command rewritten by `skarn hook`.
    Hook,
    /// The gateway's `run` tool.
    Gateway,
}

/// The caller [`Caller::set_for_process`] fixed for this process.
static PROCESS_CALLER: std::sync::OnceLock<Caller> = std::sync::OnceLock::new();

impl Caller {
    /// From the value of `SKARN_CALLER`.
    pub fn parse(v: Option<&str>) -> Caller {
        match v.map(str::trim) {
            Some("hook") => Caller::Hook,
            Some("gateway") => Caller::Gateway,
            _ => Caller::Terminal,
        }
    }

    /// Who started the run, from the environment read through `var`:
    /// `SKARN_CALLER` when set, else an agent's own marker for the
    /// commands it runs (Claude Code's `CLAUDECODE`, Gemini CLI's
    /// `GEMINI_CLI`): such a command reached `skarn run` through the hook,
    /// where flags cannot be added. It only chooses the wording of the
    /// advice; no setting depends on it.
    pub fn detect(var: impl Fn(&str) -> Option<String>) -> Caller {
        if let Some(c) = PROCESS_CALLER.get() {
            return *c;
        }
        if let Some(v) = var("SKARN_CALLER") {
            return Caller::parse(Some(&v));
        }
        let set = |k: &str| var(k).is_some_and(|v| !v.is_empty() && v != "0");
        if set("CLAUDECODE") || set("GEMINI_CLI") {
            return Caller::Hook;
        }
        Caller::Terminal
    }

    /// Say that a model reads what this process prints, whatever the
    /// environment says (`skarn run --caller hook`, which the hook writes
    /// into every command it confines, for every client: VS Code, Codex,
    /// Cursor and Windsurf set no variable of their own). Only a
    /// model-facing caller can be set, and only once.
    pub fn set_for_process(c: Caller) {
        if c.model_facing() {
            let _ = PROCESS_CALLER.set(c);
        }
    }

    /// Whether a model reads what this run prints (the hook's commands,
    /// the gateway's `run` tool): advice to widen is then left out
    /// ([`crate::report::advice`]).
    pub fn model_facing(&self) -> bool {
        matches!(self, Caller::Hook | Caller::Gateway)
    }

    /// Whether the plan's value is the default (for serde).
    pub fn is_terminal(&self) -> bool {
        *self == Caller::Terminal
    }
}

/// The run's network namespace's count of packets that found no route
/// (IPv4 `Ip: OutNoRoutes` and IPv6 `Ip6OutNoRoutes`): every `connect`,
/// `sendto` and name lookup the empty (or loopback-only) namespace
/// refused. Read by init, inside that namespace, once the command ended.
pub fn no_route_count() -> u64 {
    let v4 = std::fs::read_to_string("/proc/net/snmp")
        .ok()
        .and_then(|t| snmp_field(&t, "Ip:", "OutNoRoutes"))
        .unwrap_or(0);
    let v6 = std::fs::read_to_string("/proc/net/snmp6")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                let mut w = l.split_whitespace();
                (w.next() == Some("Ip6OutNoRoutes")).then(|| w.next()?.parse().ok())?
            })
        })
        .unwrap_or(0);
    v4.saturating_add(v6)
}

/// A field of `/proc/net/snmp`: a header line and a value line share
/// their `prefix`.
fn snmp_field(text: &str, prefix: &str, name: &str) -> Option<u64> {
    let mut lines = text.lines().filter(|l| l.starts_with(prefix));
    let head = lines.next()?;
    let vals = lines.next()?;
    let i = head.split_whitespace().position(|h| h == name)?;
    vals.split_whitespace().nth(i)?.parse().ok()
}

/// The denial for `n` packets that found no route.
pub fn network(n: u64) -> Denial {
    Denial {
        kind: "network".into(),
        what: format!("{n} connection(s) or name lookup(s)"),
        why: "no route: the network is denied for this run".into(),
    }
}

/// The allow-list proxy's refusals, as denials.
pub fn from_egress(report: &RestrictionReport) -> Vec<Denial> {
    report
        .egress
        .iter()
        .flat_map(|e| e.denied.iter())
        .map(|d| Denial {
            kind: "host".into(),
            what: d.host.clone(),
            why: d.reason.clone(),
        })
        .collect()
}

/// How to widen the network, for a person at a terminal only: a model
/// (the hook's commands, the gateway's `run` tool) gets the fact, since
/// the host in a denial is the one the command chose (attack atk24i F1).
fn net_fix(caller: Caller, host: Option<&str>) -> Option<String> {
    let value = match host {
        Some(h) => format!("allow:{h}"),
        None => "allow:HOST".into(),
    };
    match caller {
        Caller::Terminal => Some(format!("--net {value} (or --net outbound)")),
        Caller::Hook | Caller::Gateway => None,
    }
}

/// Where the failure line's fix starts ([`crate::report::advice`] cuts a
/// line there for a model).
pub const FIX_MARKER: &str = "; to allow the network: ";

/// Most denials named in the line (the rest are counted; `--report
/// --json` lists them all).
const SHOWN: usize = 6;

/// The failure line for `denied` (None when nothing was recorded).
pub fn line(denied: &[Denial], caller: Caller) -> Option<String> {
    if denied.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = denied
        .iter()
        .take(SHOWN)
        .map(|d| match d.kind.as_str() {
            "network" => format!("network: {} ({})", d.what, d.why),
            "host" => format!("connection to {} ({})", d.what, d.why),
            _ => format!("write {} ({})", d.what, d.why),
        })
        .collect();
    if denied.len() > SHOWN {
        parts.push(format!("{} more", denied.len() - SHOWN));
    }
    let host = denied
        .iter()
        .find(|d| d.kind == "host")
        .map(|d| d.what.as_str());
    let fix = if denied
        .iter()
        .any(|d| d.kind == "host" || d.kind == "network")
    {
        net_fix(caller, host)
            .map(|f| format!("{FIX_MARKER}{f}"))
            .unwrap_or_default()
    } else {
        String::new()
    };
    Some(format!(
        "skarn: sandbox: the command failed and this run was denied: {}{fix}",
        parts.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snmp_counters_are_read_by_name() {
        let t = "Ip: Forwarding DefaultTTL InReceives OutNoRoutes\nIp: 2 64 0 3\n\
                 Icmp: InMsgs\nIcmp: 0\n";
        assert_eq!(snmp_field(t, "Ip:", "OutNoRoutes"), Some(3));
        assert_eq!(snmp_field(t, "Ip:", "Nope"), None);
    }

    #[test]
    fn the_line_names_what_and_the_fix_in_the_callers_terms() {
        assert_eq!(line(&[], Caller::Terminal), None);
        let d = [network(2)];
        let t = line(&d, Caller::Terminal).unwrap();
        assert!(
            t.contains("network: 2") && t.contains("--net allow:HOST"),
            "{t}"
        );
        let h = line(&d, Caller::Hook).unwrap();
        assert!(
            !h.contains("--net") && !h.contains("allow") && h.contains("network: 2"),
            "{h}"
        );
        let w = [Denial {
            kind: "write".into(),
            what: ".git/hooks/pre-commit".into(),
            why: "a git hook".into(),
        }];
        let l = line(&w, Caller::Gateway).unwrap();
        assert!(l.contains("write .git/hooks/pre-commit (a git hook)") && !l.contains("--net"));
        assert_eq!(Caller::parse(Some("hook")), Caller::Hook);
        assert_eq!(Caller::parse(None), Caller::Terminal);
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(Caller::detect(env(&[("CLAUDECODE", "1")])), Caller::Hook);
        assert_eq!(Caller::detect(env(&[("GEMINI_CLI", "1")])), Caller::Hook);
        assert_eq!(
            Caller::detect(env(&[("CLAUDECODE", "1"), ("SKARN_CALLER", "gateway")])),
            Caller::Gateway
        );
        assert_eq!(
            Caller::detect(env(&[("CLAUDECODE", "0")])),
            Caller::Terminal
        );
        assert_eq!(Caller::detect(env(&[])), Caller::Terminal);
    }
}
