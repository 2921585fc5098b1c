use super::allowed;

const FILE: u32 = 0o100000;
const DIR: u32 = 0o040000;

#[test]
fn a_new_entry_gets_no_group_or_other_write_and_no_set_id_bits() {
    assert_eq!(allowed(FILE | 0o777, None), 0o755);
    assert_eq!(allowed(FILE | 0o4777, None), 0o755);
    assert_eq!(allowed(FILE | 0o2644, None), 0o644);
    assert_eq!(allowed(DIR | 0o1777, None), 0o755);
    assert_eq!(allowed(FILE | 0o600, None), 0o600);
    assert_eq!(allowed(FILE | 0o444, None), 0o444);
}

#[test]
fn an_existing_entry_keeps_what_the_host_had_and_narrows() {
    // `chmod 0777 .git`, `chmod 0666 .git/config`.
    assert_eq!(allowed(DIR | 0o777, Some(DIR | 0o755)), 0o755);
    assert_eq!(allowed(FILE | 0o666, Some(FILE | 0o644)), 0o644);
    // A shared directory the host made group-writable and set-group-ID.
    assert_eq!(allowed(DIR | 0o2777, Some(DIR | 0o2775)), 0o2775);
    assert_eq!(allowed(DIR | 0o1777, Some(DIR | 0o1777)), 0o1777);
    // Narrowing applies; other bits (execute) are the run's.
    assert_eq!(allowed(FILE | 0o600, Some(FILE | 0o666)), 0o600);
    assert_eq!(allowed(FILE | 0o755, Some(FILE | 0o644)), 0o755);
    assert_eq!(allowed(FILE | 0o4755, Some(FILE | 0o755)), 0o755);
    // A host entry of another kind counts as none.
    assert_eq!(allowed(DIR | 0o777, Some(FILE | 0o777)), 0o755);
}
