//! Attack finding atk27h F4: a sandboxed server's secret uses and
//! refusals reach the gateway's log from the proxy itself, at `info`
//! (sent) and `warn` (refused), with the server's name, the host and the
//! secret's name, never the value; what the server prints on its own
//! stderr in the proxy's words (a forged use, a forged refused host) is
//! not taken for the proxy's record. Checked on the gateway's log and on
//! what the bound host received.

use serde_json::json;
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Response, TestCa, TlsServer};

use crate::common::{host_has, sibling};
use crate::serve_sandbox::Session;

const REAL: &str = "ghp_AUDITREAL0123456789abcdefghijkl";

#[test]
fn a_servers_secret_uses_are_logged_from_the_proxy_not_its_stderr() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let dir = TempDir::new("serve_secret_audit");
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], |_| Response::ok("ok\n"));
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    let val = dir.path().join("gh-token");
    std::fs::write(&val, REAL).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.gh]\nfile = {:?}\nhosts = [\"localhost:{}\"]\nmethods = [\"GET\"]\n\
             paths = [\"/v1/*\"]\n",
            val.display().to_string(),
            srv.port
        ),
    )
    .unwrap();
    let ca_file = dir.path().join("test-ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    let cfg = dir.path().join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.g]\ncommand = {h:?}\nargs = [\"--name\", \"g\"]\n\
             env = {{ GITHUB_TOKEN = {{ secret = \"gh\" }} }}\n\
             [servers.g.sandbox]\nread = [{d:?}]\nnet = \"allow:127.0.0.1:{p}\"\n",
            h = sibling("skarn-hostile-server").display().to_string(),
            d = dir.path().display().to_string(),
            p = srv.port
        ),
    )
    .unwrap();
    let port = srv.port;
    let script = format!(
        "export NO_PROXY= no_proxy=\n\
         echo 'skarn: secret: gh sent to localhost:{port} GET /v1/forged-text' >&2\n\
         echo '{{\"kind\":\"secret\",\"name\":\"gh\",\"dest\":\"localhost:{port}\",\"method\":\"GET\",\
         \"path\":\"/v1/forged-json\",\"refused\":null}}' >&2\n\
         echo 'skarn: net: denied forged.example:443 (not in the allow list)' >&2\n\
         curl -sS -H \"Authorization: Bearer $GITHUB_TOKEN\" https://localhost:{port}/v1/real\n\
         curl -sS -X DELETE -H \"Authorization: Bearer $GITHUB_TOKEN\" \
         https://localhost:{port}/v1/refused\n"
    );
    let log = dir.path().join("serve.log");
    let mut s = Session::start_logging(&cfg, &home, &log, &[("SSL_CERT_FILE", &ca_file)], "info");
    s.settle();
    let out = s.call(2, "g__attack", json!({ "sh": script }));
    s.finish();
    // The real use happened (the bound host got the value once, for GET).
    let seen = srv.seen();
    assert_eq!(seen.len(), 1, "{out}\n{}", srv.seen_text());
    assert_eq!(seen[0].path, "/v1/real");
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {REAL}"))
    );
    let log = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let has = |level: &str, words: &[&str]| {
        lines
            .iter()
            .any(|l| l.contains(level) && words.iter().all(|w| l.contains(w)))
    };
    let dest = format!("localhost:{port}");
    assert!(
        has(
            " INFO ",
            &["server=g", "secret gh sent to", &dest, "GET /v1/real"]
        ),
        "no info record of the use:\n{log}\n{out}"
    );
    assert!(
        has(
            " WARN ",
            &[
                "server=g",
                "secret gh refused for",
                &dest,
                "DELETE /v1/refused"
            ]
        ),
        "no record of the refusal:\n{log}"
    );
    // The server's own lines are not the proxy's word.
    assert!(
        !log.contains("forged"),
        "a forged record was logged:\n{log}"
    );
    assert!(!log.contains(REAL), "the value is in the log:\n{log}");
}

/// Attack finding atk27i F8: `{ from_env = "X" }` where X is the variable
/// a configured secret is read from would hand a server the real value:
/// the server is not started, and the message names `{ secret = ... }`.
/// Checked on the environment the server would have dumped.
#[test]
fn a_server_cannot_take_a_secrets_source_variable_with_from_env() {
    let dir = TempDir::new("serve_secret_from_env");
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        "[secrets.gh]\nfrom_env = \"GH_SOURCE_TOKEN\"\nhosts = [\"localhost:1\"]\n",
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let dump = out_dir.join("env.txt");
    let cfg = dir.path().join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.g]\ncommand = {h:?}\n\
             args = [\"--name\", \"g\", \"--env-dump\", {f:?}]\n\
             env = {{ NODE_ENV = {{ from_env = \"GH_SOURCE_TOKEN\" }} }}\n\
             [servers.g.sandbox]\nwrite = [{o:?}]\n",
            h = sibling("skarn-hostile-server").display().to_string(),
            f = dump.display().to_string(),
            o = out_dir.display().to_string(),
        ),
    )
    .unwrap();
    let log = dir.path().join("serve.log");
    let value = std::path::Path::new("ghp_FROMENVREAL0123456789abcdefghij");
    let mut s = Session::start_logging(&cfg, &home, &log, &[("GH_SOURCE_TOKEN", value)], "warn");
    s.settle();
    let out = s.call(2, "g__attack", json!({}));
    s.finish();
    let dumped = std::fs::read_to_string(&dump).unwrap_or_default();
    assert!(
        !dumped.contains("ghp_FROMENVREAL"),
        "the server got the value: {dumped}"
    );
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains("secret = \\\"gh\\\"")
            || log.contains("secret = \"gh\"")
            || out.contains("secret = \\\"gh\\\""),
        "no advice:\n{log}\n{out}"
    );
}
