//! `skarn run`, issue 22 (h22p): files host programs run on their own.
//! atk22j H3: JavaScript and CSS tool configuration that editor
//! extensions load as code when the folder or a file is opened
//! (`eslint.config.js`, `tailwind.config.js`, `.prettierrc`, ...): a run
//! may neither change one the project has nor leave a new one at the
//! workspace's top, in both workspace layers. Judged from outside, after
//! the run: the host's file is the user's, no planted one is where the
//! editor looks. atk22k F6, F10: pylint's and commitlint's
//! configuration (and their kin), which an editor or the usual commit
//! hook loads as code, the same way. atk22k F1, F1b, F2: an environment file whose quoted
//! value hides shell syntax or a path behind a `#`, or names a file the
//! run made by a bare word, is not left where host loaders read it.

use crate::common::*;
use crate::support_h22p::{LAYERS, failures};
use skarn_test_support::TempDir;

#[test]
fn configuration_editors_and_commit_hooks_load_stays_the_users() {
    let planted = "module.exports = require('child_process').execSync('id > /tmp/x');\n";
    let mut failed = Vec::new();
    for layer in LAYERS {
        let t = TempDir::new("h22p-js");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        std::fs::write(ws.join("package.json"), "{\"name\":\"p\"}\n").unwrap();
        let user = "module.exports = { content: ['./src/**/*.js'] };\n";
        std::fs::write(ws.join("tailwind.config.js"), user).unwrap();
        let script = "for f in eslint.config.mjs .prettierrc svelte.config.js babel.config.js \
             .pylintrc commitlint.config.js .czrc .secrets.baseline; do \
             printf %s \"$P\" > $f; done; printf %s \"$P\" >> tailwind.config.js; \
             echo ok > index.js; true";
        let o = run_command(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", script],
        )
        .env("P", planted)
        .output()
        .unwrap();
        let ctx = format!("[{layer}] {}", err(&o));
        if std::fs::read_to_string(ws.join("index.js")).ok().as_deref() != Some("ok\n") {
            failed.push(format!("{ctx}: an ordinary file was not written"));
        }
        if std::fs::read_to_string(ws.join("tailwind.config.js")).unwrap() != user {
            failed.push(format!("{ctx}: tailwind.config.js was changed"));
        }
        for f in [
            "eslint.config.mjs",
            ".prettierrc",
            "svelte.config.js",
            "babel.config.js",
            ".pylintrc",
            "commitlint.config.js",
            ".czrc",
            ".secrets.baseline",
        ] {
            if std::fs::read_to_string(ws.join(f)).is_ok_and(|s| s.contains("execSync")) {
                failed.push(format!("{ctx}: a planted {f} is at the workspace's top"));
            }
        }
    }
    failures(failed);
}

/// `.env` bodies a run writes (atk22k F1, F1b, F2), with the files they
/// need beside them; `{m}` is replaced by the marker the host shell must
/// not create.
const ENV_PLANTS: &[(&str, &str)] = &[
    ("APP_NAME=\"demo #$(touch {m})\"\n", ""),
    ("APP_TITLE=\"x\n#$(touch {m})\"\n", ""),
    ("SSL_CERT_FILE=\" #/ca.pem\"\n", ""),
    (
        "GOOGLE_APPLICATION_CREDENTIALS=gcloud-creds\nGOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1\n",
        "gcloud-creds",
    ),
    ("SETTINGS=gcloud-creds\n", "gcloud-creds"),
];

#[test]
fn an_env_file_hides_no_code_behind_a_hash_or_a_bare_word() {
    let mut failed = Vec::new();
    for layer in LAYERS {
        for (k, (body, beside)) in ENV_PLANTS.iter().enumerate() {
            let t = TempDir::new("h22p-env");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            let marker = t.path().join("ran");
            let body = body.replace("{m}", marker.to_str().unwrap());
            let mut script = String::from("printf %s \"$B\" > .env");
            if !beside.is_empty() {
                script += &format!("; echo '{{\"type\":\"x\"}}' > {beside}");
            }
            let o = run_command(
                &ws,
                &home,
                &["--workspace-layer", layer],
                &["sh", "-c", &script],
            )
            .env("B", &body)
            .output()
            .unwrap();
            let ctx = format!("[{layer} #{k}] {}", err(&o));
            let kept = std::fs::read_to_string(ws.join(".env")).unwrap_or_default();
            // What a Makefile or an entrypoint does with it on the host.
            let _ = std::process::Command::new("sh")
                .current_dir(&ws)
                .args(["-c", "set -a; . ./.env; set +a"])
                .output();
            if marker.exists() {
                failed.push(format!("{ctx}: the host shell ran the planted command"));
            }
            if kept == body {
                failed.push(format!("{ctx}: the run's .env is where loaders read it"));
            }
        }
    }
    failures(failed);
}

/// A file of a nested Mercurial or Jujutsu repository as it is on the
/// host, and what the run writes there.
const VCS_FILES: &[(&str, &str)] = &[
    ("sub/.hg/hgrc", "[paths]\ndefault = ../up\n"),
    ("sub/.hg/hgrc-not-shared", "[ui]\nverbose = false\n"),
    ("jjrepo/.jj/repo/config.toml", "[user]\nname = \"u\"\n"),
];

#[test]
fn a_nested_mercurial_or_jujutsu_repositorys_settings_stay_the_users() {
    // h22m's limit: `.hg/hgrc`, `.jj/repo/config.toml` of repositories
    // below the top; host hg runs `[hooks]`, `!` aliases and `[ui] merge`
    // tools from them, jj its `fsmonitor` and diff programs. A run may
    // neither change the existing ones nor make a new repository's. (Held
    // on main already: a guard. Not held: a file a nested hgrc
    // `%include`s, see the h22p report.)
    let plant = "\n[hooks]\npre-status = touch /tmp/pwn\n[alias]\nst = !touch /tmp/pwn\n";
    let made = ["new/.hg/hgrc", "newjj/.jj/repo/config.toml"];
    let mut failed = Vec::new();
    for layer in LAYERS {
        let t = TempDir::new("h22p-vcs");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        for (rel, body) in VCS_FILES {
            let p = ws.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, body).unwrap();
        }
        std::fs::write(ws.join("sub/.hg/requires"), "store\n").unwrap();
        let mut script = String::new();
        for rel in VCS_FILES.iter().map(|(r, _)| *r).chain(made) {
            script += &format!("mkdir -p $(dirname {rel}); printf %s \"$P\" >> {rel}; ");
        }
        script += "true";
        let o = run_command(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", &script],
        )
        .env("P", plant)
        .output()
        .unwrap();
        let ctx = format!("[{layer}] {}", err(&o));
        for (rel, body) in VCS_FILES {
            if std::fs::read_to_string(ws.join(rel)).unwrap_or_default() != *body {
                failed.push(format!("{ctx}: {rel} was changed"));
            }
        }
        for rel in made {
            if std::fs::read_to_string(ws.join(rel)).is_ok_and(|s| s.contains("[hooks]")) {
                failed.push(format!(
                    "{ctx}: the run's {rel} is where host tools read it"
                ));
            }
        }
    }
    failures(failed);
}
