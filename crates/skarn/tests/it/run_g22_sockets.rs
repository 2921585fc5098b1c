//! `skarn run`, issue 22's eighth round: a host socket renamed into
//! another directory (inside a read grant) before the run, and one bound
//! by a relative name whose owner has left its directory since. The host
//! server is real; whether it received anything is checked from outside,
//! as root and as uid 65534.

use std::io::BufRead;
use std::process::{Command, Stdio};

use super::run_g22::{attempt, users};
use crate::common::*;
use skarn_test_support::TempDir;

/// A host server: in `argv[1]` it binds `argv[2]`, then renames it to
/// `argv[3]` (`-`: none) and changes to the directory `argv[4]`, and
/// prints what a client sends.
const SERVER: &str = "import os,socket,sys\n\
os.chdir(sys.argv[1]); s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[2]); s.listen(5)\n\
n=sys.argv[2]\n\
if sys.argv[3] != '-': os.rename(sys.argv[2], sys.argv[3]); n=sys.argv[3]\n\
os.chmod(n,0o777); os.chdir(sys.argv[4]); print('READY', flush=True)\n\
s.settimeout(120); c,_=s.accept(); print('GOT', c.recv(100), flush=True)\n";

#[test]
fn a_host_socket_moved_away_from_its_name_gets_nothing() {
    let mut failed = Vec::new();
    for nobody in users() {
        for variant in ["renamed into another directory", "relative, owner moved"] {
            let t = TempDir::new("g22-sock");
            t.dir("home");
            let ws = t.dir("p");
            let elsewhere = t.dir("elsewhere");
            let o = TempDir::new_in("/opt", "g22-sock");
            let opt = std::fs::canonicalize(o.path()).unwrap();
            let target = opt.join("s.sock");
            let (dir, bind, rename) = match variant {
                "renamed into another directory" => (
                    elsewhere.clone(),
                    "first.sock".to_string(),
                    target.display().to_string(),
                ),
                _ => (opt.clone(), "s.sock".to_string(), "-".to_string()),
            };
            let chmod = Command::new("chmod")
                .arg("777")
                .arg(&opt)
                .arg(&elsewhere)
                .arg(t.path())
                .status()
                .unwrap();
            assert!(chmod.success());
            let mut srv = if nobody {
                let mut c = Command::new("setpriv");
                c.args(["--reuid", "65534", "--regid", "65534", "--clear-groups"]);
                c.arg("/usr/bin/python3");
                c
            } else {
                Command::new("python3")
            };
            let mut srv = srv
                .arg("-c")
                .arg(SERVER)
                .arg(&dir)
                .arg(&bind)
                .arg(&rename)
                .arg("/")
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
            let who = nobody.then(|| t.path());
            let r = attempt(&t, &ws, &[], &[], who, &py);
            let _ = srv.kill();
            let _ = srv.wait();
            let got: Vec<String> = lines.map_while(Result::ok).collect();
            if !got.is_empty() || !out(&r).contains("refused") {
                failed.push(format!(
                    "{variant}, uid 65534: {nobody}: the host listener got {got:?}: {}{}",
                    out(&r),
                    err(&r)
                ));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
