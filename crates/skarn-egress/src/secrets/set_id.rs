//! Set-user-ID and set-group-ID programs in a `command` source (ADR 0302).
//!
//! An unprivileged source helper runs the source in a user namespace
//! mapping only the user (ADR 0283): there the kernel ignores a program's
//! set-ID bits when its owner or group is not mapped, so 1Password's `op`
//! (set-group-ID, for the desktop app's integration), `sudo`, or any
//! program that reads a group-only file fails. No confinement an
//! unprivileged process can set up keeps those bits (Landlock and seccomp
//! need `no_new_privs`, which drops them too), so such a program can only
//! run in the caller's view, and then nothing it runs may be a program a
//! run could have planted.
//!
//! A source runs in the caller's view only when it is a set-ID program of
//! root's (no run can make one) whose arguments are plain words (nothing
//! a shell expands or interprets: no `$`, glob, `;`, `|`, `&`, `<`, `>`,
//! `` ` ``, parentheses, braces, `~`, `#`, newline) of which none names
//! another program (a path to an executable file, or a name found on
//! `PATH`), except the plain readers `cat`, `head` and `tail` found in a
//! directory of root's: `op read op://v/i/f`, `sudo -n cat /root/tok`,
//! `sg grp -c "cat /f"`. A launcher running anything else (`ssh-agent
//! /bin/sh -c ...`, `sudo -n sh -c ...`, `sg grp -c "... ./tok"`) runs in
//! the view, where it has no privilege (atk27n F1). The same holds for a
//! shell string that is one plain command (`sh -c "op read op://v/i/f"`,
//! optionally after `exec`): it is started as those words, without the
//! shell. When a source fails in the view and reaches a set-ID program of
//! root's, the error says why and what to write instead.

use std::path::{Path, PathBuf};

/// Shells whose `-c STRING` is read here.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh"];

/// Programs a set-ID launcher may run in the caller's view: they read
/// files and print them, and load nothing a run could plant.
#[cfg(unix)]
const READERS: &[&str] = &["cat", "head", "tail"];

/// The argument list `argv` (a source) runs as in the caller's view: a
/// set-ID program of root's running nothing else, named directly or as
/// the one plain command of a shell string; `None` otherwise.
pub(super) fn direct_form(argv: &[String]) -> Option<Vec<String>> {
    let words = match root_set_id(argv.first()?) {
        true => argv.to_vec(),
        false => plain_command(argv)?,
    };
    let (prog, args) = words.split_first()?;
    (root_set_id(prog) && args.iter().all(|a| runs_nothing(a))).then_some(words)
}

/// Whether argument `a` is plain words none of which names a program
/// (but a reader of root's).
fn runs_nothing(a: &str) -> bool {
    // One URL word (`op://v/i/f?attribute=otp`): `?` and brackets are
    // literal for the program, and a shell could match no file with it.
    if a.contains("://")
        && !a.contains(|c: char| c.is_whitespace() || "$`;|&<>(){}'\"\\".contains(c))
    {
        return true;
    }
    let Some(words) = plain_words(a) else {
        return false;
    };
    words.iter().all(|w| {
        let value = w.split_once('=').map_or(w.as_str(), |(_, v)| v);
        [w.as_str(), value].iter().all(|x| match program(x) {
            None => true,
            Some(p) => is_reader(&p),
        })
    })
}

/// The executable file word `w` names (a path, or a name on `PATH`).
#[cfg(unix)]
fn program(w: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if w.is_empty() {
        return None;
    }
    lookup(w).filter(|p| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

#[cfg(not(unix))]
fn program(_w: &str) -> Option<PathBuf> {
    None
}

/// Whether `p` is one of [`READERS`], a file of root's in a directory of
/// root's that only root may change.
#[cfg(unix)]
fn is_reader(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(real) = std::fs::canonicalize(p) else {
        return false;
    };
    let named = |q: &Path| {
        q.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| READERS.contains(&n))
    };
    let roots =
        |q: &Path| std::fs::metadata(q).is_ok_and(|m| m.uid() == 0 && m.mode() & 0o022 == 0);
    named(p) && roots(&real) && real.parent().is_some_and(roots)
}

#[cfg(not(unix))]
fn is_reader(_p: &Path) -> bool {
    false
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
/// it reaches a set-ID program of root's the view deprived of its
/// privilege (the program itself, a word of a shell string, an
/// argument); empty otherwise.
pub(super) fn view_hint(argv: &[String]) -> String {
    if let Some(p) = argv.first().filter(|p| root_set_id(p)) {
        return format!(
            "; {p} is a set-user-ID or set-group-ID program of root's, but it runs another \
             program or its arguments are not plain words, so it ran in the private view \
             (ADR 0283), where it has no privilege: outside it, what it runs could be code a \
             sandboxed run planted. Only plain arguments, naming no program but cat, head or \
             tail, let it run with its privilege (ADR 0302); or use a file or from_env source"
        );
    }
    let found = argv
        .iter()
        .skip(1)
        .flat_map(|a| super::shell_paths::words(a))
        .find(|w| !w.is_empty() && root_set_id(w));
    match found {
        Some(p) => format!(
            "; it reaches {p}, a set-user-ID or set-group-ID program of root's, through a shell \
             or another program: in the private view (ADR 0283) such a program runs without \
             its privilege. Name it as the command's program (command = [\"{p}\", ...]) or \
             write the shell string as one plain command (no expansion, pipe, list, \
             redirection or glob), with plain arguments naming no other program (ADR 0302); \
             or use a file or from_env source"
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
        assert!(runs_nothing("op://v/i/f?attribute=otp"));
        assert!(runs_nothing("--fields=label=password"));
        assert!(!runs_nothing("/bin/sh"));
        assert!(!runs_nothing("--shell=/bin/sh"));
        assert!(!runs_nothing("cat /x; ./tok"));
        assert!(!runs_nothing("/x/w?/tok"));
        assert!(runs_nothing("cat /x/val"));
        assert_eq!(plain_command(&s(&["sh", "-x", "op"])), None);
    }
}
