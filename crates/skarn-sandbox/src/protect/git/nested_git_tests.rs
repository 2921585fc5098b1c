//! Tests of `nested_git`.
use super::*;

/// The entry of `dir` that `name` was set aside as.
fn aside_of(dir: &Path, name: &str) -> Option<PathBuf> {
    let prefix = format!("{name}.skarn-quarantine-");
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
}

#[test]
fn finds_and_vets_nested_repositories() {
    let tmp = skarn_test_support::TempDir::new("nested");
    let d = tmp.path().to_path_buf();
    std::fs::create_dir_all(d.join(".git")).unwrap();
    std::fs::create_dir_all(d.join("vendor/lib/.git/hooks")).unwrap();
    std::fs::create_dir_all(d.join("node_modules/x/.git")).unwrap();
    let roots = vec![d.clone()];
    let (before, t) = find(&roots);
    assert!(!t);
    assert_eq!(before, vec![d.join("vendor/lib/.git")]);
    // During the run: a clean clone and a hostile gitdir link.
    std::fs::create_dir_all(d.join("clone/.git/hooks")).unwrap();
    std::fs::write(d.join("clone/.git/hooks/pre-commit.sample"), "").unwrap();
    std::fs::write(
        d.join("clone/.git/config"),
        "[remote \"origin\"]\n\turl = ../x\n",
    )
    .unwrap();
    std::fs::create_dir_all(d.join("src")).unwrap();
    std::fs::write(d.join("src/.git"), "gitdir: ../.cache-x\n").unwrap();
    std::fs::create_dir_all(d.join("evil/.git")).unwrap();
    std::fs::write(
        d.join("evil/.git/config"),
        "[core]\n\tfsmonitor = touch /tmp/p\n",
    )
    .unwrap();
    let w = vet_new(&roots, &before, &[], &[], None, false);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(d.join("clone/.git").exists());
    assert!(!d.join("src/.git").exists() && aside_of(&d.join("src"), ".git").is_some());
    assert!(!d.join("evil/.git").exists());
    // The root turned into a bare repository: its HEAD is set aside.
    std::fs::create_dir_all(d.join("objects")).unwrap();
    std::fs::create_dir_all(d.join("refs")).unwrap();
    std::fs::write(d.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(d.join("config"), "[core]\n\tfsmonitor = x\n").unwrap();
    let w = vet_new(&roots, &before, &[], &[], None, false);
    assert!(
        w.iter().any(|l| l.contains("HEAD.skarn-quarantine-")),
        "{w:?}"
    );
    assert!(!d.join("HEAD").exists());
    // A bare repository that takes objects, refs and config from
    // elsewhere through `commondir` is found and set aside too.
    std::fs::create_dir_all(d.join("cd/X")).unwrap();
    std::fs::create_dir_all(d.join("cd/Y/objects")).unwrap();
    std::fs::create_dir_all(d.join("cd/Y/refs/heads")).unwrap();
    std::fs::write(d.join("cd/X/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(d.join("cd/X/commondir"), "../Y\n").unwrap();
    std::fs::write(d.join("cd/Y/config"), "[core]\n\tpager = x\n").unwrap();
    let w = vet_new(&roots, &before, &[], &[], None, false);
    assert!(w.iter().any(|l| l.contains("cd/X")), "{w:?}");
    assert!(!d.join("cd/X").exists() && aside_of(&d.join("cd"), "X").is_some());
    // A spoiled .git/HEAD is put back.
    std::fs::write(d.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let g = HeadGuard::save(&d);
    std::fs::write(d.join(".git/HEAD"), "junk").unwrap();
    assert!(g.check().is_some());
    assert_eq!(
        std::fs::read_to_string(d.join(".git/HEAD")).unwrap(),
        "ref: refs/heads/main\n"
    );
    assert!(g.check().is_none());
}

#[test]
fn a_check_cut_short_fails_the_run_and_late_trees_are_vetted() {
    let tmp = skarn_test_support::TempDir::new("nested-late");
    let d = tmp.path().to_path_buf();
    let roots = vec![d.clone()];
    let since = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
    // Made "during the run": a repository inside target/ (F7), an
    // upward name made as a link (F6).
    std::fs::create_dir_all(d.join("target/.git")).unwrap();
    std::fs::write(
        d.join("target/.git/config"),
        "[core]\n\tfsmonitor = touch /tmp/p\n",
    )
    .unwrap();
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::create_dir_all(d.join("cfgdir")).unwrap();
    std::os::unix::fs::symlink("../cfgdir", d.join("sub/.cargo")).unwrap();
    let w = vet_new(&roots, &[], &[], &[], Some(since), false);
    assert!(!d.join("target/.git").exists(), "{w:?}");
    assert!(
        std::fs::symlink_metadata(d.join("sub/.cargo")).is_err(),
        "{w:?}"
    );
    assert!(d.join("cfgdir").is_dir(), "the link's target is left alone");
    assert!(!check_incomplete());
    // A walk cut short by its bounds fails the run.
    std::fs::create_dir_all(d.join("a/b/c/d")).unwrap();
    let tiny = crate::protect::grant_walk::Bounds {
        dirs: 2,
        time: std::time::Duration::from_secs(60),
    };
    let w = vet_new_within(&roots, &[], &[], &[], Some(since), false, tiny);
    assert!(w.iter().any(|l| l.contains("the run fails")), "{w:?}");
    assert!(check_incomplete());
    // What it did not reach was set aside (attack atk24d F11).
    assert!(!d.join("a").exists(), "{w:?}");
    assert!(w.iter().any(|l| l.contains("did not finish")), "{w:?}");
}

/// A check cut short sets aside every top entry the run changed: a
/// repository planted past the bound is not where host git looks; an
/// entry the run did not touch and the grant's own `.git` stay.
#[test]
fn a_cut_check_sets_aside_the_changed_top_entries() {
    let tmp = skarn_test_support::TempDir::new("nested-cut-aside");
    let d = tmp.path().to_path_buf();
    std::fs::create_dir_all(d.join("mine/deep")).unwrap();
    std::fs::create_dir_all(d.join(".git")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let since = std::time::SystemTime::now();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let marker = d.join("FSMONITOR-RAN");
    let r = d.join("zz/y/r");
    std::fs::create_dir_all(&r).unwrap();
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&r)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skarn_test_support::skip!("git is not installed");
    }
    std::fs::write(
        r.join(".git/config"),
        format!(
            "[core]\n\tfsmonitor = \"touch {}; false\"\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::write(d.join(".git/config"), "x").unwrap();
    let top = super::super::cut_aside::snapshot(std::slice::from_ref(&d), 1000);
    let w = super::super::cut_aside::set_aside_changed(&top, since);
    assert!(!d.join("zz").exists(), "{w:?}");
    assert!(d.join("mine/deep").is_dir(), "{w:?}");
    assert!(d.join(".git/config").is_file(), "{w:?}");
    assert_eq!(w.len(), 1, "{w:?}");
    // Host git where the plant was: nothing runs it.
    let _ = std::process::Command::new("git")
        .args(["-C", &r.to_string_lossy(), "status"])
        .output();
    assert!(!marker.exists());
}

/// A walk before the run cut short (ADR 0204): the user's own repository
/// it did not reach is kept after an ordinary run; one changed during the
/// run is vetted, and set aside when it could run programs.
#[test]
fn a_cut_walk_keeps_the_users_repositories_it_missed() {
    let tmp = skarn_test_support::TempDir::new("nested-cut");
    let d = tmp.path().to_path_buf();
    let roots = vec![d.clone()];
    for name in ["mine", "touched"] {
        std::fs::create_dir_all(d.join(name).join(".git/hooks")).unwrap();
        std::fs::write(d.join(name).join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
    }
    // The walk before the run started after they were made.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let since = std::time::SystemTime::now();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(
        d.join("touched/.git/config"),
        "[core]\n\tfsmonitor = touch /tmp/p\n",
    )
    .unwrap();
    let w = vet_new(&roots, &[], &[], &[], Some(since), true);
    assert!(d.join("mine/.git/hooks/pre-commit").exists(), "{w:?}");
    assert!(!d.join("touched/.git").exists(), "{w:?}");
    assert_eq!(w.len(), 1, "{w:?}");
}
