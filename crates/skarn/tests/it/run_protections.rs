//! `skarn run`: every protection attacked for real, checked from outside.

use std::io::Read;
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
    let h = home.to_str().unwrap();
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
fn persistence_paths_stay_read_only_whether_or_not_they_exist() {
    let t = TempDir::new("persist");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert!(
        Command::new("git")
            .args(["init", "-q"])
            .current_dir(&ws)
            .status()
            .unwrap()
            .success()
    );
    std::fs::write(ws.join(".bashrc"), "original\n").unwrap();
    let script = "echo evil > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
                  echo '[core]' >> .git/config; echo evil > .envrc; mkdir -p .vscode; \
                  echo '{}' > .vscode/tasks.json; echo '{}' > .mcp.json; echo evil >> .bashrc; \
                  echo evil > .zshrc; printf '[run]\\nwrite=[\"/\"]\\n' > skarn.toml; \
                  echo x > .gitmodules; mv .bashrc gone; rm -rf .git/hooks; echo ok > normal.txt";
    let cfg_before = std::fs::read(ws.join(".git/config")).unwrap();
    let o = run_in(&ws, &home, &[], &["sh", "-c", script]);
    assert!(ws.join("normal.txt").exists(), "{}", err(&o));
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert!(ws.join(".git/hooks").is_dir());
    assert_eq!(std::fs::read(ws.join(".git/config")).unwrap(), cfg_before);
    for p in [
        ".envrc",
        ".vscode",
        ".mcp.json",
        "skarn.toml",
        ".gitmodules",
        "gone",
    ] {
        assert!(!ws.join(p).exists(), "{p} exists after the run");
    }
    assert_eq!(
        std::fs::read_to_string(ws.join(".bashrc")).unwrap(),
        "original\n"
    );
    // A missing shell rc file cannot be created when the workspace is HOME
    // (elsewhere no shell reads it; it is kept read-only only if it exists).
    assert_eq!(
        std::fs::read_to_string(ws.join(".zshrc")).unwrap(),
        "evil\n"
    );
    std::fs::remove_file(ws.join(".zshrc")).unwrap();
    let o = run_in(
        &ws,
        &ws,
        &[],
        &["sh", "-c", "echo evil > .zshrc; echo evil > .profile"],
    );
    assert_ne!(code(&o), 0);
    assert!(!ws.join(".zshrc").exists() && !ws.join(".profile").exists());
    // Turned off: the same writes succeed.
    let o = run_in(
        &ws,
        &home,
        &["--no-protect-persistence"],
        &["sh", "-c", "echo fine > .envrc"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(ws.join(".envrc")).unwrap(),
        "fine\n"
    );
}

fn git(ws: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .arg("-C")
        .arg(ws)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", ws)
        .output()
        .unwrap()
}

#[test]
fn missing_git_dir_cannot_be_created_with_hooks() {
    let t = TempDir::new("nogit");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "mkdir -p .git/hooks && echo evil > .git/hooks/post-checkout; echo x > .git/commondir",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(err(&o).contains("discarded"), "{}", err(&o));
    assert!(!ws.join(".git").exists());
}

#[test]
fn git_init_inside_is_staged_and_moved_in_without_hooks_or_code_config() {
    if !host_has("git", "--version") {
        return;
    }
    let t = TempDir::new("gitinit");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let script = "git init -q && echo hi > f && git add f && \
                  git -c user.name=a -c user.email=b commit -qm first && \
                  git config core.fsmonitor 'touch /tmp/pwned' && git config alias.x '!evil' && \
                  git remote add origin https://example.invalid/r && \
                  printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit && \
                  chmod +x .git/hooks/pre-commit && echo /elsewhere > .git/commondir && \
                  echo ok";
    let o = run_in(&ws, &home, &[], &["sh", "-c", script]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o), "ok\n");
    let e = err(&o);
    for d in ["hooks/pre-commit", "core.fsmonitor", "alias.x", "commondir"] {
        assert!(e.contains(d), "{d} not reported: {e}");
    }
    // The repository works on the host, with its history and remote.
    let log = git(&ws, &["log", "--format=%s"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout), "first\n");
    let cfg = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    assert!(cfg.contains("https://example.invalid/r"), "{cfg}");
    assert!(!cfg.contains("fsmonitor") && !cfg.contains("evil"), "{cfg}");
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert!(!ws.join(".git/commondir").exists());
    let left: Vec<_> = std::fs::read_dir(ws.join(".git"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".skarn"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // A second run sees an ordinary, protected repository.
    let o = run_in(
        &ws,
        &home,
        &[],
        &["sh", "-c", "echo evil > .git/hooks/pre-commit"],
    );
    assert_ne!(code(&o), 0);
    assert!(!ws.join(".git/hooks/pre-commit").exists());
}

#[test]
fn effective_git_config_paths_stay_read_only() {
    if !host_has("git", "--version") {
        return;
    }
    let t = TempDir::new("gitcfg");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert!(git(&ws, &["init", "-q"]).status.success());
    std::fs::create_dir_all(ws.join("tools/hooks")).unwrap();
    std::fs::write(ws.join("tools/inc.cfg"), "[core]\n").unwrap();
    for (k, v) in [
        ("core.hooksPath", "tools/hooks"),
        ("include.path", "../tools/inc.cfg"),
        ("includeIf.onbranch:other.path", "../later.cfg"),
        ("extensions.worktreeConfig", "true"),
    ] {
        assert!(git(&ws, &["config", k, v]).status.success());
    }
    let inc_before = std::fs::read(ws.join("tools/inc.cfg")).unwrap();
    let script = "echo evil > tools/hooks/pre-commit; \
                  echo '[core] fsmonitor = evil' >> tools/inc.cfg; \
                  echo '[core] fsmonitor = evil' > later.cfg; \
                  echo '[core] fsmonitor = evil' > .git/config.worktree; \
                  mv tools tools2; mkdir -p tools/hooks; echo evil > tools/hooks/post-merge; \
                  echo /elsewhere > .git/commondir; echo ok > normal.txt";
    let o = run_in(&ws, &home, &[], &["sh", "-c", script]);
    assert!(ws.join("normal.txt").exists(), "{}", err(&o));
    assert!(!ws.join("tools/hooks/pre-commit").exists());
    assert!(!ws.join("tools/hooks/post-merge").exists());
    assert!(!ws.join("tools2").exists());
    assert_eq!(std::fs::read(ws.join("tools/inc.cfg")).unwrap(), inc_before);
    for p in ["later.cfg", ".git/config.worktree", ".git/commondir"] {
        assert!(
            std::fs::symlink_metadata(ws.join(p)).is_err(),
            "{p} exists after the run"
        );
    }
    // Usability: committing inside still works.
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo a > a && git add a && git -c user.name=a -c user.email=b commit -qm a && echo ok",
        ],
    );
    assert_eq!(out(&o), "ok\n", "{}", err(&o));
}

#[test]
fn linked_worktree_and_its_common_dir_stay_protected() {
    if !host_has("git", "--version") {
        return;
    }
    let t = TempDir::new("gitwt");
    let (main, home) = (t.dir("main"), t.dir("home"));
    assert!(git(&main, &["init", "-q"]).status.success());
    std::fs::write(main.join("f"), "x").unwrap();
    assert!(git(&main, &["add", "f"]).status.success());
    assert!(git(&main, &["commit", "-qm", "m"]).status.success());
    assert!(
        git(&main, &["config", "extensions.worktreeConfig", "true"])
            .status
            .success()
    );
    let ws = t.join("feat");
    let ws_s = ws.display().to_string();
    assert!(
        git(&main, &["worktree", "add", "-q", &ws_s])
            .status
            .success()
    );
    let wt = main.join(".git/worktrees/feat");
    let gitfile = std::fs::read(ws.join(".git")).unwrap();
    let main_s = main.display().to_string();
    let script = format!(
        "echo /elsewhere > {w}/commondir; echo '[core] fsmonitor = evil' > {w}/config.worktree; \
         echo evil > {m}/.git/hooks/post-checkout; echo '[core]' >> {m}/.git/config; \
         echo gitdir: /elsewhere > .git; mv {w} {w}.x; echo ok > normal.txt",
        w = wt.display(),
        m = main_s
    );
    let o = run_in(&ws, &home, &["--write", &main_s], &["sh", "-c", &script]);
    assert!(ws.join("normal.txt").exists(), "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(wt.join("commondir")).unwrap(),
        "../..\n"
    );
    assert!(!wt.join("config.worktree").exists());
    assert!(!main.join(".git/hooks/post-checkout").exists());
    assert_eq!(std::fs::read(ws.join(".git")).unwrap(), gitfile);
    let st = git(&ws, &["status", "--porcelain"]);
    assert!(st.status.success());
}

#[test]
fn workspace_below_a_repository_cannot_reach_its_git_dir() {
    if !host_has("git", "--version") {
        return;
    }
    let t = TempDir::new("gitsub");
    let (repo, home) = (t.dir("repo"), t.dir("home"));
    assert!(git(&repo, &["init", "-q"]).status.success());
    let ws = t.dir("repo/sub");
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo evil > ../.git/hooks/pre-commit; git init -q; echo ok",
        ],
    );
    assert_eq!(out(&o), "ok\n", "{}", err(&o));
    assert!(!repo.join(".git/hooks/pre-commit").exists());
    // The repository made inside was moved in, vetted.
    assert!(ws.join(".git/HEAD").exists());
}

#[test]
fn folder_opening_tools_are_protected_and_reserved_when_used() {
    let t = TempDir::new("tools");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(ws.join("lefthook.yml"), "pre-commit: {}\n").unwrap();
    std::fs::write(ws.join(".envrc"), "use flake\n").unwrap();
    std::fs::write(ws.join("flake.nix"), "{}\n").unwrap();
    let script = "echo evil > lefthook-local.yml; echo evil >> lefthook.yml; \
                  echo evil > .gemini; mkdir .codex; echo '{}' > opencode.json; \
                  echo evil > flake.nix; echo evil > shell.nix; mkdir .direnv; \
                  echo x > .lintstagedrc; echo ok > normal.txt";
    let o = run_in(&ws, &home, &[], &["sh", "-c", script]);
    assert!(ws.join("normal.txt").exists(), "{}", err(&o));
    for p in [
        "lefthook-local.yml",
        ".gemini",
        ".codex",
        "opencode.json",
        "shell.nix",
        ".direnv",
    ] {
        assert!(
            std::fs::symlink_metadata(ws.join(p)).is_err(),
            "{p} exists after the run"
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("lefthook.yml")).unwrap(),
        "pre-commit: {}\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("flake.nix")).unwrap(),
        "{}\n"
    );
    // lint-staged is not set up here: its config is an ordinary file.
    assert!(ws.join(".lintstagedrc").exists());
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

#[test]
fn timeout_kills_the_whole_tree_with_124() {
    let t = TempDir::new("timeout");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let marker = format!("{}", 900000 + std::process::id() % 99999);
    let script = format!("sleep {marker} & sh -c 'sleep {marker}' & setsid sleep {marker} & wait");
    let o = run_in(&ws, &home, &["--timeout", "1"], &["sh", "-c", &script]);
    assert_eq!(code(&o), 124, "{}", err(&o));
    assert!(err(&o).contains("timeout"));
    // A killed process may take a moment to disappear from /proc on a
    // loaded host; a survivor is one still there after 20 s.
    let survivors = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(&format!("sleep {marker}")))
            .collect()
    };
    for _ in 0..200 {
        if survivors().is_empty() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("survivors: {:?}", survivors());
}

#[test]
fn process_memory_and_file_size_limits_hold() {
    let t = TempDir::new("limits");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let o = probe(&ws, &home, &["--max-procs", "20"], &["forks", "200"]);
    let n: usize = out(&o)
        .trim()
        .strip_prefix("forked ")
        .and_then(|n| n.parse().ok())
        .unwrap();
    // 20 processes for the command's tree: the probe and 19 children (the
    // sandbox's init is not counted against the command).
    assert_eq!(n, 19, "forked {n} with a cap of 20");
    let o = run_in(&ws, &home, &["--max-procs", "1"], &["true"]);
    assert_eq!(code(&o), 0, "--max-procs 1: {}", err(&o));
    let o = probe(&ws, &home, &[], &["forks", "50"]);
    assert_eq!(out(&o).trim(), "forked 50", "default cap too low");
    let o = probe(&ws, &home, &["--memory", "64"], &["alloc", "256"]);
    assert_eq!(code(&o), 1, "{}", out(&o));
    let o = probe(&ws, &home, &["--memory", "512"], &["alloc", "64"]);
    assert_eq!(code(&o), 0, "{}", out(&o));
    let o = run_in(
        &ws,
        &home,
        &["--max-file-size", "1"],
        &["sh", "-c", "head -c 3000000 /dev/zero > big"],
    );
    assert_ne!(code(&o), 0);
    assert!(std::fs::metadata(ws.join("big")).unwrap().len() <= 1024 * 1024);
}

/// The path of the v1 hierarchy holding controller `ctl` in a
/// `/proc/<pid>/cgroup` text (`N:ctl[,ctl...]:/path` lines).
fn cgroup_path<'a>(text: &'a str, ctl: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctls, path) = (f.next()?, f.next()?, f.next()?);
        ctls.split(',').any(|c| c == ctl).then_some(path)
    })
}

/// As root with pids and memory controllers, every process of the run is
/// inside the run's cgroups (init enters them itself before the target
/// starts), and the memory limit is one budget for the whole tree: three
/// processes holding 48 MiB each cannot all live under `--memory 96`,
/// which per-process limits would allow.
#[test]
fn as_root_the_whole_tree_is_in_the_runs_cgroups() {
    let host = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let (Some(pids_path), Some(_)) = (cgroup_path(&host, "pids"), cgroup_path(&host, "memory"))
    else {
        eprintln!("skipped: needs v1 pids and memory hierarchies");
        return;
    };
    if !is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let t = TempDir::new("cgroups");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    // Left by a run whose helper and reaper were killed together: removed
    // by the next run. One named after a live process stays.
    let pids_parent =
        std::path::PathBuf::from("/sys/fs/cgroup/pids").join(pids_path.trim_start_matches('/'));
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    let _ = dead.wait();
    let stale = pids_parent.join(format!("skarn-{dead_pid}-5ca1ab1e"));
    let live = pids_parent.join(format!("skarn-{}-5ca1ab1e", std::process::id()));
    std::fs::create_dir(&stale).unwrap();
    std::fs::create_dir(&live).unwrap();
    let o = run_in(
        &ws,
        &home,
        &["--report"],
        &[
            "sh",
            "-c",
            "cat /proc/self/cgroup; sh -c 'cat /proc/self/cgroup'",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let text = out(&o);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| cgroup_path(l, "pids").is_some() || cgroup_path(l, "memory").is_some())
        .collect();
    assert_eq!(lines.len(), 4, "{text}");
    for l in lines {
        assert!(l.contains("/skarn-"), "outside the run's cgroup: {l}");
    }
    assert!(
        err(&o).contains("layer cgroup         enforced"),
        "{}",
        err(&o)
    );
    let (stale_left, live_left) = (stale.exists(), live.exists());
    let _ = std::fs::remove_dir(&stale);
    let _ = std::fs::remove_dir(&live);
    assert!(
        !stale_left,
        "a dead run's cgroup was left: {}",
        stale.display()
    );
    assert!(live_left, "a live pid's cgroup was removed");
    let e = exe();
    let e = e.to_str().unwrap();
    let each = format!("{e} __sandbox-helper probe alloc 48:1500");
    let script = format!("{each} & {each} & {each} & wait");
    let o = run_in(
        &ws,
        &home,
        &["--exec", e, "--memory", "96"],
        &["sh", "-c", &script],
    );
    let held = out(&o).matches("allocated 48 MiB").count();
    assert!(
        held < 3,
        "three 48 MiB processes under --memory 96: {}",
        out(&o)
    );
    // Socket buffers count too (v1 charges them once the TCP limit is set):
    // without it 40 connections queued about 150 MiB under --memory 64.
    let o = probe(
        &ws,
        &home,
        &["--net", "loopback", "--memory", "64"],
        &["tcp-queue", "40"],
    );
    let mib: u64 = out(&o)
        .trim()
        .strip_prefix("queued ")
        .and_then(|r| r.strip_suffix(" MiB"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{} {}", out(&o), err(&o)));
    assert!(
        mib <= 80,
        "{mib} MiB queued in TCP sockets under --memory 64"
    );
}

#[test]
fn report_and_json_describe_the_run() {
    let t = TempDir::new("report");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(
        ws.join("skarn.toml"),
        "[run]\nread = [\"/srv\"]\ntimeout = 77\n",
    )
    .unwrap();
    let o = Command::new(exe())
        .args(["run", "--json", "--workspace"])
        .arg(&ws)
        .args(["--", "true"])
        .env("HOME", &home)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    let line = err(&o).lines().last().unwrap().to_string();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["backend"], "linux");
    assert_eq!(v["status"], "FullyEnforced");
    let limits = v["limits"].as_array().unwrap();
    let timeout = limits.iter().find(|l| l["name"] == "timeout").unwrap();
    assert_eq!(timeout["value"], "77 s");
    assert!(
        timeout["source"]
            .as_str()
            .unwrap()
            .ends_with("skarn.toml:3:11"),
        "{timeout}"
    );
    let o = Command::new(exe())
        .args(["run", "--report", "--timeout", "5", "--workspace"])
        .arg(&ws)
        .args(["--", "true"])
        .env("HOME", &home)
        .output()
        .unwrap();
    let e = err(&o);
    assert!(
        e.contains("status=FullyEnforced") && e.contains("(from --timeout)"),
        "{e}"
    );
    // A config error names file:line:column and exits 2.
    std::fs::write(ws.join("skarn.toml"), "[run]\nnet = \"sometimes\"\n").unwrap();
    let o = Command::new(exe())
        .args(["run", "--workspace"])
        .arg(&ws)
        .args(["--", "true"])
        .env("HOME", &home)
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    assert!(err(&o).contains("skarn.toml:2:7"), "{}", err(&o));
}

#[test]
fn degradation_is_reported_and_fail_closed_refuses() {
    let t = TempDir::new("degrade");
    let (ws, home, outside) = (t.dir("ws"), t.dir("home"), t.dir("outside"));
    let run = |missing: &str, flags: &[&str], cmd: &[&str]| {
        Command::new(exe())
            .args(["run", "--no-config", "--json", "--workspace"])
            .arg(&ws)
            .args(flags)
            .arg("--")
            .args(cmd)
            .env("HOME", &home)
            .env("SKARN_SANDBOX_SIMULATE_MISSING", missing)
            .output()
            .unwrap()
    };
    // Nothing left: refuse.
    let o = run("namespaces,landlock", &[], &["true"]);
    assert_eq!(code(&o), 2);
    assert!(err(&o).contains("refusing"), "{}", err(&o));
    // ... unless fail-open, which says NotEnforced.
    let o = run("namespaces,landlock", &["--fail-open"], &["true"]);
    assert!(err(&o).contains("NotEnforced"), "{}", err(&o));
    // Landlock only (no namespaces): still no write outside, no secret read.
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "DEGRADED-SECRET").unwrap();
    std::fs::write(home.join("notes"), "fine").unwrap();
    let target = outside.join("x");
    let h = home.to_str().unwrap();
    let o = run(
        "namespaces",
        &["--read", h],
        &[
            "sh",
            "-c",
            &format!(
                "echo x > {}; cat {h}/.ssh/id_rsa; cat {h}/notes",
                target.display()
            ),
        ],
    );
    assert!(!target.exists());
    assert!(!out(&o).contains("DEGRADED-SECRET"));
    assert!(out(&o).contains("fine"), "{}", err(&o));
    assert!(err(&o).contains("PartiallyEnforced"), "{}", err(&o));
    // Missing seccomp and Landlock scopes are notes.
    let o = run("seccomp,landlock-scope", &[], &["true"]);
    let e = err(&o);
    assert!(
        e.contains("PartiallyEnforced") && e.contains("seccomp unavailable") && e.contains("ABI 5"),
        "{e}"
    );
}

#[test]
fn no_sandbox_is_loud() {
    let t = TempDir::new("nosb");
    let o = Command::new(exe())
        .args(["run", "--no-config", "--no-sandbox", "--workspace"])
        .arg(t.path())
        .args(["--", "sh", "-c", "exit 3"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 3);
    assert!(err(&o).contains("UNCONFINED"));
}

#[test]
fn stdin_passes_through() {
    let t = TempDir::new("stdin");
    let mut c = Command::new(exe())
        .args(["run", "--no-config", "--workspace"])
        .arg(t.path())
        .args(["--", "tr", "a-z", "A-Z"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    c.stdin
        .take()
        .unwrap()
        .write_all(b"hello sandbox\n")
        .unwrap();
    let mut s = String::new();
    c.stdout.take().unwrap().read_to_string(&mut s).unwrap();
    assert_eq!(s, "HELLO SANDBOX\n");
    assert!(c.wait().unwrap().success());
}

#[test]
fn reusable_self_confinement_pieces_hold() {
    // What a self-confining worker does, applied to a fresh process.
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let addr = tcp.local_addr().unwrap().to_string();
    let o = Command::new(exe())
        .args(["__sandbox-helper", "probe", "self-confine", &addr])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    assert_eq!(out(&o), "confined\n");
    assert!(tcp.accept().is_err());
    assert!(!std::path::Path::new("/tmp/skarn-self-confine-probe").exists());
}

#[test]
fn overlapping_runs_leave_no_placeholders_behind() {
    use std::io::Write;
    use std::os::unix::fs::FileTypeExt;
    let t = TempDir::new("overlap");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    // Run A holds the workspace (and its placeholders) until told to end.
    let mut a = Command::new(exe())
        .args(["run", "--no-config", "--workspace"])
        .arg(&ws)
        .args(["--", "sh", "-c", "echo ready; read x"])
        .env("HOME", &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(a.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "ready\n");
    // Run B starts and ends meanwhile: A's `.envrc` placeholder is no
    // `.envrc`, so B reserves nothing more (nix and direnv files) that
    // neither run could remove afterwards.
    let o = run_in(&ws, &home, &[], &["true"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    a.stdin.take().unwrap().write_all(b"end\n").unwrap();
    assert!(a.wait().unwrap().success());
    let sockets: Vec<_> = std::fs::read_dir(&ws)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|f| f.is_socket()))
        .map(|e| e.file_name())
        .collect();
    assert!(sockets.is_empty(), "placeholders left: {sockets:?}");
}

#[test]
fn killing_skarn_leaves_no_placeholders_behind() {
    let t = TempDir::new("kill");
    let ws = t.dir("ws");
    let mut c = Command::new(exe())
        .args(["run", "--no-config", "--workspace"])
        .arg(&ws)
        .args(["--", "sh", "-c", "echo ready; sleep 30"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(c.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "ready\n");
    assert!(
        std::fs::symlink_metadata(ws.join(".envrc")).is_ok(),
        "placeholder reserved during the run"
    );
    // The .git mount point is an empty directory: not a repository to host git.
    assert!(ws.join(".git").is_dir());
    let o = Command::new("git")
        .arg("-C")
        .arg(&ws)
        .args(["rev-parse", "--absolute-git-dir"])
        .output();
    if let Ok(o) = o {
        assert_ne!(out(&o).trim(), ws.join(".git").display().to_string());
    }
    c.kill().unwrap();
    c.wait().unwrap();
    // The reaper cleans up once the helper is gone.
    let mut left = true;
    for _ in 0..100 {
        left = [".envrc", ".vscode", ".git", ".gemini"]
            .iter()
            .any(|p| std::fs::symlink_metadata(ws.join(p)).is_ok());
        if !left {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        !left,
        "placeholders left: {:?}",
        std::fs::read_dir(&ws)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect::<Vec<_>>()
    );
    // And the next run is unaffected.
    let o = run_in(&ws, &t.dir("home"), &[], &["true"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
}
