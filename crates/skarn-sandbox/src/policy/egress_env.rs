//! The environment that points a command's tools at the egress proxy of
//! `--net allow:...` (shared by the Linux and macOS backends).

/// The loopback names `NO_PROXY` lists (the sandbox's own loopback),
/// less those an `allow` entry names (`127.0.0.1:5432`,
/// `localhost:8080`, `[::1]:9000`): the host's loopback is reached only
/// through the proxy, so a client must not go around it for those.
fn no_proxy(allow: &[String]) -> String {
    let names = |e: &str| -> Vec<&'static str> {
        let host = e
            .strip_prefix('[')
            .and_then(|r| r.split_once(']').map(|(h, _)| h))
            .unwrap_or_else(|| e.rsplit_once(':').map_or(e, |(h, _)| h));
        match host.to_ascii_lowercase().as_str() {
            "localhost" => vec!["localhost"],
            "::1" => vec!["::1"],
            h if h.starts_with("127.") => vec!["127.0.0.1", "localhost"],
            _ => vec![],
        }
    };
    let gone: Vec<&str> = allow.iter().flat_map(|e| names(e)).collect();
    ["localhost", "127.0.0.1", "::1"]
        .into_iter()
        .filter(|n| !gone.contains(n))
        .collect::<Vec<_>>()
        .join(",")
}

/// The proxy variables for a command: generic ones in both cases, plus
/// tool-specific ones (npm, yarn, pip, cargo, git, node). `allow`: the
/// allowed destinations (loopback ones are left out of `NO_PROXY`).
pub fn proxy_env(http_port: u16, socks_port: u16, allow: &[String]) -> Vec<(String, String)> {
    let http = format!("http://127.0.0.1:{http_port}");
    let socks = format!("socks5h://127.0.0.1:{socks_port}");
    let no = no_proxy(allow);
    let mut v = Vec::new();
    for (k, val) in [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("ALL_PROXY", &socks),
        ("NO_PROXY", &no),
    ] {
        v.push((k.to_string(), val.clone()));
        v.push((k.to_ascii_lowercase(), val.clone()));
    }
    for k in [
        "npm_config_proxy",
        "npm_config_https_proxy",
        "YARN_HTTP_PROXY",
        "YARN_HTTPS_PROXY",
        "PIP_PROXY",
        "CARGO_HTTP_PROXY",
    ] {
        v.push((k.to_string(), http.clone()));
    }
    v.push(("npm_config_noproxy".into(), no));
    // node >= 24 reads HTTP(S)_PROXY for fetch/http when asked to.
    v.push(("NODE_USE_ENV_PROXY".into(), "1".into()));
    // git: http.proxy through the environment, after any entries the
    // caller already passes this way.
    let n: usize = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    v.push((format!("GIT_CONFIG_KEY_{n}"), "http.proxy".into()));
    v.push((format!("GIT_CONFIG_VALUE_{n}"), http));
    v.push(("GIT_CONFIG_COUNT".into(), (n + 1).to_string()));
    v
}

#[cfg(test)]
mod tests {
    use super::no_proxy;

    #[test]
    fn allowed_loopback_leaves_no_proxy() {
        assert_eq!(no_proxy(&[]), "localhost,127.0.0.1,::1");
        assert_eq!(no_proxy(&["example.com".into()]), "localhost,127.0.0.1,::1");
        assert_eq!(no_proxy(&["127.0.0.1:5432".into()]), "::1");
        assert_eq!(no_proxy(&["localhost:80".into()]), "127.0.0.1,::1");
        assert_eq!(no_proxy(&["[::1]:9000".into()]), "localhost,127.0.0.1");
    }
}
