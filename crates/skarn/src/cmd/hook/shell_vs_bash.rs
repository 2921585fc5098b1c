//! The hook's reading of a command against what bash really runs. For
//! generated commands and patterns: whenever the hook lets a command run
//! unconfined ([`matches`]), bash, run on it with a PATH of recording stubs
//! in a throwaway directory, starts at most the one program the command
//! names and nothing else; whenever the hook takes a command for one it
//! wrapped ([`is_wrapped`]), bash starts exactly that executable with
//! exactly `run --caller hook --workspace WS -- bash -c X`. `PROPTEST_CASES` raises the
//! case count for long local runs.
#![cfg(unix)]

use super::shell::{RUNS_ANOTHER, is_wrapped, matches, quote};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PROGRAMS: &[&str] = &[
    "git",
    "gitk",
    "docker",
    "docker-compose",
    "ls",
    "make",
    "cargo",
    "touch",
    "env",
    "nice",
    "sudo",
    "sh",
    "bash",
    "xargs",
    "timeout",
    "npm",
];
const BUILTINS: &[&str] = &[
    "printf", "test", "declare", "typeset", "read", "let", "trap", "coproc", "jobs", "compgen",
    "mapfile", "echo", "command", "exec", "eval", "time", "true", ":", ".", "source", "export",
    "unset", "local", "getopts", "wait", "builtin", "enable", "hash", "cd",
];
const ARGS: &[&str] = &[
    "-v",
    "-x",
    "-C",
    "-c",
    "--",
    "x",
    "'x[$(touch p)]'",
    "'$(touch p)'",
    "'touch p'",
    "touch",
    "\"a b\"",
    "'a;b'",
    "a=b",
    "'a[$(touch p)]=1'",
    "EXIT",
    "status",
    "push",
    "origin",
    "%1",
    "@",
    "+x",
    "~",
    "é",
    "$'\\x27'",
    "\\;",
    "#",
    ";",
    "&&",
    "|",
    "\n",
    ">f",
    "*",
    "?",
    "[a]",
    "a,b",
    "\"$(touch p)\"",
    "`touch p`",
    "-n",
    "1",
    "git",
    "'",
    "\"",
];
const PLAIN_ARGS: &[&str] = &[
    "status",
    "push",
    "origin",
    "-v",
    "x",
    "'x[$(touch p)]'",
    "'touch p'",
    "-c",
    "a,b",
    "~",
    "\"a b\"",
    "1",
    "EXIT",
    "-x",
    "--",
];
const PATTERNS: &[&str] = &[
    "git", "git*", "gi*", "git st*", "git push", "docker*", "d*", "printf", "p*", "t*", "test",
    "c*", "co*", "e*", "echo", "env", "j*", "m*", "r*", "l*", "*", "make", "ls", "tr*", "eval",
    "exec", "command", "time", "x*", "s*", "n*", "b*", "declare", "read",
];

fn bash() -> &'static str {
    ["/bin/bash", "/usr/bin/bash"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("bash")
}

/// A throwaway directory with `bin/` stubs that log their name (or, for
/// `skarn`, their whole argv) and start nothing.
struct Stubs {
    root: tempfile::TempDir,
}

impl Stubs {
    fn new() -> Stubs {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::fs::create_dir(root.path().join("work")).unwrap();
        let log = root.path().join("log");
        let mut names: Vec<&str> = PROGRAMS.to_vec();
        names.extend(RUNS_ANOTHER);
        for n in names {
            let p = bin.join(n);
            let script = format!(
                "#!/bin/sh\nprintf '%s\\n' \"${{0##*/}}\" >> '{}'\n",
                log.display()
            );
            std::fs::write(&p, script).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let skarn = bin.join("skarn");
        std::fs::write(
            &skarn,
            format!(
                "#!/bin/sh\nfor a in \"${{0##*/}}\" \"$@\"; do printf '%s\\0' \"$a\"; done >> '{}'\nprintf '\\001' >> '{}'\n",
                log.display(),
                log.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&skarn, std::fs::Permissions::from_mode(0o755)).unwrap();
        Stubs { root }
    }

    fn skarn(&self) -> PathBuf {
        self.root.path().join("bin/skarn")
    }

    /// Run `cmd` with `bash -c` and return the log (then cleared).
    fn run(&self, cmd: &str) -> String {
        let log = self.root.path().join("log");
        let _ = std::fs::remove_file(&log);
        let work = self.root.path().join("work");
        let mut child = Command::new(bash())
            .arg("-c")
            .arg(cmd)
            .env_clear()
            .env("PATH", self.root.path().join("bin"))
            .current_dir(&work)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let end = Instant::now() + Duration::from_secs(10);
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if Instant::now() > end {
                let _ = child.kill();
                let _ = child.wait();
                panic!("bash did not finish on {cmd:?}");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        // Nothing else may have been written in the work directory.
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir(&work).unwrap();
        std::fs::read_to_string(&log).unwrap_or_default()
    }
}

fn command() -> impl Strategy<Value = String> {
    (
        prop::sample::select([PROGRAMS, BUILTINS].concat()),
        prop::collection::vec(
            (
                prop_oneof![
                    3 => prop::sample::select(PLAIN_ARGS),
                    1 => prop::sample::select(ARGS),
                ],
                prop::sample::select(&[" ", " ", "\t", ""][..]),
            ),
            0..5,
        ),
    )
        .prop_map(|(first, args)| {
            let mut s = first.to_string();
            for (a, sep) in args {
                s.push_str(if sep.is_empty() { " " } else { sep });
                s.push_str(a);
            }
            s
        })
}

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn have_bash() -> bool {
    Command::new(bash())
        .args(["-c", "exit 0"])
        .status()
        .is_ok_and(|s| s.success())
}

/// What bash starts for a command the hook lets through unconfined.
fn check_unconfined(stubs: &Stubs, cmd: &str, pattern: &str) -> Result<(), String> {
    if !matches(cmd, pattern) {
        return Ok(());
    }
    let first = cmd.split([' ', '\t']).find(|w| !w.is_empty()).unwrap_or("");
    if RUNS_ANOTHER.contains(&first) {
        // Named exactly by the pattern: the user allowed what it runs.
        return Ok(());
    }
    let log = stubs.run(cmd);
    let ran: Vec<&str> = log.lines().collect();
    if ran.len() > 1 || ran.iter().any(|r| *r != first) {
        return Err(format!(
            "{cmd:?} matches {pattern:?}, but bash started {ran:?}"
        ));
    }
    Ok(())
}

#[test]
fn unconfined_commands_run_only_the_allowed_program() {
    if !have_bash() {
        skarn_test_support::skip!("bash is not installed; the differential test needs it");
    }
    let stubs = Stubs::new();
    let mut runner = TestRunner::new(Config {
        cases: cases(600),
        failure_persistence: None,
        ..Config::default()
    });
    let matched = std::cell::Cell::new(0u32);
    runner
        .run(
            &(
                command(),
                prop::sample::select(PATTERNS),
                0..4usize,
                0..4usize,
            ),
            |(cmd, fixed, kind, cut)| {
                // A fixed pattern, or one made from the command itself (its
                // first word, a prefix of it, its first two words).
                let mut words = cmd.split([' ', '\t']).filter(|w| !w.is_empty());
                let first = words.next().unwrap_or("");
                let pattern = match kind {
                    0 => fixed.to_string(),
                    1 => first.to_string(),
                    2 => format!("{}*", first.get(..cut.min(first.len())).unwrap_or("")),
                    _ => format!("{first} {}", words.next().unwrap_or("")),
                };
                if matches(&cmd, &pattern) {
                    matched.set(matched.get() + 1);
                }
                check_unconfined(&stubs, &cmd, &pattern).map_err(TestCaseError::fail)
            },
        )
        .unwrap();
    assert!(
        matched.get() > 20,
        "only {} commands matched",
        matched.get()
    );
}

/// Commands that ran code through a builtin's arguments while the hook
/// let them through unconfined (each failed before builtins were
/// excluded).
#[test]
fn builtins_that_run_their_arguments_are_never_unconfined() {
    if !have_bash() {
        skarn_test_support::skip!("bash is not installed; the differential test needs it");
    }
    let stubs = Stubs::new();
    let mut failed = Vec::new();
    for (cmd, pattern) in [
        ("printf -v 'x[$(touch p)]' y", "printf"),
        ("printf -v 'x[$(touch p)]' y", "p*"),
        ("test -v 'x[$(touch p)]'", "test"),
        ("test -v 'x[$(touch p)]'", "t*"),
        ("declare 'x[$(touch p)]=1'", "declare"),
        ("typeset 'x[$(touch p)]=1'", "t*"),
        ("let 'x[$(touch p)]=1'", "l*"),
        ("read 'x[$(touch p)]'", "read"),
        ("trap 'touch p' EXIT", "tr*"),
        ("coproc touch p", "co*"),
        ("jobs -x touch p", "j*"),
        ("compgen -C 'touch p' x", "c*"),
        ("mapfile -C 'touch p' -c 1 x", "m*"),
    ] {
        if let Err(e) = check_unconfined(&stubs, cmd, pattern) {
            failed.push(e);
        }
        // And bash does run the nested command, so the check is real.
        if !stubs.run(cmd).lines().any(|l| l == "touch")
            && !["read", "mapfile", "coproc"]
                .iter()
                .any(|b| cmd.starts_with(b))
        {
            failed.push(format!("{cmd:?} did not run touch under bash"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn wrapped_commands_start_exactly_the_wrapper() {
    if !have_bash() {
        skarn_test_support::skip!("bash is not installed; the differential test needs it");
    }
    let stubs = Stubs::new();
    let exe = stubs.skarn().display().to_string();
    let ws = "/w s'x";
    let mut runner = TestRunner::new(Config {
        cases: cases(200),
        failure_persistence: None,
        ..Config::default()
    });
    let wrapped = std::cell::Cell::new(0u32);
    let strategy = (
        command(),
        prop::collection::vec(prop::sample::select(ARGS), 0..2),
        prop::bool::ANY,
    );
    runner
        .run(&strategy, |(inner, tail, quoted)| {
            let mut cmd = format!(
                "{} run --caller hook --workspace {} -- bash -c {}",
                quote(&exe),
                quote(ws),
                if quoted { quote(&inner) } else { inner.clone() }
            );
            for t in tail {
                cmd.push_str(t);
            }
            if !is_wrapped(&cmd, &exe, ws) {
                return Ok(());
            }
            wrapped.set(wrapped.get() + 1);
            let log = stubs.run(&cmd);
            let runs: Vec<Vec<&str>> = log
                .split('\u{1}')
                .filter(|r| !r.is_empty())
                .map(|l| l.trim_end_matches('\0').split('\0').collect())
                .collect();
            let ok = runs.len() == 1
                && runs[0].len() == 10
                && runs[0][..9]
                    == [
                        "skarn",
                        "run",
                        "--caller",
                        "hook",
                        "--workspace",
                        ws,
                        "--",
                        "bash",
                        "-c",
                    ];
            prop_assert!(ok, "{cmd:?} is taken as wrapped, but bash ran {runs:?}");
            Ok(())
        })
        .unwrap();
    assert!(wrapped.get() > 20, "only {} wrapped", wrapped.get());
}
