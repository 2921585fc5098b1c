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
use super::script_facts::{self, ScriptFacts};
use super::script_judge::{Kept, Resolved};
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
        let mut resolved = Resolved::default();
        let mut kept = Kept::new(self);
        self.scan_dirs(dirs, &mut kept, &mut resolved);
        if let Some(r) = kept.record {
            self.script_hits = r.hits;
            r.save();
        }
    }

    fn scan_dirs(&mut self, dirs: &[PathBuf], kept: &mut Kept, resolved: &mut Resolved) {
        let mut seen_dirs = HashSet::new();
        let mut entries = 0usize;
        let mut bytes = 0u64;
        for d in dirs {
            if !d.is_absolute() {
                continue;
            }
            let Ok(real) = crate::policy::link_facts::canonicalize(d) else {
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
                    // Through the preparation's memo (ADR 0247): `/usr`
                    // and `/usr/bin` were read once per link (issue 30).
                    let Ok(t) = crate::policy::link_facts::canonicalize(&p) else {
                        continue;
                    };
                    t
                } else {
                    p.clone()
                };
                if self.inside_grant(&target) || !self.seen.insert(target.clone()) {
                    continue;
                }
                let Some((facts, text)) = self.script_cached(&target, &mut bytes, kept) else {
                    continue;
                };
                if bytes > MAX_SCRIPT_BYTES {
                    return self.over(format!(
                        "the scripts of the PATH directories hold more than {} MiB",
                        MAX_SCRIPT_BYTES >> 20
                    ));
                }
                resolved.narrow = facts.narrow;
                match text {
                    // (Grants' names a path word cannot hold: read as text.)
                    Some(text) if !kept.tokens_ok => {
                        if self.may_name_a_grant(&text) {
                            let text = String::from_utf8_lossy(&text).into_owned();
                            self.script_lines(&p, &text, resolved.narrow);
                        }
                    }
                    _ => self.token_lines(&p, &facts),
                }
                if !self.all_found() && self.judge_words(&p, &facts, resolved) {
                    return;
                }
                if self.all_found() {
                    return;
                }
            }
        }
    }

    /// What the script `p` names ([`script`] read, then
    /// [`script_facts::of_text`]), through the records of earlier scans:
    /// a file they found no script (ADR 0290) is not opened, and a script
    /// unchanged with every directory its words resolved through is not
    /// read either ([`ScriptRecord`]); its bytes counted as then. The text
    /// too when the script was read.
    fn script_cached(
        &mut self,
        p: &Path,
        total: &mut u64,
        kept: &mut Kept,
    ) -> Option<(ScriptFacts, Option<Vec<u8>>)> {
        let m = std::fs::metadata(p).ok()?;
        if let Some(c) = self.heads.as_mut()
            && let Some(b) = c.not_script(&m)
        {
            *total += b;
            return None;
        }
        if let Some(r) = kept.record.as_mut()
            && let Some(f) = r.get(&m)
        {
            *total += f.bytes;
            return Some((f, None));
        }
        let before = *total;
        match script(p, &m, total) {
            Head::Script(text) => {
                let _ = kept.deps.take();
                let mut facts = script_facts::of_text(&text, &self.home_text, &mut kept.deps);
                facts.bytes = *total - before;
                let (dirs, unsure) = kept.deps.take();
                if let Some(r) = kept.record.as_mut() {
                    r.note(&m, &facts, dirs, unsure);
                }
                Some((facts, Some(text)))
            }
            Head::Not => {
                if let Some(c) = self.heads.as_mut() {
                    c.note_not_script(&m, *total - before);
                }
                None
            }
            Head::Unreadable => None,
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
    fn script_lines(&mut self, f: &Path, text: &str, narrow: bool) {
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
                    self.found_in_script(t, f, i + 1, named, narrow);
                }
            }
        }
    }
}

/// What [`script`] found.
enum Head {
    Script(Vec<u8>),
    /// No script, by its metadata or content.
    Not,
    /// It could not be read (asked again next time).
    Unreadable,
}

/// The text of `p` (metadata `m`) when it is a script, its bytes added to
/// `total`. A script is a regular file starting `#!`,
/// or an executable one with no NUL in its first bytes: `execve` refuses
/// a text file without `#!` and every POSIX shell then runs it as a shell
/// script itself (attack atk22h F14). A program costs one read of its
/// first bytes (ELF at two).
fn script(p: &Path, m: &std::fs::Metadata, total: &mut u64) -> Head {
    use std::os::unix::fs::PermissionsExt;
    if !m.is_file() || m.len() < 2 {
        return Head::Not;
    }
    let Ok(f) = std::fs::File::open(p) else {
        return Head::Unreadable;
    };
    let mut head = [0u8; 2];
    let mut f = f.take(MAX_ONE_SCRIPT);
    if f.read_exact(&mut head).is_err() {
        return Head::Unreadable;
    }
    let mut text = head.to_vec();
    if head != *b"#!" {
        if m.permissions().mode() & 0o111 == 0 || head == [0x7f, b'E'] {
            return Head::Not;
        }
        // (A binary format other than ELF: a NUL in its first bytes.)
        if (&mut f).take(510).read_to_end(&mut text).is_err() {
            return Head::Unreadable;
        }
        if text.contains(&0) {
            return Head::Not;
        }
    }
    // Sized from the file's length: a growing buffer would read a script
    // in eight or more pieces (about 2,800 extra `read` calls per run for
    // the ~370 scripts of a PATH here).
    let len = usize::try_from(m.len().min(MAX_ONE_SCRIPT)).unwrap_or(0);
    text.reserve(len.saturating_add(1).saturating_sub(text.len()));
    if f.read_to_end(&mut text).is_err() {
        return Head::Unreadable;
    }
    *total += text.len() as u64;
    // A payload past a script's head is no text to read.
    if text.iter().take(8192).any(|b| *b == 0) {
        return Head::Not;
    }
    Head::Script(text)
}
