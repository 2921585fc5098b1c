//! The little shell knowledge the hook needs: quoting, spotting control
//! operators, recognising an already-wrapped command and matching the
//! `unsandboxed` patterns.

/// `s` as one single-quoted shell word (`'` becomes `'\''`).
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
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

/// Whether `cmd` is exactly what this hook writes for workspace `ws`:
/// this executable, `run --workspace WS -- bash -c`, then one word made
/// only of single-quoted text and `\'`. Anything else (another program
/// named skarn, extra flags such as `--no-sandbox` or `--net all`, another
/// workspace, a trailing command) is not "wrapped" and is confined again.
pub fn is_wrapped(cmd: &str, exe: &str, ws: &str) -> bool {
    let prefix = format!("{} run --workspace {} -- bash -c ", quote(exe), quote(ws));
    let Some(mut rest) = cmd.strip_prefix(&prefix) else {
        return false;
    };
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("\\'") {
            rest = r;
        } else if let Some(r) = rest.strip_prefix('\'') {
            match r.find('\'') {
                Some(end) => rest = &r[end + 1..],
                None => return false,
            }
        } else {
            return false;
        }
    }
    true
}

/// Whether `cmd` matches an `unsandboxed` pattern. A pattern ending in `*`
/// is a prefix of the command text (`"git pu*"`); any other pattern is
/// whole leading words (`"git"` matches `git status` but not `gitk`;
/// `"git push"` matches `git push origin`). Only simple commands match: a
/// command with `;`, `&&`, pipes, redirections or substitutions is always
/// sandboxed.
pub fn matches(cmd: &str, pattern: &str) -> bool {
    let cmd = cmd.trim();
    if pattern.trim().is_empty() || is_compound(cmd) {
        return false;
    }
    if let Some(prefix) = pattern.strip_suffix('*') {
        return cmd.starts_with(prefix.trim_start());
    }
    let mut have = words(cmd);
    words(pattern).all(|p| have.next() == Some(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_round_trips_through_sh() {
        for s in ["plain", "it's", "'", "a\"b$HOME`x`", "", "''\\'"] {
            let out = std::process::Command::new("sh")
                .args(["-c", &format!("printf %s {}", quote(s))])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), s);
        }
    }

    #[test]
    fn compound_commands() {
        for c in [
            "a; b",
            "a && b",
            "a | b",
            "a > f",
            "$(x)",
            "`x`",
            "echo \"$(id)\"",
            "a\nb",
            "(a)",
            "a & ",
            "echo 'open",
            "a # c",
            // bash's $'...' hides where the quote ends.
            "echo $'\\''; cat ~/.ssh/id; touch /tmp/m #'",
            "git status $'\\''; id #'",
            "echo a\\;b",
            "echo $HOME",
            "ls *",
            "echo \"$HOME\"",
        ] {
            assert!(is_compound(c), "{c}");
        }
        for c in [
            "ls -la",
            "echo 'a; b'",
            "echo \"a | b\"",
            "git push origin main",
            "cargo test -p x --lib",
        ] {
            assert!(!is_compound(c), "{c}");
        }
    }

    #[test]
    fn wrapped_and_patterns() {
        let w = |c: &str| is_wrapped(c, "/usr/bin/skarn", "/w");
        assert!(w("'/usr/bin/skarn' run --workspace '/w' -- bash -c 'a; b'"));
        assert!(w(&format!(
            "'/usr/bin/skarn' run --workspace '/w' -- bash -c {}",
            quote("it's; $(x)")
        )));
        // Another program called skarn, widening flags, another workspace,
        // or anything after the quoted command: not wrapped.
        assert!(!w("skarn run -- ls"));
        assert!(!w("bin/skarn run --workspace . -- make"));
        assert!(!w(
            "'/usr/bin/skarn' run --no-sandbox --workspace '/w' -- bash -c 'x'"
        ));
        assert!(!w("'/usr/bin/skarn' run --workspace '/' -- bash -c 'x'"));
        assert!(!w(
            "'/usr/bin/skarn' run --workspace '/w' -- bash -c 'x'; id"
        ));
        assert!(!w("'/usr/bin/skarn' run --workspace '/w' -- bash -c 'x"));
        assert!(matches("git status", "git"));
        assert!(matches("git push origin", "git push"));
        assert!(!matches("gitk", "git"));
        assert!(!matches("git status; rm -rf ~", "git"));
        assert!(matches("docker-compose up", "docker*"));
        assert!(!matches("ls", ""));
    }
}
