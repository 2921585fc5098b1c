//! Issue 27, builder b27s: credential files every run can read outside
//! the home (atk27p F1, F3; atk22m F1, F2, F4, F6) and credentials in a
//! URL's path (atk27p F5). Each test plants the files or variables a user
//! or an image would have, makes the real read from inside and judges
//! from outside by what the command printed; the tools still work.

use std::path::{Path, PathBuf};
use std::process::Output;

use skarn_test_support::TempDir;

use crate::common::*;
use crate::support_planted::Planted;
use crate::support_secret_sources::{as_user, is_root};

const VALUE: &str = "b27sCredValue0123456789abcdefXYZ";

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// `skarn run -- sh -c script` in `ws` with home `home` and `PATH` `path`,
/// as uid 65534 when `nobody` (`root` given to it first).
fn run_sh(ws: &Path, home: &Path, root: &Path, path: &str, script: &str, nobody: bool) -> Output {
    let mut c = run_command(ws, home, &[], &["sh", "-c", script]);
    for v in [
        "NVM_DIR",
        "PYENV_ROOT",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "CARGO_HOME",
        "NPM_CONFIG_PREFIX",
        "PIP_CONFIG_FILE",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_NOSYSTEM",
    ] {
        c.env_remove(v);
    }
    c.env("PATH", path);
    let mut c = if nobody { as_user(c, root) } else { c };
    c.output().unwrap()
}

/// atk27p F1, F3, atk22m F1, F2: installations under `/opt` and
/// `/usr/local` (conda's root, a node and a python prefix, Maven) and the
/// system's own configuration files of pip, git, conda and apt were read
/// by every run. Now hidden when they hold a credential; a clean one is
/// still read, and git, pip and npm still work.
#[test]
fn system_and_installation_credential_files_are_hidden() {
    if !is_root() {
        skarn_test_support::skip!("plants files in /opt, /usr/local and /etc: needs root");
    }
    let n = std::process::id();
    let mut planted = Planted(Vec::new());
    let opt = PathBuf::from(format!("/opt/skarn-b27s-{n}"));
    let nvm = PathBuf::from(format!("/usr/local/share/skarn-b27s-nvm-{n}"));
    let node = nvm.join("versions/node/v20.0.0");
    let py = PathBuf::from(format!("/usr/local/skarn-b27s-py-{n}/3.12"));
    let url = format!("https://u:{VALUE}@idx.example/simple");
    let mut secret: Vec<PathBuf> = Vec::new();
    let mut plant = |p: &Path, text: String| {
        if planted.file(p, &text) {
            secret.push(p.to_path_buf());
        }
    };
    plant(
        &opt.join("conda/.condarc"),
        format!("channels:\n  - {url}\n"),
    );
    plant(
        &opt.join("conda/pip.conf"),
        format!("[global]\nindex-url = {url}\n"),
    );
    plant(
        &opt.join("conda/.pypirc"),
        format!("[pypi]\npassword = {VALUE}\n"),
    );
    plant(
        &opt.join("maven/conf/settings.xml"),
        format!(
            "<settings><servers><server><password>{VALUE}</password></server></servers></settings>\n"
        ),
    );
    plant(
        &node.join("etc/npmrc"),
        format!("//r.example/:_authToken={VALUE}\n"),
    );
    plant(
        &py.join("pip.conf"),
        format!("[global]\nindex-url = {url}\n"),
    );
    // The system's fixed places, with settings the tools ignore (other
    // tests' pip and git runs read them while this one runs).
    plant(
        Path::new("/usr/local/pip.conf"),
        format!("[b27s]\npassword = {VALUE}\n"),
    );
    plant(
        Path::new("/usr/local/etc/gitconfig"),
        format!("[b27s]\n\textraHeader = Authorization: Bearer {VALUE}\n"),
    );
    plant(
        Path::new("/etc/xdg/pip/pip.conf"),
        format!("[b27s]\ntoken = {VALUE}\n"),
    );
    plant(
        Path::new("/etc/conda/.condarc"),
        format!("channels:\n  - {url}\n"),
    );
    plant(
        Path::new(&format!("/etc/conda/condarc.d/skarn-b27s-{n}.yml")),
        format!("channels:\n  - {url}\n"),
    );
    plant(
        Path::new(&format!("/etc/apt/auth.conf.d/skarn-b27s-{n}.conf")),
        format!("machine apt.example login ci password {VALUE}\n"),
    );
    // A clean global npm file of an /opt node: read inside.
    let clean = opt.join("node");
    planted.file(&clean.join("etc/npmrc"), "fund=false\n");
    assert!(secret.len() >= 8, "{secret:?}");
    let path = format!(
        "{}/bin:{}/bin:/usr/local/bin:/usr/bin:/bin",
        node.display(),
        py.display()
    );
    for nobody in [false, true] {
        let t = TempDir::new(if nobody { "b27s_sys_n" } else { "b27s_sys" });
        let root = t.path().to_path_buf();
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        let st = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&ws)
            .status()
            .unwrap();
        assert!(st.success());
        let cats: Vec<String> = secret
            .iter()
            .map(|p| format!("cat '{}' 2>&1;", p.display()))
            .collect();
        let script = format!(
            "{} echo ---; git status --short >/dev/null; echo git=$?; \
             /usr/bin/python3 -m pip config list >/dev/null; echo pip=$?; \
             NPM_CONFIG_PREFIX='{}' npm config get fund; echo npm=$?",
            cats.join(" "),
            clean.display()
        );
        let o = run_sh(&ws, &home, &root, &path, &script, nobody);
        let text = out(&o);
        assert!(
            !text.contains(VALUE) && !err(&o).contains(VALUE),
            "a system credential file was read (uid 65534: {nobody}): {text}"
        );
        for want in ["git=0", "pip=0", "npm=0"] {
            assert!(text.contains(want), "{want}: {text}{}", err(&o));
        }
        let npm = text.split("---").nth(1).unwrap_or("");
        assert!(
            npm.contains("false"),
            "npm did not read the clean file: {text}"
        );
    }
    for p in &secret {
        assert!(std::fs::read_to_string(p).unwrap().contains(VALUE));
    }
}

/// atk22m F4: the one walk budget was spent by a pnpm store, and the
/// credential files of nvm and pyenv were readable. Now a store is not
/// walked, each tree has its own budget, and a tree past it is still
/// looked at at the tools' places.
#[test]
fn a_big_store_or_tree_does_not_switch_the_hiding_off() {
    for nobody in [false, true] {
        if nobody && !is_root() {
            continue;
        }
        let t = TempDir::new(if nobody {
            "b27s_budget_n"
        } else {
            "b27s_budget"
        });
        let root = t.path().to_path_buf();
        let home = t.dir("home");
        let proj = home.join("proj");
        write(
            &proj.join("package.json"),
            "{\"name\":\"x\",\"version\":\"1.0.0\"}\n",
        );
        write(
            &proj.join("pyproject.toml"),
            "[project]\nname=\"x\"\nversion=\"0\"\n",
        );
        let files = home.join(".local/share/pnpm/store/v3/files");
        for d in 0..90 {
            let dir = files.join(format!("{:02x}", d + 16));
            std::fs::create_dir_all(&dir).unwrap();
            for i in 0..460 {
                std::fs::write(dir.join(format!("{i}")), "").unwrap();
            }
        }
        let node = home.join(".nvm/versions/node/v20.0.0");
        write(
            &node.join("etc/npmrc"),
            &format!("//r.example/:_authToken={VALUE}\n"),
        );
        std::fs::create_dir_all(node.join("bin")).unwrap();
        // A tree past its own budget (a big alias directory).
        let junk = home.join(".nvm/alias-junk");
        std::fs::create_dir_all(&junk).unwrap();
        for i in 0..20_100 {
            std::fs::write(junk.join(format!("{i}")), "").unwrap();
        }
        write(
            &home.join(".pyenv/pip.conf"),
            &format!("[global]\nindex-url = https://u:{VALUE}@x.example/simple\n"),
        );
        let path = format!("{}/bin:/usr/bin:/bin", node.display());
        let script = format!(
            "cat '{}' '{}' 2>&1; echo done",
            node.join("etc/npmrc").display(),
            home.join(".pyenv/pip.conf").display()
        );
        let o = run_sh(&proj, &home, &root, &path, &script, nobody);
        assert!(
            !out(&o).contains(VALUE) && out(&o).contains("done"),
            "a toolchain credential file was read (uid 65534: {nobody}): {}{}",
            out(&o),
            err(&o)
        );
    }
}

/// atk27p F5, atk22m F6: credentials in a URL's path (webhooks, a bot's
/// token, a channel token route) passed the query-credential scrub of the
/// environment, and a toolchain `.condarc` holding a `/t/<token>/` channel
/// was readable. Now both are judged by the path's shape; an ordinary
/// URL is kept.
#[test]
fn credentials_in_a_urls_path_do_not_reach_the_command() {
    let t = TempDir::new("b27s_paths");
    let root = t.path().to_path_buf();
    let home = t.dir("home");
    let proj = home.join("proj");
    write(
        &proj.join("pyproject.toml"),
        "[project]\nname=\"x\"\nversion=\"0\"\n",
    );
    let condarc = home.join(".pyenv/versions/3.12.1/.condarc");
    let token = "ab-12345678-1234-1234-1234-123456789abc";
    write(
        &condarc,
        &format!("channels:\n  - https://conda.example/t/{token}/acme\n"),
    );
    let hooks = [
        (
            "NOTIFY_URL",
            "https://hooks.example/services/T0123ABCD/B0456EFGH/X7hGq2LmP9sKd3RtW8vYb1Nc",
        ),
        (
            "DISCORD_HOOK",
            "https://chat.example/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        ),
        (
            "TG",
            "https://api.example/bot123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11/sendMessage",
        ),
        (
            "CHANNEL",
            "https://conda.example/t/ab-12345678-1234-1234-1234-123456789abc/acme",
        ),
    ];
    let keep = (
        "DOCS_URL",
        "https://docs.example/v1/getting-started/install",
    );
    let script = format!("env; cat '{}' 2>&1; echo done", condarc.display());
    let mut c = run_command(&proj, &home, &[], &["sh", "-c", &script]);
    c.env_remove("PYENV_ROOT").env("PATH", "/usr/bin:/bin");
    for (k, v) in hooks.iter().chain([&keep]) {
        c.env(k, v);
    }
    let o = as_user(c, &root).output().unwrap();
    let text = out(&o);
    assert!(text.contains("done"), "{text}{}", err(&o));
    for (k, v) in hooks {
        let secret = v.rsplit(['/', ':']).find(|s| s.len() >= 20).unwrap_or(v);
        assert!(!text.contains(secret), "{k} reached the command: {text}");
    }
    assert!(!text.contains(token), "the channel token was read: {text}");
    assert!(text.contains(keep.1), "an ordinary URL was dropped: {text}");
}
