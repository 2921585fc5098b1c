//! `skarn run`: attack round 4 on issue 22 (findings F1, F3, F4, F14),
//! each attempted for real and checked from outside: what the home's
//! start-up files reach by patterns, variables, `builtin`/`command`,
//! programs they run, `PATH` lines and editor directories; a workspace a
//! start-up file links into; a grant followed through a link an earlier
//! run made.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| format!("<{e}>"))
}

/// A host interactive bash with `home` as HOME: what it printed.
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

const PLANT: &str = "mkdir -p bash.d bin; echo 'echo PWN-glob' > bash.d/z.sh; \
                     echo 'echo PWN-b2' > b2.sh; echo 'echo PWN-b3' > b3.sh; \
                     echo 'echo PWN-b4' > b4.sh; \
                     printf '#!/bin/sh\\necho \"echo PWN-prompt\"\\n' > bin/prompt; \
                     chmod +x bin/prompt; \
                     printf '#!/bin/sh\\necho PWN-ls\\n' > bin/ls; chmod +x bin/ls; true";

fn dotfiles_rc(dir: &str) -> String {
    format!(
        "for f in ~/{dir}/bash.d/*.sh; do [ -r \"$f\" ] && . \"$f\"; done\n\
         builtin source ~/{dir}/b2.sh\n\
         command . ~/{dir}/b3.sh\n\
         eval \"$(~/{dir}/bin/prompt init)\"\n\
         DF=~/{dir}; . $DF/b4.sh\n\
         export PATH=\"$HOME/{dir}/bin:$PATH\"\n"
    )
}

/// F1/F14: `~/.bashrc -> dotfiles/bashrc` (the workspace) sourcing by a
/// pattern, `builtin source`, `command .`, a variable, running a program
/// with `eval` and adding `dotfiles/bin` to PATH: the workspace is
/// read-only for the run (said), and the host bash ran none of it.
#[test]
fn a_workspace_a_start_up_file_links_into_is_read_only() {
    let t = TempDir::new("r4-dotrc");
    let home = t.dir("home");
    let ws = t.dir("home/dotfiles");
    git(&ws, &["init", "-q"]);
    t.file("home/dotfiles/bashrc", dotfiles_rc("dotfiles"));
    t.file("home/dotfiles/bash.d/a.sh", "true\n");
    for f in ["b2.sh", "b3.sh", "b4.sh"] {
        t.file(format!("home/dotfiles/{f}"), "true\n");
    }
    t.file("home/dotfiles/bin/prompt", "#!/bin/sh\necho true\n");
    std::process::Command::new("chmod")
        .args(["+x"])
        .arg(ws.join("bin/prompt"))
        .status()
        .unwrap();
    symlink("dotfiles/bashrc", home.join(".bashrc")).unwrap();
    let o = run_in(&ws, &home, &["--report"], &["sh", "-c", PLANT]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(err(&o).contains("is read-only for this run"), "{}", err(&o));
    assert!(!ws.join("bash.d/z.sh").exists(), "{}", err(&o));
    assert!(!ws.join("bin/ls").exists(), "{}", err(&o));
    assert_eq!(read(&ws.join("b2.sh")), "true\n");
    let host = host_bash(&home, &ws);
    assert!(!host.contains("PWN"), "host bash ran planted code: {host}");
}

/// F1 with the start-up file in the home itself: what it reaches by a
/// pattern, `command .`, a variable, `eval` and `PATH` inside another
/// workspace is read-only (reserved when missing), the rest of the
/// workspace stays writable, and the host bash ran none of it.
#[test]
fn what_a_home_start_up_file_reaches_inside_the_workspace_is_read_only() {
    let t = TempDir::new("r4-homerc");
    let home = t.dir("home");
    let ws = t.dir("home/proj");
    git(&ws, &["init", "-q"]);
    t.file(
        "home/.bashrc",
        "for f in ~/proj/bash.d/*.sh; do [ -r \"$f\" ] && . \"$f\"; done\n\
         command . ~/proj/lib/b3.sh\n\
         builtin source ~/proj/lib2/b2.sh\n\
         eval \"$(~/proj/tools/prompt init)\"\n\
         DF=~/proj/conf; . $DF/b4.sh\n\
         export PATH=\"$HOME/proj/pbin:$PATH\"\n",
    );
    t.file("home/proj/lib/b3.sh", "true\n");
    t.file("home/proj/lib2/b2.sh", "true\n");
    t.file("home/proj/conf/b4.sh", "true\n");
    t.file("home/proj/tools/prompt", "#!/bin/sh\necho true\n");
    std::process::Command::new("chmod")
        .args(["+x"])
        .arg(ws.join("tools/prompt"))
        .status()
        .unwrap();
    let plant = "mkdir -p bash.d pbin; echo 'echo PWN-glob' > bash.d/z.sh; \
                 echo 'echo PWN-b3' > lib/b3.sh; echo 'echo PWN-b3n' > lib/new.sh; \
                 echo 'echo PWN-b2' > lib2/b2.sh; echo 'echo PWN-b4' > conf/b4.sh; \
                 printf '#!/bin/sh\\necho \"echo PWN-prompt\"\\n' > tools/prompt; \
                 printf '#!/bin/sh\\necho PWN-ls\\n' > pbin/ls; chmod +x pbin/ls; \
                 echo ok > written.txt; true";
    // Trusted (ADR 0160): the precise protections still hold.
    let o = run_in(
        &ws,
        &home,
        &["--report", "--trust-home-config-workspace"],
        &["sh", "-c", plant],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("written.txt")), "ok\n", "{}", err(&o));
    assert!(!ws.join("bash.d/z.sh").exists(), "{}", err(&o));
    assert!(!ws.join("pbin/ls").exists(), "{}", err(&o));
    assert!(!ws.join("lib/new.sh").exists(), "{}", err(&o));
    for f in ["lib/b3.sh", "lib2/b2.sh", "conf/b4.sh"] {
        assert_eq!(read(&ws.join(f)), "true\n", "{f}: {}", err(&o));
    }
    assert_eq!(read(&ws.join("tools/prompt")), "#!/bin/sh\necho true\n");
    let host = host_bash(&home, &home);
    assert!(!host.contains("PWN"), "host bash ran planted code: {host}");
}

/// F1: a source skarn cannot expand (`$(...)`) is said, and the report
/// is not `FullyEnforced`.
#[test]
fn an_unexpandable_source_is_said() {
    let t = TempDir::new("r4-unres");
    let home = t.dir("home");
    let ws = t.dir("home/proj");
    git(&ws, &["init", "-q"]);
    t.file(
        "home/.bashrc",
        ". \"$(dirname \"$(readlink -f ~/.bashrc)\")/aliases.sh\"\n",
    );
    let o = run_in(&ws, &home, &["--report"], &["true"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(err(&o).contains("cannot expand"), "{}", err(&o));
    assert!(!err(&o).contains("FullyEnforced"), "{}", err(&o));
}

/// F4: vim's `runtimepath` and tmux's `run-shell` in start-up files, both
/// linked into the workspace and real files of the home naming places
/// inside it: nothing the host vim or tmux loads can be written.
#[test]
fn editor_and_tmux_start_up_places_are_read_only() {
    let t = TempDir::new("r4-vim");
    let home = t.dir("home");
    let ws = t.dir("home/proj");
    git(&ws, &["init", "-q"]);
    t.file("home/.vimrc", "set runtimepath+=~/proj/vim\n");
    t.file("home/.tmux.conf", "run-shell ~/proj/tmux/status.sh\n");
    t.dir("home/proj/vim/plugin");
    t.file("home/proj/tmux/status.sh", "#!/bin/sh\ntrue\n");
    let plant = "echo 'call writefile([\"PWN\"], \"/tmp/x\")' > vim/plugin/evil.vim; \
                 printf '#!/bin/sh\\necho PWN\\n' > tmux/status.sh; echo ok > ok.txt; true";
    // Trusted (ADR 0160), so that the rest of the workspace stays
    // writable: the precise protections still hold.
    let trust = ["--trust-home-config-workspace"];
    let o = run_in(&ws, &home, &trust, &["sh", "-c", plant]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("ok.txt")), "ok\n", "{}", err(&o));
    assert!(!ws.join("vim/plugin/evil.vim").exists(), "{}", err(&o));
    assert_eq!(read(&ws.join("tmux/status.sh")), "#!/bin/sh\ntrue\n");

    // The same files linked into a dotfiles workspace.
    let dot = t.dir("home/dotfiles");
    git(&dot, &["init", "-q"]);
    std::fs::remove_file(home.join(".vimrc")).unwrap();
    std::fs::remove_file(home.join(".tmux.conf")).unwrap();
    t.file("home/dotfiles/vimrc", "set runtimepath+=~/dotfiles/vim\n");
    t.file(
        "home/dotfiles/tmux.conf",
        "run-shell ~/dotfiles/tmux/status.sh\n",
    );
    t.dir("home/dotfiles/vim/plugin");
    t.file("home/dotfiles/tmux/status.sh", "#!/bin/sh\ntrue\n");
    symlink("dotfiles/vimrc", home.join(".vimrc")).unwrap();
    symlink("dotfiles/tmux.conf", home.join(".tmux.conf")).unwrap();
    let o = run_in(&dot, &home, &[], &["sh", "-c", plant]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!dot.join("vim/plugin/evil.vim").exists(), "{}", err(&o));
    assert_eq!(read(&dot.join("tmux/status.sh")), "#!/bin/sh\ntrue\n");
}

/// F3: run 1 turns a directory of its workspace into a link to the
/// home's user services; run 2, elsewhere, is granted that directory by
/// name: refused (exit 2), nothing written there. A write grant reaching
/// a home configuration place through a link the user made is refused too.
#[test]
fn a_grant_through_a_link_an_earlier_run_made_is_refused() {
    let t = TempDir::new("r4-grantlink");
    let home = t.dir("home");
    let units = t.dir("home/.config/systemd/user");
    let a = t.dir("home/A");
    let b = t.dir("home/B");
    t.dir("home/A/build");
    git(&a, &["init", "-q"]);
    git(&b, &["init", "-q"]);
    let o = run_in(
        &a,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "rm -rf build && ln -s ../.config/systemd/user build",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    // The link out to a writable home directory does not survive the run
    // (atk22g F8: set aside after it). Made again here, as a run of an
    // older skarn left it, for the check of the next run's grant.
    assert!(
        std::fs::read_link(a.join("build")).is_err(),
        "the link out survived: {}",
        err(&o)
    );
    // (The layer, ADR 0226, keeps the host's `build` directory whole when
    // it refuses the link that replaced it; the direct mode removed it.)
    let _ = std::fs::remove_dir_all(a.join("build"));
    symlink("../.config/systemd/user", a.join("build")).unwrap();
    let grant = a.join("build");
    let plant = format!("echo '[Service]' > {}/evil.service", grant.display());
    let o = run_in(
        &b,
        &home,
        &["--report", "--write", grant.to_str().unwrap()],
        &["sh", "-c", &plant],
    );
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("earlier sandboxed run"), "{}", err(&o));
    assert!(!units.join("evil.service").exists(), "{}", err(&o));

    // A link the user made (C never a workspace) onto a home config place.
    let c = t.dir("home/C");
    symlink("../.config/systemd/user", c.join("out")).unwrap();
    let grant = c.join("out");
    let plant = format!("echo '[Service]' > {}/evil2.service", grant.display());
    let o = run_in(
        &b,
        &home,
        &["--write", grant.to_str().unwrap()],
        &["sh", "-c", &plant],
    );
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(!units.join("evil2.service").exists(), "{}", err(&o));
}
