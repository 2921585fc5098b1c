//! The private home's `~/.netrc` for a run granted secrets (atk27i F5):
//! curl (`--netrc`, and git's HTTP transport), Python's `netrc` (pip,
//! requests), wget read credentials there. The user's file is a secret
//! path, hidden inside; the copy holds only the `machine` (and `default`)
//! entries whose password or login is exactly a granted value, with the
//! placeholder in its place. Every other entry, `account` and `macdef`
//! is dropped (it could hold an ungranted credential).

use super::value_swap::ValueSwap;

/// The `.netrc` tokens of `text`: whitespace-separated words, a `"..."`
/// word with `\` escapes as one token; a `macdef` body (up to an empty
/// line) is skipped.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars();
    let mut word = String::new();
    let flush = |w: &mut String, out: &mut Vec<String>| {
        if !w.is_empty() {
            out.push(std::mem::take(w));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '"' if word.is_empty() => {
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                word.push(e);
                            }
                        }
                        q => word.push(q),
                    }
                }
                // An empty quoted word is still a word.
                out.push(std::mem::take(&mut word));
            }
            c if c.is_whitespace() => {
                flush(&mut word, &mut out);
                if out.len() >= 2 && out[out.len() - 2] == "macdef" {
                    // Skip the macro's body: up to an empty line.
                    out.truncate(out.len() - 2);
                    let mut prev_nl = c == '\n';
                    for c in chars.by_ref() {
                        if c == '\n' && prev_nl {
                            break;
                        }
                        prev_nl = c == '\n';
                    }
                }
            }
            c => word.push(c),
        }
    }
    flush(&mut word, &mut out);
    out
}

/// One entry: `machine NAME` (or `default`) and its login and password.
#[derive(Default)]
struct Entry {
    machine: Option<String>,
    default: bool,
    login: Option<String>,
    password: Option<String>,
}

fn entries(text: &str) -> Vec<Entry> {
    let toks = tokens(text);
    let mut out: Vec<Entry> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let next = toks.get(i + 1).cloned();
        match toks[i].as_str() {
            "machine" => {
                out.push(Entry {
                    machine: next,
                    ..Entry::default()
                });
                i += 2;
            }
            "default" => {
                out.push(Entry {
                    default: true,
                    ..Entry::default()
                });
                i += 1;
            }
            "login" | "password" | "account" => {
                if let Some(e) = out.last_mut() {
                    match toks[i].as_str() {
                        "login" => e.login = next,
                        "password" => e.password = next,
                        _ => {}
                    }
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
    out
}

/// The copy's text for the user's `.netrc` `text`: each entry whose
/// password (or login) is a granted value, with its placeholder; empty
/// when none is.
pub fn placeholder_copy(s: &impl ValueSwap, text: &str) -> String {
    let mut out = String::new();
    let safe = |w: &str| {
        !w.is_empty()
            && !w.contains(|c: char| c.is_whitespace() || c == '"' || c == '\\')
            && !s.holds_value(w.as_bytes())
            && !super::credential_text::carries_credential(w)
    };
    for e in entries(text) {
        let head = match (&e.machine, e.default) {
            (Some(m), _) if safe(m) => format!("machine {m}"),
            (None, true) => "default".to_string(),
            _ => continue,
        };
        let pass = e.password.as_deref().and_then(|p| s.placeholder_of(p));
        let login_ph = e.login.as_deref().and_then(|l| s.placeholder_of(l));
        let line = match (pass, login_ph, e.login.as_deref()) {
            (Some(p), Some(l), _) => format!("{head} login {l} password {p}"),
            (Some(p), None, Some(l)) if safe(l) => format!("{head} login {l} password {p}"),
            (Some(p), None, None) => format!("{head} password {p}"),
            (None, Some(l), _) if e.password.is_none() => format!("{head} login {l}"),
            _ => continue,
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn granted_entries_get_the_placeholder_others_are_dropped() {
        let v = "freeREALvalue9876543210zyxwvuQ";
        let ph = "p".repeat(v.len());
        let s = crate::secrets::value_swap::OneValue {
            value: v.into(),
            placeholder: ph.clone(),
        };
        let text = format!(
            "machine localhost login x password {v}\n\
             machine other.example login y password otherSECRETvalue123\n\
             macdef init\ncd /\nput {v}\n\n\
             machine \"quoted.example\"\n  login \"a b\"\n  password \"{v}\"\n\
             default login anon password {v} account acctSECRET\n"
        );
        let c = placeholder_copy(&s, &text);
        assert_eq!(
            c,
            format!("machine localhost login x password {ph}\ndefault login anon password {ph}\n"),
            "{c}"
        );
        assert!(placeholder_copy(&s, "machine a login b password c\n").is_empty());
    }
}
