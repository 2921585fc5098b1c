//! Issue 12: every stdio downstream runs in its own sandbox. A hostile
//! downstream under the default policy tries to read a secret under HOME,
//! write outside its state directory, reach a listener on the host's
//! loopback and a host the proxy does not allow, read the gateway's
//! environment, and leave a process behind; each attempt is checked from
//! outside. Real servers (installed locally; skipped when absent) work
//! under the defaults or one documented line.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::sibling;
use skarn_test_support::TempDir;

const SKARN: &str = env!("CARGO_BIN_EXE_skarn");

pub(crate) struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Session {
    pub(crate) fn start(config: &Path, home: &Path, stderr: &Path) -> Session {
        // The test wrote the file: the user trusts it (an untrusted one's
        // servers get only the default sandbox).
        crate::common::trust(config, home);
        Session::start_as_is(config, home, stderr)
    }

    /// Trusting the file, with more variables for the gateway.
    fn start_with_env(config: &Path, home: &Path, stderr: &Path, env: &[(&str, &Path)]) -> Session {
        crate::common::trust(config, home);
        Session::spawn(config, home, stderr, env)
    }

    /// Without trusting the file first.
    fn start_as_is(config: &Path, home: &Path, stderr: &Path) -> Session {
        Session::spawn(config, home, stderr, &[])
    }

    /// Trusting the file, logging at `level` (`--log`).
    pub(crate) fn start_logging(
        config: &Path,
        home: &Path,
        stderr: &Path,
        env: &[(&str, &Path)],
        level: &str,
    ) -> Session {
        crate::common::trust(config, home);
        Session::spawn_with(config, home, stderr, env, &["--log", level])
    }

    fn spawn(config: &Path, home: &Path, stderr: &Path, env: &[(&str, &Path)]) -> Session {
        Session::spawn_with(config, home, stderr, env, &[])
    }

    fn spawn_with(
        config: &Path,
        home: &Path,
        stderr: &Path,
        env: &[(&str, &Path)],
        pre: &[&str],
    ) -> Session {
        let mut child = Command::new(SKARN)
            .args(pre)
            .args(["serve", "--config"])
            .arg(config)
            .envs(env.iter().map(|(k, v)| (*k, *v)))
            .env("HOME", home)
            .env_remove("XDG_STATE_HOME")
            .env("SKARN_TEST_GATEWAY_SECRET", "topsecret-4242")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(stderr).unwrap())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut s = Session {
            child,
            stdin,
            lines: rx,
        };
        s.send(&json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}).to_string());
        s.response(json!(1));
        s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        s
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn response(&self, id: Value) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(120))
                .expect("no answer from skarn serve");
            let m: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            if m.get("id") == Some(&id) {
                return m;
            }
        }
    }

    /// A tool call's text.
    pub(crate) fn call(&mut self, id: u64, name: &str, args: Value) -> String {
        let req = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":args}});
        self.send(&req.to_string());
        let r = self.response(json!(id));
        r.pointer("/result/content/0/text")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| r.to_string())
    }

    /// Wait until no server is starting (search says which still are).
    pub(crate) fn settle(&mut self) {
        for i in 0..600 {
            let out = self.call(1000 + i, "search", json!({"query": "x"}));
            if !out.contains("still starting") {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Close stdin and wait for the gateway to exit.
    pub(crate) fn finish(mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Pids whose command line holds `marker`.
fn with_marker(marker: &str) -> Vec<u32> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(c) = std::fs::read(format!("/proc/{pid}/cmdline"))
            && String::from_utf8_lossy(&c).split('\0').any(|a| a == marker)
        {
            v.push(pid);
        }
    }
    v
}

#[test]
fn a_hostile_server_under_the_default_policy_is_contained() {
    let dir = TempDir::new("serve_sandbox");
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id"), "FAKE-PRIVATE-KEY-77").unwrap();
    // A listener on the host's loopback, counting what reaches it.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let got = Arc::new(AtomicUsize::new(0));
    let g = got.clone();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let mut b = Vec::new();
            if let Ok(mut s) = s {
                let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
                let _ = s.read_to_end(&mut b);
            }
            g.fetch_add(1, Ordering::SeqCst);
        }
    });
    let hostile = sibling("skarn-hostile-server");
    let cfg = dir.path().join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.h]\ncommand = {h:?}\nargs = [\"--name\", \"h\"]\n\n\
             [servers.p]\ncommand = {h:?}\nargs = [\"--name\", \"p\"]\n\n[servers.p.sandbox]\n\
             net = \"allow:allowed.test\"\n",
            h = hostile.display().to_string()
        ),
    )
    .unwrap();
    let stderr = dir.path().join("stderr.log");
    let marker = format!("{}{}", 7_000_000 + std::process::id() % 1_000_000, 3);
    let outside = dir.path().join("outside-write");
    let mut s = Session::start(&cfg, &home, &stderr);
    let gw_pid = s.child.id();
    s.settle();
    let out = s.call(
        2,
        "h__attack",
        json!({
            "read": home.join(".ssh/id"),
            "write": outside,
            "connect": format!("127.0.0.1:{port}"),
            "spawn_marker": marker,
        }),
    );
    assert!(out.contains("read ") && out.contains(": failed"), "{out}");
    assert!(!out.contains("FAKE-PRIVATE-KEY"), "{out}");
    assert!(
        out.contains(&format!("connect 127.0.0.1:{port}: failed")),
        "{out}"
    );
    assert!(!out.contains("topsecret-4242"), "{out}");
    let state = state_dir(&home, "h");
    assert!(out.contains(&format!("HOME={}", state.display())), "{out}");
    // The gateway's own environment, through /proc.
    let out = s.call(
        3,
        "h__attack",
        json!({"read": format!("/proc/{gw_pid}/environ"), "write": home.join("pwned")}),
    );
    assert!(!out.contains("topsecret-4242"), "{out}");
    assert!(out.contains("write ") && out.contains(": failed"), "{out}");
    // Through the proxy: an allowed proxy, a refused host.
    let out = s.call(
        4,
        "p__attack",
        json!({"proxy_connect": "evil.test:443", "connect": format!("127.0.0.1:{port}")}),
    );
    assert!(out.contains("proxy evil.test:443: failed"), "{out}");
    assert!(
        out.contains(&format!("connect 127.0.0.1:{port}: failed")),
        "{out}"
    );
    // The refusal is in the server's state; the line that would allow it
    // goes to the user (stderr, doctor), never into text the model reads
    // (issue 24 item 5), nor the host name the server chose.
    let out = s.call(5, "search", json!({"query": "attack"}));
    assert!(out.contains("server p was denied network access"), "{out}");
    assert!(!out.contains("evil.test"), "{out}");
    assert!(!out.contains("allow:"), "{out}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&state).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    s.finish();

    // Checked from outside, after the gateway is gone.
    assert!(
        !outside.exists(),
        "a write outside the state directory landed"
    );
    assert!(!home.join("pwned").exists());
    let mut left = with_marker(&marker);
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        left = with_marker(&marker);
    }
    assert!(left.is_empty(), "processes left behind: {left:?}");
    assert_eq!(
        got.load(Ordering::SeqCst),
        0,
        "the host listener was reached"
    );
    let log = std::fs::read_to_string(&stderr).unwrap();
    assert!(
        log.contains("evil.test:443")
            && log.contains("[servers.p.sandbox]")
            && log.contains("net = \"allow:allowed.test,evil.test\""),
        "{log}"
    );
}

/// `PATH` lookup.
fn which(cmd: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(cmd))
        .find(|p| p.is_file())
}

#[test]
fn real_servers_work_under_the_defaults() {
    let dir = TempDir::new("serve_sandbox");
    let home = dir.path().join("home");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("hello.txt"), "hello from the granted root").unwrap();
    let mut body = String::from("[gateway]\npassthrough = true\n");
    let mut expect: Vec<(&str, &str, Value, &str)> = Vec::new();
    body.push_str(&format!(
        "\n[servers.example]\ncommand = {:?}\n",
        sibling("skarn-example-server").display().to_string()
    ));
    expect.push(("example", "example__add", json!({"a": 2, "b": 40}), "42"));
    // Locally installed packages only (no network in the test).
    if let Some(p) = which("mcp-server-everything") {
        body.push_str(&format!(
            "\n[servers.everything]\ncommand = {:?}\n",
            p.display().to_string()
        ));
        expect.push((
            "everything",
            "everything__echo",
            json!({"message": "hi there"}),
            "hi there",
        ));
    } else {
        skarn_test_support::skip::report_skip(
            module_path!(),
            "mcp-server-everything is not installed (its part is not checked)",
        );
    }
    if let Some(p) = which("mcp-server-memory") {
        // One documented line: its file in the server's state directory.
        body.push_str(&format!(
            "\n[servers.memory]\ncommand = {:?}\nenv = {{ MEMORY_FILE_PATH = {{ state_file = \"memory.jsonl\" }} }}\n",
            p.display().to_string()
        ));
        let e = json!({"entities": [{"name": "skarn", "entityType": "project", "observations": ["sandboxed"]}]});
        expect.push(("memory", "memory__create_entities", e, "skarn"));
        expect.push(("memory", "memory__read_graph", json!({}), "sandboxed"));
    } else {
        skarn_test_support::skip::report_skip(
            module_path!(),
            "mcp-server-memory is not installed (its part is not checked)",
        );
    }
    if let Some(p) = which("mcp-server-filesystem") {
        body.push_str(&format!(
            "\n[servers.files]\ncommand = {:?}\nargs = [{:?}]\n[servers.files.sandbox]\nwrite = [{:?}]\n",
            p.display().to_string(),
            data.display().to_string(),
            data.display().to_string()
        ));
        let f = data.join("hello.txt").display().to_string();
        expect.push((
            "files",
            "files__read_text_file",
            json!({"path": f}),
            "granted root",
        ));
    } else {
        skarn_test_support::skip::report_skip(
            module_path!(),
            "mcp-server-filesystem is not installed (its part is not checked)",
        );
    }
    // A venv with mcp-server-time (.ci/install.d/40-gateway.sh makes one).
    let venv = std::env::var_os("SKARN_TEST_PY_TIME_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/local/lib/skarn-ci/mcp-time-venv"));
    let usable = Command::new(venv.join("bin/python3"))
        .args(["-c", "import mcp_server_time"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if usable {
        let p = venv.join("bin/mcp-server-time");
        body.push_str(&format!(
            "\n[servers.time]\ncommand = {:?}\nargs = [\"--local-timezone\", \"UTC\"]\n",
            p.display().to_string()
        ));
        expect.push((
            "time",
            "time__get_current_time",
            json!({"timezone": "UTC"}),
            "UTC",
        ));
    } else {
        skarn_test_support::skip::report_skip(
            module_path!(),
            "no venv with mcp-server-time (its part is not checked)",
        );
    }
    let cfg = dir.path().join("skarn.toml");
    std::fs::write(&cfg, &body).unwrap();
    let stderr = dir.path().join("stderr.log");
    let mut s = Session::start(&cfg, &home, &stderr);
    s.settle();
    eprintln!(
        "servers tried: {:?}",
        expect.iter().map(|e| e.0).collect::<Vec<_>>()
    );
    for (i, (alias, tool, args, want)) in expect.iter().enumerate() {
        let out = s.call(10 + i as u64, tool, args.clone());
        assert!(
            out.contains(want),
            "{alias}: {out}\n{}",
            std::fs::read_to_string(&stderr).unwrap_or_default()
        );
    }
    // The sandboxed filesystem server cannot leave its root.
    if expect.iter().any(|e| e.0 == "files") {
        let out = s.call(99, "files__read_text_file", json!({"path": "/etc/passwd"}));
        assert!(!out.contains("root:"), "{out}");
    }
    s.finish();
    if expect.iter().any(|e| e.0 == "memory") {
        let f = state_dir(&home, "memory").join("memory.jsonl");
        assert!(std::fs::read_to_string(f).unwrap().contains("sandboxed"));
    }
}

/// The state directory of server `alias` under `home`
/// (`skarn-servers/<alias>-<hash>`, ADR 0070).
fn state_dir(home: &Path, alias: &str) -> PathBuf {
    let base = home.join(".local/state/skarn-servers");
    let prefix = format!("{alias}-");
    std::fs::read_dir(&base)
        .unwrap_or_else(|e| panic!("{}: {e}", base.display()))
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix(&prefix))
                .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        })
        .unwrap_or_else(|| panic!("no state directory for {alias} in {}", base.display()))
}

/// Issue 27: `env = { GITHUB_TOKEN = { secret = "gh" } }` gives the
/// sandboxed server a placeholder of the value's length (never the value,
/// which the gateway's own environment does not hold either) and the run
/// CA's files in its state directory; a server without the sandbox is
/// refused the secret.
#[test]
fn a_server_gets_a_placeholder_for_its_secret() {
    const VALUE: &str = "ghp_REALVALUE0123456789abcdefghijklmnop";
    let dir = TempDir::new("serve_secret");
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    let val = dir.path().join("gh-token");
    std::fs::write(&val, VALUE).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.gh]\nfile = {:?}\nhosts = [\"api.github.test\"]\n",
            val.display().to_string()
        ),
    )
    .unwrap();
    let hostile = sibling("skarn-hostile-server");
    let cfg = dir.path().join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.g]\ncommand = {h:?}\nargs = [\"--name\", \"g\"]\n\
             env = {{ GITHUB_TOKEN = {{ secret = \"gh\" }} }}\n[servers.g.sandbox]\nread = [{d:?}]\n\n\
             [servers.u]\ncommand = {u:?}\nargs = [\"--name\", \"u\"]\n\
             env = {{ GITHUB_TOKEN = {{ secret = \"gh\" }} }}\n[servers.u.sandbox]\nenabled = false\n",
            h = hostile.display().to_string(),
            // Unconfined only when installed where no sandbox may write
            // (ADR 0237).
            u = crate::common::installed(&hostile, &home).display().to_string(),
            d = dir.path().display().to_string()
        ),
    )
    .unwrap();
    let stderr = dir.path().join("stderr.log");
    let mut s = Session::start(&cfg, &home, &stderr);
    s.settle();
    // atk27 F9: the secret's own source file, under the server's read
    // grant, is hidden.
    let out = s.call(4, "g__attack", json!({"read": val}));
    assert!(out.contains(": failed"), "{out}");
    assert!(!out.contains(VALUE), "{out}");
    let state = state_dir(&home, "g");
    let bundle = state.join(".cache/skarn-run/ca-bundle.pem");
    let out = s.call(2, "g__attack", json!({"read": bundle}));
    assert!(!out.contains(VALUE), "{out}");
    let ph = out
        .split_whitespace()
        .find_map(|w| w.strip_prefix("GITHUB_TOKEN="))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(ph.len(), VALUE.len());
    assert!(ph.starts_with("ghp_") && ph != VALUE);
    assert!(
        out.contains(&format!("SSL_CERT_FILE={}", bundle.display())),
        "{out}"
    );
    assert!(out.contains("BEGIN CERTIFICATE"), "{out}");
    let out = s.call(3, "search", json!({"query": "attack"}));
    assert!(!out.contains("u__attack"), "{out}");
    s.finish();
    let log = std::fs::read_to_string(&stderr).unwrap();
    assert!(log.contains("needs the sandbox"), "{log}");
    assert!(!log.contains(VALUE));
}

/// Issue 27: a server granted a secret whose writable grants hold the
/// real value in a file (a project `.npmrc` under its `write` grant) is
/// not started, and the gateway's log names the file (as `skarn run`
/// refuses): the placeholder would be worth nothing beside it. Under a
/// `read` grant the file (and a toolchain's `etc/npmrc`, atk27g F1) is
/// hidden instead, and the server starts (ADR 0217).
#[test]
fn a_server_whose_grants_store_its_secrets_value_is_not_started() {
    const VALUE: &str = "ghp_REALVALUE0123456789abcdefghijklmnop";
    let dir = TempDir::new("serve_secret_stored");
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    let val = dir.path().join("gh-token");
    std::fs::write(&val, VALUE).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.gh]\nfile = {:?}\nhosts = [\"api.github.test\"]\n",
            val.display().to_string()
        ),
    )
    .unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(
        proj.join(".npmrc"),
        format!("//r.test/:_authToken={VALUE}\n"),
    )
    .unwrap();
    std::fs::write(proj.join("plain.txt"), "plain-CONTENT-77").unwrap();
    let nvm = dir.path().join("nvm");
    let npmrc = nvm.join("versions/node/v20.0.0/etc/npmrc");
    std::fs::create_dir_all(npmrc.parent().unwrap()).unwrap();
    std::fs::write(&npmrc, format!("//r.test/:_authToken={VALUE}\n")).unwrap();
    let hostile = sibling("skarn-hostile-server");
    for (grant, started) in [("read", true), ("write", false)] {
        let cfg = dir.path().join("skarn.toml");
        std::fs::write(
            &cfg,
            format!(
                "[gateway]\npassthrough = true\n\n[servers.g]\ncommand = {h:?}\nargs = [\"--name\", \"g\"]\n\
                 env = {{ GITHUB_TOKEN = {{ secret = \"gh\" }} }}\n[servers.g.sandbox]\n{grant} = [{d:?}]\n",
                h = hostile.display().to_string(),
                d = proj.display().to_string()
            ),
        )
        .unwrap();
        let stderr = dir.path().join(format!("stderr-{grant}.log"));
        let mut s = Session::start_with_env(&cfg, &home, &stderr, &[("NVM_DIR", &nvm)]);
        s.settle();
        let out = s.call(2, "search", json!({"query": "attack"}));
        assert_eq!(out.contains("g__attack"), started, "{grant}: {out}");
        if started {
            // The attack tool reads what is not hidden (the check below
            // is not empty).
            let out = s.call(9, "g__attack", json!({ "read": proj.join("plain.txt") }));
            assert!(out.contains("plain-CONTENT-77"), "{out}");
            for (i, f) in [proj.join(".npmrc"), npmrc.clone()].iter().enumerate() {
                let out = s.call(3 + i as u64, "g__attack", json!({ "read": f }));
                assert!(!out.contains(VALUE), "{} was read: {out}", f.display());
            }
        }
        s.finish();
        let log = std::fs::read_to_string(&stderr).unwrap();
        if !started {
            // Named in the exposure record, not in what the server's side
            // may see (ADR 0314).
            assert!(log.contains("recorded as exposed"), "{log}");
            let record = crate::run_secret_stored::take_exposed(&home, "gh");
            assert!(record.contains(".npmrc"), "{record}");
        }
        assert!(!log.contains(VALUE));
    }
}

/// Credential files of common tools, relative to HOME (attack F11: an
/// untrusted server read ~/.s3cfg, ~/.boto, ~/.claude.json and ~/.env).
pub const CREDENTIAL_FILES: &[&str] = &[
    ".s3cfg",
    ".boto",
    ".claude.json",
    ".env",
    ".envrc",
    ".oci/config",
    ".config/gcloud/credentials.db",
    ".netrc",
    ".pgpass",
    ".my.cnf",
    ".git-credentials",
    ".docker/config.json",
    ".terraform.d/credentials.tfrc.json",
    ".cargo/credentials.toml",
    ".pypirc",
    ".gem/credentials",
    ".config/hub",
    ".azure/accessTokens.json",
    ".vault-token",
    ".config/containers/auth.json",
    ".cache/huggingface/token",
    ".psql_history",
];

/// An untrusted skarn.toml whose server names credential files in its
/// arguments (files named there are granted read-only): the server reads
/// none of them, nor the others.
#[test]
fn an_untrusted_server_cannot_read_credential_files_named_in_its_arguments() {
    let dir = TempDir::new("serve_creds");
    let home = dir.path().join("home");
    let marker = "SKARN-CREDENTIAL-6612";
    for f in CREDENTIAL_FILES {
        let p = home.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, marker).unwrap();
    }
    let hostile = sibling("skarn-hostile-server");
    let mut args = vec!["--name".to_owned(), "h".to_owned()];
    // All of them are named: the plan then passes 128 KiB, more than one
    // environment string holds, and reaches the helper in pieces.
    for f in CREDENTIAL_FILES {
        args.push("--arg-file".to_owned());
        args.push(home.join(f).display().to_string());
    }
    let cfg = dir.path().join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.h]\ncommand = {:?}\nargs = {args:?}\n",
            hostile.display().to_string()
        ),
    )
    .unwrap();
    let stderr = dir.path().join("stderr.log");
    let mut s = Session::start_as_is(&cfg, &home, &stderr);
    s.settle();
    for (i, f) in CREDENTIAL_FILES.iter().enumerate() {
        let out = s.call(10 + i as u64, "h__attack", json!({"read": home.join(f)}));
        assert!(out.contains(": failed"), "{f}: {out}");
        assert!(!out.contains(marker), "{f} was read: {out}");
    }
    s.finish();
}

/// Attack atk25d F7, F8: an untrusted skarn.toml names a home file that
/// is on no deny-list (a browser's password store) in its server's
/// arguments, and ships a fake `pyvenv.cfg` whose `home` names the
/// directory above it and a `node_modules` link to it. None of them is
/// granted: the server cannot read the file. A file of the project named
/// in the arguments still is.
#[test]
fn an_untrusted_servers_arguments_and_project_files_grant_nothing_outside_it() {
    let dir = TempDir::new("serve_untrusted");
    let home = dir.path().join("home");
    let marker = "SKARN-LOGINS-7781";
    let logins = home.join(".mozilla/firefox/p.default/logins.json");
    std::fs::create_dir_all(logins.parent().unwrap()).unwrap();
    std::fs::write(&logins, marker).unwrap();
    std::fs::create_dir_all(home.join(".mozilla/bin")).unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(proj.join("fv")).unwrap();
    std::fs::write(
        proj.join("fv/pyvenv.cfg"),
        format!("home = {}\n", home.join(".mozilla/bin").display()),
    )
    .unwrap();
    std::fs::write(proj.join("fv/x.py"), "").unwrap();
    std::fs::create_dir_all(proj.join("nm")).unwrap();
    std::os::unix::fs::symlink(home.join(".mozilla"), proj.join("nm/node_modules")).unwrap();
    std::fs::write(proj.join("nm/a.js"), "").unwrap();
    std::fs::write(proj.join("data.txt"), "PROJECT-DATA-1").unwrap();
    let hostile = sibling("skarn-hostile-server");
    let args: Vec<String> = [
        "--name".to_string(),
        "h".into(),
        "--arg-file".into(),
        logins.display().to_string(),
        "--arg-file".into(),
        proj.join("fv/x.py").display().to_string(),
        "--arg-file".into(),
        proj.join("nm/a.js").display().to_string(),
        "--arg-file".into(),
        proj.join("data.txt").display().to_string(),
    ]
    .into();
    let cfg = proj.join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.h]\ncommand = {:?}\nargs = {args:?}\n",
            hostile.display().to_string()
        ),
    )
    .unwrap();
    let stderr = dir.path().join("stderr.log");
    let mut s = Session::start_as_is(&cfg, &home, &stderr);
    s.settle();
    let out = s.call(10, "h__attack", json!({"read": logins}));
    assert!(!out.contains(marker), "the home file was read: {out}");
    let out = s.call(11, "h__attack", json!({"read": proj.join("data.txt")}));
    assert!(out.contains("PROJECT-DATA-1"), "{out}");
    s.finish();
    let log = std::fs::read_to_string(&stderr).unwrap();
    assert!(log.contains("not granted"), "{log}");
}

/// Attack atk27 F11: a server's state directory is its HOME, writable by
/// it and kept between starts. A link it left at its run CA's name (or a
/// linked `.cache/skarn-run`) must not make the next start's set-up write
/// the CA onto a host file: the file outside keeps its content and the
/// bundle is a fresh regular file in the state directory.
#[test]
fn a_link_left_in_the_state_directory_is_not_written_through() {
    let dir = TempDir::new("serve_ca_link");
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    let val = dir.path().join("gh-token");
    std::fs::write(&val, "ghp_REALVALUE0123456789abcdefghijklmnop").unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.gh]\nfile = {:?}\nhosts = [\"api.github.test\"]\n",
            val.display().to_string()
        ),
    )
    .unwrap();
    let hostile = sibling("skarn-hostile-server");
    let cfg = dir.path().join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.g]\ncommand = {h:?}\nargs = [\"--name\", \"g\"]\n\
             env = {{ GITHUB_TOKEN = {{ secret = \"gh\" }} }}\n",
            h = hostile.display().to_string()
        ),
    )
    .unwrap();
    let stderr = dir.path().join("stderr.log");
    let mut s = Session::start(&cfg, &home, &stderr);
    s.settle();
    s.finish();
    let state = state_dir(&home, "g");
    let run_dir = state.join(".cache/skarn-run");
    // What the server could have done during that start: a link at the
    // CA's name to a file of the user's.
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "ORIGINAL").unwrap();
    let ca = run_dir.join("run-ca.pem");
    std::fs::remove_file(&ca).unwrap();
    std::os::unix::fs::symlink(&victim, &ca).unwrap();
    let mut s = Session::start(&cfg, &home, &stderr);
    s.settle();
    let out = s.call(
        2,
        "g__attack",
        json!({"read": run_dir.join("ca-bundle.pem")}),
    );
    assert!(out.contains("BEGIN CERTIFICATE"), "{out}");
    s.finish();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "ORIGINAL");
    assert!(
        std::fs::symlink_metadata(&ca)
            .unwrap()
            .file_type()
            .is_file()
    );
    // A linked directory on the way: set-up refuses it, nothing lands in
    // the directory it names.
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::remove_dir_all(&run_dir).unwrap();
    std::os::unix::fs::symlink(&outside, &run_dir).unwrap();
    let mut s = Session::start(&cfg, &home, &stderr);
    s.settle();
    let _ = s.call(2, "search", json!({"query": "attack"}));
    s.finish();
    assert!(
        std::fs::read_dir(&outside).unwrap().next().is_none(),
        "set-up wrote into the linked directory"
    );
}

/// Issue 23 item 9: a database file named in a server's arguments that
/// lies in its `write` directory stays writable once it exists (it was
/// granted read-only of its own from the second start on).
#[test]
fn an_existing_argument_file_in_a_write_grant_stays_writable() {
    let dir = TempDir::new("serve_arg_db");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let db = data.join("notes.db");
    std::fs::write(&db, "v1").unwrap();
    let hostile = sibling("skarn-hostile-server");
    let cfg = dir.path().join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.d]\ncommand = {h:?}\n\
             args = [\"--name\", \"d\", \"--arg-file\", {db:?}]\n\
             [servers.d.sandbox]\nwrite = [{data:?}]\n",
            h = hostile.display().to_string(),
            db = db.display().to_string(),
            data = data.display().to_string(),
        ),
    )
    .unwrap();
    let stderr = dir.path().join("stderr.log");
    let mut s = Session::start(&cfg, &home, &stderr);
    s.settle();
    let out = s.call(2, "d__attack", json!({"write": db}));
    assert!(out.contains(": OK"), "{out}");
    s.finish();
    assert_eq!(std::fs::read_to_string(&db).unwrap(), "pwned");
}

/// Issue 29: a sandboxed server goes through the same front door as
/// `skarn run` (`skarn_sandbox::prepare`), so its write grant is recorded
/// in the grant log: a `skarn.toml` it could plant below that grant is
/// not trusted by a later `skarn run` there. Checked from outside: the
/// file the planted configuration would have allowed is not written.
#[test]
fn a_skarn_toml_a_server_could_plant_is_not_trusted_by_a_later_run() {
    let dir = TempDir::new("serve_grant_log");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let hostile = sibling("skarn-hostile-server");
    let cfg = dir.path().join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.d]\ncommand = {h:?}\n\
             args = [\"--name\", \"d\"]\n[servers.d.sandbox]\nwrite = [{data:?}]\n",
            h = hostile.display().to_string(),
            data = data.display().to_string(),
        ),
    )
    .unwrap();
    let stderr = dir.path().join("stderr.log");
    let mut s = Session::start(&cfg, &home, &stderr);
    s.settle();
    // The server can write below its grant...
    let probe = data.join("probe");
    let out = s.call(2, "d__attack", json!({"write": probe}));
    assert!(out.contains(": OK"), "{out}");
    s.finish();
    let log = std::fs::read_to_string(home.join(".local/state/skarn/granted-dirs"))
        .expect("the server's grants are recorded");
    let real_data = std::fs::canonicalize(&data).unwrap();
    assert!(
        log.contains(&format!("write\t{}", real_data.display())),
        "{log}"
    );
    // ...so what it could have planted there (a repository of its own
    // with settings widening the sandbox) is not trusted by `skarn run`.
    let sub = data.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    assert!(
        Command::new("git")
            .args(["init", "-q"])
            .current_dir(&sub)
            .status()
            .unwrap()
            .success()
    );
    std::fs::write(
        sub.join("skarn.toml"),
        format!("[run]\nwrite = [{:?}]\n", outside.display().to_string()),
    )
    .unwrap();
    let o = Command::new(SKARN)
        .args(["run", "--", "sh", "-c"])
        .arg(format!("echo x > {}/marker", outside.display()))
        .current_dir(&sub)
        .env("HOME", &home)
        .env_remove("XDG_STATE_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!outside.join("marker").exists(), "{e}");
    assert!(e.contains("not used"), "{e}");
}

/// Issue 29: the places the host trusts that lead into a server's grants
/// (home start-up files linking there) are found for each server's own
/// grants, not once for whichever server started first. Three servers,
/// each with its own write grant holding the target of one of the home's
/// start-up files: none can rewrite it (checked from outside).
#[test]
fn each_servers_grants_get_their_own_trusted_places() {
    let dir = TempDir::new("serve_trusted_each");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let hostile = sibling("skarn-hostile-server");
    let mut cfg_text = String::from("[gateway]\npassthrough = true\n");
    let mut targets = Vec::new();
    // Each grant in a tree of its own (none below another server's grants).
    let trees: Vec<TempDir> = (0..3)
        .map(|_| TempDir::new("serve_trusted_grant"))
        .collect();
    for (tree, (alias, rc)) in
        trees
            .iter()
            .zip([("a", ".bashrc"), ("b", ".profile"), ("c", ".zshrc")])
    {
        let data = tree.path().join(format!("data-{alias}"));
        std::fs::create_dir_all(&data).unwrap();
        let target = data.join("rc");
        std::fs::write(&target, "# the user's\n").unwrap();
        std::os::unix::fs::symlink(&target, home.join(rc)).unwrap();
        targets.push((alias, target));
        cfg_text.push_str(&format!(
            "\n[servers.{alias}]\ncommand = {h:?}\nargs = [\"--name\", \"{alias}\"]\n\
             [servers.{alias}.sandbox]\nwrite = [{data:?}]\n",
            h = hostile.display().to_string(),
            data = data.display().to_string(),
        ));
    }
    let cfg = dir.path().join("skarn.toml");
    std::fs::write(&cfg, cfg_text).unwrap();
    let stderr = dir.path().join("stderr.log");
    let mut s = Session::start(&cfg, &home, &stderr);
    s.settle();
    for (i, (alias, target)) in targets.iter().enumerate() {
        let out = s.call(
            10 + i as u64,
            &format!("{alias}__attack"),
            json!({"write": target}),
        );
        assert!(out.contains(": failed"), "server {alias}: {out}");
    }
    s.finish();
    for (alias, target) in &targets {
        assert_eq!(
            std::fs::read_to_string(target).unwrap(),
            "# the user's\n",
            "server {alias} rewrote {}",
            target.display()
        );
    }
}

/// Attack findings atk27h F2 and F3: a sandboxed server's proxy verifies
/// its bound host against the gateway's own (the user's) roots: a CA the
/// server names in its `env` table is not taken (F3), and the gateway's
/// `SSL_CERT_FILE` reaches the proxy (F2). Checked on the proxy's answer
/// to the server's CONNECT to the bound host, whose certificate only the
/// test CA vouches for (the proxy verifies it before answering).
#[test]
fn a_servers_proxy_trusts_the_gateways_roots_not_the_servers() {
    use skarn_test_support::tls_server::{Response, TestCa, TlsServer};
    let dir = TempDir::new("serve_secret_roots");
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], |_| Response::ok("ok\n"));
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    let val = dir.path().join("gh-token");
    std::fs::write(&val, "ghp_REALVALUE0123456789abcdefghijklmnop").unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.gh]\nfile = {:?}\nhosts = [\"localhost:{}\"]\n",
            val.display().to_string(),
            srv.port
        ),
    )
    .unwrap();
    let ca_file = dir.path().join("test-ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    let hostile = sibling("skarn-hostile-server");
    let cfg = dir.path().join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.g]\ncommand = {h:?}\nargs = [\"--name\", \"g\"]\n\
             env = {{ GITHUB_TOKEN = {{ secret = \"gh\" }}, SSL_CERT_FILE = {c:?} }}\n\
             [servers.g.sandbox]\nread = [{d:?}]\nnet = \"allow:127.0.0.1:{p}\"\n",
            h = hostile.display().to_string(),
            c = ca_file.display().to_string(),
            d = dir.path().display().to_string(),
            p = srv.port
        ),
    )
    .unwrap();
    let target = format!("localhost:{}", srv.port);
    // F3: the server's SSL_CERT_FILE names the test CA; the gateway's
    // environment does not. The proxy must not take it.
    let stderr = dir.path().join("stderr.log");
    let mut s = Session::start(&cfg, &home, &stderr);
    s.settle();
    let out = s.call(2, "g__attack", json!({"proxy_connect": target}));
    s.finish();
    assert!(out.contains(&format!("proxy {target}: failed")), "{out}");
    // F2: the gateway's own SSL_CERT_FILE reaches its server's proxy.
    let stderr2 = dir.path().join("stderr2.log");
    let mut s = Session::start_with_env(&cfg, &home, &stderr2, &[("SSL_CERT_FILE", &ca_file)]);
    s.settle();
    let out = s.call(3, "g__attack", json!({"proxy_connect": target}));
    s.finish();
    assert!(out.contains(&format!("proxy {target}: OK")), "{out}");
}
