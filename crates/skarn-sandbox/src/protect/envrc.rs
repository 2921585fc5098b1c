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

use crate::protect::shell_words::{self, Token, Vars};

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

/// Words bash reads before a command's name (reserved words, prefixes):
/// `then source_env x`, `{ source_env x; }`, `time source_env x`.
const PREFIXES: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "!", "time",
    "-p", "command", "builtin", "exec", "nohup", "noglob", "coproc", "[[", "]]",
];

/// Programs whose file arguments are read as data: in `eval "$(cat x)"`,
/// `x` is code.
const READERS: &[&str] = &[
    "cat", "head", "tail", "sed", "awk", "grep", "cut", "tr", "envsubst", "sort", "uniq", "tac",
    "jq", "yq", "xargs", "base64", "gunzip", "zcat", "paste", "strings",
];

/// Nesting of `eval`/substitutions followed at most.
const MAX_NEST: usize = 4;

/// The files named by one `.envrc` text, relative names against `dir`.
///
/// Read as bash reads commands: reserved words and prefixes before a
/// command's name are skipped, a direnv call or `source` is found at any
/// place in a command (`.` only as its name), `eval`'s text and command
/// substitutions are read again, and the target of an input redirection
/// (`< x`) is named. Variables are those the text assigns (`for f in x`,
/// `F=x`, [`crate::protect::shell_words::Vars`]). Whatever cannot be
/// resolved names the usual companions ([`USUAL`]).
pub fn names(text: &str, dir: &Path) -> Vec<PathBuf> {
    let mut vars = Vars::default();
    for line in text.lines().take(65_536) {
        vars.learn(&shell_words::words(line));
    }
    let mut r = Reader {
        dir,
        vars,
        out: Vec::new(),
        unresolved: false,
    };
    r.text(text, 0, false);
    let mut out = r.out;
    if r.unresolved {
        out.extend(USUAL.iter().map(|u| dir.join(u)));
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

struct Reader<'a> {
    dir: &'a Path,
    vars: Vars,
    out: Vec<PathBuf>,
    unresolved: bool,
}

impl Reader<'_> {
    /// Read `text`'s commands; `code`: what they print is run (inside
    /// `eval "$(...)"` or a file argument's substitution).
    fn text(&mut self, text: &str, nest: usize, code: bool) {
        if nest > MAX_NEST {
            self.unresolved = true;
            return;
        }
        for cmd in shell_words::commands(text) {
            self.command(&cmd, nest, code);
        }
    }

    fn command(&mut self, cmd: &[Token], nest: usize, code: bool) {
        // Redirections: a file read is named; their targets are no words.
        let mut words: Vec<&str> = Vec::new();
        let mut it = cmd.iter();
        while let Some(t) = it.next() {
            match t {
                Token::Word(w) => words.push(w),
                Token::In => {
                    if let Some(Token::Word(f)) = it.next() {
                        self.file(f, nest);
                    }
                }
                Token::Other => {
                    it.next();
                }
            }
        }
        // Command substitutions anywhere: read as commands of their own.
        for w in &words {
            for inner in substitutions(w) {
                self.text(inner, nest + 1, false);
            }
        }
        let first = words
            .iter()
            .position(|w| !PREFIXES.contains(w) && !is_assignment(w));
        for (i, w) in words.iter().enumerate() {
            let at_name = Some(i) == first;
            let args = &words[i + 1..];
            if *w == "eval" && at_name {
                self.eval(&args.join(" "), nest);
            } else if code && at_name && READERS.contains(w) {
                // Inside a substitution: what it prints is code.
                for a in args.iter().filter(|a| !a.starts_with('-')) {
                    self.file(a, nest);
                }
            } else if let Some((_, default)) =
                CALLS.iter().find(|(c, _)| c == w && (at_name || *c != "."))
            {
                self.call(w, default, args, nest);
            }
        }
        if code && first.is_some_and(|f| !READERS.contains(&words[f])) {
            // `eval "$(lorri direnv)"`: code from a program's output.
            self.unresolved = true;
        }
    }

    fn eval(&mut self, text: &str, nest: usize) {
        let subs = substitutions(text);
        if text.contains('$') && subs.is_empty() {
            self.unresolved = true;
        }
        for inner in subs {
            self.text(inner, nest + 1, true);
        }
        self.text(text, nest + 1, false);
    }

    fn call(&mut self, name: &str, default: &Option<&str>, args: &[&str], nest: usize) {
        let args: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| !a.starts_with('-'))
            .collect();
        if args.is_empty() {
            if let Some(d) = default {
                self.out.push(self.dir.join(d));
            }
            return;
        }
        for a in args {
            self.file(a, nest);
            if name == "source_env" || name == "source_env_if_exists" {
                // (One file each; further words are its arguments.)
                break;
            }
        }
    }

    /// One word naming a file read.
    fn file(&mut self, a: &str, nest: usize) {
        // `source <(cat x)`, `source_env "$(cat x)"`: what `x` holds
        // decides.
        for inner in substitutions(a) {
            self.text(inner, nest + 1, true);
        }
        match resolve(a, self.dir, &self.vars) {
            Some(ps) => {
                for (p, how) in ps {
                    // `source_env dir` reads `dir/.envrc` (the directory
                    // itself is named only for a glob in it).
                    if p.is_dir() && how != How::Glob {
                        self.out.push(p.join(".envrc"));
                    } else {
                        self.out.push(p);
                    }
                    self.unresolved |= how != How::Exact;
                }
            }
            None => self.unresolved = true,
        }
    }
}

/// `NAME=value` (a prefix assignment).
fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(n, _)| {
        !n.is_empty()
            && !n.starts_with(|c: char| c.is_ascii_digit())
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The texts of the `$(...)` in a word (as [`shell_words::commands`]
/// keeps them).
fn substitutions(w: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = w;
    while let Some(at) = rest.find("$(") {
        let body = &rest[at + 2..];
        let mut depth = 1u32;
        let mut end = body.len();
        for (i, c) in body.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push(&body[..end]);
        rest = &body[(end + 1).min(body.len())..];
    }
    out
}

/// How a path was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum How {
    /// Written out.
    Exact,
    /// Through a variable's value (it may differ when bash runs).
    Var,
    /// The fixed directory of a glob (everything in it).
    Glob,
}

/// One argument as paths; `None`: only bash knows.
fn resolve(a: &str, dir: &Path, vars: &Vars) -> Option<Vec<(PathBuf, How)>> {
    if a.is_empty() || a.contains("$(") || a.contains(['`', '~']) {
        return None;
    }
    let rest = ["$PWD/", "${PWD}/"].iter().find_map(|p| a.strip_prefix(p));
    let a = rest.unwrap_or(a);
    let paths: Vec<(PathBuf, How)> = if a.contains('$') {
        let abs = if a.starts_with('$') {
            shell_words::expand(a, dir, vars)
        } else {
            None
        };
        let e =
            abs.or_else(|| shell_words::expand(&format!("{}/{a}", dir.display()), dir, vars))?;
        e.into_iter().map(|e| (e.path, How::Var)).collect()
    } else {
        vec![(dir.join(a), How::Exact)]
    };
    let mut out = Vec::new();
    for (p, approx) in paths {
        let p = crate::policy::config::normalize(&p);
        if shell_words::is_pattern(&p) {
            // A glob: its fixed directory when below `dir`, else unknown.
            let (base, _) = shell_words::pattern_base(&p);
            if base == dir || !base.starts_with(dir) {
                return None;
            }
            out.push((base, How::Glob));
        } else {
            out.push((p, approx));
        }
    }
    Some(out)
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

    /// Attack 24c F3: the call after a reserved word or prefix, `eval`,
    /// an input redirection.
    #[test]
    fn commands_are_read_as_bash_reads_them() {
        let d = Path::new("/w");
        let user = PathBuf::from("/w/.envrc.user");
        for t in [
            "if [ -f .envrc.user ]; then source_env .envrc.user; fi",
            "if [[ -f .envrc.user ]]; then\n  source_env .envrc.user\nfi",
            "for f in .envrc.user; do source_env \"$f\"; done",
            "{ source_env .envrc.user; }",
            "time source_env .envrc.user",
            "time -p command source .envrc.user",
            "! builtin . ./.envrc.user",
            "if false; then :; else source_env .envrc.user; fi",
            "if false; then :; elif true; then dotenv .envrc.user; fi",
            "eval \"$(cat .envrc.user)\"",
            "eval `cat .envrc.user`",
            "eval \"source_env .envrc.user\"",
            "while read -r l; do export \"$l\"; done < .envrc.user",
            "while read -r l; do export \"$l\"; done <.envrc.user",
            "source <(cat .envrc.user)",
            "X=1 source_env .envrc.user",
            "test -f .envrc.user && watch_file .envrc.user && source_env .envrc.user",
            "F=.envrc.user\nsource_env \"$F\"",
        ] {
            assert!(names(t, d).contains(&user), "{t:?}: {:?}", names(t, d));
        }
        // What only bash knows: the usual companions.
        for t in [
            "eval \"$(lorri direnv)\"",
            "eval \"$SETUP\"",
            "load() { source_env \"$1\"; }; load x",
            "source_env \"$(find_up .envrc.user)\"",
            "for f in *.sh; do source_env \"$f\"; done",
        ] {
            let v = names(t, d);
            assert!(
                v.contains(&PathBuf::from("/w/.envrc.local")),
                "{t:?}: {v:?}"
            );
        }
        // Plain commands name nothing: no companions reserved for them.
        for t in [
            "export GIT_SHA=$(git rev-parse HEAD)",
            "PATH_add bin; layout python3; use nix",
            "find . -name x > out.txt 2>&1",
            "cat <<EOF > x\nhello\nEOF",
        ] {
            assert!(names(t, d).is_empty(), "{t:?}: {:?}", names(t, d));
        }
        // A glob in a directory below: that directory.
        assert!(
            names("for f in .envrc.d/*.sh; do source_env \"$f\"; done", d)
                .contains(&PathBuf::from("/w/.envrc.d"))
        );
    }

    /// What bash itself runs when the `.envrc` is read (direnv's stdlib
    /// calls defined as sourcing functions, as direnv does): every file
    /// whose code ran is one [`names`] named.
    #[test]
    fn differential_against_bash() {
        let t = skarn_test_support::TempDir::new("envrc_bash");
        let d = t.path().to_path_buf();
        let log = d.join("ran.log");
        let texts = [
            "if [ -f .envrc.user ]; then source_env .envrc.user; fi",
            "for f in .envrc.user; do source_env \"$f\"; done",
            "{ source_env .envrc.user; }",
            "time source_env .envrc.user 2>/dev/null",
            "eval \"$(cat .envrc.user)\"",
            "eval `cat .envrc.user`",
            "while read -r l; do eval \"$l\"; done < .envrc.user",
            "source <(cat .envrc.user)",
            "! builtin . ./.envrc.user",
            "X=1 source_env_if_exists .envrc.user",
            "F=.envrc.user; dotenv \"$F\"",
            "test -f .envrc.user && { watch_file .envrc.user; source_env .envrc.user; }",
            "case x in x) source_env .envrc.user;; esac",
            "if true; then source \"${PWD}/.envrc.user\"; fi",
        ];
        let stdlib = "source_env() { . \"$1\"; }\nsource_env_if_exists() { [ -f \"$1\" ] && . \"$1\"; }\n\
                      dotenv() { . \"$1\"; }\nwatch_file() { :; }\n";
        for text in texts {
            let _ = std::fs::remove_file(&log);
            std::fs::write(d.join(".envrc"), text).unwrap();
            std::fs::write(
                d.join(".envrc.user"),
                format!("echo \"$PWD/.envrc.user\" >> {}\n", log.display()),
            )
            .unwrap();
            let out = std::process::Command::new("bash")
                .arg("-c")
                .arg(format!("{stdlib}. ./.envrc"))
                .current_dir(&d)
                .output()
                .unwrap();
            let ran = std::fs::read_to_string(&log).unwrap_or_default();
            assert!(
                !ran.is_empty(),
                "bash did not run the file for {text:?}: {out:?}"
            );
            let named = sourced(&d.join(".envrc"));
            for line in ran.lines() {
                assert!(
                    named.contains(&PathBuf::from(line)),
                    "{text:?}: bash ran {line}, the reader named {named:?}"
                );
            }
        }
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
        // Texts at the size bound read quickly, whatever their shape.
        for unit in [
            "eval \"$(eval \"$(cat x)\")\" ",
            "$($($($(",
            "source_env a; ",
            "<(<(<(",
            "watch_file a b c d e f; ",
        ] {
            let big = unit.repeat(MAX_BYTES as usize / unit.len());
            let v = names(&big, &d);
            let mut u = v.clone();
            u.sort();
            u.dedup();
            assert_eq!(u.len(), v.len(), "no name twice");
        }
        let many: String = (0..500).map(|i| format!("watch_file f{i}\n")).collect();
        std::fs::write(d.join(".envrc"), many).unwrap();
        assert_eq!(sourced(&d.join(".envrc")).len(), MAX_PATHS);
    }
}
