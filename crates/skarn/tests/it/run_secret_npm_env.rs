//! atk27j F3: `~/.npmrc` written as npm documents it,
//! `//host/:_authToken=${NPM_TOKEN}` with the token in the environment
//! and `[secrets.npm] from_env = "NPM_TOKEN"`, `env = "NPM_TOKEN"`: npm
//! inside sends the placeholder from its variable and the registry, a
//! local HTTPS server with its own CA, gets the value. Checked from
//! outside: what the server received, the command's output.

use crate::common::*;
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Request, Response, TestCa, TlsServer};

const REAL: &str = "npm-REAL-value-K8j7H6g5F4d3S2a1";

fn registry(port: u16) -> impl Fn(&Request) -> Response + Send + Sync + 'static {
    move |r| {
        if r.header("authorization") != Some(&*format!("Bearer {REAL}")) {
            return Response {
                status: "401 Unauthorized".into(),
                headers: vec![("Content-Type".into(), "application/json".into())],
                body: b"{\"error\":\"no token\"}".to_vec(),
            };
        }
        let doc = format!(
            "{{\"name\":\"skarn-probe-pkg\",\"dist-tags\":{{\"latest\":\"1.2.3\"}},\
             \"versions\":{{\"1.2.3\":{{\"name\":\"skarn-probe-pkg\",\"version\":\"1.2.3\",\
             \"dist\":{{\"tarball\":\"https://localhost:{port}/skarn-probe-pkg/-/p-1.2.3.tgz\",\
             \"shasum\":\"0000000000000000000000000000000000000000\"}}}}}}}}"
        );
        Response {
            status: "200 OK".into(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: doc.into_bytes(),
        }
    }
}

#[test]
fn npmrc_token_as_a_variable_reference_reaches_the_registry() {
    if !host_has("npm", "--version") {
        skarn_test_support::skip!("npm is not installed");
    }
    let t = TempDir::new("sec-npm-env");
    let ca = TestCa::new();
    let ca_file = t.dir("ca").join("test-ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    // The port is known only once the server runs: the handler reads it
    // from the request's Host.
    let port = std::sync::Arc::new(std::sync::OnceLock::<u16>::new());
    let p2 = port.clone();
    let srv = TlsServer::start(&ca, &["localhost"], move |r| {
        registry(*p2.get().unwrap_or(&0))(r)
    });
    port.set(srv.port).unwrap();
    let home = t.dir("home");
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.npm]\nfrom_env = \"NPM_TOKEN\"\nhosts = [\"localhost:{}\"]\nenv = \"NPM_TOKEN\"\n",
            srv.port
        ),
    )
    .unwrap();
    std::fs::write(
        home.join(".npmrc"),
        format!(
            "registry=https://localhost:{p}/\n//localhost:{p}/:_authToken=${{NPM_TOKEN}}\n\
             //localhost:1/:_authToken=${{UNGRANTED_X}}\n",
            p = srv.port
        ),
    )
    .unwrap();
    let ws = t.dir("ws");
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let script = "export NO_PROXY= no_proxy= npm_config_noproxy=; \
                  echo \"ph=$NPM_TOKEN\"; echo '--- npmrc'; cat ~/.npmrc; echo '---'; \
                  npm view skarn-probe-pkg version --fetch-retries=0 2>&1; \
                  env | grep -a -i token";
    let o = run_command(
        &ws,
        &home,
        &["--secret", "npm", "--net", &net],
        &["sh", "-c", script],
    )
    .env("SSL_CERT_FILE", &ca_file)
    .env("NPM_TOKEN", REAL)
    .env("UNGRANTED_X", "ungranted-value-123456789")
    .output()
    .unwrap();
    let (stdout, stderr) = (out(&o), err(&o));
    // The registry got the value from npm's own configuration.
    let seen = srv.seen();
    assert!(
        seen.iter()
            .any(|r| r.header("authorization") == Some(&*format!("Bearer {REAL}"))),
        "{}\n{stdout}{stderr}",
        srv.seen_text()
    );
    assert!(
        stdout.lines().any(|l| l.trim() == "1.2.3"),
        "{stdout}{stderr}"
    );
    // Inside: the reference, the placeholder in the variable, no value;
    // the reference to an ungranted variable is not in the copy.
    let ph = stdout
        .lines()
        .find_map(|l| l.strip_prefix("ph="))
        .unwrap()
        .to_string();
    assert_eq!(ph.len(), REAL.len(), "{stdout}");
    assert_ne!(ph, REAL);
    assert!(stdout.contains("_authToken=${NPM_TOKEN}"), "{stdout}");
    assert!(!stdout.contains("UNGRANTED_X"), "{stdout}");
    assert!(
        !stdout.contains(REAL) && !stderr.contains(REAL),
        "{stdout}{stderr}"
    );
}
