//! The little shell knowledge the hook needs: quoting, spotting control
//! operators, recognising an already-wrapped command and matching the
//! `unsandboxed` patterns.

/// `s` as one shell word that POSIX shells and fish read alike (atk24e
/// F8: fish reads `\'` and `\\` inside single quotes as escapes, so
/// `'\''` let a command end the quote early there): runs of other
/// characters single-quoted, each `'` as `"'"` and each `\` as `"\\"`
/// (a backslash-escaped backslash in double quotes, the same in both).
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    let mut open = false;
    for c in s.chars() {
        match c {
            '\'' | '\\' => {
                if open {
                    out.push('\'');
                    open = false;
                }
                out.push_str(if c == '\'' { "\"'\"" } else { "\"\\\\\"" });
            }
            _ => {
                if !open {
                    out.push('\'');
                    open = true;
                }
                out.push(c);
            }
        }
    }
    if open {
        out.push('\'');
    } else if out.is_empty() {
        out.push_str("''");
    }
    out
}

/// Whether `cmd` is anything but one plain simple command. Fails closed:
/// outside quotes only letters, digits, blanks and `-_./:=,+@%~` are
/// plain; single-quoted text is plain unless the quote follows `$` (bash's
/// `$'...'` decodes escapes, so its end cannot be found without a shell);
/// double-quoted text is plain unless it holds `$`, `` ` ``, `\` or `!`.
/// Everything else (`;`, `&`, `|`, redirections, substitutions, globs,
/// escapes, newlines, non-ASCII, unbalanced quotes) makes it compound, so
/// it is never matched as "unsandboxed" nor taken for an already wrapped
/// The words of `s` as [`quote`] writes them, one space apart: `None`
/// when `s` is anything else.
pub fn unquote_words(s: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut started = false;
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix(' ') {
            if !started {
                return None;
            }
            words.push(std::mem::take(&mut cur));
            started = false;
            rest = r;
        } else if let Some(r) = rest.strip_prefix("\"'\"") {
            cur.push('\'');
            started = true;
            rest = r;
        } else if let Some(r) = rest.strip_prefix("\"\\\\\"") {
            cur.push('\\');
            started = true;
            rest = r;
        } else if let Some(r) = rest.strip_prefix('\'') {
            let end = r.find('\'')?;
            cur.push_str(&r[..end]);
            started = true;
            rest = &r[end + 1..];
        } else {
            return None;
        }
    }
    started.then(|| {
        words.push(cur);
        words
    })
}

/// command.
pub fn is_compound(cmd: &str) -> bool {
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => loop {
                match chars.next() {
                    Some('\'') => break,
                    Some(_) => {}
                    None => return true,
                }
            },
            '"' => loop {
                match chars.next() {
                    Some('"') => break,
                    Some('$' | '`' | '\\' | '!') | None => return true,
                    Some(_) => {}
                }
            },
            c if c.is_ascii_alphanumeric() || " \t-_./:=,+@%~".contains(c) => {}
            _ => return true,
        }
    }
    false
}

/// The leading words of a simple command, split on blanks (quotes are not
/// interpreted: patterns match what the agent wrote).
fn words(cmd: &str) -> impl Iterator<Item = &str> {
    cmd.split([' ', '\t']).filter(|w| !w.is_empty())
}

/// The command the hook runs in place of `cmd`: `skarn run` confines it
/// in `ws`, and `--caller hook` says a model reads what the run prints
/// (the advice to widen is left out, for every client: atk24i F1).
pub fn confined(exe: &str, ws: &str, cmd: &str) -> String {
    format!(
        "{} run --caller hook --workspace {} -- bash -c {}",
        quote(exe),
        quote(ws),
        quote(cmd)
    )
}

/// Whether `cmd` is exactly what this hook writes for workspace `ws`
/// ([`confined`]): this executable, `run --caller hook --workspace WS --
/// bash -c`, then one word made
/// only of single-quoted runs without a backslash, `"'"` and `"\\"` (as
/// [`quote`] writes them), read the same by POSIX shells and fish.
/// Anything else (another program named skarn, extra flags such as
/// `--no-sandbox` or `--net all`, another workspace, a trailing command, a
/// backslash inside single quotes) is not "wrapped" and is confined again.
pub fn is_wrapped(cmd: &str, exe: &str, ws: &str) -> bool {
    let prefix = format!(
        "{} run --caller hook --workspace {} -- bash -c ",
        quote(exe),
        quote(ws)
    );
    let Some(mut rest) = cmd.strip_prefix(&prefix) else {
        return false;
    };
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("\"'\"") {
            rest = r;
        } else if let Some(r) = rest.strip_prefix("\"\\\\\"") {
            rest = r;
        } else if let Some(r) = rest.strip_prefix('\'') {
            match r.find('\'') {
                Some(end) if !r[..end].contains('\\') => rest = &r[end + 1..],
                _ => return false,
            }
        } else {
            return false;
        }
    }
    true
}

/// Programs that run another program named in their arguments (or are
/// shells): a pattern matches a command starting with one of these only
/// when the pattern names it literally (`sudo apt*`, not `s*`).
pub(super) const RUNS_ANOTHER: &[&str] = &[
    "env", "command", "exec", "builtin", "eval", "nice", "nohup", "sudo", "doas", "su", "runuser",
    "pkexec", "time", "timeout", "xargs", "stdbuf", "setsid", "chroot", "chrt", "ionice",
    "taskset", "unshare", "nsenter", "flock", "watch", "strace", "ltrace", "script", "busybox",
    "sh", "bash", "dash", "zsh", "ksh", "fish",
];

/// Bash's builtins and reserved words. They are not programs, and several
/// run code written in their arguments (`printf -v 'a[$(id)]' x`,
/// `test -v`, `declare`, `read`, `let`, `trap`, `coproc`, `jobs -x`,
/// `compgen -C`, `mapfile -C`), so one never runs unconfined unless a
/// pattern names it exactly and it is in [`RUNS_ANOTHER`].
const BASH_BUILTINS: &[&str] = &[
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
    "!",
    "[[",
    "]]",
    "{",
    "}",
    "case",
    "coproc",
    "do",
    "done",
    "elif",
    "else",
    "esac",
    "fi",
    "for",
    "function",
    "if",
    "in",
    "select",
    "then",
    "time",
    "until",
    "while",
];

/// Whether `word` can only be a program name as written: letters, digits
/// and `-_./:,+@%~`. An environment assignment (`git=1`, `A=b`), quoted or
/// escaped text is not one.
fn is_program_word(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:,+@%~".contains(c))
}

/// Whether `cmd` matches an `unsandboxed` pattern. Only a plain simple
/// command matches (see [`is_compound`]), and only when its first word is
/// literally a program name: a leading environment assignment
/// (`git=1 bash -c ...`), quoted or escaped first word, redirection,
/// group or list never matches. A pattern ending in `*` is a prefix of the
/// command text whose first word names the program (`"git pu*"` needs the
/// program `git`; `"docker*"` any program whose name starts with `docker`,
/// never a path such as `dockerx/../evil`);
/// any other pattern is whole leading words (`"git"` matches `git status`
/// but not `gitk`; `"git push"` matches `git push origin`). A program that
/// runs another one (`env`, `sudo`, `exec`, `nice`, `bash`, ...) matches
/// only a pattern that names it exactly.
pub fn matches(cmd: &str, pattern: &str) -> bool {
    let cmd = cmd.trim();
    if pattern.trim().is_empty() || is_compound(cmd) {
        return false;
    }
    let Some(first) = words(cmd).next() else {
        return false;
    };
    if !is_program_word(first) {
        return false;
    }
    if BASH_BUILTINS.contains(&first) && !RUNS_ANOTHER.contains(&first) {
        return false;
    }
    // Options of the matched program that run another program (git's
    // `--receive-pack=`, `-c core.sshCommand=`, `--exec`): a pattern
    // naming the program does not name them (atk24k F4). Judged on the
    // words as the shell reads them (quotes removed: `"--exec=..."`,
    // atk24l F1). A pattern of whole words covers no option past its
    // words at all (git takes `--rece=` for `--receive-pack=`; every tool
    // has options that run programs: `npm --script-shell=`, `ssh -o`), so
    // such a command runs confined; a pattern ending in `*` covers options
    // but not the ones that run another program, abbreviated or glued.
    let given = words(pattern.trim_end_matches('*')).count();
    let mut rest = words(cmd).skip(given.max(1)).map(unquoted);
    if pattern.ends_with('*') {
        if rest.any(|w| super::pattern_options::runs_a_program(&w)) {
            return false;
        }
    } else if rest.any(|w| w.starts_with('-')) {
        return false;
    }
    let Some(prefix) = pattern.strip_suffix('*') else {
        let mut have = words(cmd);
        return words(pattern).all(|p| have.next() == Some(p));
    };
    let prefix = prefix.trim_start();
    let program = words(prefix).next().unwrap_or("");
    // A prefix of a name, not of a path: `docker*` never stretches over a
    // `/` into `dockerx/../../usr/bin/python3` (a pattern that names a
    // path itself may).
    let stretches_into_path = !program.contains('/') && first.contains('/');
    let named = if prefix.contains([' ', '\t']) {
        first == program
    } else {
        first.starts_with(program) && !stretches_into_path
    };
    let base = first.rsplit('/').next().unwrap_or(first);
    named && cmd.starts_with(prefix) && (first == program || !RUNS_ANOTHER.contains(&base))
}

/// A blank-split piece of a plain command as the shell reads it: quotes
/// removed ([`is_compound`] has refused every form where that is not
/// all a shell does).
fn unquoted(w: &str) -> String {
    w.chars().filter(|c| *c != '\'' && *c != '"').collect()
}

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;
