//! Values bash gives `.envrc` words without running a program of the
//! project (attack atk24d F4, ADR 0198): `$(pwd)`, `$(dirname
//! "${BASH_SOURCE[0]}")`, `$(git rev-parse --show-toplevel)`, `$(echo x)`,
//! `$(realpath x)`, `$(cd x && pwd)`, `${BASH_SOURCE[0]}`, and brace
//! expansion (`x.{a,b}`). Anything else in a substitution stays unknown
//! (the caller's fallback decides).

use std::path::{Path, PathBuf};

use crate::protect::shell_words::{self, Token};

/// Nesting of substitutions evaluated at most.
const MAX_DEPTH: usize = 4;
/// Words one brace expansion gives at most (past it: unknown).
const MAX_BRACES: usize = 64;

/// The git top above `dir` (`git rev-parse --show-toplevel`), if any.
pub(crate) fn git_top(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .take(64)
        .find(|a| std::fs::symlink_metadata(a.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

/// `word` with every `$(...)` replaced by its static value and
/// `${BASH_SOURCE[0]}` by the `.envrc`'s path; `None` when a
/// substitution has no static value.
pub fn substitute(word: &str, dir: &Path) -> Option<String> {
    sub(word, dir, 0)
}

fn sub(word: &str, dir: &Path, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return None;
    }
    let mut out = String::new();
    let mut rest = word;
    while let Some(at) = rest.find("$(") {
        out.push_str(&rest[..at]);
        let body = &rest[at + 2..];
        let end = closing(body)?;
        out.push_str(&value(&body[..end], dir, depth + 1)?);
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    Some(bash_source(&out, dir))
}

/// The index of the `)` closing a substitution body.
fn closing(body: &str) -> Option<usize> {
    let mut depth = 1u32;
    let mut quote: Option<char> = None;
    for (i, c) in body.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `$BASH_SOURCE`, `${BASH_SOURCE}`, `${BASH_SOURCE[0]}` and `$PWD`,
/// `${PWD}`: the `.envrc` (in `dir`) and `dir`.
fn bash_source(w: &str, dir: &Path) -> String {
    let envrc = dir.join(".envrc").display().to_string();
    let d = dir.display().to_string();
    let mut s = w
        .replace("${BASH_SOURCE[0]}", &envrc)
        .replace("${BASH_SOURCE}", &envrc)
        .replace("${PWD}", &d);
    for (name, v) in [("$BASH_SOURCE", &envrc), ("$PWD", &d)] {
        let mut out = String::new();
        let mut rest = s.as_str();
        while let Some(at) = rest.find(name) {
            let after = &rest[at + name.len()..];
            out.push_str(&rest[..at]);
            if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                out.push_str(name);
            } else {
                out.push_str(v);
            }
            rest = after;
        }
        out.push_str(rest);
        s = out;
    }
    s
}

/// What a substitution body prints, when bash knows it without running a
/// program of the project.
fn value(body: &str, dir: &Path, depth: usize) -> Option<String> {
    let cmds = shell_words::commands(body);
    let words = |c: &Vec<Token>| -> Option<Vec<String>> {
        c.iter()
            .map(|t| match t {
                Token::Word(w) => sub(w, dir, depth),
                _ => None,
            })
            .collect()
    };
    match cmds.as_slice() {
        [one] => one_command(&words(one)?, dir),
        // `cd "$(dirname "${BASH_SOURCE[0]}")" && pwd`
        [cd, pwd] => {
            let (cd, pwd) = (words(cd)?, words(pwd)?);
            match (cd.as_slice(), pwd.first().map(String::as_str)) {
                ([c, to], Some("pwd")) if c == "cd" => Some(absolute(to, dir)),
                _ => None,
            }
        }
        _ => None,
    }
}

fn one_command(w: &[String], dir: &Path) -> Option<String> {
    let (name, args) = w.split_first()?;
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-') || *a == "-")
        .collect();
    match (name.as_str(), args.as_slice()) {
        ("pwd", []) => Some(dir.display().to_string()),
        ("echo", a) => Some(a.join(" ")),
        ("printf", [f, a @ ..]) if f.contains('%') => Some(a.join(" ")),
        ("printf", [a]) => Some((*a).to_string()),
        ("dirname", [a]) => Some(match a.trim_end_matches('/').rsplit_once('/') {
            Some(("", _)) => "/".into(),
            Some((d, _)) => d.to_string(),
            None => ".".into(),
        }),
        ("basename", [a, ..]) => Some(a.trim_end_matches('/').rsplit('/').next()?.to_string()),
        ("realpath" | "readlink" | "expand_path", [a]) => Some(absolute(a, dir)),
        ("git", ["rev-parse"]) if w.iter().any(|x| x == "--show-toplevel") => {
            Some(git_top(dir)?.display().to_string())
        }
        _ => None,
    }
}

fn absolute(p: &str, dir: &Path) -> String {
    crate::policy::config::normalize(&dir.join(p))
        .display()
        .to_string()
}

/// Brace expansion of `w` (`x.{a,b}`, `{a,b}/c`; `${...}` untouched):
/// `None` past [`MAX_BRACES`] words.
pub fn braces(w: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    expand_braces(w, &mut out, 0)?;
    Some(out)
}

fn expand_braces(w: &str, out: &mut Vec<String>, depth: usize) -> Option<()> {
    if depth > 8 {
        return None;
    }
    let Some((open, close, alts)) = first_brace(w) else {
        if out.len() >= MAX_BRACES {
            return None;
        }
        out.push(w.to_string());
        return Some(());
    };
    for a in alts {
        let next = format!("{}{a}{}", &w[..open], &w[close + 1..]);
        expand_braces(&next, out, depth + 1)?;
    }
    Some(())
}

/// The first `{a,b}` of `w` (not `${`): its bounds and alternatives.
/// One pass with a stack (linear in the word's length).
fn first_brace(w: &str) -> Option<(usize, usize, Vec<&str>)> {
    // (open index, eligible, top-level commas)
    let mut stack: Vec<(usize, bool, Vec<usize>)> = Vec::new();
    let mut best: Option<(usize, usize, Vec<usize>)> = None;
    let b = w.as_bytes();
    for (i, c) in b.iter().enumerate() {
        match c {
            b'{' => stack.push((i, i == 0 || b[i - 1] != b'$', Vec::new())),
            b',' => {
                if let Some(top) = stack.last_mut() {
                    top.2.push(i);
                }
            }
            b'}' => {
                if let Some((open, eligible, commas)) = stack.pop()
                    && eligible
                    && !commas.is_empty()
                    && best.as_ref().is_none_or(|(o, _, _)| open < *o)
                {
                    best = Some((open, i, commas));
                }
            }
            _ => {}
        }
    }
    let (open, close, commas) = best?;
    let mut alts = Vec::new();
    let mut from = open + 1;
    for c in commas {
        alts.push(&w[from..c]);
        from = c + 1;
    }
    alts.push(&w[from..close]);
    Some((open, close, alts))
}

// (Unix paths.)
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn static_values() {
        let d = Path::new("/w/sub");
        let s = |w: &str| substitute(w, d);
        assert_eq!(s("$(pwd)/x").unwrap(), "/w/sub/x");
        assert_eq!(s("$(dirname ${BASH_SOURCE[0]})/x").unwrap(), "/w/sub/x");
        assert_eq!(
            s("$(cd $(dirname $BASH_SOURCE) && pwd)/x").unwrap(),
            "/w/sub/x"
        );
        assert_eq!(s("$(echo x.sh)").unwrap(), "x.sh");
        assert_eq!(s("$(realpath x.sh)").unwrap(), "/w/sub/x.sh");
        assert_eq!(s("$PWD/a $PWDX").unwrap(), "/w/sub/a $PWDX");
        assert_eq!(s("$(curl x)"), None);
        assert_eq!(braces("x.{sh,zz}").unwrap(), ["x.sh", "x.zz"]);
        assert_eq!(
            braces("${A}/{a,b{c,d}}").unwrap(),
            ["${A}/a", "${A}/bc", "${A}/bd"]
        );
        assert_eq!(braces("{}").unwrap(), ["{}"]);
        assert!(braces(&"{a,b}".repeat(10)).is_none());
    }
}
