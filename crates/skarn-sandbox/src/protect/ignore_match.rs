//! A git ignore file's patterns matched the cautious way (for
//! [`crate::protect::shadow_visible`]): a path is taken as ignored when any
//! pattern might ignore it. Negations (`!`) are not applied, a pattern for
//! directories only (`name/`) matches files too, a bracket class matches
//! any one character, `**` matches across `/`, and case is not minded: each
//! can only call more paths ignored than git does, never fewer.

/// Whether a pattern of the ignore file `text`, which lies in the
/// directory `base` names in from the repository's top (`base` empty at
/// the top), might ignore `path` (names from the top) or a directory it
/// lies in.
pub fn might_ignore(text: &[u8], base: &[&[u8]], path: &[&[u8]]) -> bool {
    let Some(rest) = path.strip_prefix(base) else {
        return false;
    };
    text.split(|b| *b == b'\n').any(|line| {
        let Some(pat) = pattern(line) else {
            return false;
        };
        let anchored = pat[..pat.len() - 1].contains(&b'/') || pat.first() == Some(&b'/');
        let pat = pat.strip_prefix(b"/").unwrap_or(pat);
        let pat = pat.strip_suffix(b"/").unwrap_or(pat);
        (1..=rest.len()).any(|k| {
            if anchored {
                glob(pat, &rest[..k].join(&b'/'))
            } else {
                glob(pat, rest[k - 1])
            }
        })
    })
}

/// The pattern of one line, None for a blank line, a comment or a
/// negation.
fn pattern(line: &[u8]) -> Option<&[u8]> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut end = line.len();
    while end > 0 && line[end - 1] == b' ' && !(end >= 2 && line[end - 2] == b'\\') {
        end -= 1;
    }
    let p = &line[..end];
    if p.is_empty() || p[0] == b'#' || p[0] == b'!' || p == b"/" {
        return None;
    }
    Some(p)
}

/// Whether the glob `p` might match `s` (see the module's note).
fn glob(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => {
            let deep = rest.first() == Some(&b'*');
            let rest = if deep { &rest[1..] } else { rest };
            (0..=s.len())
                .take_while(|&i| deep || i == 0 || s[i - 1] != b'/')
                .any(|i| glob(rest, &s[i..]))
        }
        Some((b'?', rest)) => s.first().is_some_and(|c| *c != b'/') && glob(rest, &s[1..]),
        Some((b'[', rest)) => match rest.iter().skip(1).position(|b| *b == b']') {
            Some(close) => {
                s.first().is_some_and(|c| *c != b'/') && glob(&rest[close + 2..], &s[1..])
            }
            None => s.first() == Some(&b'[') && glob(rest, &s[1..]),
        },
        Some((b'\\', rest)) if !rest.is_empty() => {
            s.first().is_some_and(|c| c.eq_ignore_ascii_case(&rest[0])) && glob(&rest[1..], &s[1..])
        }
        Some((c, rest)) => {
            s.first().is_some_and(|x| x.eq_ignore_ascii_case(c)) && glob(rest, &s[1..])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ig(text: &str, base: &[&str], path: &str) -> bool {
        let b: Vec<&[u8]> = base.iter().map(|s| s.as_bytes()).collect();
        let p: Vec<&[u8]> = path.split('/').map(str::as_bytes).collect();
        might_ignore(text.as_bytes(), &b, &p)
    }

    #[test]
    fn patterns_match_at_least_as_git_does() {
        assert!(ig("*\n", &[], "json.py"));
        assert!(ig("build/\n", &[], "build/json/__init__.py"));
        assert!(ig("/json/\n", &[], "json/__init__.py"));
        assert!(ig("json.py\n", &[], "a/b/json.py"));
        assert!(ig("a/**/x\n", &[], "a/b/c/x/json.py"));
        assert!(ig("*.py\n", &["tools"], "tools/json.py"));
        assert!(ig("t?ken.[pq]y\n", &[], "token.py"));
        assert!(ig("TOKEN.PY\n", &[], "token.py"));
        assert!(ig("**/email\n", &[], "x/email/__init__.py"));
        assert!(!ig("*.py\n", &["tools"], "token.py"));
        assert!(!ig("build/\n# token.py\n!token.py\n", &[], "token.py"));
        assert!(!ig("/lib/json.py\n", &[], "json.py"));
        assert!(!ig("a/*.py\n", &[], "a/b/json.py"));
        assert!(!ig("", &[], "token.py"));
    }
}
