//! The private keys an ssh command line names (`ssh -i KEY`,
//! `-o IdentityFile=KEY`, `-F CONFIG`'s `IdentityFile` lines), as git's
//! `core.sshCommand` or `GIT_SSH_COMMAND` give it: secrets wherever they
//! lie, like `~/.ssh` itself.

use std::path::{Path, PathBuf};

/// Words of an ssh command line kept at most.
const MAX_WORDS: usize = 256;

/// The key files (and `-F` configuration files) the ssh command `cmd`
/// names, `~/` and `$VAR` expanded, relative names against `cwd`: (place,
/// what names it).
pub fn named(cmd: &str, home: &Path, cwd: &Path) -> Vec<(PathBuf, &'static str)> {
    let words = split(cmd);
    let mut out = Vec::new();
    let mut it = words.iter().peekable();
    while let Some(w) = it.next() {
        // `-i KEY`, `-iKEY`, `-o IdentityFile=KEY`, `-oIdentityFile KEY`,
        // `-F CONFIG`, `-FCONFIG`.
        let (flag, glued) = match w.as_str() {
            "-i" | "-o" | "-F" => (w.as_str(), None),
            _ if w.starts_with("-i") => ("-i", Some(&w[2..])),
            _ if w.starts_with("-o") => ("-o", Some(&w[2..])),
            _ if w.starts_with("-F") => ("-F", Some(&w[2..])),
            _ => continue,
        };
        let arg = match glued {
            Some(a) => a.to_string(),
            None => match it.next() {
                Some(a) => a.clone(),
                None => break,
            },
        };
        match flag {
            "-i" => out.extend(place(&arg, home, cwd).map(|p| (p, "ssh -i"))),
            "-F" => out.extend(place(&arg, home, cwd).map(|p| (p, "ssh -F"))),
            _ => {
                let (k, v) = match arg.split_once(['=', ' ']) {
                    Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
                    // `-o IdentityFile KEY` as two words is not ssh's
                    // syntax, but costs nothing to read.
                    None => match it.peek() {
                        Some(v) => (arg.clone(), v.to_string()),
                        None => break,
                    },
                };
                if matches!(
                    k.to_ascii_lowercase().as_str(),
                    "identityfile" | "certificatefile"
                ) {
                    out.extend(place(&v, home, cwd).map(|p| (p, "ssh -o IdentityFile")));
                }
            }
        }
    }
    out
}

/// The words of a command line as a shell splits them (quotes and
/// backslashes removed; `;`, `|`, `&` end a word), at most [`MAX_WORDS`].
fn split(cmd: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut quote: Option<char> = None;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => cur.extend(chars.next()),
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, '\\') => cur.extend(chars.next()),
            (None, c) if c.is_whitespace() || matches!(c, ';' | '|' | '&') => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
                if out.len() >= MAX_WORDS {
                    return out;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out.truncate(MAX_WORDS);
    out
}

/// [`named`], and for each `-F` file the keys, certificates and files
/// it names in turn (read as `~/.ssh/config` is, includes followed).
pub fn named_deep(cmd: &str, home: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (p, how) in named(cmd, home, cwd) {
        if how == "ssh -F" {
            out.extend(
                crate::protect::host_ssh_config::ssh_config_places(home, p.clone())
                    .into_iter()
                    .map(|(q, _)| q),
            );
        }
        out.push(p);
    }
    out
}

/// One named file: `~/`, `$HOME` and `$VAR` expanded, relative to `cwd`.
fn place(word: &str, home: &Path, cwd: &Path) -> Option<PathBuf> {
    let w = word.trim().trim_matches(['"', '\'']);
    if w.is_empty() {
        return None;
    }
    let w = expand(w, home);
    let p = if let Some(r) = w.strip_prefix("~/") {
        home.join(r)
    } else {
        cwd.join(&w)
    };
    Some(crate::policy::config::normalize(&p))
}

/// `$NAME` / `${NAME}` at the start of a word (the caller's environment;
/// `HOME` is `home`).
pub(crate) fn expand(w: &str, home: &Path) -> String {
    let Some(rest) = w.strip_prefix('$') else {
        return w.to_string();
    };
    let (name, tail) = match rest.strip_prefix('{') {
        Some(r) => match r.split_once('}') {
            Some(x) => x,
            None => return w.to_string(),
        },
        None => {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        }
    };
    let v = if name == "HOME" {
        Some(home.display().to_string())
    } else {
        std::env::var(name).ok()
    };
    match v {
        Some(v) => format!("{v}{tail}"),
        None => w.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_of_naming_a_key_is_read() {
        let (h, c) = (Path::new("/h"), Path::new("/ws"));
        let got: Vec<PathBuf> = named(
            "ssh -p 22 -i /k/a -i~/b -o IdentityFile=rel/c -oIdentityFile=\"/k/d\" -F /k/cfg \
             -o 'CertificateFile /k/e' -o User=x",
            h,
            c,
        )
        .into_iter()
        .map(|(p, _)| p)
        .collect();
        let want: Vec<PathBuf> = ["/k/a", "/h/b", "/ws/rel/c", "/k/d", "/k/cfg", "/k/e"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(got, want);
        assert!(named("ssh -v", h, c).is_empty());
        assert!(named("ssh -i", h, c).is_empty());
    }
}
