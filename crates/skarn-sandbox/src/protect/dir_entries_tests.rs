#![cfg(unix)]

use std::ffi::OsStr;
use std::sync::Arc;

use super::{Entries, Kind};

fn sample() -> Vec<(&'static OsStr, Kind)> {
    vec![
        (OsStr::new("bin"), Kind::Dir),
        (OsStr::new("python3"), Kind::Link),
        (OsStr::new("README"), Kind::Other),
    ]
}

#[test]
fn built_entries_give_back_names_and_kinds_in_order() {
    let e = Entries::build(sample()).unwrap();
    assert_eq!(e.len(), 3);
    assert!(!e.is_empty());
    assert_eq!(e.iter().collect::<Vec<_>>(), sample());
    assert!(Entries::build([]).unwrap().is_empty());
}

#[test]
fn a_name_too_long_for_the_encoding_is_not_kept() {
    let long = "x".repeat(70_000);
    assert!(Entries::build([(OsStr::new(&long), Kind::Other)]).is_none());
}

#[test]
fn entries_taken_from_a_record_share_its_bytes_and_copy_nothing() {
    // Two directories' entries back to back, as a record keeps them.
    let a = Entries::build(sample()).unwrap();
    let b = Entries::build([(OsStr::new("lib"), Kind::Dir)]).unwrap();
    let mut rec = a.bytes().to_vec();
    rec.extend_from_slice(b.bytes());
    let buf = Arc::new(rec);
    let (ta, next) = Entries::take(&buf, 0, 3).unwrap();
    let (tb, end) = Entries::take(&buf, next, 1).unwrap();
    assert_eq!(end, buf.len());
    assert_eq!(ta.iter().collect::<Vec<_>>(), sample());
    assert_eq!(
        tb.iter().collect::<Vec<_>>(),
        vec![(OsStr::new("lib"), Kind::Dir)]
    );
    // The record is held once: both are slices of it; a clone is a reference.
    let c = ta.clone();
    assert_eq!(Arc::strong_count(&buf), 4);
    assert!(std::ptr::eq(c.bytes().as_ptr(), buf.as_ptr()));
    assert!(std::ptr::eq(tb.bytes().as_ptr(), buf[next..].as_ptr()));
}

#[test]
fn a_cut_or_malformed_record_is_refused() {
    let a = Entries::build(sample()).unwrap();
    let bytes = a.bytes().to_vec();
    let cut = Arc::new(bytes[..bytes.len() - 1].to_vec());
    assert!(Entries::take(&cut, 0, 3).is_none());
    let more = Arc::new(bytes.clone());
    assert!(Entries::take(&more, 0, 4).is_none());
    let mut bad = bytes.clone();
    bad[0] = 9;
    assert!(Entries::take(&Arc::new(bad), 0, 3).is_none());
    // An unknown kind is never written: a record holding one is refused.
    let unknown = Entries::build([(OsStr::new("x"), Kind::Unknown)]).unwrap();
    assert!(Entries::take(&Arc::new(unknown.bytes().to_vec()), 0, 1).is_none());
}
