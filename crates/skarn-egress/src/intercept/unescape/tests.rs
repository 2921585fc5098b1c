use super::*;

proptest::proptest! {
    /// The fast copy decodes exactly as the shadow does.
    #[test]
    fn decoded_is_the_shadow_s_bytes(
        raw in proptest::collection::vec(proptest::sample::select(
            b"\\%&#;xuUd0123456789abcdefABCDEF\"nqzpt;&amp;lt;".to_vec()), 0..80)
    ) {
        proptest::prop_assert_eq!(decoded(&raw), Shadow::of(&raw).map(|s| s.bytes));
    }

    /// The escape list, its gaps copied literally, is the shadow's bytes.
    #[test]
    fn escapes_rebuild_the_shadow(
        raw in proptest::collection::vec(proptest::sample::select(
            b"\\%&#;xuUd0123456789abcdefABCDEF\"nqzpt;&amp;lt;".to_vec()), 0..80)
    ) {
        let escs = escapes(&raw);
        let mut out = Vec::new();
        let mut at = 0;
        for e in &escs {
            out.extend_from_slice(&raw[at..e.at]);
            out.extend_from_slice(e.bytes());
            at = e.at + e.len;
        }
        out.extend_from_slice(&raw[at..]);
        let want = Shadow::of(&raw).map_or(raw.clone(), |s| s.bytes);
        proptest::prop_assert_eq!(out, want);
    }
}

#[test]
fn escapes_decode_with_their_spans() {
    let raw = br#"a\"b\u00e9%41\ud83d\ude00\q%zz"#;
    let s = Shadow::of(raw).unwrap();
    assert_eq!(s.bytes, "a\"béA😀\\q%zz".as_bytes());
    assert_eq!(s.span(1, raw.len()), (1, 3));
    assert_eq!(s.span(3, raw.len()), (4, 10));
    assert_eq!(s.span(4, raw.len()), (4, 10));
    assert_eq!(s.span(5, raw.len()), (10, 13));
    assert_eq!(s.span(6, raw.len()), (13, 25));
    assert!(Shadow::of(b"plain text").is_none());
    // C and HTML forms (atk27c F1).
    let raw = br"\x41\102&#67;&#x44;&#0069;&#;&#x;\x4";
    let s = Shadow::of(raw).unwrap();
    assert_eq!(s.bytes, br"ABCDE&#;&#x;\x4");
    for (slot, r, want) in [
        (&br"\x41"[..], b'Z', &br"\x5a"[..]),
        (br"\101", b'Z', br"\132"),
        (b"&#65;", b'Z', b"&#90;"),
        (b"&#x41;", b'Z', b"&#x5a;"),
        (b"&#0065;", b'Z', b"&#0090;"),
        (b"&#9;", b'Z', b"ZZZZ"),
    ] {
        let mut v = slot.to_vec();
        rewrite(&mut v, r);
        assert_eq!(v, want, "{}", String::from_utf8_lossy(slot));
    }
    assert!(Shadow::of(b"100% \\x").is_none());
    let mut slot = *b"\\u00e9";
    rewrite(&mut slot, b'Q');
    assert_eq!(&slot, b"\\u0051");
    let mut slot = *b"%41";
    rewrite(&mut slot, b'Q');
    assert_eq!(&slot, b"%51");
}

/// atk27l F11, F11b: braced escapes with leading zeros or `_`
/// separators and `\U` with eight digits decode as JavaScript, Rust,
/// Perl, Python and YAML read them; each rewrites to its own form.
#[test]
fn html_named_references_decode() {
    let s =
        Shadow::of(b"a&quot;b&lt;c&gt;d&amp;e&apos;f&sol;g&bsol;h&ampi&UnderBar;&bogus;").unwrap();
    assert_eq!(s.bytes, b"a\"b<c>d&e'f/g\\h&i_&bogus;");
}
