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
            None => format!("{}.{}", self.section, self.name),
        }
    }
}

/// Largest configuration file read (git's own are a few KiB).
#[cfg(unix)]
pub const MAX_FILE: u64 = 1 << 20;

/// Read a configuration file (or a `.git` link, `commondir`) as git
/// would see it, without following a final symlink: `Ok(None)` when it
/// does not exist, `Err` with the reason when it is not a regular file,
/// cannot be read or is larger than [`MAX_FILE`]. Bytes that are not
/// UTF-8 (a Latin-1 user name, or a byte planted to make a strict reader
/// give up) become U+FFFD: the lines, sections and keys git sees stay
/// the same.
#[cfg(unix)]
pub fn read_file(p: &std::path::Path) -> Result<Option<String>, &'static str> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(p)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err("a symbolic link"),
        Err(_) => return Err("unreadable"),
    };
    match f.metadata() {
        Ok(m) if !m.is_file() => return Err("not a regular file"),
        Ok(m) if m.len() > MAX_FILE => return Err("larger than 1 MiB"),
        Ok(_) => {}
        Err(_) => return Err("unreadable"),
    }
    let mut bytes = Vec::new();
    f.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| "unreadable")?;
    if bytes.len() as u64 > MAX_FILE {
        return Err("larger than 1 MiB");
    }
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

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
    let mut section: Option<(String, Option<String>)> = None;
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let lineno = i + 1;
        // Join continuation lines (a value ending in an unescaped backslash,
        // outside any comment).
        let mut line = lines[i].to_string();
        while continues(&line) && i + 1 < lines.len() {
            line.pop();
            i += 1;
            line.push_str(lines[i]);
        }
        i += 1;
        let mut rest = line.trim_start();
        if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
            continue;
        }
        if rest.starts_with('[') {
            match parse_header(rest) {
                Some((sec, after)) => {
                    section = Some(sec);
                    rest = after.trim_start();
                    if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
                        continue;
                    }
                }
                None => {
                    out.bad_lines.push(lineno);
                    section = None;
                    continue;
                }
            }
        }
        let Some((sec, sub)) = &section else {
            out.bad_lines.push(lineno);
            continue;
        };
        match parse_kv(rest) {
            Some((name, value)) => out.items.push(Item {
                section: sec.clone(),
                sub: sub.clone(),
                name,
                value,
            }),
            None => out.bad_lines.push(lineno),
        }
    }
    out
}

/// Whether git continues `line` on the next one: it ends in a backslash
/// that escapes the newline, and that backslash is not inside a comment.
/// Git ends a comment at the newline whatever precedes it (`# \` followed
/// by `[core] fsmonitor = ...` is a comment and then a key), so joining
/// there would hide the next line from the vetting.
fn continues(line: &str) -> bool {
    let t = line.trim_start();
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
    let name = &inner[..end];
    if name.is_empty() || !valid_name(name, true) {
        return None;
    }
    let rest = &inner[end..];
    if let Some(after) = rest.strip_prefix(']') {
        // Deprecated `[section.sub]`: the subsection is lower-cased by git.
        return match name.split_once('.') {
            Some((a, b)) => Some((
                (a.to_ascii_lowercase(), Some(b.to_ascii_lowercase())),
                after,
            )),
            None => Some(((name.to_ascii_lowercase(), None), after)),
        };
    }
    let quoted = rest.trim_start();
    if quoted.len() == rest.len() || name.contains('.') {
        return None; // `[a"b"]`, `[a.b "c"]`: not headers git accepts
    }
    let mut sub = String::new();
    let mut chars = quoted.strip_prefix('"')?.char_indices();
    let end = loop {
        match chars.next()? {
            (_, '\\') => sub.push(chars.next()?.1),
            (j, '"') => break 1 + j + 1,
            (_, '\n') => return None,
            (_, c) => sub.push(c),
        }
    };
    let after = quoted[end..].trim_start().strip_prefix(']')?;
    Some(((name.to_ascii_lowercase(), Some(sub)), after))
}

fn valid_name(s: &str, allow_dot: bool) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || (allow_dot && b == b'.'))
}

fn parse_kv(s: &str) -> Option<(String, Option<String>)> {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or(s.len());
    let name = &s[..end];
    if name.is_empty() || !name.as_bytes()[0].is_ascii_alphabetic() {
        return None;
    }
    let rest = s[end..].trim_start();
    if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
        return Some((name.to_ascii_lowercase(), None));
    }
    let v = rest.strip_prefix('=')?;
    Some((name.to_ascii_lowercase(), Some(parse_value(v)?)))
}

fn parse_value(v: &str) -> Option<String> {
    let mut out = String::new();
    let mut quoted = false;
    let mut pending_space = String::new();
    let mut chars = v.trim_start().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => {
                let e = match chars.next()? {
                    'n' => '\n',
                    't' => '\t',
                    'b' => '\u{8}',
                    '\\' => '\\',
                    '"' => '"',
                    _ => return None,
                };
                out.push_str(&std::mem::take(&mut pending_space));
                out.push(e);
            }
            '#' | ';' if !quoted => break,
            c if c.is_whitespace() && !quoted => pending_space.push(c),
            c => {
                out.push_str(&std::mem::take(&mut pending_space));
                out.push(c);
            }
        }
    }
    if quoted {
        return None;
    }
    Some(out)
}

/// Write items back as a configuration file: one header per run of items
/// with the same section, every value quoted and escaped.
pub fn write(items: &[Item]) -> String {
    let mut out = String::new();
    let mut cur: Option<(&str, Option<&str>)> = None;
    for it in items {
        let this = (it.section.as_str(), it.sub.as_deref());
        if cur != Some(this) {
            match it.sub.as_deref() {
                Some(s) => out.push_str(&format!("[{} \"{}\"]\n", it.section, escape(s))),
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
mod tests {
    use super::*;

    #[test]
    fn sections_subsections_and_values() {
        let p = parse(
            "# c\n[core]\n\tbare = false ; x\n\tHooksPath = \"a b\"\\\n c\n[remote \"Or\\\"g\"] url = u\n\
             [Sec.Sub]\nflag\n[x]\nk = a\\tb  # tail\n",
        );
        assert!(p.bad_lines.is_empty(), "{:?}", p.bad_lines);
        let keys: Vec<String> = p.items.iter().map(|i| i.key()).collect();
        assert_eq!(
            keys,
            [
                "core.bare",
                "core.hookspath",
                "remote.Or\"g.url",
                "sec.sub.flag",
                "x.k"
            ]
        );
        assert_eq!(p.items[1].value.as_deref(), Some("a b c"));
        assert_eq!(p.items[3].value, None);
        assert_eq!(p.items[4].value.as_deref(), Some("a\tb"));
    }

    #[test]
    fn a_backslash_in_a_comment_does_not_hide_the_next_line() {
        // Git reads both planted keys; so must the vetting.
        for text in [
            "# \\\n[core] fsmonitor = \"x\"\n",
            "; \\\n[core]\n\tfsmonitor = x\n",
            "[user]\n\tname = x ;\\\n[core] fsmonitor = y\n",
            "[user]\n\tname = x # \"\\\n[core] fsmonitor = y\n",
        ] {
            let p = parse(text);
            assert!(
                p.items.iter().any(|i| i.key() == "core.fsmonitor"),
                "{text:?}: {:?}",
                p.items
            );
        }
        // Inside a value (quoted or not) the backslash still continues.
        let p = parse("[a]\n\tk = \"x ; \\\n y\"\n\tm = 1\\\n2\n");
        assert_eq!(p.items[0].value.as_deref(), Some("x ;  y"));
        assert_eq!(p.items[1].value.as_deref(), Some("12"));
    }

    #[test]
    fn bad_lines_are_reported_not_fatal() {
        let p = parse("k = v\n[core\n[ok]\n= x\nv = \"open\nw = \\q\n");
        assert_eq!(p.bad_lines, [1, 2, 4, 5, 6]);
        assert!(p.items.is_empty());
    }

    #[test]
    fn write_round_trips() {
        let p = parse("[a \"s\\\\x\"]\n k = \"q\\\"\\n\"\n[b]\n f\n");
        let back = parse(&write(&p.items));
        assert_eq!(back, p);
    }

    #[test]
    fn booleans() {
        assert!(is_true(None) && is_true(Some("Yes")) && !is_true(Some("0")));
    }
}
