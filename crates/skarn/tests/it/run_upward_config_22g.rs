//! Attack atk22g F16-F19: configuration host programs look up OUTSIDE the
//! workspace naming files INSIDE it. A parent's `.envrc` and `mise.toml`
//! (direnv and mise read every parent's), a parent's
//! `.cargo/config.toml`, `rust-toolchain.toml` and `.yarnrc` (cargo,
//! rustup, yarn 1 search upward), a relocated `$CARGO_HOME`'s
//! configuration, the repository ENCLOSING a workspace that is a
//! subdirectory of its work tree, and repositories NESTED in the
//! workspace: what they name stays as it was. Judged from outside: the
//! files after the run, and where the tool is installed the host program
//! itself run afterwards (git always; cargo when the host has it) did
//! not run the planted code. Both workspace layers.

use std::path::Path;
use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

const LAYERS: &[&str] = &["direct", "cow"];

fn read(f: &Path) -> String {
    std::fs::read_to_string(f).unwrap_or_default()
}

fn exec(p: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Host git with `home` and no system configuration.
fn host_git(dir: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap()
}

#[test]
fn what_parents_envrc_and_mise_name_stays_as_it_was() {
    for layer in LAYERS {
        let t = TempDir::new("up-envrc");
        let home = t.dir("home");
        let ws = t.dir("work/proj");
        host_git(&ws, &home, &["init", "-q", "."]);
        let env_sh = t.file("work/proj/scripts/env.sh", "export HELLO=1\n");
        let mise_sh = t.file("work/proj/scripts/mise-env.sh", "true\n");
        t.file(
            "work/.envrc",
            "source proj/scripts/env.sh\nPATH_add proj/bin\n",
        );
        t.dir("work/proj/bin");
        t.file(
            "work/mise.toml",
            "[env]\n_.source = \"proj/scripts/mise-env.sh\"\n",
        );
        let o = run_command(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &[
                "sh",
                "-c",
                "echo 'touch /tmp/pwned' > scripts/env.sh; \
                 echo 'touch /tmp/pwned' > scripts/mise-env.sh; \
                 printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > bin/ls; \
                 echo ok > scripts/other; echo RAN",
            ],
        )
        .current_dir(&ws)
        .output()
        .unwrap();
        let said = format!("{}{}", out(&o), err(&o));
        assert!(said.contains("RAN"), "{layer}: did not run: {said}");
        assert_eq!(read(&env_sh), "export HELLO=1\n", "{layer}: {said}");
        assert_eq!(read(&mise_sh), "true\n", "{layer}: {said}");
        assert!(
            !ws.join("bin/ls").exists(),
            "{layer}: a program was planted in a PATH directory a parent's .envrc adds: {said}"
        );
        assert_eq!(
            read(&ws.join("scripts/other")),
            "ok\n",
            "{layer}: the rest of the workspace became read-only: {said}"
        );
    }
}

#[test]
fn what_parents_cargo_rustup_and_yarn_configuration_names_stays_as_it_was() {
    let cargo = host_has("cargo", "--version");
    for layer in LAYERS {
        let t = TempDir::new("up-cargo");
        let home = t.dir("home");
        let ws = t.dir("work/proj");
        host_git(&ws, &home, &["init", "-q", "."]);
        let wrap = ws.join("tools/wrap");
        exec(&wrap, "#!/bin/sh\nexec \"$@\"\n");
        let yarn = t.file("work/proj/tools/yarn.js", "// yarn\n");
        let tc = t.file("work/proj/tc/bin/cargo", "#!/bin/sh\n");
        t.file(
            "work/.cargo/config.toml",
            format!("[build]\nrustc-wrapper = \"{}\"\n", wrap.display()),
        );
        t.file(
            "work/rust-toolchain.toml",
            "[toolchain]\npath = \"proj/tc\"\n",
        );
        t.file("work/.yarnrc", "yarn-path \"proj/tools/yarn.js\"\n");
        // A relocated CARGO_HOME naming the same wrapper (relative).
        let chome = t.dir("chome");
        t.file(
            "chome/config.toml",
            "[target.x86_64-unknown-linux-gnu]\nrunner = \"work/proj/tools/run\"\n",
        );
        let runner = ws.join("tools/run");
        exec(&runner, "#!/bin/sh\nexec \"$@\"\n");
        let pwned = t.path().join("PWNED");
        let plant = format!(
            "#!/bin/sh\\ntouch {}\\nexec \\\"\\$@\\\"\\n",
            pwned.display()
        );
        let script = format!(
            "printf \"{plant}\" > tools/wrap; \
             echo 'require(\"fs\")' > tools/yarn.js; echo x > tc/bin/cargo; \
             echo ok > tools/other; echo RAN"
        );
        let o = run_command(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", &script],
        )
        .current_dir(&ws)
        .output()
        .unwrap();
        let said = format!("{}{}", out(&o), err(&o));
        assert!(said.contains("RAN"), "{layer}: did not run: {said}");
        assert_eq!(read(&wrap), "#!/bin/sh\nexec \"$@\"\n", "{layer}: {said}");
        assert_eq!(read(&yarn), "// yarn\n", "{layer}: {said}");
        assert_eq!(read(&tc), "#!/bin/sh\n", "{layer}: {said}");
        assert_eq!(read(&ws.join("tools/other")), "ok\n", "{layer}: {said}");
        if cargo {
            // The host's next build in another project below the parent.
            let other = t.dir("work/other/src");
            t.file(
                "work/other/Cargo.toml",
                "[package]\nname = \"other\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            );
            t.file("work/other/src/main.rs", "fn main() {}\n");
            // (rust-toolchain.toml names a toolchain directory this test
            // cannot make real: the parent's copy is removed first.)
            std::fs::remove_file(t.path().join("work/rust-toolchain.toml")).unwrap();
            let b = Command::new("cargo")
                .args(["build", "--offline", "-q"])
                .current_dir(other.parent().unwrap())
                .env("CARGO_TARGET_DIR", t.path().join("work/other/target"))
                .output()
                .unwrap();
            assert!(
                !pwned.exists(),
                "{layer}: host cargo ran the planted rustc-wrapper: {said} / {}",
                String::from_utf8_lossy(&b.stderr)
            );
        } else {
            eprintln!("cargo is not installed for this user: judged by the files only");
        }
        // The relocated CARGO_HOME's runner, with the variable set.
        let script = format!("printf \"{plant}\" > tools/run; echo RAN");
        let o = run_command(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", &script],
        )
        .current_dir(&ws)
        .env("CARGO_HOME", &chome)
        .output()
        .unwrap();
        let said = format!("{}{}", out(&o), err(&o));
        assert_eq!(
            read(&runner),
            "#!/bin/sh\nexec \"$@\"\n",
            "{layer}: $CARGO_HOME's runner was rewritten: {said}"
        );
    }
}

/// A repository with `core.hooksPath` and `core.fsmonitor` relative to
/// its top, both in `tools/`; committed once.
fn repo_with_programs(t: &TempDir, home: &Path, rel: &str) -> std::path::PathBuf {
    let repo = t.dir(rel);
    host_git(&repo, home, &["init", "-q", "."]);
    for (k, v) in [
        ("user.name", "u"),
        ("user.email", "u@x"),
        ("core.hooksPath", "tools/hooks"),
        ("core.fsmonitor", "tools/fsmon.sh"),
    ] {
        host_git(&repo, home, &["config", k, v]);
    }
    exec(&repo.join("tools/hooks/pre-commit"), "#!/bin/sh\nexit 0\n");
    exec(&repo.join("tools/fsmon.sh"), "#!/bin/sh\nexit 0\n");
    host_git(&repo, home, &["add", "-A"]);
    host_git(&repo, home, &["commit", "-qm", "init"]);
    repo
}

#[test]
fn programs_of_the_enclosing_repository_stay_as_they_were() {
    for layer in LAYERS {
        let t = TempDir::new("up-enclosing");
        let home = t.dir("home");
        let repo = repo_with_programs(&t, &home, "repo");
        let ws = repo.join("tools");
        let pwned = t.path().join("PWNED");
        let script = format!(
            "printf '#!/bin/sh\\ntouch {p}\\n' > hooks/pre-commit; \
             printf '#!/bin/sh\\ntouch {p}\\n' > fsmon.sh; echo ok > other; echo RAN",
            p = pwned.display()
        );
        let o = run_command(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", &script],
        )
        .current_dir(&ws)
        .output()
        .unwrap();
        let said = format!("{}{}", out(&o), err(&o));
        assert!(said.contains("RAN"), "{layer}: did not run: {said}");
        // The host's next git in the repository.
        host_git(&repo, &home, &["status"]);
        host_git(&repo, &home, &["commit", "-q", "--allow-empty", "-m", "x"]);
        assert!(
            !pwned.exists(),
            "{layer}: host git ran a program the run planted: {said}"
        );
        assert_eq!(read(&ws.join("other")), "ok\n", "{layer}: {said}");
    }
}

#[test]
fn programs_a_nested_repository_names_stay_as_they_were() {
    for layer in LAYERS {
        let t = TempDir::new("up-nested");
        let home = t.dir("home");
        let ws = t.dir("ws");
        host_git(&ws, &home, &["init", "-q", "."]);
        exec(&ws.join("tools/fsmon.sh"), "#!/bin/sh\nexit 0\n");
        exec(&ws.join("tools/hooks/pre-commit"), "#!/bin/sh\nexit 0\n");
        let inc = t.file("ws/tools/git.inc", "[user]\n\tname = u\n");
        let dep = t.dir("ws/libs/dep");
        host_git(&dep, &home, &["init", "-q", "."]);
        let fsmon = ws.join("tools/fsmon.sh");
        for (k, v) in [
            ("user.name", "u"),
            ("user.email", "u@x"),
            ("core.fsmonitor", fsmon.to_str().unwrap()),
            ("core.hooksPath", "../../tools/hooks"),
            ("include.path", "../../../tools/git.inc"),
        ] {
            host_git(&dep, &home, &["config", k, v]);
        }
        host_git(&dep, &home, &["commit", "-q", "--allow-empty", "-m", "i"]);
        let pwned = t.path().join("PWNED");
        let script = format!(
            "printf '#!/bin/sh\\ntouch {p}\\n' > tools/fsmon.sh; \
             printf '#!/bin/sh\\ntouch {p}\\n' > tools/hooks/pre-commit; \
             printf '[core]\\n\\tfsmonitor = {ws}/tools/x.sh\\n' >> tools/git.inc; \
             echo ok > other; echo RAN",
            p = pwned.display(),
            ws = ws.display()
        );
        let o = run_command(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", &script],
        )
        .current_dir(&ws)
        .output()
        .unwrap();
        let said = format!("{}{}", out(&o), err(&o));
        assert!(said.contains("RAN"), "{layer}: did not run: {said}");
        assert_eq!(read(&inc), "[user]\n\tname = u\n", "{layer}: {said}");
        host_git(&dep, &home, &["status"]);
        host_git(&dep, &home, &["commit", "-q", "--allow-empty", "-m", "x"]);
        assert!(
            !pwned.exists(),
            "{layer}: host git in the nested repository ran a planted program: {said}"
        );
        assert_eq!(read(&ws.join("other")), "ok\n", "{layer}: {said}");
    }
}

/// atk22g F8: a link the run leaves from `target/debug` to a writable
/// directory outside the workspace (`~/.local/bin`, on `PATH`) is set
/// aside (direct) or refused (copy-on-write), so the host's next plain
/// `cargo build` writes nothing there; a link to a file outside stays.
#[test]
fn links_out_to_writable_directories_do_not_survive_the_run() {
    let cargo = host_has("cargo", "--version");
    for layer in LAYERS {
        let t = TempDir::new("links-out-dir");
        let home = t.dir("home");
        let bin = t.dir("home/.local/bin");
        let ws = t.dir("ws");
        host_git(&ws, &home, &["init", "-q", "."]);
        t.file(
            "ws/Cargo.toml",
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [[bin]]\nname = \"git\"\npath = \"src/main.rs\"\n",
        );
        t.file("ws/src/main.rs", "fn main() {}\n");
        let script = format!(
            "mkdir -p target && ln -s {} target/debug && ln -s /bin/sh shlink && echo RAN",
            bin.display()
        );
        let o = run_command(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", &script],
        )
        .current_dir(&ws)
        .output()
        .unwrap();
        let said = format!("{}{}", out(&o), err(&o));
        assert!(said.contains("RAN"), "{layer}: did not run: {said}");
        let left = std::fs::read_link(ws.join("target/debug")).ok();
        assert_ne!(
            left.as_deref(),
            Some(bin.as_path()),
            "{layer}: the link out to {} survived: {said}",
            bin.display()
        );
        if *layer == "direct" {
            assert!(
                std::fs::read_link(ws.join("shlink")).is_ok(),
                "{layer}: a link to a file outside was removed: {said}"
            );
        }
        if cargo {
            let b = Command::new("cargo")
                .args(["build", "--offline", "-q"])
                .current_dir(&ws)
                .env_remove("CARGO_TARGET_DIR")
                .output()
                .unwrap();
            assert!(
                !bin.join("git").exists(),
                "{layer}: host cargo wrote a program into {}: {}",
                bin.display(),
                String::from_utf8_lossy(&b.stderr)
            );
        }
    }
}
