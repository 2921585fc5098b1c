// Tests may unwrap (the helpers too): a panic is how a test fails.
#![allow(clippy::unwrap_used)]

use super::*;

use std::os::unix::fs::symlink;

/// A project and an outside directory, both real paths.
fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    let (proj, out) = (root.join("p"), root.join("out"));
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    (d, proj, out)
}

fn err(path: &Path, base: &Path) -> String {
    format!("{:#}", resolve(path, base).unwrap_err())
}

#[test]
fn links_leaving_the_base_are_refused() {
    let (_d, proj, out) = dirs();
    std::fs::write(out.join("victim.json"), "{}").unwrap();
    // A file link, a directory link and a dangling link, all outside.
    symlink(out.join("victim.json"), proj.join(".mcp.json")).unwrap();
    symlink(&out, proj.join(".claude")).unwrap();
    symlink(out.join("x.toml"), proj.join("skarn.toml")).unwrap();
    let e = err(&proj.join(".mcp.json"), &proj);
    assert!(e.contains(".mcp.json") && e.contains("victim.json"), "{e}");
    let e = err(&proj.join(".claude/settings.json"), &proj);
    assert!(e.contains("outside"), "{e}");
    let e = err(&proj.join("skarn.toml"), &proj);
    assert!(e.contains("does not exist") && e.contains("x.toml"), "{e}");
    assert!(!out.join("x.toml").exists());
}

#[test]
fn links_inside_the_base_are_followed_and_the_real_file_changes() {
    let (_d, proj, _out) = dirs();
    std::fs::create_dir_all(proj.join("dotfiles")).unwrap();
    std::fs::write(proj.join("dotfiles/c.json"), "old").unwrap();
    symlink("dotfiles/c.json", proj.join(".claude.json")).unwrap();
    let t = resolve(&proj.join(".claude.json"), &proj).unwrap();
    assert!(t.via_link());
    assert_eq!(t.real, proj.join("dotfiles/c.json"));
    assert_eq!(read(&t).unwrap().as_deref(), Some("old"));
    let b = write(&t, "new", "STAMP").unwrap().unwrap();
    // The backup is next to the file changed; the link is still a link.
    assert_eq!(b, proj.join("dotfiles/c.json.skarn-backup-STAMP"));
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "old");
    assert_eq!(
        std::fs::read_to_string(proj.join(".claude.json")).unwrap(),
        "new"
    );
    assert!(
        std::fs::symlink_metadata(proj.join(".claude.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A second backup with the same stamp takes a free name.
    let b2 = write(&t, "newer", "STAMP").unwrap().unwrap();
    assert_eq!(b2, proj.join("dotfiles/c.json.skarn-backup-STAMP-2"));
    assert_eq!(std::fs::read_to_string(&b2).unwrap(), "new");
}

#[test]
fn replacing_keeps_mode_and_never_writes_through_a_hard_link() {
    use std::os::unix::fs::PermissionsExt;
    let (_d, proj, out) = dirs();
    let f = proj.join("settings.json");
    std::fs::write(&f, "old").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Hard links outside are not followed by a rename.
    std::fs::hard_link(&f, out.join("other")).unwrap();
    let t = resolve(&f, &proj).unwrap();
    assert!(!t.via_link());
    write(&t, "new", "S").unwrap();
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "new");
    assert_eq!(std::fs::read_to_string(out.join("other")).unwrap(), "old");
    let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // New files and their directories are created; no temp file is left.
    let t = resolve(&proj.join("a/b/new.json"), &proj).unwrap();
    assert_eq!(write(&t, "x", "S").unwrap(), None);
    let names: Vec<_> = std::fs::read_dir(proj.join("a/b"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["new.json"]);
}
