//! `skarn run`: every protection attacked for real, checked from outside.

use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::process::{Command, Stdio};

use crate::common::*;
use skarn_test_support::{TempDir, is_root};

#[test]
fn writes_outside_the_workspace_and_into_read_grants_fail() {
    let t = TempDir::new("write");
    let (ws, home, outside, ro) = (t.dir("ws"), t.dir("home"), t.dir("outside"), t.dir("ro"));
    // The home is a private tmpfs: the write succeeds inside, never outside.
    let o = probe(&ws, &home, &[], &["write", &t.s("home/x")]);
    assert_eq!(code(&o), 0, "{}", out(&o));
    assert!(!home.join("x").exists(), "home/x reached the host");
    for target in [
        t.s("outside/x"),
        t.s("ro/x"),
        "/etc/skarn-x".into(),
        "/usr/skarn-x".into(),
    ] {
        let o = probe(
            &ws,
            &home,
            &["--read", ro.to_str().unwrap()],
            &["write", &target],
        );
        assert_eq!(code(&o), 1, "{target}: {}", out(&o));
        assert!(
            !std::path::Path::new(&target).exists(),
            "{target} was created"
        );
    }
    let o = run_in(&ws, &home, &[], &["sh", "-c", "echo hi > inside.txt"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(ws.join("inside.txt")).unwrap(),
        "hi\n"
    );
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
    // rm -rf of the home directory changes nothing.
    std::fs::write(home.join("keep"), "k").unwrap();
    let h = home.to_str().unwrap();
    let o = run_in(
        &ws,
        &home,
        &["--read", h],
        &["sh", "-c", &format!("rm -rf {h}/keep {h}")],
    );
    assert_ne!(code(&o), 0);
    assert!(home.join("keep").exists());
}

#[test]
fn secrets_stay_unreadable_even_inside_granted_directories() {
    let t = TempDir::new("secret");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let marker = "SKARN-TEST-SECRET-91c2";
    for f in [
        ".ssh/id_rsa",
        ".aws/credentials",
        ".config/gh/hosts.yml",
        ".netrc",
        ".cargo/credentials.toml",
    ] {
        let p = home.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, marker).unwrap();
    }
    std::fs::write(ws.join(".env"), marker).unwrap();
    for f in crate::serve_sandbox::CREDENTIAL_FILES {
        let p = home.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, marker).unwrap();
    }
    let h = home.to_str().unwrap();
    // Each credential file of a common tool, read directly (attack F11).
    let cat: Vec<String> = crate::serve_sandbox::CREDENTIAL_FILES
        .iter()
        .map(|f| format!("{h}/{f}"))
        .collect();
    for flags in [vec!["--read", h], vec!["--write", h]] {
        let mut argv = vec!["cat"];
        argv.extend(cat.iter().map(String::as_str));
        let o = run_in(&ws, &home, &flags, &argv);
        assert!(
            !out(&o).contains(marker),
            "{flags:?}: a credential file leaked: {}",
            out(&o)
        );
    }
    for flags in [vec!["--read", h], vec!["--write", h], vec!["--exec", h]] {
        let mut f = flags.clone();
        let envf = ws.join(".env");
        f.extend(["--deny-read", envf.to_str().unwrap()]);
        let o = run_in(
            &ws,
            &home,
            &f,
            &[
                "sh",
                "-c",
                &format!(
                    "cat {h}/.ssh/id_rsa {h}/.aws/credentials {h}/.config/gh/hosts.yml {h}/.netrc {h}/.cargo/credentials.toml .env; ls -la {h}/.ssh; grep -r SKARN {h} ."
                ),
            ],
        );
        assert!(
            !out(&o).contains(marker),
            "{flags:?}: secret leaked: {}",
            out(&o)
        );
    }
    // Granting a secret directly is refused too.
    let o = run_in(
        &ws,
        &home,
        &["--read", &format!("{h}/.ssh")],
        &["cat", &format!("{h}/.ssh/id_rsa")],
    );
    assert!(!out(&o).contains(marker));
}

#[test]
fn inherited_descriptor_to_a_secret_is_closed() {
    let t = TempDir::new("fd");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(t.join("secret"), "FD-SECRET-5521").unwrap();
    let f = std::fs::File::open(t.join("secret")).unwrap();
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let fd = f.as_raw_fd();
    assert!(fd > 2);
    let mut c = probe_command(&ws, &home, &[], &["fd", &fd.to_string()]);
    // Only `skarn run` inherits the descriptor: its close-on-exec flag is
    // cleared in the child, after the fork, so that children other tests
    // of this process start meanwhile never get it.
    // SAFETY: between fork and exec the child only calls fcntl, which is
    // async-signal-safe, on a descriptor it holds (`f` outlives the spawn).
    unsafe {
        c.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = c.output().expect("spawn skarn");
    drop(f);
    assert_eq!(code(&o), 1, "{}", out(&o));
    assert!(!out(&o).contains("FD-SECRET"));
}

/// A TCP listener and a UDP socket on the host's loopback, non-blocking
/// (so "nothing arrived" is read at once), with their addresses.
fn host_listeners() -> (TcpListener, String, UdpSocket, String) {
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let tcp_addr = tcp.local_addr().unwrap().to_string();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let udp_addr = udp.local_addr().unwrap().to_string();
    (tcp, tcp_addr, udp, udp_addr)
}

#[test]
fn network_listeners_on_the_host_receive_nothing() {
    let t = TempDir::new("net");
    let (ws, home, sockdir) = (t.dir("ws"), t.dir("home"), t.dir("sock"));
    let (tcp, tcp_addr, udp, udp_addr) = host_listeners();
    let sp = sockdir.join("host.sock");
    let unix = UnixListener::bind(&sp).unwrap();
    unix.set_nonblocking(true).unwrap();
    let name = format!("skarn-test-abs-{}", std::process::id());
    let abs = {
        use std::os::linux::net::SocketAddrExt;
        let a = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        UnixListener::bind_addr(&a).unwrap()
    };
    abs.set_nonblocking(true).unwrap();
    let sps = sp.to_str().unwrap();
    for net in ["deny", "loopback"] {
        let o = probe(&ws, &home, &["--net", net], &["tcp", &tcp_addr]);
        assert_eq!(code(&o), 1, "{net}: {}", out(&o));
        assert!(
            tcp.accept().is_err(),
            "{net}: TCP listener got a connection"
        );
        probe(&ws, &home, &["--net", net], &["udp", &udp_addr]);
        let mut b = [0u8; 64];
        assert!(
            udp.recv(&mut b).is_err(),
            "{net}: UDP socket got a datagram"
        );
    }
    for net in ["deny", "loopback", "outbound", "all"] {
        let o = probe(&ws, &home, &["--net", net], &["abstract", &name]);
        assert_eq!(code(&o), 1, "{net}: {}", out(&o));
        assert!(
            abs.accept().is_err(),
            "{net}: abstract listener got a connection"
        );
        let o = probe(&ws, &home, &["--net", net], &["unix", sps]);
        assert_eq!(code(&o), 1, "{net}: {}", out(&o));
        assert!(
            unix.accept().is_err(),
            "{net}: pathname socket got a connection"
        );
    }
    // outbound: no inbound TCP bind.
    let o = probe(
        &ws,
        &home,
        &["--net", "outbound"],
        &["tcp-bind", "127.0.0.1:0"],
    );
    assert_eq!(code(&o), 1, "{}", out(&o));
    // all: the host network is reachable (sanity check that the probe works).
    let o = probe(&ws, &home, &["--net", "all"], &["tcp", &tcp_addr]);
    assert_eq!(code(&o), 0, "{}", out(&o));
    assert!(tcp.accept().is_ok());
}

/// A network socket the caller gives as standard input belongs to the
/// caller's network: under every policy but `all` the command gets
/// /dev/null there instead, so neither `sendto` nor `connect` through it
/// reaches the host's listeners.
#[test]
fn network_sockets_given_as_standard_input_reach_nothing() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let t = TempDir::new("net-stdin");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let (tcp, tcp_addr, udp, udp_addr) = host_listeners();
    let fresh_tcp = || {
        // SAFETY: socket takes integers; the descriptor is owned below.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        assert!(fd >= 0);
        // SAFETY: fd is a new descriptor nobody else owns.
        unsafe { OwnedFd::from_raw_fd(fd) }
    };
    let mut b = [0u8; 64];
    for net in ["deny", "loopback", "outbound", "allow:example.com"] {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        let o = probe_command(
            &ws,
            &home,
            &["--net", net, "--json"],
            &["stdin-udp", &udp_addr],
        )
        .stdin(std::process::Stdio::from(OwnedFd::from(sock)))
        .output()
        .unwrap();
        assert_eq!(code(&o), 1, "{net}: {}{}", out(&o), err(&o));
        assert!(
            udp.recv(&mut b).is_err(),
            "{net}: UDP listener got a datagram"
        );
        assert!(err(&o).contains("network socket"), "{net}: {}", err(&o));
        let o = probe_command(&ws, &home, &["--net", net], &["stdin-tcp", &tcp_addr])
            .stdin(std::process::Stdio::from(fresh_tcp()))
            .output()
            .unwrap();
        assert_eq!(code(&o), 1, "{net}: {}", out(&o));
        assert!(
            tcp.accept().is_err(),
            "{net}: TCP listener got a connection"
        );
    }
    // --net all keeps the caller's socket (and shows the probe works).
    let o = probe_command(&ws, &home, &["--net", "all"], &["stdin-udp", &udp_addr])
        .stdin(std::process::Stdio::from(OwnedFd::from(
            UdpSocket::bind("127.0.0.1:0").unwrap(),
        )))
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", out(&o));
    assert!(
        udp.recv(&mut b).is_ok(),
        "--net all: the datagram did not arrive"
    );
    let o = probe_command(&ws, &home, &["--net", "all"], &["stdin-tcp", &tcp_addr])
        .stdin(std::process::Stdio::from(fresh_tcp()))
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", out(&o));
    assert!(tcp.accept().is_ok());
}

#[test]
fn host_processes_cannot_be_signalled_or_traced() {
    let t = TempDir::new("sig");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let mut victim = Command::new("sleep")
        .arg("60")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let pid = victim.id().to_string();
    for net in ["deny", "outbound", "all"] {
        probe(&ws, &home, &["--net", net], &["kill", &pid]);
        let o = run_in(&ws, &home, &["--net", net], &["kill", "-9", &pid]);
        assert_ne!(code(&o), 0);
        let o = probe(&ws, &home, &["--net", net], &["ptrace", &pid]);
        assert_eq!(code(&o), 1, "{}", out(&o));
        assert!(
            victim.try_wait().unwrap().is_none(),
            "{net}: host process was killed"
        );
    }
    victim.kill().unwrap();
    victim.wait().unwrap();
}

#[test]
fn read_grants_are_not_executable_and_symlinked_grants_resolve() {
    let t = TempDir::new("grants");
    let (ws, home, real) = (t.dir("ws"), t.dir("home"), t.dir("real"));
    std::fs::write(real.join("data"), "payload\n").unwrap();
    std::fs::copy("/bin/true", real.join("tool")).unwrap();
    let link = t.join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let l = link.to_str().unwrap();
    let o = run_in(&ws, &home, &["--read", l], &["cat", &format!("{l}/data")]);
    assert_eq!(out(&o), "payload\n", "{}", err(&o));
    let o = run_in(&ws, &home, &["--read", l], &[&format!("{l}/tool")]);
    assert_eq!(code(&o), 126, "read grant executed: {}", err(&o));
    let o = run_in(&ws, &home, &["--exec", l], &[&format!("{l}/tool")]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let o = run_in(
        &ws,
        &home,
        &["--exec", l],
        &["sh", "-c", &format!("echo x > {l}/data")],
    );
    assert_ne!(code(&o), 0);
    assert_eq!(
        std::fs::read_to_string(real.join("data")).unwrap(),
        "payload\n"
    );
}

#[test]
fn kernel_knobs_in_proc_are_read_only() {
    let t = TempDir::new("proc");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let before = std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap();
    for target in [
        "/proc/sys/kernel/core_pattern",
        "/proc/sys/vm/drop_caches",
        "/proc/sysrq-trigger",
    ] {
        let o = probe(&ws, &home, &[], &["write", target]);
        assert_eq!(code(&o), 1, "{target}: {}", out(&o));
    }
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap(),
        before
    );
    // Reading stays possible.
    let o = run_in(&ws, &home, &[], &["cat", "/proc/sys/kernel/ostype"]);
    assert_eq!(out(&o), "Linux\n", "{}", err(&o));
}

#[test]
fn dangerous_syscalls_are_filtered() {
    let t = TempDir::new("seccomp");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    for p in ["io_uring", "unshare", "tioclinux"] {
        let o = probe(&ws, &home, &[], &[p, ""]);
        assert_eq!(code(&o), 1, "{p}: {}", out(&o));
    }
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "grep -E '^(Seccomp|NoNewPrivs|CapBnd|CapEff):' /proc/self/status",
        ],
    );
    let s = out(&o);
    assert!(s.contains("Seccomp:\t2"), "{s}");
    assert!(s.contains("NoNewPrivs:\t1"), "{s}");
    assert!(s.contains("CapBnd:\t0000000000000000") || !is_root(), "{s}");
    assert!(s.contains("CapEff:\t0000000000000000"), "{s}");
}

#[test]
fn secret_environment_variables_are_removed() {
    let t = TempDir::new("env");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let o = Command::new(exe())
        .args([
            "run",
            "--no-config",
            "--report",
            "--allow-env",
            "KEEP_TOKEN",
            "--workspace",
        ])
        .arg(&ws)
        .args(["--", "env"])
        .env("HOME", &home)
        .env("GITHUB_TOKEN", "ghp_value1")
        .env("AWS_SECRET_ACCESS_KEY", "aws_value2")
        .env("MY_API_KEY", "value3")
        .env("DB_PASSWORD", "value4")
        .env("KEEP_TOKEN", "value5")
        .env("HARMLESS", "value6")
        .output()
        .unwrap();
    let s = out(&o);
    for v in ["ghp_value1", "aws_value2", "value3", "value4"] {
        assert!(!s.contains(v), "{v} leaked");
        assert!(!err(&o).contains(v), "{v} in the report");
    }
    assert!(s.contains("KEEP_TOKEN=value5") && s.contains("HARMLESS=value6"));
    assert!(err(&o).contains("GITHUB_TOKEN") && err(&o).contains("MY_API_KEY"));
}
