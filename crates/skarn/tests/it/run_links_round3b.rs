//! `skarn run`: regressions for the findings of the attack on round 3's
//! first fixes (links on the way, hard links, shell-expanded program
//! paths, relative PATH entries, worktree and rebase state, secrets in
//! system grants, control strings in skarn's own messages, ssh includes,
//! skarn's other configuration files, git directories as workspaces).
//! Each attempted for real and checked from outside.

use std::os::unix::fs::symlink;
use std::path::Path;

use crate::common::*;
use skarn_test_support::TempDir;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| format!("<{e}>"))
}

/// F1/F1b: a link on the way from the home name to its target, inside
/// the workspace, cannot be re-pointed or replaced.
#[test]
fn links_on_the_way_inside_the_workspace_cannot_be_replaced() {
    let t = TempDir::new("r3b-hops");
    let home = t.dir("home");
    let ws = t.dir("home/dotfiles");
    t.file("home/dotfiles/real/bashrc", "echo ORIG\n");
    t.file("home/dotfiles/real/skarn.toml", "[run]\nnet = \"deny\"\n");
    t.dir("home/.config/skarn");
    symlink("real/bashrc", ws.join("bashrc")).unwrap();
    symlink("real/skarn.toml", ws.join("cfglink")).unwrap();
    symlink("dotfiles/bashrc", home.join(".bashrc")).unwrap();
    symlink(ws.join("cfglink"), home.join(".config/skarn/config.toml")).unwrap();
    // Older than the after-run check's 50 ms margin for coarse file-system
    // clocks (a file changed within it counts as the run's).
    std::thread::sleep(std::time::Duration::from_millis(200));
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "rm -f bashrc; echo 'echo PWNED' > bashrc; rm -f cfglink; \
             printf '[run]\\nnet = \"all\"\\n' > cfglink; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&home.join(".bashrc")), "echo ORIG\n", "{}", err(&o));
    assert!(
        read(&home.join(".config/skarn/config.toml")).contains("deny"),
        "{}",
        err(&o)
    );
}

/// F2b: skarn's own configuration with other names (hard links) is not
/// trusted.
#[test]
fn a_hard_linked_user_config_is_not_used() {
    let t = TempDir::new("r3b-hard");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let cfg = t.file("home/dotfiles/skarn.cfg", "[run]\nnet = \"all\"\n");
    t.dir("home/.config/skarn");
    std::fs::hard_link(&cfg, home.join(".config/skarn/config.toml")).unwrap();
    let o = std::process::Command::new(exe())
        .args(["run", "--report", "--workspace"])
        .arg(&ws)
        .args(["--", "true"])
        .env("HOME", &home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(err(&o).contains("net: deny"), "{}", err(&o));
}

/// F3/F36/F21: program paths the shell expands (`$HOME/...`), `--file=`
/// options and `LESSOPEN` are protected; a credential store file is hidden.
#[test]
fn shell_expanded_program_paths_are_protected() {
    let t = TempDir::new("r3b-expand");
    let home = t.dir("home");
    let ws = t.dir("home/proj");
    t.file("home/proj/tools/pager", "#!/bin/sh\ncat\n");
    t.file("home/proj/tools/lesspipe.sh", "#!/bin/sh\n");
    t.file("home/proj/gl-creds", "https://u:glpat-STORESECRET@host\n");
    t.file(
        "home/.gitconfig",
        format!(
            "[core]\n pager = \"$HOME/proj/tools/pager\"\n[credential]\n helper = \"store --file={}/gl-creds\"\n",
            ws.display()
        ),
    );
    let o = run_command(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo evil > tools/pager; echo evil > tools/lesspipe.sh; cat gl-creds; true",
        ],
    )
    .env(
        "LESSOPEN",
        format!("|{}/tools/lesspipe.sh %s", ws.display()),
    )
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("tools/pager")), "#!/bin/sh\ncat\n");
    assert_eq!(read(&ws.join("tools/lesspipe.sh")), "#!/bin/sh\n");
    assert!(!out(&o).contains("STORESECRET"), "{}", out(&o));
}

/// F4: a relative PATH entry (the shell looks it up from the current
/// directory, the workspace) refuses the workspace (attack atk22 F2: it
/// makes the workspace a PATH directory for host shells started there);
/// nothing is written.
#[test]
fn relative_path_entries_are_protected() {
    let t = TempDir::new("r3b-relpath");
    let home = t.dir("home");
    let ws = t.dir("home/proj");
    t.dir("home/proj/bin");
    t.dir("home/proj/hb");
    let path = format!(
        "bin:~/proj/hb:{}",
        std::env::var("PATH").unwrap_or_default()
    );
    let o = run_command(
        &ws,
        &home,
        &[],
        &["sh", "-c", "echo x > bin/ls; echo x > hb/ls; true"],
    )
    .env("PATH", &path)
    .output()
    .unwrap();
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("relative entry"), "{}", err(&o));
    assert!(!ws.join("bin/ls").exists(), "{}", err(&o));
    assert!(!ws.join("hb/ls").exists(), "{}", err(&o));
}

/// F10/F11/F22: a linked worktree's rebase state and `config.worktree`,
/// and a recorded merge strategy, left by a run never reach host git.
#[test]
fn worktree_and_rebase_state_left_by_a_run_never_reach_host_git() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("no git on the host");
    }
    let t = TempDir::new("r3b-worktree");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    t.file("ws/a", "1\n");
    git(&ws, &["add", "a"]);
    git(&ws, &["commit", "-qm", "one"]);
    let wt = t.join("wt");
    git(&ws, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "d=$(ls -d .git/worktrees/*); mkdir -p $d/rebase-merge .git/rebase-merge; \
             printf 'exec touch PWNED\\n' > $d/rebase-merge/git-rebase-todo; \
             printf 'x/evil\\n' > .git/rebase-merge/strategy; \
             printf '[core]\\n\\tfsmonitor = \"touch PWNED\"\\n' > $d/config.worktree; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let wtd = std::fs::read_dir(ws.join(".git/worktrees"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    assert!(!wtd.join("rebase-merge").exists(), "{}", err(&o));
    assert!(!ws.join(".git/rebase-merge").exists(), "{}", err(&o));
    assert!(!read(&wtd.join("config.worktree")).contains("fsmonitor"));
}

/// F19: a secret linking into a default system grant is hidden there.
#[test]
fn secrets_linking_into_system_directories_are_hidden() {
    let t = TempDir::new("r3b-syssecret");
    let home = t.dir("home");
    let ws = t.dir("ws");
    t.dir("home/.kube");
    symlink("/etc/hostname", home.join(".kube/config")).unwrap();
    if !Path::new("/etc/hostname").is_file() {
        skarn_test_support::skip!("no /etc/hostname");
    }
    let want = read(Path::new("/etc/hostname"));
    let o = run_in(&ws, &home, &[], &["sh", "-c", "cat /etc/hostname; true"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!want.trim().is_empty());
    assert!(!out(&o).contains(want.trim()), "{}", out(&o));
}

/// F20: names the command chose are printed with control characters
/// spelled out.
#[test]
fn skarns_warnings_spell_out_control_characters() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("no git on the host");
    }
    let t = TempDir::new("r3b-printable");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "ln -s \"$(printf 'x\\033]52;c;QQ==\\007y')\" .git/evil; true",
        ],
    );
    assert!(err(&o).contains(".git/evil"), "{}", err(&o));
    assert!(!err(&o).contains('\x1b'), "{:?}", err(&o));
}

/// F24: a directory inside a git directory is no workspace.
#[test]
fn git_directories_are_not_workspaces() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("no git on the host");
    }
    let t = TempDir::new("r3b-gitws");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    let hooks = ws.join(".git/hooks");
    let o = run_in(&hooks, &home, &[], &["sh", "-c", "echo x > post-commit"]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(!hooks.join("post-commit").exists());
}

/// F26/F27: `Include` files of `~/.ssh/config` and skarn's other
/// configuration files named by the environment are never writable.
#[test]
fn ssh_includes_and_skarn_env_configs_are_protected() {
    let t = TempDir::new("r3b-sshinc");
    let home = t.dir("home");
    let ws = t.dir("home/dotfiles");
    t.file("home/dotfiles/ssh/work.conf", "# hosts\n");
    t.file("home/dotfiles/gw.toml", "# gateway\n");
    t.file(
        "home/.ssh/config",
        format!("Include {}/ssh/*.conf\n", ws.display()),
    );
    let o = run_command(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo 'Match exec \"touch PWNED\"' > ssh/work.conf; echo x > ssh/new.conf; \
             echo '[servers.x]' >> gw.toml; true",
        ],
    )
    .env("SKARN_CONFIG", ws.join("gw.toml"))
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("ssh/work.conf")), "# hosts\n");
    assert!(!ws.join("ssh/new.conf").exists());
    assert_eq!(read(&ws.join("gw.toml")), "# gateway\n");
}

/// F16/F18: a home entry of any name linking into the workspace, and,
/// with the home as the workspace, `~/node_modules` and `~/go`.
#[test]
fn any_home_link_and_non_dot_program_dirs_are_protected() {
    let t = TempDir::new("r3b-anylink");
    let home = t.dir("home");
    let ws = t.dir("home/dotfiles");
    t.file("home/dotfiles/hgrc", "[hooks]\n");
    t.file("home/dotfiles/whatever", "x\n");
    symlink(ws.join("hgrc"), home.join(".hgrc")).unwrap();
    symlink(ws.join("whatever"), home.join(".some-unlisted-tool-rc")).unwrap();
    let o = run_in(
        &ws,
        &home,
        &[],
        &["sh", "-c", "echo evil > hgrc; echo evil > whatever; true"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("hgrc")), "[hooks]\n");
    assert_eq!(read(&ws.join("whatever")), "x\n");
    let o = run_in(
        &home,
        &home,
        &["--allow-home-workspace"],
        &["sh", "-c", "mkdir -p node_modules/x go/bin; true"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!home.join("node_modules").exists(), "{}", err(&o));
    assert!(!home.join("go").exists(), "{}", err(&o));
}

/// F8: skarn's configuration directory kept in the dotfiles repository
/// (through a link in it) does not stop runs there.
#[test]
fn a_config_dir_linked_into_the_workspace_does_not_break_runs() {
    let t = TempDir::new("r3b-cfgdir");
    let home = t.dir("home");
    let ws = t.dir("home/dotfiles");
    t.file(
        "home/dotfiles/skarn-real/config.toml",
        "[run]\nnet = \"deny\"\n",
    );
    symlink("skarn-real", ws.join("skarnlink")).unwrap();
    t.dir("home/.config");
    symlink(ws.join("skarnlink"), home.join(".config/skarn")).unwrap();
    let o = run_in(
        &ws,
        &home,
        &[],
        &["sh", "-c", "echo evil > skarn-real/config.toml; echo ok"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o), "ok\n");
    assert!(read(&ws.join("skarn-real/config.toml")).contains("deny"));
}

/// F17: a file the repository's configuration includes, whose directory
/// does not exist yet, cannot be created.
#[test]
fn a_missing_include_with_a_missing_directory_is_reserved() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("no git on the host");
    }
    let t = TempDir::new("r3b-inc");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    git(&ws, &["config", "include.path", "../tools/git/branch.inc"]);
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "mkdir -p tools/git; printf '[core]\\n\\tfsmonitor = \"touch PWNED\"\\n' > tools/git/branch.inc; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!ws.join("tools/git/branch.inc").exists(), "{}", err(&o));
}

/// F5: a host socket at the top of the git directory is hidden too.
#[test]
fn sockets_in_the_git_directory_are_unreachable() {
    let t = TempDir::new("r3b-gitsock");
    let home = t.dir("home");
    let ws = t.dir("ws");
    t.dir("ws/.git");
    let sock = ws.join(".git/fsmonitor--daemon.ipc");
    let l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    l.set_nonblocking(true).unwrap();
    let s = sock.display().to_string();
    let o = probe(&ws, &home, &[], &["unix", &s]);
    assert_ne!(code(&o), 0, "reachable: {}", out(&o));
    assert!(l.accept().is_err(), "the host listener got a connection");
}
