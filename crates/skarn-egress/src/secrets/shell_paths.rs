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
//! decided when the source runs, so the checks refuse it, saying so. A
//! variable the text assigns itself is followed ([`super::shell_assign`]).

use std::path::{Component, Path, PathBuf};

use super::shell_tok::{Tok, tokens};
use super::shell_word::expand_word;

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
        // The variables the text assigns itself put in (atk27o F3).
        let (toks, _) = super::shell_assign::inline(a, tokens(a), home);
        walk(&split_expansions(toks, home), home, &mut out);
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

/// The words of `args` (shell strings) using a variable the text sets in
/// a form not followed ([`super::shell_assign`]): not followed either.
pub(super) fn unfollowed(args: &[String]) -> Vec<String> {
    args.iter()
        .flat_map(|a| super::shell_assign::inline(a, tokens(a), None).1)
        .collect()
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

#[cfg(test)]
mod assign_tests {
    //! [`super::super::shell_assign`] as the checks see it (atk27o F3).
    use std::path::PathBuf;

    fn reached(s: &str) -> Vec<PathBuf> {
        super::reached(&["-c".to_string(), s.to_string()], None)
    }

    fn refused(s: &str) -> Vec<String> {
        super::unfollowed(&["-c".to_string(), s.to_string()])
    }

    #[test]
    fn plain_assignments_are_followed() {
        for t in [
            "d=/opt/app; cat \"$d/tok\"",
            "d=/opt; e=$d/app; cat ${e}/tok",
            "export d=/opt/app && \"$d\"/tok",
            "d=/opt/app\ncat $d/tok",
        ] {
            let r = reached(t);
            assert!(r.contains(&PathBuf::from("/opt/app/tok")), "{t}: {r:?}");
            assert!(refused(t).is_empty(), "{t}");
        }
    }

    #[test]
    fn other_forms_are_refused() {
        for t in [
            "d=$(dirname /opt/app/x); cat \"$d/tok\"",
            "d=`echo /opt/app`; cat $d/tok",
            "read d; cat $d/tok",
            "for d in /opt/app; do cat $d/tok; done",
            "d=/opt; d+=/app; cat $d/tok",
            "d=${X:-/opt/app}; cat $d/tok",
        ] {
            assert!(!refused(t).is_empty(), "{t}");
        }
        for t in [
            "d=$(dirname /opt/app/x); \"$d\"",
            "d=$(dirname /opt/app/x); cd $d && ./tok",
            "f=$(echo /opt/app/tok); sh \"$f\"",
        ] {
            assert!(!refused(t).is_empty(), "{t}");
        }
        // A variable used without being set by the text is the caller's;
        // a value passed on is not a place.
        assert!(refused("cat $HOME/tok").is_empty());
        assert!(refused("RT=$(cat /x/r); echo \"$RT\" | sha256sum").is_empty());
        assert!(refused("v=$(cat /x/r); printf %s \"$v\"").is_empty());
    }
}
