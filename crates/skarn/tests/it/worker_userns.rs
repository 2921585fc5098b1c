//! `isolation = auto` confines the worker as uid 0 of an unprivileged user
//! namespace (rootless containers, CI sandboxes), where uid 65534 is not
//! mapped: it takes a nested user namespace instead of falling back to
//! in-process (for `skarn exec` without servers, the same confinement is
//! applied to the exec process itself). Checked by running `skarn exec`
//! under `unshare -r` as an
//! unprivileged user (as root the test drops to 65534 first with setpriv).

use std::process::Command;

use skarn_test_support::TempDir;

const SKARN: &str = env!("CARGO_BIN_EXE_skarn");

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

#[test]
fn root_of_an_unprivileged_user_namespace_still_gets_the_worker() {
    if !have("unshare") || !have("setpriv") {
        skarn_test_support::skip!("unshare or setpriv missing");
    }
    // The binary must be reachable by uid 65534.
    let tmp = TempDir::new("userns");
    let dir = tmp.path();
    let bin = dir.join("skarn");
    std::fs::copy(SKARN, &bin).unwrap();
    use std::os::unix::fs::PermissionsExt;
    for p in [dir, bin.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let mut cmd = if unsafe { libc::geteuid() } == 0 {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "unshare",
            "-r",
        ]);
        c
    } else {
        let mut c = Command::new("unshare");
        c.arg("-r");
        c
    };
    let probe = Command::new("unshare").args(["-r", "true"]).status();
    if !matches!(probe, Ok(s) if s.success()) {
        skarn_test_support::skip!("this host allows no unprivileged user namespace");
    }
    let out = cmd
        .arg(&bin)
        .args(["exec", "--json", "--code", "return 1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let v: serde_json::Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: stdout {stdout:?}, stderr {stderr:?}"));
    assert_eq!(v["value"], 1, "{v} {stderr}");
    // Without servers, `auto` applies the worker's confinement to the exec
    // process itself (`self_confined`); either way, never in-process.
    assert!(
        v["isolation"] == "worker" || v["isolation"] == "self_confined",
        "{v} {stderr}"
    );
    assert!(!stderr.contains("in-process"), "{stderr}");
}
