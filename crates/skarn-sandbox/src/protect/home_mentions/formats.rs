//! Which lines of a home file load or run code, read as the program that
//! reads the file does (attack atk22c F3, ADR 0206). Lines that only
//! name a place (git's `safe.directory`, an ssh key, a `cd` alias,
//! direnv's allow list, comments) are not mentions; anything not known to
//! be inert is read (fail closed).

use std::path::Path;

use crate::protect::jsonc::jsonc;
use crate::protect::shell_words::{Token, commands, strip_comment};

/// How a file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A shell start-up file (or a file in a directory shells source).
    Shell,
    /// git configuration.
    Git,
    /// ssh client configuration.
    Ssh,
    /// direnv's list of allowed `.envrc` files.
    DirenvAllow,
    /// JSON settings.
    Json,
    /// Read by nothing that runs code (git's ignore list).
    Inert,
    /// Anything else: every line is read.
    Other,
}

const SHELL_FILES: &[&str] = &[
    ".profile",
    ".bash_profile",
    ".bash_login",
    ".bashrc",
    ".bash_logout",
    ".bash_aliases",
    ".bash_functions",
    ".shrc",
    ".kshrc",
    ".mkshrc",
    ".zshenv",
    ".zprofile",
    ".zshrc",
    ".zlogin",
    ".zlogout",
    ".xprofile",
    ".xinitrc",
    ".xsession",
    ".xsessionrc",
    ".envrc",
    ".direnvrc",
    ".cargo/env",
];
const SHELL_DIRS: &[&str] = &[
    ".bashrc.d",
    ".zshrc.d",
    ".profile.d",
    ".zsh",
    ".config/zsh",
    ".config/bash",
    ".config/shell",
    ".oh-my-zsh/custom",
    ".config/fish",
];

/// The kind of `f` (`rel`: its path below the home, when it is there).
pub fn kind(rel: Option<&Path>, f: &Path, head: &[u8]) -> Kind {
    let name = f
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(rel) = rel {
        if rel == Path::new(".config/git/ignore") {
            return Kind::Inert;
        }
        if rel == Path::new(".gitconfig") || rel == Path::new(".config/git/config") {
            return Kind::Git;
        }
        if rel == Path::new(".ssh/config") || rel.starts_with(".ssh/config.d") {
            return Kind::Ssh;
        }
        if rel.starts_with(".local/share/direnv/allow") {
            return Kind::DirenvAllow;
        }
        if SHELL_FILES.iter().any(|s| rel == Path::new(s))
            || SHELL_DIRS.iter().any(|d| rel.starts_with(d))
        {
            return Kind::Shell;
        }
    }
    if name.ends_with("gitconfig") {
        return Kind::Git;
    }
    if [".sh", ".bash", ".zsh", ".ksh", ".fish"]
        .iter()
        .any(|e| name.ends_with(e))
        || head.starts_with(b"#!")
            && head
                .split(|b| *b == b'\n')
                .next()
                .is_some_and(|l| l.ends_with(b"sh"))
    {
        return Kind::Shell;
    }
    if name.ends_with(".json") {
        return Kind::Json;
    }
    Kind::Other
}

/// The lines of `text` with continuations joined: a shell line ending in
/// an unescaped `\` goes on with the next (`. ~/pro\` + `j/env.sh`), and
/// in vim's files a line starting with `\` continues the one before. The
/// joined line is numbered as the last of its parts.
pub fn joined<'a>(text: &'a str, kind: Kind, f: &Path) -> Vec<std::borrow::Cow<'a, str>> {
    use std::borrow::Cow;
    let vim = f.to_string_lossy().contains("vim");
    let mut out: Vec<Cow<'a, str>> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        let cont_vim = vim && line.trim_start().starts_with('\\');
        if (open || cont_vim)
            && let Some(last) = out.last_mut()
        {
            let mut s = last.to_string();
            if open {
                s.pop();
            }
            s.push_str(if cont_vim {
                &line.trim_start()[1..]
            } else {
                line
            });
            // The joined line takes the place of its parts (numbering
            // kept: an empty line stands for the earlier part).
            *last = Cow::Borrowed("");
            out.push(Cow::Owned(s));
        } else {
            out.push(Cow::Borrowed(line));
        }
        let trailing = line.len() - line.trim_end_matches('\\').len();
        open = kind == Kind::Shell && trailing % 2 == 1;
    }
    out
}

/// Reads one file's lines in order (git's current section).
pub struct Lines {
    kind: Kind,
    section: String,
    quote: Option<char>,
}

impl Lines {
    pub fn new(kind: Kind) -> Self {
        Lines {
            kind,
            section: String::new(),
            quote: None,
        }
    }

    /// The part of `line` to look at; `None` when the line runs nothing.
    pub fn effective<'a>(&mut self, line: &'a str) -> Option<&'a str> {
        let t = line.trim_start();
        match self.kind {
            Kind::Inert => None,
            Kind::Shell => {
                // Inside a quote opened on an earlier line: all of it is
                // text a later `eval` or alias may run.
                if self.quote.is_some() {
                    self.quote = quote_after(line, self.quote);
                    return Some(line);
                }
                let l = strip_comment(line, &['#'], true);
                self.quote = quote_after(l, None);
                (!l.trim().is_empty() && (self.quote.is_some() || !shell_inert(l))).then_some(l)
            }
            Kind::Git => {
                let l = strip_comment(line, &['#', ';'], false);
                let l_t = l.trim();
                let mut l_t = l_t;
                if let Some(h) = l_t.strip_prefix('[') {
                    // A section header: its condition (`includeIf
                    // "gitdir:..."`) names where, not what runs; a
                    // variable may follow on the same line.
                    self.section = h
                        .split(|c: char| c == ']' || c.is_whitespace() || c == '"')
                        .next()
                        .unwrap_or("")
                        .to_ascii_lowercase();
                    l_t = h.split_once(']').map_or("", |(_, r)| r.trim());
                    if l_t.is_empty() {
                        return None;
                    }
                }
                let key = l_t
                    .split(|c: char| c == '=' || c.is_whitespace())
                    .next()
                    .unwrap_or("")
                    .to_ascii_lowercase();
                let inert = matches!(
                    (self.section.as_str(), key.as_str()),
                    ("safe", "directory") | ("core", "excludesfile")
                );
                (!l_t.is_empty() && !inert).then_some(l_t)
            }
            Kind::Ssh => {
                let key = t
                    .split(|c: char| c == '=' || c.is_whitespace())
                    .next()
                    .unwrap_or("")
                    .to_ascii_lowercase();
                (!t.starts_with('#') && key != "identityfile").then_some(line)
            }
            Kind::DirenvAllow => {
                let p = Path::new(t.trim_end());
                let named = p.file_name().is_some_and(|n| n == ".envrc" || n == ".env");
                (!(p.is_absolute() && named)).then_some(line)
            }
            Kind::Json | Kind::Other => {
                (!t.starts_with('#') || t.starts_with("#include")).then_some(line)
            }
        }
    }
}

/// The quote still open at the end of `text` (shell rules), starting
/// inside `open`.
fn quote_after(text: &str, open: Option<char>) -> Option<char> {
    let (mut quote, mut esc) = (open, false);
    for c in text.chars() {
        if esc {
            esc = false;
        } else if c == '\\' && quote != Some('\'') {
            esc = true;
        } else if let Some(q) = quote {
            if c == q {
                quote = None;
            }
        } else if c == '"' || c == '\'' {
            quote = Some(c);
        }
    }
    quote
}

/// A shell line that only defines navigation: `alias p='cd ~/proj'`, a
/// one-line function `p() { cd ~/proj; }`, `CDPATH=...`, zsh's
/// `hash -d p=~/proj`.
fn shell_inert(line: &str) -> bool {
    // A substitution runs a program whatever command holds it
    // (`alias p='cd "$(python3 ~/proj/x.py)"'`, `CDPATH=$(...)`): never
    // harmless (atk22d F1).
    if ["$(", "`", "<(", ">("].iter().any(|s| line.contains(s)) {
        return false;
    }
    let cmds = commands(line);
    let words: Vec<Vec<&str>> = cmds
        .iter()
        .map(|c| {
            c.iter()
                .filter_map(|t| match t {
                    Token::Word(w) => Some(w.as_str()),
                    _ => None,
                })
                .collect()
        })
        .collect();
    if words.is_empty() || cmds.iter().flatten().any(|t| !matches!(t, Token::Word(_))) {
        return false;
    }
    // One-line functions: `NAME() { BODY; }` / `function NAME { BODY; }`.
    let flat: Vec<Vec<&str>> = words.clone();
    if let Some(body) = function_body(&flat) {
        return !body.is_empty() && navigation(&body);
    }
    words.iter().all(|c| match c.as_slice() {
        // fish: `alias p 'cd ~/proj'`.
        ["alias", name, v] if !name.contains('=') => nav_value(v),
        ["alias", defs @ ..] => {
            !defs.is_empty()
                && defs
                    .iter()
                    .all(|d| d.split_once('=').is_some_and(|(_, v)| nav_value(v)))
        }
        ["export", a] | [a] => a.starts_with("CDPATH=") || a.starts_with("cdpath="),
        ["hash", "-d", defs @ ..] => !defs.is_empty() && defs.iter().all(|d| d.contains('=')),
        _ => false,
    })
}

/// An alias's text that only navigates.
fn nav_value(v: &str) -> bool {
    let inner: Vec<Vec<String>> = commands(v)
        .into_iter()
        .map(|c| {
            c.into_iter()
                .filter_map(|t| match t {
                    Token::Word(w) => Some(w),
                    _ => None,
                })
                .collect()
        })
        .collect();
    let inner: Vec<Vec<&str>> = inner
        .iter()
        .map(|c| c.iter().map(String::as_str).collect())
        .collect();
    navigation(&inner)
}

/// The commands of a one-line function's body.
fn function_body<'a>(cmds: &[Vec<&'a str>]) -> Option<Vec<Vec<&'a str>>> {
    let (first, rest) = cmds.split_first()?;
    let mut body: Vec<Vec<&str>> = match first.as_slice() {
        ["function", _, "{", b @ ..] => vec![b.to_vec()],
        ["function", _] | [_] => {
            let (open, more) = rest.split_first()?;
            let (&"{", b) = open.split_first()? else {
                return None;
            };
            let mut v = vec![b.to_vec()];
            v.extend(more.iter().cloned());
            return finish(v);
        }
        _ => return None,
    };
    body.extend(rest.iter().cloned());
    finish(body)
}

fn finish(mut body: Vec<Vec<&str>>) -> Option<Vec<Vec<&str>>> {
    if body.last()? != &vec!["}"] {
        return None;
    }
    body.pop();
    body.retain(|c| !c.is_empty());
    Some(body)
}

/// `cd DIR` (or `pushd`) and then at most listing commands.
fn navigation(cmds: &[Vec<&str>]) -> bool {
    let Some((first, rest)) = cmds.split_first() else {
        return false;
    };
    matches!(
        first.as_slice(),
        ["cd" | "pushd", _] | ["cd" | "pushd", "--", _]
    ) && rest
        .iter()
        .all(|c| matches!(c.first(), Some(&("ls" | "ll" | "pwd" | "clear"))) && c.len() <= 2)
}

/// The strings of a JSON document but those of inert keys
/// (`additionalDirectories`, VS Code's `git.defaultCloneDirectory`), one
/// per line; `None` when it does not parse (then read line by line).
pub(crate) fn json_lines(text: &str) -> Option<Vec<String>> {
    let v: serde_json::Value = serde_json::from_str(text)
        .or_else(|_| serde_json::from_str(&jsonc(&jsonc(text, false), true)))
        .ok()?;
    let mut out = Vec::new();
    let mut stack = vec![&v];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(a) => stack.extend(a.iter()),
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    if matches!(
                        k.as_str(),
                        "additionalDirectories" | "git.defaultCloneDirectory"
                    ) {
                        continue;
                    }
                    out.push(k.clone());
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
    Some(out)
}
