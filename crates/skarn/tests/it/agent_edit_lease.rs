//! Attack atk24j F7 (ADR 0244): a confined run that *starts* after the
//! hook allowed a file-tool write (a parallel subagent; the user taking
//! time to approve the edit) must not be able to swap the path for a link
//! before the tool writes. The hook leaves a lease; every run prepared
//! while it is pending holds the path and the directories on its way.
//! Judged from outside: the home's start-up file after the tool's write.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use crate::support_hook::{FILE_GUARD, claude_hook};
use skarn_test_support::TempDir;

/// Run `skarn hook claude-code` on `input` with HOME=home.
fn hook(ws: &Path, home: &Path, input: &Value) -> Output {
    claude_hook(ws, home, None, FILE_GUARD, input)
}

/// The hook lets Claude Code's Write of `file` (call `id`) go ahead.
fn allowed(ws: &Path, home: &Path, id: &str, file: &Path) {
    let o = hook(
        ws,
        home,
        &json!({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_use_id": id,
                "cwd": ws, "tool_input": {"file_path": file, "content": "x"}}),
    );
    assert_eq!(code(&o), 0, "{o:?}");
    assert!(o.stdout.is_empty(), "the Write is allowed: {o:?}");
}

/// Claude Code's PostToolUse after that Write.
fn written(ws: &Path, home: &Path, id: &str, file: &Path) {
    let o = hook(
        ws,
        home,
        &json!({"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_use_id": id,
                "cwd": ws, "tool_input": {"file_path": file, "content": "x"},
                "tool_response": {"filePath": file, "success": true}}),
    );
    assert_eq!(code(&o), 0, "{o:?}");
    assert!(o.stdout.is_empty(), "{o:?}");
}

/// A confined shell command in `ws` (what the hook makes of a Bash call).
fn confined(ws: &Path, home: &Path, script: &str) -> Output {
    run_in(ws, home, &[], &["sh", "-c", script])
}

fn project(t: &TempDir) -> (std::path::PathBuf, std::path::PathBuf) {
    let (ws, home) = (t.dir("home/ws"), t.path().join("home"));
    git(&ws, &["init", "-q"]);
    std::fs::write(home.join(".bashrc"), "# my bashrc\n").unwrap();
    (ws, home)
}

#[test]
fn a_run_started_after_an_allowed_write_cannot_turn_its_path_into_a_link() {
    let t = TempDir::new("edit_lease_swap");
    let (ws, home) = project(&t);
    let rc = home.join(".bashrc");
    let rcs = rc.to_str().unwrap();
    std::fs::write(ws.join("notes.md"), "notes\n").unwrap();
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::write(ws.join("docs/guide.md"), "guide\n").unwrap();
    // Three allowed writes: an existing file, one under a directory the
    // run renames, and a new file.
    let (notes, guide, new) = (
        ws.join("notes.md"),
        ws.join("docs/guide.md"),
        ws.join("new.md"),
    );
    allowed(&ws, &home, "toolu_1", &notes);
    allowed(&ws, &home, "toolu_2", &guide);
    allowed(&ws, &home, "toolu_3", &new);
    // Then (another subagent, or while the user reads the diff) confined
    // commands start and swap the names.
    let o = confined(&ws, &home, &format!("rm -f notes.md; ln -s {rcs} notes.md"));
    confined(
        &ws,
        &home,
        &format!("mv docs docs.old; mkdir -p docs; ln -s {rcs} docs/guide.md"),
    );
    confined(&ws, &home, &format!("ln -s {rcs} new.md"));
    // The tool writes now, following whatever is there (as Claude Code's
    // Write does).
    for f in [&notes, &guide, &new] {
        let _ = std::fs::write(f, "echo PWNED-by-write\n");
    }
    assert_eq!(
        std::fs::read_to_string(&rc).unwrap(),
        "# my bashrc\n",
        "the agent's Write landed in the home's start-up file"
    );
    for f in [&notes, &guide, &new] {
        let md = std::fs::symlink_metadata(f).unwrap();
        assert!(md.is_file(), "{} is a plain file", f.display());
    }
    assert!(
        err(&o).contains("pending edit") && err(&o).contains("notes.md"),
        "the failure line says why: {}",
        err(&o)
    );
}

#[test]
fn a_run_after_the_write_or_after_the_lease_expired_works_as_before() {
    let t = TempDir::new("edit_lease_after");
    let (ws, home) = project(&t);
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        "[hook]\nedit_lease = \"1s\"\n",
    )
    .unwrap();
    let (a, b) = (ws.join("a.md"), ws.join("b.md"));
    std::fs::write(&a, "a\n").unwrap();
    std::fs::write(&b, "b\n").unwrap();
    // Dropped by PostToolUse once written.
    allowed(&ws, &home, "toolu_a", &a);
    std::fs::write(&a, "written\n").unwrap();
    written(&ws, &home, "toolu_a", &a);
    // Claude Code's lease does not end by time (atk24l F2: the user may
    // still be approving); dropped by PostToolUseFailure (the tool failed).
    allowed(&ws, &home, "toolu_b", &b);
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let o = confined(&ws, &home, "rm b.md && ln -s a.md b.md");
    assert_ne!(code(&o), 0, "held past edit_lease: {}", err(&o));
    assert!(!std::fs::symlink_metadata(&b).unwrap().is_symlink());
    let o = hook(
        &ws,
        &home,
        &json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Write",
                "tool_use_id": "toolu_b", "cwd": ws,
                "tool_input": {"file_path": b, "content": "x"}, "error": "rejected"}),
    );
    assert_eq!(code(&o), 0, "{o:?}");
    let o = confined(
        &ws,
        &home,
        "mv a.md a.old && echo replaced > a.md && rm b.md && ln -s a.md b.md",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "replaced\n");
    assert!(std::fs::symlink_metadata(&b).unwrap().is_symlink());
}

/// `skarn init --client claude-code` installs the PostToolUse hook, and
/// its command (run through `/bin/sh -c`, as Claude Code runs it) drops
/// the lease the PreToolUse one left: a run afterwards replaces the file.
#[test]
fn init_installs_the_post_tool_hook_that_drops_the_lease() {
    let t = TempDir::new("edit_lease_init");
    let (ws, home) = project(&t);
    let o = Command::new(exe())
        .args(["init", "--client", "claude-code"])
        .current_dir(&ws)
        .env("HOME", &home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join(".claude/settings.json")).unwrap())
            .unwrap();
    let post = &v["hooks"]["PostToolUse"][0];
    assert_eq!(post["matcher"], "Write|Edit|MultiEdit|NotebookEdit", "{v}");
    let cmd = post["hooks"][0]["command"].as_str().unwrap().to_string();
    assert_eq!(
        Some(cmd.as_str()),
        v["hooks"]["PreToolUse"][0]["hooks"][0]["command"].as_str()
    );
    let f = ws.join("notes.md");
    std::fs::write(&f, "notes\n").unwrap();
    allowed(&ws, &home, "toolu_i", &f);
    let mut c = Command::new("/bin/sh")
        .args(["-c", &cmd])
        .current_dir(&ws)
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = json!({"hook_event_name": "PostToolUse", "tool_name": "Write",
                       "tool_use_id": "toolu_i", "cwd": ws,
                       "tool_input": {"file_path": f, "content": "x"}});
    let _ = c
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes());
    let o = c.wait_with_output().unwrap();
    assert_eq!(code(&o), 0, "{o:?}");
    let o = confined(
        &ws,
        &home,
        "mv notes.md notes.old && echo replaced > notes.md",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "replaced\n");
}

/// The write goes through a link at the top of the workspace
/// (`readme.md -> docs/readme.md`): the run cannot point the link at the
/// home's start-up file either.
#[test]
fn a_link_on_the_way_cannot_be_repointed_by_a_later_run() {
    let t = TempDir::new("edit_lease_link");
    let (ws, home) = project(&t);
    let rc = home.join(".bashrc");
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::write(ws.join("docs/readme.md"), "readme\n").unwrap();
    std::os::unix::fs::symlink("docs/readme.md", ws.join("readme.md")).unwrap();
    let f = ws.join("readme.md");
    allowed(&ws, &home, "toolu_l", &f);
    let rcs = rc.to_str().unwrap();
    let o = confined(
        &ws,
        &home,
        &format!("rm -f readme.md; ln -s {rcs} readme.md"),
    );
    let _ = std::fs::write(&f, "echo PWNED-by-write\n");
    assert_eq!(
        std::fs::read_to_string(&rc).unwrap(),
        "# my bashrc\n",
        "the agent's Write landed in the home's start-up file ({})",
        err(&o)
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("docs/readme.md")).unwrap(),
        "echo PWNED-by-write\n"
    );
}
