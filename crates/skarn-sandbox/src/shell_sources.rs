//! Files the home's start-up files read as code by path (host side):
//! `source ~/dotfiles/aliases.sh` or `. "$HOME/x.sh"` in `~/.bashrc`,
//! tmux's `source-file`, vim's `source`. Host shells run them like the
//! start-up file itself, so they are trusted places like git's includes:
//! followed (bounded: [`MAX_FILES`] files, [`MAX_DEPTH`] levels, 1 MiB
//! per file) and protected where they lie in a writable grant (reserved
//! when missing: `[ -f ~/x.sh ] && . ~/x.sh` reads it once it exists).
//!
//! Only words the shell would expand to a fixed path are followed
//! (absolute, `~/`, `$HOME/`, `${HOME}/`, another `$VAR/` of this
//! environment); a path built at run time (`for f in ~/.bashrc.d/*; do .
//! "$f"`) is not (its directory is a listed persistence path).

use std::path::{Path, PathBuf};

/// Files read at most (start-up files included).
pub const MAX_FILES: usize = 64;
/// Levels of sourcing followed.
pub const MAX_DEPTH: usize = 4;
/// Bytes read per file.
const MAX_BYTES: u64 = 1 << 20;

/// Start-up files whose sourced files are followed (relative to the home),
/// besides the shell start-up files of [`crate::persistence::ENTRIES`].
const MORE: &[&str] = &[
    ".vimrc",
    ".tmux.conf",
    ".config/tmux/tmux.conf",
    ".config/fish/config.fish",
    ".bash_aliases",
];

/// The files the home's start-up files source, with how each is reached,
/// and the first file not followed for the bounds (said in the report).
pub fn sourced(home: &Path) -> (Vec<(PathBuf, String)>, Option<PathBuf>) {
    let rc = crate::persistence::ENTRIES
        .iter()
        .filter(|e| e.reserve == crate::persistence::Reserve::IfHome)
        .map(|e| e.path);
    let mut todo: Vec<(PathBuf, usize)> = rc
        .chain(MORE.iter().copied())
        .map(|r| (home.join(r), 0))
        .collect();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    let mut stopped = None;
    while let Some((f, depth)) = todo.pop() {
        if seen.contains(&f) {
            continue;
        }
        if seen.len() >= MAX_FILES {
            stopped.get_or_insert(f);
            continue;
        }
        seen.push(f.clone());
        let Some(text) = read(&f) else { continue };
        for p in sourced_by(&text, home) {
            if depth + 1 < MAX_DEPTH {
                todo.push((p.clone(), depth + 1));
            } else if read(&p).is_some_and(|t| !sourced_by(&t, home).is_empty()) {
                stopped.get_or_insert(p.clone());
            }
            out.push((p, format!("sourced by {}", f.display())));
        }
    }
    (out, stopped)
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

/// The paths `text` sources: the word after `source`, `.`, `source-file`
/// or `so` where a command starts (line start, after `;`, `&&`, `||`,
/// `|`, `then`, `do`, `else`, `{`), option words (`-q`) skipped.
pub fn sourced_by(text: &str, home: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with('#') || line.starts_with('"') && !line.starts_with("\"$") {
            continue;
        }
        let words = tokens(line);
        let mut starts = true;
        let mut i = 0;
        while i < words.len() {
            let w = words[i].as_str();
            if starts && matches!(w, "source" | "." | "source-file" | "so") {
                let mut j = i + 1;
                while words.get(j).is_some_and(|a| a.starts_with('-')) {
                    j += 1;
                }
                if let Some(arg) = words.get(j).filter(|a| *a != ";") {
                    out.extend(crate::host_programs::command_paths(arg, home));
                }
                i = j + 1;
                starts = false;
                continue;
            }
            starts = matches!(w, ";" | "then" | "do" | "else" | "{" | "(" | "!");
            i += 1;
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Words of a shell line, with `;` standing for any command separator.
fn tokens(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ';' | '&' | '|' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                while matches!(chars.peek(), Some('&' | '|')) {
                    chars.next();
                }
                out.push(";".into());
            }
            c if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sourced_paths_are_found_as_the_shell_expands_them() {
        let home = Path::new("/h");
        let text = "# source /no/comment.sh\n\
                    source ~/dotfiles/aliases.sh\n\
                    . \"$HOME/dotfiles/env.sh\"\n\
                    [ -f ~/x/local.sh ] && . ~/x/local.sh\n\
                    if true; then source ${HOME}/y.sh; fi\n\
                    source-file -q /etc/tmux.extra\n\
                    echo source /not/this.sh\n\
                    for f in ~/.bashrc.d/*; do . \"$f\"; done\n";
        let got = sourced_by(text, home);
        for want in [
            "/h/dotfiles/aliases.sh",
            "/h/dotfiles/env.sh",
            "/h/x/local.sh",
            "/h/y.sh",
            "/etc/tmux.extra",
        ] {
            assert!(got.contains(&PathBuf::from(want)), "{want} not in {got:?}");
        }
        assert!(!got.contains(&PathBuf::from("/no/comment.sh")), "{got:?}");
        assert!(!got.contains(&PathBuf::from("/not/this.sh")), "{got:?}");
    }
}
