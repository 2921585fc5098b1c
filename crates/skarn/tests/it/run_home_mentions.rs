//! `skarn run`: attack pass atk22b on issue 22 (F1-F19). A workspace that
//! a home configuration file names (a shell rc, `~/.ssh/config`, vim, tmux,
//! inputrc, git, cargo, npm, a user-site `.pth`, fish `conf.d`, an allowed
//! `.envrc`, a linked dotfiles repository) is read-only for the run as a
//! whole (ADR 0160); each attack is attempted for real and checked from
//! outside (the workspace file unchanged, host bash ran nothing planted).
//! The usability side: a workspace nothing names stays writable, history
//! and editor state do not count, `--trust-home-config-workspace` restores
//! writes (and the report then says the gap).

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| format!("<{e}>"))
}

/// A host interactive bash with `home` as HOME, started in `cwd`.
fn host_bash(home: &Path, cwd: &Path) -> String {
    let o = Command::new("bash")
        .args(["-i", "-c", "true"])
        .current_dir(cwd)
        .env("HOME", home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("bash");
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A home with the project `home/proj` (a git repository) as workspace.
fn project(tag: &str) -> (TempDir, PathBuf, PathBuf) {
    let t = TempDir::new(tag);
    let home = t.dir("home");
    let ws = t.dir("home/proj");
    git(&ws, &["init", "-q"]);
    (t, home, ws)
}

/// The home files `files` (relative to the home, `@WS@` standing for the
/// workspace) name the workspace: the command's write of `victim` (in the
/// workspace) fails, the run says why, naming the file.
fn plant_is_refused(tag: &str, files: &[(&str, &str)], victim: &str) {
    let (t, home, ws) = project(tag);
    for (rel, text) in files {
        t.file(
            format!("home/{rel}"),
            text.replace("@WS@", &ws.display().to_string()),
        );
    }
    t.file(format!("home/proj/{victim}.keep"), "");
    let before = read(&ws.join(victim));
    let plant = format!(
        "mkdir -p \"$(dirname {victim})\" 2>/dev/null; echo 'echo PWN' > {victim}; \
         echo 'echo PWN' > {victim}.keep; true"
    );
    let o = run_in(&ws, &home, &[], &["sh", "-c", &plant]);
    assert_eq!(code(&o), 0, "{tag}: {}", err(&o));
    assert!(
        err(&o).contains("is read-only for this run: the home's"),
        "{tag}: {}",
        err(&o)
    );
    assert!(err(&o).contains(files[0].0), "{tag}: {}", err(&o));
    assert_eq!(read(&ws.join(victim)), before, "{tag}: planted");
    assert_eq!(
        read(&ws.join(format!("{victim}.keep"))),
        "",
        "{tag}: planted"
    );
}

/// F1: programs a plain ~/.bashrc runs (`eval "$(~/proj/bin/prompt)"`,
/// `python3 ~/proj/tool/tool.py`, `[ -x X ] && X`): their neighbours and a
/// missing program stay unwritten; the host bash runs nothing planted.
#[test]
fn f1_programs_a_bashrc_runs_and_their_neighbours() {
    let (t, home, ws) = project("m-f1");
    t.file(
        "home/.bashrc",
        "eval \"$(~/proj/bin/prompt init)\"\n\
         [ -x ~/proj/bin/motd ] && ~/proj/bin/motd\n",
    );
    t.file(
        "home/proj/bin/prompt",
        "#!/bin/sh\n. \"$(dirname \"$0\")/../lib/l.sh\"\necho true\n",
    );
    t.file("home/proj/lib/l.sh", "true\n");
    Command::new("chmod")
        .arg("+x")
        .arg(ws.join("bin/prompt"))
        .status()
        .unwrap();
    let plant = "echo 'echo PWN-lib >&2' > lib/l.sh; \
                 printf '#!/bin/sh\\necho PWN-motd\\n' > bin/motd; chmod +x bin/motd; true";
    let o = run_in(&ws, &home, &[], &["sh", "-c", plant]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(err(&o).contains(".bashrc:1 names"), "{}", err(&o));
    assert_eq!(read(&ws.join("lib/l.sh")), "true\n");
    assert!(!ws.join("bin/motd").exists());
    let host = host_bash(&home, &home);
    assert!(!host.contains("PWN"), "host bash ran planted code: {host}");
}

/// F2, F3, F8, F17: venv activation, loader search paths, quoting in the
/// middle of a word, `${VAR:-default}`.
#[test]
fn f2_f3_f8_f17_shell_forms() {
    for (tag, rc, victim) in [
        (
            "m-f2",
            "source ~/proj/.venv/bin/activate\n",
            ".venv/lib/evil.pth",
        ),
        (
            "m-f3",
            "export PYTHONPATH=\"$HOME/proj/src${PYTHONPATH:+:$PYTHONPATH}\"\n",
            "src/json.py",
        ),
        ("m-f8a", ". \"$HOME\"/proj/a/env.sh\n", "a/env.sh"),
        ("m-f8b", "source ~/'proj/b/env.sh'\n", "b/env.sh"),
        ("m-f8c", "source \"${HOME}/proj\"/c/env.sh\n", "c/env.sh"),
        (
            "m-f17",
            "[ -d ~/wd ] && DF=~/wd\nsource ${DF:-$HOME/proj/sh}/env.sh\n",
            "sh/env.sh",
        ),
    ] {
        plant_is_refused(tag, &[(".bashrc", rc)], victim);
    }
}

/// F4, F7: vim `runtimepath` to a missing directory; the local-vimrc
/// idiom through `exe 'source ' . expand(...)`.
#[test]
fn f4_f7_vim_forms() {
    plant_is_refused(
        "m-f4",
        &[(".vimrc", "set runtimepath+=~/proj/vimfiles\n")],
        "vimfiles/plugin/e.vim",
    );
    plant_is_refused(
        "m-f7",
        &[(
            ".vimrc",
            "if filereadable(expand('~/proj/vimrc.local')) | exe 'source ' . expand('~/proj/vimrc.local') | endif\n",
        )],
        "vimrc.local",
    );
}

/// F5: BASH_ENV's file, tmux `if-shell ... source-file`, a git alias
/// program's neighbour.
#[test]
fn f5_files_named_but_not_sourced() {
    plant_is_refused(
        "m-f5a",
        &[(".bashrc", "export BASH_ENV=~/proj/env/bashenv\n")],
        "env/common.sh",
    );
    plant_is_refused(
        "m-f5b",
        &[(
            ".tmux.conf",
            "if-shell \"test -f ~/proj/tmux/local.conf\" \"source-file ~/proj/tmux/local.conf\"\n",
        )],
        "tmux/local.conf",
    );
    plant_is_refused(
        "m-f5c",
        &[(".gitconfig", "[alias]\n\tst = !~/proj/gitbin/st\n")],
        "gitbin/common.sh",
    );
}

/// F6: `~/.ssh/config` `Match exec` and `ProxyCommand` programs.
#[test]
fn f6_ssh_config_programs() {
    plant_is_refused(
        "m-f6",
        &[(
            ".ssh/config",
            "Match exec \"~/proj/bin/onvpn\"\n  User x\nHost h1\n  ProxyCommand ~/proj/bin/proxy %h\n",
        )],
        "bin/proxy",
    );
}

/// F9: global git programs and their neighbours.
#[test]
fn f9_global_git_programs() {
    plant_is_refused(
        "m-f9",
        &[(".gitconfig", "[core]\n\tfsmonitor = ~/proj/g/fsmon\n")],
        "g/lib-fsmon.sh",
    );
}

/// F10 (turned by atk22c F3): direnv's allow list names an `.envrc`, which
/// is code only through that `.envrc` and what it sources, both kept
/// read-only (by name and by the `.envrc` reader, ADR 0148); the rest of
/// the project stays writable.
#[test]
fn f10_allowed_envrc() {
    let (t, home, ws) = project("m-f10");
    t.file(
        "home/.local/share/direnv/allow/0123abcd",
        format!("{}/.envrc\n", ws.display()),
    );
    t.file("home/proj/.envrc", "source_env scripts/dev-env.sh\n");
    t.file("home/proj/scripts/dev-env.sh", "true\n");
    let plant = "echo 'echo PWN' > scripts/dev-env.sh; echo 'echo PWN' >> .envrc; \
                 echo ok > w; true";
    let o = run_in(&ws, &home, &[], &["sh", "-c", plant]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("w")), "ok\n", "{}", err(&o));
    assert_eq!(read(&ws.join("scripts/dev-env.sh")), "true\n");
    assert_eq!(read(&ws.join(".envrc")), "source_env scripts/dev-env.sh\n");
}

/// atk22d F3: what a file the `.envrc` sources sources in turn (named
/// relative to the project, where direnv's bash runs it) is protected too;
/// direnv's bash sourcing the `.envrc` on the host runs nothing planted.
#[test]
fn f3_a_second_level_source_of_an_allowed_envrc() {
    let (t, home, ws) = project("m-f3-22d");
    t.file(
        "home/.local/share/direnv/allow/0123abcd",
        format!("{}/.envrc\n", ws.display()),
    );
    t.file("home/proj/.envrc", "source scripts/env.sh\n");
    t.file("home/proj/scripts/env.sh", "export A=1\n. scripts/lib.sh\n");
    t.file("home/proj/scripts/lib.sh", "true\n");
    let plant = "echo 'echo PWN-planted' >> scripts/lib.sh; echo ok > w; true";
    let o = run_in(&ws, &home, &[], &["sh", "-c", plant]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("w")), "ok\n", "{}", err(&o));
    assert_eq!(read(&ws.join("scripts/lib.sh")), "true\n");
    // From outside: what direnv does on `cd` (bash sources the .envrc in
    // the project).
    let host = std::process::Command::new("bash")
        .args(["-c", ". ./.envrc"])
        .current_dir(&ws)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&host.stdout).contains("PWN"));
}

/// F13: zsh `ZDOTDIR`, fish `conf.d` sources and `fish_add_path`.
#[test]
fn f13_zdotdir_and_fish_conf_d() {
    plant_is_refused(
        "m-f13a",
        &[(".zshenv", "export ZDOTDIR=~/proj/zsh\n")],
        "zsh/.zshrc",
    );
    plant_is_refused(
        "m-f13b",
        &[(
            ".config/fish/conf.d/proj.fish",
            "source ~/proj/fish/env.fish\n",
        )],
        "fish/env.fish",
    );
    plant_is_refused(
        "m-f13c",
        &[(
            ".config/fish/conf.d/path.fish",
            "fish_add_path ~/proj/fishbin\n",
        )],
        "fishbin/ls",
    );
}

/// F14: a user-site `.pth` putting a workspace directory on sys.path.
#[test]
fn f14_user_site_pth() {
    plant_is_refused(
        "m-f14",
        &[(
            ".local/lib/python3.11/site-packages/_mypkg.pth",
            "@WS@/src\n",
        )],
        "src/usercustomize.py",
    );
}

/// F15: `~/.cargo/config.toml` `rustc-wrapper`, `~/.npmrc` `node-options`.
#[test]
fn f15_cargo_and_npm_programs() {
    plant_is_refused(
        "m-f15a",
        &[(
            ".cargo/config.toml",
            "[build]\nrustc-wrapper = \"@WS@/tools/wrap.sh\"\n",
        )],
        "tools/wrap.sh",
    );
    plant_is_refused(
        "m-f15b",
        &[(
            ".npmrc",
            "node-options=--require ${HOME}/proj/hooks/req.js\n",
        )],
        "hooks/req.js",
    );
}

/// F19: `~/.inputrc` `$include`.
#[test]
fn f19_inputrc_include() {
    plant_is_refused(
        "m-f19",
        &[(".inputrc", "$include ~/proj/inputrc\n")],
        "inputrc",
    );
}

/// F18: a linked dotfiles repository: the whole repository (shared/,
/// bin/'s libraries) is read-only, not only the start-up file's directory;
/// the host bash runs nothing planted.
#[test]
fn f18_the_rest_of_a_linked_dotfiles_repository() {
    let t = TempDir::new("m-f18");
    let home = t.dir("home");
    let ws = t.dir("home/dotfiles");
    git(&ws, &["init", "-q"]);
    t.file(
        "home/dotfiles/bash/bashrc",
        ". \"$HOME\"/dotfiles/shared/aliases.sh\n",
    );
    t.file("home/dotfiles/shared/aliases.sh", "true\n");
    symlink("dotfiles/bash/bashrc", home.join(".bashrc")).unwrap();
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo 'echo PWN-shared' > shared/aliases.sh; echo x > new.txt; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("shared/aliases.sh")), "true\n");
    assert!(!ws.join("new.txt").exists());
    let host = host_bash(&home, &home);
    assert!(!host.contains("PWN"), "host bash ran planted code: {host}");
}

/// F12: a relative source in ~/.bashrc (`. .bashrc.local`, the
/// auto-activate idiom) is read-only in the workspace although nothing
/// names the workspace (which stays writable); a host bash opened there
/// runs nothing planted.
#[test]
fn f12_relative_sources_are_reserved_in_the_workspace() {
    let (t, home, ws) = project("m-f12");
    t.file(
        "home/.bashrc",
        "[ -f .bashrc.local ] && . .bashrc.local\n\
         [ -f .venv/bin/activate ] && source .venv/bin/activate\n",
    );
    let plant = "echo 'echo PWN-local' > .bashrc.local; mkdir -p .venv/bin; \
                 echo 'echo PWN-venv' > .venv/bin/activate; echo ok > written.txt; true";
    let o = run_in(&ws, &home, &[], &["sh", "-c", plant]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("written.txt")), "ok\n", "{}", err(&o));
    assert!(!ws.join(".bashrc.local").exists());
    assert!(!ws.join(".venv/bin/activate").exists());
    let host = host_bash(&home, &ws);
    assert!(!host.contains("PWN"), "host bash ran planted code: {host}");
}

/// F16: a workspace `.vimrc` / `_vimrc` / `.gvimrc` (Vim's `exrc`) is a
/// persistence path: not written.
#[test]
fn f16_workspace_vimrc_is_a_persistence_path() {
    let (_t, home, ws) = project("m-f16");
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "for f in .vimrc _vimrc .gvimrc; do echo PWN > $f; done; echo ok > w; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("w")), "ok\n");
    for f in [".vimrc", "_vimrc", ".gvimrc"] {
        assert!(!read(&ws.join(f)).contains("PWN"), "{f}");
    }
}

/// `.yarnrc.yml`'s `yarnPath` names a program host yarn runs: kept
/// read-only.
#[test]
fn yarn_path_is_read_only() {
    let (t, home, ws) = project("m-yarn");
    t.file("home/proj/.yarnrc.yml", "yarnPath: tools/yarn.cjs\n");
    t.file("home/proj/tools/yarn.cjs", "// yarn\n");
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo PWN > tools/yarn.cjs; echo PWN > .yarnrc.yml; echo ok > w; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("w")), "ok\n");
    assert_eq!(read(&ws.join("tools/yarn.cjs")), "// yarn\n");
    assert_eq!(read(&ws.join(".yarnrc.yml")), "yarnPath: tools/yarn.cjs\n");
}

/// atk24h F10: Yarn 1's `.yarnrc` `yarn-path` names a program host yarn
/// runs: the file and the program stay read-only.
#[test]
fn yarn1_yarn_path_is_read_only() {
    let (t, home, ws) = project("m-yarn1");
    t.file("home/proj/.yarnrc", "yarn-path \"./tools/yarn1.js\"\n");
    t.file("home/proj/tools/yarn1.js", "// yarn\n");
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo PWN > tools/yarn1.js; echo 'yarn-path x.js' > .yarnrc; echo ok > w; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("w")), "ok\n");
    assert_eq!(read(&ws.join("tools/yarn1.js")), "// yarn\n");
    assert_eq!(
        read(&ws.join(".yarnrc")),
        "yarn-path \"./tools/yarn1.js\"\n"
    );
}

/// F11: a write grant of the user's config through a link into another
/// repository's `.git/hooks` (made by a run under another HOME) is
/// refused; the hook is not written.
#[test]
fn f11_write_grant_through_a_link_into_a_git_dir_is_refused() {
    let t = TempDir::new("m-f11");
    let home = t.dir("home");
    for d in ["A", "B", "C"] {
        git(&t.dir(format!("home/{d}")), &["init", "-q"]);
    }
    symlink("../B/.git/hooks", home.join("A/build")).unwrap();
    t.file(
        "home/.config/skarn/config.toml",
        "[run]\nwrite = [\"~/A/build\"]\n",
    );
    let hook = home.join("B/.git/hooks/pre-commit");
    let o = Command::new(exe())
        .args(["run", "--workspace"])
        .arg(home.join("C"))
        .args(["--", "sh", "-c"])
        .arg(format!(
            "echo PWN > {}",
            home.join("A/build/pre-commit").display()
        ))
        .env("HOME", &home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert_ne!(code(&o), 0, "{}", err(&o));
    assert!(err(&o).contains("inside .git"), "{}", err(&o));
    assert!(!hook.exists());
}

/// Usability: nothing in the home names the workspace (history and VS
/// Code's recent-folder state do, another project does): writable, and
/// the report can say FullyEnforced.
#[test]
fn a_workspace_no_configuration_names_stays_writable() {
    let (t, home, ws) = project("m-usable");
    let w = ws.display().to_string();
    t.file("home/.bash_history", format!("cd {w}\n"));
    t.file(
        "home/.config/Code/User/globalStorage/storage.json",
        format!("{{\"folder\":\"file://{w}\"}}\n"),
    );
    t.file(
        "home/.bashrc",
        "alias p='cd ~/proj2'\nsource ~/proj.old/env.sh\n",
    );
    let o = run_in(&ws, &home, &["--report"], &["sh", "-c", "echo ok > w"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("w")), "ok\n", "{}", err(&o));
    assert!(
        !err(&o).contains("is read-only for this run"),
        "{}",
        err(&o)
    );
}

/// Usability: `--trust-home-config-workspace` keeps the workspace
/// writable; the report then is not FullyEnforced and names the file. The
/// precise protections still hold (the sourced file stays read-only).
#[test]
fn the_trust_flag_restores_writes_and_says_the_gap() {
    let (t, home, ws) = project("m-trust");
    t.file("home/.bashrc", "source ~/proj/sh/env.sh\n");
    t.file("home/proj/sh/env.sh", "true\n");
    let o = run_in(
        &ws,
        &home,
        &["--trust-home-config-workspace", "--report"],
        &["sh", "-c", "echo ok > w; echo PWN > sh/env.sh; true"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("w")), "ok\n", "{}", err(&o));
    assert_eq!(read(&ws.join("sh/env.sh")), "true\n", "{}", err(&o));
    assert!(!err(&o).contains("FullyEnforced"), "{}", err(&o));
    assert!(err(&o).contains(".bashrc:1 names"), "{}", err(&o));
}

/// The setting in a workspace `skarn.toml` (even trusted or not) is
/// ignored and said; in the user's config it applies.
#[test]
fn only_the_users_config_may_trust() {
    let (t, home, ws) = project("m-trustcfg");
    t.file("home/.bashrc", "source ~/proj/sh/env.sh\n");
    t.file(
        "home/proj/skarn.toml",
        "[run]\ntrust_home_config_workspace = true\n",
    );
    let run = |home: &Path| {
        Command::new(exe())
            .args(["run", "--workspace"])
            .arg(&ws)
            .args(["--", "sh", "-c", "echo ok > w; true"])
            .env("HOME", home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap()
    };
    let o = run(&home);
    assert!(
        err(&o).contains("trust_home_config_workspace is ignored"),
        "{}",
        err(&o)
    );
    assert!(!ws.join("w").exists(), "{}", err(&o));
    t.file(
        "home/.config/skarn/config.toml",
        "[run]\ntrust_home_config_workspace = true\n",
    );
    let o = run(&home);
    assert_eq!(read(&ws.join("w")), "ok\n", "{}", err(&o));
}
