//! Does a URI match an RFC 6570 URI template? Used to route
//! `resources/read` to the server whose resource template produced the URI.
//!
//! Literal parts must match exactly. Expressions match what their operator
//! can expand to: `{var}` (and `{x,y}`) a non-empty run without `/`, `?` or
//! `#`; `{+var}` any non-empty run; `{#var}` `#` and any run; `{.var}` `.`
//! and a run without `/`; `{/var}` one `/segment`, `{/var*}` one or more;
//! `{;var}`, `{?var}`, `{&var}` their prefix and a run without `#`, or
//! nothing (the variables may be undefined). A malformed template matches
//! nothing.

use std::collections::HashSet;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Lit(Vec<u8>),
    Expr { op: Option<u8>, explode: bool },
}

fn parse(template: &str) -> Option<Vec<Part>> {
    let mut parts = Vec::new();
    let mut rest = template.as_bytes();
    while !rest.is_empty() {
        match rest.iter().position(|&b| b == b'{') {
            Some(0) => {
                let close = rest.iter().position(|&b| b == b'}')?;
                let body = &rest[1..close];
                let (op, names) = match body.first() {
                    Some(c @ (b'+' | b'#' | b'.' | b'/' | b';' | b'?' | b'&')) => {
                        (Some(*c), &body[1..])
                    }
                    _ => (None, body),
                };
                if names.is_empty() || names.contains(&b'{') {
                    return None;
                }
                parts.push(Part::Expr {
                    op,
                    explode: names.ends_with(b"*"),
                });
                rest = &rest[close + 1..];
            }
            Some(i) => {
                if rest[..i].contains(&b'}') {
                    return None;
                }
                parts.push(Part::Lit(rest[..i].to_vec()));
                rest = &rest[i..];
            }
            None => {
                if rest.contains(&b'}') {
                    return None;
                }
                parts.push(Part::Lit(rest.to_vec()));
                rest = &[];
            }
        }
    }
    Some(parts)
}

/// Every end position in `uri` that expression `op` can consume up to,
/// starting at `at`.
fn ends(uri: &[u8], at: usize, op: Option<u8>, explode: bool) -> Vec<usize> {
    let run = |from: usize, stop: &dyn Fn(u8) -> bool| -> usize {
        let mut i = from;
        while i < uri.len() && !stop(uri[i]) {
            i += 1;
        }
        i
    };
    let nonempty_run = |from: usize, stop: &dyn Fn(u8) -> bool| -> Vec<usize> {
        (from + 1..=run(from, stop)).collect()
    };
    let prefixed = |c: u8| at < uri.len() && uri[at] == c;
    match op {
        None => nonempty_run(at, &|b| matches!(b, b'/' | b'?' | b'#')),
        Some(b'+') => (at + 1..=uri.len()).collect(),
        Some(b'#') if prefixed(b'#') => (at + 2..=uri.len()).collect(),
        Some(b'.') if prefixed(b'.') => nonempty_run(at + 1, &|b| matches!(b, b'/' | b'?' | b'#')),
        Some(b'/') if prefixed(b'/') => {
            let mut out = Vec::new();
            let mut pos = at;
            while pos < uri.len() && uri[pos] == b'/' {
                let seg = nonempty_run(pos + 1, &|b| matches!(b, b'/' | b'?' | b'#'));
                let Some(&last) = seg.last() else { break };
                out.extend(seg);
                if !explode {
                    break;
                }
                pos = last;
            }
            out
        }
        Some(c @ (b';' | b'?' | b'&')) => {
            let mut out = vec![at];
            if prefixed(c) {
                out.extend(at + 1..=run(at + 1, &|b| b == b'#'));
            }
            out
        }
        _ => Vec::new(),
    }
}

/// Backtracking over (part, position) states, each tried once, so the cost
/// stays polynomial whatever the template.
fn match_from(
    parts: &[Part],
    i: usize,
    uri: &[u8],
    at: usize,
    failed: &mut HashSet<(usize, usize)>,
) -> bool {
    let Some(part) = parts.get(i) else {
        return at == uri.len();
    };
    if failed.contains(&(i, at)) {
        return false;
    }
    let ok = match part {
        Part::Lit(l) => {
            uri[at..].starts_with(l) && match_from(parts, i + 1, uri, at + l.len(), failed)
        }
        Part::Expr { op, explode } => ends(uri, at, *op, *explode)
            .into_iter()
            .rev()
            .any(|end| match_from(parts, i + 1, uri, end, failed)),
    };
    if !ok {
        failed.insert((i, at));
    }
    ok
}

/// Whether `uri` is one of the URIs `template` can expand to.
pub fn matches(template: &str, uri: &str) -> bool {
    match parse(template) {
        Some(parts) => match_from(&parts, 0, uri.as_bytes(), 0, &mut HashSet::new()),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn level_one_and_operators() {
        assert!(matches("notes://alice/{path}", "notes://alice/todo"));
        assert!(!matches("notes://alice/{path}", "notes://alice/"));
        assert!(!matches("notes://alice/{path}", "notes://alice/a/b"));
        assert!(!matches("notes://alice/{path}", "notes://bob/todo"));
        assert!(matches(
            "notes://{user}/inbox/{id}",
            "notes://alice/inbox/7"
        ));
        assert!(!matches("notes://alice/{path}", "notes://alice/inbox/7"));
        assert!(matches("file:///{+path}", "file:///a/b/c.txt"));
        assert!(matches("x://h{/seg*}", "x://h/a/b"));
        assert!(!matches("x://h{/seg}", "x://h/a/b"));
        assert!(matches("x://h{/seg}", "x://h/a"));
        assert!(matches("x://s/{id}{?q,r}", "x://s/1"));
        assert!(matches("x://s/{id}{?q,r}", "x://s/1?q=2&r=3"));
        assert!(matches("x://s/{id}.{ext}", "x://s/a.b.json"));
        assert!(matches("x://d{#frag}", "x://d#top"));
        assert!(!matches("x://{unclosed", "x://a"));
        assert!(!matches("x://a}", "x://a}"));
        assert!(matches("plain://exact", "plain://exact"));
    }
}
