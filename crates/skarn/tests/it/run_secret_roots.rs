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

/// Attack finding atk27h F4, `skarn run` side: each use and each refusal
/// of a secret is on the caller's stderr at the default level (secret
/// name, host, method, path), never the value.
#[test]
fn a_runs_secret_uses_and_refusals_are_on_stderr_by_default() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let t = TempDir::new("sec-audit");
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], |_| Response::ok("ok\n"));
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), REAL).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.tok]\nfile = \"{}\"\nhosts = [\"localhost:{}\"]\nmethods = [\"GET\"]\n\
             env = \"TOKEN\"\n",
            vals.join("tok").display(),
            srv.port
        ),
    )
    .unwrap();
    let ws = t.dir("ws");
    let ca_file = t.dir("ca").join("ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let script = format!(
        "export NO_PROXY= no_proxy=; A=\"Authorization: Bearer $TOKEN\"; \
         curl -sS -H \"$A\" https://localhost:{p}/v1/used; \
         curl -sS -X DELETE -H \"$A\" https://localhost:{p}/v1/refused; true",
        p = srv.port
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
    let stderr = err(&o);
    let dest = format!("localhost:{}", srv.port);
    assert!(
        stderr.contains(&format!("skarn: secret: tok sent to {dest} GET /v1/used")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "skarn: secret: refused tok for {dest} DELETE /v1/refused"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains(REAL), "{stderr}");
    assert_eq!(srv.seen().len(), 1, "{}", srv.seen_text());
}

/// Attack finding atk27i F7: the sandbox's CA bundle is built from the
/// caller's `SSL_CERT_FILE`; an earlier run replaced that file (in its
/// workspace) by a link to the secret's `file` source. Neither the next
/// run there nor one in another project finds the value (or anything but
/// certificates) in the bundle. Checked on what the command read.
#[test]
fn a_ca_file_turned_into_a_link_does_not_carry_a_file_into_the_bundle() {
    let t = TempDir::new("sec-bundle-link");
    let ca = TestCa::new();
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), REAL).unwrap();
    std::fs::write(
        vals.join("key"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\nc3NoS0VZbWF0ZXJpYWxSRUFM\n\
         -----END OPENSSH PRIVATE KEY-----\n",
    )
    .unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.tok]\nfile = \"{}\"\nhosts = [\"localhost:1\"]\nenv = \"TOKEN\"\n",
            vals.join("tok").display()
        ),
    )
    .unwrap();
    let ws_a = t.dir("wsA");
    let ws_b = t.dir("wsB");
    let ca_file = ws_a.join("cacert.pem");
    for target in [vals.join("tok"), vals.join("key")] {
        std::fs::write(&ca_file, &ca.cert_pem).unwrap();
        // Run 1, no secret, in project A: the link.
        let plant = format!("ln -sf {} cacert.pem", target.display());
        let o = run_command(&ws_a, &home, &[], &["sh", "-c", &plant])
            .env("SSL_CERT_FILE", &ca_file)
            .output()
            .unwrap();
        assert!(
            std::fs::symlink_metadata(&ca_file).is_ok_and(|m| m.file_type().is_symlink()),
            "{}",
            err(&o)
        );
        // Run 2, granted the secret, in A and in B.
        for ws in [&ws_a, &ws_b] {
            let o = run_command(
                ws,
                &home,
                &["--secret", "tok"],
                &[
                    "sh",
                    "-c",
                    "cat \"$SSL_CERT_FILE\"; echo; echo TOKEN=$TOKEN",
                ],
            )
            .env("SSL_CERT_FILE", &ca_file)
            .output()
            .unwrap();
            let (o_, e_) = (out(&o), err(&o));
            assert!(o_.contains("TOKEN="), "{o_}{e_}");
            assert!(!o_.contains(REAL), "the value is in the bundle: {o_}");
            assert!(
                !o_.contains("PRIVATE KEY"),
                "the key is in the bundle: {o_}"
            );
        }
        std::fs::remove_file(&ca_file).unwrap();
    }
}

/// Attack findings atk27i F3 and F4: a caller's CA file under the home
/// (mkcert's place) vouches for a bound host (the command writes only a
/// private copy of the home); one in another project's workspace, where
/// an earlier run could rewrite it, does not. Checked on what the bound
/// host received.
#[test]
fn a_ca_file_in_the_home_is_taken_and_one_an_earlier_run_could_write_is_not() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let t = TempDir::new("sec-roots-home");
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
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let script = format!(
        "export NO_PROXY= no_proxy=; curl -sS -H \"Authorization: Bearer $TOKEN\" \
         https://localhost:{}/x; true",
        srv.port
    );
    let ws_b = t.dir("wsB");
    // F3: under the home.
    let in_home = home.join(".local/share/mkcert/rootCA.pem");
    std::fs::create_dir_all(in_home.parent().unwrap()).unwrap();
    std::fs::write(&in_home, &ca.cert_pem).unwrap();
    let o = run_command(
        &ws_b,
        &home,
        &["--secret", "tok", "--net", &net],
        &["sh", "-c", &script],
    )
    .env("SSL_CERT_FILE", &in_home)
    .output()
    .unwrap();
    assert_eq!(out(&o).trim(), "ok", "{}", err(&o));
    assert_eq!(srv.seen().len(), 1);
    // F4: in project A, which a run there could write.
    let ws_a = t.dir("wsA");
    let in_a = ws_a.join("cacert.pem");
    std::fs::write(&in_a, &ca.cert_pem).unwrap();
    let o = run_command(&ws_a, &home, &[], &["true"]).output().unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    let o = run_command(
        &ws_b,
        &home,
        &["--secret", "tok", "--net", &net],
        &["sh", "-c", &script],
    )
    .env("SSL_CERT_FILE", &in_a)
    .output()
    .unwrap();
    assert_eq!(
        srv.seen().len(),
        1,
        "reached: {}\n{}",
        srv.seen_text(),
        err(&o)
    );
    assert!(err(&o).contains("SSL_CERT_FILE"), "no warning: {}", err(&o));
}
