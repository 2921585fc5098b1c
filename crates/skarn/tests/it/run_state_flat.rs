//! What `skarn run` reads of skarn's own state does not grow with the
//! history earlier runs left (issue 30, ADR 0289): records of killed runs
//! over other workspaces, their pending layers and gateway servers'
//! directories. Counted from outside: the `statx`/`readlink` family of
//! system calls of a whole run under `strace -f -c` in a home holding a
//! small history and in one holding three times as much. Not timed.

use std::path::Path;

use crate::common::*;
use skarn_test_support::TempDir;

/// Leave in `home` what `n` killed runs over other workspaces and `n`
/// gateway servers leave: dead run records (lock free), pending layers in
/// the state directory (named as before ADR 0289), server directories.
fn history(t: &TempDir, home: &Path, n: usize) {
    let state = home.join(".local/state/skarn");
    let runs = state.join("runs");
    let layers = state.join("layers");
    let servers = home.join(".local/state/skarn-servers");
    for d in [&runs, &layers, &servers] {
        std::fs::create_dir_all(d).unwrap();
    }
    for i in 0..n {
        let other = t.dir(format!("others-{n}/o{i}"));
        let info = format!(
            "{{\"workspace\":{o:?},\"roots\":[{o:?}],\"pid\":{i}}}",
            o = other.display().to_string()
        );
        std::fs::write(runs.join(format!("{i:032x}.run")), info).unwrap();
        let l = layers.join(format!("layer-{i:016x}"));
        std::fs::create_dir_all(l.join("u")).unwrap();
        std::fs::create_dir_all(l.join("w")).unwrap();
        std::fs::write(l.join("workspace"), other.as_os_str().as_encoded_bytes()).unwrap();
        std::fs::create_dir_all(servers.join(format!("example-{i:016x}/w"))).unwrap();
    }
}

/// The `statx`/`readlink` family calls of one `skarn run -- /bin/true`
/// in `ws` with `home`, or why they cannot be counted.
fn path_calls(t: &TempDir, ws: &Path, home: &Path, tag: &str) -> Result<u64, String> {
    const FAMILY: &[&str] = &[
        "statx",
        "newfstatat",
        "fstatat64",
        "lstat",
        "stat",
        "readlink",
        "readlinkat",
    ];
    let calls = crate::support_strace::run_calls(t, ws, home, &[], tag)?;
    Ok(FAMILY.iter().filter_map(|f| calls.get(*f)).sum())
}

#[test]
fn what_a_run_asks_of_skarns_state_does_not_grow_with_earlier_runs() {
    if !crate::support_strace::strace_installed() {
        skarn_test_support::skip!("strace is not installed: the system calls cannot be counted");
    }
    let t = TempDir::new("state-flat");
    let ws = t.dir("ws");
    assert!(git(&ws, &["init", "-q"]).status.success());
    let sizes = [200, 600];
    let mut homes = Vec::new();
    for n in sizes {
        let home = t.dir(format!("home-{n}"));
        history(&t, &home, n);
        // The first run may tidy what it finds (bounded from then on);
        // the second is the one every later run is like.
        let o = run_in(&ws, &home, &[], &["/bin/true"]);
        assert_eq!(code(&o), 0, "{}", err(&o));
        homes.push(home);
    }
    // Other tests running beside this one change the host (a host socket
    // renamed away makes every run search for it, launchers planted in
    // system directories redo the kept launcher list): that only adds
    // calls, and for a while, so the two histories are measured in turn,
    // five rounds, and the least of each is its own figure.
    let mut least = [u64::MAX; 2];
    for round in 0..5 {
        for (i, home) in homes.iter().enumerate() {
            match path_calls(&t, &ws, home, &format!("{}-{round}", sizes[i])) {
                Ok(c) => least[i] = least[i].min(c),
                Err(why) => skarn_test_support::skip!("{why}"),
            }
        }
    }
    let counts: Vec<(usize, u64)> = sizes.into_iter().zip(least).collect();
    eprintln!("statx/readlink family per run (history size, calls): {counts:?}");
    let (small, large) = (counts[0].1, counts[1].1);
    assert!(
        large <= small + 60,
        "statx/readlink calls per run grew with the history left by earlier runs: {counts:?} \
         (records, layers and server directories left)"
    );
}
