//! The usability of `command` sources run in their private view (ADR
//! 0283), what helper h27p changed, each checked from outside: a
//! set-group-ID program of root's named as the one plain command of a
//! shell string keeps its privilege (ADR 0302), and one reached any other
//! way fails with an error that says why.

use std::process::Command;

use skarn_test_support::TempDir;

use crate::common::{code, err, out, run_command};
use crate::support_secret_sources::{as_user, is_root, write_config};

/// The user `as_user` runs as, by name.
fn user_name(dir: &std::path::Path) -> Option<String> {
    let o = as_user(
        {
            let mut c = Command::new("id");
            c.arg("-un");
            c
        },
        dir,
    )
    .output()
    .ok()?;
    let n = String::from_utf8_lossy(&o.stdout).trim().to_string();
    (o.status.success() && !n.is_empty()).then_some(n)
}

/// A set-group-ID program of root's that prints a value only its group
/// may read, as 1Password's `op` reaches its desktop app through its
/// set-group-ID bit; `None` when none can be had. As root: a copy of
/// `cat` (group `shadow`) and a value file of that group, in a directory
/// the unprivileged user may enter but not change. Otherwise the system's
/// `chage -l USER` (set-group-ID `shadow`, reads `/etc/shadow`), whose
/// several lines the secret refuses as a value: that refusal shows its
/// output was read.
fn set_gid_source(keep: &std::path::Path, user: &str) -> Option<(String, bool)> {
    use std::os::unix::fs::PermissionsExt;
    if !is_root() {
        return Some((format!("/usr/bin/chage -l {user}"), false));
    }
    let cat = keep.join("gcat");
    let val = keep.join("val");
    std::fs::copy("/bin/cat", &cat).ok()?;
    std::fs::write(&val, "setGidValue0123456789abcdefXYZ\n").ok()?;
    let ok = Command::new("chown")
        .arg("root:shadow")
        .args([&cat, &val])
        .status()
        .ok()?
        .success();
    if !ok {
        return None;
    }
    std::fs::set_permissions(&cat, std::fs::Permissions::from_mode(0o2755)).ok()?;
    std::fs::set_permissions(&val, std::fs::Permissions::from_mode(0o640)).ok()?;
    Some((format!("{} {}", cat.display(), val.display()), true))
}

/// A set-group-ID program of root's written as the one plain command of
/// a shell string, with or without `exec`, now keeps its privilege for an
/// unprivileged user (before: it ran in the user namespace of ADR 0283,
/// where the bit has no effect, and failed); with a pipe it still runs in
/// the view, and the error names the program and what to write instead.
#[test]
fn a_set_group_id_program_in_a_plain_shell_string_keeps_its_privilege() {
    let t = TempDir::new("h27p_setid");
    let keep = TempDir::new("h27p_setid_prog");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let Some(user) = user_name(t.path()) else {
        skarn_test_support::skip!("no unprivileged user to run as");
    };
    let in_ns = as_user(
        {
            let mut c = Command::new("unshare");
            c.args(["--user", "--map-current-user", "true"]);
            c
        },
        t.path(),
    )
    .status();
    if !matches!(in_ns, Ok(s) if s.success()) {
        skarn_test_support::skip!(
            "no unprivileged user namespace: sources run in the caller's view"
        );
    }
    let Some((src, clean)) = set_gid_source(keep.path(), &user) else {
        skarn_test_support::skip!("no set-group-ID program of root's to run as {user}");
    };
    let probe = as_user(
        {
            let mut c = Command::new("sh");
            c.args(["-c", &src]);
            c
        },
        t.path(),
    )
    .output();
    if !matches!(&probe, Ok(o) if o.status.success()) {
        skarn_test_support::skip!("{src} does not work for {user} here");
    }
    let in_view = as_user(
        {
            let mut c = Command::new("unshare");
            c.args(["--user", "--map-current-user", "sh", "-c", &src]);
            c
        },
        t.path(),
    )
    .output()
    .unwrap();
    assert!(
        !in_view.status.success(),
        "{src} works without its privilege"
    );
    write_config(
        &home,
        &format!(
            "[secrets.plain]\ncommand = [\"sh\", \"-c\", \"{src}\"]\nhosts = [\"example.test\"]\n\n\
             [secrets.viaexec]\ncommand = [\"/bin/bash\", \"-c\", \"exec {src}\"]\nhosts = [\"example.test\"]\n\n\
             [secrets.piped]\ncommand = [\"sh\", \"-c\", \"{src} | cat\"]\nhosts = [\"example.test\"]\n"
        ),
    );
    for name in ["plain", "viaexec"] {
        let var = name.to_ascii_uppercase();
        let o = as_user(
            run_command(
                &ws,
                &home,
                &["--secret", name],
                &["sh", "-c", &format!("echo \"{var}=${var}\"")],
            ),
            t.path(),
        )
        .output()
        .unwrap();
        let (line, e) = (out(&o), err(&o));
        assert!(!e.contains("exited with"), "{name}: the source failed: {e}");
        if clean {
            assert_eq!(code(&o), 0, "{name}: {line}{e}");
            assert!(
                line.starts_with(&format!("{var}=")) && line.trim().len() > var.len() + 8,
                "{name}: {line}{e}"
            );
            assert!(!line.contains("setGidValue"), "{line}");
        } else {
            // chage's lines were read: only their form is refused.
            assert!(
                e.contains("the value holds control characters"),
                "{name}: {e}"
            );
        }
    }
    let o = as_user(
        run_command(&ws, &home, &["--secret", "piped"], &["true"]),
        t.path(),
    )
    .output()
    .unwrap();
    assert_ne!(code(&o), 0, "{}{}", out(&o), err(&o));
    let e = err(&o);
    assert!(
        e.contains("a set-user-ID or set-group-ID program of root's") && e.contains("ADR 0302"),
        "{e}"
    );
}
