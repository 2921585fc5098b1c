//! `skarn run`: attack pass atk22c on the home-mentions scan (ADR 0160,
//! ADR 0206). F1: a start-up line that reaches the workspace through
//! shell expansion (a bracket or `?` glob, braces, an extglob group, a
//! backslash in the name, `${BASH_SOURCE%/*}`, `$(cat <a home file found
//! by a pattern>)`) keeps the workspace read-only: the planted file is not
//! written and the host bash runs nothing planted. F5: the home under a
//! second name (a bind mount) is still the home. F8: the user's code in a
//! plugin directory counts. F3 (usability): lines that run nothing (git's
//! `safe.directory`, direnv's allow list, a `cd` alias, a comment, an ssh
//! key, an agent's extra directories) leave the project writable.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| format!("<{e}>"))
}

/// A host interactive bash with `home` as HOME.
fn host_bash(home: &Path) -> String {
    let o = Command::new("bash")
        .args(["-i", "-c", "true"])
        .current_dir(home)
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

/// A home with the project `home/proj` (holding `env.sh`) as workspace.
fn project(tag: &str) -> (TempDir, PathBuf, PathBuf) {
    let t = TempDir::new(tag);
    let home = t.dir("home");
    let ws = t.dir("home/proj");
    git(&ws, &["init", "-q"]);
    t.file("home/proj/env.sh", "true\n");
    (t, home, ws)
}

/// The run's attempt to plant `env.sh` and add a file.
const PLANT: &str = "echo 'echo PWN-planted' > env.sh; echo ok > new.txt; true";

/// F1: every expansion form of the finding (and its two variants) keeps
/// the workspace read-only; the host bash runs nothing planted.
#[test]
fn f1_words_reaching_the_workspace_by_expansion() {
    for (i, rc) in [
        ". ~/pro[j]/env.sh",
        ". ~/{proj,x}/env.sh",
        ". ~/pr\\oj/env.sh",
        ". ~/p\\roj/env.sh",
        "shopt -s extglob\n. ~/@(proj)/env.sh",
        ". ~/pro?/env.sh",
        ". \"${BASH_SOURCE%/*}/proj/env.sh\"",
        ". \"$(dirname \"$BASH_SOURCE\")/proj/env.sh\"",
        ". \"$(cat ~/.config/projdi?)\"/env.sh",
        ". \"$(cat ~/.config/projdi[r])\"/env.sh",
    ]
    .iter()
    .enumerate()
    {
        let (t, home, ws) = project(&format!("m22c-f1-{i}"));
        t.file("home/.bashrc", format!("{rc}\n"));
        t.file("home/.config/projdir", format!("{}\n", ws.display()));
        let o = run_in(&ws, &home, &[], &["sh", "-c", PLANT]);
        assert_eq!(code(&o), 0, "{rc}: {}", err(&o));
        assert!(
            err(&o).contains("is read-only for this run: the home's"),
            "{rc}: {}",
            err(&o)
        );
        assert_eq!(read(&ws.join("env.sh")), "true\n", "{rc}: planted");
        assert!(!ws.join("new.txt").exists(), "{rc}");
        let host = host_bash(&home);
        assert!(
            !host.contains("PWN"),
            "{rc}: host bash ran planted code: {host}"
        );
    }
}

/// F8: the user's own plugin code (vim start package, oh-my-zsh custom
/// plugin, a file of `~/.bashrc.d` with a log-like name) names the
/// workspace: read-only, the planted file not written.
#[test]
fn f8_plugin_directories_are_read() {
    for (i, rel) in [
        ".vim/pack/my/start/p/plugin/p.vim",
        ".oh-my-zsh/custom/plugins/my/my.plugin.zsh",
        ".config/nvim/lua/plugins/x.lua",
        ".bashrc.d/dev.log",
    ]
    .iter()
    .enumerate()
    {
        let (t, home, ws) = project(&format!("m22c-f8-{i}"));
        t.file(
            format!("home/{rel}"),
            format!("source {}/env.sh\n", ws.display()),
        );
        let o = run_in(&ws, &home, &[], &["sh", "-c", PLANT]);
        assert_eq!(code(&o), 0, "{rel}: {}", err(&o));
        assert!(err(&o).contains(rel), "{rel}: {}", err(&o));
        assert_eq!(read(&ws.join("env.sh")), "true\n", "{rel}: planted");
        assert!(!ws.join("new.txt").exists(), "{rel}");
    }
}

/// F3: ordinary lines that run nothing leave the project writable (and
/// the run says nothing about it).
#[test]
fn f3_lines_that_run_nothing_leave_the_project_writable() {
    let (t, home, ws) = project("m22c-f3");
    let w = ws.display().to_string();
    t.file(
        "home/.gitconfig",
        format!("[safe]\n\tdirectory = {w}\n[core]\n\texcludesFile = {w}/.gi\n"),
    );
    t.file("home/.config/git/ignore", format!("{w}/build/\n"));
    t.file(
        "home/.local/share/direnv/allow/0123abcd",
        format!("{w}/.envrc\n"),
    );
    t.file(
        "home/.ssh/config",
        format!("Host x\n  IdentityFile {w}/key\n"),
    );
    t.file(
        "home/.bashrc",
        format!(
            "alias p='cd {w}'\np2() {{ cd ~/proj; }}\nexport CDPATH=.:{w}\n\
             export PATH=$PATH:$HOME/go/bin  # {w}\n# . {w}/env.sh\n"
        ),
    );
    t.file(
        "home/.claude/settings.json",
        format!("{{\"permissions\":{{\"additionalDirectories\":[\"{w}\"]}}}}\n"),
    );
    let o = run_in(&ws, &home, &[], &["sh", "-c", "echo ok > w; true"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("w")), "ok\n", "{}", err(&o));
    assert!(
        !err(&o).contains("is read-only for this run"),
        "{}",
        err(&o)
    );
}

/// F5: the home reached through a bind mount made in a private mount
/// namespace: the alias of the home is refused as a workspace, and a
/// project the home's `.bashrc` sources, entered through the alias, stays
/// read-only (the planted file not written).
#[test]
fn f5_the_home_under_a_second_name() {
    if !skarn_test_support::is_root() {
        skarn_test_support::skip!("a bind mount in a private mount namespace needs root");
    }
    if !host_has("unshare", "--version") {
        skarn_test_support::skip!("unshare (util-linux) is needed");
    }
    let (t, home, ws) = project("m22c-f5");
    t.file("home/.bashrc", ". ~/proj/env.sh\n");
    let alias = t.dir("alias");
    let script = format!(
        "mount --bind '{h}' '{a}' || exit 99\n\
         cd '{a}' && '{exe}' run --no-config -- sh -c 'echo PW >> .bash_profile'; echo rc1=$?\n\
         cd '{a}/proj' && '{exe}' run --no-config -- sh -c \"{PLANT}\"; echo rc2=$?\n\
         cd '{a}' && '{exe}' run --no-config --allow-home-workspace -- sh -c \
           'echo PW >> .bash_profile; echo PW >> proj/env.sh; true'; echo rc3=$?\n",
        h = home.display(),
        a = alias.display(),
        exe = exe().display(),
    );
    let o = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .env("HOME", &home)
        .env_remove("XDG_STATE_HOME")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    if code(&o) == 99 {
        skarn_test_support::skip!("mount --bind failed here: {}", err(&o));
    }
    let (so, se) = (out(&o), err(&o));
    assert!(so.contains("rc1=") && !so.contains("rc1=0"), "{so}{se}");
    assert!(se.contains("the same directory under another name"), "{se}");
    assert!(!home.join(".bash_profile").exists(), "{se}");
    assert!(so.contains("rc2=0"), "{so}{se}");
    assert_eq!(read(&ws.join("env.sh")), "true\n", "planted: {se}");
    assert!(!ws.join("new.txt").exists(), "{se}");
    // Accepted with --allow-home-workspace: still nothing written.
    assert!(so.contains("rc3=0"), "{so}{se}");
    assert!(!home.join(".bash_profile").exists(), "{se}");
    assert_eq!(read(&ws.join("env.sh")), "true\n", "planted: {se}");
}

/// atk22d F10: a home program whose `#!` interpreter lies in the project
/// (`~/.local/bin/tool` run by the user's shell): the project is
/// read-only, the interpreter cannot be replaced, and the host running the
/// tool runs nothing planted.
#[test]
fn f10_a_shebang_interpreter_in_the_project() {
    let (t, home, ws) = project("m22d-f10");
    t.file("home/proj/run.sh", "#!/bin/sh\necho fine\n");
    t.file(
        "home/.local/bin/tool",
        format!("#!{}/run.sh\n", ws.display()),
    );
    let tool = home.join(".local/bin/tool");
    use std::os::unix::fs::PermissionsExt;
    for f in [&tool, &ws.join("run.sh")] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "printf '#!/bin/sh\\necho PWN-planted\\n' > run.sh; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        err(&o).contains("is read-only for this run: the home's"),
        "{}",
        err(&o)
    );
    // From outside: the interpreter is the user's, and running the tool
    // on the host runs it.
    assert_eq!(read(&ws.join("run.sh")), "#!/bin/sh\necho fine\n");
    let host = Command::new(&tool).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&host.stdout).contains("PWN"),
        "the host ran the planted interpreter"
    );
}

/// What the user's interactive bash prints running `ls` in `dir` (with
/// `home`'s start-up files and a system `PATH`).
fn host_ls(dir: &std::path::Path, home: &std::path::Path) -> String {
    let host = Command::new("bash")
        .args(["-i", "-c", "ls >/dev/null; echo done"])
        .current_dir(dir)
        .env("HOME", home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("bash");
    String::from_utf8_lossy(&host.stdout).into_owned()
}

/// atk22d F9: a relative `PATH` entry of the user's `.bashrc`
/// (`./node_modules/.bin`, `.`) is searched in the project by the host's
/// shell: a program the run puts there named like a system program is set
/// aside after the run (said on stderr), the host's `ls` in the project
/// runs the system's; a program of the project's own name stays.
// Pinned to `--workspace-layer direct`: asserts the direct mode's own
// mechanism (placeholders, set-aside names or its messages); the default
// layer refuses the same plants when applied (ADR 0226).
#[test]
fn f9_relative_path_entries_of_a_start_up_file() {
    for (i, (rc, plant)) in [
        (
            "export PATH=\"./node_modules/.bin:$PATH\"",
            "mkdir -p node_modules/.bin && cd node_modules/.bin",
        ),
        ("PATH=.:$PATH", "true"),
    ]
    .iter()
    .enumerate()
    {
        let (t, home, ws) = project(&format!("m22d-f9-{i}"));
        t.file("home/.bashrc", format!("{rc}\n"));
        let script = format!(
            "{plant} && for n in ls my-own-tool; do printf '#!/bin/sh\\necho PWN-$n\\n' > $n; chmod +x $n; done"
        );
        let o = run_in(
            &ws,
            &home,
            &["--workspace-layer", "direct"],
            &["sh", "-c", &script],
        );
        assert_eq!(code(&o), 0, "{rc}: {}", err(&o));
        // The start-up file's entry names the directory (home mentions);
        // a `node_modules/.bin` program named like a host one is also set
        // aside by the direct mode's own `.bin` judgement (ADR 0341).
        assert!(
            err(&o).contains("is on your PATH")
                || (i == 0 && err(&o).contains("a new node_modules/.bin program")),
            "{rc}: {}",
            err(&o)
        );
        let dir = if i == 0 {
            ws.join("node_modules/.bin")
        } else {
            ws.clone()
        };
        assert!(!dir.join("ls").exists(), "{rc}: the planted ls stayed");
        assert!(
            dir.join("my-own-tool").exists(),
            "{rc}: the project's tool went"
        );
        // From outside: the user's shell in the project runs the system's ls.
        let out = host_ls(&ws, &home);
        assert!(!out.contains("PWN"), "{rc}: host ran the planted ls: {out}");
        assert!(out.contains("done"), "{rc}: {out}");
    }
}

/// atk22d F9, below the top: a relative entry (`bin`, `.`) names a
/// directory in whatever subdirectory the user's shell is in, so a
/// program the run plants in `sub/deep/bin` (or `sub/deep`) named like a
/// system one is set aside too; the host's `ls` there runs the system's.
// Pinned to `--workspace-layer direct`: asserts the direct mode's own
// mechanism (placeholders, set-aside names or its messages); the default
// layer refuses the same plants when applied (ADR 0226).
#[test]
fn f9_relative_path_entries_name_subdirectories_too() {
    for (i, (rc, at)) in [
        ("PATH=bin:$PATH", "sub/deep/bin"),
        ("PATH=:$PATH", "sub/deep"),
    ]
    .iter()
    .enumerate()
    {
        let (t, home, ws) = project(&format!("m22d-f9s-{i}"));
        t.file("home/.bashrc", format!("{rc}\n"));
        let script = format!(
            "mkdir -p {at} && cd {at} && for n in ls my-own-tool; do printf '#!/bin/sh\\necho PWN-$n\\n' > $n; chmod +x $n; done"
        );
        let o = run_in(
            &ws,
            &home,
            &["--workspace-layer", "direct"],
            &["sh", "-c", &script],
        );
        assert_eq!(code(&o), 0, "{rc}: {}", err(&o));
        assert!(err(&o).contains("is on your PATH"), "{rc}: {}", err(&o));
        let dir = ws.join(at);
        assert!(!dir.join("ls").exists(), "{rc}: the planted ls stayed");
        assert!(
            dir.join("my-own-tool").exists(),
            "{rc}: the project's tool went"
        );
        let out = host_ls(&ws.join("sub/deep"), &home);
        assert!(!out.contains("PWN"), "{rc}: host ran the planted ls: {out}");
        assert!(out.contains("done"), "{rc}: {out}");
    }
}

/// atk22d F11: `~/.docker/config.json` naming a plugin folder of the
/// project (`cliPluginsExtraDirs`, searched before docker's own
/// plugins): the project is read-only, the planted `docker-compose` is not
/// written.
#[test]
fn f11_a_docker_plugin_folder_in_the_project() {
    let (t, home, ws) = project("m22d-f11");
    t.file("home/proj/plugins/.keep", "");
    t.file(
        "home/.docker/config.json",
        format!(
            "{{\"cliPluginsExtraDirs\": [\"{}/plugins\"]}}\n",
            ws.display()
        ),
    );
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "printf '#!/bin/sh\\necho PWN\\n' > plugins/docker-compose; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        err(&o).contains("is read-only for this run: the home's"),
        "{}",
        err(&o)
    );
    assert!(!ws.join("plugins/docker-compose").exists());
}

/// atk22d F2: a package in node's global folder `~/.node_modules` linked
/// to the project (`npm link`-style): the project is read-only, the
/// planted `index.js` not written, and the host's `require` of it runs
/// the user's code.
#[test]
fn f2_a_node_global_package_linked_to_the_project() {
    let (t, home, ws) = project("m22d-f2");
    t.file("home/proj/index.js", "module.exports = 'fine';\n");
    std::fs::create_dir_all(home.join(".node_modules")).unwrap();
    std::os::unix::fs::symlink(&ws, home.join(".node_modules/mytool")).unwrap();
    let o = run_in(
        &ws,
        &home,
        &[],
        &["sh", "-c", "echo \"console.log('PWN')\" > index.js; true"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        err(&o).contains("is read-only for this run: the home's"),
        "{}",
        err(&o)
    );
    assert_eq!(read(&ws.join("index.js")), "module.exports = 'fine';\n");
    if host_has("node", "--version") {
        let host = Command::new("node")
            .args(["-e", "console.log(require('mytool'))"])
            .current_dir(t.dir("elsewhere"))
            .env("HOME", &home)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&host.stdout);
        assert!(out.contains("fine") && !out.contains("PWN"), "{out}");
    }
}

/// atk22d F4: interpreters' start-up files in the project (`.irbrc`,
/// `.Rprofile`, ...): a new one is set aside after the run (never left
/// where irb or R started there would run it), an existing one is
/// read-only, and none is reserved (the listing inside shows no
/// placeholder for them).
#[test]
fn f4_interpreter_start_up_files() {
    let (t, home, ws) = project("m22d-f4");
    t.file("home/proj/.pryrc", "# mine\n");
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "ls -a; echo 'system(\"id\")' > .irbrc; echo 'system(\"id\")' > .Rprofile; \
             echo x >> .pryrc; echo ok > w; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let listing = out(&o);
    assert!(
        !listing.contains(".irbrc") && !listing.contains(".Rprofile"),
        "{listing}"
    );
    assert_eq!(read(&ws.join("w")), "ok\n");
    assert!(!ws.join(".irbrc").exists(), "{}", err(&o));
    assert!(!ws.join(".Rprofile").exists(), "{}", err(&o));
    assert_eq!(read(&ws.join(".pryrc")), "# mine\n");
    assert!(err(&o).contains(".irbrc"), "{}", err(&o));
}

/// atk22d F5: a start-up file's PATTERN naming the project under a
/// bind-mount alias (`for f in /srv/proj/*.sh; do . $f; done`) is a
/// mention: the planted file is not written (root: the alias is a bind
/// mount in a private mount namespace).
#[test]
fn f5_a_pattern_through_a_bind_alias_of_the_project() {
    if !skarn_test_support::is_root() {
        skarn_test_support::skip!("a bind mount in a private mount namespace needs root");
    }
    if !host_has("unshare", "--version") {
        skarn_test_support::skip!("unshare (util-linux) is needed");
    }
    for (i, line) in ["for f in {a}/*.sh; do . $f; done", ". {a2}/pro[j]/env.sh"]
        .iter()
        .enumerate()
    {
        let (t, home, ws) = project(&format!("m22d-f5-{i}"));
        let alias_top = t.dir("srv");
        let alias = t.dir("srv/proj");
        t.file(
            "home/.bashrc",
            format!(
                "{}\n",
                line.replace("{a}", &alias.display().to_string())
                    .replace("{a2}", &alias_top.display().to_string())
            ),
        );
        let script = format!(
            "mount --bind '{w}' '{a}' || exit 99\n\
             cd '{w}' && '{exe}' run --no-config -- sh -c \"{PLANT}; echo PW > zevil.sh; true\"; echo rc=$?\n",
            w = ws.display(),
            a = alias.display(),
            exe = exe().display(),
        );
        let o = Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c", &script])
            .env("HOME", &home)
            .env_remove("XDG_STATE_HOME")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        if code(&o) == 99 {
            skarn_test_support::skip!("mount --bind failed here: {}", err(&o));
        }
        let (so, se) = (out(&o), err(&o));
        assert!(so.contains("rc=0"), "{line}: {so}{se}");
        assert!(!ws.join("zevil.sh").exists(), "{line}: planted: {se}");
        assert_eq!(read(&ws.join("env.sh")), "true\n", "{line}: {se}");
    }
}

/// atk22e: the interpreters read their start-up files in whatever
/// directory they start in, so a new one below the top (`sub/.irbrc`,
/// `sub/.Rprofile`, `irb.rc`, `.perldb`, `.Renviron`, `ansible.cfg`) is
/// set aside after the run too, and an existing one there is read-only.
#[test]
fn interpreter_start_up_files_below_the_top() {
    let (t, home, ws) = project("m22e-interp");
    t.file("home/proj/pkg/.ghci", ":! mine\n");
    let names = [
        "sub/.irbrc",
        "sub/deeper/.Rprofile",
        "sub/irb.rc",
        "sub/_irbrc",
        "sub/.perldb",
        "sub/.Renviron",
        "sub/ansible.cfg",
        ".perldb",
    ];
    let script = format!(
        "mkdir -p sub/deeper; for f in {}; do echo 'system(\"id\")' > $f; done; \
         echo x >> pkg/.ghci; echo ok > sub/w; true",
        names.join(" ")
    );
    let o = run_in(&ws, &home, &[], &["sh", "-c", &script]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("sub/w")), "ok\n");
    for n in names {
        assert!(!ws.join(n).exists(), "{n} was left: {}", err(&o));
    }
    assert_eq!(read(&ws.join("pkg/.ghci")), ":! mine\n");
}
