//! `skarn compress` and `skarn recall` from the outside: real processes,
//! real files, checked on disk.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use skarn_test_support::TempDir;

fn fixture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../skarn-compress/fixtures")
        .join(name);
    std::fs::read(p).unwrap()
}

/// Run skarn with `args`, stdin `input`, cwd `cwd`, a private HOME and
/// state directory so nothing touches the real user's files.
fn skarn(cwd: &Path, home: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skarn"))
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SKARN_RECALL_DIR")
        .env_remove("SKARN_COMPRESS_RULES")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn handle_id(stdout: &[u8]) -> String {
    let text = String::from_utf8_lossy(stdout);
    let last = text.trim_end().lines().last().unwrap().to_string();
    let id = last
        .split("skarn recall ")
        .nth(1)
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or_else(|| panic!("no handle in last line {last:?}"));
    id.to_string()
}

#[test]
fn compress_then_recall_gives_back_every_byte() {
    let home = TempDir::new("home");
    let ws = TempDir::new("ws");
    let raw = fixture("cargo_clippy.out");
    let out = skarn(
        ws.path(),
        home.path(),
        &["compress", "--command", "cargo clippy", "--stats"],
        &raw,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.len() * 4 < raw.len(), "compressed");
    let id = handle_id(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("tokens "), "{stderr}");
    assert!(stderr.contains("profile cargo"), "{stderr}");
    assert!(stderr.contains(&format!("recall {id}")), "{stderr}");

    // Saved in the user's state dir, private, and nothing in the workspace.
    let dir = home.path().join(".local/state/skarn/recall");
    let file = dir.join(format!("{id}.log"));
    assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
    assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o600);
    assert_eq!(std::fs::read_dir(ws.path()).unwrap().count(), 0);

    let back = skarn(ws.path(), home.path(), &["recall", &id], b"");
    assert!(back.status.success());
    assert_eq!(back.stdout, raw, "recall prints the raw output in full");

    let list = skarn(ws.path(), home.path(), &["recall", "--list"], b"");
    assert!(String::from_utf8_lossy(&list.stdout).contains(&id));
}

#[test]
fn short_output_passes_unchanged_and_saves_nothing() {
    let home = TempDir::new("home");
    let raw =
        b"   Compiling demo v0.1.0\n    Finished `dev` profile [unoptimized] target(s) in 0.5s\n";
    let out = skarn(
        home.path(),
        home.path(),
        &["compress", "--command", "cargo build", "--exit-code", "0"],
        raw,
    );
    assert!(out.status.success());
    assert_eq!(out.stdout, raw);
    assert!(
        !home.path().join(".local/state/skarn/recall").exists() || {
            std::fs::read_dir(home.path().join(".local/state/skarn/recall"))
                .unwrap()
                .count()
                == 0
        }
    );
}

#[test]
fn recall_rejects_bad_and_unknown_ids_with_one_line() {
    let home = TempDir::new("home");
    for bad in [
        "../../../../etc/passwd",
        "ABCDEF012345",
        "123",
        "0123456789ab/",
    ] {
        let out = skarn(home.path(), home.path(), &["recall", bad], b"");
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("skarn: error: invalid recall id"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(out.stdout.is_empty());
    }
    let out = skarn(home.path(), home.path(), &["recall", "0123456789ab"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no saved output"));
}

#[test]
fn state_dir_inside_the_workspace_is_refused_and_nothing_is_cut() {
    let home = TempDir::new("home");
    let ws = TempDir::new("ws");
    let raw = fixture("cargo_clippy.out");
    let inside = ws.path().join(".skarn-state");
    let out = skarn(
        ws.path(),
        home.path(),
        &[
            "compress",
            "--command",
            "cargo clippy",
            "--state-dir",
            inside.to_str().unwrap(),
        ],
        &raw,
    );
    assert!(out.status.success());
    assert_eq!(out.stdout, raw, "without a safe store, nothing is cut");
    assert!(String::from_utf8_lossy(&out.stderr).contains("inside the workspace"));
    let leftovers: Vec<_> = walk(ws.path())
        .into_iter()
        .filter(|p| p.is_file())
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn walk(p: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            let path = e.path();
            v.push(path.clone());
            if path.is_dir() {
                v.extend(walk(&path));
            }
        }
    }
    v
}

#[test]
fn a_planted_symlink_state_dir_is_refused() {
    let home = TempDir::new("home");
    let elsewhere = TempDir::new("elsewhere");
    std::fs::create_dir_all(home.path().join(".local/state/skarn")).unwrap();
    std::os::unix::fs::symlink(
        elsewhere.path(),
        home.path().join(".local/state/skarn/recall"),
    )
    .unwrap();
    let raw = fixture("cargo_clippy.out");
    let out = skarn(
        home.path(),
        home.path(),
        &["compress", "--command", "cargo clippy"],
        &raw,
    );
    assert!(out.status.success());
    assert_eq!(out.stdout, raw);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unsafe"));
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

#[test]
fn old_entries_are_pruned() {
    let home = TempDir::new("home");
    let dir = home.path().join("state");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let old = dir.join("00000000beef.log");
    std::fs::write(&old, b"old output").unwrap();
    let st = Command::new("touch")
        .args(["-d", "2001-01-01"])
        .arg(&old)
        .status()
        .unwrap();
    assert!(st.success());
    let out = skarn(
        home.path(),
        home.path(),
        &[
            "compress",
            "--command",
            "cargo clippy",
            "--state-dir",
            dir.to_str().unwrap(),
            "--max-age",
            "1d",
        ],
        &fixture("cargo_clippy.out"),
    );
    assert!(out.status.success());
    assert!(!old.exists(), "entry older than --max-age pruned");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn user_rules_add_a_profile_and_bad_rules_fail_cleanly() {
    let home = TempDir::new("home");
    let cfg = home.path().join(".config/skarn");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("compress.toml"),
        r#"
[[profile]]
name = "deploytool"
commands = ['^deploytool\b']
keep = ['^DEPLOY FAILED']
drop = ['^uploading chunk \d+']
"#,
    )
    .unwrap();
    let mut raw = String::new();
    for i in 0..500 {
        raw.push_str(&format!("uploading chunk {i} of 500\n"));
    }
    raw.push_str("DEPLOY FAILED: quota exceeded\n");
    let out = skarn(
        home.path(),
        home.path(),
        &["compress", "--command", "deploytool push", "--stats"],
        raw.as_bytes(),
    );
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("DEPLOY FAILED: quota exceeded\n"));
    assert!(!text.contains("uploading chunk 7 "));
    assert!(String::from_utf8_lossy(&out.stderr).contains("profile deploytool"));

    std::fs::write(
        cfg.join("compress.toml"),
        "[[profile]]\nname = 'x'\nkeep = ['(unclosed']\ncommands=['^x']\n",
    )
    .unwrap();
    let out = skarn(
        home.path(),
        home.path(),
        &["compress", "--command", "x"],
        b"hi\n",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("skarn: error:") && err.contains("bad pattern"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    let out = skarn(
        home.path(),
        home.path(),
        &["compress", "--rules", "/nonexistent/rules.toml"],
        b"hi\n",
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bad_flags_are_usage_errors() {
    let home = TempDir::new("home");
    for args in [
        &["compress", "--max-age", "soon"][..],
        &["compress", "--max-entry-size", "lots"][..],
        &["compress", "--profile", "nope"][..],
        &["compress", "--exit-code", "x"][..],
    ] {
        let out = skarn(home.path(), home.path(), args, b"hi\n");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn invalid_utf8_and_colour_codes_are_handled() {
    let home = TempDir::new("home");
    let mut raw = Vec::new();
    for i in 0..2000 {
        raw.extend_from_slice(format!("\x1b[32mline {i}\x1b[0m ").as_bytes());
        raw.extend_from_slice(b"\xff\xfe ok\n");
    }
    raw.extend_from_slice(b"\x1b[31merror: the thing broke\x1b[0m\n");
    let out = skarn(
        home.path(),
        home.path(),
        &["compress", "--command", "sometool", "--exit-code", "1"],
        &raw,
    );
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("error: the thing broke\n"), "{text}");
    assert!(out.stdout.len() < raw.len() / 10);
}

/// Panics, failure summaries and a failing command's tail survive even
/// when an earlier `error[E0308]` block (no blank line after it) runs on
/// into a long test log, and a huge last line is cut rather than dropped
/// with its neighbours. `skarn recall` still gives back every byte.
#[test]
fn failures_and_the_tail_of_a_failed_command_are_kept() {
    let home = TempDir::new("home");
    let ws = TempDir::new("ws");
    let mut a = String::from("error[E0308]: mismatched types\n --> src/lib.rs:3:5\n");
    for i in 0..6000 {
        a.push_str(&format!("test t{i} ... ok\n"));
    }
    a.push_str("thread 'main' panicked at src/main.rs:9:5:\nFAILED: 1 test failed\n");
    a.push_str("error: test failed, to rerun pass `--lib`\n");
    let long = "y".repeat(200_000);
    let mut b = String::new();
    for i in 0..3000 {
        b.push_str(&format!("test t{i} ... ok\n"));
    }
    b.push_str(&format!("FAILED: t7\n{long}\n"));
    for (input, command) in [
        (&a, "cargo test"),
        (&b, "cargo test"),
        (&b, "git log"),
        (&b, ""),
    ] {
        let out = skarn(
            ws.path(),
            home.path(),
            &["compress", "--command", command, "--exit-code", "1"],
            input.as_bytes(),
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let text = String::from_utf8(out.stdout.clone()).unwrap();
        assert!(text.len() < 10_000, "{command}: {} bytes", text.len());
        let want: &[&str] = if std::ptr::eq(input, &a) {
            &[
                "error[E0308]: mismatched types",
                "thread 'main' panicked at src/main.rs:9:5:",
                "FAILED: 1 test failed",
                "error: test failed, to rerun pass `--lib`",
            ]
        } else {
            &["FAILED: t7"]
        };
        for line in want {
            assert!(
                text.lines().any(|l| l == *line),
                "{command}: {line:?} missing from:\n{text}"
            );
        }
        if std::ptr::eq(input, &b) {
            let cut = text
                .lines()
                .find(|l| l.starts_with("yyyy"))
                .unwrap_or_else(|| panic!("{command}: the long line is gone:\n{text}"));
            assert!(
                cut.len() < 2200 && cut.contains("bytes of this line cut"),
                "{cut}"
            );
        }
        let id = handle_id(&out.stdout);
        let back = skarn(ws.path(), home.path(), &["recall", &id], b"");
        assert_eq!(back.stdout, input.as_bytes(), "{command}");
    }
}
