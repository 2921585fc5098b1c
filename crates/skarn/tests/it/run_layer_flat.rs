//! `skarn run` with the workspace's copy-on-write layer (the default):
//! the workspace is not walked before the run (issue 30, ADR 0259), and
//! nothing the walk protected is lost. Checked from outside: directory
//! access times on the host, a host listener, the host's files after a
//! run that tried to change them.

use std::os::unix::net::UnixListener;
use std::path::Path;

use crate::common::*;
use skarn_test_support::TempDir;

/// Two days ago: a directory read now gets a newer access time under
/// `relatime` (older than a day) as under `strictatime`.
fn long_ago() -> std::time::SystemTime {
    std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86_400)
}

fn atime(p: &Path) -> std::time::SystemTime {
    std::fs::metadata(p).unwrap().accessed().unwrap()
}

fn set_atime(p: &Path, t: std::time::SystemTime) {
    let f = std::fs::File::open(p).unwrap();
    f.set_times(std::fs::FileTimes::new().set_accessed(t))
        .unwrap();
}

#[test]
fn a_run_lists_no_directory_of_a_workspace_of_many_directories() {
    let t = TempDir::new("flat");
    let home = t.dir("home");
    let ws = t.dir("ws");
    assert!(git(&ws, &["init", "-q"]).status.success());
    let mut dirs = Vec::new();
    for i in 0..20 {
        for j in 0..100 {
            let d = ws.join(format!("d{i}/e{j}"));
            std::fs::create_dir_all(&d).unwrap();
            dirs.push(d);
        }
    }
    for i in 0..20 {
        dirs.push(ws.join(format!("d{i}")));
    }
    // Does this file system record reads of directories at all?
    let control = t.dir("control");
    set_atime(&control, long_ago());
    let _ = std::fs::read_dir(&control).unwrap().count();
    if atime(&control) <= long_ago() + std::time::Duration::from_secs(60) {
        skarn_test_support::skip!("this file system does not update directory access times");
    }
    for d in &dirs {
        set_atime(d, long_ago());
    }
    let o = run_in(&ws, &home, &[], &["/bin/true"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let read: Vec<_> = dirs
        .iter()
        .filter(|d| atime(d) > long_ago() + std::time::Duration::from_secs(60))
        .collect();
    assert!(
        read.is_empty(),
        "{} of {} directories of the workspace were listed on the host (first: {})",
        read.len(),
        dirs.len(),
        read[0].display()
    );
}

#[test]
fn a_host_socket_anywhere_in_the_workspace_is_unreachable_through_the_layer() {
    let t = TempDir::new("flat-sock");
    let home = t.dir("home");
    let ws = t.dir("ws");
    for i in 0..150 {
        std::fs::create_dir(ws.join(format!("d{i}"))).unwrap();
    }
    let sock = t.dir("ws/db/run").join(".s.PGSQL.5432");
    let l = UnixListener::bind(&sock).unwrap();
    l.set_nonblocking(true).unwrap();
    let script = format!(
        "import socket, threading
c = socket.socket(socket.AF_UNIX)
try:
    c.connect({sock:?})
    print('connected')
except OSError as e:
    print('refused', e.errno)
srv = socket.socket(socket.AF_UNIX)
srv.bind('own.sock')
srv.listen(1)
threading.Thread(target=lambda: srv.accept()[0].sendall(b'own-ok')).start()
cl = socket.socket(socket.AF_UNIX)
cl.connect('own.sock')
print(cl.recv(10).decode())",
        sock = sock.display().to_string()
    );
    // A bound far below the tree: the walk it bounds does not happen.
    let o = run_in(
        &ws,
        &home,
        &["--walk-max-dirs", "100"],
        &["/usr/bin/python3", "-c", &script],
    );
    let s = out(&o);
    assert!(s.contains("refused"), "{s} {}", err(&o));
    assert!(
        s.contains("own-ok"),
        "the run's own unix socket failed: {s} {}",
        err(&o)
    );
    assert!(
        l.accept().is_err(),
        "the host listener in the workspace got a connection"
    );
    assert!(
        !err(&o).contains("unix sockets are unavailable"),
        "{}",
        err(&o)
    );
}

#[test]
fn what_a_nested_envrc_sources_and_a_nested_repositorys_hooks_path_stay() {
    let t = TempDir::new("flat-nested");
    let home = t.dir("home");
    let ws = t.dir("ws");
    assert!(git(&ws, &["init", "-q"]).status.success());
    // direnv in sub/ reads sub/lib/env.sh (named by sub/.envrc).
    t.dir("ws/sub/lib");
    std::fs::write(ws.join("sub/.envrc"), "source_env lib/env.sh\n").unwrap();
    std::fs::write(ws.join("sub/lib/env.sh"), "export A=1\n").unwrap();
    // Host git in repo/ runs repo/myhooks/pre-commit (core.hooksPath).
    let repo = t.dir("ws/repo");
    assert!(git(&repo, &["init", "-q"]).status.success());
    assert!(
        git(&repo, &["config", "core.hooksPath", "myhooks"])
            .status
            .success()
    );
    t.dir("ws/repo/myhooks");
    std::fs::write(repo.join("myhooks/pre-commit"), "#!/bin/sh\nexit 0\n").unwrap();
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo 'touch /tmp/planted-envrc' >> sub/lib/env.sh; \
             echo 'touch /tmp/planted-hook' >> repo/myhooks/pre-commit; \
             echo fine > sub/ok.txt",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/lib/env.sh")).unwrap(),
        "export A=1\n",
        "a file a nested .envrc sources was changed: {}",
        err(&o)
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("myhooks/pre-commit")).unwrap(),
        "#!/bin/sh\nexit 0\n",
        "a hook in a nested repository's hooks path was changed: {}",
        err(&o)
    );
    // The rest of the run's changes are applied.
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/ok.txt")).unwrap_or_default(),
        "fine\n",
        "{}",
        err(&o)
    );
}
