//! Tests of [`super`]: layouts, configuration walks, bounds.

use super::*;

/// A test directory (removed with the `TempDir`) and its path.
struct T(PathBuf, #[allow(dead_code)] skarn_test_support::TempDir);
fn tmp(tag: &str) -> T {
    let d = skarn_test_support::TempDir::new(&format!("gitvet-{tag}"));
    T(d.path().to_path_buf(), d)
}
fn repo(at: &Path, config: &str) {
    std::fs::create_dir_all(at.join(".git/objects")).unwrap();
    std::fs::create_dir_all(at.join(".git/refs")).unwrap();
    std::fs::write(at.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(at.join(".git/config"), config).unwrap();
}
fn paths(g: &[Guard]) -> Vec<String> {
    g.iter()
        .map(|g| format!("{}{}", g.path.display(), if g.reserve { "+" } else { "" }))
        .collect()
}

#[test]
fn hooks_path_includes_and_worktree_config_are_followed() {
    let t = tmp("cfg");
    let ws = t.0.join("ws");
    repo(
        &ws,
        "[core]\n hooksPath = tools/hooks\n[include]\n path = ../shared.cfg\n\
         [includeIf \"onbranch:x\"]\n path = /elsewhere/x.cfg\n[extensions]\n worktreeConfig\n",
    );
    std::fs::write(ws.join("shared.cfg"), "[include]\npath = more.cfg\n").unwrap();
    std::fs::write(ws.join("more.cfg"), "[core]\nhooksPath = /abs/hooks\n").unwrap();
    let g = guards(&ws, std::slice::from_ref(&ws), None);
    let p = paths(&g);
    let w = ws.display();
    for want in [
        format!("{w}/.git/hooks+"),
        format!("{w}/.git/config+"),
        format!("{w}/.git/config.worktree+"),
        format!("{w}/.git/commondir"),
        format!("{w}/tools/hooks+"),
        format!("{w}/shared.cfg+"),
        format!("{w}/more.cfg+"),
    ] {
        assert!(p.contains(&want), "{want} not in {p:?}");
    }
    assert!(
        !p.iter()
            .any(|s| s.contains("/elsewhere") || s.contains("/abs"))
    );
}

#[test]
fn linked_worktree_and_git_file() {
    let t = tmp("wt");
    let main = t.0.join("main");
    repo(&main, "[core]\n");
    let wtd = main.join(".git/worktrees/feat");
    std::fs::create_dir_all(&wtd).unwrap();
    std::fs::write(wtd.join("HEAD"), "x\n").unwrap();
    std::fs::write(wtd.join("commondir"), "../..\n").unwrap();
    std::fs::write(wtd.join("gitdir"), "/x/.git\n").unwrap();
    let ws = t.0.join("feat");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join(".git"), format!("gitdir: {}\n", wtd.display())).unwrap();
    let l = discover(&ws).unwrap();
    assert_eq!(l.git_dir, wtd);
    assert_eq!(l.common_dir, main.join(".git"));
    let all = vec![t.0.clone()];
    let p = paths(&guards_for(&l, &all, None));
    for want in [
        format!("{}/.git", ws.display()),
        format!("{}/commondir", wtd.display()),
        format!("{}/gitdir", wtd.display()),
        format!("{}/.git/hooks+", main.display()),
        format!("{}/.git/config+", main.display()),
    ] {
        assert!(p.contains(&want), "{want} not in {p:?}");
    }
    // Only the workspace writable: the common dir is left alone.
    let p = paths(&guards_for(&l, std::slice::from_ref(&ws), None));
    assert_eq!(p, [format!("{}/.git", ws.display())]);
}

#[test]
fn subdirectory_workspace_finds_the_repository_above() {
    let t = tmp("sub");
    repo(&t.0, "");
    let ws = t.0.join("a/b");
    std::fs::create_dir_all(&ws).unwrap();
    assert_eq!(discover(&ws).unwrap().top, t.0);
    assert!(guards(&ws, std::slice::from_ref(&ws), None).is_empty());
    // An empty .git directory is not a repository: discovery goes on up.
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    assert_eq!(discover(&ws).unwrap().top, t.0);
}

#[test]
fn no_repository_no_guards() {
    let t = tmp("none");
    assert!(discover(&t.0).is_none_or(|l| !l.top.starts_with(&t.0)));
}

#[test]
fn includes_are_read_once_and_bounded() {
    let t = tmp("bound");
    let ws = t.0.join("ws");
    // The same include many times is one include.
    let same = "[include]\n".to_string() + &"\tpath = /nowhere/a\n".repeat(50_000);
    repo(&ws, &same);
    let l = discover(&ws).unwrap();
    let n = named(&l, None);
    assert_eq!((n.includes.len(), n.over_limit), (1, false));
    assert!(checked_guards_for(&l, &[PathBuf::from("/")], None).is_ok());
    // More distinct includes than the bound: refused, not half-read.
    let many: String = (0..=MAX_INCLUDES)
        .map(|i| format!("\tpath = /nowhere/n{i}\n"))
        .collect();
    repo(&ws, &format!("[include]\n{many}"));
    let n = named(&l, None);
    assert!(n.over_limit);
    assert_eq!(n.includes.len(), MAX_INCLUDES);
    let e = checked_guards_for(&l, &[PathBuf::from("/")], None).unwrap_err();
    assert!(e.to_string().contains("too much to vet"), "{e}");
}
