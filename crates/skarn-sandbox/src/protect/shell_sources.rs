//! What the home's start-up files reach by path (host side): files they
//! source (`source ~/dotfiles/aliases.sh`, `builtin source`, `command .`,
//! `. "$DF/x.sh"`, `for f in ~/x/*.sh; do . "$f"`), programs they run
//! (`eval "$(~/dotfiles/bin/prompt init)"`, tmux's `run-shell`), `PATH`
//! directories they add (`export PATH="$HOME/dotfiles/bin:$PATH"`) and
//! directories editors load code from (vim's `runtimepath`, emacs's
//! `load-path`). Host programs run all of these like the start-up file
//! itself.
//!
//! This is not a shell, and does not try to be one: what it cannot resolve
//! exactly is protected the safe way. A file reached through a variable
//! protects its whole directory; a pattern protects the directory it
//! lists (and, past one level, every writable grant below it); a `PATH`
//! line protects every directory it names; a source it cannot expand at
//! all (`$(...)`, an unknown variable) is said (the report is then not
//! `FullyEnforced`). Bounded: [`MAX_FILES`] files, [`MAX_DEPTH`] levels,
//! 1 MiB per file, [`MAX_FOUND`] places.

use std::path::{Path, PathBuf};

use crate::protect::shell_words::{
    Expanded, Vars, expand, is_pattern, path_pieces, pattern_base, words,
};
use crate::protect::trusted::Tree;

/// Files read at most (start-up files included).
pub(crate) const MAX_FILES: usize = 64;
/// Levels of sourcing followed.
pub const MAX_DEPTH: usize = 4;
/// Places kept.
pub(crate) const MAX_FOUND: usize = 2048;
/// Bytes read per file.
const MAX_BYTES: u64 = 1 << 20;

/// Start-up files read (relative to the home), besides the shell
/// start-up files of [`crate::protect::persistence::ENTRIES`].
const MORE: &[&str] = &[
    ".bash_aliases",
    ".vimrc",
    ".gvimrc",
    ".vim/vimrc",
    ".config/nvim/init.vim",
    ".config/nvim/init.lua",
    ".emacs",
    ".emacs.d/init.el",
    ".tmux.conf",
    ".config/tmux/tmux.conf",
    ".config/fish/config.fish",
];

/// One place a start-up file reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reached {
    /// The place (a file, or the directory of [`Reached::tree`]).
    pub path: PathBuf,
    /// How (for the report).
    pub via: String,
    /// Protect the directory tree rather than the file.
    pub tree: Option<Tree>,
}

/// What [`sourced`] found.
#[derive(Debug, Default)]
pub struct Scanned {
    /// Places reached.
    pub reached: Vec<Reached>,
    /// The first file not followed for the bounds.
    pub stopped: Option<PathBuf>,
    /// Lines that source a path that could not be expanded (file: line).
    pub unresolved: Vec<String>,
    /// Relative sourced names (`. .bashrc.local`): a shell resolves them
    /// from the directory it starts in, which may be any workspace (an
    /// editor's terminal), as (name, how).
    pub relative: Vec<(PathBuf, String)>,
}

/// Read the home's start-up files and what they source.
pub fn sourced(home: &Path) -> Scanned {
    let rc = crate::protect::persistence::ENTRIES
        .iter()
        .filter(|e| e.reserve == crate::protect::persistence::Reserve::IfHome)
        .map(|e| e.path);
    let todo: Vec<(PathBuf, usize)> = rc
        .chain(MORE.iter().copied())
        .rev()
        .map(|r| (home.join(r), 0))
        .collect();
    scan_from(home, todo)
}

/// Read the start-up files `files` (named elsewhere than by the home's
/// fixed names: `$BASH_ENV`, `$ENV`, `$INPUTRC`, ...) and what they
/// source, as [`sourced`] reads the home's (attack atk22o F6).
pub fn sourced_from(home: &Path, files: &[PathBuf]) -> Scanned {
    scan_from(home, files.iter().rev().map(|f| (f.clone(), 0)).collect())
}

fn scan_from(home: &Path, mut todo: Vec<(PathBuf, usize)>) -> Scanned {
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut s = Scanned::default();
    let mut vars = Vars::default();
    while let Some((f, depth)) = todo.pop() {
        if seen.contains(&f) {
            continue;
        }
        if seen.len() >= MAX_FILES {
            s.stopped.get_or_insert(f);
            continue;
        }
        seen.push(f.clone());
        let Some(text) = read(&f) else { continue };
        let mut next = Vec::new();
        scan_file(&f, &text, home, &mut vars, &mut s, &mut next);
        for p in next {
            if depth + 1 < MAX_DEPTH {
                todo.push((p, depth + 1));
            } else {
                s.stopped.get_or_insert(p);
            }
        }
    }
    s.reached.truncate(MAX_FOUND);
    s
}

fn read(f: &Path) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(f).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut buf = Vec::new();
    file.take(MAX_BYTES).read_to_end(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// An editor's configuration (vim, nvim, emacs): every directory it names
/// may be a place it loads code from.
fn is_editor_file(f: &Path) -> bool {
    let n = f.to_string_lossy();
    n.contains("vim") || n.ends_with(".el") || n.ends_with(".emacs") || n.ends_with(".lua")
}

/// One file: its assignments, sources, programs, `PATH` and editor
/// directories. Files to read next go to `next`.
fn scan_file(
    f: &Path,
    text: &str,
    home: &Path,
    vars: &mut Vars,
    s: &mut Scanned,
    next: &mut Vec<PathBuf>,
) {
    let editor = is_editor_file(f);
    // Paths looked at per file (each costs a stat).
    let mut budget = 4096usize;
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with('#') || line.starts_with('"') && !line.starts_with("\"$") {
            continue;
        }
        // A trailing comment names nothing run (attack atk22c F3).
        let line = if editor {
            line
        } else {
            crate::protect::shell_words::strip_comment(line, &['#'], true)
        };
        let ws = words(line);
        vars.learn(&ws);
        for arg in source_args(&ws) {
            source(f, line, &arg, home, vars, s, next);
        }
        let path_line = ws.iter().any(|w| {
            let w = w.trim_matches(|c| c == '"' || c == '\'');
            ["PATH", "path", "fish_user_paths"].iter().any(|p| {
                w == *p || w.starts_with(&format!("{p}=")) || w.starts_with(&format!("{p}+="))
            }) || matches!(w, "fish_add_path" | "PATH_add" | "path_add")
        });
        let runs = line.contains("$(") || line.contains('`') || ws.iter().any(|w| w == "eval");
        for piece in path_pieces(line) {
            // The caller's own `PATH` (`export PATH=~/bin:$PATH`) is
            // handled as the caller's (`crate::protect::host_programs::path_dirs`):
            // a missing entry there must stay creatable.
            if piece.contains("$PATH") || piece.contains("${PATH}") {
                continue;
            }
            let Some(all) = expand(&piece, home, vars) else {
                continue;
            };
            // An expanded list (`$PATH`) is one path per entry.
            let all = all.into_iter().flat_map(|e| {
                let approx = e.approx;
                let text = e.path.to_string_lossy().into_owned();
                text.split(':')
                    .filter(|x| x.starts_with('/'))
                    .map(|x| Expanded {
                        path: PathBuf::from(x),
                        approx,
                    })
                    .collect::<Vec<_>>()
            });
            for Expanded { path, approx } in all {
                if budget == 0 {
                    break;
                }
                budget -= 1;
                let via = |what: &str| format!("{what} {} (`{}`)", f.display(), short(line));
                if is_pattern(&path) {
                    pattern(f, line, &path, s);
                } else if path_line {
                    push(s, path, via("a PATH directory named by"), Some(Tree::Dir));
                } else if editor && path.is_dir() {
                    push(
                        s,
                        path,
                        via("a directory of code named by"),
                        Some(Tree::Dir),
                    );
                } else if path.is_file() || runs && !path.exists() {
                    let tree = approx.then_some(Tree::Dir);
                    let p = if approx {
                        path.parent().map(Path::to_path_buf).unwrap_or(path)
                    } else {
                        path
                    };
                    push(s, p, via("a file named by"), tree);
                }
            }
        }
    }
}

/// The arguments of `source`, `.`, `source-file` and `so` where a command
/// starts (line start, after `;`, `&&`, `||`, `|`, `then`, `do`, `else`,
/// `{`, `builtin`, `command`), option words (`-q`) skipped.
fn source_args(ws: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut starts = true;
    let mut i = 0;
    while i < ws.len() {
        let w = ws[i].as_str();
        if starts && matches!(w, "source" | "." | "source-file" | "so" | "runtime") {
            let mut j = i + 1;
            while ws.get(j).is_some_and(|a| a.starts_with('-')) {
                j += 1;
            }
            if let Some(arg) = ws.get(j).filter(|a| *a != ";") {
                out.push(arg.clone());
            }
            i = j + 1;
            starts = false;
            continue;
        }
        starts = matches!(
            w,
            ";" | "then" | "do" | "else" | "{" | "(" | "!" | "builtin" | "command" | "exec"
        );
        i += 1;
    }
    out
}

/// A sourced word: followed when it expands exactly, its directory
/// protected when through a variable or a pattern, said when it cannot be
/// expanded.
fn source(
    f: &Path,
    line: &str,
    arg: &str,
    home: &Path,
    vars: &Vars,
    s: &mut Scanned,
    next: &mut Vec<PathBuf>,
) {
    let by = format!("sourced by {}", f.display());
    let Some(all) = expand(arg, home, vars) else {
        // Relative (`. .aliases`, read from the shell's directory, the
        // home) or not expandable at all.
        let rel = !arg.contains('$') && !arg.contains('`') && !arg.starts_with('/');
        if rel {
            let name = PathBuf::from(arg.trim_matches(|c| c == '"' || c == '\''));
            let plain = name
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
            if plain && s.relative.len() < 64 && !s.relative.iter().any(|(n, _)| *n == name) {
                let how = format!("{by} (`{}`), read from the shell's directory", short(line));
                s.relative.push((name.clone(), how));
            }
            let p = home.join(&name);
            next.push(p.clone());
            push(s, p, by, None);
        } else if s.unresolved.len() < 16 {
            s.unresolved
                .push(format!("{}: `{}`", f.display(), short(line)));
        }
        return;
    };
    for Expanded { path, approx } in all {
        if is_pattern(&path) {
            pattern(f, line, &path, s);
            let (base, rest) = pattern_base(&path);
            if rest == 1
                && let Ok(rd) = std::fs::read_dir(&base)
            {
                next.extend(rd.flatten().take(64).map(|e| e.path()));
            }
            continue;
        }
        next.push(path.clone());
        if approx && let Some(dir) = path.parent() {
            let via = format!(
                "the directory of {} ({by}, through a variable)",
                path.display()
            );
            push(s, dir.to_path_buf(), via, Some(Tree::Dir));
        }
        push(s, path, by.clone(), None);
    }
}

/// A pattern (`~/x/*.sh`): the directory it lists, and every grant below
/// it when it reaches deeper.
fn pattern(f: &Path, line: &str, p: &Path, s: &mut Scanned) {
    let (base, rest) = pattern_base(p);
    let tree = if rest > 1 { Tree::Below } else { Tree::Dir };
    let via = format!(
        "the directory of the pattern {} in {} (`{}`)",
        p.display(),
        f.display(),
        short(line)
    );
    push(s, base, via, Some(tree));
}

fn push(s: &mut Scanned, path: PathBuf, via: String, tree: Option<Tree>) {
    if s.reached.len() < MAX_FOUND && !s.reached.iter().any(|r| r.path == path && r.tree == tree) {
        s.reached.push(Reached { path, via, tree });
    }
}

fn short(line: &str) -> String {
    let l = line.trim();
    match l.char_indices().nth(100) {
        Some((i, _)) => format!("{}...", &l[..i]),
        None => l.to_string(),
    }
}

#[cfg(test)]
#[path = "shell_sources_tests.rs"]
mod tests;
