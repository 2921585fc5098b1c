//! Regression tests for attacks found by red-teaming `skarn run`, each
//! checked from outside the sandbox.

use std::path::{Path, PathBuf};
use std::process::Command;

use skarn_test_support::TempDir;

const SKARN: &str = env!("CARGO_BIN_EXE_skarn");

fn run_in(ws: &Path, script: &str, env: &[(&str, &Path)]) -> std::process::Output {
    let mut c = Command::new(SKARN);
    c.args(["run", "--no-config", "--workspace"])
        .arg(ws)
        .args(["--", "sh", "-c", script]);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn git(ws: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(ws)
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

#[test]
fn git_dir_cannot_be_swapped_for_one_with_hooks() {
    let t = TempDir::new("git");
    git(t.path(), &["init", "-q"]);
    std::fs::write(t.join("a"), "a\n").unwrap();
    git(t.path(), &["add", "a"]);
    git(t.path(), &["commit", "-qm", "init"]);
    let out = run_in(
        t.path(),
        "mv .git .git_old; mkdir -p .git_new/hooks; \
         printf '#!/bin/sh\\ntouch PWNED\\n' > .git/hooks/pre-commit; \
         chmod +x .git/hooks/pre-commit 2>/dev/null; \
         git -c user.email=t@example.com -c user.name=t commit -q --allow-empty -m inside && echo COMMITTED",
        &[],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Outside: .git is still the real repository, no hook was planted.
    assert!(t.join(".git/HEAD").exists());
    assert!(!t.join(".git_old").exists());
    assert!(!t.join(".git/hooks/pre-commit").exists());
    // Usability: git still commits inside the sandbox.
    assert!(
        stdout.contains("COMMITTED"),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn no_setuid_or_setgid_file_survives_the_run() {
    let t = TempDir::new("suid");
    let _ = run_in(
        t.path(),
        "cp /bin/sh rs; chmod 4755 rs; chmod g+s rs; \
         python3 -c 'import os; os.open(\"x\", os.O_CREAT|os.O_WRONLY, 0o6755)' 2>/dev/null; true",
        &[],
    );
    use std::os::unix::fs::PermissionsExt;
    for f in ["rs", "x"] {
        if let Ok(md) = std::fs::metadata(t.join(f)) {
            assert_eq!(md.permissions().mode() & 0o6000, 0, "{f} is set-id");
        }
    }
    assert!(t.join("rs").exists(), "plain copy should work");
}

#[test]
fn secret_behind_a_symlink_stays_hidden() {
    let t = TempDir::new("symsecret");
    let home = t.join("home");
    let real = home.join("dotfiles/ssh");
    std::fs::create_dir_all(&real).unwrap();
    std::fs::write(real.join("id_test"), "SKARN-SECRET-MARKER\n").unwrap();
    std::os::unix::fs::symlink(&real, home.join(".ssh")).unwrap();
    let ws = t.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let out = Command::new(SKARN)
        .args(["run", "--no-config", "--read"])
        .arg(&home)
        .arg("--workspace")
        .arg(&ws)
        .args(["--", "sh", "-c"])
        .arg(format!(
            "cat {0}/.ssh/id_test {0}/dotfiles/ssh/id_test; echo done",
            home.display()
        ))
        .env("HOME", &home)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("done"), "{stdout}");
    assert!(!stdout.contains("SKARN-SECRET-MARKER"), "{stdout}");
}

#[test]
fn agent_configs_cannot_be_planted() {
    let t = TempDir::new("agentcfg");
    let _ = run_in(
        t.path(),
        "mkdir -p .claude; echo '{}' > .claude/settings.json; echo x > .pre-commit-config.yaml; true",
        &[],
    );
    assert!(!t.join(".claude").exists());
    assert!(!t.join(".pre-commit-config.yaml").exists());
}

/// Write `name` into the workspace (from outside) and return its path.
fn script(ws: &Path, name: &str, body: &str) -> PathBuf {
    let p = ws.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

fn lgetxattr_exists(p: &Path, name: &std::ffi::CStr) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: valid NUL-terminated strings; a zero-size query reads no buffer.
    unsafe { libc::lgetxattr(c.as_ptr(), name.as_ptr(), std::ptr::null_mut(), 0) >= 0 }
}

const SETID_ATTACK: &str = r#"
import ctypes, os, struct, errno
libc = ctypes.CDLL(None, use_errno=True)
L = ctypes.c_long
def sc(*a):
    r = libc.syscall(*[x if isinstance(x, (bytes, L)) else L(x) for x in a])
    return r, errno.errorcode.get(ctypes.get_errno(), "?")
AT_FDCWD = -100
how = struct.pack("QQQ", os.O_CREAT | os.O_WRONLY, 0o4755, 0)
print("openat2", sc(437, AT_FDCWD, b"o2", how, 24))
how = struct.pack("QQQ", os.O_CREAT | os.O_WRONLY, 0o2755, 0)
print("openat2-sgid", sc(437, AT_FDCWD, b"o2g", how, 24))
open("plain", "w").close()
print("fchmodat2", sc(452, AT_FDCWD, b"plain", 0o4755, 0))
for (name, f) in [
    ("chmod", lambda: os.chmod("plain", 0o6755)),
    ("open", lambda: os.close(os.open("op", os.O_CREAT | os.O_WRONLY, 0o4755))),
    ("mknod", lambda: os.mknod("mk", 0o100000 | 0o4755)),
    ("fchmod", lambda: os.fchmod(os.open("plain", os.O_RDONLY), 0o2755)),
    ("setcap", lambda: os.setxattr("plain", "security.capability",
        bytes.fromhex("0100000200200000000000000000000000000000"))),
    ("link", lambda: os.link(LINK_SRC, "linked")),
]:
    try:
        f(); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno))
os.chmod("plain", 0o755)
print("usable", oct(os.stat("plain").st_mode & 0o7777))
"#;

/// Every route to a set-id file or a file capability is refused: openat2
/// (mode behind a pointer), fchmodat2, chmod, open, mknod, fchmod, the
/// `security.capability` xattr, and a hard link of a set-uid system binary.
/// Checked from outside: no file in the workspace carries a set-id bit or a
/// capability, no link to the system binary exists; plain modes still work.
#[test]
fn no_setid_file_or_capability_by_any_route() {
    let t = TempDir::new("setid2");
    let suid = [
        "/usr/bin/gpasswd",
        "/usr/bin/passwd",
        "/usr/bin/su",
        "/bin/su",
    ]
    .into_iter()
    .find(|p| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o4000 != 0)
    })
    .unwrap_or("/usr/bin/env");
    let body = format!("LINK_SRC = {suid:?}\n{SETID_ATTACK}");
    script(t.path(), "attack.py", &body);
    let out = run_in(t.path(), "python3 attack.py", &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("usable 0o755"), "{stdout}\n{stderr}");
    assert!(stdout.contains("openat2 (-1, 'ENOSYS')"), "{stdout}");
    use std::os::unix::fs::PermissionsExt;
    for e in std::fs::read_dir(t.path()).unwrap() {
        let p = e.unwrap().path();
        let md = std::fs::symlink_metadata(&p).unwrap();
        assert_eq!(
            md.permissions().mode() & 0o6000,
            0,
            "{} is set-id\n{stdout}",
            p.display()
        );
        assert!(
            !lgetxattr_exists(&p, c"security.capability"),
            "{} has a file capability\n{stdout}",
            p.display()
        );
    }
    assert!(!t.join("linked").exists(), "{stdout}");
}

const SOCKET_ATTACK: &str = r#"
import socket, errno, sys
def tryit(name, f):
    try:
        s = f(); print(name, "ok"); return s
    except OSError as e:
        print(name, errno.errorcode.get(e.errno)); return None
def vsock():
    s = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
    s.bind((socket.VMADDR_CID_ANY, PORT)); s.listen(); return s
held = tryit("vsock", vsock)
tryit("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0))
tryit("alg", lambda: socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0))
tryit("bluetooth", lambda: socket.socket(31, socket.SOCK_STREAM, 0))
tryit("key", lambda: socket.socket(15, socket.SOCK_RAW, 2))
tryit("xdp", lambda: socket.socket(44, socket.SOCK_RAW, 0))
tryit("tipc", lambda: socket.socket(30, socket.SOCK_RDM, 0))
tryit("netlink-audit", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9))
tryit("netlink-route", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
tryit("socketpair-unix", lambda: socket.socketpair())
tryit("inet6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM))
def tcp_loop():
    l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen()
    c = socket.create_connection(l.getsockname()); a, _ = l.accept()
    c.sendall(b"hi"); assert a.recv(2) == b"hi"; return l
if LOOPBACK:
    tryit("tcp-loopback", tcp_loop)
print("READY", flush=True)
sys.stdin.read()
"#;

/// Non-IP socket families are refused under every network policy, checked
/// from outside for vsock (its port space is not namespaced): while the
/// command still runs, the host can bind the port the command tried to
/// hold. Unix, netlink route, IPv6 and TCP on the private loopback work.
#[test]
fn non_ip_socket_families_are_refused_under_every_policy() {
    use std::io::{BufRead, BufReader};
    let host_vsock = Command::new("python3")
        .args([
            "-c",
            "import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)",
        ])
        .status()
        .is_ok_and(|s| s.success());
    for (i, net) in ["deny", "loopback", "outbound", "all"].iter().enumerate() {
        let t = TempDir::new(&format!("sock-{net}"));
        let port = 40_000 + (std::process::id() % 10_000) * 2 + i as u32;
        let body = format!(
            "PORT = {port}\nLOOPBACK = {}\n{SOCKET_ATTACK}",
            if *net == "loopback" { "True" } else { "False" }
        );
        script(t.path(), "attack.py", &body);
        let mut child = Command::new(SKARN)
            .args(["run", "--no-config", "--net", net, "--workspace"])
            .arg(t.path())
            .args(["--", "python3", "attack.py"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = Vec::new();
        for l in BufReader::new(child.stdout.take().unwrap()).lines() {
            let l = l.unwrap();
            let ready = l == "READY";
            lines.push(l);
            if ready {
                break;
            }
        }
        // Outside, while the command runs: the vsock port is free.
        if host_vsock {
            let probe = format!(
                "import socket; s=socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM); \
                 s.bind((socket.VMADDR_CID_ANY, {port})); print('free')"
            );
            let o = Command::new("python3")
                .args(["-c", &probe])
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&o.stdout).trim(),
                "free",
                "--net {net}: {lines:?} {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        drop(child.stdin.take());
        let _ = child.wait();
        let all = lines.join("\n");
        for fam in [
            "vsock",
            "packet",
            "alg",
            "bluetooth",
            "key",
            "xdp",
            "tipc",
            "netlink-audit",
        ] {
            assert!(
                all.contains(&format!("{fam} EAFNOSUPPORT")),
                "--net {net}: {fam}\n{all}"
            );
        }
        for ok in ["netlink-route ok", "socketpair-unix ok", "inet6 ok"] {
            assert!(all.contains(ok), "--net {net}: {ok}\n{all}");
        }
        if *net == "loopback" {
            assert!(all.contains("tcp-loopback ok"), "{all}");
        }
    }
}

const GROWSDOWN: &str = r#"
import mmap, sys
size = 1024 * 1024 * 1024
m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x0100)
print("mapped", flush=True)
for off in range(0, size, 4096):
    m[off] = 1
print("TOUCHED ALL", flush=True)
"#;

/// `--memory` counts every mapping: a 1 GiB `MAP_GROWSDOWN` mapping (stack
/// to the kernel, not data) cannot be touched in full under `--memory 64`;
/// ordinary allocations under `--memory 256` and node under the default
/// limit still work.
#[test]
fn memory_limit_counts_growsdown_mappings() {
    let t = TempDir::new("growsdown");
    script(t.path(), "g.py", GROWSDOWN);
    // As found (memory cgroup as root where writable, else RLIMIT_AS), and
    // with the memory cgroup pretended missing (RLIMIT_AS as root too).
    for simulate in ["", "memory-cgroup"] {
        let out = Command::new(SKARN)
            .args([
                "run",
                "--no-config",
                "--memory",
                "64",
                "--json",
                "--workspace",
            ])
            .arg(t.path())
            .args(["--", "python3", "g.py"])
            .env("SKARN_SANDBOX_SIMULATE_MISSING", simulate)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stdout.contains("TOUCHED ALL"), "{stdout}\n{stderr}");
        assert!(!out.status.success(), "{stdout}\n{stderr}");
        let mech_ok = if simulate.is_empty() {
            stderr.contains("memory cgroup") || stderr.contains("RLIMIT_AS")
        } else {
            stderr.contains("via RLIMIT_AS") || stderr.contains("\"mechanism\":\"RLIMIT_AS")
        };
        assert!(mech_ok, "{stderr}");
    }

    let out = Command::new(SKARN)
        .args(["run", "--no-config", "--memory", "256", "--workspace"])
        .arg(t.path())
        .args([
            "--",
            "python3",
            "-c",
            "x = bytearray(10**6); y = bytearray(100 * 2**20); print('ok', len(x))",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "ok 1000000",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if Path::new("/usr/bin/node").exists() {
        let out = Command::new(SKARN)
            .args(["run", "--no-config", "--workspace"])
            .arg(t.path())
            .args(["--", "/usr/bin/node", "-e", "console.log(6*7)"])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "42",
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Secrets are recognised by value as well as by name; configuration that
/// merely names a file or region stays. Checked with `env` inside.
#[test]
fn environment_secrets_by_value_are_removed() {
    let t = TempDir::new("envval");
    let out = Command::new(SKARN)
        .args(["run", "--no-config", "--json", "--workspace"])
        .arg(t.path())
        .args(["--", "env"])
        .env("REDIS_URL", "redis://default:hunter2-skarn@cache:6379/0")
        .env("MONGODB_URI", "mongodb://app:s3cr3t-skarn@db/x")
        .env("BW_SESSION", "bw-skarn-session")
        .env("OP_SESSION_team", "op-skarn-session")
        .env("CI_JOB_JWT_V2", "jwt-skarn")
        .env("SOME_SETTING", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789")
        .env("OTHER", "AKIAIOSFODNN7EXAMPLE")
        .env("AWS_CA_BUNDLE", "/etc/ssl/skarn-ca.pem")
        .env("AWS_REGION", "eu-west-3")
        .env("PLAIN_URL", "https://example.com/skarn")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for gone in [
        "REDIS_URL",
        "MONGODB_URI",
        "BW_SESSION",
        "OP_SESSION_team",
        "CI_JOB_JWT_V2",
        "SOME_SETTING",
        "OTHER=",
    ] {
        assert!(!stdout.contains(gone), "{gone} leaked:\n{stdout}");
        assert!(
            stderr.contains(gone.trim_end_matches('=')),
            "{gone} not reported: {stderr}"
        );
    }
    for secret in ["hunter2", "s3cr3t", "ghp_", "AKIA"] {
        assert!(
            !stdout.contains(secret) && !stderr.contains(secret),
            "{secret}"
        );
    }
    for kept in [
        "AWS_CA_BUNDLE=/etc/ssl/skarn-ca.pem",
        "AWS_REGION=eu-west-3",
        "PLAIN_URL=https://example.com/skarn",
    ] {
        assert!(stdout.contains(kept), "{kept} missing:\n{stdout}");
    }
}

const PTY_DRIVER: &str = r#"
import fcntl, os, pty, select, struct, subprocess, sys, termios, time
m, s = pty.openpty()
fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
p = subprocess.Popen(sys.argv[1:], stdin=s, stdout=s, stderr=s)
out = b""
# A hang guard, not a timing check: skarn blocked on the terminal is
# reported as rc=hung.
deadline = time.time() + 60
while True:
    if time.time() > deadline:
        p.kill()
        p.wait()
        print("echo=? size=? rc=hung")
        sys.exit(0)
    r, _, _ = select.select([m], [], [], 0.2)
    if r:
        try:
            out += os.read(m, 65536)
        except OSError:
            break
    elif p.poll() is not None:
        break
p.wait()
echo = bool(termios.tcgetattr(s)[3] & termios.ECHO)
rows, cols = struct.unpack("HHHH", fcntl.ioctl(s, termios.TIOCGWINSZ, b"\0" * 8))[:2]
print(f"echo={echo} size={rows}x{cols} rc={p.returncode}")
sys.stdout.write(out.decode(errors="replace"))
"#;

/// The command gets the caller's terminal, turns echo off (and tries to
/// resize it), and exits or is killed by the timeout: from outside, echo is
/// back on and the size is unchanged. Inside, terminal settings work. A
/// command that stops the terminal's output (tcflow TCOOFF) and leaves
/// something skarn warns about after the run (a nested repository with
/// core.fsmonitor) does not make skarn block on that warning: output is
/// resumed first, and the warning is written.
#[test]
fn host_terminal_is_restored_after_the_run() {
    let t = TempDir::new("pty");
    let driver = script(t.path(), "driver.py", PTY_DRIVER);
    for (timeout, cmd) in [
        (
            "60",
            "stty -echo; stty -a | grep -o -- ' -echo ' ; stty cols 33 rows 11 || echo resize-refused; echo inner-done",
        ),
        ("2", "stty -echo; echo inner-done; exec sleep 60"),
        (
            "60",
            "git init -q sub && git -C sub config core.fsmonitor evil && echo inner-done && \
             python3 -c 'import termios; termios.tcflow(1, termios.TCOOFF)'",
        ),
    ] {
        let out = Command::new("python3")
            .arg(&driver)
            .arg(SKARN)
            .args(["run", "--no-config", "--timeout", timeout, "--workspace"])
            .arg(t.path())
            .args(["--", "sh", "-c", cmd])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.starts_with("echo=True size=40x100"),
            "{cmd}\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("inner-done"), "{stdout}");
        if cmd.contains("TCOOFF") {
            assert!(stdout.contains("rc=0"), "{stdout}");
            // The direct mode quarantines the repository, the layer does
            // not apply it: either way the warning was written.
            assert!(
                stdout.contains("skarn-quarantine") || stdout.contains("sub/.git"),
                "{stdout}"
            );
        } else if timeout == "60" {
            assert!(stdout.contains(" -echo "), "echo change inside: {stdout}");
            assert!(stdout.contains("resize-refused"), "{stdout}");
            assert!(stdout.contains("rc=0"), "{stdout}");
        } else {
            assert!(stdout.contains("rc=124"), "{stdout}");
        }
    }
}

/// Namespaces planned but refused at run time (here by a seccomp filter on
/// `unshare`, as a container runtime's profile would): the helper runs the
/// plan's own fallback, planned for the host without namespaces, so the
/// command still cannot write outside the workspace (Landlock), and the
/// report says why the run is degraded.
#[test]
fn namespaces_refused_at_run_time_fall_back_to_the_planned_plan() {
    use std::os::unix::process::CommandExt;
    let t = TempDir::new("nsfail");
    let ws = t.join("ws");
    let outside = t.join("outside");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let progs = skarn_sandbox::linux::seccomp::deny_programs(&[]).unwrap();
    let mut c = Command::new(SKARN);
    c.args(["run", "--no-config", "--report", "--workspace"])
        .arg(&ws)
        .args(["--", "sh", "-c"])
        .arg(format!(
            "echo in > {}/inside; echo out > {}/escaped",
            ws.display(),
            outside.display()
        ));
    // SAFETY: between fork and exec only prctl and seccomp(2) run; the
    // programs were compiled before the fork.
    unsafe {
        c.pre_exec(move || {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            skarn_sandbox::linux::seccomp::install(&progs).map_err(std::io::Error::other)
        });
    }
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("creating namespaces failed at run time"),
        "{err}"
    );
    assert!(!outside.join("escaped").exists(), "wrote outside: {err}");
    assert!(ws.join("inside").exists(), "workspace not writable: {err}");
}
