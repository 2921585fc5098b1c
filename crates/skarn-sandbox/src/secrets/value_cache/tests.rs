use std::time::Duration;

use super::*;

const VALUE: &str = "sk-live-Abc123Def456Ghi789Jkl012Mno345";

fn secrets(value: &str) -> RunSecrets {
    RunSecrets::for_tests(value, None, "example.test")
}

fn md(p: &Path) -> std::fs::Metadata {
    std::fs::symlink_metadata(p).unwrap()
}

/// A clean verdict holds while the file is unchanged; any change to its
/// content (even one that keeps size and modification time) moves its
/// change time and drops the verdict; another set of values starts
/// afresh; nothing in the place names the value.
#[test]
fn a_verdict_holds_only_while_the_file_is_unchanged() {
    let dir = skarn_test_support::TempDir::new("value_cache");
    let home = dir.dir("home");
    let f = dir.file("ws/a.txt", "nothing here\n");
    let s = secrets(VALUE);
    let mut c = Cache::open_settled(&home, &s, &[], Duration::ZERO).unwrap();
    assert!(!c.is_clean(&md(&f)));
    c.note_clean(&md(&f));
    c.save();
    let mut c = Cache::open_settled(&home, &s, &[], Duration::ZERO).unwrap();
    assert!(c.is_clean(&md(&f)));
    // Same size, modification time put back: the change time still moves.
    let before = md(&f);
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&f, "nothing HERE\n").unwrap();
    let t = std::fs::FileTimes::new().set_modified(before.modified().unwrap());
    std::fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_times(t)
        .unwrap();
    assert_eq!(md(&f).len(), before.len());
    assert!(!c.is_clean(&md(&f)));
    // Another value: another place.
    let mut other = Cache::open_settled(
        &home,
        &secrets("another-value-0123456789"),
        &[],
        Duration::ZERO,
    )
    .unwrap();
    assert!(!other.is_clean(&before));
    for e in std::fs::read_dir(home.join(DIR)).unwrap().flatten() {
        let bytes = std::fs::read(e.path()).unwrap();
        assert!(!bytes.windows(VALUE.len()).any(|w| w == VALUE.as_bytes()));
        assert!(!e.file_name().to_string_lossy().contains("Abc123"));
    }
}

/// A file changed within the settling time is not kept: a change in the
/// same clock tick could leave its change time equal.
#[test]
fn a_file_changed_just_now_is_not_kept() {
    let dir = skarn_test_support::TempDir::new("value_cache_settle");
    let home = dir.dir("home");
    let s = secrets(VALUE);
    let f = dir.file("ws/a.txt", "nothing here\n");
    let mut c = Cache::open(&home, &s, &[]).unwrap();
    c.note_clean(&md(&f));
    c.save();
    let mut c = Cache::open(&home, &s, &[]).unwrap();
    assert!(!c.is_clean(&md(&f)));
}

/// The place is not used when the run can reach it (it lies, links
/// resolved, inside one of its grants), and a missing home is not made.
#[test]
fn a_place_the_run_can_reach_is_not_used() {
    let dir = skarn_test_support::TempDir::new("value_cache_reach");
    let home = dir.dir("home");
    let ws = dir.dir("ws");
    let s = secrets(VALUE);
    std::fs::create_dir_all(home.join(".local/state")).unwrap();
    std::os::unix::fs::symlink(&ws, home.join(".local/state/skarn")).unwrap();
    let visible = [std::fs::canonicalize(&ws).unwrap()];
    assert!(Cache::open(&home, &s, &visible).is_none());
    let missing = dir.path().join("no-home");
    assert!(Cache::open(&missing, &s, &[]).is_none());
    assert!(!missing.exists());
}

/// atk27m H4: the name verdicts are kept under is derived from the text
/// of what decides a verdict (the forms, the unescaping, the walk), so a
/// change to any of them starts afresh with no number to bump.
#[test]
fn verdicts_of_other_forms_are_not_reused() {
    let base: Vec<&str> = skarn_egress::FINDER_SOURCES.to_vec();
    assert!(
        base.iter().any(|s| s.contains("fn pairs(")),
        "the forms are not among the sources"
    );
    let a = format_digest(&base);
    for i in 0..base.len() {
        let mut changed: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        changed[i].push('\n');
        let refs: Vec<&str> = changed.iter().map(String::as_str).collect();
        assert_ne!(format_digest(&refs), a, "source {i} does not count");
    }
    assert_ne!(this_format(), a, "the walk's own sources do not count");
}
