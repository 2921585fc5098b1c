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

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use super::Scanner;
use super::words::{SEPARATORS, find_path, normalise};

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
        let mut resolved = Resolved::default();
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
                let Some(text) = self.script_cached(&target, &mut bytes) else {
                    continue;
                };
                if bytes > MAX_SCRIPT_BYTES {
                    return self.over(format!(
                        "the scripts of the PATH directories hold more than {} MiB",
                        MAX_SCRIPT_BYTES >> 20
                    ));
                }
                let literal = self.may_name_a_grant(&text);
                resolved.narrow = !super::path_places::climbs(&text);
                let text = String::from_utf8_lossy(&text).into_owned();
                if literal {
                    self.script_lines(&p, &text, resolved.narrow);
                }
                if !self.all_found() {
                    self.resolved_words(&p, &text, &mut resolved);
                }
                if self.all_found() {
                    return;
                }
            }
        }
    }

    /// [`script`], through the record of earlier scans (ADR 0290): a
    /// file they found no script, unchanged since, is not opened (its
    /// bytes counted as then).
    fn script_cached(&mut self, p: &Path, total: &mut u64) -> Option<Vec<u8>> {
        let m = std::fs::metadata(p).ok()?;
        if let Some(c) = self.heads.as_mut()
            && let Some(b) = c.not_script(&m)
        {
            *total += b;
            return None;
        }
        let before = *total;
        match script(p, &m, total) {
            Head::Script(text) => Some(text),
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

/// Directories of absolute words already resolved, and the words
/// already looked at (scripts repeat the same few paths).
#[derive(Default)]
struct Resolved {
    dirs: HashMap<PathBuf, Option<PathBuf>>,
    words: HashSet<String>,
    /// The script read cannot climb from a path it names
    /// ([`super::path_places::climbs`]).
    narrow: bool,
}

/// Directories of script words resolved at most (past it, words are
/// matched as written only, and the reading says it stopped).
const MAX_RESOLVED_DIRS: usize = 20_000;
/// Distinct absolute words of scripts looked at, at most.
const MAX_WORDS: usize = 200_000;

impl Scanner {
    /// Each absolute word of the script `f` resolved as the kernel
    /// resolves it (a doubled slash, `.`, `..` after a link, a link on
    /// the way such as `~/src -> /data`): a mention when it lands in a
    /// grant, whatever name the script used (attack atk22h F9). Read by
    /// bytes (every script of `PATH` is read at every run): a word starts
    /// with `/` after a separator; the lines spelling the home (`~/`,
    /// `$HOME`) are expanded first.
    fn resolved_words(&mut self, f: &Path, text: &str, r: &mut Resolved) {
        let bytes = text.as_bytes();
        for pos in memchr::memchr_iter(b'/', bytes) {
            if pos > 0 && !is_separator(bytes[pos - 1]) {
                continue;
            }
            let end = bytes[pos..]
                .iter()
                .position(|b| is_separator(*b) || matches!(b, b'$' | b'*' | b'?'))
                .map_or(bytes.len(), |n| pos + n);
            // (Separators are ASCII: `pos` and `end` are char boundaries.)
            let (Some(w), Some(line)) = (text.get(pos..end), line_at(text, pos)) else {
                continue;
            };
            if commented(text, line) {
                continue;
            }
            if self.resolved_word(f, w, line, text, r) {
                return;
            }
        }
        let home = self.home_text.clone();
        for needle in [
            &b"~/"[..],
            b"$HOME",
            b"${HOME",
            b"$XDG_",
            b"${XDG_",
            b"$CARGO_HOME",
        ] {
            for pos in memchr::memmem::find_iter(bytes, needle) {
                let Some(start) = line_at(text, pos) else {
                    continue;
                };
                let end =
                    memchr::memchr2(b'\n', b'\r', &bytes[pos..]).map_or(bytes.len(), |n| pos + n);
                if commented(text, start) {
                    continue;
                }
                let Some(line) = text.get(start..end) else {
                    continue;
                };
                let norm = normalise(line.trim_start_matches("#!"), &home);
                for w in norm.split(|c: char| c.is_ascii() && is_separator(c as u8)) {
                    let w = w.split(['$', '*', '?']).next().unwrap_or("");
                    if w.starts_with('/') && self.resolved_word(f, w, start, text, r) {
                        return;
                    }
                }
            }
        }
    }

    /// One absolute word `w` of the script `f` (its line starting at byte
    /// `line` of `text`); true when the reading must stop (a bound).
    fn resolved_word(
        &mut self,
        f: &Path,
        w: &str,
        line: usize,
        text: &str,
        r: &mut Resolved,
    ) -> bool {
        // (By the script's kind too: a word judged narrowly in one script
        // is judged again in one that can climb from it.)
        if w.len() < 2 || !r.words.insert(format!("{}{w}", u8::from(r.narrow))) {
            return false;
        }
        if r.words.len() > MAX_WORDS {
            self.over(format!(
                "the scripts of the PATH directories name more than {MAX_WORDS} paths"
            ));
            return true;
        }
        let clean = lexical(w);
        // `/dev/stdin`, `/proc/self/fd/N`: the running script's own
        // descriptors and state, resolved here they would name skarn's
        // (a workspace file given as skarn's standard input).
        if clean.starts_with("/dev") || clean.starts_with("/proc") {
            return false;
        }
        let (Some(dir), Some(name)) = (clean.parent(), clean.file_name()) else {
            return false;
        };
        if !r.dirs.contains_key(dir) {
            if r.dirs.len() >= MAX_RESOLVED_DIRS {
                self.over(format!(
                    "the scripts of the PATH directories name more than {MAX_RESOLVED_DIRS} \
                     directories"
                ));
                return true;
            }
            let real = crate::protect::linked_targets::kernel_path(dir);
            r.dirs.insert(dir.to_path_buf(), real);
        }
        let Some(Some(real)) = r.dirs.get(dir) else {
            return false;
        };
        let mut full = real.join(name);
        if std::fs::symlink_metadata(&full).is_ok_and(|m| m.file_type().is_symlink())
            && let Some(t) = crate::protect::linked_targets::kernel_path(&full)
        {
            full = t;
        }
        let hit = self
            .targets
            .iter()
            .position(|t| t.canons.iter().any(|c| full.starts_with(c)));
        if let Some(t) = hit {
            let n = 1 + memchr::memchr_iter(b'\n', &text.as_bytes()[..line]).count();
            self.found_in_script(t, f, n, w.to_string(), r.narrow);
        }
        false
    }
}

/// Whether the byte `b` ends a path word (blank or one of [`SEPARATORS`]).
fn is_separator(b: u8) -> bool {
    SEPARATOR_BYTES[usize::from(b)]
}

/// [`is_separator`] as a table (every byte of every script is looked at).
static SEPARATOR_BYTES: std::sync::LazyLock<[bool; 256]> = std::sync::LazyLock::new(|| {
    let mut t = [false; 256];
    for (i, e) in t.iter_mut().enumerate() {
        let b = i as u8;
        *e = b.is_ascii_whitespace() || SEPARATORS.iter().any(|c| *c as u32 == u32::from(b));
    }
    t
});

/// The start of the line holding byte `pos` of `text`.
fn line_at(text: &str, pos: usize) -> Option<usize> {
    let b = text.as_bytes().get(..pos)?;
    Some(memchr::memrchr2(b'\n', b'\r', b).map_or(0, |n| n + 1))
}

/// Whether the line starting at `start` is a comment (not the `#!` line).
fn commented(text: &str, start: usize) -> bool {
    start > 0
        && text
            .get(start..)
            .is_some_and(|l| l.trim_start_matches([' ', '\t']).starts_with('#'))
}

/// `w` with empty and `.` components dropped (`..` is the kernel's, left
/// to the resolution).
pub(super) fn lexical(w: &str) -> PathBuf {
    let mut p = PathBuf::from("/");
    for c in w.split('/').filter(|c| !c.is_empty() && *c != ".") {
        p.push(c);
    }
    p
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
