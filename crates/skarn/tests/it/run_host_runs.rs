//! `skarn run`, attack round 3: files a host program runs on its own
//! (toolchain files, other VCS configurations, agent and editor
//! configurations, rebase instruction lists, git alternates) and host
//! servers' sockets inside writable grants. Each attempted for real and
//! checked from outside.

use std::io::Read;
use std::path::Path;

use crate::common::*;
use skarn_test_support::TempDir;

fn sh(ws: &Path, home: &Path, script: &str) -> std::process::Output {
    run_in(ws, home, &[], &["sh", "-c", script])
}

#[test]
fn files_host_tools_run_on_their_own_cannot_be_planted() {
    let t = TempDir::new("hostruns-files");
    let home = t.dir("home");
    let ws = t.dir("ws");
    t.file("ws/proj.code-workspace", "{}\n");
    t.file("ws/.aider.conf.yml", "lint-cmd: true\n");
    // Older than the check's 50 ms margin for coarse file-system clocks
    // (a file changed within it counts as the run's).
    std::thread::sleep(std::time::Duration::from_millis(200));
    let o = sh(
        &ws,
        &home,
        "printf '[toolchain]\\npath = \"/tmp/evil\"\\n' > rust-toolchain.toml; \
         echo evil > rust-toolchain; \
         mkdir -p .hg; printf '[hooks]\\npre-status = touch PWNED\\n' > .hg/hgrc; \
         mkdir -p .jj/repo; echo x > .jj/repo/config.toml; \
         mkdir .kiro .roo .continue .helix .amazonq; echo x > .bazeliskrc; echo '{}' > crush.json; echo x > .nvim.lua; \
         echo x > .exrc; echo x > .lfsconfig; echo evil > proj.code-workspace; \
         echo evil > .aider.conf.yml; echo ok > src.txt; true",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    for f in [
        "rust-toolchain.toml",
        "rust-toolchain",
        ".hg/hgrc",
        ".jj/repo/config.toml",
        ".kiro",
        ".roo",
        ".continue",
        ".helix",
        ".amazonq",
        ".bazeliskrc",
        "crush.json",
        ".nvim.lua",
        ".exrc",
        ".lfsconfig",
    ] {
        assert!(!ws.join(f).exists(), "{f} was created: {}", err(&o));
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("proj.code-workspace")).unwrap(),
        "{}\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join(".aider.conf.yml")).unwrap(),
        "lint-cmd: true\n"
    );
    assert_eq!(std::fs::read_to_string(ws.join("src.txt")).unwrap(), "ok\n");
}

/// A rebase instruction list with an `exec` line left by the run is set
/// aside: the host's `git rebase --continue` cannot run it. Git's own
/// rebase still works inside.
#[test]
fn rebase_todo_exec_lines_left_by_a_run_are_set_aside() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("no git on the host");
    }
    let t = TempDir::new("hostruns-rebase");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    t.file("ws/a", "1\n");
    git(&ws, &["add", "a"]);
    git(&ws, &["commit", "-qm", "one"]);
    let o = sh(
        &ws,
        &home,
        "mkdir -p .git/rebase-merge .git/sequencer && \
         printf 'pick 0000 one\\nexec touch PWNED\\n' > .git/rebase-merge/git-rebase-todo && \
         printf 'x touch PWNED\\n' > .git/sequencer/todo",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    for f in ["rebase-merge/git-rebase-todo", "sequencer/todo"] {
        let p = ws.join(".git").join(f);
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        assert!(!text.contains("PWNED"), "{f} still runs the planted line");
    }
    // Set aside after the run (direct), or never applied to the repository
    // (the git layer, ADR 0181; the workspace layer, ADRs 0130 and 0226).
    assert!(
        err(&o).contains("set aside")
            || err(&o).contains("rebase or cherry-pick state")
            || err(&o).contains("were not applied to the workspace: .git/rebase-merge"),
        "{}",
        err(&o)
    );
}

/// `objects/info/alternates` cannot send host git to objects elsewhere.
#[test]
fn git_alternates_cannot_be_planted() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("no git on the host");
    }
    let t = TempDir::new("hostruns-alt");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    let o = sh(
        &ws,
        &home,
        "echo /elsewhere > .git/objects/info/alternates; true",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!ws.join(".git/objects/info/alternates").exists());
}

/// A host server's socket inside the workspace (a project database with
/// trust authentication) is unreachable under the default network policy;
/// the listener gets nothing.
#[test]
fn host_sockets_in_writable_grants_are_unreachable() {
    let t = TempDir::new("hostruns-sock");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let dir = t.dir("ws/.devenv/state/postgres");
    let sock = dir.join(".s.PGSQL.5432");
    let l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    l.set_nonblocking(true).unwrap();
    let s = sock.display().to_string();
    let o = probe(&ws, &home, &[], &["unix", &s]);
    assert_ne!(code(&o), 0, "the socket was reachable: {}", out(&o));
    let mut got = Vec::new();
    if let Ok((mut c, _)) = l.accept() {
        let _ = c.read_to_end(&mut got);
        panic!("the host listener got a connection: {got:?}");
    }
}

/// The private home's copies of the user's dotfiles carry no token,
/// wherever it sits (an alias's URL, an index URL's query or path).
#[test]
fn sanitised_dotfiles_carry_no_token_anywhere() {
    let t = TempDir::new("hostruns-dotfiles");
    let home = t.dir("home");
    let ws = t.dir("ws");
    t.file(
        "home/.gitconfig",
        "[user]\n name = Ada\n[alias]\n pub = push https://u:TOKEN-ONE@host/x\n lg = log\n",
    );
    t.file(
        "home/.config/pip/pip.conf",
        "[global]\nextra-index-url = https://idx.example/simple?token=TOKEN-TWO\ntimeout = 5\n",
    );
    let o = sh(
        &ws,
        &home,
        "cat ~/.gitconfig ~/.config/pip/pip.conf 2>/dev/null; true",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let seen = out(&o);
    assert!(seen.contains("Ada"), "the identity is kept: {seen}");
    assert!(
        !seen.contains("TOKEN"),
        "a token reached the sandbox: {seen}"
    );
}

/// Control strings in the command's output (an OSC 52 clipboard write, a
/// title report request) never reach the terminal or, with `--compress`,
/// the agent; colours do.
#[test]
fn terminal_control_strings_are_neutralised() {
    let t = TempDir::new("hostruns-tty");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let payload = "printf 'A\\033]52;c;ZXZpbA==\\007B\\033[21t\\033[31mred\\033[0m\\n'";
    // --compress: the text for the agent.
    let o = run_in(&ws, &home, &["--compress"], &["sh", "-c", payload]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let s = out(&o);
    assert!(!s.contains("\x1b]52") && !s.contains("[21t"), "{s:?}");
    // A terminal: through `script`, which gives skarn a pseudo-terminal.
    if !host_has("script", "--version") {
        skarn_test_support::skip!("terminal half: no `script` on the host");
    }
    // Also written to the terminal through fd 0 (the command's input).
    let both = format!("{payload}; {payload} >&0");
    let line = format!(
        "{} run --no-config --workspace {} -- sh -c \"{}\"",
        exe().display(),
        ws.display(),
        both.replace('"', "\\\"")
    );
    let o = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env("HOME", &home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let s = out(&o);
    assert!(s.contains("AB"), "{s:?}");
    assert!(s.contains("\x1b[31mred"), "colours are kept: {s:?}");
    assert!(!s.contains("\x1b]52") && !s.contains("[21t"), "{s:?}");
}
