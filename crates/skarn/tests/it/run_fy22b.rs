//! `skarn run`, attack atk22o (issue 22) on the default settings: a
//! `PATH` link into an installation outside `/opt` and the home (F3), an
//! `/opt` installation only a system launcher names (desktop entry,
//! vendor systemd unit, D-Bus service: F12), and what a start-up file an
//! environment variable names sources (F6). Each attempt is made for real
//! and judged from outside, as root and as uid 65534.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;
use crate::support_attempt::{self, SYS_PATH, git_in, users};
use crate::support_planted::Planted;
use skarn_test_support::TempDir;

const FLAG: &str = "--allow-non-project-workspace";

/// `sh -c script` in a run started in `cwd`, with `flags` and `envs`, as
/// uid 65534 when `nobody`.
fn attempt(
    t: &TempDir,
    cwd: &Path,
    flags: &[&str],
    envs: &[(&str, &Path)],
    nobody: bool,
    script: &str,
) -> Output {
    let unset = ["XDG_DATA_DIRS", "XDG_CONFIG_DIRS", "BASH_ENV", "ENV"];
    support_attempt::attempt(t, cwd, flags, &unset, envs, nobody, script)
}

fn repo(ws: &Path, files: &[(&str, &str)]) {
    for (f, body) in files {
        let p = ws.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, body).unwrap();
    }
    git_in(ws, &["init", "-q", "."]);
    git_in(ws, &["add", "-A"]);
    git_in(ws, &["commit", "-qm", "i"]);
}

fn executable(p: &Path) {
    std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

fn refused(o: &Output, what: &str) {
    assert!(
        !o.status.success() && !out(o).contains("PLANTED"),
        "{what}: the workspace was accepted: {}{}",
        out(o),
        err(o)
    );
    assert!(
        err(o).contains(FLAG),
        "{what}: no clear refusal: {}",
        err(o)
    );
}

// ---- F3: a PATH link into an installation outside /opt and the home ----

#[test]
fn a_path_link_keeps_its_whole_installation() {
    if !skarn_test_support::is_root() {
        skarn_test_support::skip!("needs root (a link in /usr/local/bin)");
    }
    for nobody in users() {
        let t = TempDir::new("fy22b-f3");
        t.dir("home");
        let app = t.dir("app");
        repo(
            &app,
            &[
                (
                    "tool",
                    "#!/bin/sh\n. \"$(dirname \"$(readlink -f \"$0\")\")/lib.sh\"\nmain\n",
                ),
                ("lib.sh", "main(){ echo real; }\n"),
            ],
        );
        executable(&app.join("tool"));
        let name = format!("fy22b-app-{}-{}", std::process::id(), u8::from(nobody));
        let link = PathBuf::from("/usr/local/bin").join(&name);
        let _planted = Planted(vec![link.clone()]);
        std::os::unix::fs::symlink(app.join("tool"), &link).unwrap();
        let s = "printf 'main(){ echo planted; }\\n' > lib.sh && echo PLANTED";
        // The installation itself: refused.
        let o = attempt(&t, &app, &[], &[], nobody, s);
        refused(&o, &format!("{} (uid 65534: {nobody})", app.display()));
        // A directory holding it: accepted, the installation read-only.
        let o = attempt(&t, t.path(), &[], &[], nobody, &format!("cd app && {s}"));
        assert!(!out(&o).contains("PLANTED"), "{}{}", out(&o), err(&o));
        // Accepted with the flag: the whole installation stays read-only.
        let o = attempt(&t, &app, &[FLAG], &[], nobody, s);
        assert!(!out(&o).contains("PLANTED"), "{}{}", out(&o), err(&o));
        // The host's next call by the PATH name runs the real one.
        let r = Command::new(&name).env("PATH", SYS_PATH).output().unwrap();
        assert_eq!(
            out(&r),
            "real\n",
            "uid 65534: {nobody}: the host ran the plant"
        );
    }
}

// ---- F12: an /opt installation only a system launcher names ----

#[test]
fn an_installation_a_system_launcher_names_is_refused() {
    if !skarn_test_support::is_root() {
        skarn_test_support::skip!("needs root (launcher files in /usr, a directory in /opt)");
    }
    let launchers: [(&str, &str); 3] = [
        (
            "/usr/share/applications/{n}.desktop",
            "[Desktop Entry]\nType=Application\nName=x\nExec={p} %U\n",
        ),
        (
            "/usr/lib/systemd/system/{n}.service",
            "[Service]\nExecStart=-{p} --serve\n",
        ),
        (
            "/usr/share/dbus-1/services/org.{n}.service",
            "[D-BUS Service]\nName=org.x\nExec={p}\n",
        ),
    ];
    for nobody in users() {
        for (i, (file, body)) in launchers.iter().enumerate() {
            let t = TempDir::new("fy22b-f12");
            t.dir("home");
            let o_dir = TempDir::new_in("/opt", "fy22b-f12");
            let top = std::fs::canonicalize(o_dir.path()).unwrap();
            let svc = top.join("svc");
            std::fs::create_dir_all(&svc).unwrap();
            let prog = svc.join("svcd");
            std::fs::write(&prog, "#!/bin/sh\necho real\n").unwrap();
            executable(&prog);
            let n = format!("fy22b-{}-{}-{i}", std::process::id(), u8::from(nobody));
            let mut planted = Planted(Vec::new());
            let f = PathBuf::from(file.replace("{n}", &n));
            assert!(planted.file(&f, &body.replace("{p}", &prog.display().to_string())));
            if nobody {
                let st = Command::new("chown")
                    .args(["-R", "65534:65534"])
                    .arg(&top)
                    .status()
                    .unwrap();
                assert!(st.success());
                let st = Command::new("chmod").arg("755").arg(&top).status().unwrap();
                assert!(st.success());
            }
            let s = "printf '#!/bin/sh\\necho planted\\n' > svcd && echo PLANTED";
            let o = attempt(&t, &svc, &[], &[], nobody, s);
            refused(&o, &format!("{} (uid 65534: {nobody})", f.display()));
            assert!(err(&o).contains(&f.display().to_string()), "{}", err(&o));
            // Accepted with the flag: the program stays the host's.
            let _ = attempt(&t, &svc, &[FLAG], &[], nobody, s);
            // What the launcher starts next.
            let r = Command::new(&prog).output().unwrap();
            assert_eq!(
                out(&r),
                "real\n",
                "{}: the launcher ran the plant",
                f.display()
            );
        }
    }
}

// ---- F6: what a start-up file an environment variable names sources ----

#[test]
fn what_an_environment_named_start_up_file_sources_stays_the_hosts() {
    for nobody in users() {
        let t = TempDir::new("fy22b-f6");
        t.dir("home");
        let ws = t.dir("be");
        let more = ws.join("lib/more.sh");
        repo(
            &ws,
            &[
                ("tools/env.sh", &format!(". {}\n", more.display())),
                ("lib/more.sh", "true\n"),
                ("README", "x\n"),
            ],
        );
        let env = ws.join("tools/env.sh");
        let mark = t.path().join("PWNED");
        let s = format!(
            "echo 'touch {m}' >> lib/more.sh; echo 'touch {m}' > tools/local.sh; \
             echo ok > README; echo PLANTED",
            m = mark.display()
        );
        let o = attempt(&t, &ws, &[], &[("BASH_ENV", &env)], nobody, &s);
        // The project stays usable.
        assert!(out(&o).contains("PLANTED"), "{}{}", out(&o), err(&o));
        assert_eq!(std::fs::read_to_string(ws.join("README")).unwrap(), "ok\n");
        assert_eq!(
            std::fs::read_to_string(&more).unwrap(),
            "true\n",
            "{}",
            err(&o)
        );
        assert!(!ws.join("tools/local.sh").exists(), "{}", err(&o));
        // The start-up file's own directory as the workspace: refused.
        let top = ws.join("tools");
        let o = attempt(
            &t,
            &top,
            &["--workspace", &top.display().to_string()],
            &[("BASH_ENV", &env)],
            nobody,
            "echo PLANTED",
        );
        refused(&o, &format!("BASH_ENV dir (uid 65534: {nobody})"));
        // The host's next bash.
        let h = Command::new("bash")
            .args(["-c", "true"])
            .env("BASH_ENV", &env)
            .current_dir("/")
            .output()
            .unwrap();
        assert!(h.status.success());
        assert!(
            !mark.exists(),
            "uid 65534: {nobody}: host bash ran the plant"
        );
    }
}
