//! Files an `.envrc` makes direnv read (attack 24 F15, ADR 0148).
//!
//! direnv asks the user to allow an `.envrc` once, but the files it
//! sources (`source_env .envrc.local`, `source_env_if_exists`,
//! `source_up_if_exists`, `dotenv`, `dotenv_if_exists`, plain `source` /
//! `.`) are not checked by direnv: a sandboxed command that writes one of
//! them gets code run in the user's shell at the next `cd`. [`sourced`]
//! reads an `.envrc` the way a careful reader would (no evaluation: words
//! of each command, quotes removed, `$PWD` and `~/` expanded, anything
//! else with `$` or a glob not followed) and names every file it could
//! make direnv read. `skarn run` keeps them read-only (reserved when
//! missing) and the file guard of `skarn hook` refuses them: one list.

use std::path::{Path, PathBuf};

/// Largest `.envrc` read.
const MAX_BYTES: u64 = 256 * 1024;
/// Paths named at most (past it the rest are not followed).
const MAX_PATHS: usize = 64;
/// `source_env` chains followed at most.
const MAX_DEPTH: usize = 4;

/// Names protected whenever an `.envrc` names a file it cannot resolve
/// (a variable, a glob): the usual companions.
pub const USUAL: &[&str] = &[
    ".envrc.local",
    ".envrc.private",
    ".envrc.user",
    ".env",
    ".env.local",
];

/// Words bash reads before a command's name without making them the
/// command: reserved words, `!`, a brace group, and the prefixes that run
/// the rest (attack atk24c F3: `if ...; then source_env X; fi`).
const PREFIXES: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "time",
    "command", "builtin", "nohup", "exec", "-p", "--",
];

/// Whether `w` is a variable assignment (`NAME=value`), which bash reads
/// before the command's name.
fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(n, _)| {
        !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !n.as_bytes()[0].is_ascii_digit()
    })
}

/// direnv's standard library calls whose arguments are files it reads,
/// and the file read with no argument.
const CALLS: &[(&str, Option<&str>)] = &[
    ("source_env", None),
    ("source_env_if_exists", None),
    ("source_up", Some(".envrc")),
    ("source_up_if_exists", Some(".envrc")),
    ("dotenv", Some(".env")),
    ("dotenv_if_exists", Some(".env")),
    ("watch_file", None),
    ("source", None),
    (".", None),
];

/// The files `envrc` (an `.envrc` path) could make direnv read, inside
/// its own directory tree and next to it (`dir/x`, `dir/sub/x`; never
/// the `.envrc` itself). Missing files are named too (they could be
/// created). Bounded: [`MAX_BYTES`] per file, [`MAX_PATHS`], [`MAX_DEPTH`].
pub fn sourced(envrc: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![(envrc.to_path_buf(), 0usize)];
    while let Some((f, depth)) = todo.pop() {
        let Some(dir) = f.parent().map(Path::to_path_buf) else {
            continue;
        };
        let Some(text) = read(&f) else { continue };
        for p in names(&text, &dir) {
            if out.len() >= MAX_PATHS {
                return out;
            }
            if p == envrc || out.contains(&p) {
                continue;
            }
            if depth + 1 < MAX_DEPTH {
                todo.push((p.clone(), depth + 1));
            }
            out.push(p);
        }
    }
    out
}

fn read(p: &Path) -> Option<String> {
    use std::io::Read;
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    // Never wait on a FIFO planted under the name.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, libc::O_NONBLOCK);
    let f = o.open(p).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut b = Vec::new();
    f.take(MAX_BYTES).read_to_end(&mut b).ok()?;
    Some(String::from_utf8_lossy(&b).into_owned())
}

/// The files named by one `.envrc` text, relative names against `dir`.
pub fn names(text: &str, dir: &Path) -> Vec<PathBuf> {
    names_within(text, dir, 0)
}

/// Nested texts (`eval`, `$(...)`) followed at most this deep.
const MAX_NESTING: usize = 4;

fn names_within(text: &str, dir: &Path, nesting: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut unresolved = false;
    let mut loop_words: Vec<String> = Vec::new();
    for cmd in commands(text) {
        let mut cmd: &[String] = &cmd;
        while let Some(first) = cmd.first()
            && (PREFIXES.contains(&first.as_str()) || is_assignment(first))
        {
            cmd = &cmd[1..];
        }
        // Input redirections read a file (`done < .envrc.user`), whatever
        // the command.
        let mut words = cmd.iter().peekable();
        while let Some(w) = words.next() {
            let target = if w == "<" {
                words.peek().map(|n| n.as_str())
            } else {
                w.strip_prefix('<')
                    .filter(|r| !r.is_empty() && !r.starts_with(['<', '(', '&']))
            };
            if let Some(t) = target {
                match resolve(t, dir) {
                    Some(p) => out.push(p),
                    None => unresolved = true,
                }
            }
            // A command substitution's own commands (`eval "$(cat x)"`).
            if let Some(inner) = w.split_once("$(").map(|(_, r)| r)
                && nesting < MAX_NESTING
            {
                let inner = inner.rsplit_once(')').map_or(inner, |(i, _)| i);
                out.extend(names_within(inner, dir, nesting + 1));
                if cmd.first().is_some_and(|c| c == "eval") {
                    // What it prints is run: every file it names counts.
                    for c in commands(inner) {
                        for a in c.iter().skip(1).filter(|a| !a.starts_with('-')) {
                            match resolve(a, dir) {
                                Some(p) => out.push(p),
                                None => unresolved = true,
                            }
                        }
                    }
                }
            }
        }
        let Some((name, args)) = cmd.split_first() else {
            continue;
        };
        if name == "for" {
            // `for f in A B; do source_env "$f"; done`: the words may be
            // what a later call names through a variable.
            loop_words.extend(args.iter().skip_while(|a| *a != "in").skip(1).cloned());
            continue;
        }
        if name == "eval" && nesting < MAX_NESTING {
            let joined = args.join(" ");
            if !joined.contains("$(") {
                out.extend(names_within(&joined, dir, nesting + 1));
            }
            continue;
        }
        let Some((_, default)) = CALLS.iter().find(|(c, _)| c == name) else {
            continue;
        };
        let args: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
        if args.is_empty() {
            if let Some(d) = default {
                out.push(dir.join(d));
            }
            continue;
        }
        // `source_up file` reads `file` in the parent directories: the
        // name here too (a nested `.envrc` looks up into the workspace).
        for a in args {
            match resolve(a, dir) {
                Some(p) => {
                    // `source_env dir` reads `dir/.envrc`.
                    if p.is_dir() {
                        out.push(p.join(".envrc"));
                    }
                    out.push(p);
                }
                None => unresolved = true,
            }
            if *name == "source_env" || *name == "source_env_if_exists" {
                // (One file each; further words are its arguments.)
                break;
            }
        }
    }
    if unresolved {
        out.extend(USUAL.iter().map(|u| dir.join(u)));
        out.extend(loop_words.iter().filter_map(|w| resolve(w, dir)));
    }
    let mut seen = Vec::new();
    out.retain(|p| {
        let new = !seen.contains(p);
        if new {
            seen.push(p.clone());
        }
        new
    });
    out
}

/// One argument as a path (`None`: it depends on what only bash knows).
fn resolve(a: &str, dir: &Path) -> Option<PathBuf> {
    let rest = ["$PWD/", "${PWD}/"].iter().find_map(|p| a.strip_prefix(p));
    let a = match rest {
        Some(r) => r,
        None => a,
    };
    if a.is_empty() || a.contains(['$', '`', '*', '?', '[', '{', '~']) {
        return None;
    }
    Some(crate::policy::config::normalize(&dir.join(a)))
}

/// The commands of a shell text as lists of words: split at newlines,
/// `;`, `&&`, `||` and `|`, quotes removed (no expansion), comments
/// dropped. An approximation that errs towards naming more files.
fn commands(text: &str) -> Vec<Vec<String>> {
    let mut cmds = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut w = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    let end_word = |w: &mut String, in_word: &mut bool, words: &mut Vec<String>| {
        if *in_word {
            words.push(std::mem::take(w));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    w.push(d);
                }
            }
            '"' => {
                in_word = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                w.push(e);
                            }
                        }
                        _ => w.push(d),
                    }
                }
            }
            // A command substitution stays one word (`$(cat x)`): its
            // own commands are read by the caller.
            '$' if chars.peek() == Some(&'(') => {
                in_word = true;
                w.push('$');
                let mut depth = 0usize;
                for d in chars.by_ref() {
                    w.push(d);
                    match d {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
            '\\' => {
                if let Some(e) = chars.next()
                    && e != '\n'
                {
                    in_word = true;
                    w.push(e);
                }
            }
            '#' if !in_word => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
                end_word(&mut w, &mut in_word, &mut words);
                cmds.push(std::mem::take(&mut words));
            }
            '\n' | ';' | '&' | '|' | '(' | ')' => {
                end_word(&mut w, &mut in_word, &mut words);
                cmds.push(std::mem::take(&mut words));
            }
            c if c.is_whitespace() => end_word(&mut w, &mut in_word, &mut words),
            c => {
                in_word = true;
                w.push(c);
            }
        }
    }
    end_word(&mut w, &mut in_word, &mut words);
    cmds.push(words);
    cmds.retain(|c| !c.is_empty());
    cmds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_an_envrc_reads_are_named() {
        let d = Path::new("/w");
        let n = |t: &str| names(t, d);
        assert_eq!(
            n("source_env_if_exists .envrc.local\n"),
            vec![PathBuf::from("/w/.envrc.local")]
        );
        assert_eq!(n("use flake; dotenv\n"), vec![PathBuf::from("/w/.env")]);
        assert_eq!(
            n("[ -f x ] && source \"$PWD/.envrc.private\" # comment .nope"),
            vec![PathBuf::from("/w/.envrc.private")]
        );
        assert_eq!(
            n("dotenv_if_exists 'config/.env.dev'"),
            vec![PathBuf::from("/w/config/.env.dev")]
        );
        assert_eq!(
            n("watch_file a b"),
            vec![PathBuf::from("/w/a"), PathBuf::from("/w/b")]
        );
        // A name only bash knows: the usual companions instead.
        let v = n("source_env \"$HOME_ENV\"");
        assert!(v.contains(&PathBuf::from("/w/.envrc.local")) && v.len() == USUAL.len());
        assert!(n("export FOO=source_env\necho source_env").is_empty());
        assert!(n("").is_empty());
    }

    /// What real bash runs: each candidate file holds a line that reports
    /// its own name when executed, direnv's calls are stubbed to source
    /// their file, and `.envrc` is sourced as direnv does. Every file
    /// bash ran must be among those [`names`] gives (attack atk24c F3).
    #[test]
    fn every_file_bash_runs_is_named() {
        if std::process::Command::new("bash")
            .arg("--version")
            .output()
            .is_err()
        {
            skarn_test_support::skip!("bash is not installed");
        }
        let cases = [
            "if [ -f .envrc.user ]; then source_env .envrc.user; fi",
            "if [[ -f .envrc.user ]]; then\n  source_env .envrc.user\nfi",
            "for f in .envrc.x; do source_env \"$f\"; done",
            "{ source_env .envrc.x; }",
            "time source_env .envrc.x",
            "eval \"$(cat .envrc.x)\"",
            "eval $(cat a.env)",
            "! source_env .envrc.x",
            "X=1 source .envrc.x",
            "builtin source .envrc.x",
            "command . ./a.env",
            "[[ -f a.env ]] && source_env a.env || true",
            "test -f a.env && . ./a.env",
            "while false; do :; done; source_env_if_exists .envrc.x",
            "case x in x) source_env .envrc.x ;; esac",
            "f() { source_env .envrc.x; }; f",
        ];
        let stubs = "source_env(){ builtin source \"$1\"; }; \
                     source_env_if_exists(){ [ -f \"$1\" ] && builtin source \"$1\"; }; \
                     dotenv(){ builtin source \"${1:-.env}\"; }; \
                     dotenv_if_exists(){ [ -f \"${1:-.env}\" ] && builtin source \"${1:-.env}\"; }; \
                     watch_file(){ :; }";
        for text in cases {
            let t = skarn_test_support::TempDir::new("envrc-bash");
            let d = t.path().to_path_buf();
            for f in [".envrc.user", ".envrc.x", "a.env", ".env"] {
                std::fs::write(d.join(f), format!("echo \"RAN:{f}\" >&3\n")).unwrap();
            }
            std::fs::write(d.join(".envrc"), text).unwrap();
            let o = std::process::Command::new("bash")
                .arg("-c")
                .arg(format!(
                    "{stubs}; cd \"$1\" && builtin source ./.envrc 3>&1 >/dev/null 2>&1"
                ))
                .arg("bash")
                .arg(&d)
                .output()
                .unwrap();
            let ran: Vec<String> = String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| l.strip_prefix("RAN:").map(str::to_string))
                .collect();
            assert!(
                !ran.is_empty(),
                "bash ran nothing for {text:?}: the case tests nothing"
            );
            let named = names(text, &d);
            for f in ran {
                assert!(
                    named.contains(&d.join(&f)),
                    "{text:?}: bash ran {f}, named only {named:?}"
                );
            }
        }
    }

    #[test]
    fn chains_are_followed_within_bounds() {
        let t = skarn_test_support::TempDir::new("envrc");
        let d = t.path().to_path_buf();
        std::fs::write(d.join(".envrc"), "source_env .envrc.local\n").unwrap();
        std::fs::write(d.join(".envrc.local"), "dotenv .env.secret\n").unwrap();
        let v = sourced(&d.join(".envrc"));
        assert_eq!(v, vec![d.join(".envrc.local"), d.join(".env.secret")]);
        // A loop ends.
        std::fs::write(
            d.join(".envrc.local"),
            "source_env .envrc\nsource_env .envrc.local\n",
        )
        .unwrap();
        assert_eq!(sourced(&d.join(".envrc")), vec![d.join(".envrc.local")]);
        let many: String = (0..500).map(|i| format!("watch_file f{i}\n")).collect();
        std::fs::write(d.join(".envrc"), many).unwrap();
        assert_eq!(sourced(&d.join(".envrc")).len(), MAX_PATHS);
    }
}
