//! Issue 30 (goal 2, ADR 0340): the run's base path. The copy-on-write
//! layer is mounted `volatile`, so the sandbox's end does not sync the
//! whole file system holding the layer (every dirty page of the host's
//! disk); checked from outside: the mount table the command sees, the
//! run's write reaching the host's workspace, and no layer directory
//! (with overlayfs's mode-0 `incompat/volatile`) left behind. Root and
//! uid 65534 (a user namespace: `userxattr`).

use std::path::Path;

use crate::common::*;
use crate::support_secret_sources::{as_user, is_root};
use skarn_test_support::TempDir;

/// The overlay mounts at or under `ws` in `mountinfo`, each with whether
/// its options say `volatile` (`volatile` or `fsync=volatile`).
fn layer_mounts(mountinfo: &str, ws: &Path) -> Vec<(String, bool)> {
    let ws = ws.to_str().unwrap();
    mountinfo
        .lines()
        .filter(|l| l.contains(" - overlay "))
        .filter_map(|l| {
            let point = l.split(' ').nth(4)?;
            (point == ws || point.starts_with(&format!("{ws}/"))).then(|| {
                let opts = l.rsplit(' ').next().unwrap_or("");
                let vol = opts
                    .split(',')
                    .any(|o| o == "volatile" || o == "fsync=volatile");
                (point.to_string(), vol)
            })
        })
        .collect()
}

/// Layer directories left in the state directory or beside `ws`.
fn layers_left(home: &Path, ws: &Path) -> Vec<String> {
    let mut left = Vec::new();
    for dir in [
        home.join(".local/state/skarn/layers"),
        ws.parent().unwrap().to_path_buf(),
    ] {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with("layer-") || n.starts_with(".skarn-layer-") {
                left.push(format!("{}/{n}", dir.display()));
            }
        }
    }
    left
}

fn layer_is_volatile(git_ws: bool, user: bool) {
    if user && !is_root() {
        return; // the unprivileged case is the caller itself
    }
    let t = TempDir::new(if git_ws { "p30f-git" } else { "p30f-plain" });
    let home = t.dir("home");
    let ws = t.dir("ws");
    if git_ws {
        assert!(git(&ws, &["init", "-q"]).status.success());
    }
    let c = run_command(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "cat /proc/self/mountinfo && echo made > made.txt",
        ],
    );
    let mut c = if user { as_user(c, t.path()) } else { c };
    let o = c.output().unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    let mounts = layer_mounts(&out(&o), &ws);
    assert!(
        !mounts.is_empty(),
        "no copy-on-write layer under {} (report: {})",
        ws.display(),
        err(&o)
    );
    let synced: Vec<_> = mounts.iter().filter(|(_, v)| !v).collect();
    assert!(
        synced.is_empty(),
        "layer mounts whose end syncs the host's disk (not volatile): {synced:?}"
    );
    // Usability: the run's writes reach the workspace.
    assert_eq!(
        std::fs::read_to_string(ws.join("made.txt")).unwrap_or_default(),
        "made\n",
        "{}",
        err(&o)
    );
    let left = layers_left(&home, &ws);
    assert!(left.is_empty(), "layer directories left behind: {left:?}");
}

#[test]
fn the_git_workspace_layer_is_volatile_and_removed_after_the_run() {
    layer_is_volatile(true, false);
}

#[test]
fn the_git_workspace_layer_is_volatile_and_removed_as_uid_65534() {
    layer_is_volatile(true, true);
}

#[test]
fn the_plain_workspace_layer_is_volatile_and_removed_after_the_run() {
    layer_is_volatile(false, false);
}

#[test]
fn the_plain_workspace_layer_is_volatile_and_removed_as_uid_65534() {
    layer_is_volatile(false, true);
}
