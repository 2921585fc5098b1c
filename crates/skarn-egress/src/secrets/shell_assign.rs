//! Variables a `command` source's shell text sets itself (atk27o F3):
//! `d=/opt/app; cat "$d/tok"` reaches `/opt/app/tok`, which the checks
//! read like any other word. A plain assignment (`NAME=word`, also after
//! `export`, `readonly`, `local`, `declare`, `typeset`) is followed in
//! order, its value expanded against the earlier ones and the caller's
//! environment; at most [`MAX_ASSIGNMENTS`] of them. A variable the text
//! sets in a form not followed (`$(...)` or backquotes, `read NAME`,
//! `for NAME in`, `NAME+=`, a value with an expansion not followed, past
//! the bound) makes each word using it as a path (a `/` in it) or as a
//! program (the command word, or after `cd`, `.`, `source`, `exec`, an
//! interpreter) unknown: the checks refuse it rather than guess, as they
//! refuse a glob. A value passed on (`v=$(cat f); printf %s "$v"`) is not
//! a place.

use std::path::Path;

use super::shell_tok::Tok;
use super::shell_word::expand_word;

/// Most assignments followed in one shell string.
const MAX_ASSIGNMENTS: usize = 64;

/// Longest value followed.
const MAX_VALUE: usize = 4096;

/// Words that set variables named by the words after them.
const DECLARE: &[&str] = &["export", "readonly", "local", "declare", "typeset"];

/// `NAME` of a `NAME=...` word.
fn assigned_name(w: &str) -> Option<&str> {
    let (name, _) = w.split_once('=')?;
    is_name(name).then_some(name)
}

fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The variable names `text` uses (`$NAME`, `${NAME}`, `${NAME...}`).
fn used_names(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        let tail = &rest[i + 1..];
        let tail = tail.strip_prefix('{').unwrap_or(tail);
        let len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        if len > 0 && is_name(&tail[..len]) {
            out.push(&tail[..len]);
        }
        rest = tail;
    }
    out
}

/// `text` with each `$NAME` / `${NAME}` of `vars` replaced by its value;
/// `None` when it uses one of them in another form (`${NAME:-x}`).
fn substitute(text: &str, vars: &[(String, String)]) -> Option<String> {
    let value = |n: &str| vars.iter().rev().find(|(k, _)| k == n).map(|(_, v)| v);
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 1..];
        let (braced, body) = match tail.strip_prefix('{') {
            Some(b) => (true, b),
            None => (false, tail),
        };
        let len = body
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(body.len());
        let name = &body[..len];
        match value(name).filter(|_| len > 0 && is_name(name)) {
            Some(v) if !braced => {
                out.push_str(v);
                rest = &body[len..];
            }
            Some(v) => {
                let after = body[len..].strip_prefix('}')?;
                out.push_str(v);
                rest = after;
            }
            None => {
                out.push('$');
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    Some(out)
}

/// The names `raw` (one shell string) sets in forms not followed.
fn unfollowed_forms(raw: &str, toks: &[Tok]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // `NAME=$(`, ``NAME=` ``, `NAME="$(`, `NAME+=`: seen in the text
    // itself (the tokens split command substitutions apart).
    for (i, _) in raw.match_indices('=') {
        let start = raw[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |s| s + 1);
        let (name, plus) = match raw[..i].strip_suffix('+') {
            Some(n) => {
                let s = n
                    .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .map_or(0, |s| s + 1);
                (&n[s..], true)
            }
            None => (&raw[start..i], false),
        };
        if !is_name(name) {
            continue;
        }
        let value = raw[i + 1..].trim_start_matches(['"', '\'']);
        let substituted = value.starts_with("$(") || value.starts_with('`');
        if (plus || substituted) && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    // `read [-opts] NAME...`, `for NAME in`, `getopts OPTS NAME`,
    // `mapfile`/`readarray NAME`.
    let words: Vec<Option<&str>> = toks
        .iter()
        .map(|t| match t {
            Tok::Word { text, .. } => Some(text.as_str()),
            Tok::Op => None,
        })
        .collect();
    for (i, w) in words.iter().enumerate() {
        let rest = || words[i + 1..].iter().map_while(|w| *w);
        match *w {
            Some("read" | "mapfile" | "readarray" | "getopts") => {
                out.extend(rest().filter(|w| is_name(w)).map(str::to_string));
            }
            Some("for" | "select") => {
                out.extend(rest().take(1).filter(|w| is_name(w)).map(str::to_string));
            }
            _ => {}
        }
    }
    out
}

/// `toks` (the tokens of shell string `raw`) with the variables the text
/// assigns put in place, and the words using a variable it sets in a form
/// not followed (refused by the checks).
pub(super) fn inline(raw: &str, toks: Vec<Tok>, home: Option<&Path>) -> (Vec<Tok>, Vec<String>) {
    let mut unfollowed = unfollowed_forms(raw, &toks);
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut refused = Vec::new();
    let mut out = Vec::with_capacity(toks.len());
    let mut command_pos = true;
    for t in toks {
        let Tok::Word { text, glob, split } = t else {
            command_pos = true;
            out.push(Tok::Op);
            continue;
        };
        let declare = DECLARE.contains(&text.as_str());
        if let Some(name) = assigned_name(&text)
            && (command_pos || out.last().is_some_and(is_declare))
        {
            let value = &text[name.len() + 1..];
            let followed = (vars.len() < MAX_ASSIGNMENTS && value.len() <= MAX_VALUE)
                .then(|| substitute(value, &vars))
                .flatten()
                .filter(|v| {
                    !used_names(v)
                        .iter()
                        .any(|u| unfollowed.iter().any(|n| n == u))
                })
                .and_then(|v| expand_word(&v, home));
            match followed {
                Some(v) => vars.push((name.to_string(), v)),
                None => {
                    vars.retain(|(k, _)| k != name);
                    unfollowed.push(name.to_string());
                }
            }
            out.push(Tok::Word { text, glob, split });
            continue;
        }
        let program = command_pos && !declare;
        let after = match out.last() {
            Some(Tok::Word { text, .. }) => runs_next(text),
            _ => false,
        };
        command_pos = declare;
        let uses = used_names(&text);
        // Used as a path or a program: what it names cannot be told.
        // (A value passed on, `printf %s "$v"`, is not a place.)
        if (program || after || text.contains('/'))
            && uses.iter().any(|u| unfollowed.iter().any(|n| n == u))
        {
            refused.push(text.clone());
            out.push(Tok::Word { text, glob, split });
            continue;
        }
        let text = if uses.iter().any(|u| vars.iter().any(|(k, _)| k == u)) {
            match substitute(&text, &vars) {
                Some(t) => t,
                None => {
                    refused.push(text.clone());
                    text
                }
            }
        } else {
            text
        };
        out.push(Tok::Word { text, glob, split });
    }
    (out, refused)
}

/// Words whose next word is a directory or a program (or script) run.
fn runs_next(w: &str) -> bool {
    let base = w.rsplit('/').next().unwrap_or(w);
    let base = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(
        base,
        "cd" | "pushd"
            | "."
            | "source"
            | "exec"
            | "env"
            | "command"
            | "nohup"
            | "-C"
            | "--directory"
            | "sh"
            | "bash"
            | "dash"
            | "zsh"
            | "ksh"
            | "python"
            | "node"
            | "perl"
            | "ruby"
            | "php"
    )
}

fn is_declare(t: &Tok) -> bool {
    matches!(t, Tok::Word { text, .. } if DECLARE.contains(&text.as_str()) || assigned_name(text).is_some())
}
