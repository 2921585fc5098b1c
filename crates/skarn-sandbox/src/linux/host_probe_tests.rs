//! Issue 30: the host facts of a run do not grow with the workspace.

use crate::policy::link_facts;
use crate::{HostFacts, Policy};

/// Names looked at (`lstat`, `readlink`) while observing the host facts of
/// the default policy for `ws`, with `home` as the home.
fn names_asked(home: &std::path::Path, ws: &std::path::Path) -> usize {
    let _s = link_facts::Scope::enter();
    let mut h = HostFacts::probe();
    h.home = Some(home.to_path_buf());
    h.observe_policy_without_walk(&Policy::new(ws));
    link_facts::asked().unwrap_or(0)
}

#[test]
fn host_facts_look_at_as_many_names_in_a_workspace_of_many_directories() {
    let t = skarn_test_support::TempDir::new("facts-size");
    let home = t.dir("home");
    let ws = t.dir("ws");
    std::fs::create_dir(ws.join(".git")).unwrap();
    t.file("home/.bashrc", "export A=1\n");
    let empty = names_asked(&home, &ws);
    // 2,000 directories and 2,000 files, two levels deep (a project's
    // `node_modules` or `target` in small).
    for i in 0..40 {
        for j in 0..50 {
            let d = ws.join(format!("d{i}/e{j}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("f"), "x").unwrap();
        }
    }
    let full = names_asked(&home, &ws);
    assert!(empty > 0, "nothing was asked through the memo");
    assert_eq!(
        empty, full,
        "the host facts looked at {full} names with 2,000 directories in the workspace, \
         {empty} without: per-entry work"
    );
}
