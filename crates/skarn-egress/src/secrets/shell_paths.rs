//! The paths a `command` source's words reach as a shell reads them
//! (atk27l F4, F4b, F4c, F5, F5b, F5c): words split with quotes grouping
//! and removed and a backslash escaping the next character (`'/my ws/t'`,
//! `"$HOME"/t`, `/my\ ws/t`), and a relative word read against the
//! directory an earlier `cd DIR`, `pushd DIR`, `-C DIR` or `--directory
//! DIR` moved to (`cd ~/code && ./proj/bin/get-token`; a bare `cd` is the
//! home, a relative `cd` with nothing before it starts from `/`, where a
//! source runs, and `..` is undone as the shell's logical `cd` does:
//! atk27n F1, F2), and an unquoted expansion holding blanks split into
//! words as the shell splits it (`sh -c '$TOKEN_CMD'`). These add to the
//! plain words the checks already read: what a source runs is then kept
//! read-only, its value files hidden, and the agent's file tools refused,
//! for these spellings too. (What the source runs is also hidden from it
//! when it runs, whatever its spelling: ADR 0283.) A word with an unquoted
//! glob naming a path ([`globs`]) is not followed: which file it names is
//! decided when the source runs, so the checks refuse it, saying so.

use std::path::{Component, Path, PathBuf};

use super::shell_word::expand_word;

/// A shell token: a word (quotes removed) or an operator.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word {
        text: String,
        /// An unquoted `*`, `?` or `[` (a pattern the shell matches).
        glob: bool,
        /// An unquoted `$` (the shell splits what it expands to).
        split: bool,
    },
    Op,
}

/// The absolute paths `args` (a source's arguments) reach: each
/// argument's shell words, and words after a change of directory joined
/// to it; `~/`, `$NAME` expanded.
pub(super) fn reached(args: &[String], home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    // The argument list itself (`env -C DIR ./rel`).
    let plain: Vec<Tok> = args
        .iter()
        .map(|a| Tok::Word {
            text: a.clone(),
            glob: false,
            split: false,
        })
        .collect();
    walk(&plain, home, &mut out);
    for a in args {
        walk(&split_expansions(tokens(a), home), home, &mut out);
    }
    let mut out: Vec<PathBuf> = out.iter().map(|p| clean(p)).collect();
    out.sort();
    out.dedup();
    out
}

/// The words of `args` (shell strings) holding an unquoted glob that
/// names a path (a `/` in it, or after a `cd`): not followed.
pub(super) fn globs(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for a in args {
        let mut moved = false;
        for t in tokens(a) {
            if let Tok::Word { text, glob, .. } = t {
                if glob && (moved || text.contains('/')) {
                    out.push(text.clone());
                }
                moved |= matches!(text.as_str(), "cd" | "pushd" | "-C" | "--directory");
            }
        }
    }
    out
}

/// An unquoted expansion whose value holds blanks or operators
/// (`$TOKEN_CMD` = `/w/tok --x`) replaced by the tokens of that value.
fn split_expansions(toks: Vec<Tok>, home: Option<&Path>) -> Vec<Tok> {
    let mut out = Vec::new();
    for t in toks {
        match &t {
            Tok::Word {
                text, split: true, ..
            } => match expand_word(text, home) {
                Some(v) if v.contains(|c: char| c.is_whitespace() || ";|&<>()`".contains(c)) => {
                    out.extend(tokens(&v));
                }
                _ => out.push(t),
            },
            _ => out.push(t),
        }
    }
    out
}

/// `p` without `.` components, and `..` undone lexically, as the shell's
/// logical `cd` does (`/a/./b` and `/a/c/../b` are `/a/b`).
fn clean(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// Follow `toks` in order: absolute words, and relative words after a
/// change of directory (joined to it).
fn walk(toks: &[Tok], home: Option<&Path>, out: &mut Vec<PathBuf>) {
    let word = |i: usize| match toks.get(i) {
        Some(Tok::Word { text, .. }) => Some(text.as_str()),
        _ => None,
    };
    let mut base: Option<PathBuf> = None;
    let mut i = 0;
    while i < toks.len() {
        let Some(w) = word(i) else {
            i += 1;
            continue;
        };
        i += 1;
        if w.is_empty() || w.contains("://") {
            continue;
        }
        if matches!(w, "cd" | "pushd" | "-C" | "--directory") {
            match word(i) {
                // A bare `cd` (end, or an operator next) is the home.
                None if w == "cd" => base = home.map(Path::to_path_buf),
                None => {}
                // `cd -`: the directory before, not followed.
                Some("-") => {
                    base = None;
                    i += 1;
                }
                Some(d) => {
                    if let Some(d) = expand_word(d, home) {
                        let d = PathBuf::from(d);
                        // A source starts in `/`.
                        let from = base.clone().unwrap_or_else(|| PathBuf::from("/"));
                        base = Some(from.join(d));
                    } else {
                        base = None;
                    }
                    i += 1;
                }
            }
            if let Some(b) = &base {
                out.push(b.clone());
            }
            continue;
        }
        let Some(p) = expand_word(w, home).map(PathBuf::from) else {
            continue;
        };
        if p.is_absolute() {
            out.push(p);
        } else if let Some(b) = &base
            && !w.starts_with('-')
        {
            out.push(b.join(p));
        }
    }
}

/// `s` split as a shell splits it: white space and operators separate,
/// quotes group (and are removed), a backslash outside single quotes
/// keeps the next character.
pub(super) fn words(s: &str) -> Vec<String> {
    tokens(s)
        .into_iter()
        .filter_map(|t| match t {
            Tok::Word { text, .. } => Some(text),
            Tok::Op => None,
        })
        .collect()
}

/// `s` as a shell's tokens.
fn tokens(s: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut glob = false;
    let mut split = false;
    let mut chars = s.chars();
    let end = |out: &mut Vec<Tok>, cur: &mut String, glob: &mut bool, split: &mut bool| {
        out.push(Tok::Word {
            text: std::mem::take(cur),
            glob: std::mem::take(glob),
            split: std::mem::take(split),
        });
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    cur.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                cur.push(n);
                            }
                        }
                        _ => cur.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c if c.is_whitespace() || ";|&<>()`".contains(c) => {
                if in_word {
                    end(&mut out, &mut cur, &mut glob, &mut split);
                    in_word = false;
                }
                if c == '\n' || !c.is_whitespace() {
                    out.push(Tok::Op);
                }
            }
            c => {
                in_word = true;
                glob |= "*?[".contains(c);
                split |= c == '$';
                cur.push(c);
            }
        }
    }
    if in_word {
        end(&mut out, &mut cur, &mut glob, &mut split);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn quotes_group_and_cd_moves_relative_words() {
        assert_eq!(
            words("python3 '/my ws/t.py' \"$HOME\"/b /a\\ b;x"),
            s(&["python3", "/my ws/t.py", "$HOME/b", "/a b", "x"])
        );
        let h = Some(Path::new("/home/u"));
        let r = reached(&s(&["-c", "cd ~/code && ./proj/bin/get-token"]), h);
        assert!(
            r.contains(&PathBuf::from("/home/u/code/proj/bin/get-token")),
            "{r:?}"
        );
        let r = reached(&s(&["-C", "/x/code", "./proj/tok"]), h);
        assert!(r.contains(&PathBuf::from("/x/code/proj/tok")), "{r:?}");
        let r = reached(&s(&["-c", "python3 '/my ws/t.py'"]), h);
        assert!(r.contains(&PathBuf::from("/my ws/t.py")), "{r:?}");
        let r = reached(&s(&["-c", "cd /x && cd sub && cat tok"]), h);
        assert!(r.contains(&PathBuf::from("/x/sub/tok")), "{r:?}");
        // atk27n F1, F2: a bare `cd` is the home; `..` undone.
        for t in [
            "cd && cat ws/.tok",
            "cd; cd ws && ./.tok",
            "cd\ncat ws/.tok",
            "cd /home/u/x/.. && ./ws/.tok",
            "cd home/u && ./ws/.tok",
        ] {
            let r = reached(&s(&["-c", t]), h);
            assert!(r.contains(&PathBuf::from("/home/u/ws/.tok")), "{t}: {r:?}");
        }
        assert_eq!(
            globs(&s(&["-c", "cat /x/w?/tok '/a/*'"])),
            s(&["/x/w?/tok"])
        );
        assert_eq!(globs(&s(&["-c", "cd /x && ./t*"])), s(&["./t*"]));
        assert!(globs(&s(&["-c", "tr -d [:space:]"])).is_empty());
    }

    #[test]
    fn an_expansion_holding_a_command_is_split() {
        // SAFETY-free: a variable only this test reads.
        let r = reached(&s(&["-c", "$SKARN_H27P_TOKEN_CMD"]), None);
        assert!(r.is_empty() || !r.iter().any(|p| p.to_string_lossy().contains(' ')));
        let t = split_expansions(tokens("x"), None);
        assert_eq!(t.len(), 1);
    }
}
