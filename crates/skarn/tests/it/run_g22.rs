//! `skarn run`, issue 22's eighth-round open gaps on the default
//! settings: a relative `LD_PRELOAD` entry of the caller, a workspace a
//! udev rule runs a program of, a planted compiled object outside git and
//! in the direct mode (and a new source that must keep its time);
//! `node_modules` links in [`super::run_g22_node`], host sockets in
//! [`super::run_g22_sockets`]. Each attempt is made for real and judged from
//! outside (the host's loader, make, shell and node), as root and as uid
//! 65534.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;
use crate::support_attempt::{self, git_in, plain};
use skarn_test_support::TempDir;

pub(super) use crate::support_attempt::{LAYERS, SYS_PATH, repo, users};

/// `sh -c script` in a run started in `cwd`, with `flags`, `envs` set;
/// `chown` is handed to uid 65534 too.
pub(super) fn attempt(
    t: &TempDir,
    cwd: &Path,
    flags: &[&str],
    envs: &[(&str, &str)],
    nobody: Option<&Path>,
    script: &str,
) -> Output {
    if let Some(extra) = nobody
        && extra != t.path()
    {
        assert!(
            Command::new("chown")
                .args(["-R", "65534:65534"])
                .arg(extra)
                .status()
                .unwrap()
                .success()
        );
    }
    let unset = ["NODE_OPTIONS", "LD_PRELOAD", "LD_LIBRARY_PATH"];
    support_attempt::attempt(t, cwd, flags, &unset, envs, nobody.is_some(), script)
}

fn gcc(args: &[&str]) -> bool {
    Command::new("gcc")
        .args(args)
        .status()
        .is_ok_and(|s| s.success())
}

/// `t/stage/libg22.so`, whose constructor writes `mark`.
fn plant_lib(t: &TempDir, mark: &Path) -> Option<PathBuf> {
    let stage = t.dir("stage");
    let src = t.file(
        "stage/plant.c",
        format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void p(void) {{ FILE *f = \
             fopen(\"{}\", \"w\"); if (f) {{ fputs(\"ran\\n\", f); fclose(f); }} }}\n",
            mark.display()
        ),
    );
    let lib = stage.join("libg22.so");
    gcc(&["-shared", "-fPIC", "-o", lib.to_str()?, src.to_str()?]).then_some(lib)
}

// ---- LD_PRELOAD naming the current directory ----

#[test]
fn a_relative_ld_preload_refuses_the_run() {
    for nobody in users() {
        let t = TempDir::new("g22-preload");
        let mark = t.path().join("PWNED");
        let Some(lib) = plant_lib(&t, &mark) else {
            skarn_test_support::skip!("no C compiler");
        };
        let ws = repo(&t, "p", &[("README", "hi\n")]);
        let s = format!(
            "mkdir -p lib && cp {l} . && cp {l} lib/ && echo PLANTED",
            l = lib.display()
        );
        let who = nobody.then(|| t.path());
        for val in ["./libg22.so", "/usr/lib/x.so lib/libg22.so"] {
            let o = attempt(&t, &ws, &[], &[("LD_PRELOAD", val)], who, &s);
            assert!(
                !o.status.success() && !out(&o).contains("PLANTED"),
                "LD_PRELOAD={val} (uid 65534: {nobody}): the run was accepted: {}{}",
                out(&o),
                err(&o)
            );
            assert!(
                err(&o).contains("LD_PRELOAD") && err(&o).contains("--allow-non-project-workspace"),
                "no clear refusal: {}",
                err(&o)
            );
            let _ = Command::new("/bin/true")
                .current_dir(&ws)
                .env("LD_PRELOAD", val)
                .output();
            assert!(
                !mark.exists(),
                "LD_PRELOAD={val}: the host loaded the plant"
            );
            assert!(!ws.join("libg22.so").exists() && !ws.join("lib/libg22.so").exists());
        }
        // A bare name is searched in the system's directories: runs.
        let o = attempt(
            &t,
            &ws,
            &[],
            &[("LD_PRELOAD", "libm.so.6")],
            who,
            "echo DONE",
        );
        assert!(out(&o).contains("DONE"), "{}{}", out(&o), err(&o));
    }
}

// ---- udev rules ----

#[test]
fn a_workspace_a_udev_rule_runs_is_refused() {
    if !skarn_test_support::is_root() {
        skarn_test_support::skip!("writing udev's rule directory needs root");
    }
    for nobody in users() {
        let t = TempDir::new("g22-udev");
        t.dir("home");
        let o = TempDir::new_in("/opt", "g22-udev");
        let opt = std::fs::canonicalize(o.path()).unwrap();
        let hook = opt.join("hook");
        std::fs::create_dir(&hook).unwrap();
        std::fs::write(hook.join("hook.sh"), "#!/bin/sh\necho real\n").unwrap();
        let rules = Path::new("/usr/lib/udev/rules.d");
        let made_dir = !rules.exists();
        std::fs::create_dir_all(rules).unwrap();
        let who = nobody.then_some(opt.as_path());
        // A first run keeps the launcher list (ADR 0339) before the rule
        // exists: the rule written after it must still be seen (what
        // changed within 2 s of a scan is not kept, so wait that long).
        std::thread::sleep(std::time::Duration::from_millis(2200));
        let _ = attempt(&t, &hook, &[], &[], who, "true");
        let rule = rules.join(format!(
            "99-{}.rules",
            opt.file_name().unwrap().to_string_lossy()
        ));
        // Read as udev reads it: a continued line, quoting, `+=`.
        std::fs::write(
            &rule,
            format!(
                "# g22\nACTION==\"add\", \\\n  SUBSYSTEM==\"usb\", \\\n  RUN+=\"/bin/sh {}\"\n",
                hook.join("hook.sh").display()
            ),
        )
        .unwrap();
        let s = "echo 'touch /tmp/g22-udev-pwn' >> hook.sh; echo TRIED";
        let r = attempt(&t, &hook, &[], &[], who, s);
        let r2 = attempt(&t, &hook, &["--allow-non-project-workspace"], &[], who, s);
        let body = std::fs::read_to_string(hook.join("hook.sh")).unwrap();
        let _ = std::fs::remove_file(&rule);
        if made_dir {
            let _ = std::fs::remove_dir(rules);
        }
        assert!(
            !r.status.success() && !out(&r).contains("TRIED"),
            "uid 65534: {nobody}: the run was accepted: {}{}",
            out(&r),
            err(&r)
        );
        assert!(
            err(&r).contains("udev") && err(&r).contains("--allow-non-project-workspace"),
            "no word of the rule: {}",
            err(&r)
        );
        assert_eq!(
            body,
            "#!/bin/sh\necho real\n",
            "uid 65534: {nobody}: the program udev runs was changed ({}{})",
            out(&r2),
            err(&r2)
        );
    }
}

// ---- build outputs outside git and in the direct mode ----

fn make_project(ws: &Path) {
    std::fs::write(ws.join("main.c"), "int main(){return 0;}\n").unwrap();
    std::fs::write(
        ws.join("Makefile"),
        "app: main.o\n\tcc -o app main.o\nmain.o: main.c\n\tcc -c main.c -o main.o\n\
         check: app\n\t./app\n",
    )
    .unwrap();
    let made = Command::new("make")
        .args(["-s", "app"])
        .current_dir(ws)
        .status()
        .unwrap();
    assert!(made.success());
    let old = Command::new("touch")
        .args(["-d", "2020-01-01"])
        .arg(ws.join("main.c"))
        .status()
        .unwrap();
    assert!(old.success());
}

#[test]
fn a_planted_object_outside_git_is_not_linked_by_host_make() {
    for layer in LAYERS {
        for nobody in users() {
            for git_repo in [false, true] {
                if git_repo && layer.is_empty() {
                    // The layer in a git repository: f22j's test.
                    continue;
                }
                let t = TempDir::new("g22-make");
                let ws = plain(&t, "p", &[]);
                make_project(&ws);
                if git_repo {
                    std::fs::write(ws.join(".gitignore"), "*.o\napp\n").unwrap();
                    git_in(&ws, &["init", "-q", "."]);
                    git_in(&ws, &["add", "-A"]);
                    git_in(&ws, &["commit", "-qm", "i"]);
                }
                let pwn = t.path().join("PWN_obj");
                let s = format!(
                    "printf '#include <stdio.h>\\nint main(){{FILE*f=fopen(\"{}\",\"w\");if(f)fclose(f);return 0;}}\\n' > /tmp/e.c && cc -c /tmp/e.c -o main.o && rm -f app && echo PLANTED",
                    pwn.display()
                );
                let who = nobody.then(|| t.path());
                let r = attempt(&t, &ws, layer, &[], who, &s);
                let what = format!("{layer:?}, git {git_repo}, uid 65534: {nobody}");
                assert!(
                    out(&r).contains("PLANTED"),
                    "{what}: {}{}",
                    out(&r),
                    err(&r)
                );
                assert!(ws.join("main.o").exists(), "{what}: not applied");
                let made = Command::new("make")
                    .args(["-s", "check"])
                    .current_dir(&ws)
                    .output()
                    .unwrap();
                assert!(made.status.success(), "{what}: host make failed");
                assert!(!pwn.exists(), "{what}: host make linked the planted object");
                assert!(err(&r).contains("dated 1970-01-01"), "{what}: {}", err(&r));
            }
        }
    }
}

#[test]
fn a_new_source_the_run_made_is_built_again_by_host_make() {
    let t = TempDir::new("g22-newsrc");
    let ws = repo(
        &t,
        "p",
        &[
            (".gitignore", "*.o\napp\n"),
            ("a.c", "int b(void);\nint main(void){return b();}\n"),
            (
                "Makefile",
                "app: a.o b.o\n\tcc -o app a.o b.o\n%.o: %.c\n\tcc -c $< -o $@\n",
            ),
        ],
    );
    // The host has an output whose source is not there (yet).
    std::fs::write(ws.join("b.c"), "int b(void){return 7;}\n").unwrap();
    let made = Command::new("make")
        .args(["-s", "app"])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::remove_file(ws.join("b.c")).unwrap();
    let r = attempt(
        &t,
        &ws,
        &[],
        &[],
        None,
        "printf 'int b(void){return 0;}\\n' > b.c && echo MADE",
    );
    assert!(out(&r).contains("MADE"), "{}{}", out(&r), err(&r));
    let made = Command::new("make")
        .args(["-s", "app"])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(made.success());
    let code = Command::new(ws.join("app")).status().unwrap().code();
    assert_eq!(code, Some(0), "host make kept the stale b.o: {}", err(&r));
}
