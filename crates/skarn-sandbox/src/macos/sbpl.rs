//! Writing paths into SBPL (the Seatbelt profile language) safely: string
//! literals, and case-insensitive regular expressions that match a path
//! under any of its other names.
//!
//! Seatbelt compares the path of the file being opened with the profile's
//! filters byte for byte. APFS volumes are case-insensitive by default and
//! normalisation-insensitive, so `~/.SSH/id_rsa` opens the same file as
//! `~/.ssh/id_rsa`; a `literal`/`subpath` deny on the lower-case name would
//! not match the other spelling. Every deny is therefore also written as a
//! [`deny_regex`]: each ASCII letter becomes a two-letter class, each run of
//! non-ASCII characters (and the character before it, which may be the
//! base of a combining sequence) becomes "one or more characters other
//! than `/`", which over-approximates every case and normalisation variant
//! of that component. The regex also accepts any prefix (`/private`,
//! `/System/Volumes/Data`, `/Volumes/NAME`, a snapshot mount), so a path
//! is denied under every mount or firmlink that leads to it.

use std::fmt::Write;
use std::path::Path;

/// A path that cannot be written into a profile faithfully.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuoteError {
    /// Not valid UTF-8 (SBPL strings are text).
    #[error("{0}: not valid UTF-8; Seatbelt profiles cannot name it")]
    NotUtf8(String),
    /// A control character (newline, NUL, ...).
    #[error("{0:?}: holds a control character; Seatbelt profiles cannot name it")]
    Control(String),
    /// Not absolute.
    #[error("{0}: not an absolute path")]
    Relative(String),
    /// A character whose regex meaning differs between regex dialects
    /// (`[`, `]`, `\`): a deny rule might then fail to match it.
    #[error("{0}: holds {1:?}, which a Seatbelt regex cannot match with certainty")]
    RegexChar(String, char),
}

/// The path as checked text: UTF-8, absolute, without control characters.
pub(crate) fn path_text(p: &Path) -> Result<&str, QuoteError> {
    let s = p
        .to_str()
        .ok_or_else(|| QuoteError::NotUtf8(p.to_string_lossy().into_owned()))?;
    if s.chars().any(char::is_control) {
        return Err(QuoteError::Control(s.to_string()));
    }
    if !s.starts_with('/') {
        return Err(QuoteError::Relative(s.to_string()));
    }
    Ok(s)
}

/// An SBPL string literal: `"` and `\` escaped, nothing else changed.
/// Refuses control characters (a newline would end a comment-free line
/// nowhere, but it is never part of a sane path we want to trust).
pub fn string(s: &str) -> Result<String, QuoteError> {
    if s.chars().any(char::is_control) {
        return Err(QuoteError::Control(s.to_string()));
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    Ok(out)
}

/// `(literal "PATH")`.
pub fn literal(p: &Path) -> Result<String, QuoteError> {
    Ok(format!("(literal {})", string(path_text(p)?)?))
}

/// `(subpath "PATH")`: the path and everything below it.
pub fn subpath(p: &Path) -> Result<String, QuoteError> {
    Ok(format!("(subpath {})", string(path_text(p)?)?))
}

/// `(regex "RE")` with the regex quoted as an SBPL string.
pub fn regex(re: &str) -> Result<String, QuoteError> {
    Ok(format!("(regex {})", string(re)?))
}

/// Characters with a regex meaning, escaped with a backslash.
const REGEX_META: &str = ".*+?()|{}^$";

/// The case- and normalisation-insensitive regex for `p` and everything
/// below it, under any prefix: `^(/.*)?P(/.*)?$`, where a leading
/// `/private` of `p` is dropped (the prefix covers it).
pub(crate) fn deny_regex(p: &Path) -> Result<String, QuoteError> {
    let s = path_text(p)?;
    let s = strip_private(s);
    let mut re = String::from("^(/.*)?");
    let chars: Vec<char> = s.trim_end_matches('/').chars().collect();
    // Whether chars[i] belongs to a wildcard run: it is non-ASCII, or it
    // is the last character of its component before a non-ASCII one.
    let wild = |i: usize| {
        chars[i] != '/' && (!chars[i].is_ascii() || chars.get(i + 1).is_some_and(|n| !n.is_ascii()))
    };
    let mut i = 0;
    while i < chars.len() {
        if wild(i) {
            while i < chars.len() && wild(i) {
                i += 1;
            }
            re.push_str("[^/]+");
            continue;
        }
        let c = chars[i];
        match c {
            '[' | ']' | '\\' => return Err(QuoteError::RegexChar(s.to_string(), c)),
            c if c.is_ascii_alphabetic() => {
                let _ = write!(re, "[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase());
            }
            c if REGEX_META.contains(c) => {
                re.push('\\');
                re.push(c);
            }
            c => re.push(c),
        }
        i += 1;
    }
    re.push_str("(/.*)?$");
    Ok(re)
}

/// `p` without a leading `/private` (before `/tmp`, `/var`, `/etc`).
pub(crate) fn strip_private(s: &str) -> &str {
    for top in ["/tmp", "/var", "/etc"] {
        if let Some(rest) = s.strip_prefix("/private")
            && (rest == top || rest.starts_with(&format!("{top}/")))
        {
            return rest;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_quotes_and_backslashes_only() {
        assert_eq!(string("/a b/c").unwrap(), "\"/a b/c\"");
        assert_eq!(string(r#"/x"y\z"#).unwrap(), r#""/x\"y\\z""#);
        assert_eq!(string("/café").unwrap(), "\"/café\"");
        assert!(string("/a\nb").is_err());
        assert!(string("/a\0b").is_err());
    }

    #[test]
    fn paths_must_be_absolute_utf8_text() {
        assert!(matches!(
            literal(Path::new("rel")),
            Err(QuoteError::Relative(_))
        ));
        assert_eq!(
            subpath(Path::new("/Users/a/.ssh")).unwrap(),
            "(subpath \"/Users/a/.ssh\")"
        );
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let bad = Path::new(std::ffi::OsStr::from_bytes(b"/a/\xff"));
            assert!(matches!(literal(bad), Err(QuoteError::NotUtf8(_))));
        }
    }

    #[test]
    fn deny_regex_is_case_insensitive_and_escaped() {
        let re = deny_regex(Path::new("/Users/a.b/.ssh")).unwrap();
        assert_eq!(
            re,
            r"^(/.*)?/[Uu][Ss][Ee][Rr][Ss]/[Aa]\.[Bb]/\.[Ss][Ss][Hh](/.*)?$"
        );
        let re = deny_regex(Path::new("/h/x+y (1)|$")).unwrap();
        assert!(re.contains(r"[Xx]\+[Yy] \(1\)\|\$"), "{re}");
        // Quoted as an SBPL string, backslashes are doubled.
        assert!(regex(&re).unwrap().contains(r"\\+"));
    }

    #[test]
    fn deny_regex_drops_private_and_trailing_slash() {
        let a = deny_regex(Path::new("/private/etc/ssh/")).unwrap();
        let b = deny_regex(Path::new("/etc/ssh")).unwrap();
        assert_eq!(a, b);
        // /privateer is not /private + something.
        assert!(
            deny_regex(Path::new("/privateer"))
                .unwrap()
                .contains("[Ee][Ee][Rr]")
        );
    }

    fn matches(p: &str, path: &str) -> bool {
        regex::Regex::new(&deny_regex(Path::new(p)).unwrap())
            .unwrap()
            .is_match(path)
    }

    #[test]
    fn deny_regex_matches_every_other_name() {
        for other in [
            "/Users/a/.ssh",
            "/Users/a/.ssh/id_ed25519",
            "/users/A/.SSH/ID_ED25519",
            "/System/Volumes/Data/Users/a/.ssh/id_ed25519",
            "/Volumes/Macintosh HD/Users/a/.Ssh",
        ] {
            assert!(matches("/Users/a/.ssh", other), "{other}");
        }
        for not in [
            "/Users/a/.sshx",
            "/Users/a/.ss",
            "/Users/ab/.ssh",
            "/Users/a",
        ] {
            assert!(!matches("/Users/a/.ssh", not), "{not}");
        }
        for other in [
            "/etc/ssh/x",
            "/private/etc/ssh",
            "/System/Volumes/Data/private/etc/SSH",
        ] {
            assert!(matches("/private/etc/ssh", other), "{other}");
        }
    }

    #[test]
    fn non_ascii_runs_become_component_wildcards() {
        // "é" precomposed (NFC) and "e" + U+0301 (NFD), and upper case:
        // each regex matches every spelling.
        let spellings = [
            "/Users/jos\u{e9}/.ssh/k",
            "/Users/jose\u{301}/.ssh/k",
            "/USERS/JOS\u{c9}/.SSH/k",
        ];
        for from in ["/Users/jos\u{e9}/.ssh", "/Users/jose\u{301}/.ssh"] {
            for s in spellings {
                assert!(matches(from, s), "{from} vs {s}");
            }
        }
        let all = deny_regex(Path::new("/Users/\u{540d}\u{524d}/.aws")).unwrap();
        assert!(all.contains("/[^/]+/"), "{all}");
    }

    #[test]
    fn unexpressible_paths_are_refused() {
        for (p, c) in [("/a/[x]", '['), ("/a/x]", ']'), ("/a\\b", '\\')] {
            assert_eq!(
                deny_regex(Path::new(p)),
                Err(QuoteError::RegexChar(p.to_string(), c))
            );
        }
        assert!(matches!(
            deny_regex(Path::new("/a\tb")),
            Err(QuoteError::Control(_))
        ));
    }
}
