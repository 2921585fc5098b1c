//! Attack finding atk27i F6: credentials the user's files keep encoded
//! get placeholder copies: git's credential store with a percent-encoded
//! password (`git` over HTTPS authenticates, the proxy puts the value in)
//! and npm's base64 basic auth (`_password` with `username`, `_auth`).
//! Checked on what the server received and on what the copies hold.

use crate::common::*;
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Request, Response, TestCa, TlsServer};

const REAL: &str = "p@ss/word:1234567890ABCdefXYZ";

fn challenge(r: &Request) -> Response {
    if r.header("authorization").is_some() {
        return Response::ok("ok\n");
    }
    Response {
        status: "401 Unauthorized".into(),
        headers: vec![("WWW-Authenticate".into(), "Basic realm=\"t\"".into())],
        body: b"auth\n".to_vec(),
    }
}

#[test]
fn percent_encoded_and_base64_credentials_get_placeholder_copies() {
    if !host_has("git", "--version") || !host_has("base64", "--version") {
        skarn_test_support::skip!("git or base64 is not installed");
    }
    let t = TempDir::new("sec-encoded");
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], challenge);
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("pw"), REAL).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.pw]\nfile = \"{}\"\nhosts = [\"localhost:{}\"]\nenv = \"PW\"\n",
            vals.join("pw").display(),
            srv.port
        ),
    )
    .unwrap();
    // As `git credential approve` stores it with `credential.helper = store`.
    std::fs::write(home.join(".gitconfig"), "[credential]\n\thelper = store\n").unwrap();
    std::fs::write(
        home.join(".git-credentials"),
        format!(
            "https://x:p%40ss%2fword%3a1234567890ABCdefXYZ@localhost%3a{}\n",
            srv.port
        ),
    )
    .unwrap();
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    std::fs::write(
        home.join(".npmrc"),
        format!(
            "//localhost:{p}/:_password={}\n//localhost:{p}/:username=x\n\
             registry=https://localhost:{p}/\n_auth={}\n",
            b64(REAL),
            b64(&format!("y:{REAL}")),
            p = srv.port
        ),
    )
    .unwrap();
    let ca_file = t.dir("ca").join("ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    let ws = t.dir("ws");
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let script = format!(
        "export NO_PROXY= no_proxy=; cat ~/.git-credentials ~/.npmrc; \
         grep -qx \"//localhost:{p}/:_password=$(printf %s \"$PW\" | base64 -w0)\" ~/.npmrc && echo npm-password-ok; \
         grep -qx \"_auth=$(printf 'y:%s' \"$PW\" | base64 -w0)\" ~/.npmrc && echo npm-auth-ok; \
         GIT_TERMINAL_PROMPT=0 git ls-remote https://localhost:{p}/r.git 2>&1; true",
        p = srv.port
    );
    let o = run_command(
        &ws,
        &home,
        &["--secret", "pw", "--net", &net],
        &["sh", "-c", &script],
    )
    .env("SSL_CERT_FILE", &ca_file)
    .output()
    .unwrap();
    let (stdout, stderr) = (out(&o), err(&o));
    assert!(
        !stdout.contains("p%40ss"),
        "the value is readable inside: {stdout}"
    );
    assert!(
        !stdout.contains(&b64(REAL)),
        "the value is readable inside: {stdout}"
    );
    assert!(stdout.contains("npm-password-ok"), "{stdout}{stderr}");
    assert!(stdout.contains("npm-auth-ok"), "{stdout}{stderr}");
    let basic = format!("Basic {}", b64(&format!("x:{REAL}")));
    let seen = srv.seen();
    assert!(
        seen.iter()
            .any(|r| r.header("authorization") == Some(basic.as_str())),
        "git sent no credential: {}\n{stdout}{stderr}",
        srv.seen_text()
    );
}
