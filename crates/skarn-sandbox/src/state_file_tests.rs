#![cfg(unix)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use super::*;

const PLACE: &str = ".local/state/skarn/test-records";

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o777
}

/// The place is made private at every level skarn makes, a record is
/// written whole and read back, a wider mode left earlier is narrowed.
#[test]
fn a_record_is_written_privately_and_read_back() {
    let t = skarn_test_support::TempDir::new("state_file_rw");
    let home = t.dir("home");
    let d = StateDir::open(&home, PLACE, &[]).unwrap();
    for p in [".local", ".local/state", ".local/state/skarn", PLACE] {
        assert_eq!(mode(&home.join(p)), 0o700, "{p}");
    }
    assert!(d.write("r", b"abc", 3));
    assert_eq!(mode(&d.path().join("r")), 0o600);
    assert_eq!(d.read("r", 3).as_deref(), Some(&b"abc"[..]));
    assert!(!d.write("r", b"abcd", 3), "over the bound");
    assert_eq!(d.read("r", 3).as_deref(), Some(&b"abc"[..]));
    let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().flatten().collect();
    assert_eq!(names.len(), 1, "a temporary file was left: {names:?}");
    std::fs::set_permissions(home.join(PLACE), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(StateDir::open(&home, PLACE, &[]).is_some());
    assert_eq!(mode(&home.join(PLACE)), 0o700);
    // A missing home is never made.
    let missing = t.path().join("no-home");
    assert!(StateDir::open(&missing, PLACE, &[]).is_none());
    assert!(!missing.exists());
}

/// A link in place of the directory is not used, nor one leading into
/// a writable grant (links resolved).
#[test]
fn a_link_in_place_of_the_directory_is_refused() {
    let t = skarn_test_support::TempDir::new("state_file_dirlink");
    let home = t.dir("home");
    let elsewhere = t.dir("elsewhere");
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::create_dir_all(home.join(".local/state/skarn")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, home.join(PLACE)).unwrap();
    assert!(StateDir::open(&home, PLACE, &[]).is_none());
    let home2 = t.dir("home2");
    let ws = t.dir("ws");
    std::fs::create_dir_all(home2.join(".local/state")).unwrap();
    std::os::unix::fs::symlink(&ws, home2.join(".local/state/skarn")).unwrap();
    assert!(StateDir::open(&home2, PLACE, std::slice::from_ref(&ws)).is_none());
}

/// A link, a FIFO, a file shared by hard link or writable by others in
/// place of a record is no record (and opening the FIFO does not block).
#[test]
fn a_link_fifo_or_open_file_in_place_of_a_record_is_no_record() {
    let t = skarn_test_support::TempDir::new("state_file_filelink");
    let home = t.dir("home");
    let d = StateDir::open(&home, PLACE, &[]).unwrap();
    let outside = t.file("outside", "abc");
    std::os::unix::fs::symlink(&outside, d.path().join("link")).unwrap();
    assert_eq!(d.read("link", 100), None);
    let fifo =
        std::ffi::CString::new(d.path().join("fifo").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid, NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    assert_eq!(d.read("fifo", 100), None);
    std::fs::hard_link(&outside, d.path().join("hard")).unwrap();
    assert_eq!(d.read("hard", 100), None);
    assert!(d.write("open", b"abc", 3));
    let p = d.path().join("open");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o622)).unwrap();
    assert_eq!(d.read("open", 100), None);
    // Writing replaces the link, never writes through it.
    assert!(d.write("link", b"new", 3));
    assert_eq!(std::fs::read(&outside).unwrap(), b"abc");
}

/// A record longer than the bound is refused whole, not read in part.
#[test]
fn an_oversize_record_is_no_record() {
    let t = skarn_test_support::TempDir::new("state_file_big");
    let home = t.dir("home");
    let d = StateDir::open(&home, PLACE, &[]).unwrap();
    assert!(d.write("r", &[7u8; 100], 100));
    assert!(d.read("r", 100).is_some());
    assert_eq!(d.read("r", 99), None);
}

/// A cut record: every field taker says so, and a stamp round-trips.
#[test]
fn a_truncated_record_is_seen_cut() {
    let t = skarn_test_support::TempDir::new("state_file_cut");
    let f = t.file("f", "x");
    let s = Stamp::of(&std::fs::metadata(&f).unwrap());
    let mut b = Vec::new();
    s.put(&mut b);
    assert_eq!(b.len(), Stamp::LEN);
    assert_eq!(Stamp::take(&mut Fields(&b)), Some(s));
    for n in 0..b.len() {
        assert_eq!(Stamp::take(&mut Fields(&b[..n])), None, "cut at {n}");
    }
    let mut r = Fields(&[1, 2, 3]);
    assert_eq!(r.u32(), None);
    assert_eq!(r.u16(), Some(0x0201));
    assert!(!r.is_empty());
}

/// As root, a place or a record of another user is not used.
#[test]
fn a_foreign_owner_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skarn_test_support::skip!("only root can give a file to another user");
    }
    let t = skarn_test_support::TempDir::new("state_file_owner");
    let home = t.dir("home");
    let d = StateDir::open(&home, PLACE, &[]).unwrap();
    assert!(d.write("r", b"abc", 3));
    let chown = |p: &Path| std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
    chown(&d.path().join("r"));
    assert_eq!(d.read("r", 3), None);
    chown(d.path());
    assert!(StateDir::open(&home, PLACE, &[]).is_none());
    // A home of another user: its state is not root's to trust.
    let other = t.dir("other");
    chown(&other);
    assert!(StateDir::open(&other, PLACE, &[]).is_none());
}

/// Made once: a second maker reads the first one's content.
#[test]
fn a_record_made_once_is_kept() {
    let t = skarn_test_support::TempDir::new("state_file_once");
    let home = t.dir("home");
    let d = StateDir::open(&home, PLACE, &[]).unwrap();
    assert_eq!(
        d.read_or_create("key", b"1111").as_deref(),
        Some(&b"1111"[..])
    );
    assert_eq!(
        d.read_or_create("key", b"2222").as_deref(),
        Some(&b"1111"[..])
    );
    assert_eq!(
        digest_name(&[b"a", b"b"], 4),
        digest_name(&[b"ab"], 4),
        "a name digests the parts' bytes in order"
    );
    assert_eq!(digest_name(&[b"a"], 4).len(), 8);
}

include!("../build_support/source_digest.rs");

/// The build's digest is of every file under `src/` as they are now: a
/// record's name changes with any source change (atk30a F1: the launcher
/// record's hand-kept list of modules left one out, so a fix there would
/// not have reached kept records).
#[test]
fn records_are_named_by_the_digest_of_every_source_file() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // (The files' count, not their digest: an edit made while the tests
    // run would fail a digest comparison for nothing.)
    let (hex, files) = source_digest(&src);
    assert_eq!(BUILD.len(), hex.len());
    assert_eq!(
        env!("SKARN_SANDBOX_SOURCE_FILES"),
        files.to_string(),
        "build.rs missed files"
    );
    let mut all = Vec::new();
    source_files(&src, &mut all);
    for m in [
        "policy/workspace_kind/udev_rules.rs",
        "state_file.rs",
        "fact_deps.rs",
    ] {
        assert!(all.contains(&src.join(m)), "{m} not digested");
    }
    assert_ne!(digest_name(&[b"x"], 16), {
        let mut h = Sha256::new();
        h.update(b"x");
        h.finalize()
            .iter()
            .take(16)
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    });
}
