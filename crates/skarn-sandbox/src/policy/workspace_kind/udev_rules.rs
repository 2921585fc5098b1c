//! udev's rules, read for the programs they start (issue 22, eighth
//! round): `RUN`, `PROGRAM` and `IMPORT{program}` values of every
//! `*.rules` file of udev's rule directories, read as udev reads them —
//! a line ending in `\` continues on the next, `#` lines are comments,
//! a key is followed by one of its operators (`==`, `!=`, `=`, `+=`,
//! `-=`, `:=`) and a double-quoted value (`\"` inside it, an `e`
//! prefix). udev runs those programs as root when a device appears, so
//! what they name is host code like a launcher's program: the names go
//! into the launcher list ([`super::launchers`]), which refuses a
//! workspace that is or lies in the installation and keeps one a
//! workspace holds read-only. Every absolute word of a value counts
//! (`/bin/sh /srv/x/hook.sh`); relative programs are udev's own
//! (`/usr/lib/udev/<name>`). Bounded by [`MAX_FILES`] files of
//! [`MAX_BYTES`]; past either the list is incomplete (fail closed: the
//! launcher list refuses every workspace outside the home).

use crate::fact_deps::{Deps, Node};
use std::path::{Path, PathBuf};

/// udev's rule directories, in the order it reads them.
const RULE_DIRS: &[&str] = &[
    "/etc/udev/rules.d",
    "/run/udev/rules.d",
    "/usr/local/lib/udev/rules.d",
    "/usr/lib/udev/rules.d",
    "/lib/udev/rules.d",
];

/// Rule files read at most, over every directory.
const MAX_FILES: usize = 4_096;
/// Bytes read per file (past it: the file counts as over the bound).
const MAX_BYTES: u64 = 1024 * 1024;

/// `launcher` (the other launcher files' names and bound) with what
/// udev's rules name added.
/// What it reads (directories and files) is stamped in `deps`, so the
/// launcher record (ADR 0339) is redone when a rule changes.
pub(super) fn with(
    launcher: (Vec<(PathBuf, String)>, bool),
    deps: &mut Deps,
) -> (Vec<(PathBuf, String)>, bool) {
    let (mut named, over) = launcher;
    let (udev, over_udev) = named_in(RULE_DIRS, deps);
    named.extend(udev);
    (named, over || over_udev)
}

/// What the rule files of `dirs` name: (path, how), and whether a bound
/// was reached.
pub(super) fn named_in(dirs: &[&str], deps: &mut Deps) -> (Vec<(PathBuf, String)>, bool) {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut over = false;
    for d in dirs {
        // Resolved through `deps`: the directory (and every link on the
        // way) is stamped, so a rule added or removed redoes the record.
        let Some((real, Node::Dir)) = deps.resolve(Path::new(d)) else {
            continue;
        };
        if seen.contains(&real) {
            continue;
        }
        seen.push(real.clone());
        let Ok(rd) = std::fs::read_dir(&real) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_none_or(|x| x != "rules") {
                continue;
            }
            if files.len() >= MAX_FILES {
                over = true;
                break;
            }
            files.push(p);
        }
    }
    let mut out = Vec::new();
    for f in &files {
        match read(f, deps) {
            Read::Text(t) => {
                for p in programs_of(&t) {
                    out.push((p, format!("run by the udev rule {}", f.display())));
                }
            }
            Read::TooBig => over = true,
            Read::Unreadable => {}
        }
    }
    (out, over)
}

enum Read {
    Text(String),
    TooBig,
    Unreadable,
}

fn read(f: &Path, deps: &mut Deps) -> Read {
    use std::io::Read as _;
    // Links followed and the file stamped first (ADR 0339).
    let Some((real, Node::File)) = deps.resolve(f) else {
        return Read::Unreadable;
    };
    let Some(file) = deps.open_file(&real) else {
        return Read::Unreadable;
    };
    let mut buf = Vec::new();
    if file.take(MAX_BYTES + 1).read_to_end(&mut buf).is_err() {
        return Read::Unreadable;
    }
    if buf.len() as u64 > MAX_BYTES {
        return Read::TooBig;
    }
    Read::Text(String::from_utf8_lossy(&buf).into_owned())
}

/// The rule lines of `text`: continuations joined, comments and blank
/// lines dropped.
fn rule_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for raw in text.lines() {
        let line = raw.trim_end();
        if cur.is_empty() && line.trim_start().starts_with('#') {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => cur.push_str(head),
            None => {
                cur.push_str(line);
                if !cur.trim().is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                cur.clear();
            }
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

/// One `KEY{attr}OP"value"` of a rule line: (key with attribute, value).
fn pairs(line: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ',') {
            i += 1;
        }
        let start = i;
        let mut braces = false;
        while i < chars.len() && (braces || !matches!(chars[i], '=' | '!' | '+' | '-' | ':')) {
            if !braces && (chars[i].is_whitespace() || chars[i] == '"') {
                break;
            }
            match chars[i] {
                '{' => braces = true,
                '}' => braces = false,
                _ => {}
            }
            i += 1;
        }
        let key: String = chars[start..i].iter().collect();
        // The operator.
        while i < chars.len() && matches!(chars[i], '=' | '!' | '+' | '-' | ':') {
            i += 1;
        }
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if i < chars.len() && chars[i] == 'e' && chars.get(i + 1) == Some(&'"') {
            i += 1;
        }
        let mut value = String::new();
        if i < chars.len() && chars[i] == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    i += 1;
                }
                value.push(chars[i]);
                i += 1;
            }
            i += 1;
        } else {
            while i < chars.len() && chars[i] != ',' {
                value.push(chars[i]);
                i += 1;
            }
        }
        if key.is_empty() && value.is_empty() {
            i += 1;
            continue;
        }
        out.push((key, value));
    }
    out
}

/// Whether udev runs the value of `key` as a program.
fn runs_program(key: &str) -> bool {
    let (name, attr) = match key.split_once('{') {
        Some((n, a)) => (n, Some(a.trim_end_matches('}'))),
        None => (key, None),
    };
    match name {
        "RUN" => attr != Some("builtin"),
        "PROGRAM" => true,
        "IMPORT" => attr.is_none_or(|a| a == "program"),
        _ => false,
    }
}

/// The absolute paths the program values of a rules file name.
pub(super) fn programs_of(text: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in rule_lines(text) {
        for (key, value) in pairs(&line) {
            if !runs_program(&key) {
                continue;
            }
            for w in value.split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '='))
            {
                let w = w.trim_matches(|c| c == '"' || c == '\'');
                if w.starts_with('/') {
                    out.push(PathBuf::from(w));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_read_as_udev_reads_them() {
        let p = |t: &str| programs_of(t);
        let v = |s: &[&str]| s.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            p("ACTION==\"add\", RUN+=\"/srv/a/hook.sh --x\"\n"),
            v(&["/srv/a/hook.sh"])
        );
        assert_eq!(
            p("ACTION==\"add\", \\\n  SUBSYSTEM==\"usb\", \\\n  PROGRAM=\"/bin/sh /srv/b/p.sh\"\n"),
            v(&["/bin/sh", "/srv/b/p.sh"])
        );
        assert_eq!(
            p("IMPORT{program}=\"/srv/c/i\", IMPORT{builtin}=\"/not\", RUN{builtin}+=\"/no\"\n"),
            v(&["/srv/c/i"])
        );
        assert_eq!(
            p("ENV{A-B}=\"1\", RUN{program}:=e\"/srv/d/x \\\"a b\\\"\"\n"),
            v(&["/srv/d/x"])
        );
        assert_eq!(p("# RUN+=\"/srv/e/x\"\nENV{X}=\"/srv/f\"\n"), v(&[]));
        assert_eq!(p("RUN+=\"sh -c '/srv/g/x; true'\"\n"), v(&["/srv/g/x"]));
        assert_eq!(p("RUN+=\"relative.sh\"\n"), v(&[]));
    }
}
