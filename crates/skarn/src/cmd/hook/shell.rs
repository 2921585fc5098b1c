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

/// Whether `cmd` holds anything beyond one simple command: an unquoted
/// `;`, `&`, `|`, `<`, `>`, `(`, `)`, newline or `#`, or a command
/// substitution (`` ` `` or `$(`, also inside double quotes).
pub fn is_compound(cmd: &str) -> bool {
    let mut chars = cmd.chars().peekable();
    let (mut single, mut double) = (false, false);
    while let Some(c) = chars.next() {
        if single {
            single = c != '\'';
            continue;
        }
        match c {
            '\\' => {
                chars.next();
            }
            '`' => return true,
            '$' if chars.peek() == Some(&'(') => return true,
            '"' => double = !double,
            _ if double => {}
            '\'' => single = true,
            ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n' | '\r' | '#' => return true,
            _ => {}
        }
    }
    single || double
}

/// The leading words of a simple command, split on blanks (quotes are not
/// interpreted: patterns match what the agent wrote).
fn words(cmd: &str) -> impl Iterator<Item = &str> {
    cmd.split([' ', '\t']).filter(|w| !w.is_empty())
}

/// Whether `cmd` already runs under `skarn run` (`skarn run ...` or
/// `<path>/skarn run ...`, optionally quoted) and is a simple command, so
/// nothing of it runs outside the sandbox.
pub fn is_wrapped(cmd: &str) -> bool {
    let mut w = words(cmd);
    let first = w.next().unwrap_or("").trim_matches(['\'', '"']);
    let is_skarn = first == "skarn" || first.ends_with("/skarn");
    is_skarn && w.next() == Some("run") && !is_compound(cmd)
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
        ] {
            assert!(is_compound(c), "{c}");
        }
        for c in [
            "ls -la",
            "echo 'a; b'",
            "echo \"a | b\"",
            "echo a\\;b",
            "echo $HOME",
        ] {
            assert!(!is_compound(c), "{c}");
        }
    }

    #[test]
    fn wrapped_and_patterns() {
        assert!(is_wrapped("skarn run -- ls"));
        assert!(is_wrapped(
            "'/usr/bin/skarn' run --workspace '/w' -- bash -c 'a; b'"
        ));
        assert!(!is_wrapped("skarn run -- ls; cat ~/.ssh/id"));
        assert!(!is_wrapped("skarn exec --code 1"));
        assert!(!is_wrapped("myskarn run x"));
        assert!(matches("git status", "git"));
        assert!(matches("git push origin", "git push"));
        assert!(!matches("gitk", "git"));
        assert!(!matches("git status; rm -rf ~", "git"));
        assert!(matches("docker-compose up", "docker*"));
        assert!(!matches("ls", ""));
    }
}
