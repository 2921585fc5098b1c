//! What each `PATH` script names ([`super::script_facts`]) kept across
//! runs (issue 30, ADR 0339's rule): a run reads a script again only when
//! the script or a directory its words resolved through changed.
//!
//! A script's facts are kept with its stamp (device, inode, size,
//! modification and change times) and the stamps of every directory its
//! absolute words were resolved through ([`crate::fact_deps`]). A later
//! run takes them only when the script's stamp (from the `stat` the scan
//! makes anyway) is the same and every one of those directories still has
//! its stamp (one `lstat` per directory, shared by all scripts); anything
//! else is a miss: the script is read and resolved again and its new
//! facts replace the old. A stamp taken within the settle time of a
//! change, or anything that could not be stamped, is not kept. What is
//! kept names paths, not verdicts: the run's grants judge them every run.
//! The record lies beside the other scan records (skarn's state, hidden
//! from every run, not used inside a writable grant), is versioned by a
//! digest of the sources that read scripts and keyed by the home's
//! spelling (the words are read with the home expanded), and is bounded
//! by `[run] scan_cache_max` (past it nothing is kept: slower, not wider).

use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::script_facts::{ScriptFacts, Token, Word};
use crate::fact_deps::{self, put_bytes, take_bytes, take_path};
use crate::state_file::{Fields, Stamp, StateDir, Time};

type Id = (u64, u64);

/// A script's facts with the directories they depend on.
struct Kept {
    stamp: Stamp,
    facts: ScriptFacts,
    /// Indices into the record's directory table.
    dirs: Vec<u32>,
}

/// The record of earlier runs and this run's facts.
pub(super) struct ScriptRecord {
    dir: StateDir,
    name: String,
    max: usize,
    key: Vec<u8>,
    /// Directories (path, kind, stamp) and whether each still holds.
    table: Vec<(PathBuf, u8, Stamp, Option<bool>)>,
    old: HashMap<Id, Kept>,
    /// This run's: (stamp, facts, directories' stamps).
    new: Vec<New>,
    settled_before: Time,
    dirty: bool,
    /// Scripts whose facts came from the record (for tests and figures).
    pub(super) hits: usize,
}

impl ScriptRecord {
    /// The record below `home` (`None`: it cannot be used; see the
    /// module's text).
    pub(super) fn open(home: &Path, grants: &[PathBuf], home_text: &str) -> Option<ScriptRecord> {
        let dir = StateDir::open(home, super::SCAN_CACHE, grants)?;
        let digest = crate::state_file::digest_name(
            &[
                b"skarn path-scripts 1",
                env!("CARGO_PKG_VERSION").as_bytes(),
                include_str!("script_facts.rs").as_bytes(),
                include_str!("script_record.rs").as_bytes(),
                include_str!("words.rs").as_bytes(),
                include_str!("path_places.rs").as_bytes(),
                include_str!("../../fact_deps.rs").as_bytes(),
            ],
            12,
        );
        let name = format!("path-scripts-{digest}");
        let key = crate::state_file::digest_name(&[home_text.as_bytes()], 16).into_bytes();
        let max = super::scan_cache_max();
        let mut rec = ScriptRecord {
            dir,
            name,
            max,
            key,
            table: Vec::new(),
            old: HashMap::new(),
            new: Vec::new(),
            settled_before: crate::state_file::settled_before(fact_deps::SETTLE),
            dirty: false,
            hits: 0,
        };
        if let Some(b) = rec.dir.read(&rec.name, max)
            && rec.parse(&b).is_none()
        {
            rec.table.clear();
            rec.old.clear();
        }
        Some(rec)
    }

    /// The kept facts of the script whose metadata is `md`, when it and
    /// every directory they depend on are unchanged.
    pub(super) fn get(&mut self, md: &std::fs::Metadata) -> Option<ScriptFacts> {
        let s = Stamp::of(md);
        let kept = self.old.get(&s.id())?;
        let dirs = kept.dirs.clone();
        let mut ok = kept.stamp == s;
        for i in &dirs {
            if !ok {
                break;
            }
            let Some(e) = self.table.get_mut(*i as usize) else {
                ok = false;
                break;
            };
            ok = *e.3.get_or_insert_with(|| fact_deps::holds(&e.0, e.1, &e.2));
        }
        if !ok {
            // (Stale: dropped from the record.)
            self.old.remove(&s.id());
            self.dirty = true;
            return None;
        }
        let kept = self.old.get(&s.id())?;
        let stamps = dirs_of(&self.table, &kept.dirs);
        self.new.push((s, kept.facts.clone(), stamps));
        self.hits += 1;
        Some(kept.facts.clone())
    }

    /// Facts just worked out for `md`'s script, resolved through the
    /// directories `dirs` (`unsure`: not to be kept).
    pub(super) fn note(
        &mut self,
        md: &std::fs::Metadata,
        facts: &ScriptFacts,
        dirs: Vec<(PathBuf, u8, Stamp)>,
        unsure: bool,
    ) {
        let s = Stamp::of(md);
        if !unsure && s.settled(self.settled_before) {
            self.new.push((s, facts.clone(), dirs));
            self.dirty = true;
        }
    }

    /// Keep this run's facts, and the record's of scripts this run did
    /// not see (another `PATH`'s: callers alternating `PATH`s keep
    /// theirs, issue 30), this run's first, to the bound; when they
    /// changed.
    pub(super) fn save(mut self) {
        if !self.dirty {
            return;
        }
        // (A script under two names, hard links, is one record.)
        let seen: std::collections::HashSet<Id> = self.new.iter().map(|n| n.0.id()).collect();
        let mut old: Vec<New> = self
            .old
            .values()
            .filter(|k| !seen.contains(&k.stamp.id()))
            .map(|k| (k.stamp, k.facts.clone(), dirs_of(&self.table, &k.dirs)))
            .collect();
        let ours = self.new.len();
        loop {
            self.new.truncate(ours);
            self.new.extend(old.iter().cloned());
            if let Some(b) = encode(&self.key, &self.new)
                && b.len() <= self.max
            {
                self.dir.write(&self.name, &b, self.max);
                return;
            }
            if old.is_empty() {
                return;
            }
            // (Past the bound: fewer of the other runs' scripts.)
            old.truncate(old.len() / 2);
        }
    }

    fn parse(&mut self, b: &[u8]) -> Option<()> {
        let mut r = Fields(b);
        if r.bytes(self.key.len())? != self.key.as_slice() {
            return None;
        }
        for _ in 0..r.u32()? {
            let k = r.bytes(1)?[0];
            let s = Stamp::take(&mut r)?;
            self.table.push((take_path(&mut r)?, k, s, None));
        }
        while !r.is_empty() {
            let stamp = Stamp::take(&mut r)?;
            let mut facts = ScriptFacts {
                bytes: r.u64()?,
                narrow: r.bytes(1)?[0] != 0,
                ..ScriptFacts::default()
            };
            let mut dirs = Vec::new();
            for _ in 0..r.u32()? {
                dirs.push(r.u32()?);
            }
            for _ in 0..r.u32()? {
                let line = r.u32()?;
                let text = text(&mut r)?;
                let after = char::from_u32(r.u32()?);
                facts.tokens.push(Token { line, text, after });
            }
            for _ in 0..r.u32()? {
                let line = r.u32()?;
                let word = text(&mut r)?;
                let full = match r.bytes(1)?[0] {
                    0 => None,
                    _ => Some(take_path(&mut r)?),
                };
                facts.words.push(Word { line, word, full });
            }
            self.old.insert(stamp.id(), Kept { stamp, facts, dirs });
        }
        Some(())
    }
}

fn dirs_of(table: &[(PathBuf, u8, Stamp, Option<bool>)], idx: &[u32]) -> Vec<(PathBuf, u8, Stamp)> {
    idx.iter()
        .filter_map(|i| table.get(*i as usize))
        .map(|(p, k, s, _)| (p.clone(), *k, *s))
        .collect()
}

fn text(r: &mut Fields<'_>) -> Option<String> {
    String::from_utf8(take_bytes(r)?.to_vec()).ok()
}

type New = (Stamp, ScriptFacts, Vec<(PathBuf, u8, Stamp)>);

fn encode(key: &[u8], new: &[New]) -> Option<Vec<u8>> {
    let mut index: HashMap<&Path, u32> = HashMap::new();
    let mut table: Vec<(&Path, u8, Stamp)> = Vec::new();
    for (_, _, dirs) in new {
        for (p, k, s) in dirs {
            if !index.contains_key(p.as_path()) {
                index.insert(p, u32::try_from(table.len()).ok()?);
                table.push((p, *k, *s));
            }
        }
    }
    let mut out = key.to_vec();
    let len = |n: usize| u32::try_from(n).ok().map(u32::to_le_bytes);
    out.extend_from_slice(&len(table.len())?);
    for (p, k, s) in &table {
        out.push(*k);
        s.put(&mut out);
        put_bytes(&mut out, p.as_os_str().as_bytes())?;
    }
    for (stamp, f, dirs) in new {
        stamp.put(&mut out);
        out.extend_from_slice(&f.bytes.to_le_bytes());
        out.push(u8::from(f.narrow));
        out.extend_from_slice(&len(dirs.len())?);
        for (p, _, _) in dirs {
            out.extend_from_slice(&index.get(p.as_path())?.to_le_bytes());
        }
        out.extend_from_slice(&len(f.tokens.len())?);
        for t in &f.tokens {
            out.extend_from_slice(&t.line.to_le_bytes());
            put_bytes(&mut out, t.text.as_bytes())?;
            out.extend_from_slice(&t.after.map_or(u32::MAX, u32::from).to_le_bytes());
        }
        out.extend_from_slice(&len(f.words.len())?);
        for w in &f.words {
            out.extend_from_slice(&w.line.to_le_bytes());
            put_bytes(&mut out, w.word.as_bytes())?;
            match &w.full {
                None => out.push(0),
                Some(p) => {
                    out.push(1);
                    put_bytes(&mut out, p.as_os_str().as_bytes())?;
                }
            }
        }
    }
    Some(out)
}
