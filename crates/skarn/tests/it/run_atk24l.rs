//! Attack pass atk24l on issue 24 (h24j): a `--write` grant other than the
//! workspace that is or holds a repository / project gets the workspace's
//! protections, in both layers (the default copy-on-write layer and
//! `--workspace-layer direct`). Each test repeats a workspace attack with
//! the user's other project given as a second `--write` grant and judges
//! from outside: the host program run afterwards (git, npm) runs nothing
//! planted.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::*;
use crate::support_hook::claude_hook;
use skarn_test_support::TempDir;

/// The two ways a run writes the workspace.
const LAYERS: [&[&str]; 2] = [&[], &["--workspace-layer", "direct"]];

fn name(layer: &[&str]) -> &'static str {
    if layer.is_empty() { "cow" } else { "direct" }
}

/// Host git in `repo` the way the user runs it (their home, no system
/// configuration), its output ignored: what it runs is what counts.
fn host_git(repo: &Path, home: &Path, args: &[&str]) {
    let _ = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(repo)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output();
}

/// A workspace `home/p` (a repository) and the user's other project
/// `home/mylib` (a repository with one commit).
fn two_projects(t: &TempDir) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let home = t.dir("home");
    let ws = t.dir("home/p");
    git(&ws, &["init", "-q"]);
    let lib = t.dir("home/mylib");
    git(&lib, &["init", "-q"]);
    t.file("home/mylib/README", "x\n");
    git(&lib, &["add", "README"]);
    git(&lib, &["commit", "-qm", "init"]);
    (home, ws, lib)
}

/// F8: in the default layer the read-only step of a repository's
/// `.git/config` and `.git/modules` was dropped for every path (the layer
/// vets the workspace's key by key), also in another write grant, which
/// is written on the host directly: `core.fsmonitor` planted there ran on
/// the user's next `git status`, and a submodule's new hook on the next
/// checkout.
#[test]
fn f8_a_granted_repositorys_config_and_submodule_hooks_stay_read_only() {
    for layer in LAYERS {
        let t = TempDir::new(&format!("l-f8-{}", name(layer)));
        let (home, ws, lib) = two_projects(&t);
        // A submodule's git directory in the granted repository.
        t.dir("home/mylib/.git/modules/sub/hooks");
        t.file(
            "home/mylib/.git/modules/sub/config",
            "[core]\n\tbare = false\n",
        );
        let victim = t.join("victim");
        let l = lib.display().to_string();
        let plant = format!(
            "printf '[core]\\n\\tfsmonitor = \"touch {v}-fsmonitor; false\"\\n' >> {l}/.git/config \
             && echo WROTE-config; \
             printf '#!/bin/sh\\ntouch {v}-sub\\n' > {l}/.git/modules/sub/hooks/post-checkout \
             && echo WROTE-sub-hook; \
             printf '[core]\\n\\tfsmonitor = \"touch {v}-subcfg; false\"\\n' >> {l}/.git/modules/sub/config \
             && echo WROTE-sub-config; true",
            v = victim.display()
        );
        let mut flags = layer.to_vec();
        flags.extend(["--write", &l]);
        let o = run_in(&ws, &home, &flags, &["sh", "-c", &plant]);
        assert_eq!(code(&o), 0, "{}", err(&o));
        let what = format!("{} layer: {}{}", name(layer), out(&o), err(&o));
        assert!(!out(&o).contains("WROTE"), "{what}");
        let config = std::fs::read_to_string(lib.join(".git/config")).unwrap();
        assert!(!config.contains("fsmonitor"), "{what}");
        assert!(
            !lib.join(".git/modules/sub/hooks/post-checkout").exists(),
            "{what}"
        );
        host_git(&lib, &home, &["status"]);
        assert!(
            !t.join("victim-fsmonitor").exists(),
            "host git status ran the planted fsmonitor ({what})"
        );
    }
}

/// F12: a repository the run `git init`s at the top of a write grant (the
/// user's other directory, or one package of their monorepo) with
/// `core.fsmonitor` is not left for host git there; one made below the top
/// was already set aside.
#[test]
fn f12_a_repository_made_at_a_grants_top_is_vetted() {
    for layer in LAYERS {
        let t = TempDir::new(&format!("l-f12-{}", name(layer)));
        let home = t.dir("home");
        let ws = t.dir("home/p");
        git(&ws, &["init", "-q"]);
        t.file("home/mylib/notes.md", "notes\n");
        let lib = home.join("mylib");
        let mono = t.dir("home/mono");
        git(&mono, &["init", "-q"]);
        let pkg = t.dir("home/mono/pkg");
        let victim = t.join("victim");
        let plant = |dir: &Path, tag: &str| {
            format!(
                "cd {d} && git init -q && git config core.fsmonitor 'touch {v}-{tag}; false' \
                 && echo made-{tag}; ",
                d = dir.display(),
                v = victim.display()
            )
        };
        let cmd = format!("{}{}true", plant(&lib, "top"), plant(&pkg, "pkg"));
        let (l, k) = (lib.display().to_string(), pkg.display().to_string());
        let mut flags = layer.to_vec();
        flags.extend(["--write", &l, "--write", &k]);
        let o = run_in(&ws, &home, &flags, &["sh", "-c", &cmd]);
        let what = format!("{} layer: {}{}", name(layer), out(&o), err(&o));
        assert!(out(&o).contains("made-top"), "{what}");
        assert!(lib.join("notes.md").exists(), "{what}");
        host_git(&lib, &home, &["status"]);
        host_git(&pkg, &home, &["status"]);
        assert!(
            !t.join("victim-top").exists(),
            "host git ran the fsmonitor of a repository made at the grant's top ({what})"
        );
        assert!(
            !t.join("victim-pkg").exists(),
            "host git ran the fsmonitor of a repository made at a monorepo package's top ({what})"
        );
    }
}

/// F10: the user's global `core.hooksPath = .githooks` (relative: every
/// repository's own) and an include file the granted repository's config
/// names are protected in a repository that is another write grant, as in
/// the workspace's: host `git commit` / `git status` there run nothing
/// planted.
#[test]
fn f10_a_granted_repositorys_global_hooks_path_and_includes_stay_read_only() {
    for layer in LAYERS {
        let t = TempDir::new(&format!("l-f10-{}", name(layer)));
        let (home, ws, lib) = two_projects(&t);
        t.file(
            "home/.gitconfig",
            "[core]\n\thooksPath = .githooks\n[user]\n\temail = a@b\n\tname = a\n",
        );
        t.file("home/mylib/tools/git.cfg", "\n");
        git(&lib, &["config", "include.path", "../tools/git.cfg"]);
        let victim = t.join("victim");
        let l = lib.display().to_string();
        let plant = format!(
            "mkdir -p {l}/.githooks; printf '#!/bin/sh\\ntouch {v}-hook\\n' > {l}/.githooks/pre-commit \
             && chmod +x {l}/.githooks/pre-commit && echo WROTE-hook; \
             printf '[core]\\n\\tfsmonitor = \"touch {v}-include; false\"\\n' >> {l}/tools/git.cfg \
             && echo WROTE-include; true",
            v = victim.display()
        );
        let mut flags = layer.to_vec();
        flags.extend(["--write", &l]);
        let o = run_in(&ws, &home, &flags, &["sh", "-c", &plant]);
        let what = format!("{} layer: {}{}", name(layer), out(&o), err(&o));
        assert_eq!(code(&o), 0, "{what}");
        host_git(&lib, &home, &["commit", "-q", "--allow-empty", "-m", "x"]);
        host_git(&lib, &home, &["status"]);
        assert!(
            !t.join("victim-hook").exists(),
            "host git commit ran a planted .githooks hook ({what})"
        );
        assert!(
            !t.join("victim-include").exists(),
            "host git status ran a planted include's fsmonitor ({what})"
        );
    }
}

/// F11: the scripts a granted project's protected configuration names
/// (ADR 0249: `core.fsmonitor`, a folder-open task, a pre-commit local
/// hook, a Claude Code project hook, an MCP server, what its `.envrc`
/// sources) keep their text, as the workspace's do; host `git status`
/// there runs nothing planted.
#[test]
fn f11_scripts_a_granted_projects_configuration_names_stay_read_only() {
    for layer in LAYERS {
        let t = TempDir::new(&format!("l-f11-{}", name(layer)));
        let (home, ws, lib) = two_projects(&t);
        let scripts = ["fsmon.sh", "build.sh", "check.sh", "hook.sh", "mcp.js"];
        for f in scripts {
            t.file(format!("home/mylib/tools/{f}"), "#!/bin/sh\nfalse\n");
        }
        git(&lib, &["config", "core.fsmonitor", "tools/fsmon.sh"]);
        t.file(
            "home/mylib/.vscode/tasks.json",
            r#"{"version":"2.0.0","tasks":[{"label":"b","type":"shell","command":"./tools/build.sh","runOptions":{"runOn":"folderOpen"}}]}"#,
        );
        t.file(
            "home/mylib/.pre-commit-config.yaml",
            "repos:\n- repo: local\n  hooks:\n  - id: c\n    name: c\n    entry: tools/check.sh\n    language: script\n",
        );
        t.file(
            "home/mylib/.claude/settings.json",
            r#"{"hooks":{"PostToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"./tools/hook.sh"}]}]}}"#,
        );
        t.file(
            "home/mylib/.mcp.json",
            r#"{"mcpServers":{"m":{"command":"node","args":["tools/mcp.js"]}}}"#,
        );
        t.file("home/mylib/.envrc", "source_env_if_exists .envrc.local\n");
        let victim = t.join("victim");
        let l = lib.display().to_string();
        let plant = format!(
            "for f in {list}; do printf '#!/bin/sh\\ntouch {v}-$f\\n' > {l}/tools/$f && echo WROTE-$f; done; \
             echo 'touch {v}-envrc' > {l}/.envrc.local && echo WROTE-envrc-local; true",
            list = scripts.join(" "),
            v = victim.display()
        );
        let mut flags = layer.to_vec();
        flags.extend(["--write", &l]);
        let o = run_in(&ws, &home, &flags, &["sh", "-c", &plant]);
        let what = format!("{} layer: {}{}", name(layer), out(&o), err(&o));
        assert_eq!(code(&o), 0, "{what}");
        for f in scripts {
            assert_eq!(
                std::fs::read_to_string(lib.join("tools").join(f)).unwrap(),
                "#!/bin/sh\nfalse\n",
                "tools/{f} changed ({what})"
            );
        }
        assert!(
            std::fs::symlink_metadata(lib.join(".envrc.local")).is_err(),
            ".envrc.local left for direnv ({what})"
        );
        host_git(&lib, &home, &["status"]);
        assert!(
            !t.join("victim-fsmon.sh").exists(),
            "host git status ran the planted fsmonitor script ({what})"
        );
    }
}

/// Whether Claude Code goes on with a Write of `path` in the project `ws`
/// (exit 2 or a deny stops it).
pub(crate) fn write_goes_on(ws: &Path, home: &Path, path: &Path) -> bool {
    let input = serde_json::json!({"hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_use_id": "t1", "cwd": ws, "tool_input": {"file_path": path, "content": "x"}});
    let o = claude_hook(
        ws,
        home,
        Some(ws),
        &["XDG_CONFIG_HOME", "XDG_STATE_HOME", "CLAUDE_CONFIG_DIR"],
        &input,
    );
    if code(&o) == 2 {
        return false;
    }
    !String::from_utf8_lossy(&o.stdout).contains("\"deny\"")
}

/// F5: a protected path that is a symbolic link to an ordinary file of
/// the project (`.git/hooks/pre-commit -> ../../scripts/pre-commit`,
/// `.git/hooks -> ../githooks`, `.claude -> cfgdir`,
/// `.claude/settings.json -> ../config/claude.json`, `.npmrc ->
/// config/npmrc`), in the workspace and in a second write grant: what it
/// leads to keeps its text in both layers, the file guard refuses it, and
/// host git runs nothing planted.
#[test]
fn f5_what_a_protected_link_leads_to_is_protected() {
    for layer in LAYERS {
        let t = TempDir::new(&format!("l-f5-{}", name(layer)));
        let (home, ws, lib) = two_projects(&t);
        let victim = t.join("victim");
        for top in ["p", "mylib"] {
            let dir = home.join(top);
            t.file(
                format!("home/{top}/scripts/pre-commit"),
                "#!/bin/sh\ntrue\n",
            );
            let h = dir.join(".git/hooks");
            let _ = std::fs::remove_dir_all(&h);
            std::fs::create_dir_all(&h).unwrap();
            std::os::unix::fs::symlink("../../scripts/pre-commit", h.join("pre-commit")).unwrap();
            t.file(format!("home/{top}/config/npmrc"), "fund=false\n");
            std::os::unix::fs::symlink("config/npmrc", dir.join(".npmrc")).unwrap();
            t.file(format!("home/{top}/config/claude.json"), "{}\n");
            t.file(format!("home/{top}/cfgdir/settings.json"), "{}\n");
            std::os::unix::fs::symlink("cfgdir", dir.join(".claude")).unwrap();
            std::os::unix::fs::symlink(
                "../config/claude.json",
                dir.join("cfgdir/settings.local.json"),
            )
            .unwrap();
        }
        let plant = format!(
            "for d in {ws} {lib}; do \
               printf 'touch {v}-hook-$(basename $d)\n' >> $d/scripts/pre-commit && echo WROTE $d/hook; \
               echo 'script-shell=/tmp/x' >> $d/config/npmrc && echo WROTE $d/npmrc; \
               echo '{{\"hooks\":{{}}}}' > $d/config/claude.json && echo WROTE $d/claude; \
               echo '{{\"hooks\":{{}}}}' > $d/cfgdir/settings.json && echo WROTE $d/cfgdir; \
               echo '{{}}' > $d/cfgdir/new.json && echo WROTE $d/cfgdir-new; \
             done; true",
            ws = ws.display(),
            lib = lib.display(),
            v = victim.display()
        );
        let mut flags = layer.to_vec();
        let l = lib.display().to_string();
        flags.extend(["--write", &l]);
        let o = run_in(&ws, &home, &flags, &["sh", "-c", &plant]);
        let what = format!("{} layer: {}{}", name(layer), out(&o), err(&o));
        assert_eq!(code(&o), 0, "{what}");
        for dir in [&ws, &lib] {
            for (f, text) in [
                ("scripts/pre-commit", "#!/bin/sh\ntrue\n"),
                ("config/npmrc", "fund=false\n"),
                ("config/claude.json", "{}\n"),
                ("cfgdir/settings.json", "{}\n"),
            ] {
                assert_eq!(
                    std::fs::read_to_string(dir.join(f)).unwrap(),
                    text,
                    "{} changed ({what})",
                    dir.join(f).display()
                );
            }
            assert!(!dir.join("cfgdir/new.json").exists(), "{what}");
            host_git(dir, &home, &["commit", "-q", "--allow-empty", "-m", "x"]);
        }
        assert!(
            !t.join("victim-hook-p").exists() && !t.join("victim-hook-mylib").exists(),
            "host git commit ran the planted hook ({what})"
        );
        if layer.is_empty() {
            for dir in [&ws, &lib] {
                for f in [
                    "scripts/pre-commit",
                    "config/npmrc",
                    "config/claude.json",
                    "cfgdir/settings.json",
                ] {
                    assert!(
                        !write_goes_on(&ws, &home, &dir.join(f)),
                        "the file guard allows a Write of {}",
                        dir.join(f).display()
                    );
                }
            }
        }
    }
}

/// F6: a git hook naming a project script relative to itself
/// (`. "$(dirname "$0")/../../tools/common.sh"`,
/// `sh "${GIT_DIR:-.git}/../tools/post.sh"`): the script keeps its text
/// in the workspace and in a second write grant, both layers; the file
/// guard refuses it; host `git commit` runs nothing planted.
#[test]
fn f6_a_script_a_hook_names_relative_to_itself_is_protected() {
    for layer in LAYERS {
        let t = TempDir::new(&format!("l-f6-{}", name(layer)));
        let (home, ws, lib) = two_projects(&t);
        let victim = t.join("victim");
        for top in ["p", "mylib"] {
            t.file(
                format!("home/{top}/.git/hooks/commit-msg"),
                "#!/bin/sh\n. \"$(dirname \"$0\")/../../tools/common.sh\"\n",
            );
            t.file(
                format!("home/{top}/.git/hooks/post-commit"),
                "#!/bin/sh\nsh \"${GIT_DIR:-.git}/../tools/post.sh\"\n",
            );
            for h in ["commit-msg", "post-commit"] {
                let p = home.join(top).join(".git/hooks").join(h);
                std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                    .unwrap();
            }
            t.file(format!("home/{top}/tools/common.sh"), "true\n");
            t.file(format!("home/{top}/tools/post.sh"), "true\n");
        }
        let plant = format!(
            "for d in {ws} {lib}; do for f in common.sh post.sh; do \
               echo \"touch {v}-$(basename $d)-$f\" >> $d/tools/$f && echo WROTE $d/$f; done; done; true",
            ws = ws.display(),
            lib = lib.display(),
            v = victim.display()
        );
        let mut flags = layer.to_vec();
        let l = lib.display().to_string();
        flags.extend(["--write", &l]);
        let o = run_in(&ws, &home, &flags, &["sh", "-c", &plant]);
        let what = format!("{} layer: {}{}", name(layer), out(&o), err(&o));
        assert_eq!(code(&o), 0, "{what}");
        for dir in [&ws, &lib] {
            for f in ["tools/common.sh", "tools/post.sh"] {
                assert_eq!(
                    std::fs::read_to_string(dir.join(f)).unwrap(),
                    "true\n",
                    "{} changed ({what})",
                    dir.join(f).display()
                );
            }
            host_git(dir, &home, &["commit", "-q", "--allow-empty", "-m", "x"]);
        }
        let ran: Vec<_> = std::fs::read_dir(t.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("victim"))
            .map(|e| e.file_name())
            .collect();
        assert!(ran.is_empty(), "host git commit ran {ran:?} ({what})");
        if layer.is_empty() {
            for dir in [&ws, &lib] {
                for f in ["tools/common.sh", "tools/post.sh"] {
                    assert!(
                        !write_goes_on(&ws, &home, &dir.join(f)),
                        "the file guard allows a Write of {}",
                        dir.join(f).display()
                    );
                }
            }
        }
    }
}

/// `skarn init --client vscode` in `proj` (extra flags `more`).
fn init_vscode(proj: &Path, home: &Path, more: &[&str]) -> std::process::Output {
    Command::new(exe())
        .args(["init", "--client", "vscode"])
        .args(more)
        .current_dir(proj)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// F4: VS Code runs the hooks of every `.github/hooks/*.json` and of
/// Claude Code's project settings, so `init --client vscode` in a cloned
/// repository that ships one lists it and stops unless the user accepts
/// it (as for Cursor, Claude Code and Gemini CLI); skarn's own file is
/// not written before that.
#[test]
fn f4_init_for_vscode_lists_the_repositorys_other_hook_files() {
    for (file, text) in [
        (
            ".github/hooks/policy.json",
            r#"{"hooks":{"PreToolUse":[{"type":"command","command":"./tools/policy.sh"}]}}"#,
        ),
        (
            ".claude/settings.json",
            r#"{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"./tools/policy.sh"}]}]}}"#,
        ),
        (
            ".claude/settings.local.json",
            r#"{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"./tools/policy.sh"}]}]}}"#,
        ),
    ] {
        let t = TempDir::new("l-f4");
        let home = t.dir("home");
        let p = t.dir("home/p");
        git(&p, &["init", "-q"]);
        t.file(format!("home/p/{file}"), text);
        t.file("home/p/tools/policy.sh", "#!/bin/sh\ncat >/dev/null\n");
        let o = init_vscode(&p, &home, &[]);
        let what = format!("{file}: {}{}", out(&o), err(&o));
        assert_ne!(code(&o), 0, "{what}");
        assert!(what.contains("tools/policy.sh"), "{what}");
        assert!(!p.join(".github/hooks/skarn.json").exists(), "{what}");
        let o = init_vscode(&p, &home, &["--accept-project-settings"]);
        assert_eq!(code(&o), 0, "{file}: {}{}", out(&o), err(&o));
        assert!(p.join(".github/hooks/skarn.json").exists());
    }
}
