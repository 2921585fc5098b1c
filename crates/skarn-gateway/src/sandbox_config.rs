//! `[servers.<alias>.sandbox]`: the confinement of one stdio downstream
//! server (issue 12, ADR 0027). Parsed here, turned into a sandbox
//! [`skarn_sandbox::Policy`] by [`crate::sandbox_policy`].
//!
//! ```toml
//! [servers.files.sandbox]
//! enabled = true               # default: on wherever the OS sandbox works
//! read = ["~/notes"]           # read-only grants
//! write = ["/srv/data"]        # read-write grants
//! exec = []                    # read+execute grants
//! net = "deny"                 # deny | allow:HOST,... | outbound | all
//! deny_hosts = []              # with allow:..., never these
//! memory = "1G"                # per-process data limit (bytes or 512M, 2G)
//! max_procs = 256
//! max_file_size = "1G"
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;
use skarn_sandbox::NetPolicy;
use skarn_sandbox::policy::split_list;

/// A size: a number of bytes or a string such as `512M`, `2G`, `64MiB`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Size {
    Bytes(u64),
    Text(String),
}

impl Size {
    /// The size in bytes.
    pub fn bytes(&self) -> Result<u64, String> {
        match self {
            Size::Bytes(b) => Ok(*b),
            Size::Text(t) => parse_size(t),
        }
    }
}

/// `512M`, `512MiB`, `64k`, `1G`, or a bare number of bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let lower = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower)
        .to_owned();
    let (num, mult): (&str, u64) = match lower.chars().last() {
        Some('k') => (&lower[..lower.len() - 1], 1 << 10),
        Some('m') => (&lower[..lower.len() - 1], 1 << 20),
        Some('g') => (&lower[..lower.len() - 1], 1 << 30),
        _ => (&lower[..], 1),
    };
    let v: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("invalid size {t:?} (try 512M, 64K, 2G)"))?;
    v.checked_mul(mult)
        .filter(|b| *b <= 1 << 40)
        .ok_or_else(|| format!("size {t:?} out of range"))
}

/// The table as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSandbox {
    enabled: Option<bool>,
    #[serde(default)]
    read: Vec<String>,
    #[serde(default)]
    write: Vec<String>,
    #[serde(default)]
    exec: Vec<String>,
    net: Option<String>,
    #[serde(default)]
    deny_hosts: Vec<String>,
    memory: Option<Size>,
    max_procs: Option<u64>,
    max_file_size: Option<Size>,
}

/// The validated sandbox settings of one stdio server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxConfig {
    /// `Some(true)`: required (the server fails when the OS sandbox cannot
    /// confine it); `Some(false)`: off; `None` (default): on wherever the
    /// OS sandbox works, else off with the reason in the server's state.
    pub enabled: Option<bool>,
    /// Grants, absolute once the file is loaded (relative to the file's
    /// directory, `~/` to the home directory).
    pub read: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
    pub exec: Vec<PathBuf>,
    /// Network policy (default deny); `allow:` lists may hold `registries`,
    /// expanded at start.
    pub net: NetPolicy,
    /// Hosts never reached through the proxy.
    pub deny_hosts: Vec<String>,
    /// Per-process data limit, MiB (None: the sandbox default).
    pub memory_mb: Option<u64>,
    pub max_procs: Option<u64>,
    pub max_file_size_mb: Option<u64>,
    /// Where the table is (`file:line`), for provenance and hints.
    pub at: String,
    /// Set for a server of a file the user has not trusted (never from
    /// the file): the file's directory. Argument files and installation
    /// directories outside it are not granted unless they are a real
    /// interpreter installation (attack atk25d F7, F8).
    pub project_only: Option<PathBuf>,
}

impl SandboxConfig {
    /// The `net = "..."` value that allows what it allows now plus `host`.
    pub fn net_line_allowing(&self, host: &str) -> String {
        let mut list: Vec<String> = match &self.net {
            NetPolicy::AllowHosts(l) => l.allow.clone(),
            _ => Vec::new(),
        };
        if !list.iter().any(|h| h == host) {
            list.push(host.to_owned());
        }
        format!("net = \"allow:{}\"", list.join(","))
    }

    /// Make grants absolute: relative to `base`, `~/` to `home`.
    pub fn resolve_paths(&mut self, base: &Path, home: Option<&Path>) {
        for list in [&mut self.read, &mut self.write, &mut self.exec] {
            for p in list.iter_mut() {
                if !p.is_absolute() {
                    *p = skarn_sandbox::policy::config::expand_path(
                        &p.to_string_lossy(),
                        base,
                        home,
                    );
                }
            }
        }
    }
}

const NET_HELP: &str = "deny, allow:HOST[,HOST...], outbound or all";

fn mib(s: &Option<Size>, what: &str) -> Result<Option<u64>, String> {
    match s {
        None => Ok(None),
        Some(s) => {
            let b = s.bytes().map_err(|e| format!("sandbox.{what}: {e}"))?;
            if b == 0 {
                return Ok(None);
            }
            Ok(Some(b.div_ceil(1 << 20)))
        }
    }
}

/// Validate the table; `at` is its `file:line`. Errors are messages for
/// the caller to locate.
pub(crate) fn validate(raw: RawSandbox, at: String) -> Result<SandboxConfig, String> {
    let net = match raw.net.as_deref().map(str::trim) {
        None => NetPolicy::DenyAll,
        Some(n) => {
            let net = NetPolicy::parse(n)
                .ok_or_else(|| format!("sandbox.net must be {NET_HELP}, not {n:?}"))?;
            if let NetPolicy::AllowHosts(l) = &net {
                if l.allow.is_empty() {
                    return Err(format!("sandbox.net {n:?}: the allow list is empty"));
                }
                check_patterns(&l.allow).map_err(|e| format!("sandbox.net: {e}"))?;
            }
            net
        }
    };
    let deny: Vec<String> = raw.deny_hosts.iter().flat_map(|d| split_list(d)).collect();
    check_patterns(&deny).map_err(|e| format!("sandbox.deny_hosts: {e}"))?;
    if !deny.is_empty() && !matches!(net, NetPolicy::AllowHosts(_)) {
        return Err("sandbox.deny_hosts needs net = \"allow:...\"".into());
    }
    for (what, list) in [
        ("read", &raw.read),
        ("write", &raw.write),
        ("exec", &raw.exec),
    ] {
        if list.iter().any(|p| p.trim().is_empty() || p.contains('\0')) {
            return Err(format!("sandbox.{what}: a path is empty or not valid"));
        }
    }
    let max_procs = match raw.max_procs {
        Some(0) | None => None,
        Some(n) => Some(n),
    };
    let paths = |v: Vec<String>| v.into_iter().map(PathBuf::from).collect();
    Ok(SandboxConfig {
        enabled: raw.enabled,
        read: paths(raw.read),
        write: paths(raw.write),
        exec: paths(raw.exec),
        net,
        deny_hosts: deny,
        memory_mb: mib(&raw.memory, "memory")?,
        max_procs,
        max_file_size_mb: mib(&raw.max_file_size, "max_file_size")?,
        at,
        project_only: None,
    })
}

fn check_patterns(list: &[String]) -> Result<(), String> {
    for p in list {
        if p != skarn_egress::registries::KEYWORD {
            skarn_egress::Pattern::parse(p).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(t: &str) -> RawSandbox {
        toml::from_str(t).unwrap()
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("lots").is_err());
        let c = validate(
            raw("memory = \"1G\"\nmax_file_size = 1048577\n"),
            "f:1".into(),
        )
        .unwrap();
        assert_eq!(c.memory_mb, Some(1024));
        assert_eq!(c.max_file_size_mb, Some(2));
    }

    #[test]
    fn net_forms_and_hint() {
        let c = validate(raw(""), "f:1".into()).unwrap();
        assert_eq!(c.net, NetPolicy::DenyAll);
        assert_eq!(c.enabled, None);
        assert_eq!(c.net_line_allowing("a.test"), "net = \"allow:a.test\"");
        let c = validate(raw("net = \"allow:registries,b.test\""), "f:1".into()).unwrap();
        assert_eq!(
            c.net_line_allowing("a.test:8443"),
            "net = \"allow:registries,b.test,a.test:8443\""
        );
        assert!(validate(raw("net = \"maybe\""), "f:1".into()).is_err());
        assert!(validate(raw("net = \"allow:\""), "f:1".into()).is_err());
        assert!(validate(raw("net = \"allow:a b\""), "f:1".into()).is_err());
        assert!(validate(raw("deny_hosts = [\"x.test\"]"), "f:1".into()).is_err());
    }
}
