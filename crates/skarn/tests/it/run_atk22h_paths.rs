//! `skarn run`, attack atk22h (issue 22): where a path really is. A write
//! grant inside the workspace (F23), a write grant of the workspace's
//! `.git` (F24), a protected name that is a link to a directory of the
//! project, dangling or not (F17, F35), PATH scripts naming a workspace
//! file (F9, F14). Each test makes the attack for real in both workspace
//! layers and judges from outside: the host program run after the run
//! did not run the planted code, the file keeps the user's text.

use std::path::Path;

use crate::common::*;
use crate::run_atk22h::{host_git, run_script};
use crate::run_atk24l::write_goes_on;
use skarn_test_support::TempDir;

const LAYERS: &[&str] = &["direct", "cow"];

fn skip_without_git() -> bool {
    !host_has("git", "--version")
}

/// The text of `p`, or "" when it is missing.
fn text(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

#[test]
fn a_write_grant_inside_the_workspace_gets_the_workspaces_protections() {
    // F23: `--write ./build` was bound over the copy-on-write layer, so
    // what the run made there reached the host unvetted: a repository with
    // a `core.fsmonitor` (host `git status` there ran it), `.envrc`,
    // `.cargo/config.toml`.
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f23");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        let build = t.dir("ws/build");
        git(&ws, &["init", "-q"]);
        let marker = t.join("PLANTED-RAN");
        let script = format!(
            "cd build && echo 'touch {m}' > .envrc && mkdir -p .cargo && \
             echo '[build]' > .cargo/config.toml && echo output > out.txt && \
             git init -q n && git -C n config core.fsmonitor 'touch {m}; false'; echo RAN",
            m = marker.display()
        );
        let b = build.display().to_string();
        let o = run_script(&ws, &home, layer, &["--write", &b], &script);
        let _ = host_git(&build.join("n"), &home, &["status"]);
        assert!(
            !marker.exists(),
            "{layer}: host `git status` in the grant ran the run's fsmonitor: {}",
            err(&o)
        );
        for f in [".envrc", ".cargo/config.toml"] {
            assert!(
                text(&build.join(f)).is_empty(),
                "{layer}: {f} the run wrote in the grant stayed: {}",
                err(&o)
            );
        }
        // An ordinary file the run wrote there reaches the host.
        assert_eq!(
            text(&build.join("out.txt")),
            "output\n",
            "{layer}: {}",
            err(&o)
        );
    }
}

#[test]
fn a_write_grant_of_the_workspaces_git_directory_keeps_its_config_vetted() {
    // F24: `--write .git` (given so that git can commit) was bound over
    // the layer that vets `.git/config` key by key: a planted
    // `core.fsmonitor` reached the repository; host `git status` ran it.
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f24");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        git(&ws, &["init", "-q"]);
        std::fs::write(ws.join("a"), "one\n").unwrap();
        git(&ws, &["add", "a"]);
        git(&ws, &["commit", "-qm", "one"]);
        let marker = t.join("PLANTED-RAN");
        let script = format!(
            "git config core.fsmonitor 'touch {m}; false'; echo RAN",
            m = marker.display()
        );
        let g = ws.join(".git").display().to_string();
        let o = run_script(&ws, &home, layer, &["--write", &g], &script);
        let _ = host_git(&ws, &home, &["status"]);
        assert!(
            !marker.exists(),
            "{layer}: host `git status` ran the fsmonitor written through the .git grant: {}",
            err(&o)
        );
    }
}

#[test]
fn a_protected_name_linked_to_a_missing_directory_protects_where_it_leads() {
    // F35: `.cargo -> tools/cargo`, `.envrc -> scripts/envrc` with their
    // targets missing: the run made the targets, and host cargo and
    // direnv read them through the links. Both layers and the file guard.
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f35");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        git(&ws, &["init", "-q"]);
        std::os::unix::fs::symlink("tools/cargo", ws.join(".cargo")).unwrap();
        std::os::unix::fs::symlink("scripts/envrc", ws.join(".envrc")).unwrap();
        let script = "mkdir -p tools/cargo scripts; \
                      printf '[build]\\nrustc-wrapper = \"w.sh\"\\n' > tools/cargo/config.toml; \
                      echo 'touch PLANTED' > scripts/envrc; echo RAN";
        let o = run_script(&ws, &home, layer, &[], script);
        assert!(
            !text(&ws.join(".cargo/config.toml")).contains("rustc-wrapper"),
            "{layer}: the run made .cargo/config.toml through the dangling link: {}",
            err(&o)
        );
        assert!(
            !text(&ws.join(".envrc")).contains("PLANTED"),
            "{layer}: the run made .envrc through the dangling link: {}",
            err(&o)
        );
    }
    let t = TempDir::new("atk22h-f35-guard");
    let (home, ws) = (t.dir("home"), t.dir("ws"));
    git(&ws, &["init", "-q"]);
    std::os::unix::fs::symlink("tools/cargo", ws.join(".cargo")).unwrap();
    let target = ws.join("tools/cargo/config.toml");
    assert!(
        !write_goes_on(&ws, &home, &target),
        "the file guard allows a Write of {}",
        target.display()
    );
}

#[test]
fn a_protected_directory_linked_inside_the_workspace_is_kept_and_the_run_starts() {
    // F17: `.cargo -> cfg/cargo` (the target there): every run failed at
    // set-up ("bind (no symlinks) .cargo/config.toml"); now the target's
    // file stays the user's and the rest of the workspace is writable.
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f17");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        git(&ws, &["init", "-q"]);
        t.file("ws/cfg/cargo/config.toml", "[alias]\n");
        std::os::unix::fs::symlink("cfg/cargo", ws.join(".cargo")).unwrap();
        let script = "printf '[build]\\nrustc-wrapper = \"w.sh\"\\n' >> cfg/cargo/config.toml; \
                      echo ok > notes.txt; echo RAN";
        let o = run_script(&ws, &home, layer, &[], script);
        assert_eq!(
            text(&ws.join("cfg/cargo/config.toml")),
            "[alias]\n",
            "{layer}: {}",
            err(&o)
        );
        assert_eq!(text(&ws.join("notes.txt")), "ok\n", "{layer}: {}", err(&o));
    }
}

/// A PATH directory (in the test's directory) holding `name` with `text`,
/// mode 755, and the `PATH` to give: it first, then the test's own.
fn path_with(t: &TempDir, name: &str, text: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = t.dir("bin");
    let f = bin.join(name);
    std::fs::write(&f, text).unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// `sh -c script` in `ws` under `skarn run` with `layer` and `PATH`
/// `path`; the script ends with `echo RAN`.
fn run_with_path(
    ws: &Path,
    home: &Path,
    layer: &str,
    path: &str,
    script: &str,
) -> std::process::Output {
    let o = run_command(
        ws,
        home,
        &["--workspace-layer", layer],
        &["sh", "-c", script],
    )
    .env("PATH", path)
    .output()
    .unwrap();
    assert!(out(&o).contains("RAN"), "{layer}: {}{}", out(&o), err(&o));
    o
}

#[test]
fn a_path_script_naming_a_workspace_file_by_another_spelling_keeps_it() {
    // F9: a wrapper on PATH runs `sh <dir>/src/proj/tool.sh` where
    // `src -> data` is the user's alias of the workspace's parent, or
    // spells the path with `//`; F14: the wrapper has no `#!` line (the
    // shell runs it itself). The run rewrote `tool.sh`; the user's next
    // `mytool` ran it.
    for (case, spelling, shebang) in [
        ("link", "src/proj/tool.sh", true),
        ("slashes", "data//proj/tool.sh", true),
        ("no-shebang", "data/proj/tool.sh", false),
    ] {
        for layer in LAYERS {
            let t = TempDir::new("atk22h-f9");
            let home = t.dir("home");
            let ws = t.dir("data/proj");
            std::os::unix::fs::symlink(t.join("data"), t.join("src")).unwrap();
            std::fs::write(ws.join("tool.sh"), "echo tool\n").unwrap();
            let head = if shebang { "#!/bin/sh\n" } else { "" };
            let wrapper = format!("{head}exec sh {}/{spelling} \"$@\"\n", t.path().display());
            let path = path_with(&t, "mytool", &wrapper);
            let marker = t.join("PLANTED-RAN");
            let script = format!(
                "echo 'mkdir {m}' > tool.sh 2>/dev/null; echo RAN",
                m = marker.display()
            );
            let o = run_with_path(&ws, &home, layer, &path, &script);
            let _ = std::process::Command::new("sh")
                .args(["-c", "mytool"])
                .env("PATH", &path)
                .output()
                .unwrap();
            assert!(
                !marker.exists(),
                "{case}, {layer}: the host's PATH script ran the tool.sh the run rewrote: {}",
                err(&o)
            );
        }
    }
}

#[test]
fn an_unrelated_path_script_does_not_make_the_workspace_read_only() {
    // The other way: a PATH script whose words only resemble the
    // workspace's path (a longer name, a comment) leaves it writable.
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f9-fp");
        let home = t.dir("home");
        let ws = t.dir("data/proj");
        t.dir("data/project2");
        let wrapper = format!(
            "#!/bin/sh\n# was {d}/proj/tool.sh\nexec sh {d}/project2/tool.sh \"$@\"\n",
            d = t.join("data").display()
        );
        let path = path_with(&t, "other", &wrapper);
        let o = run_with_path(&ws, &home, layer, &path, "echo ok > notes.txt; echo RAN");
        assert_eq!(text(&ws.join("notes.txt")), "ok\n", "{layer}: {}", err(&o));
    }
}

#[test]
fn a_path_python_linked_into_another_prefix_has_that_prefixs_editable_installs_read() {
    // F33: `python3` on PATH is a link into another install
    // (`/usr/local/bin/python3 -> /opt/py/bin/python3.11`); python takes
    // its prefix from where the link leads, and an editable install's
    // `.pth` there names the workspace's `src`.
    let py = Path::new("/usr/bin/python3.11");
    let stdlib = Path::new("/usr/lib/python3.11");
    if !py.is_file() || !stdlib.join("encodings").is_dir() {
        skarn_test_support::skip!("no /usr/bin/python3.11 with its standard library");
    }
    let t = TempDir::new("atk22h-f33-link");
    let prefix = t.dir("opt/py");
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    std::fs::create_dir_all(prefix.join("lib")).unwrap();
    std::fs::copy(py, prefix.join("bin/python3.11")).unwrap();
    let cp = std::process::Command::new("cp")
        .arg("-a")
        .arg(stdlib)
        .arg(prefix.join("lib/python3.11"))
        .status()
        .unwrap();
    assert!(cp.success());
    let bin = t.dir("local/bin");
    std::os::unix::fs::symlink(prefix.join("bin/python3.11"), bin.join("python3")).unwrap();
    let site = prefix.join("lib/python3.11/dist-packages");
    std::fs::create_dir_all(&site).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for layer in LAYERS {
        let lt = TempDir::new("atk22h-f33-link-ws");
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
             echo RAN",
            marker.display()
        );
        let o = run_with_path(&ws, &home, layer, &path, &script);
        let h = std::process::Command::new(bin.join("python3"))
            .args(["-c", "from proj.cli import main; main()"])
            .env_clear()
            .output()
            .unwrap();
        assert!(
            !marker.exists(),
            "{layer}: the linked python ran the module the run rewrote: {}",
            err(&o)
        );
        assert!(
            String::from_utf8_lossy(&h.stdout).contains("proj ok"),
            "{layer}: the editable install does not load the project: {}",
            String::from_utf8_lossy(&h.stderr)
        );
    }
}

#[test]
fn a_fifo_a_direct_run_makes_in_the_work_tree_does_not_stay() {
    // F37 (direct layer): `mkfifo README.md` stayed; the host's `cat
    // README.md` (an agent's file tool, an editor) hung.
    let t = TempDir::new("atk22h-fifo");
    let (home, ws) = (t.dir("home"), t.dir("ws"));
    git(&ws, &["init", "-q"]);
    let o = run_script(
        &ws,
        &home,
        "direct",
        &[],
        "mkfifo README.md sub.lock; echo RAN",
    );
    for f in ["README.md", "sub.lock"] {
        let kind = std::fs::symlink_metadata(ws.join(f)).map(|m| m.file_type());
        assert!(
            !kind.is_ok_and(|k| std::os::unix::fs::FileTypeExt::is_fifo(&k)),
            "{f}: the run's FIFO stayed in the work tree: {}",
            err(&o)
        );
    }
}

#[test]
fn a_conda_prefix_without_activation_scripts_keeps_its_marker_in_the_direct_layer() {
    // F13 (direct layer, three runs): a conda prefix with no
    // `etc/conda/activate.d`; run 1 removes `conda-meta`, run 2 replaces
    // the prefix's `bin/python3` (no longer a conda prefix, so no longer
    // protected), run 3 puts `conda-meta` back; the host's python is the
    // run's.
    let t = TempDir::new("atk22h-f13");
    let (home, ws) = (t.dir("home"), t.dir("ws"));
    git(&ws, &["init", "-q"]);
    t.file("ws/env/conda-meta/history", "==> 2026-12-01 <==\n");
    t.file("ws/env/conda-meta/python-3.11.2-0.json", "{}\n");
    let python = t.file("ws/env/bin/python3", "#!/bin/sh\necho the users python\n");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let marker = t.join("PLANTED-RAN");
    for script in [
        "rm -rf env/conda-meta 2>/dev/null; echo RAN".to_string(),
        format!(
            "printf '#!/bin/sh\\nmkdir {m}\\n' > env/bin/python3 2>/dev/null; echo RAN",
            m = marker.display()
        ),
        "mkdir -p env/conda-meta && echo '==> 2026-12-01 <==' > env/conda-meta/history; echo RAN"
            .to_string(),
    ] {
        let _ = run_script(&ws, &home, "direct", &[], &script);
    }
    let _ = std::process::Command::new(&python).output();
    assert!(
        !marker.exists(),
        "the host ran the python a run put in the prefix"
    );
    assert_eq!(text(&python), "#!/bin/sh\necho the users python\n");
}

#[test]
fn lint_staged_commands_in_package_json_stay_the_users() {
    // lint-staged's `package.json` key: host git's pre-commit hook (`npx
    // lint-staged`) runs the commands it names. The run may change the
    // rest of the file (npm does), not that key.
    for layer in LAYERS {
        let t = TempDir::new("atk22h-lint-staged");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        git(&ws, &["init", "-q"]);
        let users = "{\"name\":\"p\",\"lint-staged\":{\"*.js\":\"eslint --fix\"}}\n";
        let pj = t.file("ws/package.json", users);
        let planted = "{\"name\":\"p\",\"lint-staged\":{\"*\":\"touch PLANTED\"}}";
        let script = format!("printf '%s\\n' '{planted}' > package.json; echo RAN");
        let o = run_script(&ws, &home, layer, &[], &script);
        assert!(
            !text(&pj).contains("PLANTED"),
            "{layer}: the run's lint-staged commands reached package.json: {}",
            err(&o)
        );
        // Another change to the file reaches it.
        let dep = "{\"name\":\"p\",\"dependencies\":{\"x\":\"1\"},\"lint-staged\":{\"*.js\":\"eslint --fix\"}}";
        let script = format!("printf '%s\\n' '{dep}' > package.json; echo RAN");
        let o = run_script(&ws, &home, layer, &[], &script);
        assert!(text(&pj).contains("dependencies"), "{layer}: {}", err(&o));
    }
}
