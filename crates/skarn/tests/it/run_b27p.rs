//! Attack report atk27o F8, F9 (ADR 0314): the value finder as a
//! substring oracle. A piece of a granted secret's real value where only
//! the sandboxed side could have put it — a request through the proxy, a
//! workspace file at the start-up check — is refused, the refusal names
//! no file, and the secret is recorded as exposed: every later run
//! granted it refuses to start until `skarn secrets clear-exposed`.
//! Checked from outside (what the bound host received, whether the next
//! run ran), as root and as uid 65534.

use std::process::Command;

use crate::common::*;
use crate::support_secret_sources::{as_user, exposed, is_root};
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Request, Response, TestCa, TlsServer};

/// A JWT: its header and claims are public structure, its signature not.
const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.Qk3xZ9pL0vT7mWq2Rb8NcY4sHd1JfKa6UeGo5iXzEyA";
/// Another token of the same issuer: same header, same claims' start.
const OTHER_JWT: &str =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoiYW5vbiJ9.Zz9YxWvU8tS7rQ6pO5nM4lK3jI2hG1fE0dC";

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

/// A probe: 10 bytes of the signature, hex (what atk27o's oracle sent).
fn probe() -> String {
    hex(&JWT[JWT.len() - 43..JWT.len() - 33])
}

fn echo(r: &Request) -> Response {
    Response::ok(r.body.clone())
}

struct Setup {
    _t: TempDir,
    root: std::path::PathBuf,
    home: std::path::PathBuf,
    ws: std::path::PathBuf,
    ca_file: std::path::PathBuf,
}

fn setup(name: &str, port: u16, ca: &TestCa) -> Setup {
    let t = TempDir::new(name);
    let root = t.path().to_path_buf();
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), format!("{JWT}\n")).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.jwt]\nfile = \"{}\"\nhosts = [\"localhost:{port}\"]\nenv = \"JWT\"\n",
            vals.join("tok").display()
        ),
    )
    .unwrap();
    let ca_file = t.dir("ca").join("ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    let ws = t.dir("ws");
    Setup {
        _t: t,
        root,
        home,
        ws,
        ca_file,
    }
}

fn run(s: &Setup, user: bool, port: u16, script: &str) -> std::process::Output {
    let net = format!("allow:127.0.0.1:{port}");
    let mut c = run_command(
        &s.ws,
        &s.home,
        &["--secret", "jwt", "--net", &net],
        &["sh", "-c", script],
    );
    c.env("SSL_CERT_FILE", &s.ca_file);
    let mut c = if user { as_user(c, &s.root) } else { c };
    c.output().unwrap()
}

fn clear(s: &Setup, user: bool) -> std::process::Output {
    let mut c = Command::new(exe());
    c.args(["secrets", "clear-exposed", "jwt"])
        .env("HOME", &s.home)
        .env_remove("XDG_STATE_HOME");
    let mut c = if user { as_user(c, &s.root) } else { c };
    c.output().unwrap()
}

fn received(srv: &TlsServer) -> String {
    srv.seen()
        .iter()
        .map(|r| format!("{}\n{}\n", r.head, String::from_utf8_lossy(&r.body)))
        .collect()
}

fn curl_ok() -> bool {
    host_has("curl", "--version")
}

fn echo_probe(user: bool) {
    if !curl_ok() {
        skarn_test_support::skip!("curl is not installed");
    }
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], echo);
    let s = setup(if user { "b27p-f8-u" } else { "b27p-f8" }, srv.port, &ca);
    let url = format!("https://localhost:{}/", srv.port);
    // The legitimate path first: the placeholder substituted, another
    // token of the same format in a body; then the probe; then the
    // placeholder again.
    let script = format!(
        "export NO_PROXY= no_proxy=; \
         curl -sS -H \"Authorization: Bearer $JWT\" -d legit {url}; echo; \
         curl -sS -d '{OTHER_JWT}' {url}; echo; \
         curl -sS -d 'x {p} y' {url}; echo; \
         curl -sS -H \"Authorization: Bearer $JWT\" -d after {url}; echo; echo done",
        p = probe()
    );
    let o = run(&s, user, srv.port, &script);
    let (stdout, stderr) = (out(&o), err(&o));
    let got = received(&srv);
    assert!(stdout.contains("done"), "{stdout}{stderr}");
    assert!(
        got.contains(&format!("Bearer {JWT}")) && got.contains(OTHER_JWT),
        "the legitimate requests did not arrive: {got}\n{stdout}{stderr}"
    );
    assert!(
        !got.contains(&probe()),
        "the probe reached the bound host: {got}\n{stdout}{stderr}"
    );
    let bearers = got.matches(&format!("Bearer {JWT}")).count();
    assert_eq!(
        bearers, 1,
        "the secret was still substituted after the probe: {got}"
    );
    assert_eq!(exposed(&s.home, "jwt"), 1, "{stdout}{stderr}");
    // The next run granted the secret does not start.
    let o = run(&s, user, srv.port, "echo second-run-ran");
    assert!(
        !out(&o).contains("second-run-ran") && !o.status.success(),
        "a run granted the probed secret started: {}{}",
        out(&o),
        err(&o)
    );
    assert!(err(&o).contains("clear-exposed"), "{}", err(&o));
    // The user clears it: runs work again.
    let c = clear(&s, user);
    assert!(c.status.success(), "{}", err(&c));
    let o = run(
        &s,
        user,
        srv.port,
        &format!(
            "export NO_PROXY= no_proxy=; curl -sS -H \"Authorization: Bearer $JWT\" -d again {url}"
        ),
    );
    assert!(o.status.success(), "{}{}", out(&o), err(&o));
    assert_eq!(received(&srv).matches(&format!("Bearer {JWT}")).count(), 2);
}

#[test]
fn f8_a_probe_through_an_echoing_host_is_refused_and_locks_the_secret() {
    echo_probe(false);
}

#[test]
fn f8_as_an_unprivileged_user() {
    if !is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    echo_probe(true);
}

fn file_probe(user: bool) {
    let ca = TestCa::new();
    // No server is reached: the port only names the bound host.
    let s = setup(if user { "b27p-f9-u" } else { "b27p-f9" }, 9, &ca);
    // A fixture holding another JWT of the same format: not a probe.
    std::fs::write(s.ws.join("fixture.txt"), OTHER_JWT).unwrap();
    let o = run(&s, user, 9, "echo fixture-ok");
    assert!(out(&o).contains("fixture-ok"), "{}{}", out(&o), err(&o));
    // One candidate per file, as atk27o's loop writes them.
    std::fs::write(s.ws.join("c41"), probe()).unwrap();
    std::fs::write(s.ws.join("c42"), hex("Qk3xZ9pL0X")).unwrap();
    let o = run(&s, user, 9, "echo first-run-ran");
    let e = err(&o);
    assert!(!out(&o).contains("first-run-ran"), "{e}");
    // By name as a word or a path's last part (the record's hashed name
    // may hold the letters by chance).
    let names = |n: &str| {
        e.split(|c: char| c.is_whitespace() || "()',:;\"`".contains(c))
            .any(|w| w == n || w.ends_with(&format!("/{n}")))
    };
    assert!(
        !names("c41") && !names("c42"),
        "the refusal names the file holding the piece: {e}"
    );
    // The piece removed: still refused (one answer ever).
    std::fs::remove_file(s.ws.join("c41")).unwrap();
    let o = run(&s, user, 9, "echo second-run-ran");
    assert!(
        !out(&o).contains("second-run-ran"),
        "a second probing run started: {}",
        err(&o)
    );
    assert!(clear(&s, user).status.success());
    let o = run(&s, user, 9, "echo third-run-ran");
    assert!(out(&o).contains("third-run-ran"), "{}", err(&o));
}

#[test]
fn f9_the_start_up_check_answers_no_guess() {
    file_probe(false);
}

#[test]
fn f9_as_an_unprivileged_user() {
    if !is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    file_probe(true);
}
