//! The paths a `command` source's words reach as a shell reads them
//! (atk27l F4, F4b, F4c, F5, F5b, F5c): words split with quotes grouping
//! and removed and a backslash escaping the next character (`'/my ws/t'`,
//! `"$HOME"/t`, `/my\ ws/t`), and a relative word read against the
//! directory an earlier `cd DIR`, `pushd DIR`, `-C DIR` or `--directory
//! DIR` moved to (`cd ~/code && ./proj/bin/get-token`). These add to the
//! plain words the checks already read: what a source runs is then kept
//! read-only, its value files hidden, and the agent's file tools refused,
//! for these spellings too. (What the source runs is also hidden from it
//! when it runs, whatever its spelling: ADR 0283.)

use std::path::{Path, PathBuf};

use super::shell_word::expand_word;

/// The absolute paths `args` (a source's arguments) reach: each
/// argument's shell words, and words after a change of directory joined
/// to it; `~/`, `$NAME` expanded.
pub(super) fn reached(args: &[String], home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    // The argument list itself (`env -C DIR ./rel`).
    walk(args, home, &mut out);
    for a in args {
        walk(&words(a), home, &mut out);
    }
    let mut out: Vec<PathBuf> = out.iter().map(|p| clean(p)).collect();
    out.sort();
    out.dedup();
    out
}

/// `p` without `.` components (`/a/./b` is `/a/b`).
fn clean(p: &Path) -> PathBuf {
    p.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// Follow `words` in order: absolute words, and relative words after a
/// change of directory (joined to it).
fn walk(words: &[String], home: Option<&Path>, out: &mut Vec<PathBuf>) {
    let mut base: Option<PathBuf> = None;
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        if w.is_empty() || w.contains("://") {
            continue;
        }
        let Some(p) = expand_word(w, home).map(PathBuf::from) else {
            continue;
        };
        if matches!(w.as_str(), "cd" | "pushd" | "-C" | "--directory") {
            if let Some(d) = words.get(i).and_then(|d| expand_word(d, home)) {
                let d = PathBuf::from(d);
                base = match (&base, d.is_absolute()) {
                    (_, true) => Some(d),
                    (Some(b), false) => Some(b.join(d)),
                    (None, false) => None,
                };
                if let Some(b) = &base {
                    out.push(b.clone());
                }
                i += 1;
            }
            continue;
        }
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
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
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
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
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
    }
}
