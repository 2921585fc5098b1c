//! The plan part of `--net allow:...` (issue 11): the proxy's ports,
//! rules and limits, the variables that point tools at it, and the report
//! notes. The proxy process itself is [`crate::linux::egress`].

use serde::{Deserialize, Serialize};

use crate::policy::NetPolicy;
use crate::report::RestrictionReport;

/// Port of the HTTP proxy inside the sandbox (127.0.0.1).
pub const HTTP_PORT: u16 = 3128;
/// Port of the SOCKS5 proxy inside the sandbox (127.0.0.1).
pub const SOCKS_PORT: u16 = 1080;

/// The proxy part of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EgressPlan {
    /// Allow patterns.
    pub allow: Vec<String>,
    /// Deny patterns (win over `allow`).
    pub deny: Vec<String>,
    /// HTTP proxy port inside.
    pub http_port: u16,
    /// SOCKS5 proxy port inside.
    pub socks_port: u16,
    /// Connections at once.
    pub max_connections: usize,
    /// Connect (and resolve) timeout, seconds.
    pub connect_timeout_secs: u64,
    /// Idle timeout, seconds.
    pub idle_timeout_secs: u64,
    /// Total bytes carried before connections are closed.
    pub max_total_bytes: Option<u64>,
    /// Secrets bound to hosts (issue 27; see [`crate::secrets::egress_secrets`]).
    /// The helper clears their values once the proxy has them.
    #[serde(default)]
    pub secrets: Vec<skarn_egress::secrets::SecretSpec>,
    /// The run's CA (with its key, cleared as the values are).
    #[serde(default)]
    pub ca: Option<skarn_egress::CaMaterial>,
    /// The roots the proxy verifies bound hosts against, chosen by the
    /// user and read by the planning process, certificates only (atk27h
    /// F2, F3, atk27i F7); never the helper's environment. Also the system
    /// part of the sandbox's CA bundle (`FsOp::Bundle`).
    #[serde(default)]
    pub upstream_roots: Option<crate::secrets::upstream_roots::UpstreamRoots>,
    /// The write end of the caller's audit pipe, open in the helper at
    /// this number (set by [`crate::linux::launch::helper_command_audited`]):
    /// the proxy writes its records there instead of stderr, which it
    /// shares with the sandboxed program (atk27h F4). The helper closes it
    /// once the proxy has it: init and the command never hold it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_fd: Option<i32>,
    /// Each secret's exposure record (same order as `secrets`): where the
    /// proxy records a request that carried a piece of its value (ADR
    /// 0314, [`crate::secrets::exposed`]).
    #[serde(default)]
    pub exposure_marks: Vec<Option<std::path::PathBuf>>,
}

impl EgressPlan {
    /// Forget the secrets' values and the CA key (after the proxy forked).
    pub fn forget_secrets(&mut self) {
        for s in &mut self.secrets {
            s.clear_value();
        }
        if let Some(ca) = &mut self.ca {
            ca.clear_key();
        }
    }
}

pub use crate::policy::egress_env::proxy_env;

/// Plan the proxy for `net` (None unless `AllowHosts` with a network
/// namespace); adds the proxy variables to `set_env`.
pub fn plan_egress(
    net: &NetPolicy,
    netns: bool,
    set_env: &mut Vec<(String, String)>,
) -> Option<EgressPlan> {
    let NetPolicy::AllowHosts(list) = net else {
        return None;
    };
    if !netns {
        return None;
    }
    set_env.extend(proxy_env(HTTP_PORT, SOCKS_PORT, &list.allow));
    Some(EgressPlan {
        allow: list.allow.clone(),
        deny: list.deny.clone(),
        http_port: HTTP_PORT,
        socks_port: SOCKS_PORT,
        max_connections: list.max_connections.unwrap_or(256),
        connect_timeout_secs: 15,
        idle_timeout_secs: 300,
        max_total_bytes: list.max_total_bytes,
        secrets: Vec::new(),
        ca: None,
        upstream_roots: None,
        audit_fd: None,
        exposure_marks: Vec::new(),
    })
}

/// Report notes for `--net allow:...`.
pub fn plan_notes(net: &NetPolicy, netns: bool, report: &mut RestrictionReport) {
    let NetPolicy::AllowHosts(list) = net else {
        return;
    };
    if netns {
        report.notes.push(format!(
            "net allow: private network namespace with only lo; an HTTP proxy on \
             127.0.0.1:{HTTP_PORT} and a SOCKS5 proxy on 127.0.0.1:{SOCKS_PORT} are carried \
             outside by skarn, which connects only to: {}{}; no resolver inside",
            list.allow.join(", "),
            if list.deny.is_empty() {
                String::new()
            } else {
                format!(" (never: {})", list.deny.join(", "))
            }
        ));
    } else {
        report.degrade(
            "net allow without a network namespace: no network at all (the proxy needs one)",
        );
    }
}
