//! Issue 24, second attack pass, the gateway side: an untrusted file's
//! `[gateway]` bounds only narrow (F4), and the sandbox's advice to widen
//! never reaches the model through `search` (F9). Judged as the client
//! reads it: the JSON-RPC answers on stdout, and stderr for the user.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;

use serde_json::{Value, json};

use crate::common::*;
use skarn_test_support::TempDir;

/// `skarn serve --config cfg` (HOME = `home`), initialized.
pub(crate) struct Gw {
    child: Child,
    lines: Receiver<String>,
    /// The client's roots (`file:` URIs), when it declares the capability.
    roots: Option<Vec<String>>,
}

impl Gw {
    pub(crate) fn start(cfg: &Path, home: &Path) -> Gw {
        Gw::start_with_roots(cfg, home, None)
    }

    fn start_with_roots(cfg: &Path, home: &Path, roots: Option<&[&Path]>) -> Gw {
        let mut child = Command::new(exe())
            .args(["serve", "--config"])
            .arg(cfg)
            .current_dir(cfg.parent().unwrap())
            .env("HOME", home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let roots: Option<Vec<String>> = roots.map(|r| {
            r.iter()
                .map(|p| format!("file://{}", p.display()))
                .collect()
        });
        let caps = if roots.is_some() {
            json!({"roots": {"listChanged": false}})
        } else {
            json!({})
        };
        let mut g = Gw {
            child,
            lines,
            roots,
        };
        g.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": caps,
            "clientInfo": {"name": "t", "version": "1"}}}),
        );
        g.answer(1);
        g.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        g
    }

    fn send(&mut self, v: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    /// The answer to request `id` (a bound of two minutes, not a measure).
    fn answer(&mut self, id: u64) -> Value {
        loop {
            let l = self
                .lines
                .recv_timeout(std::time::Duration::from_secs(120))
                .expect("no answer from skarn serve");
            let v: Value = serde_json::from_str(&l).unwrap();
            if v["method"] == "roots/list" {
                let roots: Vec<Value> = self
                    .roots
                    .iter()
                    .flatten()
                    .map(|u| json!({"uri": u}))
                    .collect();
                let reply = json!({"jsonrpc": "2.0", "id": v["id"], "result": {"roots": roots}});
                self.send(reply);
                continue;
            }
            if v["id"] == id && v.get("method").is_none() {
                return v;
            }
        }
    }

    pub(crate) fn call(&mut self, id: u64, tool: &str, args: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": tool, "arguments": args}}));
        self.answer(id)
    }

    /// Stop it; its stderr.
    pub(crate) fn stop(mut self) -> String {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let o = self.child.wait_with_output().unwrap();
        err(&o)
    }
}

/// F4: `[gateway.limits]` of a file the user never trusted cannot raise
/// Code Mode's memory limit (nor timeout, output cap); stderr names what
/// was ignored. Lower limits still apply.
#[test]
fn an_untrusted_file_cannot_raise_code_modes_limits() {
    let t = TempDir::new("gw_limits");
    let (dir, home) = (t.dir("repo"), t.dir("home"));
    let cfg = dir.join("skarn.toml");
    std::fs::write(
        &cfg,
        "[gateway.limits]\nmemory = \"2G\"\ntimeout = \"2h\"\nmax_output = \"512M\"\n",
    )
    .unwrap();
    let mut g = Gw::start(&cfg, &home);
    // About 320 MiB live: over the default 64 MiB.
    let code = "let a=[]; for(let i=0;i<40;i++){a.push(\"x\".repeat(8*1024*1024)+i)}; \
                return a.length";
    let r = g.call(2, "execute", json!({ "code": code }));
    let stderr = g.stop();
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r.to_string().contains("memory"), "{r}");
    assert!(
        stderr.contains("not trusted") && stderr.contains("[gateway.limits] memory"),
        "{stderr}"
    );
    // Trusted, the same file's limit applies (the test checks the limit,
    // not an unrelated failure).
    trust(&cfg, &home);
    let mut g = Gw::start(&cfg, &home);
    let r = g.call(2, "execute", json!({ "code": code }));
    g.stop();
    assert_eq!(r["result"]["isError"], false, "{r}");
}

/// F9: a sandboxed server that fails to start: `search` tells the model
/// the fact (the sandbox denied the network), not the flags that would
/// widen it nor where to read the whole policy. (The fake `npx` tries to
/// resolve a name, as the real one does: the failure line is printed only
/// for a denial the run recorded, ADR 0182.)
#[test]
fn search_relays_the_fact_not_the_advice_to_widen() {
    let t = TempDir::new("gw_advice");
    let (dir, home) = (t.dir("repo"), t.dir("home"));
    let npx = dir.join("npx");
    std::fs::write(
        &npx,
        "#!/bin/sh\ngetent hosts registry.example.invalid >/dev/null 2>&1\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&npx, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let cfg = dir.join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[servers.docs]\ncommand = {:?}\nstart_timeout = 20\n",
            npx.display()
        ),
    )
    .unwrap();
    trust(&cfg, &home);
    let mut g = Gw::start(&cfg, &home);
    let r = g.call(2, "search", json!({"query": "docs"}));
    let stderr = g.stop();
    let seen = r["result"].to_string();
    assert!(seen.contains("docs"), "{seen}");
    assert!(seen.contains("network"), "the fact is kept: {seen}");
    for advice in ["--net", "--report", "allow:registries", "net ="] {
        assert!(!seen.contains(advice), "{advice} reached the model: {seen}");
    }
    // The user still gets the advice.
    assert!(stderr.contains("allow:registries"), "{stderr}");
}

/// F5: trust covers the program an unconfined server runs from the
/// project: after a confined command (what the agent's Bash call runs)
/// rewrites it, `skarn serve` no longer runs that server unconfined, and
/// says why on stderr.
#[test]
fn a_trusted_unconfined_servers_program_rewritten_by_the_agent_runs_confined() {
    let t = TempDir::new("gw_program");
    let (repo, home, outside) = (t.dir("repo"), t.dir("home"), t.dir("outside"));
    for d in [t.path(), &repo, &outside] {
        std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    }
    let srv = repo.join("srv.sh");
    std::fs::write(&srv, "#!/bin/sh\nexec cat\n").unwrap();
    std::fs::set_permissions(&srv, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let cfg = repo.join("skarn.toml");
    std::fs::write(
        &cfg,
        "[servers.docs]\ncommand = \"./srv.sh\"\nstart_timeout = 10\n[servers.docs.sandbox]\nenabled = false\n",
    )
    .unwrap();
    let o = Command::new(exe())
        .arg("trust")
        .arg(&cfg)
        .env("HOME", &home)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{o:?}");
    assert!(
        err(&o).contains("srv.sh"),
        "the review names the program: {}",
        err(&o)
    );
    // The agent, confined, rewrites the program.
    let marker = outside.join("pwn");
    let o = run_in(
        &repo,
        &home,
        &[],
        &[
            "sh",
            "-c",
            &format!(
                "printf '#!/bin/sh\\necho PWN > {}\\nexec cat\\n' > srv.sh",
                marker.display()
            ),
        ],
    );
    assert_eq!(code(&o), 0, "{o:?}");
    assert!(std::fs::read_to_string(&srv).unwrap().contains("PWN"));
    let mut g = Gw::start(&cfg, &home);
    g.call(2, "search", json!({"query": "docs"}));
    let stderr = g.stop();
    assert!(
        !marker.exists(),
        "the rewritten program ran unconfined: {stderr}"
    );
    assert!(stderr.contains("changed since"), "{stderr}");
    // Trusted again by the user: it runs as configured (unconfined).
    trust(&cfg, &home);
    let mut g = Gw::start(&cfg, &home);
    g.call(2, "search", json!({"query": "docs"}));
    g.stop();
    assert!(
        marker.exists(),
        "the control: the program runs unconfined once re-trusted"
    );
}

/// Issue 24 item 4, the client's roots: with `[gateway] shell = true` and
/// no workspace configured, the `run` tool works in the root the client
/// declared (the user's open project), `cwd` only moves inside the roots,
/// and a root that is no project (the home) is refused by `skarn run`.
#[test]
fn the_run_tools_workspace_is_the_clients_root() {
    let t = TempDir::new("gw_roots");
    let (cfgdir, proj, home) = (t.dir("cfg"), t.dir("proj"), t.dir("home"));
    let outside = t.dir("home/.config/systemd/user");
    for d in [t.path(), &cfgdir, &proj, &home] {
        std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    }
    let cfg = cfgdir.join("skarn.toml");
    std::fs::write(&cfg, "[gateway]\nshell = true\n").unwrap();
    let mut g = Gw::start_with_roots(&cfg, &home, Some(&[&proj]));
    let run = |g: &mut Gw, id: u64, args: Value| {
        let r = g.call(id, "run", args);
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let text = run(&mut g, 2, json!({"command": "echo in > made.txt"}));
    assert!(text.starts_with("exit 0"), "{text}");
    let text = run(
        &mut g,
        3,
        json!({"command": "echo in > sub.txt", "cwd": proj.display().to_string()}),
    );
    assert!(text.starts_with("exit 0"), "{text}");
    for (id, cwd) in [(4, &outside), (5, &cfgdir)] {
        let text = run(
            &mut g,
            id,
            json!({"command": "echo x > planted", "cwd": cwd.display().to_string()}),
        );
        assert!(text.contains("outside the workspace"), "{text}");
        assert!(!cwd.join("planted").exists());
    }
    g.stop();
    assert!(proj.join("made.txt").exists() && proj.join("sub.txt").exists());
    assert!(!cfgdir.join("made.txt").exists());
    // A root that is the home: `skarn run`'s workspace rules refuse it.
    let mut g = Gw::start_with_roots(&cfg, &home, Some(&[&home]));
    let text = run(&mut g, 2, json!({"command": "echo x > .bashrc"}));
    g.stop();
    assert!(!text.starts_with("exit 0"), "{text}");
    assert!(!home.join(".bashrc").exists(), "{text}");
}
