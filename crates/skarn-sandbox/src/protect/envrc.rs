//! Files an `.envrc` makes direnv read (attack 24 F15, ADR 0148).
//!
//! direnv asks the user to allow an `.envrc` once, but the files it
//! sources (`source_env .envrc.local`, `source_env_if_exists`,
//! `source_up_if_exists`, `dotenv`, `dotenv_if_exists`, plain `source` /
//! `.`) are not checked by direnv: a sandboxed command that writes one of
//! them gets code run in the user's shell at the next `cd`. [`sourced`]
//! reads an `.envrc` the way a careful reader would (no evaluation: words
//! of each command, quotes removed, what bash resolves without running
//! the project expanded: [`super::envrc_static`]) and names every file it
//! could make direnv read, and every place its exports make host programs
//! load (`envrc_exports`, ADR 0198); what it cannot resolve
//! names every path the text mentions (`envrc_mentions`).
//! `skarn run` keeps them read-only (reserved when missing) and the file
//! guard of `skarn hook` refuses them: one list.

use std::path::{Path, PathBuf};

use crate::protect::shell_words::{self, Token, Vars};

/// Largest `.envrc` read.
const MAX_BYTES: u64 = 256 * 1024;
/// Paths named at most: past it the `.envrc`'s whole directory tree is
/// named instead (fail closed, [`over_cap`] says so).
const MAX_PATHS: usize = 4096;
/// `source_env` chains followed at most.
const MAX_DEPTH: usize = 4;

/// Names protected whenever an `.envrc` names a file it cannot resolve
/// (a variable, a glob): the usual companions.
pub(crate) const USUAL: &[&str] = &[
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
/// created), and what it exports that host programs load
/// (`export PYTHONPATH=$PWD/src`: the directory, named whole). Bounded:
/// [`MAX_BYTES`] per file, [`MAX_DEPTH`]; past [`MAX_PATHS`] names, the
/// `.envrc`'s directory itself (its whole tree).
pub fn sourced(envrc: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let top = envrc.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut todo = vec![(envrc.to_path_buf(), 0usize)];
    while let Some((f, depth)) = todo.pop() {
        let Some(dir) = f.parent().map(Path::to_path_buf) else {
            continue;
        };
        let Some(text) = read(&f) else { continue };
        // A relative name in a file the `.envrc` sources is resolved by
        // bash against the directory direnv runs in (the `.envrc`'s),
        // by `source_env` against the file's own: both are named
        // (atk22d F3: `scripts/env.sh` sourcing `scripts/lib.sh`).
        let mut named = names(&text, &dir);
        if dir != top {
            for p in names(&text, &top) {
                if !named.contains(&p) {
                    named.push(p);
                }
            }
        }
        for p in named {
            if out.len() >= MAX_PATHS {
                // No silent cut: the whole tree.
                out.push(top);
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

/// The line to show when [`sourced`] named the `.envrc`'s whole tree
/// (more than [`MAX_PATHS`] names), `None` otherwise.
pub fn over_cap(envrc: &Path) -> Option<String> {
    let dir = envrc.parent()?;
    sourced(envrc).iter().any(|p| p == dir).then(|| {
        format!(
            "{} names more files direnv would read or host programs load than skarn lists \
             (more than {MAX_PATHS} names, or more than 100,000 entries searched for `use \
             flake`): all of {} is read-only for this run",
            envrc.display(),
            dir.display()
        )
    })
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

use super::envrc_exports::PREFIXES;

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
/// `F=x`, arrays, [`crate::protect::shell_words::Vars`]); substitutions
/// bash resolves statically are replaced by their value. Exports of
/// names host programs load are named too. Whatever cannot be resolved
/// names the usual companions ([`USUAL`]) and every path the text
/// mentions.
pub fn names(text: &str, dir: &Path) -> Vec<PathBuf> {
    read_text(text, dir).0
}

/// The `PATH` directories an `.envrc` (this file only) exports
/// (`PATH_add bin`, `PATH=$PWD/bin:$PATH`): among [`sourced`]'s names; a
/// missing one is checked after the run instead of reserved (a reserved
/// `node_modules/.bin` would stop `npm install`).
pub fn path_dirs(envrc: &Path) -> Vec<PathBuf> {
    match (envrc.parent(), read(envrc)) {
        (Some(dir), Some(text)) => read_text(&text, dir).1,
        _ => Vec::new(),
    }
}

fn read_text(text: &str, dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut vars = Vars::default();
    for line in text.lines().take(65_536) {
        vars.learn(&shell_words::words(line));
    }
    let mut r = Reader {
        dir,
        vars,
        out: Vec::new(),
        unresolved: false,
        nix_walked: false,
        path_dirs: Vec::new(),
    };
    r.text(text, 0, false);
    let mut out = r.out;
    if r.unresolved {
        out.extend(USUAL.iter().map(|u| dir.join(u)));
        // Not only the usual names: every path the text mentions
        // (`"$(find_up x)/scripts/env.sh"`: its literal tail).
        out.extend(super::envrc_mentions::mentioned(text, dir));
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    let mut path = r.path_dirs;
    path.sort();
    path.dedup();
    (out, path)
}

struct Reader<'a> {
    dir: &'a Path,
    vars: Vars,
    out: Vec<PathBuf>,
    unresolved: bool,
    nix_walked: bool,
    /// `PATH` directories the text exports.
    path_dirs: Vec<PathBuf>,
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
        // What it exports that host programs load (atk24d F3).
        self.out.extend(super::envrc_exports::places(
            &words,
            self.dir,
            &self.vars,
            &mut self.nix_walked,
            &mut self.path_dirs,
        ));
        // `s=source_env; $s x`: a command named through a variable.
        let named: Vec<String> = words.iter().map(|w| self.called(w)).collect();
        let words: Vec<&str> = named.iter().map(String::as_str).collect();
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

    /// `w`, or the direnv call (or `eval`/`source`) a variable `w` holds.
    fn called(&self, w: &str) -> String {
        let name = w
            .strip_prefix("${")
            .and_then(|n| n.strip_suffix('}'))
            .or_else(|| w.strip_prefix('$'))
            .filter(|n| {
                n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_[]@*".contains(c))
            });
        let Some(name) = name.map(|n| n.split_once('[').map_or(n, |(n, _)| n)) else {
            return w.to_string();
        };
        self.vars
            .get(name)
            .iter()
            .find(|v| *v == "eval" || CALLS.iter().any(|(c, _)| c == v))
            .cloned()
            .unwrap_or_else(|| w.to_string())
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
        // decides (unless bash knows the value: `$(pwd)/x`).
        if super::envrc_static::substitute(a, self.dir).is_none() {
            for inner in substitutions(a) {
                self.text(inner, nest + 1, true);
            }
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

/// One argument as paths; `None`: only bash knows. Static
/// substitutions (`$(pwd)`, `$(dirname "${BASH_SOURCE[0]}")`) and brace
/// expansion first ([`super::envrc_static`]).
fn resolve(a: &str, dir: &Path, vars: &Vars) -> Option<Vec<(PathBuf, How)>> {
    let a = super::envrc_static::substitute(a, dir)?;
    let mut out = Vec::new();
    for w in super::envrc_static::braces(&a)? {
        out.extend(resolve_one(&w, dir, vars)?);
    }
    Some(out)
}

fn resolve_one(a: &str, dir: &Path, vars: &Vars) -> Option<Vec<(PathBuf, How)>> {
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
#[path = "envrc_tests.rs"]
mod tests;
