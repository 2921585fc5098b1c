//! Reading the words of configuration text as the files they name.

use std::path::{Path, PathBuf};

use crate::protect::config_words::{climbing_tail, path_word};

/// Words that set the directory the rest of a command runs in (`cd
/// scripts && ./lint.sh`, `npm --prefix frontend run lint`, `make -C
/// sub`): that directory is kept whole (atk24k F7).
const DIR_WORDS: &[&str] = &[
    "cd",
    "pushd",
    "--prefix",
    "-C",
    "--cwd",
    "--dir",
    "--directory",
    "--manifest-path",
];

/// The files of `base` that the words of `cfg` name; with `dirs`, the
/// directory of each too (not `base` itself); with `absolute`, absolute
/// words only.
pub(super) fn named_in(cfg: &Path, base: &Path, dirs: bool, absolute: bool) -> Vec<PathBuf> {
    let Ok(bytes) = std::fs::read(cfg) else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    // `~/.claude.json` is mostly state (projects, prompts): its server
    // tables only, the user's and every project's.
    let text = if cfg.file_name().is_some_and(|n| n == ".claude.json") {
        std::borrow::Cow::Owned(super::home::claude_servers(&text))
    } else {
        text
    };
    let dir = cfg.parent().unwrap_or(base);
    words_in(&text, dir, base, dirs, absolute)
}

/// [`named_in`] for the text of a configuration file in `dir`.
pub(crate) fn words_in(
    text: &str,
    dir: &Path,
    base: &Path,
    dirs: bool,
    absolute: bool,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    // The directory a DIR word set (the workspace itself too: `uv
    // --directory <ws> run srv.py`, atk22l F5).
    let mut cur: Option<PathBuf> = None;
    let seps = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '"' | '\'' | '`' | '=' | ',' | ';' | '(' | ')' | '[' | ']' | '\\'
            )
    };
    // After a `cd` word: the directory the command then runs in.
    let mut after_dir_word = false;
    // Where the words stand after an interpreter (atk24t F4).
    let mut pos = crate::protect::config_words::Position::None;
    for w in text.split(seps).take(2_000_000) {
        let (next, script) = pos.next(w);
        pos = next;
        if DIR_WORDS.contains(&w) {
            after_dir_word = true;
            continue;
        }
        if after_dir_word {
            // (Quotes and a leading `$VAR` split the word: `cd
            // "$CLAUDE_PROJECT_DIR"/scripts`.)
            let var_only = w.strip_prefix('$').is_some_and(|v| {
                let v = v.trim_start_matches('{').trim_end_matches('}');
                !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            if w.is_empty() || var_only {
                continue;
            }
            after_dir_word = false;
            if let Some(word) = path_word(w) {
                let places = match word.strip_prefix('/') {
                    Some(rest) => vec![PathBuf::from(&word), base.join(rest)],
                    None if absolute => Vec::new(),
                    None => vec![base.join(&word)],
                };
                for p in places {
                    let p = crate::policy::config::normalize(&p);
                    if p.starts_with(base) && p.is_dir() {
                        cur.get_or_insert_with(|| p.clone());
                        if p != base && !out.contains(&p) {
                            out.push(p);
                        }
                    }
                }
            }
        }
        let Some(word) = path_word(w) else { continue };
        // A word without a slash names a file of the workspace when it
        // is an interpreter's script argument (`node server.js`, `python3
        // check.py`: run from the client's directory, atk22l F5); other
        // bare words run from PATH.
        // An interpreter's script argument names a workspace file or
        // directory whatever its name (`sh .ci.sh`, `python3 tool`:
        // atk24t F4), when it exists.
        let script = script && !absolute;
        if !word.contains('/')
            && !script
            && (absolute || !crate::protect::config_words::script_word(&word))
        {
            continue;
        }
        let mut places: Vec<PathBuf> = match word.strip_prefix('/') {
            // An absolute path, or the rest after a quoted variable
            // (`"$CLAUDE_PROJECT_DIR"/scripts/lint.sh`).
            Some(_) if absolute => vec![PathBuf::from(&word)],
            // Or after a command or variable naming the file's own
            // directory or the git directory (`"$(dirname "$0")"/../../
            // tools/common.sh` in a hook, `${GIT_DIR:-.git}/../tools/x`;
            // attack atk24l F6): resolved against the file's directory,
            // and a path climbing out of it by its tail from the top.
            Some(rest) => {
                let mut v = vec![PathBuf::from(&word), base.join(rest), dir.join(rest)];
                v.extend(climbing_tail(rest).map(|t| base.join(t)));
                v
            }
            None if absolute => Vec::new(),
            None => vec![base.join(&word), dir.join(&word)],
        };
        if !absolute
            && !word.starts_with('/')
            && let Some(c) = &cur
        {
            places.push(c.join(&word));
        }
        // A path climbing up from a place a shell computes (a git hook's
        // `$(dirname "$0")/../../tools/common.sh`, `${GIT_DIR:-.git}/../x`):
        // its tail is taken from the workspace's top, failing closed
        // (atk24l F6).
        if !absolute && let Some(t) = climbing_tail(&word) {
            places.push(base.join(t));
        }
        for p in places {
            let p = crate::policy::config::normalize(&p);
            if !p.starts_with(base) || p == base || out.contains(&p) {
                continue;
            }
            // What a link leads to, every hop (atk24t F7): the program
            // reads it by the named path.
            for h in crate::protect::config_links::hops(&p, base) {
                if !out.contains(&h) {
                    out.push(h);
                }
            }
            // A directory an interpreter runs (`python3 tool`: its
            // `__main__.py`) whole; others are not kept (`src` in a
            // setting would freeze the project).
            if p.is_dir() {
                if script {
                    out.push(p);
                }
                continue;
            }
            // Not by its place alone when missing (a JSON key after an
            // interpreter's name is no script).
            if script
                && !word.contains('/')
                && !p.exists()
                && !crate::protect::config_words::script_word(&word)
            {
                continue;
            }
            // A missing file too (a hook naming a missing script is
            // planted by making it), when its directory exists.
            if p.is_file() || p.parent().is_some_and(Path::is_dir) {
                if dirs
                    && let Some(d) = p.parent()
                    && d != base
                    && d.starts_with(base)
                    && !out.iter().any(|o| o == d)
                {
                    out.push(d.to_path_buf());
                }
                out.push(p);
            }
        }
    }
    out
}
