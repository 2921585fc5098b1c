//! The `registries` keyword: package-registry hosts of the active
//! toolchains, read at run time from each tool's own configuration and,
//! where nothing is configured, from what the tool itself reports as its
//! default. No registry host is written into this code: a company mirror
//! is found exactly like the default.
//!
//! Discovery runs on the host before any confinement, so it never runs,
//! imports or reads anything under the sandbox's writable roots (the
//! workspace and every write grant): see the `probe` module.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

mod cargo;
mod cargo_default;
mod go;
mod probe;
mod tools;

use probe::Probe;

/// The word that stands for the registries in an allow list.
pub const KEYWORD: &str = "registries";

/// What discovery found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Found {
    /// Host patterns (`host`, `host:port`, `[v6]:port`).
    pub patterns: Vec<String>,
    /// Where each came from, and what could not be read.
    pub notes: Vec<String>,
}

impl Found {
    fn add_url(&mut self, url: &str, from: &str) {
        match url_pattern(url) {
            // An address (or localhost) is never allowed through this
            // keyword: these files may be written by a sandboxed command
            // (a workspace .npmrc) and an address pattern would bypass the
            // special-address check (host loopback, cloud metadata). A
            // registry at an address is allowed by naming it explicitly.
            Some(p) if is_address_pattern(&p) => self.notes.push(format!(
                "ignored {p} from {from}: a registry at an address is allowed only by naming \
                 it (--net allow:{p})"
            )),
            Some(p) => {
                if !self.patterns.contains(&p) {
                    self.notes.push(format!("{p} (from {from})"));
                    self.patterns.push(p);
                }
            }
            None => self
                .notes
                .push(format!("ignored {url:?} from {from}: not a URL")),
        }
    }
}

/// Whether a pattern names an address (IPv4, `[IPv6]`) or `localhost`
/// rather than a host name.
fn is_address_pattern(p: &str) -> bool {
    if p.starts_with('[') {
        return true;
    }
    let host = p.rsplit_once(':').map_or(p, |(h, _)| h);
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<std::net::Ipv4Addr>().is_ok()
        || (!host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'.' || b == b'x'))
}

/// Registries for `tools` (`node`, `python`, `rust`, `go`) of workspace `ws`.
/// `writable` holds every other path the sandbox may write: nothing under
/// it or `ws` is run, imported or read (see the `probe` module), so a sandboxed
/// command cannot choose what a later run allows. The caller's
/// environment is used.
pub fn discover(ws: &Path, writable: &[PathBuf], tools: &[&str]) -> Found {
    discover_in(ws, writable, tools, std::env::vars_os())
}

/// [`discover`] with the environment `env` instead of the caller's.
pub fn discover_in(
    ws: &Path,
    writable: &[PathBuf],
    tools: &[&str],
    env: impl IntoIterator<Item = (OsString, OsString)>,
) -> Found {
    let mut f = Found::default();
    if tools.is_empty() {
        f.notes
            .push("no toolchain preset is active: no registry to allow".into());
        return f;
    }
    let mut roots = vec![ws.to_path_buf()];
    roots.extend(writable.iter().cloned());
    let probe = Probe::new(&roots, env, &mut f.notes);
    for t in tools {
        match *t {
            "node" => tools::npm(&probe, &mut f),
            "python" => tools::pip(&probe, &mut f),
            "rust" => cargo::cargo(ws, &probe, &mut f),
            "go" => go::go(&probe, &mut f),
            _ => {}
        }
    }
    f
}

/// The host pattern of a registry URL (`sparse+`, `registry+` and `git+`
/// prefixes allowed; user information dropped). No port: 80 and 443.
pub fn url_pattern(url: &str) -> Option<String> {
    let u = url.trim().trim_matches(['\'', '"']);
    let u = u
        .split_once('+')
        .filter(|(p, _)| !p.contains('/'))
        .map_or(u, |(_, r)| r);
    let (scheme, rest) = u.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    if authority.is_empty() {
        return None;
    }
    let (host, port) = if let Some(r) = authority.strip_prefix('[') {
        let (h, after) = r.split_once(']')?;
        (format!("[{h}]"), after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    let default = match scheme.to_ascii_lowercase().as_str() {
        "https" => 443,
        "http" => 80,
        "ssh" | "git" => return None,
        _ => return None,
    };
    let p = match port {
        Some(p) => p.parse::<u16>().ok()?,
        None => default,
    };
    let pat = if p == 80 || p == 443 {
        host
    } else {
        format!("{host}:{p}")
    };
    crate::Pattern::parse(&pat).ok().map(|_| pat)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_never_registries() {
        let mut f = Found::default();
        f.add_url("http://127.0.0.1:18081/", "ws/.npmrc");
        f.add_url("http://169.254.169.254/", "ws/.cargo/config.toml");
        f.add_url("http://[::1]:9/", "x");
        f.add_url("http://LOCALHOST./", "x");
        f.add_url("http://2130706433/", "x");
        f.add_url("https://mirror.test/simple/", "PIP_INDEX_URL");
        assert_eq!(f.patterns, ["mirror.test"]);
        assert_eq!(
            f.notes.iter().filter(|n| n.starts_with("ignored")).count(),
            5
        );
    }

    #[test]
    fn url_patterns() {
        assert_eq!(
            url_pattern("https://mirror.test/simple/").as_deref(),
            Some("mirror.test")
        );
        assert_eq!(
            url_pattern("http://127.0.0.1:8080/x").as_deref(),
            Some("127.0.0.1:8080")
        );
        assert_eq!(
            url_pattern("sparse+https://idx.test:8443/").as_deref(),
            Some("idx.test:8443")
        );
        assert_eq!(
            url_pattern("https://u:p@m.test/").as_deref(),
            Some("m.test")
        );
        assert_eq!(url_pattern("http://[::1]:9/").as_deref(), Some("[::1]:9"));
        assert_eq!(url_pattern("file:///x"), None);
        assert_eq!(url_pattern("nonsense"), None);
    }
}

#[cfg(test)]
#[cfg(unix)]
mod discovery_tests;
