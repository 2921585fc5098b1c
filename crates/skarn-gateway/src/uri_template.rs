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

/// Bytes that end a simple (`{var}`, `{.var}`, `{/var}`) expansion.
fn simple_stop(b: u8) -> bool {
    matches!(b, b'/' | b'?' | b'#')
}

/// Positions reachable after one expression, given the positions `from`
/// reachable before it (a set over `0..=uri.len()`). One pass over the URI,
/// whatever the set holds.
fn step_expr(uri: &[u8], from: &[bool], op: Option<u8>, explode: bool) -> Vec<bool> {
    let n = uri.len();
    let mut to = vec![false; n + 1];
    // `run_ends(start_ok, skip, stop)`: every `end` such that some `s` in
    // the set has `uri[s..s+skip]` as the prefix and `uri[s+skip..end]` a
    // non-empty run free of `stop` bytes.
    let runs = |starts: &[bool], to: &mut Vec<bool>, stop: &dyn Fn(u8) -> bool| {
        // `open`: a run started at or before `i` and not yet stopped.
        let mut open = false;
        for i in 0..n {
            if starts[i] {
                open = true;
            }
            if stop(uri[i]) {
                open = false;
                continue;
            }
            if open {
                to[i + 1] = true;
            }
        }
    };
    let prefixed = |c: u8| -> Vec<bool> {
        let mut s = vec![false; n + 1];
        for i in 0..n {
            if from[i] && uri[i] == c {
                s[i + 1] = true;
            }
        }
        s
    };
    match op {
        None => runs(from, &mut to, &simple_stop),
        Some(b'+') => runs(from, &mut to, &|_| false),
        Some(b'#') => runs(&prefixed(b'#'), &mut to, &|_| false),
        Some(b'.') => runs(&prefixed(b'.'), &mut to, &simple_stop),
        Some(b'/') => {
            let mut starts = prefixed(b'/');
            loop {
                let mut seg = vec![false; n + 1];
                runs(&starts, &mut seg, &simple_stop);
                let mut more = vec![false; n + 1];
                let mut grew = false;
                for i in 0..=n {
                    if seg[i] && !to[i] {
                        to[i] = true;
                        if explode && i < n && uri[i] == b'/' && !starts[i + 1] {
                            more[i + 1] = true;
                            grew = true;
                        }
                    }
                }
                if !grew {
                    break;
                }
                starts = more;
            }
        }
        Some(c @ (b';' | b'?' | b'&')) => {
            to.clone_from_slice(from);
            let pre = prefixed(c);
            // The prefix alone is a match too (an empty value).
            for i in 0..=n {
                if pre[i] {
                    to[i] = true;
                }
            }
            runs(&pre, &mut to, &|b| b == b'#');
        }
        _ => {}
    }
    to
}

/// Most (template bytes × URI bytes) one match may cost: a hostile template or URI
/// matches nothing rather than costing more.
const MAX_WORK: usize = 1 << 24;

/// Whether `uri` is one of the URIs `template` can expand to. The set of
/// positions reachable after each part is computed in one pass over the
/// URI, so the cost is linear in the URI for each part of the template.
pub fn matches(template: &str, uri: &str) -> bool {
    let mut budget = MAX_WORK;
    matches_within(template, uri, &mut budget)
}

/// Most work one URI's routing may cost over every template of one server
/// (see [`matches_within`]); each server has a budget of its own.
pub const MAX_ROUTE_WORK: usize = 1 << 26;

/// [`matches`], charging its work (template bytes × URI bytes) to
/// `budget`: false, without matching, once the budget cannot pay for it,
/// so that routing one URI against many templates stays bounded too.
pub fn matches_within(template: &str, uri: &str, budget: &mut usize) -> bool {
    let Some(parts) = parse(template) else {
        return false;
    };
    let uri = uri.as_bytes();
    let n = uri.len();
    let work = template.len().saturating_mul(n + 1);
    if work > MAX_WORK || work > *budget {
        return false;
    }
    *budget -= work;
    let mut at = vec![false; n + 1];
    at[0] = true;
    for part in &parts {
        at = match part {
            Part::Lit(l) => {
                let mut to = vec![false; n + 1];
                for i in 0..=n {
                    if at[i] && uri[i..].starts_with(l) {
                        to[i + l.len()] = true;
                    }
                }
                to
            }
            Part::Expr { op, explode } => step_expr(uri, &at, *op, *explode),
        };
        if !at.iter().any(|&b| b) {
            return false;
        }
    }
    at[n]
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
        assert!(matches("x://h{/seg*}/end", "x://h/a/b/end"));
        assert!(matches("x://{;p}", "x://;"));
        assert!(matches("x://{?q}#f", "x://#f"));
        assert!(!matches("x://{a}{b}", "x://a"));
        assert!(matches("x://{a}{b}", "x://ab"));
    }

    /// Templates of many adjacent expressions against long URIs that almost
    /// match: the old backtracking matcher took cubic time (a minute for a
    /// 2,000-byte URI); this one is linear per part. Counted, not timed: the
    /// matcher's work is what `MAX_WORK` bounds.
    #[test]
    fn adversarial_templates_stay_cheap() {
        let uri = format!("x://{}", "a".repeat(2000));
        let t = format!("x://{}b", "{+v}".repeat(200));
        assert!(!matches(&t, &uri));
        let t = format!("x://{}", "{v}".repeat(1000));
        assert!(matches(&t, &uri));
        let t = format!("x://{}/z", "{/v*}{+w}".repeat(300));
        assert!(!matches(&t, &format!("x://{}", "/a".repeat(1000))));
        // Past the work bound a match is refused, never computed.
        let huge = "a".repeat(1 << 20);
        assert!(!matches(&format!("{{+v}}{}", "{+w}".repeat(100)), &huge));
        // One budget over many templates: each within the per-match bound,
        // together past the routing bound.
        let uri = format!("x://{}", "a".repeat(4000));
        let t = format!("x://{}", "{+v}".repeat(1000));
        let mut budget = super::MAX_ROUTE_WORK;
        let matched = (0..100)
            .filter(|_| super::matches_within(&t, &uri, &mut budget))
            .count();
        assert!(matched > 0 && matched < 100, "{matched}");
    }
}
