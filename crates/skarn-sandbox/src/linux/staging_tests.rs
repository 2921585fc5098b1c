//! Tests of [`super`] (the stage of a new `.git`).

use super::*;

#[test]
fn empty_stages_of_runs_that_are_gone_are_swept() {
    let tmp = skarn_test_support::TempDir::new("stages");
    let ws = tmp.path();
    let git = ws.join(".git");
    // A pid that cannot exist (above pid_max's ceiling), and the
    // parent of this test (alive).
    let dead = format!("{STAGE_PREFIX}{}", 4_194_305);
    let full = format!("{STAGE_PREFIX}{}", 4_194_306);
    let live = format!("{STAGE_PREFIX}{}", std::os::unix::process::parent_id());
    for d in [&dead, &full, &live] {
        std::fs::create_dir_all(git.join(d)).unwrap();
    }
    std::fs::write(git.join(&full).join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let mine = prepare(ws).unwrap();
    assert!(mine.is_dir());
    assert!(
        !git.join(&dead).exists(),
        "an empty stage of a dead run stays"
    );
    assert!(git.join(&full).exists(), "a stage with content is kept");
    assert!(git.join(&live).exists(), "a live run's stage is kept");
}

#[test]
fn config_allow_list() {
    let (s, d) = sanitize_config(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = evil\n\
         \thooksPath = h\n[remote \"origin\"]\n\turl = https://h/x\n\tfetch = +refs/*:refs/*\n\
         \tuploadpack = evil\n[remote \"x\"]\n\turl = ext::sh -c evil\n[filter \"f\"]\n\tclean = evil\n\
         [include]\n\tpath = ../x\n[extensions]\n\tobjectformat = sha256\n\tworktreeConfig = true\n",
    );
    let keys: Vec<String> = gitconfig::parse(&s).items.iter().map(|i| i.key()).collect();
    assert_eq!(
        keys,
        [
            "core.repositoryformatversion",
            "core.bare",
            "remote.origin.url",
            "remote.origin.fetch",
            "extensions.objectformat"
        ]
    );
    assert_eq!(
        d,
        [
            "config core.fsmonitor",
            "config core.hookspath",
            "config remote.origin.uploadpack",
            "config remote.x.url",
            "config filter.f.clean",
            "config include.path",
            "config extensions.worktreeconfig"
        ]
    );
}

#[test]
fn finalize_moves_a_clean_repo_and_drops_the_rest() {
    let tmp = skarn_test_support::TempDir::new("stage-unit");
    let ws = tmp.path().to_path_buf();
    std::fs::create_dir_all(&ws).unwrap();
    let stage = prepare(&ws).unwrap();
    assert!(is_unborn(&ws.join(".git")));
    for d in ["objects/pack", "refs/heads", "hooks", "worktrees/x"] {
        std::fs::create_dir_all(stage.join(d)).unwrap();
    }
    std::fs::write(stage.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(
        stage.join("config"),
        "[core]\nbare = false\nfsmonitor = x\n",
    )
    .unwrap();
    std::fs::write(stage.join("hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
    std::fs::write(stage.join("hooks/pre-commit"), "evil").unwrap();
    std::fs::write(stage.join("commondir"), "/elsewhere\n").unwrap();
    std::os::unix::fs::symlink("/etc", stage.join("info")).unwrap();
    let m = finalize(&ws, &stage, true).unwrap();
    for d in [
        "core.fsmonitor",
        "hooks/pre-commit,",
        "commondir",
        "worktrees",
        "info",
    ] {
        assert!(m.contains(d), "{d} not in {m}");
    }
    let git = ws.join(".git");
    assert!(git.join("HEAD").is_file() && git.join("objects/pack").is_dir());
    assert!(git.join("hooks/pre-commit.sample").is_file());
    for gone in ["hooks/pre-commit", "commondir", "worktrees", "info"] {
        assert!(std::fs::symlink_metadata(git.join(gone)).is_err(), "{gone}");
    }
    assert!(!stage.exists());
    // An empty stage leaves nothing behind.
    std::fs::remove_dir_all(&git).unwrap();
    let stage = prepare(&ws).unwrap();
    assert_eq!(finalize(&ws, &stage, true), None);
    assert!(!git.exists());
}

#[test]
fn a_stage_with_a_link_inside_a_kept_directory_is_refused() {
    let tmp = skarn_test_support::TempDir::new("stage-link");
    let ws = tmp.path().to_path_buf();
    let stage = prepare(&ws).unwrap();
    std::fs::create_dir_all(stage.join("refs/heads")).unwrap();
    std::fs::create_dir_all(stage.join("logs")).unwrap();
    std::fs::create_dir_all(stage.join("objects")).unwrap();
    std::fs::write(stage.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::os::unix::fs::symlink("/root/.bashrc", stage.join("logs/HEAD")).unwrap();
    let m = finalize(&ws, &stage, true).unwrap();
    assert!(
        m.contains("logs/HEAD") && m.contains("/root/.bashrc"),
        "{m}"
    );
    assert!(!ws.join(".git").exists(), "{m}");
    let aside = std::fs::read_dir(&ws)
        .unwrap()
        .flatten()
        .find(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with(".git.skarn-quarantine-") && n.len() == 22 + 32
        })
        .expect("set aside under a random name")
        .path();
    assert!(aside.join("HEAD.inert").is_file() && !aside.join("HEAD").exists());
    assert!(std::fs::symlink_metadata(aside.join("logs/HEAD")).is_err());
}
