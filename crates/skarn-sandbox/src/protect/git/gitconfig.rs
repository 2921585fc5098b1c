//! A small reader and writer for git's configuration syntax, enough to
//! find what a configuration makes git run and to re-emit an allow-listed
//! subset. It never runs git. Unparsable lines are reported as such, so a
//! caller can treat the file as hostile; writing back quotes every value,
//! so no formatting trick of the input survives.

/// One `key = value` of a configuration file, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Section name, lower-cased (`core`, `remote`).
    pub section: String,
    /// Subsection, case preserved (`origin` in `[remote "origin"]`).
    pub sub: Option<String>,
    /// Variable name, lower-cased (`hookspath`).
    pub name: String,
    /// Value; `None` for a bare boolean key (`[core] bare`).
    pub value: Option<String>,
}

impl Item {
    /// `section.sub.name` (section and name lower-cased).
    pub fn key(&self) -> String {
        match &self.sub {
            Some(s) => format!("{}.{}.{}", self.section, s, self.name),
            // A key before any section header (git reads it as is).
            None if self.section.is_empty() => self.name.clone(),
            None => format!("{}.{}", self.section, self.name),
        }
    }
}

/// Largest configuration file read (git's own are a few KiB).
#[cfg(unix)]
pub use crate::protect::small_file::MAX_FILE;

/// Read a configuration file (or a `.git` link, `commondir`) as git
/// would see it, without following a final symlink: `Ok(None)` when it
/// does not exist, `Err` with the reason when it is not a regular file,
/// cannot be read or is larger than [`MAX_FILE`]. Bytes that are not
/// UTF-8 (a Latin-1 user name, or a byte planted to make a strict reader
/// give up) are kept, one stand-in character each ([`decode_bytes`]): the
/// lines, sections and keys git sees stay the same, and a value used as a
/// path ([`value_path`]) is the bytes git uses.
#[cfg(unix)]
pub fn read_file(p: &std::path::Path) -> Result<Option<String>, &'static str> {
    Ok(read_bytes(p)?.map(|b| decode_bytes(&b)))
}

/// The first of the 256 characters (plane 16, private use) that stand for
/// raw bytes in text from [`decode_bytes`].
const RAW_BASE: u32 = 0x10_FF00;

fn is_raw(c: char) -> bool {
    (RAW_BASE..=RAW_BASE + 0xFF).contains(&(c as u32))
}

fn raw_char(b: u8) -> char {
    char::from_u32(RAW_BASE + u32::from(b)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// Bytes as text without losing any: UTF-8 stays as it is; each byte of
/// what is not UTF-8 (and of a character that is itself one of the
/// stand-ins) becomes the stand-in U+10FF00 + byte. [`raw_bytes`] is the
/// exact inverse. (Git reads its configuration as bytes: a value split by
/// quotes, `"\xdf"\xa6"`, is one character to git; U+FFFD for each byte
/// would have made it another value, and another path.)
pub fn decode_bytes(mut b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    loop {
        let (good, bad) = match std::str::from_utf8(b) {
            Ok(s) => (s, &b[b.len()..]),
            Err(e) => {
                let (g, rest) = b.split_at(e.valid_up_to());
                let n = e.error_len().unwrap_or(rest.len());
                // `g` is the valid prefix `from_utf8` found.
                (std::str::from_utf8(g).unwrap_or_default(), &rest[..n])
            }
        };
        for c in good.chars() {
            if is_raw(c) {
                let mut buf = [0u8; 4];
                out.extend(c.encode_utf8(&mut buf).bytes().map(raw_char));
            } else {
                out.push(c);
            }
        }
        out.extend(bad.iter().map(|&x| raw_char(x)));
        let used = good.len() + bad.len();
        if used >= b.len() {
            return out;
        }
        b = &b[used..];
    }
}

/// The bytes [`decode_bytes`] read as `s`.
pub fn raw_bytes(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        if is_raw(c) {
            out.push((c as u32 - RAW_BASE) as u8);
        } else {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    out
}

/// A configuration value (or a part of one) as the path git uses: the
/// bytes [`read_file`] read.
#[cfg(unix)]
pub(crate) fn value_path(s: &str) -> std::path::PathBuf {
    use std::os::unix::ffi::OsStringExt;
    std::path::PathBuf::from(std::ffi::OsString::from_vec(raw_bytes(s)))
}

/// [`read_file`]'s bytes as they are (for paths, which need not be UTF-8).
#[cfg(unix)]
pub use crate::protect::small_file::read_bytes;

/// A parsed file: its items and whether every line was understood.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Items in file order.
    pub items: Vec<Item>,
    /// Lines that could not be parsed (1-based).
    pub bad_lines: Vec<usize>,
}

/// Parse git configuration text. Never fails; see [`Parsed::bad_lines`].
pub fn parse(text: &str) -> Parsed {
    let mut out = Parsed::default();
    // Git reads keys before any header too, and skips a UTF-8 byte order
    // mark at the start of the file.
    let mut section: Option<(String, Option<String>)> = Some((String::new(), None));
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let lineno = i + 1;
        // Join continuation lines (a value ending in an unescaped backslash,
        // outside any comment).
        let mut line = lines[i].to_string();
        // The backslash and a newline stay: a value keeps the blanks
        // before them, a header or name refuses them, as git does.
        while continues(&line) && i + 1 < lines.len() {
            line.push('\n');
            i += 1;
            line.push_str(lines[i]);
        }
        i += 1;
        let mut rest = skip_space(&line);
        if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
            continue;
        }
        // Git reads headers one after another on a line (`[a][b] k = v`
        // sets `b.k`), then a key.
        let mut done = false;
        while rest.starts_with('[') {
            match parse_header(rest) {
                Some((sec, after)) => {
                    section = Some(sec);
                    rest = skip_space(after);
                    if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
                        done = true;
                        break;
                    }
                }
                None => {
                    out.bad_lines.push(lineno);
                    section = None;
                    done = true;
                    break;
                }
            }
        }
        if done {
            continue;
        }
        let Some((sec, sub)) = &section else {
            out.bad_lines.push(lineno);
            continue;
        };
        match parse_kv(rest) {
            Some((name, value)) => out.items.push(item(sec, sub.as_deref(), name, value)),
            None => out.bad_lines.push(lineno),
        }
    }
    out
}

/// Git's blanks (its `isspace`: ASCII space, tab, CR, LF; not VT, FF or
/// any non-ASCII space).
fn git_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn skip_space(s: &str) -> &str {
    s.trim_start_matches(git_space)
}

/// The item git's callbacks see. Git hands the key and value on as C
/// strings, so a NUL ends them: a value is cut there, and a NUL in a
/// subsection cuts the whole key, so `[core "fsmonitor\0"] x = cmd` is
/// `core.fsmonitor = cmd` to git (the name as written, case kept).
fn item(section: &str, sub: Option<&str>, name: String, value: Option<String>) -> Item {
    let cut = |s: &str| s.split('\0').next().unwrap_or_default().to_string();
    let (sub, name) = match sub {
        Some(s) if s.contains('\0') => {
            let key = cut(s);
            match key.rsplit_once('.') {
                Some((mid, last)) => (Some(mid.to_string()), last.to_string()),
                // Git's key is `section.` and the cut subsection; with an
                // empty section name that is `.x`, never the key `x` a
                // line before any header gives.
                None if section.is_empty() => (None, format!(".{key}")),
                None => (None, key),
            }
        }
        s => (s.map(str::to_string), name),
    };
    Item {
        section: section.to_string(),
        sub,
        name,
        value: value.as_deref().map(cut),
    }
}

/// Whether git continues `line` on the next one: it ends in a backslash
/// that escapes the newline, and that backslash is not inside a comment.
/// Git ends a comment at the newline whatever precedes it (`# \` followed
/// by `[core] fsmonitor = ...` is a comment and then a key), so joining
/// there would hide the next line from the vetting.
fn continues(line: &str) -> bool {
    let t = skip_space(line);
    if t.starts_with('#') || t.starts_with(';') {
        return false;
    }
    let mut quoted = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.next().is_none() => return true,
            '"' => quoted = !quoted,
            '#' | ';' if !quoted => return false,
            _ => {}
        }
    }
    false
}

type Header = (String, Option<String>);

fn parse_header(s: &str) -> Option<(Header, &str)> {
    let inner = s.strip_prefix('[')?;
    // The name runs to the first character that cannot be in it; what
    // follows is `]`, or blanks and a quoted subsection. (A `"` later on
    // the line, in a value, is not a subsection.)
    let end = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.'))
        .unwrap_or(inner.len());
    let name = inner[..end].to_ascii_lowercase();
    let rest = &inner[end..];
    if let Some(after) = rest.strip_prefix(']') {
        if name.is_empty() {
            return None;
        }
        // Deprecated `[section.sub]`: the subsection is lower-cased by git.
        return match name.split_once('.') {
            Some((a, b)) => Some(((a.to_string(), Some(b.to_string())), after)),
            None => Some(((name, None), after)),
        };
    }
    let quoted = skip_space(rest);
    if quoted.len() == rest.len() {
        return None; // `[a"b"]`: not a header git accepts
    }
    let mut sub = String::new();
    let mut chars = quoted.strip_prefix('"')?.char_indices();
    let end = loop {
        match chars.next()? {
            (_, '\\') => match chars.next()? {
                (_, '\n') => return None,
                (_, c) => sub.push(c),
            },
            (j, '"') => break 1 + j + 1,
            (_, '\n') => return None,
            (_, c) => sub.push(c),
        }
    };
    // Git wants the `]` right after the closing quote.
    let after = quoted[end..].strip_prefix(']')?;
    // `[a.b "c"]` is section `a`, subsection `b.c` to git (and `[ "c"]`
    // section ``): it joins name and subsection with a dot.
    let header = match name.split_once('.') {
        Some((a, b)) => (a.to_string(), Some(format!("{b}.{sub}"))),
        None => (name, Some(sub)),
    };
    Some((header, after))
}

fn parse_kv(s: &str) -> Option<(String, Option<String>)> {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or(s.len());
    let name = &s[..end];
    if name.is_empty() || !name.as_bytes()[0].is_ascii_alphabetic() {
        return None;
    }
    let rest = s[end..].trim_start_matches([' ', '\t']);
    if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
        return Some((name.to_ascii_lowercase(), None));
    }
    let v = rest.strip_prefix('=')?;
    Some((name.to_ascii_lowercase(), Some(parse_value(v)?)))
}

/// A value as git reads it: blanks (git's, see [`git_space`]) before it
/// are dropped and those after it trimmed, but kept as written between
/// words, after a quoted part (`"" a` is `a`, `a ""` is `a `) and before a
/// line continuation; `#`/`;` outside quotes start a comment; a backslash
/// at the very end of the file continues onto nothing.
fn parse_value(v: &str) -> Option<String> {
    let mut out = String::new();
    let mut quoted = false;
    // Length to trim back to at the end (git's `trim_len`; 0 = none).
    let mut trim_len = 0;
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if git_space(c) && !quoted {
            if trim_len == 0 {
                trim_len = out.len();
            }
            if !out.is_empty() {
                out.push(c);
            }
            continue;
        }
        if !quoted && (c == '#' || c == ';') {
            break;
        }
        trim_len = 0;
        match c {
            '"' => quoted = !quoted,
            '\\' => {
                let e = match chars.next() {
                    None | Some('\n') => continue,
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('b') => '\u{8}',
                    Some('\\') => '\\',
                    Some('"') => '"',
                    Some(_) => return None,
                };
                out.push(e);
            }
            c => out.push(c),
        }
    }
    if quoted {
        return None;
    }
    if trim_len != 0 {
        out.truncate(trim_len);
    }
    Some(out)
}

/// Write items back as a configuration file: one header per run of items
/// with the same section, every value quoted and escaped. Items git could
/// not read back as written (no section, a name that is not a key name,
/// as a NUL-cut subsection can give) are left out.
pub fn write(items: &[Item]) -> String {
    let mut out = String::new();
    let mut cur: Option<(&str, Option<&str>)> = None;
    let key_name = |s: &str, dot: bool| {
        s.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || (dot && b == b'.'))
    };
    for it in items {
        if !key_name(&it.section, false) || !key_name(&it.name, false) {
            continue;
        }
        // An item that cannot be written with its meaning intact is left
        // out, never changed: git reads no escape for other control
        // characters in values, and none but `\\` and `\"` in subsections
        // (where a newline or NUL cannot stand at all).
        if it.sub.as_deref().is_some_and(|s| s.contains(['\n', '\0']))
            || it.value.as_deref().is_some_and(|v| {
                v.chars()
                    .any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\u{8}'))
            })
        {
            continue;
        }
        let this = (it.section.as_str(), it.sub.as_deref());
        if cur != Some(this) {
            match it.sub.as_deref() {
                Some(s) => out.push_str(&format!("[{} \"{}\"]\n", it.section, escape_sub(s))),
                None => out.push_str(&format!("[{}]\n", it.section)),
            }
            cur = Some(this);
        }
        match &it.value {
            Some(v) => out.push_str(&format!("\t{} = \"{}\"\n", it.name, escape(v))),
            None => out.push_str(&format!("\t{}\n", it.name)),
        }
    }
    out
}

/// A subsection name as git reads it back: only `\\` and `\"` are escapes
/// there; every other character stands for itself.
fn escape_sub(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            '\u{8}' => o.push_str("\\b"),
            c if c.is_control() => {}
            c => o.push(c),
        }
    }
    o
}

/// Whether a git boolean value is true (`None` = bare key = true).
pub fn is_true(v: Option<&str>) -> bool {
    match v {
        None => true,
        Some(s) => matches!(
            s.trim().to_ascii_lowercase().as_str(),
            "true" | "yes" | "on" | "1"
        ),
    }
}

#[cfg(test)]
#[path = "gitconfig_tests.rs"]
mod tests;
