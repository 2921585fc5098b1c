//! `skarn run`, attack atk22n (issue 22): a host socket under a read
//! grant bound by a relative name, renamed after its bind, or reached
//! through a bind mount of its directory (F1); an ignored build output
//! the run planted, taken as up to date by the host's next `make` (F7).
//! Each attempt is made for real and judged from outside, as root and as
//! uid 65534.

use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common::*;
use crate::support_secret_sources::as_user;
use skarn_test_support::TempDir;

fn users() -> Vec<bool> {
    if skarn_test_support::is_root() {
        vec![false, true]
    } else {
        vec![false]
    }
}

/// `sh -c script` in a run of the workspace `ws`, as uid 65534 when
/// `nobody`.
fn attempt(t: &TempDir, ws: &Path, nobody: bool, script: &str) -> Output {
    let mut c = run_command(
        ws,
        &t.path().join("home"),
        &["--report"],
        &["sh", "-c", script],
    );
    c.current_dir(ws)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin");
    if nobody {
        c = as_user(c, t.path());
        c.current_dir(ws);
    }
    c.output().expect("spawn skarn")
}

/// A host server: in `dir` it binds `bind` (relative or absolute),
/// renames it to `rename` if given, and prints what a client sends.
const SERVER: &str = "import os,socket,sys\n\
os.chdir(sys.argv[1]); s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[2]); s.listen(5)\n\
n=sys.argv[2]\n\
if len(sys.argv)>3: os.rename(sys.argv[2], sys.argv[3]); n=sys.argv[3]\n\
os.chmod(n,0o777); print('READY', flush=True)\n\
s.settimeout(120); c,_=s.accept(); print('GOT', c.recv(100), flush=True)\n";

fn sh(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", cmd])
        .status()
        .unwrap()
        .success()
}

#[test]
fn host_sockets_under_a_read_grant_by_any_name_get_nothing() {
    let mut failed = Vec::new();
    for nobody in users() {
        for variant in ["relative", "renamed", "bind mount"] {
            if variant == "bind mount" && !skarn_test_support::is_root() {
                continue;
            }
            let t = TempDir::new("f22j-sock");
            t.dir("home");
            let ws = t.dir("p");
            let o = TempDir::new_in("/opt", "f22j-sock");
            let opt = std::fs::canonicalize(o.path()).unwrap();
            let src = t.dir("bsrc");
            let dst = opt.join("bdst");
            std::fs::create_dir(&dst).unwrap();
            assert!(sh(&format!(
                "chmod 755 {} {} {}",
                opt.display(),
                src.display(),
                dst.display()
            )));
            let (dir, args, target) = match variant {
                "relative" => (opt.clone(), vec!["rel.sock"], opt.join("rel.sock")),
                "renamed" => (
                    opt.clone(),
                    vec![".tmp.sock", "final.sock"],
                    opt.join("final.sock"),
                ),
                _ => {
                    assert!(sh(&format!(
                        "mount --bind {} {}",
                        src.display(),
                        dst.display()
                    )));
                    (src.clone(), vec!["b.sock"], dst.join("b.sock"))
                }
            };
            // As uid 65534 the server is that user's own: a root server's
            // relative name cannot be located by an unprivileged helper,
            // which then makes every concurrent uid 65534 run of the suite
            // go without unix sockets (the fail-closed path, unit-tested).
            if nobody {
                assert!(sh(&format!(
                    "chown -R 65534:65534 {} {}",
                    opt.display(),
                    src.display()
                )));
            }
            let mut srv = if nobody {
                let mut c = Command::new("setpriv");
                c.args([
                    "--reuid",
                    "65534",
                    "--regid",
                    "65534",
                    "--clear-groups",
                    "/usr/bin/python3",
                ]);
                c
            } else {
                Command::new("python3")
            };
            let mut srv = srv
                .arg("-c")
                .arg(SERVER)
                .arg(&dir)
                .args(&args)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut lines = std::io::BufReader::new(srv.stdout.take().unwrap()).lines();
            assert_eq!(lines.next().unwrap().unwrap(), "READY");
            let py = format!(
                "python3 -c \"import socket\ntry:\n    c = socket.socket(socket.AF_UNIX)\n    \
                 c.connect('{}'); c.send(b'SECRET'); print('connected')\nexcept OSError as e:\n    \
                 print('refused', e.errno)\"",
                target.display()
            );
            let r = attempt(&t, &ws, nobody, &py);
            let _ = srv.kill();
            let _ = srv.wait();
            let got: Vec<String> = lines.map_while(Result::ok).collect();
            if variant == "bind mount" {
                assert!(sh(&format!("umount {}", dst.display())));
            }
            let what = format!("{variant}, uid 65534: {nobody}");
            if !got.is_empty() || !out(&r).contains("refused") {
                failed.push(format!(
                    "{what}: the host listener got {got:?}: {}{}",
                    out(&r),
                    err(&r)
                ));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

fn make_project(ws: &Path) {
    std::fs::write(ws.join("main.c"), "int main(){return 0;}\n").unwrap();
    std::fs::write(
        ws.join("Makefile"),
        "app: main.o\n\tcc -o app main.o\nmain.o: main.c\n\tcc -c main.c\ncheck: app\n\t./app\n",
    )
    .unwrap();
    std::fs::write(ws.join(".gitignore"), "*.o\napp\n").unwrap();
    assert!(git(ws, &["init", "-q", "."]).status.success());
    assert!(git(ws, &["add", "-A"]).status.success());
    assert!(
        git(
            ws,
            &[
                "-c",
                "user.email=a@b",
                "-c",
                "user.name=a",
                "commit",
                "-qm",
                "i"
            ]
        )
        .status
        .success()
    );
    let made = Command::new("make")
        .args(["-s", "check"])
        .current_dir(ws)
        .status()
        .unwrap();
    assert!(made.success());
    // The sources are older than anything the run writes.
    assert!(sh(&format!("touch -d 2020-01-01 {}/main.c", ws.display())));
}

#[test]
fn an_ignored_object_the_run_planted_is_not_linked_by_host_make() {
    for nobody in users() {
        let t = TempDir::new("f22j-make");
        t.dir("home");
        let ws = t.dir("p");
        make_project(&ws);
        let pwn = t.path().join("PWN_obj");
        let script = format!(
            "printf '#include <stdio.h>\\nint main(){{FILE*f=fopen(\"{}\",\"w\");if(f)fclose(f);return 0;}}\\n' > /tmp/e.c && cc -c /tmp/e.c -o main.o && rm -f app && echo PLANTED",
            pwn.display()
        );
        let r = attempt(&t, &ws, nobody, &script);
        let what = format!("uid 65534: {nobody}");
        assert!(
            out(&r).contains("PLANTED"),
            "{what}: {}{}",
            out(&r),
            err(&r)
        );
        assert!(
            ws.join("main.o").exists(),
            "{what}: the run's object was not applied"
        );
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

#[test]
fn make_in_the_run_sees_its_own_outputs_and_host_make_rebuilds_after_it() {
    let t = TempDir::new("f22j-make-ok");
    t.dir("home");
    let ws = t.dir("p");
    make_project(&ws);
    let r = attempt(
        &t,
        &ws,
        false,
        "echo 'int main(){return 3;}' > main.c && make -s app && make -q app && echo FRESH",
    );
    assert!(out(&r).contains("FRESH"), "{}{}", out(&r), err(&r));
    // The run's outputs reach the host dated 1970, its source not.
    let mtime =
        |n: &str| std::os::unix::fs::MetadataExt::mtime(&std::fs::metadata(ws.join(n)).unwrap());
    assert_eq!((mtime("main.o"), mtime("app")), (0, 0));
    assert!(mtime("main.c") > 0);
    // The changed source keeps its time; the output is built again.
    let made = Command::new("make")
        .args(["-s", "check"])
        .current_dir(&ws)
        .output()
        .unwrap();
    assert_eq!(
        made.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    assert!(
        git(&ws, &["status", "--short"])
            .stdout
            .starts_with(b" M main.c")
    );
}
