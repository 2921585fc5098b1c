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
pub const USUAL: &[&str] = &[".envrc.local", ".envrc.private", ".env", ".env.local"];

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
    let mut out = Vec::new();
    let mut unresolved = false;
    for cmd in commands(text) {
        let Some((name, args)) = cmd.split_first() else {
            continue;
        };
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
    }
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
