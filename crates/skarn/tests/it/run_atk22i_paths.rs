//! `skarn run`, issue 22 (attack atk22i F7): a `PATH` directory of the
//! caller inside the workspace that the host lacks (`<ws>/bin`), or a
//! relative `PATH` entry of the user's shell (`./node_modules/.bin`),
//! made a link to a sibling directory holding a planted `ls`. Judged
//! from outside: the host shell's next `ls` did not run the planted
//! program.

use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

/// The run's script: `tools/ls` (touching `marker`) and the link `link`
/// (a path relative to the workspace) to `tools`'s place.
fn plant(marker: &std::path::Path, link: &str, target: &str) -> String {
    format!(
        "mkdir -p tools && printf '#!/bin/sh\\ntouch {m}\\n' > tools/ls && chmod +x tools/ls && \
         mkdir -p $(dirname {link}) && ln -s {target} {link}; echo RAN",
        m = marker.display()
    )
}

#[test]
fn a_link_at_a_missing_path_directory_is_refused() {
    let t = TempDir::new("atk22i-f7");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let marker = t.join("PLANTED-RAN");
    let path = format!("{}:/usr/bin:/bin", ws.join("bin").display());
    let o = run_command(
        &ws,
        &home,
        &[],
        &["sh", "-c", &plant(&marker, "bin", "tools")],
    )
    .env("PATH", &path)
    .output()
    .unwrap();
    let said = format!("{}{}", out(&o), err(&o));
    assert!(said.contains("RAN"), "the command did not run: {said}");
    let _ = Command::new("sh")
        .args(["-c", "ls >/dev/null 2>&1"])
        .current_dir(&ws)
        .env("PATH", &path)
        .status();
    assert!(
        !marker.exists(),
        "the host's ls ran the program a link at a PATH directory led to: {said}"
    );
}

#[test]
fn a_link_above_a_relative_path_entry_is_refused() {
    let t = TempDir::new("atk22i-f7r");
    let home = t.dir("home");
    let ws = t.dir("ws");
    t.file("home/.bashrc", "export PATH=./node_modules/.bin:$PATH\n");
    let marker = t.join("PLANTED-RAN");
    let script = format!(
        "mkdir -p nm/.bin && printf '#!/bin/sh\\ntouch {m}\\n' > nm/.bin/ls && \
         chmod +x nm/.bin/ls && ln -s nm node_modules; echo RAN",
        m = marker.display()
    );
    let o = run_command(&ws, &home, &[], &["sh", "-c", &script])
        .output()
        .unwrap();
    let said = format!("{}{}", out(&o), err(&o));
    assert!(said.contains("RAN"), "the command did not run: {said}");
    let _ = Command::new("sh")
        .args([
            "-c",
            "PATH=./node_modules/.bin:/usr/bin:/bin; ls >/dev/null 2>&1",
        ])
        .current_dir(&ws)
        .status();
    assert!(
        !marker.exists(),
        "the host's ls ran the program a link above a relative PATH entry led to: {said}"
    );
}
