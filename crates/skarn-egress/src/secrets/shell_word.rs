//! A word of a `command` source read as the program it runs reads it: a
//! shell string's `~/`, `$NAME` and `${NAME}` expanded against the
//! caller's environment (the source runs with it), so `sh -c
//! "$HOME/tools/tok.sh"` names the same script as `~/tools/tok.sh`
//! (attack atk27k F1, F2). A form this does not follow (`${NAME:-...}`,
//! `~user/`) is reported as unknown: the check that a source runs nothing
//! a sandboxed run could change refuses it rather than guess.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A word opening with `~/` (or `~` alone) with the home put in front of
/// the rest, as the shell does it: text joined, never a path join, so
/// `~//opt/t` is `<home>//opt/t` and not `/opt/t` (atk27m F1). The one
/// expansion both running a source and every check of it use; `None`
/// when the word does not open with the home.
pub(super) fn home_word(w: &str, home: &Path) -> Option<PathBuf> {
    let rest = w.strip_prefix('~')?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let mut out = OsString::from(home.as_os_str());
    out.push(rest);
    Some(PathBuf::from(out))
}

/// `w` expanded; `None` when it uses a form not followed here.
pub(super) fn expand_word(w: &str, home: Option<&Path>) -> Option<String> {
    let var = |name: &str| -> String {
        if name == "HOME"
            && let Some(h) = home
        {
            return h.to_string_lossy().into_owned();
        }
        std::env::var(name).unwrap_or_default()
    };
    let mut out = String::new();
    let rest = match w.strip_prefix('~') {
        Some(r) if r.is_empty() || r.starts_with('/') => {
            // The home's text; the rest is read below like any other
            // text, so the whole is `home_word(w)`.
            out.push_str(&home_word("~", Path::new(&var("HOME")))?.to_string_lossy());
            r
        }
        Some(_) => return None,
        None => w,
    };
    let mut chars = rest.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        match chars.peek().map(|&(_, n)| n) {
            Some('{') => {
                let tail = &rest[i + 2..];
                let end = tail.find('}')?;
                let name = &tail[..end];
                if !is_name(name) {
                    return None;
                }
                out.push_str(&var(name));
                // Skip the name and the brace.
                for _ in 0..=name.chars().count() {
                    chars.next();
                }
                chars.next();
            }
            Some(n) if n.is_ascii_alphabetic() || n == '_' => {
                let tail = &rest[i + 1..];
                let len = tail
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(tail.len());
                out.push_str(&var(&tail[..len]));
                for _ in 0..len {
                    chars.next();
                }
            }
            // Positional and special parameters: `sh -c`'s are the other
            // words of the command (judged on their own), `$$` a number.
            Some(n) if n.is_ascii_digit() || "@*#?$!-".contains(n) => {
                chars.next();
            }
            // `$(`, `$'...'`, `$"..."`: not followed.
            Some('(' | '\'' | '"') => return None,
            _ => out.push('$'),
        }
    }
    Some(out)
}

fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_and_variables_are_expanded_other_forms_are_unknown() {
        let h = Some(Path::new("/home/u"));
        assert_eq!(expand_word("$HOME/t.sh", h).unwrap(), "/home/u/t.sh");
        assert_eq!(expand_word("${HOME}/t.sh", h).unwrap(), "/home/u/t.sh");
        assert_eq!(expand_word("~/t.sh", h).unwrap(), "/home/u/t.sh");
        assert_eq!(expand_word("/a/$1/b", h).unwrap(), "/a//b");
        assert_eq!(expand_word("cost$", h).unwrap(), "cost$");
        assert_eq!(expand_word("$SKARN_SURELY_UNSET_VAR_X/t", h).unwrap(), "/t");
        assert_eq!(expand_word("${HOME:-/x}/t.sh", h), None);
        assert_eq!(expand_word("~root/t.sh", h), None);
        assert_eq!(expand_word("$(", h), None);
        // Text joined as the shell joins it (atk27m F1).
        assert_eq!(expand_word("~//opt/t", h).unwrap(), "/home/u//opt/t");
        assert_eq!(
            home_word("~//opt/t", Path::new("/home/u")).unwrap(),
            Path::new("/home/u//opt/t")
        );
        assert_eq!(
            home_word("~", Path::new("/home/u")).unwrap(),
            Path::new("/home/u")
        );
        assert_eq!(home_word("~x/t", Path::new("/home/u")), None);
    }
}
