//! Tests of [`super`]: git's configuration syntax as git reads it.

use super::*;

#[test]
fn sections_subsections_and_values() {
    let p = parse(
        "# c\n[core]\n\tbare = false ; x\n\tHooksPath = \"a b\"\\\n c\n[remote \"Or\\\"g\"] url = u\n\
         [Sec.Sub]\nflag\n[x]\nk = a\\tb  # tail\n",
    );
    assert!(p.bad_lines.is_empty(), "{:?}", p.bad_lines);
    let keys: Vec<String> = p.items.iter().map(|i| i.key()).collect();
    assert_eq!(
        keys,
        [
            "core.bare",
            "core.hookspath",
            "remote.Or\"g.url",
            "sec.sub.flag",
            "x.k"
        ]
    );
    assert_eq!(p.items[1].value.as_deref(), Some("a b c"));
    assert_eq!(p.items[3].value, None);
    assert_eq!(p.items[4].value.as_deref(), Some("a\tb"));
}

#[test]
fn a_backslash_in_a_comment_does_not_hide_the_next_line() {
    // Git reads both planted keys; so must the vetting.
    for text in [
        "# \\\n[core] fsmonitor = \"x\"\n",
        "; \\\n[core]\n\tfsmonitor = x\n",
        "[user]\n\tname = x ;\\\n[core] fsmonitor = y\n",
        "[user]\n\tname = x # \"\\\n[core] fsmonitor = y\n",
    ] {
        let p = parse(text);
        assert!(
            p.items.iter().any(|i| i.key() == "core.fsmonitor"),
            "{text:?}: {:?}",
            p.items
        );
    }
    // Inside a value (quoted or not) the backslash still continues.
    let p = parse("[a]\n\tk = \"x ; \\\n y\"\n\tm = 1\\\n2\n");
    assert_eq!(p.items[0].value.as_deref(), Some("x ;  y"));
    assert_eq!(p.items[1].value.as_deref(), Some("12"));
}

#[test]
fn headers_follow_each_other_on_a_line() {
    // Fuzz finding (gitconfig target, session 5): git reads
    // `[core][core]` as two headers; we reported a bad line.
    let p = parse("[core][core]\n\thooksPath = ../h\n[a] [b \"c\"] x = 1\n");
    assert!(p.bad_lines.is_empty(), "{:?}", p.bad_lines);
    let keys: Vec<String> = p.items.iter().map(Item::key).collect();
    assert_eq!(keys, ["core.hookspath", "b.c.x"]);
}

#[test]
fn bad_lines_are_reported_not_fatal() {
    // Git reads a key before any section (`k`); the rest it refuses.
    let p = parse("k = v\n[core\n[ok]\n= x\nv = \"open\nw = \\q\n");
    assert_eq!(p.bad_lines, [2, 4, 5, 6]);
    assert_eq!(p.items.len(), 1);
    assert_eq!(p.items[0].key(), "k");
}

#[test]
fn write_round_trips() {
    let p = parse("[a \"s\\\\x\"]\n k = \"q\\\"\\n\"\n[b]\n f\n");
    let back = parse(&write(&p.items));
    assert_eq!(back, p);
}

#[test]
fn write_leaves_out_what_git_cannot_read_back() {
    // A NUL-cut subsection gives a name with a blank; a key before any
    // header has no section.
    let p = parse("k = 1\n[alias \"x y\0\"]\n\tk = v\n[user]\n\tname = n\n");
    assert_eq!(p.items.len(), 3);
    let back = parse(&write(&p.items));
    assert!(back.bad_lines.is_empty(), "{:?}", write(&p.items));
    assert_eq!(back.items.len(), 1);
    assert_eq!(back.items[0].key(), "user.name");
}

#[test]
fn write_never_changes_a_setting_it_cannot_spell() {
    // Found by the `dotfiles` fuzz target: a form feed in a subsection
    // was dropped, so the setting applied to another URL pattern. A
    // subsection keeps its characters as they are (git has no escapes
    // there but `\\` and `\"`); a value with a control character git
    // has no escape for is left out whole.
    let p = parse(
        "[http \"a\x0cb\\\"\"]\n\tsslVerify = false\n[user]\n\tname = \"x\x07y\"\n\temail = e\n",
    );
    assert_eq!(p.items.len(), 3);
    let back = parse(&write(&p.items));
    assert!(back.bad_lines.is_empty(), "{:?}", write(&p.items));
    let keys: Vec<String> = back.items.iter().map(Item::key).collect();
    assert_eq!(
        keys,
        ["http.a\x0cb\".sslverify", "user.email"],
        "{:?}",
        write(&p.items)
    );
}

#[test]
fn booleans() {
    assert!(is_true(None) && is_true(Some("Yes")) && !is_true(Some("0")));
}

#[test]
fn bytes_that_are_not_utf8_are_kept() {
    // Fuzz finding 17: `\xdf"\xa6"` is the one character U+07E6 to git
    // (the quotes go, the bytes meet); one U+FFFD per byte made it another
    // value, and as `core.hooksPath` another directory.
    let text = decode_bytes(b"[core]\n\thooksPath = ho\xdf\"\xa6\"ks\xff\n");
    let p = parse(&text);
    assert!(p.bad_lines.is_empty(), "{:?}", p.bad_lines);
    let v = p.items[0].value.as_deref().unwrap();
    assert_eq!(raw_bytes(v), b"ho\xdf\xa6ks\xff");
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(value_path(v).as_os_str().as_bytes(), b"ho\xdf\xa6ks\xff");
    }
}

#[test]
fn the_byte_stand_ins_round_trip_every_input() {
    let mut inputs: Vec<Vec<u8>> = vec![
        b"plain".to_vec(),
        vec![0xff, 0xfe, b'a', 0xc3],
        "\u{10FF41}x\u{10FFFF}".as_bytes().to_vec(),
        "caf\u{e9}".as_bytes().to_vec(),
    ];
    inputs.push((0..=255u8).collect());
    for b in inputs {
        assert_eq!(raw_bytes(&decode_bytes(&b)), b, "{b:?}");
    }
}
