//! `skarn run`, attack atk24d F6 (ADR 0204): the walk of the writable
//! grants before the run, which hides host servers' unix sockets, stops
//! at `--walk-max-dirs`. Past it a host socket would be reachable, so the
//! run makes no unix socket and says so on stderr; below it sockets are
//! hidden as before, and a run's own unix sockets work. Checked from
//! outside: the host listener gets nothing.

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use crate::common::*;
use skarn_test_support::TempDir;

/// `skarn run` in the direct layer, which walks the workspace before the
/// run (the copy-on-write layer does not: a host socket in its lower
/// directory is unreachable, ADR 0259, `run_layer_flat`).
fn run_in(ws: &Path, home: &Path, flags: &[&str], cmd: &[&str]) -> std::process::Output {
    let mut all = vec!["--workspace-layer", "direct"];
    all.extend_from_slice(flags);
    crate::common::run_in(ws, home, &all, cmd)
}

/// [`crate::common::probe`] in the direct layer (see [`run_in`]).
fn probe(ws: &Path, home: &Path, flags: &[&str], args: &[&str]) -> std::process::Output {
    let mut all = vec!["--workspace-layer", "direct"];
    all.extend_from_slice(flags);
    crate::common::probe(ws, home, &all, args)
}

/// The bound the tests set (quick to pass with a few hundred decoys).
const BOUND: &str = "100";

/// A workspace with `decoys` empty directories at its top and a host
/// "database" listening on `db/run/.s.PGSQL.5432` (one level below them,
/// so a walk of at most 100 directories never reaches it when the top
/// holds more); the listener does not block.
fn workspace(t: &TempDir, decoys: usize) -> (PathBuf, PathBuf, UnixListener, String) {
    let home = t.dir("home");
    let ws = t.dir("ws");
    for i in 0..decoys {
        std::fs::create_dir(ws.join(format!("d{i}"))).unwrap();
    }
    let sock = t.dir("ws/db/run").join(".s.PGSQL.5432");
    let l = UnixListener::bind(&sock).unwrap();
    l.set_nonblocking(true).unwrap();
    (ws, home, l, sock.display().to_string())
}

/// The listener accepted no connection.
fn got_nothing(l: &UnixListener, what: &str) {
    assert!(
        l.accept().is_err(),
        "{what}: the host listener got a connection"
    );
}

const PYTHON: &str = "/usr/bin/python3";

fn python(ws: &Path, home: &Path, flags: &[&str], script: &str) -> std::process::Output {
    run_in(ws, home, flags, &[PYTHON, "-c", script])
}

const LINE: &str = "unix sockets are unavailable in this run";

/// `sh -c script` in a run whose walk is cut short at [`BOUND`] (said on
/// stderr, checked here).
fn cut_run(ws: &Path, home: &Path, script: &str) -> std::process::Output {
    let o = run_in(ws, home, &["--walk-max-dirs", BOUND], &["sh", "-c", script]);
    assert!(err(&o).contains(LINE), "{}", err(&o));
    o
}

#[test]
fn a_walk_cut_short_makes_no_unix_socket_and_says_so() {
    let t = TempDir::new("walkcut");
    let (ws, home, l, sock) = workspace(&t, 150);
    let flags = ["--walk-max-dirs", BOUND];
    let o = probe(&ws, &home, &flags, &["unix", &sock]);
    assert_eq!(code(&o), 1, "the socket was reachable: {}", out(&o));
    got_nothing(&l, "past the bound");
    let e = err(&o);
    assert!(e.contains(LINE), "no line on stderr: {e}");
    assert!(e.contains("bound of 100 directories"), "{e}");
    assert!(e.contains("--walk-max-dirs"), "the fix is not named: {e}");
    // The report says the run is partly enforced, with the same line.
    let o = run_in(
        &ws,
        &home,
        &["--walk-max-dirs", BOUND, "--report"],
        &["true"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let e = err(&o);
    assert!(e.contains("PartiallyEnforced") && e.contains(LINE), "{e}");
    // The setting raised past the tree: the socket is hidden, no line.
    let o = probe(&ws, &home, &["--walk-max-dirs", "1000"], &["unix", &sock]);
    assert_eq!(code(&o), 1, "the socket was reachable: {}", out(&o));
    got_nothing(&l, "bound raised");
    assert!(!err(&o).contains(LINE), "{}", err(&o));
}

#[test]
fn socket_pairs_still_work_when_the_walk_is_cut_short() {
    if !Path::new(PYTHON).exists() {
        skarn_test_support::skip!("python3 is not installed");
    }
    let t = TempDir::new("walkcut-pair");
    let (ws, home, l, _) = workspace(&t, 150);
    let o = python(
        &ws,
        &home,
        &["--walk-max-dirs", BOUND],
        "import socket
a, b = socket.socketpair()
a.sendall(b'pair-ok')
print(b.recv(16).decode())
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect('db/run/.s.PGSQL.5432')
    print('reached')
except OSError as e:
    print('refused', e.errno)
try:
    p, q = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    p.sendto(b'x', 'db/run/.s.PGSQL.5432')
    print('reached')
except OSError as e:
    print('refused', e.errno)
",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let s = out(&o);
    assert!(s.contains("pair-ok"), "a stream socket pair failed: {s}");
    assert!(!s.contains("reached"), "{s}");
    assert_eq!(s.matches("refused 13").count(), 2, "{s}");
    got_nothing(&l, "datagram pair or socket");
}

#[test]
fn below_the_bound_the_socket_is_hidden_and_own_sockets_work() {
    let t = TempDir::new("walkcut-below");
    let (ws, home, l, sock) = workspace(&t, 50);
    let o = probe(&ws, &home, &["--walk-max-dirs", BOUND], &["unix", &sock]);
    assert_eq!(code(&o), 1, "the socket was reachable: {}", out(&o));
    got_nothing(&l, "below the bound");
    assert!(!err(&o).contains(LINE), "{}", err(&o));
    if !Path::new(PYTHON).exists() {
        skarn_test_support::skip!("python3 is not installed");
    }
    // A command's own server and client on a unix socket in the
    // workspace (a test database, a language server): they work.
    let o = python(
        &ws,
        &home,
        &[],
        "import socket, threading
srv = socket.socket(socket.AF_UNIX)
srv.bind('own.sock')
srv.listen(1)
def serve():
    c, _ = srv.accept()
    c.sendall(c.recv(16).upper())
threading.Thread(target=serve).start()
cl = socket.socket(socket.AF_UNIX)
cl.connect('own.sock')
cl.sendall(b'own-ok')
print(cl.recv(16).decode())
",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(out(&o).contains("OWN-OK"), "{}", out(&o));
    assert!(!err(&o).contains(LINE), "{}", err(&o));
}

/// The user's own repository past the bound (a hook of their own) is
/// kept after an ordinary run; one the run changed is set aside.
#[test]
fn the_users_repository_past_the_bound_is_kept() {
    let t = TempDir::new("walkcut-repo");
    let (ws, home, _l, _) = workspace(&t, 150);
    for name in ["mine", "theirs"] {
        let hooks = t.dir(format!("ws/db/{name}/.git/hooks"));
        std::fs::write(hooks.join("pre-commit"), "#!/bin/sh\nexit 0\n").unwrap();
        let git = hooks.parent().unwrap();
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(git.join("config"), "[core]\n\tbare = false\n").unwrap();
    }
    let o = cut_run(
        &ws,
        &home,
        "printf '[core]\\n\\tfsmonitor = touch /tmp/x\\n' >> db/theirs/.git/config",
    );
    assert!(
        ws.join("db/mine/.git/hooks/pre-commit").exists(),
        "the user's repository was set aside: {}",
        err(&o)
    );
    // The direct mode sets the changed repository aside; the layer drops
    // the key when applied (it vets every change, walked or not). Either
    // way host git reads no planted key there.
    let cfg = std::fs::read_to_string(ws.join("db/theirs/.git/config")).unwrap_or_default();
    assert!(
        !cfg.contains("fsmonitor"),
        "the repository the run changed was kept: {cfg}\n{}",
        err(&o)
    );
}

/// Attack finding atk24e F7: in a run whose walk was cut short, a hook or
/// `core.fsmonitor` planted in a past-the-bound repository's submodule git
/// directory (`.git/modules/sub/`) used to be kept (only the git
/// directory's own entries were compared). The repository is now set
/// aside; one whose submodule the run did not touch is kept.
#[test]
fn a_plant_in_a_submodule_git_directory_past_the_bound_is_set_aside() {
    let t = TempDir::new("walkcut-sub");
    let (ws, home, _l, _) = workspace(&t, 150);
    for name in ["mine", "theirs"] {
        let git = t.dir(format!("ws/db/{name}/.git"));
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(git.join("config"), "[core]\n\tbare = false\n").unwrap();
        let m = t.dir(format!("ws/db/{name}/.git/modules/sub"));
        std::fs::create_dir_all(m.join("hooks")).unwrap();
        std::fs::write(m.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(
            m.join("config"),
            "[core]\n\tbare = false\n\tworktree = ../../../sub\n",
        )
        .unwrap();
    }
    let o = cut_run(
        &ws,
        &home,
        "printf '#!/bin/sh\\ntouch /tmp/x\\n' > db/theirs/.git/modules/sub/hooks/post-checkout",
    );
    assert!(
        ws.join("db/mine/.git/modules/sub/config").exists(),
        "the user's untouched repository was set aside: {}",
        err(&o)
    );
    assert!(
        !ws.join("db/theirs/.git/modules/sub/hooks/post-checkout")
            .exists(),
        "the hook planted in the submodule's git directory was kept: {}",
        err(&o)
    );
}
