//! A `PATH` script naming a directory of a grant (attack atk22k, the
//! `${HOME}/lib` false positive): `/usr/bin/ocs` (cscope's wrapper) sets
//! `HOMEDIR=${HOME}/lib/cs`, where it keeps its databases, and the whole
//! of a workspace `~/lib` became read-only as if a program the host runs
//! lay there. What the word names is resolved instead: an existing
//! directory, or a missing path, is kept read-only (reserved when
//! missing) and the rest of the grant stays writable; a program file (the
//! host runs it, and it loads its neighbours: python's `sys.path[0]`,
//! node's relative requires) or the grant itself still make the whole
//! grant read-only. So does a word with a link on the way below the
//! grant (the run could point it elsewhere), and any word of a script
//! that can climb from a path it holds to its parents (`..`, `dirname`,
//! `${v%/*}`, zsh's `:h`, `.parent`).

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Scanner;

/// Places kept per grant; past it the grant is read-only whole.
pub(crate) const MAX_PLACES: usize = 64;

/// A place inside a writable grant that a `PATH` script names: kept
/// read-only for the run (reserved when missing) instead of the grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The writable grant it lies in (as the policy names it).
    pub grant: PathBuf,
    /// The place, resolved.
    pub path: PathBuf,
    /// The script (as found on `PATH`) and its line.
    pub file: PathBuf,
    pub line: usize,
    /// The word as written (normalised).
    pub named: String,
}

/// Whether a script's words may stand for a parent of a path it holds.
pub(super) fn climbs(text: &[u8]) -> bool {
    [&b".."[..], b"dirname", b"%/", b":h", b"parent"]
        .iter()
        .any(|n| memchr::memmem::find(text, n).is_some())
}

impl Scanner {
    /// The `PATH` script `f`, line `line`, names `named` inside the grant
    /// `t`; `narrow`: the script cannot climb from what it names.
    pub(super) fn found_in_script(
        &mut self,
        t: usize,
        f: &Path,
        line: usize,
        named: String,
        narrow: bool,
    ) {
        match narrow.then(|| self.narrow_place(t, &named)).flatten() {
            Some(path) => self.place(t, f, line, named, path),
            None => self.found(t, f, line, named),
        }
    }

    /// The place `named` is, when keeping it alone read-only protects
    /// what the script reaches there.
    fn narrow_place(&self, t: usize, named: &str) -> Option<PathBuf> {
        let bare = named.trim_end_matches([']', ',', ')', '}', ';', '"', '\'', '/']);
        let lex = super::script_facts::lexical(bare);
        if lex.components().any(|c| c == Component::ParentDir) {
            return None;
        }
        let real = crate::protect::linked_targets::kernel_path(&lex)?;
        let target = &self.targets[t];
        // No link below the grant: the word below one of the grant's
        // names is the real path below one of its real places.
        let below = target.forms.iter().find_map(|f| lex.strip_prefix(f).ok())?;
        if below.as_os_str().is_empty() || !target.canons.iter().any(|c| c.join(below) == real) {
            return None;
        }
        match std::fs::symlink_metadata(&real) {
            Ok(m) if m.is_dir() => Some(real),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(real),
            _ => None,
        }
    }

    fn place(&mut self, t: usize, f: &Path, line: usize, named: String, path: PathBuf) {
        let grant = self.targets[t].grant.clone();
        let mine = || self.out.places.iter().filter(|p| p.grant == grant);
        if mine().any(|p| path.starts_with(&p.path)) {
            return;
        }
        if mine().count() >= MAX_PLACES {
            return self.found(t, f, line, named);
        }
        self.out.places.push(Place {
            grant,
            path,
            file: f.to_path_buf(),
            line,
            named,
        });
    }
}
