//! Set-up shared by the tests of a secret bound to a loopback host
//! (s27b, f27s, f27t, fx27b, fy27b): a home whose secret is read from a
//! file outside every grant, a workspace, the path the test CA is
//! written to, and a `skarn run` allowed to reach the host, granted the
//! secret, as the caller or as uid 65534.

use std::path::PathBuf;
use std::process::Output;

use skarn_test_support::TempDir;
use skarn_test_support::tls_server::TestCa;

use crate::common::run_command;
use crate::support_secret_sources::{as_user, file_secret};

/// One test's directories.
pub struct Setup {
    pub _t: TempDir,
    /// The test's directory (given to uid 65534 for its runs).
    pub root: PathBuf,
    pub home: PathBuf,
    /// The workspace of the runs.
    pub ws: PathBuf,
    /// Where the test CA's certificate goes (see [`Setup::trust`]).
    pub ca: PathBuf,
    /// The secret's name.
    pub secret: String,
}

/// A home whose secret `secret` (holding `value`, given to runs as `env`)
/// is bound to `host`, with `extra` configuration lines after it.
pub fn setup(name: &str, secret: &str, value: &str, host: &str, env: &str, extra: &str) -> Setup {
    let t = TempDir::new(name);
    let root = t.path().to_path_buf();
    let home = t.dir("home");
    file_secret(&t, &home, secret, value, host, env, extra);
    let ws = t.dir("ws");
    let ca = t.dir("ca").join("ca.pem");
    Setup {
        _t: t,
        root,
        home,
        ws,
        ca,
        secret: secret.to_string(),
    }
}

impl Setup {
    /// Write the test CA's certificate: the runs trust it from then on.
    pub fn trust(&self, ca: &TestCa) {
        std::fs::write(&self.ca, &ca.cert_pem).unwrap();
    }
}

/// A `skarn run` of `cmd` in the workspace allowed to reach
/// `127.0.0.1:port`, granted the secret when `secret`, trusting the test
/// CA once written; as uid 65534 when `user`.
pub fn run(s: &Setup, user: bool, port: u16, secret: bool, cmd: &[&str]) -> Output {
    let net = format!("allow:127.0.0.1:{port}");
    let flags: &[&str] = if secret {
        &["--secret", &s.secret, "--net", &net]
    } else {
        &["--net", &net]
    };
    let mut c = run_command(&s.ws, &s.home, flags, cmd);
    if s.ca.exists() {
        c.env("SSL_CERT_FILE", &s.ca);
    }
    let mut c = if user { as_user(c, &s.root) } else { c };
    c.output().unwrap()
}
