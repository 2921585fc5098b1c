use super::*;

/// What `skarn run` protects in a writable home is a home place too
/// (the hook's file guard uses [`home_place`]): one list, no drift.
#[test]
fn run_home_protections_are_home_places() {
    for p in crate::policy::HOME_PERSISTENCE_PATHS {
        // `~/go/src` holds projects; its `bin` and `pkg` are places.
        let p = if *p == "go" { "go/bin" } else { p };
        assert!(home_place(Path::new(p)).is_some(), "{p}");
    }
    assert_eq!(home_place(Path::new("src/p")), None);
}

#[test]
fn shared_system_home_and_path_directories_are_not_projects() {
    let home = Path::new("/nonexistent-home-for-test");
    for (ws, flag) in [
        ("/tmp", ALLOW_NON_PROJECT_FLAG),
        ("/var/tmp", ALLOW_NON_PROJECT_FLAG),
        ("/var/lib/x", ALLOW_NON_PROJECT_FLAG),
        ("/var/opt/x", ALLOW_NON_PROJECT_FLAG),
        ("/var/local", ALLOW_NON_PROJECT_FLAG),
        ("/var/local/share/p", ALLOW_NON_PROJECT_FLAG),
        ("/run/user/1000", ALLOW_NON_PROJECT_FLAG),
        ("/srv", ALLOW_NON_PROJECT_FLAG),
        (
            "/nonexistent-home-for-test/.config/systemd/user",
            ALLOW_HOME_FLAG,
        ),
        (
            "/nonexistent-home-for-test/.ipython/profile_default/startup",
            ALLOW_HOME_FLAG,
        ),
        ("/nonexistent-home-for-test/bin", ALLOW_HOME_FLAG),
        ("/nonexistent-home-for-test/go/bin", ALLOW_HOME_FLAG),
        ("/nonexistent-home-for-test", ALLOW_HOME_FLAG),
    ] {
        let n = non_project(Path::new(ws), Some(home));
        assert_eq!(n.map(|n| n.flag), Some(flag), "{ws}");
    }
    for ws in [
        "/srv/project",
        "/var/home/u/p",
        "/var/www/site",
        "/var/tmp/x/y",
        "/nonexistent-home-for-test/src/p",
        "/nonexistent-home-for-test/go/src/example.org/p",
        "/tmp/x/y",
    ] {
        assert_eq!(non_project(Path::new(ws), Some(home)), None, "{ws}");
    }
    // Case variants of the home's program places (macOS, Windows).
    for ws in [
        "/nonexistent-home-for-test/Library/LaunchAgents",
        "/nonexistent-home-for-test/library/launchagents",
        "/nonexistent-home-for-test/AppData/Roaming",
        "/nonexistent-home-for-test/GO/BIN",
    ] {
        let n = non_project(Path::new(ws), Some(home));
        assert_eq!(n.map(|n| n.flag), Some(ALLOW_HOME_FLAG), "{ws}");
    }
    let e = refuse_non_project_workspace(Path::new("/tmp"), Some(home), true, false)
        .unwrap_err()
        .to_string();
    assert!(e.contains(ALLOW_NON_PROJECT_FLAG), "{e}");
    assert!(refuse_non_project_workspace(Path::new("/tmp"), Some(home), false, true).is_ok());
}

#[test]
fn every_version_control_metadata_directory_is_refused() {
    let tmp = skarn_test_support::TempDir::new("ws-vcs");
    let home = Path::new("/nonexistent-home-for-test");
    for d in [
        ".hg",
        ".hg/store",
        ".jj/repo",
        ".sl",
        "_darcs/prefs",
        ".git/hooks",
    ] {
        let ws = tmp.path().join("p").join(d);
        std::fs::create_dir_all(&ws).unwrap();
        let n = non_project(&ws, Some(home)).unwrap();
        assert_eq!(n.flag, ALLOW_NON_PROJECT_FLAG, "{d}");
    }
    // The metadata directory itself: no flag accepts it.
    let hg = tmp.path().join("p/.hg");
    let e = refuse_non_project_workspace(&hg, Some(home), true, true).unwrap_err();
    assert!(e.to_string().contains("Mercurial"), "{e}");
    assert_eq!(non_project(&tmp.path().join("p"), Some(home)), None);
}

#[test]
fn cargo_build_directories_are_refused() {
    let tmp = skarn_test_support::TempDir::new("ws-cargo");
    let home = Path::new("/nonexistent-home-for-test");
    let t = tmp.path().join("c/target");
    std::fs::create_dir_all(t.join("debug/.fingerprint")).unwrap();
    std::fs::create_dir_all(t.join("debug/build/x-1")).unwrap();
    std::fs::write(
        t.join("CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n# created by cargo.\n",
    )
    .unwrap();
    for ws in [t.clone(), t.join("debug"), t.join("debug/build/x-1")] {
        assert!(non_project(&ws, Some(home)).is_some(), "{}", ws.display());
    }
    assert_eq!(non_project(&tmp.path().join("c"), Some(home)), None);
}
