//! The escape attempts of `skarn doctor --self-test`: listeners, a secret
//! and a victim process on the host, then one sandboxed probe per attempt,
//! each verdict decided from outside the sandbox.

use std::io::Read;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::{Command, Stdio};

use super::doctor_probe::{Attempt, Scratch, first_line, sandboxed, vsock_attempt, wait_accept};

pub(super) fn self_test() -> anyhow::Result<Vec<Attempt>> {
    use std::net::{TcpListener, UdpSocket};
    let exe = std::fs::canonicalize("/proc/self/exe")?;
    let root = std::env::temp_dir().join(format!("skarn-selftest-{}", std::process::id()));
    std::fs::create_dir_all(&root)?;
    let scratch = Scratch(root.clone());
    for d in ["ws", "outside", "home/.ssh", "sock"] {
        std::fs::create_dir_all(root.join(d))?;
    }
    let secret = "skarn-selftest-SECRET-7f3a";
    std::fs::write(root.join("home/.ssh/id_ed25519"), secret)?;
    let tcp = TcpListener::bind("127.0.0.1:0")?;
    tcp.set_nonblocking(true)?;
    let tcp_addr = tcp.local_addr()?.to_string();
    let udp = UdpSocket::bind("127.0.0.1:0")?;
    udp.set_nonblocking(true)?;
    let udp_addr = udp.local_addr()?.to_string();
    let sock_path = root.join("sock/host.sock");
    let unix = UnixListener::bind(&sock_path)?;
    unix.set_nonblocking(true)?;
    let abs_name = format!("skarn-selftest-{}", std::process::id());
    let abs = {
        use std::os::linux::net::SocketAddrExt;
        let a = std::os::unix::net::SocketAddr::from_abstract_name(abs_name.as_bytes())?;
        UnixListener::bind_addr(&a)?
    };
    abs.set_nonblocking(true)?;
    let mut victim = Command::new("sleep")
        .arg("120")
        .stdin(Stdio::null())
        .spawn()?;
    let victim_pid = victim.id().to_string();

    let tcp_got = |l: &TcpListener| l.accept().is_ok();
    let unix_got = |l: &UnixListener| -> bool {
        match l.accept() {
            Ok((mut s, _)) => {
                let mut b = Vec::new();
                let _ = s.set_nonblocking(false);
                let _ = s.set_read_timeout(Some(std::time::Duration::from_millis(200)));
                let _ = s.read_to_end(&mut b);
                true
            }
            Err(_) => false,
        }
    };
    let mut out = Vec::new();
    let mut push = |attempt: &str, escaped: bool, detail: String| {
        // "... reachable/works ..." entries check that the sandbox lets
        // real work through; every other entry is an escape attempt.
        let works_check = attempt.starts_with("works: ");
        out.push(Attempt {
            attempt: attempt.trim_start_matches("works: ").into(),
            escaped,
            detail,
            works_check,
        })
    };
    let r = |s: &str| root.join(s).display().to_string();

    let target = r("outside/escape.txt");
    let (_, o) = sandboxed(&exe, &root, "deny", &[], &["write", &target]);
    push(
        "write a file outside the workspace",
        Path::new(&target).exists(),
        first_line(&o),
    );

    let target = r("home/planted");
    let home = r("home");
    let (_, o) = sandboxed(&exe, &root, "deny", &["--read", &home], &["write", &target]);
    push(
        "write into a read-only grant",
        Path::new(&target).exists(),
        first_line(&o),
    );

    let key = r("home/.ssh/id_ed25519");
    let (_, o) = sandboxed(&exe, &root, "deny", &["--read", &home], &["read", &key]);
    push(
        "read ~/.ssh key inside a granted home",
        o.contains(secret),
        first_line(&o),
    );

    for net in ["deny", "loopback"] {
        let (_, o) = sandboxed(&exe, &root, net, &[], &["tcp", &tcp_addr]);
        push(
            &format!("TCP to a host listener (--net {net})"),
            tcp_got(&tcp),
            first_line(&o),
        );
    }
    for net in ["deny", "loopback"] {
        let (_, o) = sandboxed(&exe, &root, net, &[], &["udp", &udp_addr]);
        let mut b = [0u8; 64];
        push(
            &format!("UDP to a host socket (--net {net})"),
            udp.recv(&mut b).is_ok(),
            first_line(&o),
        );
    }
    for net in ["deny", "loopback", "outbound", "all"] {
        let (_, o) = sandboxed(&exe, &root, net, &[], &["abstract", &abs_name]);
        push(
            &format!("abstract unix socket on the host (--net {net})"),
            unix_got(&abs),
            first_line(&o),
        );
    }
    for net in ["deny", "outbound"] {
        let sp = sock_path.display().to_string();
        let (_, o) = sandboxed(&exe, &root, net, &[], &["unix", &sp]);
        push(
            &format!("pathname unix socket outside grants (--net {net})"),
            unix_got(&unix),
            first_line(&o),
        );
    }
    let (_, o) = sandboxed(&exe, &root, "outbound", &[], &["tcp-bind", "0.0.0.0:0"]);
    push(
        "inbound TCP bind (--net outbound)",
        o.starts_with("ESCAPED"),
        first_line(&o),
    );
    for net in ["deny", "outbound"] {
        let (_, o) = sandboxed(&exe, &root, net, &[], &["kill", &victim_pid]);
        let alive = victim.try_wait().map(|s| s.is_none()).unwrap_or(false);
        push(
            &format!("signal a host process (--net {net})"),
            !alive,
            first_line(&o),
        );
    }
    let (_, o) = sandboxed(&exe, &root, "outbound", &[], &["ptrace", &victim_pid]);
    push(
        "ptrace a host process",
        o.starts_with("ESCAPED"),
        first_line(&o),
    );
    for (name, probe) in [
        ("io_uring_setup", "io_uring"),
        ("unshare a new user namespace", "unshare"),
        ("ioctl TIOCLINUX (seccomp)", "tioclinux"),
    ] {
        let (_, o) = sandboxed(&exe, &root, "deny", &[], &[probe, ""]);
        push(name, o.starts_with("ESCAPED"), first_line(&o));
    }

    // A set-uid file created through openat2 (mode behind a pointer):
    // decided by the file's mode, from outside.
    let target = r("ws/suid-openat2");
    let (_, o) = sandboxed(&exe, &root, "deny", &[], &["setuid-openat2", &target]);
    let setid = {
        use std::os::unix::fs::PermissionsExt;
        std::fs::symlink_metadata(&target)
            .map(|m| m.permissions().mode() & 0o6000 != 0)
            .unwrap_or(false)
    };
    push("set-uid file via openat2", setid, first_line(&o));

    // A vsock listener (the vsock port space is shared with the host):
    // while the probe would hold it, the host binds the same port.
    for net in ["deny", "loopback"] {
        let (escaped, detail) = vsock_attempt(&exe, &root, net);
        push(&format!("vsock listener (--net {net})"), escaped, detail);
    }

    // 1 GiB MAP_GROWSDOWN (counted as stack, not data) under --memory 64:
    // decided by the exit status and the probe's last word.
    let (code, o) = sandboxed(
        &exe,
        &root,
        "deny",
        &["--memory", "64"],
        &["growsdown", "1024"],
    );
    push(
        "touch 1 GiB MAP_GROWSDOWN under --memory 64",
        code == 0 && o.contains("touched 1024 MiB"),
        format!("exit {code}; {}", first_line(&o)),
    );

    // A persistence path that does not exist yet (read by direnv on the
    // host): decided by whether a regular file is there afterwards.
    let target = r("ws/.envrc");
    let (_, o) = sandboxed(&exe, &root, "deny", &[], &["write", &target]);
    push(
        "create a missing persistence file (.envrc) in the workspace",
        std::fs::symlink_metadata(&target).is_ok_and(|m| m.is_file()),
        first_line(&o),
    );

    // Move the parent of a --deny-read file aside, so that a later run
    // would not find it where it masks it: decided by where it is after.
    std::fs::create_dir_all(root.join("ws/conf"))?;
    std::fs::write(root.join("ws/conf/secret.env"), secret)?;
    let deny = r("ws/conf/secret.env");
    let (_, o) = sandboxed(
        &exe,
        &root,
        "deny",
        &["--deny-read", &deny],
        &["rename", &r("ws/conf"), &r("ws/moved")],
    );
    push(
        "rename the parent of a masked file",
        !Path::new(&deny).exists() || root.join("ws/moved").exists(),
        first_line(&o),
    );

    // A grant through a link a command planted in the workspace, pointing
    // at the secret: refused before anything runs.
    let link = root.join("ws/keys");
    std::os::unix::fs::symlink(root.join("home/.ssh"), &link)?;
    let (_, o) = sandboxed(
        &exe,
        &root,
        "deny",
        &["--read", &link.display().to_string()],
        &["read", &r("ws/keys/id_ed25519")],
    );
    push(
        "grant through a symlink planted in the workspace",
        o.contains(secret),
        first_line(&o),
    );

    // ---- egress (issue 11): one allowed and one denied host ----
    let other = TcpListener::bind("127.0.0.1:0")?;
    other.set_nonblocking(true)?;
    let other_addr = other.local_addr()?.to_string();
    let allow = format!("allow:{tcp_addr}");
    let (_, o) = sandboxed(&exe, &root, &allow, &[], &["proxy-connect", &tcp_addr]);
    let reached = wait_accept(&tcp);
    push(
        "works: allowed host reachable through the proxy (--net allow)",
        !reached,
        first_line(&o),
    );
    let (_, o) = sandboxed(&exe, &root, &allow, &[], &["proxy-connect", &other_addr]);
    push(
        "unlisted host through the proxy (--net allow)",
        wait_accept(&other),
        first_line(&o),
    );
    let (_, o) = sandboxed(&exe, &root, &allow, &[], &["tcp", &tcp_addr]);
    push(
        "direct TCP bypassing the proxy (--net allow)",
        tcp_got(&tcp),
        first_line(&o),
    );
    super::doctor_self_test_boundary::attempts(&exe, &root, &mut push)?;
    let _ = victim.kill();
    let _ = victim.wait();
    drop(scratch);
    Ok(out)
}
