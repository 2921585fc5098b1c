//! Attack finding atk27h F3: the roots the proxy verifies a bound host
//! against come from the user only. A caller's `SSL_CERT_FILE` naming a
//! file inside the workspace (which the command can rewrite with a CA of
//! its own) is not taken: the bound host, whose certificate only that file
//! vouches for, gets no request and no value. Checked on what the server
//! received.

use crate::common::*;
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Response, TestCa, TlsServer};

const REAL: &str = "tok-REAL-roots-0123456789abcdef";

#[test]
fn a_callers_ca_file_in_the_workspace_does_not_vouch_for_a_bound_host() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let t = TempDir::new("sec-roots");
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], |_| Response::ok("ok\n"));
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), REAL).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.tok]\nfile = \"{}\"\nhosts = [\"localhost:{}\"]\nenv = \"TOKEN\"\n",
            vals.join("tok").display(),
            srv.port
        ),
    )
    .unwrap();
    let ws = t.dir("ws");
    // The CA the command could have planted, where the caller's variable
    // points.
    std::fs::write(ws.join("devca.pem"), &ca.cert_pem).unwrap();
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let script = format!(
        "export NO_PROXY= no_proxy=; curl -sS -H \"Authorization: Bearer $TOKEN\" \
         https://localhost:{}/x; true",
        srv.port
    );
    let o = run_command(
        &ws,
        &home,
        &["--secret", "tok", "--net", &net],
        &["sh", "-c", &script],
    )
    .env("SSL_CERT_FILE", ws.join("devca.pem"))
    .output()
    .unwrap();
    let (stdout, stderr) = (out(&o), err(&o));
    assert!(
        srv.seen().is_empty(),
        "the bound host was reached: {}\n{stdout}{stderr}",
        srv.seen_text()
    );
    assert!(stderr.contains("SSL_CERT_FILE"), "no warning: {stderr}");
    // The same CA file outside the writable grants is taken (control).
    let outside = t.dir("ca").join("ca.pem");
    std::fs::write(&outside, &ca.cert_pem).unwrap();
    let o = run_command(
        &ws,
        &home,
        &["--secret", "tok", "--net", &net],
        &["sh", "-c", &script],
    )
    .env("SSL_CERT_FILE", &outside)
    .output()
    .unwrap();
    assert_eq!(out(&o).trim(), "ok", "{}", err(&o));
    let seen = srv.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {REAL}"))
    );
}

/// The lab of the atk27i tests: a bound HTTPS server whose certificate
/// only `ca` vouches for, a home with secret `tok` (file source), a
/// workspace.
struct Lab {
    t: TempDir,
    ca: TestCa,
    srv: TlsServer,
    home: std::path::PathBuf,
    ws: std::path::PathBuf,
    net: String,
    script: String,
}

fn lab(tag: &str) -> Lab {
    let t = TempDir::new(tag);
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], |_| Response::ok("ok\n"));
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), REAL).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.tok]\nfile = \"{}\"\nhosts = [\"localhost:{}\"]\nenv = \"TOKEN\"\n",
            vals.join("tok").display(),
            srv.port
        ),
    )
    .unwrap();
    let ws = t.dir("ws");
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let script = format!(
        "export NO_PROXY= no_proxy=; curl -sS -H \"Authorization: Bearer $TOKEN\" \
         https://localhost:{}/x; true",
        srv.port
    );
    Lab {
        t,
        ca,
        srv,
        home,
        ws,
        net,
        script,
    }
}

impl Lab {
    /// `skarn run` in `ws` with `SSL_CERT_FILE=ca_file` and `flags`.
    fn run(
        &self,
        ws: &std::path::Path,
        ca_file: &std::path::Path,
        flags: &[&str],
        script: &str,
    ) -> std::process::Output {
        run_command(ws, &self.home, flags, &["sh", "-c", script])
            .env("SSL_CERT_FILE", ca_file)
            .env_remove("SSL_CERT_DIR")
            .output()
            .unwrap()
    }

    fn secret_run(
        &self,
        ws: &std::path::Path,
        ca_file: &std::path::Path,
        script: &str,
    ) -> std::process::Output {
        self.run(
            ws,
            ca_file,
            &["--secret", "tok", "--net", &self.net],
            script,
        )
    }
}

/// atk27i F3: a CA the user keeps in the home (mkcert's place), which no
/// run may write, vouches for the bound host: the request and its value
/// arrive.
#[test]
fn a_callers_ca_under_the_home_vouches_for_a_bound_host() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let l = lab("sec-roots-home");
    let mk = l.home.join(".local/share/mkcert");
    std::fs::create_dir_all(&mk).unwrap();
    std::fs::write(mk.join("rootCA.pem"), &l.ca.cert_pem).unwrap();
    let o = l.secret_run(&l.ws, &mk.join("rootCA.pem"), &l.script);
    assert_eq!(out(&o).trim(), "ok", "{}", err(&o));
    let seen = l.srv.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {REAL}"))
    );
}

/// atk27i F4: the caller's CA bundle lies in another project's workspace;
/// a run there (no secret) appends a CA of its own; the next run with the
/// secret, in this project, does not trust it: the bound host gets nothing.
#[test]
fn a_ca_file_an_earlier_run_could_write_does_not_vouch_for_a_bound_host() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let l = lab("sec-roots-earlier");
    let ws_a = l.t.dir("projA");
    let bundle = ws_a.join("cacert.pem");
    std::fs::write(&bundle, "").unwrap();
    std::fs::write(ws_a.join("planted.pem"), &l.ca.cert_pem).unwrap();
    // (Started with `SSL_CERT_FILE` naming the bundle, the run could not
    // write it at all: a file a caller's variable names is read-only,
    // atk22g F1. A run started from another shell can.)
    let o = l.run(
        &ws_a,
        &ws_a.join("elsewhere.pem"),
        &[],
        "cat planted.pem >> cacert.pem && echo planted",
    );
    assert_eq!(out(&o).trim(), "planted", "{}", err(&o));
    let o = l.secret_run(&l.ws, &bundle, &l.script);
    assert!(
        l.srv.seen().is_empty(),
        "the bound host was reached: {}\n{}{}",
        l.srv.seen_text(),
        out(&o),
        err(&o)
    );
    assert!(err(&o).contains("earlier run"), "{}", err(&o));
}

/// atk27i F7: the caller's CA file lies in the workspace (a venv's certifi
/// bundle); a run replaces it by a link to the secret's source, or the
/// user's own CA variable names a file that is not a CA bundle (a key).
/// The next run granted the secret finds neither in its CA bundle, which
/// still holds the run's CA.
#[test]
fn the_sandboxs_ca_bundle_never_holds_what_a_planted_link_names() {
    let l = lab("sec-roots-link");
    let certifi = l.ws.join(".venv/certifi");
    std::fs::create_dir_all(&certifi).unwrap();
    let ca_file = certifi.join("cacert.pem");
    std::fs::write(&ca_file, &l.ca.cert_pem).unwrap();
    let tok = l.t.path().join("vals/tok");
    let plant = format!(
        "ln -sf {} {}; echo planted",
        tok.display(),
        ca_file.display()
    );
    let o = l.run(&l.ws, &ca_file, &[], &plant);
    assert_eq!(out(&o).trim(), "planted", "{}", err(&o));
    let show = "echo \"TOKEN=$TOKEN\"; cat \"$SSL_CERT_FILE\"";
    let o = l.secret_run(&l.ws, &ca_file, show);
    let stdout = out(&o);
    assert!(stdout.contains("TOKEN="), "{stdout}{}", err(&o));
    assert!(
        !stdout.contains(REAL),
        "the value is in the bundle: {stdout}"
    );
    assert!(stdout.contains("BEGIN CERTIFICATE"), "{stdout}{}", err(&o));
    // The user's own variable names a key outside every writable place:
    // read, but nothing of it copied (certificates only).
    let ssh = l.home.join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nc3NoS0VZbWF0ZXJpYWxSRUFM\n-----END OPENSSH PRIVATE KEY-----\n";
    std::fs::write(ssh.join("id_ed25519"), key).unwrap();
    let o = l.secret_run(&l.ws, &ssh.join("id_ed25519"), show);
    let stdout = out(&o);
    assert!(
        !stdout.contains("c3NoS0VZbWF0ZXJpYWxSRUFM"),
        "the key is in the bundle: {stdout}"
    );
    assert!(stdout.contains("BEGIN CERTIFICATE"), "{stdout}{}", err(&o));
    assert!(err(&o).contains("holds no certificate"), "{}", err(&o));
}
