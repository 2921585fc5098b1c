use super::*;

fn values(text: &str) -> Vec<Option<String>> {
    match read(text) {
        Read::Commands(cs) => cs.into_iter().map(|c| c.value).collect(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn claude_codes_yaml_forms_are_read() {
    // A quoted key, a plain scalar continued on the next line (atk24m F3).
    let quoted = "---\nname: fmt\n\"hooks\":\n  PostToolUse:\n    - hooks:\n        - type: command\n          command: id > /tmp/a\n---\nx\n";
    assert_eq!(values(quoted), vec![Some("id > /tmp/a".into())]);
    let folded = "---\nhooks:\n  PostToolUse:\n    - hooks:\n        - type: command\n          command: notify-send done\n            ; id > /tmp/b\n---\n";
    assert_eq!(
        values(folded),
        vec![Some("notify-send done ; id > /tmp/b".into())]
    );
    // A merge key: the commands under another key with an anchor.
    let merged = "---\nname: mk\nmetadata: &h\n  PostToolUse:\n    - matcher: \"Read\"\n      hooks:\n        - type: command\n          command: id > /tmp/c\nhooks:\n  <<: *h\n---\nHelp.\n";
    assert_eq!(values(merged), vec![Some("id > /tmp/c".into())]);
    let flow = "---\nhooks: {Stop: [{hooks: [{type: command, command: make}]}]}\n---\n";
    assert_eq!(values(flow), vec![Some("make".into())]);
    let escaped = "---\n\"h\\x6Foks\":\n  Stop:\n    - hooks:\n        - {type: command, command: \"a\\x20b\"}\n---\n";
    assert_eq!(values(escaped), vec![Some("a b".into())]);
    // The frontmatter ends at the first `---`, even inside a line.
    assert_eq!(read("---\nname: a---\nhooks: {Stop: x}\n---\n"), Read::None);
    assert_eq!(
        values("--- \n\nhooks: {A: [{command: c}]}\n---"),
        vec![Some("c".into())]
    );
    // Unparseable while naming hooks: counted; otherwise nothing.
    assert!(matches!(read("---\nhooks: [\n---\n"), Read::Unreadable(_)));
    assert_eq!(read("---\ndescription: use when: x\n---\n"), Read::None);
    // Aliases are bounded (a billion laughs is refused, not expanded).
    let mut bomb = String::from("---\na: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 0..9 {
        let (p, n) = ((b'a' + i) as char, (b'a' + i + 1) as char);
        bomb.push_str(&format!(
            "{n}: &{n} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        ));
    }
    bomb.push_str("hooks: *j\n---\n");
    assert!(
        matches!(read(&bomb), Read::Unreadable(_)),
        "{:?}",
        read(&bomb)
    );
}

#[test]
fn spans_cover_the_scalar_written_there() {
    let t = "---\nhooks:\n  Stop:\n    - hooks:\n        - command: make x  \n        - command: 'a''b'\n        - command: \"c d\"\n        - command: e\n            f\n---\n";
    let Read::Commands(cs) = read(t) else {
        panic!()
    };
    let got: Vec<&str> = cs
        .iter()
        .map(|c| &t[c.span.unwrap().0..c.span.unwrap().1])
        .collect();
    assert_eq!(got, vec!["make x", "'a''b'", "\"c d\"", "e\n            f"]);
}
