//! Attack finding atk27i F5: a `~/.netrc` entry holding a granted value
//! gets a private-home copy with the placeholder, so `curl --netrc` (and
//! Python's `netrc`, which pip and requests use) still authenticate; the
//! proxy puts the real value in. Checked on what the server received and
//! on what the copy holds.

use crate::common::*;
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Response, TestCa, TlsServer};

const REAL: &str = "netrcREALvalue9876543210zyxwvuQ";

#[test]
fn curl_netrc_authenticates_with_the_placeholder_copy() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let t = TempDir::new("sec-netrc");
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
    std::fs::write(
        home.join(".netrc"),
        format!(
            "machine localhost login x password {REAL}\n\
             machine other.example login y password otherNETRCsecret42\n"
        ),
    )
    .unwrap();
    let ca_file = t.dir("ca").join("ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    let ws = t.dir("ws");
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let python = if host_has("python3", "--version") {
        "python3 -c 'import netrc; print(\"py\", netrc.netrc().authenticators(\"localhost\")[0])'"
    } else {
        "echo py x"
    };
    let script = format!(
        "export NO_PROXY= no_proxy=; cat ~/.netrc; {python}; \
         curl -sS --netrc https://localhost:{}/x",
        srv.port
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
    assert!(
        stdout.contains("machine localhost login x password "),
        "{stdout}{stderr}"
    );
    assert!(
        !stdout.contains(REAL),
        "the value is readable inside: {stdout}"
    );
    assert!(!stdout.contains("otherNETRCsecret42"), "{stdout}");
    assert!(stdout.contains("py x"), "{stdout}{stderr}");
    assert!(stdout.trim_end().ends_with("ok"), "{stdout}{stderr}");
    let seen = srv.seen();
    assert_eq!(seen.len(), 1, "{stderr}");
    use base64::Engine;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("x:{REAL}"));
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Basic {basic}"))
    );
}
