//! Issue 27, builder fx27c: credential files every run could read that
//! the toolchain walk never looked at (atk27q F6: Bundler's and
//! RubyGems' files; F9: project trees under `/usr/src`, directories named
//! like a store that are none), and a granted value lying around a
//! workspace under `/opt` (atk27q F10). Each test plants what an image
//! or a user would have, makes the real read from inside as root and as
//! uid 65534 and judges from outside by what the command printed; the
//! tools still work.

use std::path::{Path, PathBuf};
use std::process::Output;

use skarn_test_support::TempDir;

use crate::common::*;
use crate::support_planted::Planted;
use crate::support_secret_sources::{as_user, is_root, write_config};

const VALUE: &str = "fx27cCredValue0123456789abcdefXY";

/// `skarn run [flags] -- sh -c script` in `ws` with home `home`, extra
/// variables `vars`, as uid 65534 when `nobody` (`root` given to it).
fn run_sh(
    ws: &Path,
    home: &Path,
    root: &Path,
    flags: &[&str],
    vars: &[(&str, &str)],
    script: &str,
    nobody: bool,
) -> Output {
    let mut c = run_command(ws, home, flags, &["sh", "-c", script]);
    for v in ["GEM_HOME", "BUNDLE_APP_CONFIG", "GEMRC", "CARGO_HOME"] {
        c.env_remove(v);
    }
    c.env("PATH", "/usr/local/bin:/usr/bin:/bin");
    for (k, v) in vars {
        c.env(k, v);
    }
    let mut c = if nobody { as_user(c, root) } else { c };
    c.output().unwrap()
}

fn cats(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|p| format!("cat '{}' 2>&1;", p.display()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// atk27q F6: Bundler's configuration of the ruby images
/// (`/usr/local/bundle/config`, `$BUNDLE_APP_CONFIG/config`) with a gem
/// server's credential and RubyGems' `/etc/gemrc` with a source's
/// password were read by every run. Now hidden; a clean Bundler file is
/// still read, and `gem` still works.
#[test]
fn bundler_and_rubygems_credential_files_are_hidden() {
    if !is_root() {
        skarn_test_support::skip!("plants files in /usr/local, /opt and /etc: needs root");
    }
    let n = std::process::id();
    let mut planted = Planted(Vec::new());
    let app_cfg = PathBuf::from(format!("/opt/skarn-fx27c-rb-{n}/appcfg"));
    let mut secret = Vec::new();
    for (p, text) in [
        (
            PathBuf::from("/usr/local/bundle/config"),
            format!("---\nBUNDLE_GEMS__CONTRIBSYS__COM: \"u1234567:{VALUE}\"\n"),
        ),
        (
            app_cfg.join("config"),
            format!("---\nBUNDLE_GEMS__EXAMPLE__TEST: \"{VALUE}\"\n"),
        ),
        (
            PathBuf::from("/etc/gemrc"),
            format!("---\n:sources:\n- https://u:{VALUE}@gems.example.test/\n"),
        ),
    ] {
        if planted.file(&p, &text) {
            secret.push(p);
        }
    }
    assert!(!secret.is_empty(), "every place was taken on this host");
    let clean = PathBuf::from(format!("/opt/skarn-fx27c-rb-{n}/app/.bundle/config"));
    assert!(planted.file(&clean, "---\nBUNDLE_PATH: \"vendor/bundle\"\n"));
    let app = app_cfg.display().to_string();
    for nobody in [false, true] {
        let t = TempDir::new(if nobody { "fx27c_rb_n" } else { "fx27c_rb" });
        let root = t.path().to_path_buf();
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        let script = format!(
            "{} echo ---; cat '{}'; gem env >/dev/null 2>&1; echo gem=$?",
            cats(&secret),
            clean.display()
        );
        let vars = [("BUNDLE_APP_CONFIG", app.as_str())];
        let o = run_sh(&ws, &home, &root, &[], &vars, &script, nobody);
        let text = out(&o);
        assert!(
            !text.contains(VALUE) && !err(&o).contains(VALUE),
            "a Bundler or RubyGems credential file was read (uid 65534: {nobody}): {text}"
        );
        assert!(text.contains("vendor/bundle"), "clean file: {text}");
        if Path::new("/usr/bin/gem").exists() {
            assert!(text.contains("gem=0"), "gem: {text}{}", err(&o));
        }
    }
    for p in &secret {
        assert!(std::fs::read_to_string(p).unwrap().contains(VALUE));
    }
}

/// atk27q F9: project trees under `/usr/src` and `/usr/local/src` (the
/// Node images' `/usr/src/app` with the `.npmrc` of its `npm ci`), and
/// credential files under an `/opt` directory named `git` or `share` or
/// a conda environment named by two hexadecimal digits, were never
/// looked at. Now hidden; a clean `.npmrc` there is still read by npm.
#[test]
fn project_trees_and_directories_named_like_stores_are_looked_at() {
    if !is_root() {
        skarn_test_support::skip!("plants files in /usr/src, /usr/local/src and /opt: needs root");
    }
    let n = std::process::id();
    let mut planted = Planted(Vec::new());
    let npmrc = format!("//registry.example.test/:_authToken={VALUE}\n");
    let mut secret = Vec::new();
    for d in [
        format!("/usr/src/skarn-fx27c-{n}"),
        format!("/usr/local/src/skarn-fx27c-{n}"),
        format!("/opt/skarn-fx27c-app-{n}/git"),
        format!("/opt/skarn-fx27c-app-{n}/share"),
        format!("/opt/skarn-fx27c-app-{n}/deploy/test"),
        format!("/opt/skarn-fx27c-db-{n}/envs/db"),
    ] {
        let p = PathBuf::from(d).join(".npmrc");
        assert!(planted.file(&p, &npmrc));
        secret.push(p);
    }
    let condarc = PathBuf::from(format!("/opt/skarn-fx27c-db-{n}/envs/db/.condarc"));
    assert!(planted.file(
        &condarc,
        &format!("channels:\n  - https://conda.example.test/t/{VALUE}/chan\n")
    ));
    secret.push(condarc);
    let clean = PathBuf::from(format!("/usr/src/skarn-fx27c-clean-{n}"));
    assert!(planted.file(&clean.join(".npmrc"), "fund=false\n"));
    for nobody in [false, true] {
        let t = TempDir::new(if nobody { "fx27c_src_n" } else { "fx27c_src" });
        let root = t.path().to_path_buf();
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        let script = format!(
            "{} echo ---; cd '{}' && npm config get fund; echo npm=$?",
            cats(&secret),
            clean.display()
        );
        let o = run_sh(&ws, &home, &root, &[], &[], &script, nobody);
        let text = out(&o);
        assert!(
            !text.contains(VALUE) && !err(&o).contains(VALUE),
            "a project's credential file was read (uid 65534: {nobody}): {text}"
        );
        let npm = text.split("---").nth(1).unwrap_or("");
        assert!(
            npm.contains("false") && npm.contains("npm=0"),
            "npm did not read the clean file: {text}{}",
            err(&o)
        );
    }
    for p in &secret {
        assert!(std::fs::read_to_string(p).unwrap().contains(VALUE));
    }
}

/// atk27q F10: with the workspace under `/opt`, the repository's `.env`
/// above it and a file beside it holding the granted value were read by
/// the run given a placeholder. Now hidden from it; the run still runs
/// and the workspace's own files are read.
#[test]
fn a_granted_value_around_a_workspace_under_opt_is_hidden() {
    if !is_root() {
        skarn_test_support::skip!("makes a workspace under /opt: needs root");
    }
    let n = std::process::id();
    let mut planted = Planted(Vec::new());
    let top = PathBuf::from(format!("/opt/skarn-fx27c-w-{n}"));
    let env = top.join(".env");
    let beside = top.join("other/secrets.sh");
    assert!(planted.file(&env, &format!("FX27C_TOK={VALUE}\n")));
    assert!(planted.file(&beside, &format!("export FX27C_TOK={VALUE}\n")));
    assert!(planted.file(&top.join("app/readme.txt"), "hello\n"));
    let ws = top.join("app");
    for nobody in [false, true] {
        let t = TempDir::new(if nobody { "fx27c_w_n" } else { "fx27c_w" });
        let root = t.path().to_path_buf();
        let home = t.dir("home");
        write_config(
            &home,
            "[secrets.s]\nfrom_env = \"FX27C_TOK\"\nhosts = [\"example.test\"]\n",
        );
        if nobody {
            let st = std::process::Command::new("chown")
                .args(["-R", "65534:65534"])
                .arg(&top)
                .status()
                .unwrap();
            assert!(st.success());
        }
        let script = format!(
            "echo S=$FX27C_TOK; cat readme.txt; cat '{}' '{}' 2>&1; true",
            env.display(),
            beside.display()
        );
        let vars = [("FX27C_TOK", VALUE)];
        let o = run_sh(
            &ws,
            &home,
            &root,
            &["--secret", "s"],
            &vars,
            &script,
            nobody,
        );
        let text = out(&o);
        assert!(
            !text.contains(VALUE) && !err(&o).contains(VALUE),
            "the granted value was read around the workspace (uid 65534: {nobody}): {text}"
        );
        assert_eq!(code(&o), 0, "{text}{}", err(&o));
        assert!(
            text.contains("S=") && text.contains("hello"),
            "{text}{}",
            err(&o)
        );
    }
    for p in [&env, &beside] {
        assert!(std::fs::read_to_string(p).unwrap().contains(VALUE));
    }
}
