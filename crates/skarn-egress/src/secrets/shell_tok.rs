//! A shell string cut into tokens as a shell reads it: white space and
//! operators separate, quotes group (and are removed), a backslash
//! outside single quotes keeps the next character; each word remembers
//! whether it held an unquoted glob or expansion.

/// A shell token: a word (quotes removed) or an operator.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Word {
        text: String,
        /// An unquoted `*`, `?` or `[` (a pattern the shell matches).
        glob: bool,
        /// An unquoted `$` (the shell splits what it expands to).
        split: bool,
    },
    Op,
}

/// `s` as a shell's tokens.
pub(super) fn tokens(s: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut glob = false;
    let mut split = false;
    let mut chars = s.chars();
    let end = |out: &mut Vec<Tok>, cur: &mut String, glob: &mut bool, split: &mut bool| {
        out.push(Tok::Word {
            text: std::mem::take(cur),
            glob: std::mem::take(glob),
            split: std::mem::take(split),
        });
    };
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
                    end(&mut out, &mut cur, &mut glob, &mut split);
                    in_word = false;
                }
                if c == '\n' || !c.is_whitespace() {
                    out.push(Tok::Op);
                }
            }
            c => {
                in_word = true;
                glob |= "*?[".contains(c);
                split |= c == '$';
                cur.push(c);
            }
        }
    }
    if in_word {
        end(&mut out, &mut cur, &mut glob, &mut split);
    }
    out
}
