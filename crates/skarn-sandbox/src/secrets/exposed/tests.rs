use super::*;

#[test]
fn a_record_is_per_value_and_cleared_by_name() {
    let dir = skarn_test_support::TempDir::new("exposed_marks");
    let home = dir.path();
    let a = mark(home, "gh", b"value-one-0123456789").unwrap();
    let b = mark(home, "gh", b"value-two-0123456789").unwrap();
    let c = mark(home, "ghx", b"value-one-0123456789").unwrap();
    assert_ne!(a, b);
    assert!(!is_marked(&a));
    record(&a, "a request").unwrap();
    record(&c, "a file").unwrap();
    assert!(is_marked(&a) && !is_marked(&b) && is_marked(&c));
    assert_eq!(clear(home, "gh").unwrap(), vec![a.clone()]);
    assert!(!is_marked(&a) && is_marked(&c));
    assert_eq!(
        mark(home, "a b", b"x")
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .split('.')
            .next(),
        Some("x612062")
    );
}
