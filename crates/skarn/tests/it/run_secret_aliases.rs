//! Attack atk27d F1 through `skarn run --secret`: a bound host reached
//! under another address (`[::1]` for a secret bound to `localhost`,
//! which the proxy's lookup of `localhost` need not return) through the
//! HTTP proxy and through SOCKS5. The host stores the value it was sent;
//! reading it back through the other address must not bring it back raw.
//! Checked outside: on the command's output.

use std::sync::{Arc, Mutex};

use crate::common::*;
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Request, Response, TestCa, TlsServer};

const REAL: &str = "alias-REAL-value-0123456789abcdef";

fn store_handler() -> impl Fn(&Request) -> Response + Send + Sync + 'static {
    let store = Arc::new(Mutex::new(String::new()));
    move |r: &Request| {
        let body = match r.path.as_str() {
            "/store" => {
                *store.lock().unwrap() = r.header("authorization").unwrap_or("").to_string();
                "stored".to_string()
            }
            "/fetch" => format!("VAL[{}]\n", store.lock().unwrap()),
            _ => "ok".into(),
        };
        Response::ok(body)
    }
}

#[test]
fn another_address_of_a_bound_host_does_not_bring_a_stored_value_back() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let t = TempDir::new("sec-alias");
    let ca = TestCa::new();
    let ca_file = t.dir("ca").join("test-ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    let Some(srv) = TlsServer::start_dual(&ca, &["localhost", "127.0.0.1", "::1"], store_handler())
    else {
        skarn_test_support::skip!("IPv6 loopback is not available");
    };
    let p = srv.port;
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), REAL).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.tok]\nfile = \"{}\"\nhosts = [\"localhost:{p}\"]\nenv = \"TOKEN\"\n",
            vals.join("tok").display()
        ),
    )
    .unwrap();
    let ws = t.dir("ws");
    let net = format!("allow:127.0.0.1:{p},[::1]:{p}");
    let script = format!(
        "export NO_PROXY= no_proxy=; \
         curl -sS -H \"Authorization: Bearer $TOKEN\" https://localhost:{p}/store; echo; \
         echo http-proxy:; curl -sS -k https://[::1]:{p}/fetch; \
         echo socks:; curl -sS -k -x \"$ALL_PROXY\" https://[::1]:{p}/fetch; \
         echo socks-address:; curl -sS -k --socks5 \"${{ALL_PROXY#socks5h://}}\" https://[::1]:{p}/fetch; \
         true"
    );
    let o = run_command(
        &ws,
        &home,
        &["--secret", "tok", "--net", &net],
        &["sh", "-c", &script],
    )
    .env("SSL_CERT_FILE", &ca_file)
    .output()
    .unwrap();
    let (stdout, stderr) = (out(&o), err(&o));
    // The value reached the bound host (so there is something to leak).
    assert!(
        srv.seen().iter().any(|r| r.head.contains(REAL)),
        "{stdout}{stderr}"
    );
    assert!(stdout.contains("stored"), "{stdout}{stderr}");
    assert!(!stdout.contains(REAL), "the value came back: {stdout}");
    assert!(!stderr.contains(REAL), "{stderr}");
    assert!(
        stderr.contains("a host a secret is bound to is reached through the HTTP proxy only"),
        "{stderr}"
    );
}
