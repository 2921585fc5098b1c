//! Turning raw captured bytes into the lines a terminal would show:
//! invalid UTF-8 replaced, ANSI escape sequences removed, and for lines
//! rewritten in place with carriage returns (progress bars, spinners) only
//! the final state kept.

/// Split raw output into cleaned lines (no terminators).
pub fn clean(raw: &str) -> Vec<String> {
    let mut out = Vec::with_capacity(raw.len() / 40 + 1);
    let body = raw.strip_suffix('\n').unwrap_or(raw);
    if body.is_empty() {
        return out;
    }
    for line in body.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        // What remains visible after carriage-return rewrites.
        let line = match line.rfind('\r') {
            Some(i) => &line[i + 1..],
            None => line,
        };
        if line.contains('\x1b') || line.contains('\x08') {
            out.push(strip_escapes(line));
        } else {
            out.push(line.to_string());
        }
    }
    out
}

/// Remove CSI (`ESC [ ... final`), OSC (`ESC ] ... BEL|ST`) and other
/// two-byte escapes, and apply backspaces.
pub fn strip_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\x1b' => match it.next() {
                Some('[') => {
                    // parameters and intermediates, then one final byte @..~
                    for n in it.by_ref() {
                        if ('@'..='~').contains(&n) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    while let Some(n) = it.next() {
                        if n == '\x07' {
                            break;
                        }
                        if n == '\x1b' {
                            it.next();
                            break;
                        }
                    }
                }
                Some(_) | None => {}
            },
            '\x08' => {
                out.pop();
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colours_and_keeps_last_rewrite() {
        let raw = "\x1b[1m\x1b[32m   Compiling\x1b[0m x\n 10%\r 50%\r100% done\r\nplain\n";
        assert_eq!(clean(raw), vec!["   Compiling x", "100% done", "plain"]);
        assert_eq!(
            strip_escapes("\x1b]8;;http://x\x07link\x1b]8;;\x07"),
            "link"
        );
        assert!(clean("").is_empty());
        assert_eq!(clean("a\n\nb"), vec!["a", "", "b"]);
    }
}
