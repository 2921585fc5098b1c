//! The boundary attempts of `skarn doctor --self-test` (attack round 3):
//! a home start-up file and a secret that link into the workspace, a host
//! server's socket inside it, and `/tmp` itself as the workspace. All in
//! the self-test's scratch directory; each verdict decided from outside.

use std::os::unix::fs::symlink;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::{Command, Stdio};

use super::doctor_probe::{first_line, sandboxed};

/// Run the attempts under `root` (holding `ws` and `home`); `push` records
/// (attempt, escaped, detail).
pub(super) fn attempts(
    exe: &Path,
    root: &Path,
    push: &mut dyn FnMut(&str, bool, String),
) -> anyhow::Result<()> {
    let (ws, home) = (root.join("ws"), root.join("home"));
    let rc = ws.join("linked-bashrc");
    std::fs::write(&rc, "# rc\n")?;
    symlink(&rc, home.join(".bashrc"))?;
    let rc_s = rc.display().to_string();
    let (_, o) = sandboxed(exe, root, "deny", &[], &["write", &rc_s]);
    let changed = std::fs::read_to_string(&rc).map_or(true, |s| s != "# rc\n");
    push(
        "change a home start-up file that links into the workspace",
        changed,
        first_line(&o),
    );

    let secret = "skarn-selftest-LINKED-SECRET-41c9";
    let creds = ws.join("linked-creds");
    std::fs::write(&creds, secret)?;
    std::fs::create_dir_all(home.join(".aws"))?;
    symlink(&creds, home.join(".aws/credentials"))?;
    let creds_s = creds.display().to_string();
    let (_, o) = sandboxed(exe, root, "deny", &[], &["read", &creds_s]);
    push(
        "read a secret that links into the workspace",
        o.contains(secret),
        first_line(&o),
    );

    let sock = ws.join("host-server.sock");
    let l = UnixListener::bind(&sock)?;
    l.set_nonblocking(true)?;
    let sock_s = sock.display().to_string();
    let (_, o) = sandboxed(exe, root, "deny", &[], &["unix", &sock_s]);
    push(
        "connect to a host server's socket inside the workspace",
        l.accept().is_ok(),
        first_line(&o),
    );

    let o = Command::new(exe)
        .args(["run", "--no-config", "--workspace", "/tmp", "--", "true"])
        .env("HOME", &home)
        .stdin(Stdio::null())
        .output()?;
    push(
        "run with /tmp itself as the workspace (host sockets there)",
        o.status.success(),
        first_line(&String::from_utf8_lossy(&o.stderr)),
    );
    Ok(())
}
