//! `skarn run`, issue 22 (helper h22l): the open findings of attack
//! atk22i and what the fixes of atk22h left. Judged from outside: the
//! host program started after the run did not run what the run planted,
//! did not send its traffic where the run chose, and what the user does
//! with git still works.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::Ordering;

use crate::common::*;
use crate::run_atk22i_git::listener;
use skarn_test_support::TempDir;

const LAYERS: &[&str] = &["direct", "cow"];

/// What pyenv and rbenv do on every shim call (`pyenv exec`, `rbenv
/// exec`): source each `exec/*.bash` of each directory of
/// `$PYENV_HOOK_PATH` / `$RBENV_HOOK_PATH`.
const VERSION_MANAGER_HOOKS: &str = r#"
for v in "$PYENV_HOOK_PATH" "$RBENV_HOOK_PATH"; do
  IFS=:; for d in $v; do for s in "$d"/exec/*.bash; do [ -f "$s" ] && . "$s"; done; done; unset IFS
done
true"#;

/// A host program started with the environment files of `dir` loaded
/// the way their loaders do, running `then` in bash: a shell sourcing
/// each with `set -a` (direnv's `dotenv`, docker compose and Bun read the
/// same `NAME=value` lines), and Node's own loader (`node --env-file`)
/// when the host has node.
fn host_loads(dir: &Path, files: &[&str], then: &str) {
    let mut load = String::from("set -a; ");
    for f in files {
        load.push_str(&format!("[ -f ./{f} ] && . ./{f}; "));
    }
    load.push_str("set +a; ");
    let _ = Command::new("bash")
        .args(["-c", &format!("{load}{then}")])
        .current_dir(dir)
        .output();
    if host_has("node", "--version") {
        for f in files.iter().filter(|f| dir.join(f).is_file()) {
            let js = format!(
                "require('child_process').spawnSync('bash', ['-c', {then:?}], {{stdio: 'ignore'}})"
            );
            let _ = Command::new("node")
                .arg(format!("--env-file={f}"))
                .args(["-e", &js])
                .current_dir(dir)
                .output();
        }
    }
}

#[test]
fn an_env_file_that_is_not_plainly_data_does_not_reach_the_host() {
    // atk22i F2: variables no list named — pyenv's and rbenv's hook
    // paths (sourced by every shim), a proxy for the caller's traffic.
    for layer in LAYERS {
        let t = TempDir::new("h22l-f2");
        let home = t.dir("home");
        let ws = t.dir("ws");
        t.dir("ws/sub");
        let marker = t.join("PLANTED-RAN");
        let (port, hits) = listener();
        let script = format!(
            "mkdir -p scripts/h/exec && printf 'touch {m}\\n' > scripts/h/exec/x.bash; \
             printf 'DEBUG=1\\nPYENV_HOOK_PATH={ws}/scripts/h\\n' > .env; \
             printf 'RBENV_HOOK_PATH=scripts/h\\n' > .env.local; \
             printf 'export PYENV_HOOK_PATH={ws}/scripts/h\\n' > .envrc; \
             printf 'HTTPS_PROXY=http://127.0.0.1:{port}\\nhttps_proxy=http://127.0.0.1:{port}\\n' \
               > .env.production; \
             printf 'PORT=3000\\nDATABASE_URL=postgres://localhost/app\\n' > sub/.env; echo RAN",
            m = marker.display(),
            ws = ws.display()
        );
        let o = run_in(
            &ws,
            &home,
            &["--report", "--workspace-layer", layer],
            &["sh", "-c", &script],
        );
        let said = format!("{}{}", out(&o), err(&o));
        assert!(
            said.contains("RAN"),
            "{layer}: the command did not run: {said}"
        );
        host_loads(
            &ws,
            &[".envrc", ".env", ".env.local"],
            VERSION_MANAGER_HOOKS,
        );
        assert!(
            !marker.exists(),
            "{layer}: a version manager's hook the run's environment file named ran: {said}"
        );
        host_loads(
            &ws,
            &[".env.production"],
            "python3 -c \"import urllib.request as u; u.urlopen('https://example.invalid/', \
             timeout=3)\" 2>/dev/null; true",
        );
        assert_eq!(
            hits.load(Ordering::SeqCst),
            0,
            "{layer}: the host's traffic went through the proxy the run chose: {said}"
        );
        // The application's own settings reach the host.
        assert_eq!(
            std::fs::read_to_string(ws.join("sub/.env")).unwrap_or_default(),
            "PORT=3000\nDATABASE_URL=postgres://localhost/app\n",
            "{layer}: an application's .env was not kept: {said}"
        );
        assert!(
            said.contains("PYENV_HOOK_PATH"),
            "{layer}: the refusal does not name the variable: {said}"
        );
    }
}

#[test]
fn a_link_by_a_directory_name_tools_search_upward_is_refused() {
    // atk22i F8: bazelisk runs `<bazel workspace>/tools/bazel` of a nested
    // workspace; `tools` is a name protected only as a directory, and a
    // link by that name (to a sibling holding `bazel`) passed.
    for layer in LAYERS {
        let t = TempDir::new("h22l-f8");
        let home = t.dir("home");
        let ws = t.dir("ws");
        let marker = t.join("PLANTED-RAN");
        let script = format!(
            "mkdir -p sub/t2 && printf '#!/bin/sh\\ntouch {m}\\n' > sub/t2/bazel && \
             chmod +x sub/t2/bazel && ln -s t2 sub/tools && touch sub/MODULE.bazel; echo RAN",
            m = marker.display()
        );
        let o = run_in(
            &ws,
            &home,
            &["--report", "--workspace-layer", layer],
            &["sh", "-c", &script],
        );
        let said = format!("{}{}", out(&o), err(&o));
        assert!(
            said.contains("RAN"),
            "{layer}: the command did not run: {said}"
        );
        // What bazelisk does for `bazel build` in `sub`.
        let wrapper = ws.join("sub/tools/bazel");
        if wrapper.is_file() {
            let _ = Command::new(&wrapper).current_dir(ws.join("sub")).status();
        }
        assert!(
            !marker.exists(),
            "{layer}: the nested workspace's tools/bazel the run planted through a link ran: {said}"
        );
    }
}

/// The run's script in repository `dir`: a commit adding `.envrc` (which
/// touches `marker`) on branch `feat`, then `git gc` (the commit is
/// packed, no loose object of it left).
fn packed_plant(dir: &str, marker: &Path) -> String {
    format!(
        "cd {dir} && printf 'touch {m}\\n' > /tmp/e && E=$(git hash-object -w /tmp/e) && \
         T=$( (git ls-tree HEAD; printf '100644 blob %s\\t.envrc\\n' $E) | git mktree) && \
         C=$(git -c user.name=a -c user.email=a@a commit-tree $T -p HEAD -m x) && \
         git update-ref refs/heads/feat $C && git gc -q && echo RAN",
        m = marker.display()
    )
}

/// Host git checks the branch `feat` out in `dir`; whatever direnv would
/// load there is then run.
fn host_checks_out_feat(dir: &Path, home: &Path) {
    let _ = crate::run_atk22i_git::host_git(dir, home, &["checkout", "-q", "feat"]);
    if dir.join(".envrc").is_file() {
        let _ = Command::new("sh").arg(dir.join(".envrc")).status();
    }
}

#[test]
fn packs_of_submodules_and_nested_repositories_are_vetted() {
    // ADR 0257 read only the workspace's own `.git/objects/pack`: a
    // commit packed by `git gc` in a submodule's git directory
    // (`.git/modules/sub`) or in a nested repository kept its planted
    // `.envrc`, which host `git checkout` wrote.
    if crate::run_atk22i_git::skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    for layer in LAYERS {
        let t = TempDir::new("h22l-packs");
        let home = t.dir("home");
        let lib = t.dir("lib");
        crate::support_git::repo(&lib, "l", "l\n");
        let ws = t.dir("ws");
        crate::support_git::repo(&ws, "a", "a\n");
        let lib_s = lib.display().to_string();
        crate::run_atk22i_git::host_git(&ws, &home, &["submodule", "-q", "add", &lib_s, "sub"]);
        crate::run_atk22i_git::host_git(&ws, &home, &["commit", "-qm", "sub"]);
        let nested = ws.join("inner");
        std::fs::create_dir(&nested).unwrap();
        crate::support_git::repo(&nested, "n", "n\n");
        assert!(
            ws.join(".git/modules/sub/objects").is_dir(),
            "no submodule set up"
        );
        let mut cases = vec![("sub", ws.join("sub"))];
        if *layer == "cow" {
            // (In the direct mode a nested repository is written in place:
            // not covered, see SECURITY.md.)
            cases.push(("inner", nested.clone()));
        }
        for (dir, host_dir) in cases {
            let marker = t.join(format!("PLANTED-RAN-{dir}"));
            let o = run_in(
                &ws,
                &home,
                &["--report", "--workspace-layer", layer],
                &["sh", "-c", &packed_plant(dir, &marker)],
            );
            let said = format!("{}{}", out(&o), err(&o));
            assert!(
                said.contains("RAN"),
                "{layer} {dir}: the command did not run: {said}"
            );
            host_checks_out_feat(&host_dir, &home);
            assert!(
                !marker.exists(),
                "{layer} {dir}: host git checked out the .envrc of a commit the run packed: {said}"
            );
            // The repository still works for the user.
            let log =
                crate::run_atk22i_git::host_git(&host_dir, &home, &["log", "--oneline", "-1"]);
            assert!(
                log.status.success(),
                "{layer} {dir}: host git log failed: {}",
                err(&log)
            );
        }
    }
}

#[test]
fn git_commit_works_with_a_write_grant_of_the_workspaces_git_directory() {
    // Usability (SECURITY.md, what the fixes left): with `--write
    // <ws>/.git` under the copy-on-write layer, the file HEAD names
    // (`refs/heads/main`) was kept read-only as a "file named by
    // protected configuration", so `git commit` could not move its
    // branch.
    if crate::run_atk22i_git::skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    for layer in LAYERS {
        let t = TempDir::new("h22l-commit");
        let home = t.dir("home");
        let ws = t.dir("ws");
        crate::support_git::repo(&ws, "a", "a\n");
        let git_dir = ws.join(".git").display().to_string();
        let o = run_in(
            &ws,
            &home,
            &["--workspace-layer", layer, "--write", &git_dir],
            &[
                "sh",
                "-c",
                "echo b >> a && git -c user.name=a -c user.email=a@a commit -qam two && echo COMMITTED",
            ],
        );
        let said = format!("{}{}", out(&o), err(&o));
        assert!(
            said.contains("COMMITTED"),
            "{layer}: git commit failed in the run: {said}"
        );
        let log = crate::run_atk22i_git::host_git(&ws, &home, &["log", "--format=%s", "-1"]);
        assert_eq!(
            out(&log).trim(),
            "two",
            "{layer}: the commit did not reach the host: {said}"
        );
    }
}

#[test]
fn a_nested_repositorys_link_to_a_sibling_in_the_workspace_is_kept() {
    // False positive of atk22h F21's fix: a link committed in a nested
    // repository to a sibling directory of the workspace (outside that
    // repository's top, inside the workspace) was judged "out" and the
    // commit set aside.
    if crate::run_atk22i_git::skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    for layer in LAYERS {
        let t = TempDir::new("h22l-f21");
        let home = t.dir("home");
        let ws = t.dir("ws");
        t.file("ws/shared/lib.txt", "shared\n");
        let inner = ws.join("inner");
        std::fs::create_dir(&inner).unwrap();
        crate::support_git::repo(&inner, "n", "n\n");
        let o = run_in(
            &ws,
            &home,
            &["--report", "--workspace-layer", layer],
            &[
                "sh",
                "-c",
                "cd inner && ln -s ../shared shared && git add shared && \
                 git -c user.name=a -c user.email=a@a commit -qm linked && echo COMMITTED",
            ],
        );
        let said = format!("{}{}", out(&o), err(&o));
        assert!(
            said.contains("COMMITTED"),
            "{layer}: the command did not run: {said}"
        );
        let log = crate::run_atk22i_git::host_git(&inner, &home, &["log", "--format=%s", "-1"]);
        assert_eq!(
            out(&log).trim(),
            "linked",
            "{layer}: the nested repository's commit did not reach the host: {said}"
        );
    }
}
