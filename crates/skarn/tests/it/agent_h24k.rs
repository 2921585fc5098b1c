//! Issue 24, what the attack passes of 6 December left open (helper
//! h24k). Each test makes the real attempt and judges from outside: the
//! run's exit code, what host git runs afterwards, the hook's answer as
//! the agent reads it.

use std::path::Path;
use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

/// The two ways a run writes the workspace.
const LAYERS: [&[&str]; 2] = [&[], &["--workspace-layer", "direct"]];

fn name(layer: &[&str]) -> &'static str {
    if layer.is_empty() { "cow" } else { "direct" }
}

/// Host git in `repo` the way the user runs it, its output ignored: what
/// it runs is what counts.
fn host_git(repo: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(repo)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap()
}

/// atk24l F7: a workspace whose `.git` is a symbolic link (the Android
/// `repo` tool's `.git -> .repo/projects/p.git`; a git directory kept
/// elsewhere, `.git -> ~/store/p.git`) could run no command: `skarn run`
/// exited 2 at set-up. Now the command runs, commits land (a git
/// directory inside the workspace), and the git directory is protected as
/// a `.git` directory is: its hooks and configuration stay read-only by
/// either name, and the link cannot be replaced by a directory of the
/// run's own.
#[test]
fn f7_a_workspace_whose_git_is_a_link_runs_with_its_git_directory_protected() {
    for layer in LAYERS {
        for outside in [false, true] {
            let tag = format!("{}-{}", name(layer), if outside { "out" } else { "in" });
            let t = TempDir::new(&format!("k-f7-{tag}"));
            let home = t.dir("home");
            let ws = t.dir("home/p");
            let real = if outside {
                t.dir("home/store").join("p.git")
            } else {
                t.dir("home/p/.repo/projects").join("p.git")
            };
            let st = Command::new("git")
                .args(["init", "-q", "--bare"])
                .arg(&real)
                .status()
                .unwrap();
            assert!(st.success());
            let link = if outside {
                real.display().to_string()
            } else {
                ".repo/projects/p.git".to_string()
            };
            std::os::unix::fs::symlink(&link, ws.join(".git")).unwrap();
            assert!(host_git(&ws, &home, &["config", "core.bare", "false"]).status.success());
            t.file("home/p/README", "x\n");
            host_git(&ws, &home, &["add", "README"]);
            assert!(host_git(&ws, &home, &["commit", "-qm", "init"]).status.success());
            let victim = t.join("victim");
            let r = real.display().to_string();
            let plant = format!(
                "echo RAN; \
                 git -c user.name=t -c user.email=t@t commit -q --allow-empty -m inside \
                 && echo COMMITTED; \
                 printf '#!/bin/sh\\ntouch {v}-hook\\n' > .git/hooks/pre-commit \
                 && chmod +x .git/hooks/pre-commit && echo WROTE-hook; \
                 printf '#!/bin/sh\\ntouch {v}-realhook\\n' > {r}/hooks/post-commit \
                 && chmod +x {r}/hooks/post-commit && echo WROTE-realhook; \
                 printf '[core]\\n\\tfsmonitor = \"touch {v}-fsmonitor; false\"\\n' >> .git/config \
                 && echo WROTE-config; \
                 (rm -f .git && mkdir -p .git/hooks && cp -r {r}/. .git/ \
                 && printf '#!/bin/sh\\ntouch {v}-newgit\\n' > .git/hooks/pre-commit \
                 && chmod +x .git/hooks/pre-commit && echo REPLACED-link) 2>/dev/null; true",
                v = victim.display()
            );
            let o = run_in(&ws, &home, layer, &["sh", "-c", &plant]);
            let what = format!("{tag}: rc={} {}{}", code(&o), out(&o), err(&o));
            // The command ran (the old binary failed at set-up, exit 2).
            assert_eq!(code(&o), 0, "{what}");
            assert!(out(&o).contains("RAN"), "{what}");
            assert!(!out(&o).contains("WROTE"), "{what}");
            assert!(!out(&o).contains("REPLACED"), "{what}");
            if !outside {
                // The git directory is in the workspace: git works.
                assert!(out(&o).contains("COMMITTED"), "{what}");
                let log = host_git(&ws, &home, &["log", "--format=%s"]);
                assert!(out(&log).contains("inside"), "{what}: {}", out(&log));
            }
            // The link still leads where it led.
            let md = std::fs::symlink_metadata(ws.join(".git")).unwrap();
            assert!(md.file_type().is_symlink(), "{what}");
            assert_eq!(
                std::fs::read_link(ws.join(".git")).unwrap(),
                Path::new(&link),
                "{what}"
            );
            // The user's next commit runs nothing the run planted.
            t.file("home/p/README", "y\n");
            host_git(&ws, &home, &["commit", "-qam", "user"]);
            host_git(&ws, &home, &["status"]);
            for m in ["hook", "realhook", "fsmonitor", "newgit"] {
                assert!(
                    !t.join(format!("victim-{m}")).exists(),
                    "host git ran the planted {m} ({what})"
                );
            }
        }
    }
}
