//! `skarn run` with the home reached through a link (`/home -> /data/home`,
//! a common layout): the run starts and works in both workspace layers
//! (attack atk27m F4: every run failed to start, because overlayfs was
//! given layer directories under the link after the root had moved).

use std::os::unix::fs::symlink;

use crate::common::*;
use skarn_test_support::TempDir;

#[test]
fn a_home_reached_through_a_link_runs_in_both_layers() {
    for layer in ["cow", "direct"] {
        let t = TempDir::new("linked-home");
        let real = t.dir("data/home/u");
        t.file("data/home/u/proj/f.txt", "hi\n");
        symlink(t.path().join("data/home"), t.path().join("home")).unwrap();
        let home = t.path().join("home/u");
        let ws = home.join("proj");
        let o = run_in(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", "cat f.txt && echo made > g.txt"],
        );
        assert!(o.status.success(), "{layer}: {}{}", out(&o), err(&o));
        assert!(out(&o).contains("hi"), "{layer}: {}", out(&o));
        assert_eq!(
            std::fs::read_to_string(real.join("proj/g.txt")).unwrap_or_default(),
            "made\n",
            "{layer}: the run's file is not in the workspace: {}",
            err(&o)
        );
    }
}
