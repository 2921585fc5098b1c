//! The failure line (issue 23 item 6, ADR 0182): printed only when this
//! run recorded a denial (the network namespace's no-route counters, the
//! proxy's refusals, a layer's refused changes), naming it, with the fix
//! for a person at a terminal and the fact alone for a model (ADR 0240);
//! never after a command that fails on its own.

use crate::common::*;
use skarn_test_support::TempDir;

const LINE: &str = "skarn: sandbox:";

#[test]
fn a_command_that_fails_on_its_own_gets_no_line() {
    let t = TempDir::new("fail-7");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let o = run_in(
        &ws,
        &home,
        &[],
        &["sh", "-c", "echo failing test >&2; exit 7"],
    );
    assert_eq!(code(&o), 7);
    assert!(!err(&o).contains(LINE), "{}", err(&o));
    // --report --json says no denial was recorded.
    let o = run_in(&ws, &home, &["--report", "--json"], &["sh", "-c", "exit 7"]);
    assert_eq!(code(&o), 7);
    assert!(!err(&o).contains("\"denied\""), "{}", err(&o));
    assert!(err(&o).contains("no denial was recorded"), "{}", err(&o));
}

#[test]
fn a_refused_name_lookup_is_named_with_the_flag_or_as_a_fact_alone() {
    if !host_has("getent", "--version") && !std::path::Path::new("/usr/bin/getent").exists() {
        skarn_test_support::skip!("getent is not installed");
    }
    let t = TempDir::new("fail-net");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let cmd = ["sh", "-c", "getent hosts skarn-test.invalid"];
    let o = run_in(&ws, &home, &[], &cmd);
    assert_ne!(code(&o), 0);
    let e = err(&o);
    let line = e.lines().find(|l| l.starts_with(LINE)).unwrap_or_default();
    assert!(line.contains("network:"), "{e}");
    assert!(line.contains("--net allow:"), "{e}");
    // Behind the hook (or the gateway) a model reads the line: the fact,
    // no advice to widen (issue 24 item 5, attack atk24i F1).
    let o = run_command(&ws, &home, &[], &cmd)
        .env("SKARN_CALLER", "hook")
        .output()
        .unwrap();
    let e = err(&o);
    let line = e.lines().find(|l| l.starts_with(LINE)).unwrap_or_default();
    assert!(line.contains("network:"), "{e}");
    assert!(
        !line.contains("under [run]") && !line.contains("allow:"),
        "{e}"
    );
    // An agent's own marker in the command's environment says the same
    // (Claude Code sets CLAUDECODE for the commands it runs).
    let o = run_command(&ws, &home, &[], &cmd)
        .env("CLAUDECODE", "1")
        .output()
        .unwrap();
    let e = err(&o);
    let line = e.lines().find(|l| l.starts_with(LINE)).unwrap_or_default();
    assert!(
        line.contains("network:") && !line.contains("under [run]") && !line.contains("allow:"),
        "{e}"
    );
    // In --report --json too.
    let o = run_in(&ws, &home, &["--report", "--json"], &cmd);
    assert!(err(&o).contains("\"kind\":\"network\""), "{}", err(&o));
}

// Pinned to `--workspace-layer direct`: asserts the direct mode's own
// mechanism (placeholders, set-aside names or its messages); the default
// layer refuses the same plants when applied (ADR 0226).
#[test]
fn a_refused_write_to_a_protected_path_is_named_with_its_reason() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("fail-write");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert!(git(&ws, &["init", "-q"]).status.success());
    let o = run_in(
        &ws,
        &home,
        &["--workspace-layer", "direct"],
        &[
            "sh",
            "-c",
            "echo 'touch /tmp/p' > .git/hooks/post-checkout; exit 1",
        ],
    );
    assert_eq!(code(&o), 1);
    assert!(!ws.join(".git/hooks/post-checkout").exists());
    let e = err(&o);
    let line = e.lines().find(|l| l.starts_with(LINE)).unwrap_or_default();
    assert!(line.contains("write .git/hooks"), "{e}");
    assert!(line.contains("protected path"), "{e}");
    assert!(!line.contains("writes outside"), "{e}");
    assert!(!line.contains("--net"), "{e}");
}

/// Issue 23 item 6: a read outside the grants leaves no kernel record
/// (the path is not in the run's root: a missing file). When the command
/// fails and names such a path, the line names it and, for a person at a
/// terminal, the grant; a model gets the fact alone (ADR 0240). With the
/// grant the same command reads the file.
#[test]
fn a_path_outside_the_grants_the_command_names_is_said_with_its_grant() {
    let t = TempDir::new("fail-read");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let outside = t.dir("outside");
    let f = outside.join("data.csv");
    std::fs::write(&f, "a,b\n").unwrap();
    let fs = f.to_str().unwrap();
    let o = run_in(&ws, &home, &[], &["cat", fs]);
    assert_ne!(code(&o), 0, "{}", out(&o));
    let e = err(&o);
    let line = e.lines().find(|l| l.starts_with(LINE)).unwrap_or_default();
    assert!(line.contains(fs) && line.contains("missing file"), "{e}");
    assert!(line.contains(&format!("--read {fs}")), "{e}");
    // Behind the hook: the fact, no advice to widen.
    let script = format!("wc -l < {fs}");
    let o = run_command(&ws, &home, &[], &["sh", "-c", &script])
        .env("SKARN_CALLER", "hook")
        .output()
        .unwrap();
    let e = err(&o);
    let line = e.lines().find(|l| l.starts_with(LINE)).unwrap_or_default();
    assert!(line.contains(fs), "{e}");
    assert!(
        !line.contains("--read") && !line.contains("under [run]"),
        "{e}"
    );
    // The grant it names works.
    let o = run_in(&ws, &home, &["--read", fs], &["cat", fs]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o), "a,b\n");
    // A path the run may read, a failure of the command's own: no line.
    let o = run_in(
        &ws,
        &home,
        &[],
        &["sh", "-c", "cat /etc/hostname >/dev/null; exit 3"],
    );
    assert_eq!(code(&o), 3);
    assert!(!err(&o).contains(LINE), "{}", err(&o));
}
