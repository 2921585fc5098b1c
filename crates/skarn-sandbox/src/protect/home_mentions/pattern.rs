//! A shell word as a path pattern, and whether it can name a grant
//! (attack atk22c F1, ADR 0206). A word is a list of components: literal,
//! a glob of one component (`*`, `?`, `[...]`, an extglob group, a brace
//! group), or [`ANY`] (an unexpanded variable or command substitution:
//! any number of components).

use std::path::{Path, PathBuf};

/// Stands for an expansion not done (`$VAR`, `$(...)`, backquotes).
pub const ANY: char = '\u{2}';
/// Brace alternatives expanded at most per word; past it a brace group is
/// a glob (or [`ANY`] when it holds a `/`).
const MAX_BRACE: usize = 64;

/// One component of a word.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Comp {
    /// Plain text.
    Lit(String),
    /// A pattern of one component.
    Glob(String),
    /// Any number of components.
    Any,
}

/// Whether `s` holds a pattern character bash expands.
pub(crate) fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
        || ["@(", "+(", "!("].iter().any(|g| s.contains(g))
        || s.contains('{') && s.contains('}')
}

/// The words a brace group in `w` stands for (bounded, see [`MAX_BRACE`]).
pub fn braces(w: &str) -> Vec<String> {
    let mut out = vec![w.to_string()];
    let mut done = Vec::new();
    while let Some(cur) = out.pop() {
        match brace_group(&cur) {
            None => done.push(cur),
            Some((a, inner, b)) => {
                let alts = split_top(inner);
                if alts.len() < 2 {
                    let fill = if inner.contains('/') {
                        ANY.to_string()
                    } else {
                        "*".to_string()
                    };
                    done.push(format!("{a}{fill}{b}"));
                } else if done.len() + out.len() + alts.len() > MAX_BRACE {
                    done.push(format!("{a}{ANY}{b}"));
                } else {
                    out.extend(alts.iter().map(|x| format!("{a}{x}{b}")));
                }
            }
        }
        if done.len() > MAX_BRACE {
            return vec![w.replace(['{', '}'], &ANY.to_string())];
        }
    }
    done
}

/// The first top-level `{...}` group: (before, inner, after).
fn brace_group(w: &str) -> Option<(&str, &str, &str)> {
    let start = w.find('{')?;
    let mut depth = 0usize;
    for (i, c) in w[start..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    let end = start + i;
                    return Some((&w[..start], &w[start + 1..end], &w[end + 1..]));
                }
            }
            _ => {}
        }
    }
    None
}

/// `inner` split at commas outside nested braces.
fn split_top(inner: &str) -> Vec<&str> {
    let (mut out, mut depth, mut from) = (Vec::new(), 0usize, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&inner[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(&inner[from..]);
    out
}

/// The components of an absolute word (no braces left), `.` and `..`
/// resolved while the word is literal; a `..` after a pattern makes the
/// rest [`Comp::Any`].
pub(crate) fn comps(w: &str) -> Vec<Comp> {
    let mut out = vec![Comp::Lit("/".into())];
    for c in w.split('/').filter(|c| !c.is_empty() && *c != ".") {
        let literal_so_far = out.iter().all(|c| matches!(c, Comp::Lit(_)));
        if c == ".." {
            if literal_so_far {
                if out.len() > 1 {
                    out.pop();
                }
            } else {
                while out.last().is_some_and(|c| matches!(c, Comp::Lit(_))) {
                    out.pop();
                }
                out.pop();
                out.push(Comp::Any);
            }
        } else if c.contains(ANY) {
            out.push(Comp::Any);
        } else if has_glob(c) {
            out.push(Comp::Glob(c.to_string()));
        } else {
            out.push(Comp::Lit(c.to_string()));
        }
    }
    out
}

/// The path of a word with only literal components.
pub(crate) fn literal_path(c: &[Comp]) -> Option<PathBuf> {
    let mut p = PathBuf::new();
    for x in c {
        match x {
            Comp::Lit(s) => p.push(s),
            _ => return None,
        }
    }
    Some(p)
}

fn names(p: &Path) -> Vec<String> {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect()
}

fn comp_matches(c: &Comp, name: &str) -> bool {
    match c {
        Comp::Lit(s) => s == name,
        Comp::Glob(g) => glob(g.as_bytes(), name.as_bytes()),
        Comp::Any => true,
    }
}

/// Whether the word `w` can name `grant` or a path inside it, or (a
/// pattern) one of its directories deeper than `floor` components (the
/// home's depth for a grant in the home).
pub fn reaches(w: &[Comp], grant: &Path, floor: usize) -> bool {
    let g = names(grant);
    let Some(k) = w.iter().position(|c| *c == Comp::Any) else {
        let n = w.len().min(g.len());
        if !w[..n].iter().zip(&g).all(|(c, n)| comp_matches(c, n)) {
            return false;
        }
        return w.len() >= g.len() || w.len() > floor.max(2);
    };
    // A literal lead of more than `/`: it must lead to or into the grant.
    if k >= 2 {
        let n = k.min(g.len());
        return w[..n].iter().zip(&g).all(|(c, n)| comp_matches(c, n));
    }
    // An unknown lead: the known components after it must spell the
    // grant's last components (`$(dirname "$0")/proj/env.sh`).
    let tail: Vec<&Comp> = w[k + 1..].iter().take_while(|c| **c != Comp::Any).collect();
    if tail.is_empty() {
        return false;
    }
    (1..g.len()).any(|j| {
        g.len() - j <= tail.len() && g[j..].iter().zip(&tail).all(|(n, c)| comp_matches(c, n))
    })
}

/// Shell glob match of one component: `*`, `?`, `[...]` (ranges, `!`/`^`),
/// an extglob group as `*` (safe side). The work is bounded: past
/// [`MAX_GLOB_STEPS`] the answer is "matches" (safe side).
pub fn glob(p: &[u8], s: &[u8]) -> bool {
    let mut steps = 0usize;
    glob_in(p, s, &mut steps)
}

/// Match steps of one [`glob`] call at most.
const MAX_GLOB_STEPS: usize = 100_000;

fn glob_in(p: &[u8], s: &[u8], steps: &mut usize) -> bool {
    *steps += 1;
    if *steps > MAX_GLOB_STEPS {
        return true;
    }
    match p.split_first() {
        None => s.is_empty(),
        Some((b'@' | b'+' | b'!' | b'?' | b'*', rest)) if rest.first() == Some(&b'(') => {
            let close = rest
                .iter()
                .position(|b| *b == b')')
                .unwrap_or(rest.len() - 1);
            let mut q = b"*".to_vec();
            q.extend_from_slice(&rest[close + 1..]);
            glob_in(&q, s, steps)
        }
        Some((b'*', rest)) => {
            let rest = rest.strip_prefix(b"*").unwrap_or(rest);
            (0..=s.len()).any(|i| glob_in(rest, &s[i..], steps))
        }
        Some((b'?', rest)) => !s.is_empty() && glob_in(rest, &s[1..], steps),
        Some((b'[', rest)) => match class(rest) {
            Some((set, neg, after)) => {
                let Some((&c, srest)) = s.split_first() else {
                    return false;
                };
                in_class(set, c) != neg && glob_in(after, srest, steps)
            }
            None => s.first() == Some(&b'[') && glob_in(rest, &s[1..], steps),
        },
        Some((b'\\', rest)) if !rest.is_empty() => {
            s.first() == rest.first() && glob_in(&rest[1..], s.get(1..).unwrap_or(&[]), steps)
        }
        Some((c, rest)) => s.first() == Some(c) && glob_in(rest, &s[1..], steps),
    }
}

/// A bracket class after `[`: (its bytes, negated, the pattern after `]`).
fn class(p: &[u8]) -> Option<(&[u8], bool, &[u8])> {
    let neg = matches!(p.first(), Some(b'!' | b'^'));
    let body = if neg { &p[1..] } else { p };
    // A `]` first is part of the set.
    let end = body.iter().skip(1).position(|b| *b == b']')? + 1;
    Some((&body[..end], neg, &body[end + 1..]))
}

fn in_class(set: &[u8], c: u8) -> bool {
    // `[:alpha:]` and other named classes: any byte (safe side).
    if set.windows(2).any(|w| w == b"[:") {
        return true;
    }
    let mut i = 0;
    while i < set.len() {
        if i + 2 < set.len() && set[i + 1] == b'-' {
            if (set[i]..=set[i + 2]).contains(&c) {
                return true;
            }
            i += 3;
        } else {
            if set[i] == c {
                return true;
            }
            i += 1;
        }
    }
    false
}
