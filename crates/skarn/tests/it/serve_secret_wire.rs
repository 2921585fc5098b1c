//! Attack finding atk27j F7 and its class: every place a gateway
//! configuration names a variable of the gateway's environment that reaches
//! a server or the wire — an HTTP server's `auth = { bearer_env = X }`
//! (the gateway itself sends it), a stdio server's `env = { N = { from_env
//! = X } }`, the variables every stdio server inherits by name (`LC_*`,
//! `LANG`, ...), and the `run` tool's `skarn run` — never carries a
//! configured secret's real value, whether `X` is the secret's source
//! variable or another variable holding its value. Checked from outside:
//! on what an HTTPS listener on loopback received, on the environment each
//! server wrote down, on the `run` tool's output; the user gets one error
//! naming the variable and the secret, without the value.

use std::path::{Path, PathBuf};

use serde_json::json;
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Response, TestCa, TlsServer};

use crate::common::sibling;
use crate::serve_sandbox::Session;

/// `gh`'s value, in its source variable `GH_SRC_TOKEN`.
const GH_REAL: &str = "ghp_WIREREALsrc0123456789abcdefghij";
/// `gl`'s value, in a file (and, as `.envrc` files do, under another
/// variable name in the gateway's environment).
const GL_REAL: &str = "glpat-WIREREALcopy7Hs3Jd8Kq1Wz6";
/// A token that is no secret of skarn's (the control).
const PLAIN: &str = "plain-token-for-the-control-server";

/// A home whose config declares `gh` (from `$GH_SRC_TOKEN`) and `gl` (a
/// file), both bound to a port nothing listens on.
fn home(t: &TempDir) -> PathBuf {
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("gl"), format!("{GL_REAL}\n")).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.gh]\nfrom_env = \"GH_SRC_TOKEN\"\nhosts = [\"localhost:1\"]\n\n\
             [secrets.gl]\nfile = {:?}\nhosts = [\"localhost:1\"]\n",
            vals.join("gl").display().to_string()
        ),
    )
    .unwrap();
    home
}

/// The gateway's environment: both values under their source and other
/// names, the plain token, the test CA.
fn gateway_env(ca: Option<&Path>) -> Vec<(&'static str, PathBuf)> {
    let mut v = vec![
        ("GH_SRC_TOKEN", GH_REAL.into()),
        ("GITLAB_PAT", GL_REAL.into()),
        ("PLAIN_TOKEN", PLAIN.into()),
        ("WIRE_SETTING", "visible-setting".into()),
        ("LC_GITLAB", GL_REAL.into()),
        ("LC_GH", GH_REAL.into()),
    ];
    if let Some(ca) = ca {
        v.push(("SSL_CERT_FILE", ca.into()));
    }
    v
}

fn start(cfg: &Path, home: &Path, log: &Path, env: &[(&'static str, PathBuf)]) -> Session {
    let env: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    Session::start_logging(cfg, home, log, &env, "warn")
}

fn holds_a_value(text: &str) -> bool {
    text.contains(GH_REAL) || text.contains(GL_REAL)
}

#[test]
fn an_http_servers_bearer_env_never_sends_a_secrets_value() {
    let t = TempDir::new("serve_secret_bearer");
    let ca = TestCa::new();
    let ca_file = t.dir("ca").join("test-ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    // Not an MCP server: it records what reached it and answers "ok".
    let srv = TlsServer::start(&ca, &["localhost"], |_| Response::ok("ok\n"));
    let home = home(&t);
    let url = format!("https://localhost:{}/mcp", srv.port);
    let cfg = t.path().join("skarn.toml");
    // `src`: the secret's source variable; `copy`: another variable
    // holding a secret's value; `control`: a token of its own, which is
    // sent (the listener does see what the gateway sends).
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n\
             [servers.src]\nurl = {url:?}\nauth = {{ bearer_env = \"GH_SRC_TOKEN\" }}\nallow_private = true\n\n\
             [servers.copy]\nurl = {url:?}\nauth = {{ bearer_env = \"GITLAB_PAT\" }}\nallow_private = true\n\n\
             [servers.control]\nurl = {url:?}\nauth = {{ bearer_env = \"PLAIN_TOKEN\" }}\nallow_private = true\n"
        ),
    )
    .unwrap();
    let log = t.path().join("serve.log");
    let mut s = start(&cfg, &home, &log, &gateway_env(Some(&ca_file)));
    s.settle();
    let out = s.call(2, "search", json!({"query": "x"}));
    s.finish();
    let seen = srv.seen_text();
    assert!(
        seen.contains(&format!("Bearer {PLAIN}")),
        "the control server's token did not arrive: {seen}\n{out}"
    );
    assert!(!holds_a_value(&seen), "a secret's value was sent: {seen}");
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(!holds_a_value(&log), "a value in the log: {log}");
    assert!(!holds_a_value(&out), "a value in the answer: {out}");
    // One error a server, naming the variable and the secret.
    for (server, var, secret) in [("src", "GH_SRC_TOKEN", "gh"), ("copy", "GITLAB_PAT", "gl")] {
        let line = format!("{var} holds the value of secret {secret}");
        assert_eq!(
            out.matches(&line).count(),
            1,
            "server {server}: no single clear error ({line}) in {out}"
        );
    }
}

/// The hostile server writing its environment down, confined (with
/// `write` to `out`) or not.
fn dumping(alias: &str, dump: &Path, out: &Path, env: &str, confined: bool) -> String {
    // (The gateway may confine an unconfined server whose program lies
    // where a sandboxed command may write: the grant then still holds.)
    let mut sandbox = format!("write = [{:?}]", out.display().to_string());
    if !confined {
        sandbox.push_str("\nenabled = false");
    }
    format!(
        "[servers.{alias}]\ncommand = {h:?}\nargs = [\"--name\", \"{alias}\", \"--env-dump\", {f:?}]\n\
         env = {{ {env} }}\n[servers.{alias}.sandbox]\n{sandbox}\n\n",
        h = sibling("skarn-hostile-server").display().to_string(),
        f = dump.display().to_string(),
    )
}

#[test]
fn a_stdio_server_gets_no_secrets_value_under_any_name() {
    let t = TempDir::new("serve_secret_envs");
    let home = home(&t);
    let out = t.dir("out");
    let d = |n: &str| out.join(format!("{n}.env"));
    let mut text = "[gateway]\npassthrough = true\n\n".to_string();
    // A value under another name through from_env: refused.
    text.push_str(&dumping(
        "copy",
        &d("copy"),
        &out,
        "NODE_ENV = { from_env = \"GITLAB_PAT\" }",
        true,
    ));
    // Nothing asked for: the inherited base variables (LC_*) must not
    // carry a value, confined or not.
    text.push_str(&dumping("base", &d("base"), &out, "", true));
    text.push_str(&dumping("bare", &d("bare"), &out, "", false));
    // A plain variable still passes (the control).
    text.push_str(&dumping(
        "control",
        &d("control"),
        &out,
        "API = { from_env = \"PLAIN_TOKEN\" }",
        true,
    ));
    let cfg = t.path().join("skarn.toml");
    std::fs::write(&cfg, text).unwrap();
    let log = t.path().join("serve.log");
    let mut s = start(&cfg, &home, &log, &gateway_env(None));
    s.settle();
    let answer = s.call(2, "search", json!({"query": "x"}));
    s.finish();
    let read = |n: &str| std::fs::read_to_string(d(n)).unwrap_or_default();
    assert!(
        read("control").contains(&format!("API={PLAIN}")),
        "the control server did not start or lacks its variable: {}\n{answer}",
        read("control")
    );
    for n in ["copy", "base", "bare"] {
        let dumped = read(n);
        assert!(
            !holds_a_value(&dumped),
            "server {n} got a secret's value: {dumped}"
        );
    }
    // The inherited variables did start (only the values were kept out).
    assert!(read("base").contains("PATH="), "{}", read("base"));
    assert!(read("bare").contains("PATH="), "{}\n{answer}", read("bare"));
    assert!(
        answer.contains("GITLAB_PAT holds the value of secret gl"),
        "no clear error: {answer}"
    );
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(!holds_a_value(&log), "a value in the log: {log}");
    assert!(!holds_a_value(&answer), "a value in the answer: {answer}");
}

#[test]
fn the_run_tool_gets_no_secrets_value_under_any_name() {
    let t = TempDir::new("serve_secret_run_tool");
    let home = home(&t);
    let ws = t.dir("ws");
    let cfg = ws.join("skarn.toml");
    std::fs::write(&cfg, "[gateway]\nshell = true\n").unwrap();
    let log = t.path().join("serve.log");
    let mut s = start(&cfg, &home, &log, &gateway_env(None));
    // Only the lines that matter (a long output would be compressed,
    // hiding a line from this check).
    let out = s.call(
        2,
        "run",
        json!({"command": "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f 2>/dev/null; done \
               | grep -E 'WIRE_SETTING|GH|GITLAB|LC_|glpat|ghp_' | sort -u"}),
    );
    s.finish();
    assert!(out.starts_with("exit 0"), "{out}");
    assert!(out.contains("WIRE_SETTING=visible-setting"), "{out}");
    assert!(
        !holds_a_value(&out),
        "the run tool's command read a value: {out}"
    );
}

/// atk27k F14: a trusted server whose `env` sets `HOME` elsewhere still
/// has the user's `file` sources hidden (the secrets configuration is
/// read from the gateway's own home).
#[test]
fn a_servers_env_home_does_not_unhide_file_sources() {
    let t = TempDir::new("serve_secret_home");
    let home = home(&t);
    let elsewhere = t.dir("elsewhere");
    let vals = t.path().join("vals");
    let cfg = t.path().join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.r]\ncommand = {h:?}\nargs = [\"--name\", \"r\"]\n\
             env = {{ HOME = {e:?} }}\n[servers.r.sandbox]\nread = [{v:?}]\n",
            h = sibling("skarn-hostile-server").display().to_string(),
            e = elsewhere.display().to_string(),
            v = vals.display().to_string(),
        ),
    )
    .unwrap();
    let log = t.path().join("serve.log");
    let mut s = start(&cfg, &home, &log, &[]);
    s.settle();
    let out = s.call(
        2,
        "r__attack",
        json!({"sh": format!("cat {}/gl 2>&1; echo done", vals.display())}),
    );
    s.finish();
    assert!(out.contains("done"), "{out}");
    assert!(!holds_a_value(&out), "the server read a file source: {out}");
}
