//! Attack atk22g F23 and F14: which directories may be a workspace. The
//! installation tree a `bin` on PATH takes its programs' code from (a
//! user npm prefix's `lib/node_modules/tool`) is refused, and nothing
//! there changes; a `~/bin` PATH entry (bash expands the tilde) is the
//! home's `bin`, not a relative entry that refuses every workspace.

use crate::common::*;
use skarn_test_support::TempDir;

#[test]
fn an_installation_tree_of_programs_on_path_is_not_a_workspace() {
    let t = TempDir::new("ws-kind-npm");
    let home = t.dir("home");
    let pkg = t.dir("home/npm/lib/node_modules/tool/lib");
    let imp = t.file(
        "home/npm/lib/node_modules/tool/lib/impl.js",
        "console.log(1)\n",
    );
    let bin = t.dir("home/npm/bin");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    for ws in [
        pkg.parent().unwrap().to_path_buf(),
        home.join("npm/lib/node_modules"),
        home.join("npm/lib"),
    ] {
        let o = run_command(
            &ws,
            &home,
            &[],
            &[
                "sh",
                "-c",
                "find . -name impl.js -exec sh -c 'echo planted > \"$1\"' _ {} \\;",
            ],
        )
        .current_dir(&ws)
        .env("PATH", &path)
        .output()
        .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}: {}", ws.display(), err(&o));
        assert!(err(&o).contains("installation tree"), "{}", err(&o));
        assert_eq!(std::fs::read_to_string(&imp).unwrap(), "console.log(1)\n");
    }
}

#[test]
fn a_tilde_path_entry_is_the_homes_directory() {
    let t = TempDir::new("ws-kind-tilde");
    let home = t.dir("home");
    t.dir("home/bin");
    let ws = t.dir("proj");
    let o = run_command(&ws, &home, &[], &["sh", "-c", "echo ok > made"])
        .current_dir(&ws)
        .env("PATH", "~/bin:/usr/bin:/bin")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(ws.join("made").exists());
}
