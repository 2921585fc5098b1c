//! Attack atk22g F10-F13: links into the workspace from home places the
//! listed roots left out. The unlisted dot directories of the home
//! (`~/.cpan/CPAN/MyConfig.pm`, `~/.ghc/ghci.conf`), relocated
//! configuration homes (`XDG_CONFIG_HOME=~/cfg`, `ZDOTDIR`), the hooks and
//! template directories git's global configuration names, and credential
//! stores by their shape (`~/.dbt/profiles.yml`, `~/.sentryclirc`). Judged
//! from outside: the link targets are unchanged after the run (both
//! workspace layers), the credential values are not in what it printed.

use std::os::unix::fs::symlink;
use std::path::Path;

use crate::common::*;
use crate::support_git::ran;
use skarn_test_support::{TempDir, is_root};

const LAYERS: &[&str] = &["direct", "cow"];

fn read(f: &Path) -> String {
    std::fs::read_to_string(f).unwrap_or_default()
}

#[test]
fn start_up_files_linked_from_unlisted_home_places_stay_as_they_were() {
    for layer in LAYERS {
        let t = TempDir::new("home-links-g");
        let home = t.dir("home");
        let ws = t.dir("ws");
        let cfg = t.dir("home/cfg");
        let zdot = t.dir("home/zdot");
        let mut targets = Vec::new();
        for (link, target) in [
            (".cpan/CPAN/MyConfig.pm", "perl/MyConfig.pm"),
            (".ghc/ghci.conf", "ghci.conf"),
            (".xmonad/xmonad.hs", "xmonad.hs"),
            ("cfg/fish/config.fish", "fish/config.fish"),
            ("zdot/.zshrc", "zshrc"),
            (".githooks/pre-commit", "hooks/pre-commit"),
            (".git-templates/hooks/post-checkout", "hooks/post-checkout"),
        ] {
            let tgt = t.file(format!("ws/{target}"), "ORIGINAL\n");
            let l = home.join(link);
            std::fs::create_dir_all(l.parent().unwrap()).unwrap();
            symlink(&tgt, &l).unwrap();
            targets.push(tgt);
        }
        t.file(
            "home/.gitconfig",
            "[core]\n\thooksPath = ~/.githooks\n[init]\n\ttemplateDir = ~/.git-templates\n",
        );
        let mut script = String::new();
        for tg in &targets {
            script.push_str(&format!("echo PLANTED > '{}' 2>/dev/null; ", tg.display()));
        }
        script.push_str("echo RAN");
        let said = ran(
            layer,
            run_command(
                &ws,
                &home,
                &["--workspace-layer", layer],
                &["sh", "-c", &script],
            )
            .current_dir(&ws)
            .env("XDG_CONFIG_HOME", &cfg)
            .env("ZDOTDIR", &zdot)
            .env_remove("XDG_DATA_HOME"),
        );
        for tg in &targets {
            assert_eq!(
                read(tg),
                "ORIGINAL\n",
                "{layer}: {} changed: {said}",
                tg.display()
            );
        }
    }
}

#[test]
fn credential_stores_linked_from_the_home_are_hidden_by_their_shape() {
    let t = TempDir::new("home-links-g-secret");
    let home = t.dir("home");
    let ws = t.dir("ws");
    t.file("ws/plain", "PLAIN-OK\n");
    let mut values = Vec::new();
    for (i, link) in [
        ".dbt/profiles.yml",
        ".sentryclirc",
        ".config/composer/auth.json",
        ".ngrok2/ngrok.yml",
        ".ollama/id_ed25519",
        ".python_history",
    ]
    .iter()
    .enumerate()
    {
        let v = format!("SECRET-F12-{i}");
        let tgt = t.file(format!("ws/s{i}"), format!("{v}\n"));
        let l = home.join(link);
        std::fs::create_dir_all(l.parent().unwrap()).unwrap();
        symlink(&tgt, &l).unwrap();
        values.push(v);
    }
    let o = run_command(
        &ws,
        &home,
        &[],
        &["sh", "-c", "cat plain s* 2>/dev/null; true"],
    )
    .current_dir(&ws)
    .env_remove("XDG_CONFIG_HOME")
    .output()
    .unwrap();
    let said = format!("{}{}", out(&o), err(&o));
    assert!(said.contains("PLAIN-OK"), "the command did not run: {said}");
    for v in &values {
        assert!(!said.contains(v.as_str()), "{v} readable inside: {said}");
    }
}

/// F15: `~/.config` a bind mount of another directory; a run started in
/// that directory's `fish/conf.d` under its other name is refused, and
/// nothing is planted there.
#[test]
fn a_home_place_under_another_name_is_not_a_workspace() {
    if !is_root() {
        skarn_test_support::skip!("bind mounts need root");
    }
    if !host_has("unshare", "--version") {
        skarn_test_support::skip!("unshare is not installed");
    }
    let t = TempDir::new("home-place-alias");
    let home = t.dir("home/.config");
    let home = home.parent().unwrap().to_path_buf();
    let conf_d = t.dir("persist/.config/fish/conf.d");
    let persist = conf_d.parent().unwrap().parent().unwrap().to_path_buf();
    let script = format!(
        "mount --bind '{p}' '{h}/.config' && cd '{c}' && \
         HOME='{h}' '{skarn}' run --no-config -- sh -c 'echo touch /tmp/x > planted.fish'; echo rc=$?",
        p = persist.display(),
        h = home.display(),
        c = conf_d.display(),
        skarn = exe().display(),
    );
    let o = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    let said = format!("{}{}", out(&o), err(&o));
    assert!(said.contains("rc=2"), "the run was not refused: {said}");
    assert!(!conf_d.join("planted.fish").exists(), "planted: {said}");
}
