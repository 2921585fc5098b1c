//! `skarn run`, attack atk22h (issue 22), second part: remotes and
//! upstreams a run adds to the workspace's repository (F28, F29, F36), and
//! what else the run leaves for host programs. Each test makes the attack
//! for real in both workspace layers and judges from outside, after the
//! run: host git did not merge what the run wrote, did not contact the
//! address the run chose, and a later run did not read a repository no
//! run was granted.

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
        .env("GIT_EDITOR", "true")
        .output()
        .unwrap()
}

/// A repository on branch `master` with one commit of `file` at `dir`.
fn repo(dir: &Path, file: &str, text: &str) {
    git(dir, &["init", "-q", "-b", "master"]);
    std::fs::write(dir.join(file), text).unwrap();
    git(dir, &["add", file]);
    git(dir, &["commit", "-qm", "init"]);
}

fn skip_without_git() -> bool {
    !host_has("git", "--version")
}

#[test]
fn a_branch_set_to_track_a_repository_the_run_made_is_not_pulled_by_host_git() {
    // F28: a bare repository inside the workspace holding a commit with
    // `.cargo/config.toml`, a new remote naming it and the user's branch
    // set to track it; the host's `git pull` merged it.
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f28");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        repo(&ws, "README", "hi\n");
        let script = "set -e; G='git -c user.name=t -c user.email=t@t'; \
            git init -q --bare vendor/cache.git; git push -q vendor/cache.git master:main; \
            git clone -q -b main vendor/cache.git /tmp/c; cd /tmp/c; mkdir .cargo; \
            printf '[build]\\nrustc-wrapper = \"w.sh\"\\n' > .cargo/config.toml; \
            git add .cargo; $G commit -qm build; git push -q origin HEAD:main; cd - >/dev/null; \
            git remote add cache ./vendor/cache.git; \
            git config branch.master.remote cache; \
            git config branch.master.merge refs/heads/main; echo PLANTED";
        let o = run_in(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", script],
        );
        assert!(
            out(&o).contains("PLANTED"),
            "{layer}: {}{}",
            out(&o),
            err(&o)
        );
        let _ = host_git(&ws, &home, &["pull", "-q"]);
        assert!(
            !ws.join(".cargo/config.toml").exists(),
            "{layer}: the host's `git pull` merged the run's commit from the repository it made: {}",
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

#[test]
fn host_git_never_contacts_a_remote_address_the_run_chose() {
    // F29: the run adds a remote at an address of its choice and makes it
    // the upstream of the user's branch; host `git push`/`git pull` (and
    // `git fetch --all`) went there, past `--net deny`.
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f29");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        repo(&ws, "code.txt", "SECRET_SAUCE=42\n");
        let (port, seen) = listener();
        let script = format!(
            "git remote add backup http://127.0.0.1:{port}/u/p.git && \
             git config branch.master.remote backup && \
             git config branch.master.merge refs/heads/master && \
             git config branch.master.pushRemote backup && echo PLANTED"
        );
        let o = run_in(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", &script],
        );
        assert!(
            out(&o).contains("PLANTED"),
            "{layer}: {}{}",
            out(&o),
            err(&o)
        );
        for args in [
            &["push", "-q"][..],
            &["pull", "-q"],
            &["fetch", "-q", "--all"],
        ] {
            let _ = host_git(&ws, &home, args);
        }
        assert_eq!(
            seen.load(Ordering::SeqCst),
            0,
            "{layer}: host git contacted the address the run chose: {}",
            err(&o)
        );
    }
}

#[test]
fn a_remote_naming_a_repository_no_run_was_granted_brings_nothing_in() {
    // F36: run 1 adds a remote naming another local repository of the
    // user's (hidden from every run); the host's `git fetch --all` copied
    // it into the workspace's repository, where run 2 read it. Also with a
    // remote without a URL, which git fetches from its name.
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f36");
        let (home, ws, private) = (t.dir("home"), t.dir("ws"), t.dir("private"));
        repo(&private, "creds.txt", "db_password=hunter2-PRIVATE\n");
        repo(&ws, "a", "a\n");
        let p = private.display();
        let script = format!(
            "git remote add mirror {p} && \
             git config 'remote.{p}.fetch' '+refs/heads/*:refs/remotes/byname/*' && echo PLANTED"
        );
        let o = run_in(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", &script],
        );
        assert!(
            out(&o).contains("PLANTED"),
            "{layer}: {}{}",
            out(&o),
            err(&o)
        );
        let _ = host_git(&ws, &home, &["fetch", "-q", "--all"]);
        let o2 = run_in(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &[
                "sh",
                "-c",
                "git show mirror/master:creds.txt; git show byname/master:creds.txt; true",
            ],
        );
        assert!(
            !out(&o2).contains("hunter2"),
            "{layer}: a run read a repository no run was granted: {}{}",
            out(&o2),
            err(&o)
        );
    }
}

#[test]
fn repository_format_keys_of_the_hosts_repository_are_not_changed() {
    // F32: `core.bare` and `extensions.*` are on the allow-list for `git
    // init`; set on the existing repository they broke every host git
    // command there.
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f32");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        repo(&ws, "a", "a\n");
        let script = "git config core.bare true; git config core.repositoryformatversion 1; \
                      git config extensions.refstorage reftable; \
                      git config extensions.objectformat sha256; echo PLANTED";
        let o = run_in(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", script],
        );
        assert!(
            out(&o).contains("PLANTED"),
            "{layer}: {}{}",
            out(&o),
            err(&o)
        );
        let s = host_git(&ws, &home, &["status", "--short"]);
        assert!(
            s.status.success(),
            "{layer}: host git fails in the repository after the run: {}{}",
            String::from_utf8_lossy(&s.stderr),
            err(&o)
        );
        let s = host_git(&ws, &home, &["config", "--get", "core.bare"]);
        assert_eq!(
            String::from_utf8_lossy(&s.stdout).trim(),
            "false",
            "{layer}"
        );
    }
}

#[test]
fn fifos_a_layered_run_makes_in_the_work_tree_do_not_reach_it() {
    // F37: `mkfifo README.md` in the copy-on-write layer was applied; the
    // host's `cat README.md` (an editor, an agent's file read) hung.
    // (The direct layer writes the workspace in place: not covered here.)
    let t = TempDir::new("atk22h-f37");
    let (home, ws) = (t.dir("home"), t.dir("ws"));
    std::fs::write(ws.join("README.md"), "hi\n").unwrap();
    let o = run_in(
        &ws,
        &home,
        &["--workspace-layer", "cow"],
        &[
            "sh",
            "-c",
            "rm README.md && mkfifo README.md package-lock.json && echo PLANTED",
        ],
    );
    assert!(out(&o).contains("PLANTED"), "{}{}", out(&o), err(&o));
    for n in ["README.md", "package-lock.json"] {
        let p = ws.join(n);
        let fifo = std::fs::symlink_metadata(&p)
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()));
        assert!(
            !fifo,
            "{n}: the run's FIFO reached the workspace: {}",
            err(&o)
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("README.md")).unwrap_or_default(),
        "hi\n"
    );
}

#[test]
fn removing_a_conda_environments_marker_does_not_unprotect_its_activation() {
    // F13: run 1 removed `env/conda-meta`, so run 2 could write
    // `env/etc/conda/activate.d/x.sh`, and run 3 put the marker back; the
    // host's `conda activate ./env` sourced the script.
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f13");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        let env = ws.join("env");
        std::fs::create_dir_all(env.join("conda-meta")).unwrap();
        std::fs::create_dir_all(env.join("etc/conda/activate.d")).unwrap();
        std::fs::create_dir_all(env.join("bin")).unwrap();
        std::fs::write(env.join("conda-meta/history"), "==> 2026-12-01 <==\n").unwrap();
        std::fs::write(env.join("conda-meta/python-3.11.2-0.json"), "{}\n").unwrap();
        let marker = t.join("PLANTED-RAN");
        let steps = [
            "rm -rf env/conda-meta".to_string(),
            format!(
                "echo 'touch {}' > env/etc/conda/activate.d/x.sh",
                marker.display()
            ),
            "mkdir -p env/conda-meta && echo '==> 2026-12-01 <==' > env/conda-meta/history"
                .to_string(),
        ];
        for s in &steps {
            let _ = run_in(&ws, &home, &["--workspace-layer", layer], &["sh", "-c", s]);
        }
        // The host's activation, as conda's activator runs it.
        let _ = Command::new("sh")
            .current_dir(&ws)
            .args([
                "-c",
                "for f in env/etc/conda/activate.d/*.sh; do [ -f \"$f\" ] && . \"$f\"; done; true",
            ])
            .status()
            .unwrap();
        assert!(
            !marker.exists(),
            "{layer}: the host's activation sourced a script a run wrote"
        );
    }
}

#[test]
fn a_conda_environments_standard_library_runs_nothing_the_run_wrote() {
    // F11: a conda/pixi prefix in the workspace carries its own standard
    // library; the run appended to `encodings/__init__.py` (imported at
    // every start) and the host's next use of the environment's python
    // ran it. A package the run installs (site-packages) still lands.
    let py = Path::new("/usr/bin/python3.11");
    let stdlib = Path::new("/usr/lib/python3.11");
    if !py.is_file() || !stdlib.join("encodings").is_dir() {
        skarn_test_support::skip!("no /usr/bin/python3.11 with its standard library");
    }
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f11");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        // A conda-style prefix as pixi makes it: its own interpreter and
        // standard library (the part a start needs).
        let env = ws.join(".pixi/envs/default");
        let lib = env.join("lib/python3.11");
        for d in ["bin", "conda-meta", "lib/python3.11/lib-dynload"] {
            std::fs::create_dir_all(env.join(d)).unwrap();
        }
        std::fs::create_dir_all(lib.join("site-packages")).unwrap();
        std::fs::write(env.join("conda-meta/history"), "==> 2026-12-01 <==\n").unwrap();
        std::fs::copy(py, env.join("bin/python3.11")).unwrap();
        std::fs::copy(stdlib.join("os.py"), lib.join("os.py")).unwrap();
        let cp = Command::new("cp")
            .arg("-r")
            .arg(stdlib.join("encodings"))
            .arg(&lib)
            .status()
            .unwrap();
        assert!(cp.success());
        let marker = t.join("PLANTED-RAN");
        let script = format!(
            "printf 'import posix; posix.mkdir(\"{m}\")\\n' >> {e}/lib/python3.11/encodings/__init__.py; \
             echo 'X = 1' > {e}/lib/python3.11/site-packages/newpkg.py; echo PLANTED",
            m = marker.display(),
            e = ".pixi/envs/default"
        );
        let o = run_in(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", &script],
        );
        assert!(
            out(&o).contains("PLANTED"),
            "{layer}: {}{}",
            out(&o),
            err(&o)
        );
        // The host: `pixi run python ...`, an editor's interpreter probe.
        let h = Command::new(env.join("bin/python3.11"))
            .arg("-c")
            .arg(format!(
                "import sys; sys.path.insert(0, {:?}); import newpkg; print(newpkg.X)",
                lib.join("site-packages").display().to_string()
            ))
            .env_clear()
            .output()
            .unwrap();
        assert!(
            !marker.exists(),
            "{layer}: the environment's python ran what the run wrote in its standard library: {}",
            err(&o)
        );
        assert_eq!(
            String::from_utf8_lossy(&h.stdout).trim(),
            "1",
            "{layer}: a package the run installed did not land: {}{}",
            String::from_utf8_lossy(&h.stderr),
            err(&o)
        );
    }
}

#[test]
fn folder_files_build_tools_and_editors_run_from_stay_the_users() {
    // F22, F27: sbt's `.sbtopts`/`.jvmopts`, .NET's `global.json`, version
    // files, lint-staged's TypeScript configuration, Build Server Protocol
    // files and `rust-analyzer.toml` were written by the run; the host's
    // sbt, dotnet, IDE or rust-analyzer would run what they name. (The
    // tools are not installed here: judged by what reached the folder.)
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f22");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        std::fs::write(ws.join("build.sbt"), "name := \"p\"\n").unwrap();
        std::fs::write(ws.join(".lintstagedrc.json"), "{}\n").unwrap();
        std::fs::write(ws.join("global.json"), "{}\n").unwrap();
        std::fs::write(ws.join(".nvmrc"), "20\n").unwrap();
        let names = [
            ".sbtopts",
            ".jvmopts",
            "global.json",
            ".nvmrc",
            ".lintstagedrc.ts",
            ".bsp/evil.json",
            "rust-analyzer.toml",
        ];
        let script = "mkdir -p .bsp; for f in .sbtopts .jvmopts global.json .nvmrc \
                      .lintstagedrc.ts .bsp/evil.json rust-analyzer.toml; do \
                      echo PLANTED-BY-RUN > \"$f\" 2>/dev/null; done; echo DONE";
        let o = run_in(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", script],
        );
        assert!(out(&o).contains("DONE"), "{layer}: {}{}", out(&o), err(&o));
        for n in names {
            let got = std::fs::read_to_string(ws.join(n)).unwrap_or_default();
            assert!(
                !got.contains("PLANTED-BY-RUN"),
                "{layer}: {n} was written by the run: {}",
                err(&o)
            );
        }
    }
}

#[test]
fn an_editable_install_in_a_python_prefix_on_path_keeps_its_project_code() {
    // F33: `sudo pip install -e .` into a system-like prefix on PATH
    // (`/usr/local`, `/opt/python`; here a copy of the system python under
    // the test's directory) writes a `.pth` naming the workspace's `src`;
    // the run rewrote the module and the host's console script ran it.
    let py = Path::new("/usr/bin/python3.11");
    let stdlib = Path::new("/usr/lib/python3.11");
    if !py.is_file() || !stdlib.join("encodings").is_dir() {
        skarn_test_support::skip!("no /usr/bin/python3.11 with its standard library");
    }
    let t = TempDir::new("atk22h-f33");
    let usr = t.dir("usr");
    std::fs::create_dir_all(usr.join("bin")).unwrap();
    std::fs::create_dir_all(usr.join("lib")).unwrap();
    std::fs::copy(py, usr.join("bin/python3.11")).unwrap();
    std::os::unix::fs::symlink("python3.11", usr.join("bin/python3")).unwrap();
    let cp = Command::new("cp")
        .arg("-a")
        .arg(stdlib)
        .arg(usr.join("lib/python3.11"))
        .status()
        .unwrap();
    assert!(cp.success());
    let site = usr.join("local/lib/python3.11/dist-packages");
    std::fs::create_dir_all(&site).unwrap();
    let path = format!(
        "{}:{}",
        usr.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for layer in LAYERS {
        let lt = TempDir::new("atk22h-f33-ws");
        let (home, ws) = (lt.dir("home"), lt.dir("ws"));
        std::fs::create_dir_all(ws.join("src/proj")).unwrap();
        std::fs::write(ws.join("src/proj/__init__.py"), "").unwrap();
        std::fs::write(
            ws.join("src/proj/cli.py"),
            "def main():\n    print('proj ok')\n",
        )
        .unwrap();
        std::fs::write(
            site.join("__editable__.proj-0.1.pth"),
            format!("{}\n", ws.join("src").display()),
        )
        .unwrap();
        let marker = lt.join("PLANTED-RAN");
        let script = format!(
            "printf 'import os\\ndef main():\\n    os.mkdir(\"{}\")\\n' > src/proj/cli.py 2>/dev/null; \
             echo DONE",
            marker.display()
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
        assert!(out(&o).contains("DONE"), "{layer}: {}{}", out(&o), err(&o));
        // The host: the console script of the editable install.
        let h = Command::new(usr.join("bin/python3"))
            .args(["-c", "from proj.cli import main; main()"])
            .env_clear()
            .output()
            .unwrap();
        assert!(
            !marker.exists(),
            "{layer}: the prefix's python ran the module the run rewrote: {}",
            err(&o)
        );
        assert!(
            String::from_utf8_lossy(&h.stdout).contains("proj ok"),
            "{layer}: the editable install does not load the project: {}",
            String::from_utf8_lossy(&h.stderr)
        );
    }
}
