//! `skarn exec` with no servers to bridge confines itself (the worker's
//! confinement) instead of starting a worker; checked from outside: its
//! /proc entries while it runs, and an escape self-test whose attempts
//! must all fail with nothing happening on the host.

use std::io::Read;
use std::net::TcpListener;
use std::process::{Command, Stdio};

use skarn_test_support::TempDir;

fn skarn() -> Command {
    Command::new(env!("CARGO_BIN_EXE_skarn"))
}

fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}", String::from_utf8_lossy(out));
    })
}

/// A directory under the system temp dir, removed on drop, that the
/// nobody user a root-started exec becomes can reach: only the sandbox may
/// stop what it tries.
fn open_temp_dir(tag: &str) -> TempDir {
    let t = TempDir::new(tag);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    t
}

#[test]
fn without_config_the_process_confines_itself_and_says_so() {
    let o = skarn()
        .args(["exec", "--json", "--code", "skarn.log('x'); return 1 + 1"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = json(&o.stdout);
    assert_eq!(v["value"], 2, "{v}");
    assert_eq!(v["logs"][0], "x", "{v}");
    assert_eq!(v["isolation"], "self_confined", "{v}");
    // The other modes are unchanged.
    for (mode, expect) in [("worker", "worker"), ("in_process", "in_process")] {
        let o = skarn()
            .args(["exec", "--json", "--isolation", mode, "--code", "return 1"])
            .output()
            .unwrap();
        assert_eq!(json(&o.stdout)["isolation"], expect);
    }
}

#[test]
fn output_to_a_regular_file_uses_a_worker() {
    // The confinement forbids file writes (RLIMIT_FSIZE 0): a process
    // whose output is a file cannot confine itself and still print.
    let t = open_temp_dir("file");
    let out = t.join("out.json");
    let status = skarn()
        .args(["exec", "--json", "--code", "return 3"])
        .stdout(std::fs::File::create(&out).unwrap())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let v = json(&std::fs::read(&out).unwrap());
    assert_eq!(v["value"], 3);
    assert_ne!(v["isolation"], "self_confined", "{v}");
}

fn status_field(pid: u32, field: &str) -> Option<String> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .map(|v| v.trim().to_string())
}

#[test]
fn the_running_exec_is_confined_as_seen_from_proc() {
    let mut child = skarn()
        .args(["exec", "--timeout", "60s", "--code", "while (true) {}"])
        .env("SKARN_SC_PROBE", "hunter2-in-the-environment")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until the seccomp filter is in place (the last step).
    let mut seen = false;
    for _ in 0..2000 {
        if status_field(pid, "Seccomp").as_deref() == Some("2") {
            seen = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let checks = || {
        assert!(seen, "the exec process never installed its seccomp filter");
        assert_eq!(status_field(pid, "NoNewPrivs").as_deref(), Some("1"));
        for caps in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
            assert_eq!(
                status_field(pid, caps).as_deref(),
                Some("0000000000000000"),
                "{caps}"
            );
        }
        // Two filters: the clone3 one and the allow-list, which refuses
        // every call that makes a socket. There is no network namespace
        // (ADR 0261): the escape test below shows seccomp is the layer
        // that stops every network attempt.
        assert_eq!(status_field(pid, "Seccomp_filters").as_deref(), Some("2"));
        let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
        let field = |name: &str| {
            limits
                .lines()
                .find(|l| l.starts_with(name))
                .map(|l| l.split_whitespace().nth(3).unwrap_or("").to_string())
        };
        assert_eq!(field("Max file size").as_deref(), Some("0"));
        assert_eq!(field("Max open files").as_deref(), Some("4"));
        assert_ne!(field("Max address space").as_deref(), Some("unlimited"));
        // Like a worker's, its environment is empty: the strings are wiped.
        if let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) {
            assert!(env.iter().all(|b| *b == 0), "environment left in memory");
        }
    };
    let r = std::panic::catch_unwind(checks);
    let _ = child.kill();
    let _ = child.wait();
    if let Err(p) = r {
        std::panic::resume_unwind(p);
    }
}

#[test]
fn escape_attempts_from_the_self_confined_exec_fail_and_nothing_happens_outside() {
    let t = open_temp_dir("escape");
    let secret = t.join("secret.txt");
    std::fs::write(&secret, "top secret").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
    let target = t.join("written-by-exec");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let (abstract_listener, abstract_name) =
        super::worker_confinement::abstract_listener("self-confined");
    let spec = serde_json::json!({
        "read_path": secret,
        "write_path": target,
        "connect_port": listener.local_addr().unwrap().port(),
        "spawn_program": "/bin/sh",
        "abstract_name": abstract_name,
    });
    let o = skarn()
        .args(["exec", "--code", "return 1"])
        .env("SKARN_TEST_EXEC_SELFTEST", spec.to_string())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let attempts = json(&o.stdout);
    let attempts = attempts.as_array().expect("a list of attempts");
    assert!(attempts.len() >= 10, "{attempts:?}");
    for a in attempts {
        assert_eq!(a["blocked"], true, "NOT BLOCKED: {a}");
    }
    for needle in [
        "for reading",
        "create and write",
        "TCP socket",
        "UDP socket",
        "unix socket",
        "netlink socket",
        "connect to 127.0.0.1",
        "connect to abstract unix socket",
        "fork",
        "execve",
    ] {
        assert!(
            attempts
                .iter()
                .any(|a| a["what"].as_str().unwrap_or("").contains(needle)),
            "missing attempt {needle}"
        );
    }
    // With no network namespace the seccomp allow-list is what stops
    // every network attempt: each fails at socket() with EPERM (Landlock
    // would answer a TCP connect with EACCES, a namespace with
    // ECONNREFUSED or ENETUNREACH).
    for a in attempts {
        let what = a["what"].as_str().unwrap_or("");
        if what.contains("socket") || what.contains("connect") {
            let detail = a["detail"].as_str().unwrap_or("");
            assert!(
                detail.contains("os error 1)"),
                "{what}: not stopped by seccomp's EPERM: {detail}"
            );
        }
    }
    // Checked from outside: no file, no connection, the secret unchanged.
    assert!(!target.exists(), "the exec process wrote a file");
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Ok((mut s, _)) => {
            let mut b = Vec::new();
            let _ = s.read_to_end(&mut b);
            panic!("the exec process connected to the listener");
        }
        Err(e) => panic!("accept: {e}"),
    }
    super::worker_confinement::assert_nothing_connected(&abstract_listener);
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "top secret");
}
