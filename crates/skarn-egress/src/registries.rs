//! The `registries` keyword: package-registry hosts of the active
//! toolchains, read at run time from each tool's own configuration and,
//! where nothing is configured, from what the tool itself reports as its
//! default. No registry host is written into this code: a company mirror
//! is found exactly like the default.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

/// Registries for `tools` (`node`, `python`, `rust`) of workspace `ws`.
pub fn discover(ws: &Path, tools: &[&str]) -> Found {
    let mut f = Found::default();
    for t in tools {
        match *t {
            "node" => npm(ws, &mut f),
            "python" => pip(ws, &mut f),
            "rust" => cargo(ws, &mut f),
            _ => {}
        }
    }
    if tools.is_empty() {
        f.notes
            .push("no toolchain preset is active: no registry to allow".into());
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

/// Run a tool with a deadline; its stdout when it succeeded.
fn output(cmd: &mut Command) -> Option<String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(st)) if st.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if start.elapsed() > Duration::from_secs(10) => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let mut s = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut()?, &mut s).ok()?;
    Some(s)
}

fn npm(ws: &Path, f: &mut Found) {
    // npm reads the workspace .npmrc, the user's and the global one, and
    // the npm_config_* environment; the full list includes its default.
    // No update check: asking for the configuration must not contact it.
    let mut cmd = Command::new("npm");
    cmd.args(["config", "list", "--json"])
        .env("npm_config_update_notifier", "false")
        .current_dir(ws);
    let Some(out) = output(&mut cmd) else {
        f.notes
            .push("npm: `npm config list` failed; npm registries not added".into());
        return;
    };
    let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(&out) else {
        f.notes
            .push("npm: unreadable `npm config list --json` output".into());
        return;
    };
    for (k, v) in m {
        if (k == "registry" || k.ends_with(":registry"))
            && let Some(u) = v.as_str()
        {
            f.add_url(u, &format!("npm config {k}"));
        }
    }
}

fn pip(ws: &Path, f: &mut Found) {
    for var in ["PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"] {
        if let Ok(v) = std::env::var(var) {
            for u in v.split_whitespace() {
                f.add_url(u, var);
            }
        }
    }
    let py = ["python3", "python"]
        .into_iter()
        .find(|p| output(Command::new(p).arg("--version")).is_some());
    let Some(py) = py else {
        f.notes
            .push("pip: no python found; pip registries not added".into());
        return;
    };
    let cfg = output(
        Command::new(py)
            .args(["-m", "pip", "config", "list"])
            .current_dir(ws),
    );
    let mut configured = false;
    for line in cfg.as_deref().unwrap_or("").lines() {
        let Some((key, val)) = line.split_once('=') else {
            continue;
        };
        if key.ends_with(".index-url") || key.ends_with(".extra-index-url") {
            configured |= key.ends_with(".index-url");
            for u in val.trim_matches(['\'', '"']).split_whitespace() {
                f.add_url(u, &format!("pip config {key}"));
            }
        }
    }
    if configured || std::env::var_os("PIP_INDEX_URL").is_some() {
        return;
    }
    // pip's own default index and the host it serves files from.
    let code = "from pip._internal.models.index import PyPI as P; print(P.url); \
                print('https://' + P.file_storage_domain + '/')";
    match output(Command::new(py).args(["-c", code])) {
        Some(out) => out
            .lines()
            .for_each(|u| f.add_url(u, "pip's default index")),
        None => f
            .notes
            .push("pip: could not ask pip for its default index".into()),
    }
}

fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
}

fn cargo(ws: &Path, f: &mut Found) {
    let mut files: Vec<PathBuf> = ws
        .ancestors()
        .map(|d| d.join(".cargo/config.toml"))
        .collect();
    files.extend(ws.ancestors().map(|d| d.join(".cargo/config")));
    let home = cargo_home();
    if let Some(h) = &home {
        files.push(h.join("config.toml"));
        files.push(h.join("config"));
    }
    let mut replaced = false;
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(v) = text.parse::<toml::Table>() else {
            f.notes
                .push(format!("cargo: cannot parse {}", file.display()));
            continue;
        };
        let from = file.display().to_string();
        for (sect, key) in [("registries", "index"), ("source", "registry")] {
            if let Some(t) = v.get(sect).and_then(|s| s.as_table()) {
                for (name, entry) in t {
                    if let Some(u) = entry.get(key).and_then(|u| u.as_str()) {
                        f.add_url(u, &format!("{from} {sect}.{name}"));
                    }
                    replaced |= sect == "source"
                        && name == "crates-io"
                        && entry.get("replace-with").is_some();
                }
            }
        }
    }
    for (k, v) in std::env::vars() {
        if k.starts_with("CARGO_REGISTRIES_") && k.ends_with("_INDEX") {
            f.add_url(&v, &k);
        }
    }
    if replaced {
        return;
    }
    // The default registry: what cargo itself recorded in its cache
    // (`registry/index/<host>-<hash>`, with the download and API URLs the
    // index announces in its config.json).
    let Some(idx) = home.map(|h| h.join("registry/index")) else {
        return;
    };
    let mut any = false;
    for e in std::fs::read_dir(&idx).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some((host, _hash)) = name.rsplit_once('-') else {
            continue;
        };
        f.add_url(&format!("https://{host}/"), "cargo's registry cache");
        any = true;
        if let Ok(c) = std::fs::read_to_string(e.path().join("config.json"))
            && let Ok(serde_json::Value::Object(m)) = serde_json::from_str(&c)
        {
            for k in ["dl", "api"] {
                if let Some(u) = m.get(k).and_then(|u| u.as_str()) {
                    f.add_url(u, &format!("cargo index config.json {k}"));
                }
            }
        }
    }
    if !any {
        f.notes.push(format!(
            "cargo: no registry configured and none cached in {}; run cargo once with \
             network, or configure [registries]/[source]",
            idx.display()
        ));
    }
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

    #[test]
    fn cargo_config_in_workspace() {
        let tmp = skarn_test_support::TempDir::new("reg");
        let d = tmp.path().to_path_buf();
        std::fs::create_dir_all(d.join(".cargo")).unwrap();
        std::fs::write(
            d.join(".cargo/config.toml"),
            "[source.crates-io]\nreplace-with = \"m\"\n[source.m]\nregistry = \"sparse+http://idx.mirror.test:7777/index/\"\n",
        )
        .unwrap();
        let f = discover(&d, &["rust"]);
        assert!(
            f.patterns.contains(&"idx.mirror.test:7777".to_string()),
            "{f:?}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
