//! The attempt runner shared by issue 22's run tests (fx22a, fy22a,
//! fy22b, g22 and its node and socket parts): `sh -c script` in a
//! `skarn run --no-config` started in a workspace, with the host's
//! system `PATH` and a home in the test's directory, as the caller or as
//! uid 65534; and the committed repositories the attempts are made in.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{exe, git};
use crate::support_secret_sources::as_user;
use skarn_test_support::TempDir;

/// The users a run is made as: root (as it is) and uid 65534 (when root).
pub fn users() -> Vec<bool> {
    if skarn_test_support::is_root() {
        vec![false, true]
    } else {
        vec![false]
    }
}

pub const SYS_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
pub const LAYERS: [&[&str]; 2] = [&[], &["--workspace-layer", "direct"]];

/// `sh -c script` in a run started in `cwd`, with `flags` (then
/// `--read t/stage`, the planted files' source, when it exists), `HOME`
/// = `t/home`, `PATH` = [`SYS_PATH`], `XDG_STATE_HOME`, `CLAUDECODE` and
/// `unset` removed, then `envs` set; as uid 65534 when `nobody`.
pub fn attempt<V: AsRef<OsStr>>(
    t: &TempDir,
    cwd: &Path,
    flags: &[&str],
    unset: &[&str],
    envs: &[(&str, V)],
    nobody: bool,
    script: &str,
) -> Output {
    let mut c = Command::new(exe());
    c.arg("run").arg("--no-config").args(flags);
    let stage = t.path().join("stage");
    if stage.is_dir() {
        c.arg("--read").arg(&stage);
    }
    c.args(["--", "sh", "-c", script])
        .current_dir(cwd)
        .env("HOME", t.path().join("home"))
        .env("PATH", SYS_PATH)
        .env_remove("XDG_STATE_HOME")
        .env_remove("CLAUDECODE");
    for k in unset {
        c.env_remove(k);
    }
    c.envs(envs.iter().map(|(k, v)| (*k, v)))
        .stdin(std::process::Stdio::null());
    if nobody {
        c = as_user(c, t.path());
        c.current_dir(cwd);
    }
    c.output().expect("spawn skarn")
}

/// `git args` in `ws` as a fixed author.
pub fn git_in(ws: &Path, args: &[&str]) {
    git(
        ws,
        &[&["-c", "user.email=a@b", "-c", "user.name=a"][..], args].concat(),
    );
}

/// `t/rel` holding `files` (and `t/home` made), not a repository.
pub fn plain(t: &TempDir, rel: &str, files: &[(&str, &str)]) -> PathBuf {
    t.dir("home");
    let ws = t.dir(rel);
    for (f, body) in files {
        t.file(format!("{rel}/{f}"), body);
    }
    ws
}

/// [`plain`], made a git repository with every file committed.
pub fn repo(t: &TempDir, rel: &str, files: &[(&str, &str)]) -> PathBuf {
    let ws = plain(t, rel, files);
    git_in(&ws, &["init", "-q", "."]);
    git_in(&ws, &["add", "-A"]);
    git_in(&ws, &["commit", "-qm", "i"]);
    ws
}
