//! What an `.envrc` EXPORTS that host programs then run or load (attack
//! atk24d F3, ADR 0198): `export PYTHONPATH=$PWD/src`, `BASH_ENV`,
//! `NODE_OPTIONS=--require x`, `LD_PRELOAD`, `PATH_add bin`, `path_add
//! VAR dir`, `layout python`, `use flake` / `use nix` (the `.nix` files a
//! flake imports), `use devbox`. direnv applies these to the user's shell
//! when it enters the directory; every host program started there then
//! loads what they name. Each place inside the `.envrc`'s tree is named
//! whole (a directory: its whole tree read-only for the run, reserved
//! when missing), as the caller's own environment is
//! ([`crate::protect::host_programs::ENV_PLACES`]).

use std::path::{Path, PathBuf};

/// Words bash reads before a command's name (reserved words, prefixes):
/// `then source_env x`, `{ source_env x; }`, `time source_env x`.
pub(super) const PREFIXES: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "!", "time",
    "-p", "command", "builtin", "exec", "nohup", "noglob", "coproc", "[[", "]]",
];

use crate::protect::shell_words::{self, Vars};

/// Entries looked at for `use flake` / `use nix` (past it: the whole
/// tree is named).
const MAX_WALK: usize = 100_000;

/// Commands that export their assignment words.
const EXPORTERS: &[&str] = &["export", "declare", "typeset", "readonly", "local"];

/// Dependency and build trees not searched for `.nix` files (the walk's
/// list, `grant_walk::SKIPPED`, which is Unix-only).
const DEP_TREES: &[&str] = &["node_modules", "target", ".venv", "venv", "__pycache__"];

/// Whether host programs load code from what `name` names (on Unix, the
/// caller-environment list `host_programs::ENV_PLACES`).
fn watched(name: &str) -> bool {
    #[cfg(unix)]
    let listed = crate::protect::host_programs::ENV_PLACES
        .iter()
        .any(|(n, secret)| !*secret && *n == name);
    #[cfg(not(unix))]
    let listed = false;
    name == "PATH" || listed
}

/// The places one command of an `.envrc` (its words, quotes removed)
/// exports, each absolute; `dir` is the `.envrc`'s directory. `walked`:
/// the tree was already searched for `.nix` files (once per text).
/// `PATH` directories (`PATH=`, `PATH_add`, `path_add PATH`) also go to
/// `path` (a missing one is left to the after-run check, as a missing
/// directory of the caller's `PATH` is).
pub(super) fn places(
    words: &[&str],
    dir: &Path,
    vars: &Vars,
    walked: &mut bool,
    path: &mut Vec<PathBuf>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    // (`if ...; then export X=...; fi`: reserved words are no name.)
    let words: Vec<&str> = words
        .iter()
        .copied()
        .skip_while(|w| PREFIXES.contains(w))
        .collect();
    let words = words.as_slice();
    let first = words.iter().position(|w| !is_assignment(w));
    let name = first.map(|i| words[i]);
    // Assignments: before the name, or the arguments of `export`.
    let assigns = words.iter().enumerate().filter(|(i, w)| {
        is_assignment(w)
            && (first.is_none_or(|f| *i < f) || name.is_some_and(|n| EXPORTERS.contains(&n)))
    });
    for (_, w) in assigns {
        let Some((n, v)) = w.split_once('=') else {
            continue;
        };
        let n = n.trim_end_matches('+');
        if watched(n) {
            let at = out.len();
            value_places(n, v, dir, vars, &mut out);
            if n == "PATH" {
                path.extend_from_slice(&out[at..]);
            }
        }
    }
    let args: Vec<&str> = first
        .map(|f| {
            words[f + 1..]
                .iter()
                .copied()
                .filter(|a| !a.starts_with('-'))
                .collect()
        })
        .unwrap_or_default();
    match (name.unwrap_or_default(), args.as_slice()) {
        ("PATH_add", dirs) => {
            for d in dirs {
                value_places("PATH", d, dir, vars, &mut out);
            }
            path.extend_from_slice(&out);
        }
        ("load_prefix", dirs) => {
            for d in dirs {
                value_places("PATH", d, dir, vars, &mut out);
            }
        }
        ("path_add", [var, dirs @ ..]) if watched(var) => {
            for d in dirs {
                value_places(var, d, dir, vars, &mut out);
            }
            if *var == "PATH" {
                path.extend_from_slice(&out);
            }
        }
        ("layout", [kind, ..]) => layout(kind, dir, &mut out, path),
        (l, _) if l.starts_with("layout_") => layout(&l["layout_".len()..], dir, &mut out, path),
        ("use", [what, ..]) => uses(what, dir, &mut out, walked),
        (u, _) if u.starts_with("use_") => uses(&u["use_".len()..], dir, &mut out, walked),
        _ => {}
    }
    out
}

/// `NAME=value` (`NAME+=value`).
fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(n, _)| {
        let n = n.trim_end_matches('+');
        !n.is_empty()
            && !n.starts_with(|c: char| c.is_ascii_digit())
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The places a value of `var` names: `:`-separated lists, words of
/// option strings (`--require x`, `--import=x`), each resolved against
/// `dir` as bash would (`$PWD`, `$(pwd)`, `${V:-x}`). Words only the
/// running shell knows (`$PATH`) name nothing.
fn value_places(var: &str, v: &str, dir: &Path, vars: &Vars, out: &mut Vec<PathBuf>) {
    let Some(v) = super::envrc_static::substitute(v, dir) else {
        return;
    };
    let top = super::envrc_static::git_top(dir);
    for piece in v
        .split(|c: char| c == ':' || c.is_whitespace())
        .filter(|p| !p.is_empty())
    {
        let piece = match piece.split_once('=') {
            Some((opt, val)) if opt.starts_with('-') => val,
            _ if piece.starts_with('-') => continue,
            _ => piece,
        };
        let paths: Vec<PathBuf> = if piece.contains('$') {
            let abs = piece.starts_with('$');
            let w = if abs {
                piece.to_string()
            } else {
                format!("{}/{piece}", dir.display())
            };
            match shell_words::expand(&w, dir, vars) {
                Some(e) => e.into_iter().map(|e| e.path).collect(),
                None => continue,
            }
        } else {
            vec![dir.join(piece)]
        };
        for p in paths {
            let p = crate::policy::config::normalize(&p);
            if !p.starts_with(dir) && top.as_ref().is_none_or(|t| !p.starts_with(t)) {
                continue;
            }
            if dir.starts_with(&p) {
                // The `.envrc`'s own directory (or above): not named whole
                // (the project itself); python's start-up modules there.
                if var.starts_with("PYTHON") {
                    out.extend(["sitecustomize.py", "usercustomize.py"].map(|m| p.join(m)));
                }
                continue;
            }
            out.push(p);
        }
    }
}

/// `layout python` and the others keep their environment in `.direnv`;
/// `layout go`, `layout node` and `layout php` put the project's `bin`,
/// `node_modules/.bin` and `vendor/bin` on `PATH` (atk22e: the last two
/// were not seen), named as `PATH_add` names them.
fn layout(kind: &str, dir: &Path, out: &mut Vec<PathBuf>, path: &mut Vec<PathBuf>) {
    out.push(dir.join(".direnv"));
    let bin = match kind {
        "go" => Some("bin"),
        "node" => Some("node_modules/.bin"),
        "php" => Some("vendor/bin"),
        _ => None,
    };
    if let Some(b) = bin {
        out.push(dir.join(b));
        path.push(dir.join(b));
    }
}

/// `use flake` / `use nix`: every `.nix` file and `flake.lock` of the
/// tree (a flake imports them); `use devbox`: its files.
fn uses(what: &str, dir: &Path, out: &mut Vec<PathBuf>, walked: &mut bool) {
    let mut nix = |out: &mut Vec<PathBuf>| {
        if !std::mem::replace(walked, true) {
            nix_files(dir, out);
        }
    };
    match what {
        "flake" | "nix" => nix(out),
        "devbox" => out.extend(["devbox.json", "devbox.lock", "devbox.d"].map(|f| dir.join(f))),
        "devenv" => {
            out.extend(["devenv.nix", "devenv.yaml", "devenv.lock"].map(|f| dir.join(f)));
            nix(out);
        }
        _ => {}
    }
}

/// Every `*.nix` and `flake.lock` below `dir` (not in `.git`, `.direnv`
/// or the dependency and build trees); past
/// [`MAX_WALK`] entries, `dir` itself (the whole tree, fail closed).
fn nix_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut seen = 0usize;
    let mut todo = vec![dir.to_path_buf()];
    let mut found = Vec::new();
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_WALK {
                out.push(dir.to_path_buf());
                return;
            }
            let name = e.file_name();
            let name = name.to_string_lossy();
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                // (Dependency and build trees are no flake's source; a
                // flake that imports from one names it in `flake.nix`,
                // which stays read-only.)
                if name != ".git" && name != ".direnv" && !DEP_TREES.contains(&name.as_ref()) {
                    todo.push(e.path());
                }
            } else if name.ends_with(".nix") || name == "flake.lock" {
                found.push(e.path());
            }
        }
    }
    out.extend(found);
}

// (Unix paths.)
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn p(t: &str) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for c in shell_words::commands(t) {
            let w: Vec<&str> = c
                .iter()
                .filter_map(|t| match t {
                    shell_words::Token::Word(w) => Some(w.as_str()),
                    _ => None,
                })
                .collect();
            out.extend(places(
                &w,
                Path::new("/w"),
                &Vars::default(),
                &mut false,
                &mut Vec::new(),
            ));
        }
        out
    }

    #[test]
    fn exports_name_their_places() {
        let w = |s: &str| PathBuf::from(s);
        assert_eq!(p("export PYTHONPATH=\"$PWD/src\""), [w("/w/src")]);
        assert_eq!(p("export PYTHONPATH=$(pwd)/src:$PYTHONPATH"), [w("/w/src")]);
        assert_eq!(p("export BASH_ENV=lib/bashenv"), [w("/w/lib/bashenv")]);
        assert_eq!(
            p("export NODE_OPTIONS=\"--require $PWD/lib/init.js --import=./x.mjs\""),
            [w("/w/lib/init.js"), w("/w/x.mjs")]
        );
        assert_eq!(p("PATH_add bin tools"), [w("/w/bin"), w("/w/tools")]);
        assert_eq!(p("path_add PERL5LIB lib/perl"), [w("/w/lib/perl")]);
        assert_eq!(p("PATH=$PWD/bin:$PATH"), [w("/w/bin")]);
        assert_eq!(p("export LD_PRELOAD=$PWD/x.so"), [w("/w/x.so")]);
        assert_eq!(
            p("export PYTHONPATH=$PWD"),
            [w("/w/sitecustomize.py"), w("/w/usercustomize.py")]
        );
        assert_eq!(p("layout python3"), [w("/w/.direnv")]);
        assert_eq!(
            p("layout node"),
            [w("/w/.direnv"), w("/w/node_modules/.bin")]
        );
        assert_eq!(p("layout_php"), [w("/w/.direnv"), w("/w/vendor/bin")]);
        assert_eq!(
            p("if true; then export BASH_ENV=$PWD/e.sh; fi"),
            [w("/w/e.sh")]
        );
        assert_eq!(p("use devbox")[0], w("/w/devbox.json"));
        assert!(p("export FOO=$PWD/x; echo PATH=bin; export PATH=/usr/bin").is_empty());
    }
}
