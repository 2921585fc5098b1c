//! Words of a home configuration line: the text spellings of the home
//! (ADR 0160) and, for shell-like lines, the words as bash expands them:
//! quotes and backslashes removed by the shared tokenizer
//! ([`crate::protect::shell_words::commands`]), `$(...)` and unknown
//! variables left as [`ANY`], the "directory of this file" idioms resolved
//! to the file's directory (attack atk22c F1, ADR 0206).

use std::path::{Path, PathBuf};

use super::pattern::ANY;
use crate::protect::shell_words::{Token, commands};

/// Nesting of `$(...)` read at most; deeper text is not looked into (its
/// word is [`ANY`] all the same).
pub(crate) const MAX_NEST: usize = 3;

/// Stands for the directory of the file read (`${BASH_SOURCE%/*}`).
const DIR: char = '\u{3}';
/// Stands for the file read itself (`$BASH_SOURCE`, `$0`).
const FILE: char = '\u{4}';

/// The path words of `line` as bash would expand them: absolute (or led
/// by [`ANY`]) and with pattern characters kept. `file` is the file read
/// (its directories as reached and real in `dirs`, then the home); the
/// texts of command substitutions are added to `inner` to be read as
/// lines of their own.
pub(crate) fn shell_words(
    line: &str,
    home: &str,
    file: &Path,
    dirs: &[PathBuf],
    inner: &mut Vec<String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for cmd in commands(line) {
        for t in cmd {
            let Token::Word(w) = t else { continue };
            for piece in pieces(&w) {
                let Some(p) = expand(piece, home, inner) else {
                    continue;
                };
                for v in places(&p, file, dirs) {
                    if out.len() < 256 && !out.contains(&v) {
                        out.push(v);
                    }
                }
            }
        }
    }
    out
}

/// A word split at `=` and `:` outside `${...}`, `$(...)` and brackets
/// (assignments, `PATH` lists).
fn pieces(w: &str) -> Vec<&str> {
    let (mut out, mut depth, mut from) = (Vec::new(), 0usize, 0);
    for (i, c) in w.char_indices() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => depth = depth.saturating_sub(1),
            '=' | ':' if depth == 0 => {
                out.push(&w[from..i]);
                from = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&w[from..]);
    out.retain(|p| !p.is_empty());
    out
}

/// `piece` with the home's spellings expanded and every other expansion
/// marked; `None` for a word no path can come from.
fn expand(piece: &str, home: &str, inner: &mut Vec<String>) -> Option<String> {
    // The substitutions' texts as written (the home's name may hold
    // blanks or parentheses once expanded).
    let mut rest = piece;
    while let Some(i) = rest.find("$(") {
        let b = &rest[i + 2..];
        let end = close(b, '(', ')');
        let text = &b[..end.min(b.len())];
        if inner.len() < 64 && !names_own_dir(text) {
            inner.push(text.to_string());
        }
        rest = b.get(end + 1..).unwrap_or("");
    }
    let s = if piece.contains(['~', '$', '%']) {
        normalise(piece, home)
    } else {
        piece.to_string()
    };
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(b) = after.strip_prefix('(') {
            let end = close(b, '(', ')');
            let text = &b[..end.min(b.len())];
            out.push(if names_own_dir(text) { DIR } else { ANY });
            rest = b.get(end + 1..).unwrap_or("");
        } else if let Some(b) = after.strip_prefix('{') {
            let end = close(b, '{', '}');
            let text = &b[..end.min(b.len())];
            out.push(own_name(text).unwrap_or(ANY));
            rest = b.get(end + 1..).unwrap_or("");
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let name = &after[..end];
            out.push(match name {
                "BASH_SOURCE" | "0" => FILE,
                _ => ANY,
            });
            rest = &after[end..];
        }
    }
    out.push_str(rest);
    (out.contains('/') || out.starts_with('.') && out.len() > 2 || out.contains([ANY, DIR, FILE]))
        .then_some(out)
}

/// The index of the bracket closing an opened one in `s`.
fn close(s: &str, open: char, shut: char) -> usize {
    let mut depth = 1usize;
    for (i, c) in s.char_indices() {
        if c == open {
            depth += 1;
        } else if c == shut {
            depth -= 1;
            if depth == 0 {
                return i;
            }
        }
    }
    s.len()
}

/// `$(dirname "$BASH_SOURCE")`, `$(cd "$(dirname "$0")" && pwd)` and the
/// like: the directory of the file read.
fn names_own_dir(text: &str) -> bool {
    let t: String = text.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
    let me = t.contains("BASH_SOURCE") || t.contains("$0") || t.contains("${0");
    me && (t.contains("dirname") || t.contains("pwd")) && !t.contains(';')
}

/// `${BASH_SOURCE%/*}`, `${0%/*}`, `${0:A:h}`: the file's directory;
/// `${BASH_SOURCE[0]}`: the file.
fn own_name(text: &str) -> Option<char> {
    let name = ["BASH_SOURCE[0]", "BASH_SOURCE", "0"]
        .into_iter()
        .find(|n| text.starts_with(n))?;
    match &text[name.len()..] {
        "" => Some(FILE),
        "%/*" | ":h" | ":A:h" | ":a:h" => Some(DIR),
        _ => None,
    }
}

/// The absolute spellings of an expanded piece: the file markers
/// replaced, a relative word read from the file's directories and the
/// home (`dirs`).
fn places(p: &str, file: &Path, dirs: &[PathBuf]) -> Vec<String> {
    let own: Vec<String> = dirs
        .iter()
        .take(2)
        .map(|d| d.display().to_string())
        .collect();
    let mut texts = vec![p.to_string()];
    if p.contains(DIR) {
        texts = own.iter().map(|d| p.replace(DIR, d)).collect();
        // bash's `$0` in a sourced file is the shell's, not the file's:
        // the directory may be any (the known rest must spell a grant).
        texts.push(p.replace(DIR, &ANY.to_string()));
    }
    let texts: Vec<String> = texts
        .into_iter()
        .map(|t| t.replace(FILE, &file.display().to_string()))
        .collect();
    let mut out = Vec::new();
    for t in texts {
        if t.starts_with('/') || t.starts_with(ANY) {
            out.push(t);
        } else if t.contains('/') || t.starts_with('.') {
            out.extend(dirs.iter().map(|d| format!("{}/{t}", d.display())));
        }
    }
    out
}

/// Characters that end a path word in the formats read.
pub(super) const SEPARATORS: &[char] = &[
    '=', ';', ',', '(', ')', '[', ']', '{', '}', '<', '>', '|', '&', '!', '`', ':', '"', '\'',
];

/// The line with quote characters dropped and the home's spellings
/// expanded to `home`.
pub fn normalise(line: &str, home: &str) -> String {
    let mut s: String = line.chars().filter(|c| *c != '"' && *c != '\'').collect();
    // `${HOME:-...}`, `${HOME-...}`: the home, whatever the default.
    while let Some(i) = s.find("${HOME:").or_else(|| s.find("${HOME-")) {
        match s[i..].find('}') {
            Some(j) => s.replace_range(i..i + j + 1, home),
            None => break,
        }
    }
    for (from, to) in [
        ("${HOME}", home.to_string()),
        ("$env:HOME", home.to_string()),
        ("(getenv HOME)", home.to_string()),
        ("${XDG_CONFIG_HOME}", format!("{home}/.config")),
        ("$XDG_CONFIG_HOME", format!("{home}/.config")),
        ("${XDG_DATA_HOME}", format!("{home}/.local/share")),
        ("$XDG_DATA_HOME", format!("{home}/.local/share")),
        ("${CARGO_HOME}", format!("{home}/.cargo")),
        ("$CARGO_HOME", format!("{home}/.cargo")),
    ] {
        s = s.replace(from, &to);
    }
    s = replace_var(&s, "$HOME", home);
    // ssh's `%d` and systemd's `%h` are the home.
    s = s
        .replace("%d/", &format!("{home}/"))
        .replace("%h/", &format!("{home}/"));
    // `~` at the start of a word.
    let mut out = String::with_capacity(s.len());
    let mut prev: Option<char> = None;
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let word_start =
            prev.is_none_or(|p| !(p.is_alphanumeric() || matches!(p, '_' | '.' | '/' | '~')));
        let next = chars.get(i + 1).copied();
        if c == '~' && word_start && next.is_none_or(|n| n == '/' || !is_name_char(n)) {
            out.push_str(home);
        } else {
            out.push(c);
        }
        prev = Some(c);
    }
    collapse_concat(&out, home)
}

pub(super) fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '+' | '@' | '%')
}

/// `$HOME` not followed by a name character (`$HOMEBREW_PREFIX` is
/// another variable).
fn replace_var(s: &str, var: &str, to: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(var) {
        out.push_str(&rest[..i]);
        let after = &rest[i + var.len()..];
        if after.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
            out.push_str(var);
        } else {
            out.push_str(to);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// `home .. /x`, `home) . /x`, `home, /x` (string concatenation in vim,
/// lua, emacs lisp, python): written as `home/x`.
fn collapse_concat(s: &str, home: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(home) {
        let end = i + home.len();
        out.push_str(&rest[..end]);
        let after = &rest[end..];
        let skipped = after.trim_start_matches([' ', '\t', ')', '.', ',', '+']);
        if skipped.starts_with('/') && skipped.len() < after.len() {
            rest = skipped;
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The path `form` (or one inside it) where it appears in `line` as a
/// whole path (not part of a longer name), as written there.
pub(super) fn find_path(line: &str, form: &str) -> Option<String> {
    let mut from = 0;
    while let Some(i) = line[from..].find(form) {
        let at = from + i;
        let end = at + form.len();
        let before = line[..at].chars().next_back();
        let after = line[end..].chars().next();
        let starts = before.is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '.')));
        let ends = after.is_none_or(|c| c == '/' || !is_name_char(c));
        if starts && ends {
            let tail: String = line[end..]
                .chars()
                .take_while(|c| !c.is_whitespace() && !SEPARATORS.contains(c))
                .collect();
            return Some(format!("{form}{tail}"));
        }
        from = end;
    }
    None
}
