//! `skarn run`, issue 22 (helper h22f): what host programs load on their
//! own from the workspace. An agent's environment file (`.env`: Gemini
//! CLI, Qwen Code, aider and Bun load it at start and pass it to every
//! command they run), a conda or pixi environment's activation scripts
//! (sourced by `conda activate` / `pixi shell` in the host's shell), and
//! a program on `PATH` outside the home that runs a workspace file
//! (atk22g F7). Judged from outside: the host program started after the
//! run did not run what the run planted.

use std::path::Path;
use std::process::Command;

use crate::common::*;
use crate::support_git::{enter, ran, report_ran, settle};
use skarn_test_support::TempDir;

const LAYERS: &[&str] = &["direct", "cow"];

/// What an agent does with an environment file at its next start: its
/// assignments become the environment of each command it runs (here a
/// shell command through bash, as agents' shell tools run them).
fn agent_starts_with(env_file: &Path, dir: &Path) -> std::process::Output {
    let mut c = Command::new("bash");
    c.args(["-c", "true"]).current_dir(dir);
    if let Ok(text) = std::fs::read_to_string(env_file) {
        for line in text.lines() {
            let line = line.trim_start().trim_start_matches("export ");
            if let Some((k, v)) = line.split_once('=')
                && !k.is_empty()
                && !k.starts_with('#')
            {
                c.env(k.trim(), v.trim().trim_matches(['"', '\'']));
            }
        }
    }
    c.output().unwrap()
}

#[test]
fn an_agents_env_file_cannot_make_its_next_commands_run_planted_code() {
    for layer in LAYERS {
        let t = TempDir::new("env22f");
        let home = t.dir("home");
        let ws = t.dir("ws");
        git(&ws, &["init", "-q"]);
        // One the user set up with a start-up variable of their own, one
        // of the application's, none yet in `sub`.
        let own = t.file(
            "ws/tools/.env",
            "PYTHONPATH=/usr/lib/python3/dist-packages\n",
        );
        t.dir("ws/sub");
        settle();
        let marker = t.join("PLANTED-RAN");
        let script = format!(
            "printf 'touch {m}\\n' > x.sh; \
             printf 'DATABASE_URL=postgres://localhost/app\\nBASH_ENV={ws}/x.sh\\n' > .env; \
             echo w1=$?; \
             printf 'BASH_ENV={ws}/x.sh\\n' >> tools/.env; echo w2=$?; \
             printf 'export BASH_ENV={ws}/x.sh\\n' > sub/.env.local; echo w3=$?; \
             printf 'PORT=3000\\nSECRET_KEY=abc\\n' > sub/.env; echo w4=$?; echo RAN",
            m = marker.display(),
            ws = ws.display()
        );
        let said = report_ran(&ws, &home, layer, &script);
        for (f, dir) in [
            (ws.join(".env"), ws.clone()),
            (own.clone(), ws.join("tools")),
            (ws.join("sub/.env.local"), ws.join("sub")),
        ] {
            let _ = agent_starts_with(&f, &dir);
            assert!(
                !marker.exists(),
                "{layer}: an agent loading {} ran what the run planted: {said}",
                f.display()
            );
        }
        assert_eq!(
            std::fs::read_to_string(&own).unwrap(),
            "PYTHONPATH=/usr/lib/python3/dist-packages\n",
            "{layer}: {said}"
        );
        // The application's own settings reach the host.
        assert_eq!(
            std::fs::read_to_string(ws.join("sub/.env")).unwrap_or_default(),
            "PORT=3000\nSECRET_KEY=abc\n",
            "{layer}: an application's .env was not kept: {said}"
        );
        // And the refusal says why.
        assert!(
            said.contains("BASH_ENV"),
            "{layer}: the report does not name the variable: {said}"
        );
    }
}

/// A conda prefix as conda, micromamba and pixi make one (its
/// `conda-meta` directory), with `activate.d` scripts or not.
fn conda_env(t: &TempDir, rel: &str, script: Option<&str>) {
    t.file(format!("{rel}/conda-meta/history"), "==> 2026-01-01 <==\n");
    t.file(format!("{rel}/lib/python3.12/site-packages/ok.py"), "");
    if let Some(s) = script {
        t.file(format!("{rel}/etc/conda/activate.d/{s}"), "export X=1\n");
    }
}

/// What `conda activate` / `pixi shell` does in the host's shell: source
/// each activation script.
fn activate(env: &Path) {
    let _ = Command::new("sh")
        .arg("-c")
        .arg("for f in \"$1\"/etc/conda/activate.d/*.sh; do [ -f \"$f\" ] && . \"$f\"; done; true")
        .arg("sh")
        .arg(env)
        .output();
}

#[test]
fn a_conda_environments_activation_scripts_cannot_be_planted() {
    for layer in LAYERS {
        let t = TempDir::new("conda22f");
        let home = t.dir("home");
        let ws = t.dir("ws");
        git(&ws, &["init", "-q"]);
        conda_env(&t, "ws/.pixi/envs/default", Some("pkg.sh"));
        conda_env(&t, "ws/envs/dev", None);
        settle();
        let marker = t.join("PLANTED-RAN");
        let script = format!(
            "echo 'touch {m}' >> .pixi/envs/default/etc/conda/activate.d/pkg.sh; echo a=$?; \
             mkdir -p envs/dev/etc/conda/activate.d; \
             echo 'touch {m}' > envs/dev/etc/conda/activate.d/x.sh; echo b=$?; \
             echo 'x = 1' > envs/dev/lib/python3.12/site-packages/mine.py; echo RAN",
            m = marker.display()
        );
        let said = ran(
            layer,
            run_command(
                &ws,
                &home,
                &["--workspace-layer", layer],
                &["sh", "-c", &script],
            )
            .current_dir(&ws),
        );
        activate(&ws.join(".pixi/envs/default"));
        activate(&ws.join("envs/dev"));
        assert!(
            !marker.exists(),
            "{layer}: the host's activation ran what the run planted: {said}"
        );
        // A package installed into the environment stays.
        if *layer == "direct" {
            assert!(
                ws.join("envs/dev/lib/python3.12/site-packages/mine.py")
                    .exists(),
                "{layer}: {said}"
            );
        }
    }
}

#[test]
fn a_program_on_path_outside_the_home_keeps_the_workspace_file_it_runs() {
    for layer in LAYERS {
        let t = TempDir::new("pathwrap22f");
        let home = t.dir("home");
        let ws = t.dir("ws");
        let sysbin = t.dir("sysbin");
        git(&ws, &["init", "-q"]);
        let main = t.file("ws/tool/main.sh", "echo tool v1\n");
        let wrapper = t.file(
            "sysbin/mytool",
            format!("#!/bin/sh\nexec sh {} \"$@\"\n", main.display()),
        );
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        settle();
        let marker = t.join("PLANTED-RAN");
        let path = format!(
            "{}:{}",
            sysbin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let script = format!("echo 'touch {}' > tool/main.sh; echo RAN", marker.display());
        let said = ran(
            layer,
            run_command(
                &ws,
                &home,
                &["--workspace-layer", layer],
                &["sh", "-c", &script],
            )
            .current_dir(&ws)
            .env("PATH", &path),
        );
        // The user types the program's name on the host.
        let _ = Command::new("mytool").env("PATH", &path).output();
        assert!(
            !marker.exists(),
            "{layer}: the host's program on PATH ran what the run planted: {said}"
        );
        assert!(
            said.contains("mytool"),
            "{layer}: the report does not name the program: {said}"
        );
    }
}

#[test]
fn a_linked_worktrees_index_cannot_stage_a_protected_file() {
    for layer in LAYERS {
        let t = TempDir::new("wtindex22f");
        let home = t.dir("home");
        let ws = t.dir("ws");
        git(&ws, &["init", "-q"]);
        t.file("ws/README", "hi\n");
        git(&ws, &["add", "README"]);
        git(&ws, &["commit", "-qm", "one"]);
        let feat = t.join("feat");
        let o = git(&ws, &["worktree", "add", "-q", feat.to_str().unwrap()]);
        assert!(o.status.success(), "{}", err(&o));
        settle();
        let marker = t.join("PLANTED-RAN");
        // Content for `.envrc` staged in the linked worktree's index only
        // (the run cannot write that work tree).
        let script = format!(
            "b=$(printf 'touch {m}\\n' | git hash-object -w --stdin) && \
             GIT_DIR=.git/worktrees/feat git update-index --add --cacheinfo 100644,$b,.envrc; \
             echo staged=$?; echo RAN",
            m = marker.display()
        );
        let said = report_ran(&ws, &home, layer, &script);
        // On the host, in the linked worktree: `git checkout -- .`, then a
        // shell enters it (direnv sources `.envrc`).
        let _ = Command::new("git")
            .args(["checkout", "--", "."])
            .current_dir(&feat)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", &home)
            .output();
        enter(&feat);
        assert!(
            !marker.exists(),
            "{layer}: the linked worktree's index brought the planted .envrc to the host: {said}"
        );
    }
}

#[test]
fn a_commit_the_run_made_cannot_bring_a_protected_file_to_the_host() {
    for layer in LAYERS {
        let t = TempDir::new("commit22f");
        let home = t.dir("home");
        let ws = t.dir("ws");
        git(&ws, &["init", "-q"]);
        t.file("ws/README", "hi\n");
        git(&ws, &["add", "README"]);
        git(&ws, &["commit", "-qm", "one"]);
        settle();
        let marker = t.join("PLANTED-RAN");
        // A commit whose tree holds `.envrc` (the work tree's cannot be
        // written), on a branch of its own, and an ordinary one.
        let script = format!(
            "set -e; G='git -c user.name=a -c user.email=a@a'; \
             b=$(printf 'touch {m}\\n' | git hash-object -w --stdin); \
             GIT_INDEX_FILE=.git/agent-index git read-tree HEAD; \
             GIT_INDEX_FILE=.git/agent-index git update-index --add --cacheinfo 100644,$b,.envrc; \
             tr=$(GIT_INDEX_FILE=.git/agent-index git write-tree); \
             c=$($G commit-tree $tr -p HEAD -m planted); git update-ref refs/heads/agent $c; \
             rm -f .git/agent-index; \
             echo more > NOTES; git add NOTES; $G commit -qm notes; echo RAN",
            m = marker.display()
        );
        let said = report_ran(&ws, &home, layer, &script);
        // On the host: the agent's branch is checked out, a shell enters
        // the directory (direnv sources `.envrc`).
        let _ = git(&ws, &["checkout", "-q", "agent"]);
        enter(&ws);
        assert!(
            !marker.exists(),
            "{layer}: the run's commit brought the planted .envrc to the host: {said}"
        );
        // The ordinary commit stays.
        let _ = git(&ws, &["checkout", "-q", "-f", "-"]);
        let log = git(&ws, &["log", "--format=%s", "-1"]);
        assert!(
            String::from_utf8_lossy(&log.stdout).contains("notes"),
            "{layer}: the run's ordinary commit was lost: {said}"
        );
    }
}
