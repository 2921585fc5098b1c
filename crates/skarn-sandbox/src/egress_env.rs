//! The environment that points a command's tools at the egress proxy of
//! `--net allow:...` (shared by the Linux and macOS backends).

/// The proxy variables for a command: generic ones in both cases, plus
/// tool-specific ones (npm, yarn, pip, cargo, git, node).
pub fn proxy_env(http_port: u16, socks_port: u16) -> Vec<(String, String)> {
    let http = format!("http://127.0.0.1:{http_port}");
    let socks = format!("socks5h://127.0.0.1:{socks_port}");
    let no = "localhost,127.0.0.1,::1".to_string();
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
