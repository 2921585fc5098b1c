//! The fallback of the `.envrc` reader for what it cannot resolve (attack
//! atk24d F4, ADR 0198): every path the text mentions, not only the
//! usual companions. Each literal piece of a word that names an existing
//! path below the `.envrc`'s directory, or looks like a file path (a
//! `/` inside, a leading dot, an extension), is named; a literal tail
//! after a substitution (`"$(find_up x)/scripts/env.sh"`) is named below
//! the directory and below each of its ancestors up to the git top.

use std::path::{Path, PathBuf};

use crate::protect::shell_words;

/// Lines read at most (the text is bounded by the reader already).
const MAX_LINES: usize = 65_536;

/// The paths `text` mentions, below `dir` (or its git top for tails).
pub(super) fn mentioned(text: &str, dir: &Path) -> Vec<PathBuf> {
    let top = super::envrc_static::git_top(dir);
    let ups: Vec<&Path> = dir
        .ancestors()
        .take(64)
        .take_while(|a| top.as_deref().is_some_and(|t| a.starts_with(t)) || *a == dir)
        .collect();
    let mut out = Vec::new();
    for line in text.lines().take(MAX_LINES) {
        for piece in shell_words::path_pieces(line) {
            for (i, lit) in literals(&piece).into_iter().enumerate() {
                if lit.starts_with("//") {
                    continue; // (a URL's host and path)
                }
                let mut after_subst = i > 0 || piece.starts_with('$');
                if lit.starts_with('/') {
                    let p = crate::policy::config::normalize(Path::new(&lit));
                    if p.starts_with(dir) {
                        if p != dir {
                            out.push(p);
                        }
                        continue;
                    }
                    // (Split off a substitution by the line's pieces:
                    // `"$(x)/tail"`.)
                    after_subst = true;
                }
                let rel = lit.trim_start_matches("./");
                let rel = if after_subst {
                    rel.trim_start_matches('/')
                } else {
                    rel
                };
                if !plausible(rel) && std::fs::symlink_metadata(dir.join(rel)).is_err() {
                    continue;
                }
                let bases: &[&Path] = if after_subst { &ups } else { &[dir] };
                for b in bases {
                    let p = crate::policy::config::normalize(&b.join(rel));
                    if p.starts_with(b) && p != *b {
                        out.push(p);
                    }
                }
            }
        }
    }
    out
}

/// The literal pieces of a word between `$(...)`, `${...}`, `$NAME` and
/// `` `...` `` (braces `{a,b}` expanded).
fn literals(w: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = w.chars().peekable();
    while let Some(c) = chars.next() {
        let skip_to = match (c, chars.peek()) {
            ('$', Some('(')) => Some(')'),
            ('$', Some('{')) => Some('}'),
            ('`', _) => Some('`'),
            ('$', Some(n)) if n.is_ascii_alphanumeric() || *n == '_' => {
                while chars
                    .peek()
                    .is_some_and(|n| n.is_ascii_alphanumeric() || *n == '_')
                {
                    chars.next();
                }
                None
            }
            _ => {
                cur.push(c);
                continue;
            }
        };
        out.push(std::mem::take(&mut cur));
        if let Some(end) = skip_to {
            if c == '$' {
                chars.next();
            }
            let mut depth = 1u32;
            for d in chars.by_ref() {
                if end == ')' && d == '(' {
                    depth += 1;
                } else if d == end {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
        }
    }
    out.push(cur);
    out.into_iter()
        .filter(|l| !l.is_empty())
        .flat_map(|l| super::envrc_static::braces(&l).unwrap_or_else(|| vec![l]))
        .collect()
}

/// A file path by its shape: path characters only, and a `/` inside, a
/// leading dot or an extension starting with a letter.
fn plausible(s: &str) -> bool {
    if s.is_empty() || s.len() > 4096 || s.starts_with('-') || s == "." || s == ".." {
        return false;
    }
    if !s
        .chars()
        .all(|c| c.is_alphanumeric() || "._-+@%/,".contains(c))
    {
        return false;
    }
    let last = s.trim_end_matches('/').rsplit('/').next().unwrap_or(s);
    s.contains('/')
        || last.starts_with('.')
        || last
            .rsplit_once('.')
            .is_some_and(|(b, e)| !b.is_empty() && e.starts_with(|c: char| c.is_ascii_alphabetic()))
}

// (Unix paths.)
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_named() {
        let d = Path::new("/w");
        let m = mentioned(
            "source_env \"$(find_up x)/scripts/env.sh\"\neval \"$(lorri direnv)\" # v1.2\n\
             source_env_if_exists ${SRC}.envrc.dev\nexport X=https://example.invalid/a",
            d,
        );
        for want in ["/w/scripts/env.sh", "/w/.envrc.dev"] {
            assert!(m.contains(&PathBuf::from(want)), "{want}: {m:?}");
        }
        assert!(
            !m.iter().any(|p| p.to_string_lossy().contains("1.2")),
            "{m:?}"
        );
        assert!(!m.iter().any(|p| p == Path::new("/w/source_env")), "{m:?}");
    }
}
