//! Attack atk24e F1: a run whose command keeps renaming the directory of
//! a host server's unix socket, while another run in the same workspace
//! walks and hides the sockets it finds. The second run sees the first
//! (the workspace's lock) and makes no unix socket, said on stderr; each
//! socket it hides is pinned by inode. Checked from outside: the host
//! listener got no connection.

use std::os::unix::net::UnixListener;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::*;
use skarn_test_support::TempDir;

#[test]
fn a_socket_moved_by_a_concurrent_run_stays_unreachable() {
    if !host_has("python3", "--version") {
        skarn_test_support::skip!("python3 is needed");
    }
    let t = TempDir::new("sockrace");
    let home = t.dir("home");
    let ws = t.dir("ws");
    for n in ["p1", "p2", "p3"] {
        t.dir(format!("ws/{n}"));
    }
    let sock = t.dir("ws/p0/db").join("s.sock");
    let l = UnixListener::bind(&sock).unwrap();
    l.set_nonblocking(true).unwrap();
    let (started, stop) = (ws.join("started.flag"), ws.join("stop.flag"));
    // Run A: renames db/ around the four directories until told to stop.
    let renamer = format!(
        "touch {s}; cur=p0; end=$(( $(date +%s) + 60 )); \
         while [ ! -e {x} ] && [ $(date +%s) -lt $end ]; do \
           for n in p1 p2 p3 p0; do mv $cur/db $n/db 2>/dev/null && cur=$n; done; done; \
         [ $cur = p0 ] || mv $cur/db p0/db",
        s = started.display(),
        x = stop.display()
    );
    // Pinned to `direct`: run A's renames must reach the host's tree while
    // run B walks it, and A waits for a file the host makes (ADR 0226).
    let mut a = run_command(
        &ws,
        &home,
        &["--workspace-layer", "direct"],
        &["sh", "-c", &renamer],
    )
    .current_dir(&ws)
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let t0 = Instant::now();
    while !started.exists() && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    if !started.exists() {
        let _ = a.kill();
        let o = a.wait_with_output().unwrap();
        panic!(
            "run A did not start: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // Run B: tries every name the socket can have, for a while.
    let probe = "import socket, time\n\
                 end = time.time() + 2\n\
                 while time.time() < end:\n\
                 \x20   for n in ('p0', 'p1', 'p2', 'p3'):\n\
                 \x20       try:\n\
                 \x20           s = socket.socket(socket.AF_UNIX); s.connect(n + '/db/s.sock'); s.send(b'RACE'); print('CONNECTED', n)\n\
                 \x20       except OSError:\n\
                 \x20           pass\n";
    let mut outs = Vec::new();
    for _ in 0..3 {
        outs.push(
            run_command(&ws, &home, &[], &["python3", "-c", probe])
                .current_dir(&ws)
                .output()
                .unwrap(),
        );
    }
    std::fs::write(&stop, "").unwrap();
    let _ = a.wait();
    for o in &outs {
        assert!(!out(o).contains("CONNECTED"), "{}{}", out(o), err(o));
        // Said as another run under way, or as a directory that vanished
        // during the walk (whichever the run saw first).
        assert!(err(o).contains("unavailable in this run"), "{}", err(o));
    }
    assert!(l.accept().is_err(), "the host listener got a connection");
}

/// atk24e F1, the other order: a run that begins in the workspace while
/// this one walks for sockets to hide is found after the walk (its live
/// record, here written and locked by the test as that run's helper
/// does), and this run makes no unix socket. From outside: the host
/// listener in the workspace got no connection.
#[test]
fn a_run_begun_during_the_walk_takes_unix_sockets_away() {
    use std::os::fd::AsRawFd;
    if !host_has("python3", "--version") {
        skarn_test_support::skip!("python3 is needed");
    }
    let t = TempDir::new("sockrace-late");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let sock = ws.join("s.sock");
    let l = UnixListener::bind(&sock).unwrap();
    l.set_nonblocking(true).unwrap();
    let probe = "import socket\n\
                 s = socket.socket(socket.AF_UNIX); s.connect('s.sock'); s.send(b'LATE'); print('CONNECTED')\n";
    // Without another run: the walk hides the socket, but unix sockets
    // of the run's own stay usable (a python socket object is made).
    let o = run_command(
        &ws,
        &home,
        &[],
        &[
            "python3",
            "-c",
            "import socket; socket.socket(socket.AF_UNIX); print('MADE')",
        ],
    )
    .current_dir(&ws)
    .output()
    .unwrap();
    assert!(out(&o).contains("MADE"), "{}{}", out(&o), err(&o));
    // The other run's record, live (locked) while this run starts.
    let runs = home.join(".local/state/skarn/runs");
    std::fs::create_dir_all(&runs).unwrap();
    let rec = runs.join("other.run");
    let info = serde_json::json!({"workspace": ws, "roots": [ws], "pid": 1});
    std::fs::write(&rec, info.to_string()).unwrap();
    let f = std::fs::File::open(&rec).unwrap();
    // SAFETY: f is open; the lock lasts until f is dropped.
    assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) }, 0);
    let o = run_command(&ws, &home, &[], &["python3", "-c", probe])
        .current_dir(&ws)
        .output()
        .unwrap();
    drop(f);
    assert!(!out(&o).contains("CONNECTED"), "{}{}", out(&o), err(&o));
    assert!(
        err(&o).contains("began while this run looked for unix sockets"),
        "{}",
        err(&o)
    );
    assert!(l.accept().is_err(), "the host listener got a connection");
}
