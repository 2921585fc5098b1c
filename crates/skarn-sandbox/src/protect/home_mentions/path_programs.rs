//! Scripts of the caller's `PATH` directories that name a grant's files
//! (attack atk22g F7): a wrapper in `/usr/local/bin`, `/opt/tool/bin` or
//! `~/go/bin` that runs `exec python3 ~/proj/tool/main.py` makes the host
//! run the workspace's file whenever the user types its name, as one in
//! `~/.local/bin` does (those are read whole, as home configuration).
//!
//! Every entry of every `PATH` directory is looked at, bounded
//! ([`MAX_PATH_ENTRIES`], [`MAX_SCRIPT_BYTES`]): a program file (ELF and
//! other binaries) costs one read of its first two bytes; a script (`#!`)
//! is read and each of its lines (the `#!` line included: the kernel runs
//! its interpreter) is matched against the grants' names, literal or
//! through `~`, `$HOME`, `${HOME}`. Only literal names count: system
//! scripts are full of `$1/...` words that could name anything, and
//! reading them as patterns would make every workspace read-only.
//! Directories inside a grant are the workspace's own (the PATH guard
//! protects them), and an entry that links into a grant is the PATH
//! guard's too (`path_shadow`).

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::Scanner;
use super::words::{find_path, normalise};

/// Entries of the `PATH` directories looked at, in all.
pub(crate) const MAX_PATH_ENTRIES: usize = 65_536;
/// Bytes of scripts read, in all.
pub(crate) const MAX_SCRIPT_BYTES: u64 = 64 << 20;
/// Bytes of one script read (past it, the rest is not read: a script
/// that large is an installer with a payload, not a wrapper).
const MAX_ONE_SCRIPT: u64 = 1 << 20;

impl Scanner {
    /// Read the scripts of the `PATH` directories `dirs`.
    pub(super) fn path_programs(&mut self, dirs: &[PathBuf]) {
        let mut seen_dirs = HashSet::new();
        let mut entries = 0usize;
        let mut bytes = 0u64;
        for d in dirs {
            if !d.is_absolute() {
                continue;
            }
            let Ok(real) = std::fs::canonicalize(d) else {
                continue;
            };
            if !seen_dirs.insert(real.clone()) || self.inside_grant(&real) {
                continue;
            }
            let Ok(rd) = std::fs::read_dir(&real) else {
                continue;
            };
            for e in rd.flatten() {
                entries += 1;
                if entries > MAX_PATH_ENTRIES {
                    return self.over(format!(
                        "more than {MAX_PATH_ENTRIES} programs in the PATH directories"
                    ));
                }
                let p = e.path();
                // (The directory is a real path: only a link needs resolving.)
                let target = if e.file_type().is_ok_and(|t| t.is_symlink()) {
                    let Ok(t) = std::fs::canonicalize(&p) else {
                        continue;
                    };
                    t
                } else {
                    p.clone()
                };
                if self.inside_grant(&target) || !self.seen.insert(target.clone()) {
                    continue;
                }
                let Some(text) = script(&target, &mut bytes) else {
                    continue;
                };
                if bytes > MAX_SCRIPT_BYTES {
                    return self.over(format!(
                        "the scripts of the PATH directories hold more than {} MiB",
                        MAX_SCRIPT_BYTES >> 20
                    ));
                }
                if !self.may_name_a_grant(&text) {
                    continue;
                }
                let text = String::from_utf8_lossy(&text).into_owned();
                self.script_lines(&p, &text);
                if self.all_found() {
                    return;
                }
            }
        }
    }

    /// Whether `real` lies in a grant (any of its names).
    fn inside_grant(&self, real: &Path) -> bool {
        self.targets
            .iter()
            .any(|t| t.canons.iter().any(|c| real.starts_with(c)))
    }

    /// Cheap first: whether the script's bytes hold a grant's name at all
    /// (as written, or the part below the home when it is led by `~` or
    /// `$HOME`).
    fn may_name_a_grant(&self, text: &[u8]) -> bool {
        let home = self.home_text.as_str();
        self.targets.iter().any(|t| {
            t.forms.iter().any(|form| {
                let part = form
                    .strip_prefix(home)
                    .filter(|rest| rest.len() > 1)
                    .unwrap_or(form);
                memchr::memmem::find(text, part.as_bytes()).is_some()
            })
        })
    }

    /// Each line of the script `f` naming a grant is a mention.
    fn script_lines(&mut self, f: &Path, text: &str) {
        let home = self.home_text.clone();
        for (i, line) in text.split(['\r', '\n']).enumerate() {
            let trimmed = line.trim_start();
            if i > 0 && trimmed.starts_with('#') {
                continue;
            }
            let norm = normalise(line.trim_start_matches("#!"), &home);
            for t in 0..self.targets.len() {
                if let Some(named) = self.targets[t]
                    .forms
                    .iter()
                    .find_map(|form| find_path(&norm, form))
                {
                    self.found(t, f, i + 1, named);
                }
            }
        }
    }
}

/// The text of `p` when it is a script (a regular file starting `#!`),
/// its bytes added to `total`; `None` for anything else (one read of two
/// bytes for a program).
fn script(p: &Path, total: &mut u64) -> Option<Vec<u8>> {
    let m = std::fs::metadata(p).ok()?;
    if !m.is_file() || m.len() < 2 {
        return None;
    }
    let f = std::fs::File::open(p).ok()?;
    let mut head = [0u8; 2];
    let mut f = f.take(MAX_ONE_SCRIPT);
    f.read_exact(&mut head).ok()?;
    if head != *b"#!" {
        return None;
    }
    // Sized from the file's length: a growing buffer would read a script
    // in eight or more pieces (32, 34, 68, 136, ... bytes; about 2,800
    // extra `read` calls per run for the ~370 scripts of a PATH here).
    let len = usize::try_from(m.len().min(MAX_ONE_SCRIPT)).unwrap_or(0);
    let mut text = Vec::with_capacity(len.saturating_add(1));
    text.extend_from_slice(b"#!");
    f.read_to_end(&mut text).ok()?;
    *total += text.len() as u64;
    // A payload past a script's head is no text to read.
    if text.iter().take(8192).any(|b| *b == 0) {
        return None;
    }
    Some(text)
}
