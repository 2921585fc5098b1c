//! Reading one home file: its lines as text and as bash's words, the
//! paths they name checked against the grants, the home files they name
//! queued.

use std::path::{Path, PathBuf};

use super::pattern::{self, ANY, Comp};
use super::words::{self, MAX_NEST, SEPARATORS, find_path, normalise};
use super::{
    MAX_BYTES, MAX_ENTRIES, MAX_FILE_BYTES, MAX_FILES, MAX_FOLLOW, MAX_RESOLVE, Scanner, formats,
    lossy, relative_path,
};
use crate::policy::dir_identity::id_of;
use crate::protect::home_mention_places::is_state_name;

impl Scanner {
    /// Read one file (and queue the home files it names).
    pub(super) fn file(&mut self, f: &Path, depth: usize) {
        let Some(real) = self.cache.resolve(f) else {
            return;
        };
        if !self.seen.insert(real.clone()) {
            return;
        }
        let Ok(meta) = std::fs::metadata(f) else {
            return;
        };
        if !meta.is_file() {
            return;
        }
        // A home configuration file that lies in a grant: the grant's
        // files are what the host runs.
        self.place_is_inside(f);
        if self.all_found() {
            return;
        }
        if self.out.files >= MAX_FILES {
            return self.over(format!(
                "more than {MAX_FILES} configuration files in the home"
            ));
        }
        let Ok(bytes) = read_file(f) else { return };
        // A program or a database, not text: its strings are not
        // configuration (a shell does not source it).
        if bytes.iter().take(8192).any(|b| *b == 0) {
            return;
        }
        if meta.len() > MAX_FILE_BYTES {
            return self.over(format!(
                "{} is larger than {} MiB",
                f.display(),
                MAX_FILE_BYTES >> 20
            ));
        }
        if self.out.bytes + bytes.len() as u64 > MAX_BYTES {
            return self.over(format!(
                "the home's configuration files hold more than {} MiB",
                MAX_BYTES >> 20
            ));
        }
        self.out.files += 1;
        self.out.bytes += bytes.len() as u64;
        let text = String::from_utf8_lossy(&bytes);
        let mut dirs: Vec<PathBuf> = [f.parent(), real.parent()]
            .into_iter()
            .flatten()
            .map(Path::to_path_buf)
            .collect();
        dirs.dedup();
        dirs.push(self.home.clone());
        let rel = f.strip_prefix(&self.home).ok();
        let kind = formats::kind(rel, f, &bytes[..bytes.len().min(256)]);
        if kind == formats::Kind::Json
            && let Some(lines) = formats::json_lines(&text)
        {
            for l in lines {
                self.line(f, 1, &l, &dirs, depth, 0);
            }
            return;
        }
        // A `#!` line is no comment: the kernel runs its interpreter
        // (`~/.local/bin/tool` starting `#!/home/u/proj/.venv/bin/python3`,
        // or `#!/usr/bin/env -S ...`; atk22d F10).
        if let Some(first) = text.lines().next()
            && let Some(interp) = first.strip_prefix("#!")
        {
            self.line(f, 1, interp.trim(), &dirs, depth, 0);
        }
        let mut reader = formats::Lines::new(kind);
        for (i, line) in formats::joined(&text, kind, f).iter().enumerate() {
            if let Some(l) = reader.effective(line) {
                if kind == formats::Kind::Shell {
                    for e in relative_path::entries(l) {
                        let rel = &mut self.out.relative_path;
                        if !rel.contains(&e) && rel.len() < relative_path::MAX_ENTRIES {
                            rel.push(e);
                        }
                    }
                }
                self.line(f, i + 1, l, &dirs, depth, 0);
            }
        }
    }

    /// One line: as text, and as bash's words (`nest`: inside how many
    /// command substitutions).
    fn line(
        &mut self,
        f: &Path,
        n: usize,
        line: &str,
        dirs: &[PathBuf],
        depth: usize,
        nest: usize,
    ) {
        let norm = normalise(line, &self.home_text);
        for t in 0..self.targets.len() {
            if let Some(named) = self.targets[t]
                .forms
                .iter()
                .find_map(|form| find_path(&norm, form))
            {
                self.found(t, f, n, named);
            }
        }
        // The home's own name may hold separators (a space): kept whole.
        let marked = norm.replace(&self.home_text, "\u{1}");
        for word in marked.split(|c: char| c.is_whitespace() || SEPARATORS.contains(&c)) {
            let word = word.replace('\u{1}', &self.home_text);
            let word = word.trim_end_matches(['/', '.']);
            if word.is_empty() || word.len() > 4096 {
                continue;
            }
            // A word led by a variable is no relative path: `$X/...` may
            // be anything (its known part is matched).
            let texts: Vec<String> = if word.starts_with(['/', '$']) {
                vec![word.to_string()]
            } else if word.contains('/') || word.starts_with('.') && word.len() > 2 {
                dirs.iter()
                    .map(|d| format!("{}/{word}", d.display()))
                    .collect()
            } else {
                continue;
            };
            for p in texts {
                self.pattern_word(f, n, &p.replace('$', &ANY.to_string()), depth);
            }
        }
        let mut inner = Vec::new();
        for w in words::shell_words(line, &self.home_text, f, dirs, &mut inner) {
            if w.len() <= 4096 {
                self.pattern_word(f, n, &w, depth);
            }
        }
        if nest < MAX_NEST {
            for text in inner {
                self.line(f, n, &text, dirs, depth, nest + 1);
            }
        }
    }

    /// One word (absolute, or led by [`ANY`]), braces expanded: a literal
    /// path, or a pattern that may name a grant.
    fn pattern_word(&mut self, f: &Path, n: usize, w: &str, depth: usize) {
        for alt in pattern::braces(w) {
            let c = pattern::comps(&alt);
            if let Some(p) = pattern::literal_path(&c) {
                self.word(f, n, &p, depth);
                continue;
            }
            let mut matched: Option<Vec<PathBuf>> = None;
            for t in 0..self.targets.len() {
                let floor = self.targets[t].floor;
                if self.targets[t]
                    .canons
                    .iter()
                    .any(|g| pattern::reaches(&c, g, floor))
                {
                    self.found(t, f, n, alt.clone());
                    continue;
                }
                // Another name of the grant (a bind mount): the places
                // the pattern matches on disk, by directory identity
                // (atk22d F5).
                if matched.is_none() {
                    matched = Some(self.pattern_dirs(&c));
                }
                let dirs = matched.clone().unwrap_or_default();
                if dirs.iter().any(|d| self.same_dir_inside(d, t)) {
                    self.found(t, f, n, alt.clone());
                }
            }
            if !c.contains(&Comp::Any) {
                self.glob_follow(&c, depth);
            }
        }
    }

    /// One literal path: inside a grant (through links, or by directory
    /// identity), or a home file to read next.
    fn word(&mut self, f: &Path, n: usize, p: &Path, depth: usize) {
        if self.resolved >= MAX_RESOLVE {
            // Past the budget a path can no longer be ruled out: fail
            // closed, and say so (atk22d F6: this cut was silent).
            return self.over(format!(
                "the home's configuration names more than {MAX_RESOLVE} paths"
            ));
        }
        self.resolved += 1;
        let Some(real) = self.cache.resolve(p) else {
            return;
        };
        let text = lossy(p);
        for t in 0..self.targets.len() {
            if self.targets[t]
                .canons
                .iter()
                .any(|c| real.starts_with(c) || p.starts_with(c))
                || self.same_dir_inside(&real, t)
            {
                self.found(t, f, n, text.clone());
            }
        }
        let name = p.file_name().map(|x| x.to_string_lossy().into_owned());
        if name.is_some_and(|n| !is_state_name(&n)) {
            self.follow(p, depth);
        }
    }

    /// Whether `real` or a directory above it is the grant `t`'s directory
    /// by (device, inode) (a bind mount of it; attack atk22c F5).
    fn same_dir_inside(&mut self, real: &Path, t: usize) -> bool {
        let Some(id) = self.targets[t].id else {
            return false;
        };
        for a in real.ancestors().take(64) {
            if self.ids.len() > MAX_RESOLVE {
                return false;
            }
            let got = *self.ids.entry(a.to_path_buf()).or_insert_with(|| id_of(a));
            if got == Some(id) {
                return true;
            }
        }
        false
    }

    /// A home file this one names (a sourced file, a program, an
    /// include): read too.
    pub(super) fn follow(&mut self, p: &Path, depth: usize) {
        let Some(real) = self.cache.resolve(p) else {
            return;
        };
        if !(p.starts_with(&self.home) || real.starts_with(&self.home))
            || self.seen.contains(&real)
            || !real.is_file()
        {
            return;
        }
        if depth + 1 < MAX_FOLLOW {
            self.todo.push((p.to_path_buf(), depth + 1));
        } else {
            // A chain deeper than the reader follows: what the last file
            // names is unknown, so the check fails closed (attack atk22c
            // F7), as for any other budget.
            self.over(format!(
                "{} is named through more than {MAX_FOLLOW} files sourced one from another",
                p.display()
            ));
        }
    }
}

fn read_file(f: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A FIFO planted under a configuration name must not block.
        open.custom_flags(libc::O_NONBLOCK);
    }
    let file = open.open(f)?;
    let mut buf = Vec::new();
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut buf)?;
    Ok(buf)
}

impl Scanner {
    /// Directories a pattern's components match on disk, following its
    /// literal prefix and expanding at most three pattern components (at most
    /// 256 entries each); a `**`-like component ends the expansion there.
    pub(super) fn pattern_dirs(&mut self, c: &[Comp]) -> Vec<PathBuf> {
        const MAX_LEVELS: usize = 3;
        const MAX_MATCHES: usize = 256;
        let mut level = vec![PathBuf::from("/")];
        let mut globs = 0;
        for comp in c {
            let mut next = Vec::new();
            match comp {
                Comp::Lit(s) => next.extend(level.iter().map(|d| d.join(s))),
                Comp::Glob(g) => {
                    globs += 1;
                    if globs > MAX_LEVELS {
                        break;
                    }
                    for d in &level {
                        let Ok(rd) = std::fs::read_dir(d) else {
                            continue;
                        };
                        for e in rd.flatten().take(MAX_MATCHES) {
                            self.entries += 1;
                            if self.entries > MAX_ENTRIES {
                                self.over(format!(
                                    "more than {MAX_ENTRIES} entries looked at for patterns in the \
                                     home's configuration (at {})",
                                    d.display()
                                ));
                                return Vec::new();
                            }
                            let n = e.file_name().to_string_lossy().into_owned();
                            if (!n.starts_with('.') || g.starts_with('.'))
                                && pattern::glob(g.as_bytes(), n.as_bytes())
                            {
                                next.push(e.path());
                            }
                        }
                    }
                }
                Comp::Any => break,
            }
            if next.is_empty() {
                return level;
            }
            level = next;
            level.truncate(MAX_MATCHES);
        }
        level
    }
}
