//! `skarn run --secret NAME` with the credentials cargo and git keep in
//! their own files (issue 27): the user's `~/.cargo/credentials.toml` and
//! git's `http.extraHeader` hold the value; inside, the same files hold the
//! placeholder, the real tools work unchanged against HTTPS servers on
//! loopback, and the servers (checked from outside) got the value. A
//! cargo configuration with a token nobody granted is read inside without
//! it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Request, Response, TestCa, TlsServer};

const REAL: &str = "cio-REAL-token-0123456789abcdef";
const UNGRANTED: &str = "cio-UNGRANTED-token-9876543210fedcba";

/// A home whose config defines secret `tok` (its value in a file outside
/// the workspace) bound to localhost:`port`.
fn home_with_secret(t: &TempDir, port: u16) -> PathBuf {
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), format!("{REAL}\n")).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.tok]\nfile = \"{}\"\nhosts = [\"localhost:{port}\"]\nenv = \"TOKEN\"\n",
            vals.join("tok").display()
        ),
    )
    .unwrap();
    home
}

fn test_ca(t: &TempDir) -> (TestCa, PathBuf) {
    let ca = TestCa::new();
    let f = t.dir("ca").join("test-ca.pem");
    std::fs::write(&f, &ca.cert_pem).unwrap();
    (ca, f)
}

fn json(status: &str, body: String) -> Response {
    Response {
        status: status.into(),
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: body.into_bytes(),
    }
}

/// A sparse cargo registry's config and its owners API, which answers
/// only a request carrying the real token.
fn registry(port: u16) -> impl Fn(&Request) -> Response + Send + Sync + 'static {
    move |r| {
        if r.path.ends_with("/index/config.json") {
            return json(
                "200 OK",
                format!(
                    "{{\"dl\":\"https://localhost:{port}/dl\",\"api\":\"https://localhost:{port}\"}}"
                ),
            );
        }
        if r.path.starts_with("/api/v1/crates/skfix/owners") {
            if r.header("authorization") == Some(REAL) {
                return json(
                    "200 OK",
                    "{\"users\":[{\"id\":1,\"login\":\"owner-token-ok\",\"name\":null}]}".into(),
                );
            }
            return json(
                "403 Forbidden",
                "{\"errors\":[{\"detail\":\"wrong token\"}]}".into(),
            );
        }
        json("404 Not Found", "{}".into())
    }
}

/// cargo on PATH and its rustup home, when this user can run them.
fn cargo_here() -> Option<(String, PathBuf)> {
    let cargo = Command::new("sh")
        .args(["-c", "command -v cargo"])
        .output()
        .map(|o| out(&o).trim().to_string())
        .unwrap_or_default();
    let rustup = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".rustup")))?;
    if cargo.is_empty() || !host_has("cargo", "--version") || !rustup.is_dir() {
        return None;
    }
    let bin = Path::new(&cargo).parent()?.to_str()?.to_string();
    Some((bin, rustup))
}

#[test]
fn cargo_sends_the_users_registry_token_from_credentials_toml() {
    let Some((cargo_bin, rustup)) = cargo_here() else {
        skarn_test_support::skip!("cargo (and its rustup home) is not usable by this user");
    };
    let t = TempDir::new("sec-cargo");
    let (ca, ca_file) = test_ca(&t);
    // The port is known only once the server runs; the handler reads it
    // from the request's own Host instead of a captured value.
    let port_cell = std::sync::Arc::new(std::sync::OnceLock::new());
    let pc = port_cell.clone();
    let srv = TlsServer::start(&ca, &["localhost"], move |r| {
        registry(*pc.get().unwrap_or(&0))(r)
    });
    port_cell.set(srv.port).unwrap();
    let home = home_with_secret(&t, srv.port);
    let cargo_home = home.join(".cargo");
    std::fs::create_dir_all(&cargo_home).unwrap();
    std::fs::write(
        cargo_home.join("config.toml"),
        format!(
            "[registries.loc]\nindex = \"sparse+https://localhost:{}/index/\"\n",
            srv.port
        ),
    )
    .unwrap();
    std::fs::write(
        cargo_home.join("credentials.toml"),
        format!("[registries.loc]\ntoken = \"{REAL}\"\n"),
    )
    .unwrap();
    let ws = t.dir("ws");
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let mut c = run_command(
        &ws,
        &home,
        &["--secret", "tok", "--net", &net, "--exec", &cargo_bin],
        &[
            "sh",
            "-c",
            "export NO_PROXY= no_proxy=; cat ~/.cargo/credentials.toml; \
             cargo owner --list skfix --registry loc 2>&1",
        ],
    );
    c.env("SSL_CERT_FILE", &ca_file)
        .env("CARGO_HOME", &cargo_home)
        .env("RUSTUP_HOME", &rustup);
    let o: Output = c.output().unwrap();
    let stdout = out(&o);
    assert_eq!(code(&o), 0, "{stdout}{}", err(&o));
    // From outside: the server answered the real token only.
    assert!(stdout.contains("owner-token-ok"), "{stdout}");
    // Inside, the file held a placeholder in the value's place.
    assert!(stdout.contains("[registries.loc]"), "{stdout}");
    assert!(
        !stdout.contains(REAL) && !err(&o).contains(REAL),
        "{stdout}"
    );
}

/// A user's git configuration that sends the value in
/// `http.<url>.extraHeader` (as CI checkouts write it): inside, the header
/// holds the placeholder (inside basic credentials) and a `curl` with it,
/// as git would send it, reaches the server with the value.
#[test]
fn git_extra_headers_hold_the_placeholder_and_the_server_gets_the_value() {
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    if !host_has("git", "--version") || !host_has("curl", "--version") {
        skarn_test_support::skip!("git or curl is not installed");
    }
    let t = TempDir::new("sec-git-header");
    let (ca, ca_file) = test_ca(&t);
    let want = format!("basic {}", b64(&format!("x-access-token:{REAL}")));
    let creds = b64(&format!("x-access-token:{REAL}"));
    let srv = TlsServer::start(&ca, &["localhost"], move |r| {
        // The scheme's case is free (the proxy writes `Basic`).
        let ok = r
            .header("authorization")
            .and_then(|h| h.split_once(' '))
            .is_some_and(|(s, c)| s.eq_ignore_ascii_case("basic") && c == creds);
        json(
            if ok { "200 OK" } else { "401 Unauthorized" },
            format!("{{\"ok\":{ok}}}"),
        )
    });
    let home = home_with_secret(&t, srv.port);
    std::fs::write(
        home.join(".gitconfig"),
        format!(
            "[user]\n\tname = Me\n[http \"https://localhost:{}/\"]\n\textraheader = AUTHORIZATION: {want}\n",
            srv.port
        ),
    )
    .unwrap();
    let ws = t.dir("ws");
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let script = format!(
        "export NO_PROXY= no_proxy=; h=$(git config --get-urlmatch http.extraheader https://localhost:{p}/r.git); \
         echo \"header=$h\"; curl -sS -H \"$h\" https://localhost:{p}/r.git/info/refs",
        p = srv.port
    );
    let mut c = run_command(
        &ws,
        &home,
        &["--secret", "tok", "--net", &net],
        &["sh", "-c", &script],
    );
    c.env("SSL_CERT_FILE", &ca_file);
    let o = c.output().unwrap();
    let stdout = out(&o);
    assert_eq!(code(&o), 0, "{stdout}{}", err(&o));
    assert!(stdout.contains("header=AUTHORIZATION: basic "), "{stdout}");
    assert!(stdout.contains("{\"ok\":true}"), "{stdout}");
    assert!(
        !stdout.contains(REAL) && !stdout.contains(&want),
        "{stdout}"
    );
    assert!(!err(&o).contains(REAL));
}

/// A cargo configuration holding a registry token nobody granted: the
/// rust preset's grant of it is replaced by a copy without the token
/// (the rest, such as the registry's index, kept).
#[test]
fn an_ungranted_token_in_cargos_config_is_not_readable_inside() {
    let t = TempDir::new("sec-cargo-config");
    let home = t.dir("home");
    let cargo_home = home.join(".cargo");
    std::fs::create_dir_all(cargo_home.join("bin")).unwrap();
    std::fs::write(
        cargo_home.join("config.toml"),
        format!(
            "[registries.corp]\nindex = \"sparse+https://corp.test/index/\"\ntoken = \"{UNGRANTED}\"\n\n\
             [build]\njobs = 3\n"
        ),
    )
    .unwrap();
    let ws = t.dir("ws");
    let mut c = run_command(
        &ws,
        &home,
        &["--preset", "rust"],
        &[
            "sh",
            "-c",
            "cat ~/.cargo/config.toml; grep -r cio-UNG ~ 2>/dev/null; true",
        ],
    );
    c.env("CARGO_HOME", &cargo_home);
    let o = c.output().unwrap();
    let stdout = out(&o);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        stdout.contains("sparse+https://corp.test/index/"),
        "{stdout}"
    );
    assert!(stdout.contains("jobs = 3"), "{stdout}");
    assert!(!stdout.contains(UNGRANTED), "{stdout}");
    // The host's file is unchanged.
    let host = std::fs::read_to_string(cargo_home.join("config.toml")).unwrap();
    assert!(host.contains(UNGRANTED));
}

/// atk27g F5 and F11: the placeholder copies of git's settings and the
/// cleaned cargo configuration keep no credential the run was not
/// granted: not a URL password, a query secret or an `insteadOf` password
/// beside the granted value, nor a short token in a cargo alias. Checked
/// by searching the whole private home from inside.
#[test]
fn copies_of_tool_settings_keep_no_other_credential() {
    let t = TempDir::new("sec-other-creds");
    let home = home_with_secret(&t, 4443);
    std::fs::write(
        home.join(".gitconfig"),
        format!(
            "[url \"https://{REAL}:OTHERpass1@a.test/\"]\n\tinsteadOf = https://a.test/\n\
             [url \"https://me:{REAL}@b.test/?sig=OTHERsig\"]\n\tinsteadOf = https://b.test/\n\
             [url \"https://me:{REAL}@c.test/\"]\n\tinsteadOf = https://u:OTHERpw@c.test/\n\
             [http \"https://u:OTHERsub@d.test/\"]\n\textraHeader = Authorization: Bearer {REAL}\n\
             [url \"https://me:{REAL}@ok.test/\"]\n\tinsteadOf = https://ok.test/\n"
        ),
    )
    .unwrap();
    std::fs::write(
        home.join(".git-credentials"),
        format!("https://me:{REAL}@e.test/?token=OTHERquery\nhttps://me:{REAL}@f.test\n"),
    )
    .unwrap();
    let cargo_home = home.join(".cargo");
    std::fs::create_dir_all(cargo_home.join("bin")).unwrap();
    std::fs::write(
        cargo_home.join("config.toml"),
        "[alias]\npub = \"publish --token OTHERalias\"\npub2 = [\"publish\", \"--token\", \"OTHERarr\"]\n\
         b = \"build --release\"\n",
    )
    .unwrap();
    let ws = t.dir("ws");
    let mut c = run_command(
        &ws,
        &home,
        &["--secret", "tok", "--preset", "rust"],
        &[
            "sh",
            "-c",
            "cat ~/.gitconfig ~/.git-credentials ~/.cargo/config.toml 2>&1; \
             grep -r -a -l OTHER ~ 2>/dev/null; true",
        ],
    );
    c.env("CARGO_HOME", &cargo_home);
    let o = c.output().unwrap();
    let stdout = out(&o);
    assert_eq!(code(&o), 0, "{stdout}{}", err(&o));
    assert!(!stdout.contains("OTHER"), "{stdout}");
    assert!(!stdout.contains(REAL), "{stdout}");
    // What holds only the granted value is still copied.
    assert!(stdout.contains("ok.test"), "{stdout}");
    assert!(stdout.contains("f.test"), "{stdout}");
    assert!(stdout.contains("build --release"), "{stdout}");
}
