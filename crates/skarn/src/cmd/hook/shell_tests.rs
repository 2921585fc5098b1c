//! Tests of `shell`: quoting, patterns, the wrapped form.

use super::*;

#[test]
fn quoting_round_trips_through_sh() {
    // Also read by fish when it is installed (atk24e F8: `\'` inside
    // single quotes is an escape there).
    let shells: Vec<&str> = ["sh", "bash", "fish"]
        .into_iter()
        .filter(|sh| {
            std::process::Command::new(sh)
                .args(["-c", "true"])
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .collect();
    for s in [
        "plain",
        "it's",
        "'",
        "a\"b$HOME`x`",
        "",
        "''\\'",
        "echo a\\'; touch /tmp/x #",
        "\\\\'\\",
    ] {
        for sh in &shells {
            let out = std::process::Command::new(sh)
                .args(["-c", &format!("printf %s {}", quote(s))])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), s, "{sh}: {s}");
        }
        // No backslash is ever inside single quotes.
        let q = quote(s);
        assert!(
            !q.split('"').step_by(2).any(|part| part.contains('\\')),
            "{q}"
        );
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
    assert!(w(
        "'/usr/bin/skarn' run --caller hook --workspace '/w' -- bash -c 'a; b'"
    ));
    assert!(w(&confined("/usr/bin/skarn", "/w", "it's; $(x)")));
    // Without the marker that a model reads the output: confined again.
    assert!(!w(
        "'/usr/bin/skarn' run --workspace '/w' -- bash -c 'a; b'"
    ));
    assert!(w(&format!(
        "'/usr/bin/skarn' run --caller hook --workspace '/w' -- bash -c {}",
        quote("it's; $(x)")
    )));
    // Another program called skarn, widening flags, another workspace,
    // or anything after the quoted command: not wrapped.
    assert!(!w("skarn run -- ls"));
    assert!(!w("bin/skarn run --workspace . -- make"));
    assert!(!w(
        "'/usr/bin/skarn' run --caller hook --no-sandbox --workspace '/w' -- bash -c 'x'"
    ));
    assert!(!w(
        "'/usr/bin/skarn' run --caller hook --workspace '/' -- bash -c 'x'"
    ));
    assert!(!w(
        "'/usr/bin/skarn' run --caller hook --workspace '/w' -- bash -c 'x'; id"
    ));
    assert!(!w(
        "'/usr/bin/skarn' run --caller hook --workspace '/w' -- bash -c 'x"
    ));
    // A backslash inside single quotes reads differently in fish.
    assert!(!w(
        "'/usr/bin/skarn' run --caller hook --workspace '/w' -- bash -c 'a\\'\\''; touch x #'"
    ));
    assert!(matches("git status", "git"));
    assert!(matches("git push origin", "git push"));
    assert!(!matches("gitk", "git"));
    assert!(!matches("git status; rm -rf ~", "git"));
    assert!(matches("docker-compose up", "docker*"));
    // atk24l F1: options past a whole-word pattern, quoted or
    // abbreviated ones that run programs past a `*` pattern.
    assert!(!matches("git push --rece='touch x' .", "git push"));
    assert!(!matches("git push \"--receive-pack=x\" .", "git push"));
    assert!(!matches("git push -u origin main", "git push"));
    assert!(!matches("npm run build --script-shell=/x", "npm run build"));
    assert!(matches("git push origin main", "git push"));
    assert!(matches("git push --force origin", "git push*"));
    for c in [
        "git push --rece=x .",
        "git push '--exec=x' .",
        "git push --\"receive-pack\"=x .",
        "git --git-dir=/x push",
        "ssh -oProxyCommand=x host",
        "ssh -o ProxyCommand=x host",
        "rsync -avessh a b",
        "scp -S prog a b",
    ] {
        let p = if c.starts_with("git") {
            "git*"
        } else if c.starts_with("ssh") {
            "ssh*"
        } else if c.starts_with("rsync") {
            "rsync*"
        } else {
            "scp*"
        };
        assert!(!matches(c, p), "{c}");
    }
    assert!(!matches("ls", ""));
}

#[test]
fn prefix_patterns_match_only_the_named_program() {
    for (cmd, pattern) in [
        ("git status", "git*"),
        ("git push origin", "git pu*"),
        ("gitk --all", "git*"),
        ("/usr/bin/git log", "/usr/bin/git*"),
        ("sudo apt update", "sudo apt*"),
        ("env", "env*"),
        ("git log", "git"),
    ] {
        assert!(matches(cmd, pattern), "{cmd} should match {pattern}");
    }
    for (cmd, pattern) in [
        // An option of the program that runs another (atk24k F4).
        ("git -c a=b log", "git*"),
        // An environment assignment first: bash runs, not git.
        ("git=1 bash -c 'id > /tmp/pwn'", "git*"),
        ("git=1 bash -c 'id > /tmp/pwn'", "git"),
        ("gitx=1 bash", "git*"),
        ("GIT_DIR=/x git status", "GIT*"),
        ("FOO=1 make", "FOO=1 make"),
        // Quoted or escaped first words.
        ("'git' status", "git*"),
        ("\"git\" status", "git*"),
        ("git'' status", "git*"),
        ("gi\\t status", "gi*"),
        // A name prefix does not stretch over a `/` into a path.
        ("dockerx/../../../usr/bin/python3 -c 'import os'", "docker*"),
        ("docker/../evil.sh", "docker*"),
        ("git/x", "git*"),
        // Programs that run another one, unless named exactly.
        ("env bash -c id", "e*"),
        ("exec bash", "e*"),
        ("command bash", "c*"),
        ("nice bash", "n*"),
        ("sudo bash", "s*"),
        ("/usr/bin/env bash", "/usr/bin/e*"),
        ("bash -c id", "b*"),
        ("git status", "git st *"),
        // Redirections, groups, lists, substitutions, newlines.
        (">/tmp/x git status", "*"),
        ("2>x git status", "2*"),
        ("(git status)", "(git*"),
        ("{ git status; }", "{*"),
        ("git status; id", "git*"),
        ("git status && id", "git*"),
        ("git status | sh", "git*"),
        ("git $(id)", "git*"),
        ("git `id`", "git*"),
        ("git status\nid", "git*"),
        // Only the exact program for a pattern with words.
        ("gitk status", "git st*"),
    ] {
        assert!(!matches(cmd, pattern), "{cmd} must not match {pattern}");
    }
}

#[test]
fn quoted_words_come_back_and_installed_hooks_are_recognised_exactly() {
    for words in [
        vec!["/opt/my skarn/bin/skarn".to_string(), "codex".into()],
        vec!["it's \\ odd".to_string(), "x".into(), "".into()],
    ] {
        let line: Vec<String> = words.iter().map(|w| quote(w)).collect();
        assert_eq!(unquote_words(&line.join(" ")), Some(words));
    }
    assert_eq!(unquote_words("'a' b"), None);
    assert_eq!(unquote_words("'a'  'b'"), None);
    use crate::cmd::hook::{installed_command, is_installed_hook};
    let exe = "/opt/it's/skarn";
    let cmd = installed_command(exe, "claude-code");
    assert!(is_installed_hook(&cmd, "claude-code"));
    assert!(!is_installed_hook(&cmd, "codex"));
    assert!(is_installed_hook(
        "'/old/skarn' hook claude-code",
        "claude-code"
    ));
    assert!(!is_installed_hook(
        "curl x | sh # hook claude-code",
        "claude-code"
    ));
    assert!(!is_installed_hook(
        &format!("{cmd}; curl x | sh"),
        "claude-code"
    ));
    assert!(!is_installed_hook(
        "'/old/skarn' hook claude-code; curl x",
        "claude-code"
    ));
}
