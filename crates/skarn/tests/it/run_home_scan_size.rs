//! `skarn run`, issue 30: the look at where the home's links lead does
//! not grow with skarn's own state. `~/.local/state/skarn` (stores, run
//! records) is walked one level, also when reached from `~/.local`: with
//! 30,100 entries there (more than the scan's 30,000-entry budget) the
//! scan still ends within its budget (the report names no directory whose
//! links were not all followed), so it did not visit them one by one; and
//! a start-up link elsewhere under `~/.local` is still followed: the run
//! cannot change the file it leads to (checked from outside).

use std::os::unix::fs::symlink;

use crate::common::*;
use skarn_test_support::TempDir;

#[test]
fn a_large_skarn_state_is_not_walked_and_links_under_local_are_still_followed() {
    let t = TempDir::new("home-scan-size");
    let home = t.dir("home");
    let ws = t.dir("ws");
    std::process::Command::new("git")
        .args(["init", "-q"])
        .arg(&ws)
        .status()
        .expect("git init");
    // 100 stores of 300 entries each, two levels below skarn's state.
    let store = t.dir("home/.local/state/skarn/store");
    for k in 0..100 {
        let d = store.join(format!("k{k}"));
        std::fs::create_dir(&d).unwrap();
        for c in 0..300 {
            std::fs::create_dir(d.join(format!("c{c}"))).unwrap();
        }
    }
    // A plugin that a host editor loads at start, linked into the workspace.
    t.file("ws/plugin.lua", "-- plugin\n");
    let plugins = t.dir("home/.local/share/nvim/site/plugin");
    symlink(ws.join("plugin.lua"), plugins.join("p.lua")).unwrap();
    let o = run_in(
        &ws,
        &home,
        &["--report"],
        &[
            "sh",
            "-c",
            "echo 'os.execute(\"touch /tmp/PWNED\")' >> plugin.lua; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let e = err(&o);
    assert!(
        !e.contains("were not all followed"),
        "the home scan visited skarn's state entry by entry: {e}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("plugin.lua")).unwrap(),
        "-- plugin\n",
        "a start-up link under ~/.local was not followed: {e}"
    );
}
