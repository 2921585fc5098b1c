//! Words of start-up file lines, and their expansion as far as it can be
//! done without running anything (host side, for [`crate::protect::shell_sources`]).
//!
//! This is no shell: it splits a line into words, expands `~`, `$HOME`,
//! and variables the start-up files assign (or the environment holds),
//! and says when a word cannot be expanded (`$(...)`, backquotes, an
//! unknown variable). Callers treat every expansion but `~`/`$HOME` as
//! approximate and protect the whole directory it leads to.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Names a table keeps at most, and values per name.
const MAX_NAMES: usize = 256;
const MAX_VALUES: usize = 8;

/// Variables assigned in the start-up files read so far (`DF=~/dotfiles`,
/// `for f in ~/x/*`, fish's `set -gx DF ~/dotfiles`), every value kept.
#[derive(Default)]
pub struct Vars(HashMap<String, Vec<String>>);

impl Vars {
    fn add(&mut self, name: &str, value: &str) {
        if !(self.0.contains_key(name) || self.0.len() < MAX_NAMES) {
            return;
        }
        let v = self.0.entry(name.to_string()).or_default();
        // `arr=(a b)`: each element a value.
        let items: Vec<&str> = match value.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
            Some(inner) => inner.split_whitespace().collect(),
            None => vec![value],
        };
        for item in items {
            let value = unquote(item).to_string();
            if v.len() < MAX_VALUES && !v.contains(&value) {
                v.push(value);
            }
        }
    }

    /// The values recorded for `name` (none when unknown).
    pub fn get(&self, name: &str) -> &[String] {
        self.0.get(name).map(Vec::as_slice).unwrap_or_default()
    }

    /// Record the assignments of one line's `words` (see [`words`]).
    pub fn learn(&mut self, words: &[String]) {
        let mut i = 0;
        while i < words.len() {
            let w = words[i].as_str();
            if w == "for"
                && let Some(name) = words.get(i + 1)
                && words.get(i + 2).is_some_and(|x| x == "in")
            {
                let mut j = i + 3;
                while let Some(v) = words.get(j).filter(|v| !matches!(v.as_str(), ";" | "do")) {
                    self.add(name, v);
                    j += 1;
                }
                i = j;
                continue;
            }
            if w == "set" {
                let mut j = i + 1;
                while words.get(j).is_some_and(|a| a.starts_with('-')) {
                    j += 1;
                }
                if let (Some(name), Some(v)) = (words.get(j), words.get(j + 1))
                    && is_name(name)
                {
                    self.add(name, v);
                }
            }
            if let Some((name, v)) = w.split_once('=')
                && is_name(name.trim_end_matches('+'))
            {
                self.add(name.trim_end_matches('+'), v);
            }
            i += 1;
        }
    }
}

fn is_name(n: &str) -> bool {
    !n.is_empty()
        && !n.starts_with(|c: char| c.is_ascii_digit())
        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn unquote(s: &str) -> &str {
    s.trim_matches(|c| c == '"' || c == '\'')
}

/// Words of a shell line, with `;` standing for any command separator
/// (quotes kept inside words).
pub fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ';' | '&' | '|' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                while matches!(chars.peek(), Some('&' | '|')) {
                    chars.next();
                }
                out.push(";".into());
            }
            c if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The pieces of a line that may be paths: split at blanks, quotes,
/// command separators, parentheses, backquotes, and at `=`, `:` and `,`
/// outside `${...}` (assignments, `PATH` lists, vim option lists).
pub(crate) fn path_pieces(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut brace = 0u32;
    for c in line.chars() {
        let split = match c {
            '{' if cur.ends_with('$') => {
                brace += 1;
                false
            }
            '}' if brace > 0 => {
                brace -= 1;
                false
            }
            '=' | ':' | ',' => brace == 0,
            c => c.is_whitespace() || "\"';|&()`".contains(c),
        };
        if split {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// One expansion of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    /// The path (absolute).
    pub path: PathBuf,
    /// Expanded through a variable other than `HOME` (its value may be
    /// another at the shell's start): the caller protects its directory.
    pub approx: bool,
}

/// The paths `word` expands to (several when a variable has several
/// values), `None` when it cannot be expanded (command substitution, an
/// unknown variable) or is no absolute path once expanded.
pub fn expand(word: &str, home: &Path, vars: &Vars) -> Option<Vec<Expanded>> {
    let w = unquote(word);
    if w.contains("$(") || w.contains('`') {
        return None;
    }
    // Partial expansions: (text so far, approximate).
    let mut acc: Vec<(String, bool)> = vec![(String::new(), false)];
    let mut rest = w;
    if let Some(r) = rest.strip_prefix('~')
        && (r.is_empty() || r.starts_with('/'))
    {
        acc[0].0 = home.display().to_string();
        rest = r;
    }
    while !rest.is_empty() {
        let Some(at) = rest.find('$') else {
            acc.iter_mut().for_each(|(s, _)| s.push_str(rest));
            break;
        };
        let lit = &rest[..at];
        acc.iter_mut().for_each(|(s, _)| s.push_str(lit));
        let after = &rest[at + 1..];
        let (name, default, tail) = if let Some(b) = after.strip_prefix('{') {
            let (inner, tail) = b.split_once('}')?;
            let (n, d) = operator(inner);
            // `${arr[0]}`, `${arr[@]}`: the array's values.
            (n.split_once('[').map_or(n, |(n, _)| n), d, tail)
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], None, &after[end..])
        };
        let mut values: Vec<(String, bool)> = if name == "HOME" {
            vec![(home.display().to_string(), false)]
        } else if let Some(v) = vars.0.get(name) {
            v.iter().map(|x| (x.clone(), true)).collect()
        } else if let Ok(v) = std::env::var(name) {
            vec![(v, true)]
        } else {
            Vec::new()
        };
        // `${V:-x}`, `${V=x}`: the default too (the variable may be unset
        // where the text runs).
        if let Some(d) = default {
            let d = if d.starts_with(['/', '~', '$']) {
                expand(d, home, vars)?
                    .into_iter()
                    .map(|e| (e.path.display().to_string(), true))
                    .collect()
            } else {
                vec![(unquote(d).to_string(), true)]
            };
            values.extend(d);
        }
        if values.is_empty() {
            return None;
        }
        let mut next = Vec::new();
        for (s, a) in &acc {
            for (v, va) in &values {
                // A value that is itself `~/...` or `$HOME/...`.
                let v = match expand(v, home, &Vars::default()) {
                    Some(e) if s.is_empty() && e.len() == 1 => e[0].path.display().to_string(),
                    _ => v.clone(),
                };
                if next.len() < MAX_VALUES {
                    next.push((format!("{s}{v}"), *a || *va));
                }
            }
        }
        acc = next;
        rest = tail;
    }
    let out: Vec<Expanded> = acc
        .into_iter()
        .filter(|(s, _)| s.starts_with('/'))
        .map(|(s, approx)| Expanded {
            path: PathBuf::from(s),
            approx,
        })
        .collect();
    (!out.is_empty()).then_some(out)
}

/// The name and default of a `${...}` body: `V:-x`, `V-x`, `V:=x`, `V=x`
/// (`:+`/`+` give their word only when set: kept as a default too).
fn operator(inner: &str) -> (&str, Option<&str>) {
    let end = inner
        .find(|c: char| {
            !(c.is_ascii_alphanumeric() || c == '_' || c == '[' || c == ']' || c == '@' || c == '*')
        })
        .unwrap_or(inner.len());
    let (n, rest) = inner.split_at(end);
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    match rest.chars().next() {
        Some('-' | '=' | '+') => (n, Some(&rest[1..])),
        _ => (n, None),
    }
}

mod commands;
pub use commands::{Token, commands};

/// `line` up to a comment: a `chars` character outside quotes (at a
/// word's start when `word_start`).
pub fn strip_comment<'a>(line: &'a str, chars: &[char], word_start: bool) -> &'a str {
    let (mut quote, mut esc, mut prev) = (None::<char>, false, ' ');
    for (i, c) in line.char_indices() {
        if esc {
            esc = false;
        } else if c == '\\' && quote != Some('\'') {
            esc = true;
        } else if let Some(q) = quote {
            if c == q {
                quote = None;
            }
        } else if c == '"' || c == '\'' && word_start {
            quote = Some(c);
        } else if chars.contains(&c)
            && (!word_start || prev.is_whitespace() || matches!(prev, ';' | '&' | '|' | '('))
        {
            return &line[..i];
        }
        prev = c;
    }
    line
}

/// Whether a path holds a glob character.
pub(crate) fn is_pattern(p: &Path) -> bool {
    p.to_string_lossy().contains(['*', '?', '['])
}

/// The directory before the first pattern component of `p`, and how many
/// components follow it.
pub(crate) fn pattern_base(p: &Path) -> (PathBuf, usize) {
    let mut base = PathBuf::new();
    let mut rest = 0;
    for c in p.components() {
        if rest > 0 || is_pattern(Path::new(c.as_os_str())) {
            rest += 1;
        } else {
            base.push(c);
        }
    }
    (base, rest)
}

#[cfg(test)]
mod tests;
