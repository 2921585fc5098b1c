//! `skarn run`, issue 22 (helper h22g, ADR 0257): commits the run packed
//! (`git gc`, `git repack`, a local fetch that keeps a pack) are vetted
//! as loose ones are. Judged from outside: the host checks out the run's
//! branch and enters the directory (direnv sources `.envrc`); the
//! planted code did not run, and the repository's old history is intact.
//! And the user's own untracked `.envrc`, committed unchanged by the run,
//! does not make that commit set aside.

use std::path::Path;

use crate::common::*;
use crate::support_git::{enter, planted_commit, ran, report_ran, report_script, settle};
use skarn_test_support::TempDir;

const LAYERS: &[&str] = &["direct", "cow"];

/// A repository with one commit; its hash.
fn repo(t: &TempDir, ws: &Path) -> String {
    git(ws, &["init", "-q", "-b", "main"]);
    t.file("ws/README", "hi\n");
    git(ws, &["add", "README"]);
    git(ws, &["commit", "-qm", "one"]);
    let o = git(ws, &["rev-parse", "HEAD"]);
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// On the host: check out `agent`, enter the directory (direnv sources
/// `.envrc`).
fn host_checks_out_agent(ws: &Path) {
    let _ = git(ws, &["checkout", "-q", "agent"]);
    enter(ws);
}

#[test]
fn a_commit_the_run_packed_cannot_bring_a_protected_file_to_the_host() {
    let ways = [
        ("gc", "git gc -q"),
        ("repack", "git repack -a -d -q"),
        (
            "fetch",
            "src=$(mktemp -d) && git clone -q . $src/r && cd $src/r && \
             b=$(printf 'touch @M@\\n' | git hash-object -w --stdin) && \
             git update-index --add --cacheinfo 100644,$b,.envrc && \
             git -c user.name=a -c user.email=a@a commit -qm planted && cd - >/dev/null && \
             git -c fetch.unpackLimit=1 fetch -q $src/r main:agent",
        ),
    ];
    for layer in LAYERS {
        for (name, how) in ways {
            let t = TempDir::new("packs22g");
            let home = t.dir("home");
            let ws = t.dir("ws");
            let one = repo(&t, &ws);
            settle();
            let marker = t.join("PLANTED-RAN");
            let script = if name == "fetch" {
                format!(
                    "{}; echo packed=$?; ls .git/objects/pack; echo RAN",
                    how.replace("@M@", &marker.display().to_string())
                )
            } else {
                format!(
                    "{}{how}; echo packed=$?; ls .git/objects/pack; echo RAN",
                    planted_commit(&marker)
                )
            };
            let o = run_command(
                &ws,
                &home,
                &["--report", "--workspace-layer", layer],
                &["sh", "-c", &script],
            )
            .current_dir(&ws)
            .output()
            .unwrap();
            let said = format!("{}{}", out(&o), err(&o));
            assert!(
                said.contains("RAN") && said.contains("packed=0") && said.contains(".pack"),
                "{layer} {name}: the command did not pack: {said}"
            );
            host_checks_out_agent(&ws);
            assert!(
                !marker.exists(),
                "{layer} {name}: the run's packed commit brought the planted .envrc to the \
                 host: {said}"
            );
            // The history from before the run is intact.
            let _ = git(&ws, &["checkout", "-q", "-f", "main"]);
            let o = git(&ws, &["cat-file", "-p", &format!("{one}^{{tree}}")]);
            assert!(
                o.status.success() && String::from_utf8_lossy(&o.stdout).contains("README"),
                "{layer} {name}: the repository lost its old commit: {} {said}",
                err(&o)
            );
        }
    }
}

#[test]
fn the_users_own_untracked_envrc_committed_unchanged_keeps_its_commit() {
    for layer in LAYERS {
        for pack in [false, true] {
            let t = TempDir::new("ownenvrc22g");
            let home = t.dir("home");
            let ws = t.dir("ws");
            repo(&t, &ws);
            t.file("ws/.envrc", "export PROJ=1\n");
            settle();
            let gc = if pack { "git gc -q; " } else { "" };
            let script = format!(
                "echo more > NOTES; git add -A; \
                 git -c user.name=a -c user.email=a@a commit -qm all; echo c=$?; {gc}echo RAN"
            );
            let o = run_command(
                &ws,
                &home,
                &["--report", "--workspace-layer", layer],
                &["sh", "-c", &script],
            )
            .current_dir(&ws)
            .output()
            .unwrap();
            let said = format!("{}{}", out(&o), err(&o));
            assert!(
                said.contains("RAN") && said.contains("c=0"),
                "{layer} pack={pack}: the command did not commit: {said}"
            );
            let log = git(&ws, &["log", "--format=%s", "-1"]);
            assert!(
                String::from_utf8_lossy(&log.stdout).contains("all"),
                "{layer} pack={pack}: the commit of the user's own files was set aside: {} {said}",
                err(&log)
            );
            let show = git(&ws, &["show", "HEAD:.envrc"]);
            assert!(
                String::from_utf8_lossy(&show.stdout).contains("PROJ=1"),
                "{layer} pack={pack}: the commit's .envrc is not readable: {} {said}",
                err(&show)
            );
        }
    }
}

#[test]
fn a_commit_of_a_tree_an_earlier_run_stored_is_vetted() {
    // Attack atk22h F1: run 1 stores the tree (no commit), run 2 commits it.
    for layer in LAYERS {
        let t = TempDir::new("earlier22g");
        let home = t.dir("home");
        let ws = t.dir("ws");
        repo(&t, &ws);
        settle();
        let marker = t.join("PLANTED-RAN");
        let one = format!(
            "b=$(printf 'touch {m}\\n' | git hash-object -w --stdin); \
             r=$(git rev-parse HEAD:README); \
             tr=$(printf '100644 blob %s\\t.envrc\\n100644 blob %s\\tREADME\\n' $b $r | git mktree); \
             echo $tr > .git/agent-tree; echo RAN1",
            m = marker.display()
        );
        let said1 = report_script(&ws, &home, layer, &one);
        assert!(
            said1.contains("RAN1"),
            "{layer}: run 1 did not run: {said1}"
        );
        settle();
        let two = "c=$(git -c user.name=a -c user.email=a@a commit-tree $(cat .git/agent-tree) \
                   -p HEAD -m agent) && git update-ref refs/heads/agent $c && echo RAN2";
        let said2 = report_script(&ws, &home, layer, two);
        assert!(
            said2.contains("RAN2"),
            "{layer}: run 2 did not run: {said2}"
        );
        host_checks_out_agent(&ws);
        assert!(
            !marker.exists(),
            "{layer}: a commit of a tree an earlier run stored brought the planted .envrc to \
             the host: {said1} {said2}"
        );
    }
}

#[test]
fn a_commit_in_a_nested_repository_is_vetted() {
    // Attack atk22h F8: a repository inside the workspace.
    for layer in LAYERS {
        let t = TempDir::new("nested22g");
        let home = t.dir("home");
        let ws = t.dir("ws");
        repo(&t, &ws);
        let core = t.dir("ws/libs/core");
        git(&core, &["init", "-q", "-b", "main"]);
        t.file("ws/libs/core/lib.txt", "x\n");
        git(&core, &["add", "lib.txt"]);
        git(&core, &["commit", "-qm", "init"]);
        settle();
        let marker = t.join("PLANTED-RAN");
        let script = format!("cd libs/core && {}echo RAN", planted_commit(&marker));
        let said = report_ran(&ws, &home, layer, &script);
        host_checks_out_agent(&core);
        assert!(
            !marker.exists(),
            "{layer}: the nested repository's commit brought the planted .envrc to the host: \
             {said}"
        );
    }
}

#[test]
fn a_gitmodules_staged_through_the_index_only_is_vetted() {
    for layer in LAYERS {
        let t = TempDir::new("gitmodules22g");
        let home = t.dir("home");
        let ws = t.dir("ws");
        repo(&t, &ws);
        settle();
        let script = "b=$(printf '[submodule \"x\"]\\n\\tpath = x\\n\\turl = ./x\\n\\tupdate = !touch /tmp/pwn\\n' \
                      | git hash-object -w --stdin) && \
                      git update-index --add --cacheinfo 100644,$b,.gitmodules && echo RAN";
        let said = report_ran(&ws, &home, layer, script);
        // From outside: what host git would commit or check out.
        let staged = git(&ws, &["show", ":.gitmodules"]);
        assert!(
            !String::from_utf8_lossy(&staged.stdout).contains("update = !"),
            "{layer}: the index staged a .gitmodules with a command: {said}"
        );
    }
}

#[test]
fn the_index_of_a_write_grants_repository_cannot_stage_a_protected_file() {
    // Attack atk22h F12: a `--write` grant's repository, written directly.
    for layer in LAYERS {
        let t = TempDir::new("grantindex22g");
        let home = t.dir("home");
        let ws = t.dir("ws");
        let lib = t.dir("lib");
        git(&lib, &["init", "-q", "-b", "main"]);
        t.file("lib/README", "hi\n");
        git(&lib, &["add", "README"]);
        git(&lib, &["commit", "-qm", "init"]);
        settle();
        let marker = t.join("PLANTED-RAN");
        let script = format!(
            "cd {lib} && b=$(printf 'touch {m}\\n' | git hash-object -w --stdin) && \
             git update-index --add --cacheinfo 100644,$b,.envrc; echo staged=$?; echo RAN",
            lib = lib.display(),
            m = marker.display()
        );
        let said = ran(
            layer,
            run_command(
                &ws,
                &home,
                &[
                    "--report",
                    "--workspace-layer",
                    layer,
                    "--write",
                    lib.to_str().unwrap(),
                ],
                &["sh", "-c", &script],
            )
            .current_dir(&ws),
        );
        // On the host: the user restores the files `git status` shows.
        let _ = git(&lib, &["checkout", "--", "."]);
        enter(&lib);
        assert!(
            !marker.exists(),
            "{layer}: the write grant's index brought the planted .envrc to the host: {said}"
        );
        // The repository still works (`git reset` rebuilds a set-aside index).
        let _ = git(&lib, &["reset", "-q"]);
        let log = git(&lib, &["log", "--format=%s", "-1"]);
        assert!(
            String::from_utf8_lossy(&log.stdout).contains("init"),
            "{layer}: the repository was lost: {said}"
        );
    }
}
