//! The hook's reading of a shell command (the agent writes it) against
//! what bash runs. Input: an `unsandboxed` pattern on the first line, the
//! command after it; `@WRAP@` in the command becomes the exact prefix the
//! hook writes (`'SKARN' run --workspace 'WS' -- bash -c `). Never a
//! panic; whenever the hook lets the command run unconfined, bash starts
//! at most the program the command names (a program that runs another
//! one is allowed only by a pattern naming it, so it is not run); whenever
//! the hook takes the command for one it wrapped, bash starts exactly the
//! wrapper with exactly `run --workspace WS -- bash -c X`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_fuzz::hook_shell::{WS, runs_another, shell, skarn_runs, stubs};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (pattern, cmd) = text.split_once('\n').unwrap_or(("", text));
    let s = stubs();
    let exe = s.skarn().display().to_string();
    let wrap = format!(
        "{} run --workspace {} -- bash -c ",
        shell::quote(&exe),
        shell::quote(WS)
    );
    let cmd = cmd.replace("@WRAP@", &wrap);
    let _ = shell::is_compound(&cmd);
    if cmd.contains('\0') {
        return; // not a command a shell can be given
    }
    if shell::matches(&cmd, pattern) {
        // The hook reads the command trimmed (a trailing newline is not
        // part of the last word); so does bash.
        let first = cmd
            .trim()
            .split([' ', '\t'])
            .find(|w| !w.is_empty())
            .unwrap_or("");
        // A path names its program itself (and could name a real one:
        // such commands are not run here).
        if !runs_another(first) && !cmd.contains('/') {
            let log = s.run(&cmd);
            let ran: Vec<&str> = log.lines().collect();
            assert!(
                ran.len() <= 1 && ran.iter().all(|r| *r == first),
                "{cmd:?} matches {pattern:?}, but bash started {ran:?}"
            );
        }
    }
    if shell::is_wrapped(&cmd, &exe, WS) {
        let log = s.run(&cmd);
        let runs = skarn_runs(&log).unwrap_or_default();
        let ok = runs.len() == 1
            && runs[0].len() == 8
            && runs[0][..7] == ["skarn", "run", "--workspace", WS, "--", "bash", "-c"];
        assert!(ok, "{cmd:?} is taken as wrapped, but bash ran {runs:?}");
    }
});
