//! `GIT_CONFIG_PARAMETERS`: the `-c key=value` items a git command hands
//! the git commands it starts, which git reads from the environment like
//! any configuration. A caller that has it set (an agent started by a git
//! hook, a wrapper that exports it) gives every host git the same items,
//! so the programs, directories and secret files they name count as the
//! configuration files' do.
//!
//! Git writes each item shell-quoted: `'key'='value'` (since 2.31), or
//! `'key=value'` (older), or `'key'` for a bare boolean, separated by
//! spaces; a `'` inside is written `'\''`.

/// The (key, value) items of a `GIT_CONFIG_PARAMETERS` value; `None` for
/// a bare key. Malformed text ends the list (git refuses it too).
pub fn parse(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut it = text.chars().peekable();
    loop {
        while it.peek().is_some_and(|c| c.is_whitespace()) {
            it.next();
        }
        if it.peek().is_none() {
            return out;
        }
        let Some(first) = word(&mut it) else {
            return out;
        };
        if it.peek() == Some(&'=') {
            it.next();
            let Some(v) = word(&mut it) else {
                return out;
            };
            out.push((first, Some(v)));
        } else {
            match first.split_once('=') {
                Some((k, v)) => out.push((k.to_string(), Some(v.to_string()))),
                None => out.push((first, None)),
            }
        }
        if out.len() >= 1000 {
            return out;
        }
    }
}

/// One shell-quoted word: quoted pieces and backslash-escaped characters,
/// up to white space or an unquoted `=`.
fn word(it: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<String> {
    let mut w = String::new();
    let mut any = false;
    while let Some(&c) = it.peek() {
        match c {
            '\'' => {
                it.next();
                loop {
                    match it.next()? {
                        '\'' => break,
                        ch => w.push(ch),
                    }
                }
                any = true;
            }
            '\\' => {
                it.next();
                w.push(it.next()?);
                any = true;
            }
            c if c.is_whitespace() || c == '=' => break,
            _ => return None,
        }
    }
    any.then_some(w)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn both_forms_and_quotes_inside_are_read() {
        let items = parse(
            "'core.pager'='less -R' 'http.https://h/.sslkey=/k/it'\\''s' 'core.bare' \
             'credential.helper'='store --file=/x'",
        );
        assert_eq!(
            items,
            vec![
                ("core.pager".to_string(), Some("less -R".to_string())),
                (
                    "http.https://h/.sslkey".to_string(),
                    Some("/k/it's".to_string())
                ),
                ("core.bare".to_string(), None),
                (
                    "credential.helper".to_string(),
                    Some("store --file=/x".to_string())
                ),
            ]
        );
        assert!(parse("core.pager=x").is_empty());
    }
}
