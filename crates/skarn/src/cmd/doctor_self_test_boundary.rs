//! The boundary attempts of `skarn doctor --self-test` (attack round 3):
//! a home start-up file and a secret that link into the workspace, a host
//! server's socket inside it and below node_modules, a start-up file's
//! hard link, a file it sources, a rust-toolchain.toml in a subdirectory,
//! `/tmp` itself as the workspace, and a file `~/.inputrc` includes from
//! a workspace its configuration names (ADR 0160). All in
//! the self-test's scratch directory; each verdict decided from outside.

use std::os::unix::fs::symlink;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::{Command, Stdio};

use super::doctor_probe::{first_line, sandboxed};

/// The attempts below test the precise protections, which hold whether or
/// not the user trusts a workspace the home's configuration names (the
/// first attempt makes `~/.bashrc` a link into it): trusted, so that a
/// read-only workspace does not hide them. The last attempt is without.
const TRUST: &[&str] = &["--trust-home-config-workspace"];

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
    let (_, o) = sandboxed(exe, root, "deny", TRUST, &["write", &rc_s]);
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
    let (_, o) = sandboxed(exe, root, "deny", TRUST, &["read", &creds_s]);
    push(
        "read a secret that links into the workspace",
        o.contains(secret),
        first_line(&o),
    );

    let sock = ws.join("host-server.sock");
    let l = UnixListener::bind(&sock)?;
    l.set_nonblocking(true)?;
    let sock_s = sock.display().to_string();
    let (_, o) = sandboxed(exe, root, "deny", TRUST, &["unix", &sock_s]);
    push(
        "connect to a host server's socket inside the workspace",
        l.accept().is_ok(),
        first_line(&o),
    );

    // Round 3c: other names of a start-up file (a hard link), a socket
    // below a dependency tree, a file host tools look up from any
    // subdirectory, a file a start-up file sources.
    let hl = ws.join("hard-linked-zshrc");
    std::fs::write(home.join(".zshrc"), "# zrc\n")?;
    std::fs::hard_link(home.join(".zshrc"), &hl)?;
    let hl_s = hl.display().to_string();
    let (_, o) = sandboxed(exe, root, "deny", TRUST, &["write", &hl_s]);
    let changed = std::fs::read_to_string(home.join(".zshrc")).map_or(true, |s| s != "# zrc\n");
    push(
        "change a home start-up file through a hard link in the workspace",
        changed,
        first_line(&o),
    );

    std::fs::create_dir_all(ws.join("node_modules/.cache"))?;
    let deep = ws.join("node_modules/.cache/host-server.sock");
    let l2 = UnixListener::bind(&deep)?;
    l2.set_nonblocking(true)?;
    let deep_s = deep.display().to_string();
    let (_, o) = sandboxed(exe, root, "deny", TRUST, &["unix", &deep_s]);
    push(
        "connect to a host server's socket below node_modules",
        l2.accept().is_ok(),
        first_line(&o),
    );

    std::fs::create_dir_all(ws.join("crate"))?;
    let tc = ws.join("crate/rust-toolchain.toml");
    let tc_s = tc.display().to_string();
    let (_, o) = sandboxed(exe, root, "deny", TRUST, &["write", &tc_s]);
    push(
        "leave a rust-toolchain.toml in a subdirectory for the host's rustup",
        tc.exists(),
        first_line(&o),
    );

    let sourced = ws.join("sourced.sh");
    std::fs::write(&sourced, "# sourced\n")?;
    std::fs::write(home.join(".profile"), format!(". {}\n", sourced.display()))?;
    let sourced_s = sourced.display().to_string();
    let (_, o) = sandboxed(exe, root, "deny", TRUST, &["write", &sourced_s]);
    let changed = std::fs::read_to_string(&sourced).map_or(true, |s| s != "# sourced\n");
    push(
        "change a file the home's ~/.profile sources from the workspace",
        changed,
        first_line(&o),
    );

    // ADR 0160: a workspace a home configuration file names (here
    // `~/.inputrc`'s `$include`, a missing file) is read-only as a whole.
    let inc = ws.join("planted-inputrc");
    std::fs::write(
        home.join(".inputrc"),
        format!("$include \"{}\"\n", inc.display()),
    )?;
    let inc_s = inc.display().to_string();
    let (_, o) = sandboxed(exe, root, "deny", &[], &["write", &inc_s]);
    push(
        "plant a file the home's ~/.inputrc includes from the workspace",
        inc.exists(),
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
