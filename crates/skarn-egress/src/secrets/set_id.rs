//! Set-user-ID and set-group-ID programs in a `command` source (ADR 0302).
//!
//! An unprivileged source helper runs the source in a user namespace
//! mapping only the user (ADR 0283): there the kernel ignores a program's
//! set-ID bits when its owner or group is not mapped, so 1Password's `op`
//! (set-group-ID, for the desktop app's integration), `sudo`, or any
//! program that reads a group-only file fails. Such a program of root's,
//! named as the source's program, runs in the caller's view: its text was
//! judged (ADR 0250), no run can make a file of root's, and the loader
//! ignores search-path variables for it.
//!
//! Users write the same program inside a shell string too (`sh -c "op read
//! op://v/i/f"`). A shell string that is one simple command of plain words
//! (no expansion, glob, redirection, pipe, list or substitution; an
//! optional leading `exec`) runs exactly those words: it is started as
//! that argument list, without the shell, and so gets the same rule. Any
//! other shell string runs in the view; when it fails there and names such
//! a program, the error says why and what to write instead.

use std::path::{Path, PathBuf};

/// Shells whose `-c STRING` is read here.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh"];

/// The argument list `argv` (a source) runs as, when it is a shell
/// running one simple command of plain words whose program is a
/// set-ID program of root's; `None` otherwise.
pub(super) fn direct_form(argv: &[String]) -> Option<Vec<String>> {
    let words = plain_command(argv)?;
    root_set_id(words.first()?).then_some(words)
}

/// The words of `sh -c STRING` when STRING is one simple command of plain
/// words (a leading `exec` dropped).
fn plain_command(argv: &[String]) -> Option<Vec<String>> {
    let [shell, flag, text] = argv else {
        return None;
    };
    let name = Path::new(shell).file_name()?.to_str()?;
    if !SHELLS.contains(&name) || !matches!(flag.as_str(), "-c" | "-ec" | "-ce") {
        return None;
    }
    let mut words = plain_words(text)?;
    if words.first().is_some_and(|w| w == "exec") {
        words.remove(0);
    }
    let first = words.first()?;
    // An assignment before the program, a reserved word or a name the
    // shell may take as a builtin or function is not a plain program.
    if first.contains('=') || first.starts_with('-') || first.is_empty() {
        return None;
    }
    Some(words)
}

/// `text` split into words when it holds nothing a shell expands or
/// interprets besides quotes, backslashes and blanks; `None` otherwise.
fn plain_words(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        q => cur.push(q),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '$' | '`' | '\\' | '!' => return None,
                        q => cur.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next()? {
                    '\n' => return None,
                    n => cur.push(n),
                }
            }
            ' ' | '\t' => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c if c.is_ascii_alphanumeric() || "/._-+,:@%=^".contains(c) => {
                in_word = true;
                cur.push(c);
            }
            // `$`, `` ` ``, `;`, `|`, `&`, `<`, `>`, `(`, `)`, `{`, `}`,
            // `*`, `?`, `[`, `]`, `~`, `#`, `!`, newlines, other bytes.
            _ => return None,
        }
    }
    if in_word {
        out.push(cur);
    }
    Some(out)
}

/// The hint added to the error of a source that failed in the view while
/// it names a set-ID program of root's the view deprived of its
/// privilege (a word of a shell string, an argument); empty otherwise.
pub(super) fn view_hint(argv: &[String]) -> String {
    let found = argv
        .iter()
        .skip(1)
        .flat_map(|a| super::shell_paths::words(a))
        .find(|w| !w.is_empty() && root_set_id(w));
    match found {
        Some(p) => format!(
            "; it reaches {p}, a set-user-ID or set-group-ID program of root's, through a shell \
             or another program: in the private view (ADR 0283) such a program runs without \
             its privilege. Name it as the command's program (command = [\"{p}\", ...]), or \
             write the shell string as one plain command (no $, quotes inside double quotes \
             aside, no pipes, lists, redirections or globs: ADR 0302), or use a file or \
             from_env source"
        ),
        None => String::new(),
    }
}

/// Where `execvp` finds `prog` (on `PATH` when it has no `/`).
fn lookup(prog: &str) -> Option<PathBuf> {
    if prog.contains('/') {
        return Some(PathBuf::from(prog));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(prog))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file()))
}

/// Whether `prog` (looked up on `PATH` as `execvp` does when it has no
/// `/`) is a set-user-ID or set-group-ID regular file of root's, and the
/// caller is not root (root's helper keeps such bits: it makes no user
/// namespace).
#[cfg(unix)]
pub(super) fn root_set_id(prog: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        return false;
    }
    lookup(prog).is_some_and(|p| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.uid() == 0 && m.mode() & 0o6000 != 0)
    })
}

#[cfg(not(unix))]
pub(super) fn root_set_id(_prog: &str) -> bool {
    let _ = lookup;
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn only_one_plain_command_is_read_out_of_a_shell_string() {
        let plain = |t: &str| plain_command(&s(&["/bin/sh", "-c", t]));
        assert_eq!(
            plain("op read 'op://v/i/f'"),
            Some(s(&["op", "read", "op://v/i/f"]))
        );
        assert_eq!(
            plain("exec sudo -n cat /root/tok"),
            Some(s(&["sudo", "-n", "cat", "/root/tok"]))
        );
        assert_eq!(plain("op read \"a b\""), Some(s(&["op", "read", "a b"])));
        for t in [
            "op read x | tr -d x",
            "op read $ITEM",
            "op read \"$ITEM\"",
            "cd /x && op read y",
            "op read x > /tmp/o",
            "$TOKEN_CMD",
            "op read ~/x",
            "op read /x/*",
            "X=1 op read y",
            "op read `x`",
            "op read x\nrm y",
            "op read x; y",
            "",
        ] {
            assert_eq!(plain(t), None, "{t:?}");
        }
        assert_eq!(plain_command(&s(&["python3", "-c", "op"])), None);
        assert_eq!(plain_command(&s(&["sh", "-x", "op"])), None);
    }
}
