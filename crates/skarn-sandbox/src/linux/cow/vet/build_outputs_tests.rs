#![cfg(unix)]
use super::*;
use std::os::unix::fs::MetadataExt;

fn git(dir: &Path, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .args(["-c", "user.email=a@b", "-c", "user.name=a"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

fn mtime(p: &Path) -> i64 {
    std::fs::metadata(p).unwrap().mtime()
}

#[test]
fn untracked_outputs_are_dated_old_and_tracked_files_keep_their_time() {
    let tmp = skarn_test_support::TempDir::new("build-outputs");
    let ws = tmp.path();
    std::fs::write(ws.join("main.c"), "int main(){return 0;}\n").unwrap();
    std::fs::write(ws.join(".gitignore"), "*.o\n").unwrap();
    git(ws, &["init", "-q", "."]);
    git(ws, &["add", "-A"]);
    git(ws, &["commit", "-qm", "i"]);
    std::fs::write(ws.join("main.o"), "obj").unwrap();
    std::fs::create_dir_all(ws.join("sub/build")).unwrap();
    std::fs::write(ws.join("sub/build/x.class"), b"\xca\xfe\xba\xbe\0\0").unwrap();
    // A new source git shows (`??`) keeps its time.
    std::fs::write(ws.join("new.c"), "int f;\n").unwrap();
    let applied: Vec<String> = [
        "+ main.c",
        "+ main.o",
        "+ new.c",
        "+ sub/",
        "+ sub/build/x.class",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let note = stamp(ws, &applied).unwrap();
    assert!(note.starts_with("2 file(s)"), "{note}");
    assert_eq!(mtime(&ws.join("main.o")), 0);
    assert_eq!(mtime(&ws.join("sub/build/x.class")), 0);
    assert!(mtime(&ws.join("main.c")) > 0);
    assert!(mtime(&ws.join("new.c")) > 0);
}

#[test]
fn files_in_no_repository_are_left_alone() {
    let tmp = skarn_test_support::TempDir::new("build-outputs-norepo");
    let ws = tmp.path().join("w");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("main.o"), "obj").unwrap();
    // (The temporary directory may lie in a repository: only judge when
    // it does not.)
    if ws.ancestors().any(|a| a.join(".git").exists()) {
        return;
    }
    assert_eq!(stamp(&ws, &["+ main.o".to_string()]), None);
    assert!(mtime(&ws.join("main.o")) > 0);
}

#[test]
fn objects_in_no_repository_are_dated_by_their_content() {
    let tmp = skarn_test_support::TempDir::new("build-outputs-norepo-obj");
    let ws = tmp.path().join("w");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("main.o"), b"\x7fELF\x02\x01\x01\0").unwrap();
    std::fs::write(ws.join("main.c"), "int main;\n").unwrap();
    if ws.ancestors().any(|a| a.join(".git").exists()) {
        return;
    }
    let applied = ["+ main.o".to_string(), "+ main.c".to_string()];
    assert!(stamp(&ws, &applied).unwrap().starts_with("1 file(s)"));
    assert_eq!(mtime(&ws.join("main.o")), 0);
    assert!(mtime(&ws.join("main.c")) > 0);
}
