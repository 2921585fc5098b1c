//! Attack pass atk24k on issue 24, the `skarn run` side (F2, F8-F11): the
//! two layers (the hook's file guard and `skarn run`) agree on what a run
//! may leave behind for host programs. A nested package's npm, pnpm, yarn
//! and lint-staged files; persistence files at the top of a write grant
//! other than the workspace; code-running places of `~/.local/share`; a
//! write grant that is itself a `PATH` directory. Each is attempted for
//! real and judged from outside: the file is not there for the host
//! program afterwards, and the host program runs nothing planted.

use std::path::Path;
use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

fn gone(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_err()
}

/// F2: a nested package's `.npmrc`, `.pnpmfile.cjs`, `.yarnrc.yml` and a
/// package-local lint-staged configuration the run makes are set aside;
/// host npm in that package runs nothing planted. An existing nested
/// `.npmrc` stays as it was.
#[test]
fn f2_a_nested_packages_tool_configs_are_not_left_for_the_host() {
    let t = TempDir::new("k-f2");
    let home = t.dir("home");
    let ws = t.dir("home/p");
    git(&ws, &["init", "-q"]);
    t.file(
        "home/p/frontend/package.json",
        r#"{"name":"fe","version":"1.0.0","private":true,"scripts":{"build":"echo building"}}"#,
    );
    t.file(
        "home/p/web/package.json",
        r#"{"name":"web","version":"1.0.0"}"#,
    );
    t.file("home/p/web/.npmrc", "fund=false\n");
    t.file("home/p/packages/ui/package.json", r#"{"name":"ui"}"#);
    let victim = t.join("victim");
    let shell = ws.join("frontend/tools/sh.sh");
    let plant = format!(
        "mkdir -p frontend/tools; printf '#!/bin/sh\\ntouch {v}\\nexec /bin/sh \"$@\"\\n' > {s}; \
         chmod +x {s}; printf 'script-shell={s}\\n' > frontend/.npmrc; \
         echo 'module.exports = {{}}' > frontend/.pnpmfile.cjs; \
         echo 'yarnPath: tools/sh.sh' > frontend/.yarnrc.yml; \
         echo 'module.exports = {{}}' > packages/ui/.lintstagedrc.js; \
         echo 'x' >> web/.npmrc; true",
        v = victim.display(),
        s = shell.display()
    );
    let o = run_in(&ws, &home, &[], &["sh", "-c", &plant]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    for f in [
        "frontend/.npmrc",
        "frontend/.pnpmfile.cjs",
        "frontend/.yarnrc.yml",
        "packages/ui/.lintstagedrc.js",
    ] {
        assert!(gone(&ws.join(f)), "{f} left for the host: {}", err(&o));
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("web/.npmrc")).unwrap(),
        "fund=false\n"
    );
    if !host_has("npm", "--version") {
        skarn_test_support::skip!("npm is needed for the host half");
    }
    let _ = Command::new("npm")
        .args(["run", "build"])
        .current_dir(ws.join("frontend"))
        .env("HOME", &home)
        .env("NPM_CONFIG_UPDATE_NOTIFIER", "false")
        .output()
        .expect("npm");
    assert!(!victim.exists(), "host npm ran the planted script-shell");
}

/// F8, F9: at the top of a write grant other than the workspace (the
/// user's other project), the persistence files the run makes are set
/// aside; its ordinary files stay.
#[test]
fn f8_f9_persistence_files_at_a_write_grants_top_are_set_aside() {
    let t = TempDir::new("k-f9");
    let home = t.dir("home");
    let ws = t.dir("home/p");
    git(&ws, &["init", "-q"]);
    let lib = t.dir("home/mylib");
    git(&lib, &["init", "-q"]);
    t.file(
        "home/mylib/Cargo.toml",
        "[package]\nname = \"lib\"\nversion = \"0.1.0\"\n",
    );
    t.file("home/mylib/.vscode/settings.json", "{}\n");
    let l = lib.display().to_string();
    let plant = format!(
        "printf '[toolchain]\\npath = \"/tmp/x\"\\n' > {l}/rust-toolchain.toml; \
         echo 'echo from-agent' > {l}/.envrc; echo '{{}}' > {l}/.mcp.json; \
         echo 'x' > {l}/.pre-commit-config.yaml; mkdir -p {l}/src; echo 'pub fn f() {{}}' > {l}/src/lib.rs; \
         echo '{{\"x\":1}}' > {l}/.vscode/settings.json; true"
    );
    let o = run_in(&ws, &home, &["--write", &l], &["sh", "-c", &plant]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    for f in [
        "rust-toolchain.toml",
        ".envrc",
        ".mcp.json",
        ".pre-commit-config.yaml",
    ] {
        assert!(
            gone(&lib.join(f)),
            "{f} left at the grant's top: {}",
            err(&o)
        );
    }
    assert!(
        err(&o).contains("at the top of the writable grant"),
        "{}",
        err(&o)
    );
    assert_eq!(
        std::fs::read_to_string(lib.join(".vscode/settings.json")).unwrap(),
        "{}\n"
    );
    assert!(
        lib.join("src/lib.rs").exists(),
        "the run's own work is kept"
    );
    assert!(lib.join(".git/HEAD").exists());
}

/// F10: under a broad `~/.local/share` write grant, fish's vendor
/// directories, systemd and D-Bus user services and nvim's site tree are
/// not left planted; host fish runs nothing planted.
#[test]
fn f10_code_running_places_of_the_data_home_stay_unplanted() {
    let t = TempDir::new("k-f10");
    let home = t.dir("home");
    let ws = t.dir("home/p");
    git(&ws, &["init", "-q"]);
    t.file("home/.local/share/fish/fish_history", "");
    t.dir("home/.local/share/nvim");
    let share = home.join(".local/share");
    let victim = t.join("victim");
    let s = share.display().to_string();
    let plant = format!(
        "for d in fish/vendor_conf.d fish/vendor_functions.d nvim/site/plugin systemd/user \
         dbus-1/services; do mkdir -p {s}/$d 2>/dev/null; done; \
         echo 'touch {v}' > {s}/fish/vendor_conf.d/x.fish; \
         echo 'x' > {s}/fish/vendor_functions.d/ls.fish; \
         echo 'x' > {s}/nvim/site/plugin/x.lua; \
         printf '[Service]\\nExecStart=/bin/true\\n' > {s}/systemd/user/x.service; \
         echo 'x' > {s}/dbus-1/services/org.x.service; \
         echo kept > {s}/notes.txt; true",
        v = victim.display()
    );
    let o = run_in(&ws, &home, &["--write", &s], &["sh", "-c", &plant]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    for f in [
        "fish/vendor_conf.d/x.fish",
        "fish/vendor_functions.d/ls.fish",
        "nvim/site/plugin/x.lua",
        "systemd/user/x.service",
        "dbus-1/services/org.x.service",
    ] {
        assert!(gone(&share.join(f)), "{f} planted: {}", err(&o));
    }
    assert!(share.join("notes.txt").exists(), "the grant stays writable");
    if host_has("fish", "--version") {
        let _ = Command::new("fish")
            .args(["-c", "true"])
            .env("HOME", &home)
            .env_remove("XDG_DATA_HOME")
            .output();
        assert!(!victim.exists(), "host fish ran the planted file");
    }
}

/// F11: a write grant that is itself a `PATH` directory (pnpm's global
/// bin, `~/tools/bin`): a program named like one later on `PATH` is set
/// aside after the run, so the host's next `git` is the real one; a new
/// program of its own name is kept (the global install the grant is for).
#[test]
fn f11_a_path_directory_granted_whole_shadows_nothing() {
    let t = TempDir::new("k-f11");
    let home = t.dir("home");
    let ws = t.dir("home/p");
    git(&ws, &["init", "-q"]);
    let bin = t.dir("home/tools/bin");
    let b = bin.display().to_string();
    let path = format!("{b}:/usr/local/bin:/usr/bin:/bin");
    let plant = format!(
        "printf '#!/bin/sh\\necho PLANTED-GIT\\n' > {b}/git; chmod +x {b}/git; \
         printf '#!/bin/sh\\necho mine\\n' > {b}/skarn-k-f11-tool; chmod +x {b}/skarn-k-f11-tool"
    );
    let o = run_command(&ws, &home, &["--write", &b], &["sh", "-c", &plant])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(gone(&bin.join("git")), "git shadow left: {}", err(&o));
    assert!(bin.join("skarn-k-f11-tool").exists(), "{}", err(&o));
    let host = Command::new("sh")
        .args(["-c", "git --version"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&host.stdout).contains("PLANTED"),
        "host git ran the planted program"
    );
}
