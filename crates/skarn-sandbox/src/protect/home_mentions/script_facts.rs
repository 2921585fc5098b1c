//! What one `PATH` script names, apart from any run's grants (issue 30):
//! the path words of its lines as written (after the home's spellings are
//! expanded) and each absolute word resolved as the kernel resolves it.
//! [`super::path_programs`] judges these against the run's grants every
//! run; [`super::script_record`] keeps them per script across runs, with
//! the stamps of the script and of every directory the words resolved
//! through, so an unchanged script is not read again.

use std::collections::HashSet;
use std::path::PathBuf;

use super::words::{SEPARATORS, normalise};
use crate::fact_deps::{Deps, Node};

/// Directories of script words resolved at most (past it the reading
/// stops and says so: every grant counts as named).
pub(super) const MAX_RESOLVED_DIRS: usize = 20_000;
/// Distinct absolute words of scripts looked at, at most.
pub(super) const MAX_WORDS: usize = 200_000;
/// Distinct absolute words of one script resolved at most: past
/// [`MAX_WORDS`] the judging stops anyway (a bound, failing closed), so
/// one more is enough to reach it.
const MAX_SCRIPT_WORDS: usize = MAX_WORDS + 1;
/// Distinct directories of one script's words resolved at most (as above).
const MAX_DIRS: usize = MAX_RESOLVED_DIRS + 1;

/// A path word of a line as the literal reading sees it: it starts at a
/// `/` not led by a name character and runs to a blank or separator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Token {
    pub line: u32,
    pub text: String,
    /// The character that ended it (`None`: the line's end).
    pub after: Option<char>,
}

/// An absolute word and where it leads (`None`: not resolved, as a
/// `/dev` or `/proc` word, or a loop).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Word {
    pub line: u32,
    pub word: String,
    pub full: Option<PathBuf>,
}

/// What a script names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct ScriptFacts {
    /// Bytes of the script counted against the scan's budget.
    pub bytes: u64,
    /// It cannot climb from a path it names ([`super::path_places::climbs`]).
    pub narrow: bool,
    pub tokens: Vec<Token>,
    pub words: Vec<Word>,
}

/// The facts of the script `text` (read as the home `home` spells it),
/// its words resolved through `deps`.
pub(super) fn of_text(bytes: &[u8], home: &str, deps: &mut Deps) -> ScriptFacts {
    let narrow = !super::path_places::climbs(bytes);
    let text = String::from_utf8_lossy(bytes);
    let mut facts = ScriptFacts {
        bytes: 0,
        narrow,
        tokens: tokens(&text, home),
        words: Vec::new(),
    };
    let mut dirs: HashSet<PathBuf> = HashSet::new();
    for (word, line) in words(&text, home) {
        if facts.words.len() >= MAX_SCRIPT_WORDS {
            break;
        }
        let full = resolve(&word, deps, &mut dirs);
        facts.words.push(Word { line, word, full });
    }
    facts
}

/// Where the word `w` leads (see [`Word`]).
fn resolve(w: &str, deps: &mut Deps, dirs: &mut HashSet<PathBuf>) -> Option<PathBuf> {
    let clean = lexical(w);
    if clean.starts_with("/dev") || clean.starts_with("/proc") {
        return None;
    }
    let (dir, name) = (clean.parent()?, clean.file_name()?);
    if !dirs.contains(dir) {
        if dirs.len() >= MAX_DIRS {
            return None;
        }
        dirs.insert(dir.to_path_buf());
    }
    let mut full = deps.kernel_path(dir)?.join(name);
    if matches!(deps.node(&full), Node::Link(_))
        && let Some(t) = deps.kernel_path(&full)
    {
        full = t;
    }
    Some(full)
}

/// The path words of each line read literally (the lines the literal
/// reading reads: not a comment but the `#!` line).
fn tokens(text: &str, home: &str) -> Vec<Token> {
    let mut out = Vec::new();
    for (i, line) in text.split(['\r', '\n']).enumerate() {
        if i > 0 && line.trim_start().starts_with('#') {
            continue;
        }
        // (Every spelling of the home holds one of these.)
        if !line.contains(['/', '~', '$', '%']) && !line.contains("getenv") {
            continue;
        }
        let norm = normalise(line.trim_start_matches("#!"), home);
        let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let mut prev: Option<char> = None;
        for (at, c) in norm.char_indices() {
            if c == '/' && prev.is_none_or(|b| !(b.is_alphanumeric() || matches!(b, '_' | '.'))) {
                let rest = &norm[at..];
                let end = rest
                    .char_indices()
                    .find(|(_, c)| c.is_whitespace() || SEPARATORS.contains(c))
                    .map_or(rest.len(), |(e, _)| e);
                let t = Token {
                    line: n,
                    text: rest[..end].to_string(),
                    after: rest[end..].chars().next(),
                };
                if !out.contains(&t) {
                    out.push(t);
                }
            }
            prev = Some(c);
        }
    }
    out
}

/// The absolute words of the script, in the order the reading meets
/// them, each once, with its line number: a word starts with `/` after a
/// separator; the lines spelling the home (`~/`, `$HOME`) are expanded
/// first (attack atk22h F9).
fn words(text: &str, home: &str) -> Vec<(String, u32)> {
    let bytes = text.as_bytes();
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    let line_no = |start: usize| {
        let n = 1 + memchr::memchr_iter(b'\n', &bytes[..start]).count();
        u32::try_from(n).unwrap_or(u32::MAX)
    };
    let mut add = |w: &str, start: usize, out: &mut Vec<(String, u32)>| {
        if w.len() >= 2 && seen.insert(w.to_string()) {
            out.push((w.to_string(), line_no(start)));
        }
    };
    for pos in memchr::memchr_iter(b'/', bytes) {
        if pos > 0 && !is_separator(bytes[pos - 1]) {
            continue;
        }
        let end = bytes[pos..]
            .iter()
            .position(|b| is_separator(*b) || matches!(b, b'$' | b'*' | b'?'))
            .map_or(bytes.len(), |n| pos + n);
        let (Some(w), Some(line)) = (text.get(pos..end), line_at(text, pos)) else {
            continue;
        };
        if !commented(text, line) {
            add(w, line, &mut out);
        }
    }
    for needle in [
        &b"~/"[..],
        b"$HOME",
        b"${HOME",
        b"$XDG_",
        b"${XDG_",
        b"$CARGO_HOME",
    ] {
        for pos in memchr::memmem::find_iter(bytes, needle) {
            let Some(start) = line_at(text, pos) else {
                continue;
            };
            let end = memchr::memchr2(b'\n', b'\r', &bytes[pos..]).map_or(bytes.len(), |n| pos + n);
            if commented(text, start) {
                continue;
            }
            let Some(line) = text.get(start..end) else {
                continue;
            };
            let norm = normalise(line.trim_start_matches("#!"), home);
            for w in norm.split(|c: char| c.is_ascii() && is_separator(c as u8)) {
                let w = w.split(['$', '*', '?']).next().unwrap_or("");
                if w.starts_with('/') {
                    add(w, start, &mut out);
                }
            }
        }
    }
    out
}

/// Whether the byte `b` ends a path word (blank or one of [`SEPARATORS`]).
fn is_separator(b: u8) -> bool {
    SEPARATOR_BYTES[usize::from(b)]
}

/// [`is_separator`] as a table (every byte of every script is looked at).
static SEPARATOR_BYTES: std::sync::LazyLock<[bool; 256]> = std::sync::LazyLock::new(|| {
    let mut t = [false; 256];
    for (i, e) in t.iter_mut().enumerate() {
        let b = i as u8;
        *e = b.is_ascii_whitespace() || SEPARATORS.iter().any(|c| *c as u32 == u32::from(b));
    }
    t
});

/// The start of the line holding byte `pos` of `text`.
fn line_at(text: &str, pos: usize) -> Option<usize> {
    let b = text.as_bytes().get(..pos)?;
    Some(memchr::memrchr2(b'\n', b'\r', b).map_or(0, |n| n + 1))
}

/// Whether the line starting at `start` is a comment (not the `#!` line).
fn commented(text: &str, start: usize) -> bool {
    start > 0
        && text
            .get(start..)
            .is_some_and(|l| l.trim_start_matches([' ', '\t']).starts_with('#'))
}

/// `w` with empty and `.` components dropped (`..` is the kernel's, left
/// to the resolution).
pub(super) fn lexical(w: &str) -> PathBuf {
    let mut p = PathBuf::from("/");
    for c in w.split('/').filter(|c| !c.is_empty() && *c != ".") {
        p.push(c);
    }
    p
}
