//! The real worker (`skarn __codemode-worker`), checked from outside:
//! /proc/<pid>/status, its network namespace, and a self-test whose escape
//! attempts must all fail with nothing happening on the host.

use std::io::Read;
use std::net::TcpListener;
use std::time::Duration;

use skarn_worker::{PoolConfig, SelftestSpec, WorkerCommand, WorkerPool};

use skarn_test_support::TempDir;

fn skarn() -> WorkerCommand {
    WorkerCommand::skarn_at(env!("CARGO_BIN_EXE_skarn"))
}

fn status_field(pid: u32, field: &str) -> String {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("worker status");
    s.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in status"))
        .trim()
        .to_string()
}

#[test]
fn warm_workers_are_confined_as_seen_from_proc() {
    let mut cfg = PoolConfig::new(skarn());
    cfg.warm = 2;
    let pool = WorkerPool::new(cfg);
    assert_eq!(
        pool.wait_warm(2, Duration::from_secs(30)),
        2,
        "workers did not start: {:?}",
        pool.last_error()
    );
    let my_net = std::fs::read_link("/proc/self/ns/net").unwrap();
    for pid in pool.warm_pids() {
        assert_eq!(status_field(pid, "Seccomp"), "2", "seccomp filter mode");
        assert_eq!(status_field(pid, "Seccomp_filters"), "2");
        assert_eq!(status_field(pid, "NoNewPrivs"), "1");
        for caps in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
            assert_eq!(status_field(pid, caps), "0000000000000000", "{caps}");
        }
        assert_eq!(status_field(pid, "PPid"), std::process::id().to_string());
        let net = std::fs::read_link(format!("/proc/{pid}/ns/net")).unwrap();
        assert_ne!(net, my_net, "worker must have its own network namespace");
        // Address-space limit set, descriptors capped.
        let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
        let line = |name: &str| {
            limits
                .lines()
                .find(|l| l.starts_with(name))
                .unwrap()
                .split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        assert_ne!(line("Max address space")[3], "unlimited");
        assert_eq!(line("Max open files")[3], "4");
        assert_eq!(line("Max file size")[3], "0");
        // Only stdin, stdout, stderr are open.
        let fds: Vec<_> = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        let mut fds: Vec<u32> = fds.iter().map(|f| f.parse().unwrap()).collect();
        fds.sort();
        assert_eq!(fds, vec![0, 1, 2]);
    }
}

#[test]
fn escape_attempts_from_inside_fail_and_nothing_happens_outside() {
    let tmp = TempDir::new("worker-selftest");
    let dir = tmp.path();
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, "top secret").unwrap();
    // Readable by the nobody user a root-started worker becomes: only the
    // sandbox may stop the read.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
    let target = dir.join("written-by-worker");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (abstract_listener, abstract_name) = abstract_listener("worker");

    let spec = SelftestSpec {
        read_path: secret.to_string_lossy().into_owned(),
        write_path: target.to_string_lossy().into_owned(),
        connect_port: port,
        spawn_program: "/bin/sh".into(),
        abstract_name: Some(abstract_name),
    };
    let attempts = skarn_worker::isolation::selftest(&skarn(), spec).expect("self-test ran");
    assert!(attempts.len() >= 10, "{attempts:?}");
    for a in &attempts {
        assert!(a.blocked, "NOT BLOCKED: {} ({})", a.what, a.detail);
    }
    let names: Vec<&str> = attempts.iter().map(|a| a.what.as_str()).collect();
    for needle in [
        "for reading",
        "create and write",
        "TCP socket",
        "connect",
        "abstract unix socket",
        "fork",
        "spawn",
        "execve",
    ] {
        assert!(
            names.iter().any(|n| n.contains(needle)),
            "missing attempt {needle}"
        );
    }
    // Checked from outside: no file, no connection, we are alive.
    assert!(!target.exists(), "the worker wrote a file");
    assert_nothing_connected(&abstract_listener);
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Ok((mut s, _)) => {
            let mut b = Vec::new();
            let _ = s.read_to_end(&mut b);
            panic!("the worker connected to the listener");
        }
        Err(e) => panic!("accept: {e}"),
    }
}

#[test]
fn probe_and_doctor_summary_find_the_worker_available() {
    let a = skarn_worker::probe(&skarn());
    assert!(a.available, "{}", a.reason);
    let c = a.confinement.expect("report");
    assert!(c.namespaces.contains("net"));
    let d = skarn_worker::doctor_summary_for(&skarn());
    assert_eq!(d.auto_picks, skarn_worker::IsolationUsed::Worker);
    assert!(d.to_text().contains("auto picks worker"), "{}", d.to_text());
    assert!(!d.selftest.is_empty());
    assert!(d.selftest.iter().all(|a| a.blocked), "{}", d.to_text());
    assert_eq!(d.to_json()["auto_picks"], "worker");
}

/// Defense in depth: with seccomp left out (a debug-only switch that only
/// the self-test honours), Landlock and the empty network namespace must
/// still stop file access, network access, exec and signals on their own.
#[test]
#[cfg(debug_assertions)]
fn each_layer_below_seccomp_holds_on_its_own() {
    let tmp = TempDir::new("worker-layers");
    let dir = tmp.path();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, "top secret").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
    let target = dir.join("written");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let (abstract_listener, abstract_name) = abstract_listener("layers");
    let spec = SelftestSpec {
        read_path: secret.to_string_lossy().into_owned(),
        write_path: target.to_string_lossy().into_owned(),
        connect_port: listener.local_addr().unwrap().port(),
        spawn_program: "/bin/sh".into(),
        abstract_name: Some(abstract_name),
    };
    let mut cmd = skarn();
    cmd.args.push("--selftest-skip-seccomp".into());
    let attempts = skarn_worker::isolation::selftest(&cmd, spec).expect("self-test ran");
    let get = |needle: &str| {
        attempts
            .iter()
            .find(|a| a.what.contains(needle))
            .unwrap_or_else(|| panic!("no attempt {needle}: {attempts:?}"))
    };
    for needle in [
        "for reading",
        "create and write",
        "as a directory",
        "connect to 127",
        "connect to abstract",
        "execve",
        "signal the parent",
    ] {
        let a = get(needle);
        assert!(
            a.blocked,
            "without seccomp, {} was NOT blocked: {}",
            a.what, a.detail
        );
        assert!(
            !a.detail.contains("Operation not permitted") || needle == "signal the parent",
            "{needle} should be stopped by Landlock/netns, got {}",
            a.detail
        );
    }
    assert!(!target.exists());
    assert!(listener.accept().is_err());
    assert_nothing_connected(&abstract_listener);
    // And such a worker refuses to run a script.
    let mut cfg = PoolConfig::new(cmd);
    cfg.warm = 0;
    let pool = WorkerPool::new(cfg);
    let o = pool.execute(
        "return 1",
        std::sync::Arc::new(skarn_codemode::bridge::NoServers),
        &Default::default(),
    );
    assert!(o.result.is_err());
}

/// Bad input to the hidden entry: one clear message and a documented exit
/// code (2 usage, 4 protocol), never a panic.
#[test]
fn worker_entry_refuses_bad_input() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let bin = env!("CARGO_BIN_EXE_skarn");
    let out = Command::new(bin)
        .args(["__codemode-worker", "--memory-bytes", "lots"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("skarn: error: ") && err.contains("--memory-bytes"),
        "{err}"
    );
    for (input, needle) in [
        (&b"not json\n"[..], "malformed job"),
        (
            &b"{\"type\":\"job\",\"code\":\"1\",\"limits\":{\"bogus\":1}}\n"[..],
            "bogus",
        ),
        (
            &b"{\"type\":\"reply\",\"id\":1,\"result\":{\"Ok\":1}}\n"[..],
            "expected a job",
        ),
        (&b""[..], "no job"),
    ] {
        let mut child = Command::new(bin)
            .arg("__codemode-worker")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input).unwrap();
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(4), "{needle}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let last = stdout.lines().last().unwrap_or_default();
        assert!(
            last.contains("\"type\":\"fatal\"") && last.contains(needle),
            "{needle}: {stdout}"
        );
        assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    }
}

/// A listening abstract unix socket with a name unique to this test run
/// (non-blocking), and the name without its leading NUL.
pub fn abstract_listener(tag: &str) -> (std::os::unix::net::UnixListener, String) {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("skarn-test-{tag}-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let l = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    l.set_nonblocking(true).unwrap();
    (l, name)
}

/// Checked from outside: nobody connected to the listener.
pub fn assert_nothing_connected(l: &std::os::unix::net::UnixListener) {
    match l.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Ok(_) => panic!("the confined process connected to the abstract unix socket"),
        Err(e) => panic!("accept: {e}"),
    }
}
