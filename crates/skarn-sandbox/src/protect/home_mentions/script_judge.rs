//! What the `PATH` scripts name ([`super::script_facts`], read now or
//! kept by [`super::script_record`]) judged against this run's grants.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::Scanner;
use super::script_facts::{MAX_RESOLVED_DIRS, MAX_WORDS, ScriptFacts, Token};
use super::script_record::ScriptRecord;
use super::words::{SEPARATORS, is_name_char};
use crate::fact_deps::Deps;

/// The record of earlier runs and what resolves the words of a script
/// read now.
pub(super) struct Kept {
    pub record: Option<ScriptRecord>,
    pub deps: Deps,
    /// Every name of every grant is a path word's start (absolute, no
    /// blank or separator in it): the kept path words answer the literal
    /// reading exactly; otherwise scripts are read as text every run.
    pub tokens_ok: bool,
}

impl Kept {
    pub(super) fn new(s: &Scanner) -> Kept {
        let tokens_ok = s.targets.iter().flat_map(|t| &t.forms).all(|f| {
            f.starts_with('/')
                && !f.contains(|c: char| c.is_whitespace() || SEPARATORS.contains(&c))
        });
        let grants: Vec<PathBuf> = s.targets.iter().map(|t| t.grant.clone()).collect();
        let record = tokens_ok
            .then(|| ScriptRecord::open(&s.home, &grants, &s.home_text))
            .flatten();
        Kept {
            record,
            deps: Deps::new(),
            tokens_ok,
        }
    }
}

/// Directories and words already judged in this run.
#[derive(Default)]
pub(super) struct Resolved {
    dirs: HashSet<PathBuf>,
    words: HashSet<String>,
    /// The script read cannot climb from a path it names
    /// ([`super::path_places::climbs`]).
    pub narrow: bool,
}

impl Scanner {
    /// Each line of the script `f` whose path words name a grant is a
    /// mention (the literal reading: as written, or through `~`, `$HOME`).
    pub(super) fn token_lines(&mut self, f: &Path, facts: &ScriptFacts) {
        let toks = &facts.tokens;
        let mut i = 0;
        while i < toks.len() {
            let line = toks[i].line;
            let j = i + toks[i..].iter().take_while(|t| t.line == line).count();
            for t in 0..self.targets.len() {
                let named = self.targets[t]
                    .forms
                    .iter()
                    .find_map(|form| toks[i..j].iter().find_map(|tk| names(tk, form)));
                if let Some(named) = named {
                    self.found_in_script(t, f, line as usize, named, facts.narrow);
                }
            }
            i = j;
        }
    }

    /// Each absolute word of the script `f` that leads into a grant,
    /// whatever name the script used (attack atk22h F9); true when the
    /// reading must stop (a bound).
    pub(super) fn judge_words(&mut self, f: &Path, facts: &ScriptFacts, r: &mut Resolved) -> bool {
        for w in &facts.words {
            // (By the script's kind too: a word judged narrowly in one
            // script is judged again in one that can climb from it.)
            if !r.words.insert(format!("{}{}", u8::from(r.narrow), w.word)) {
                continue;
            }
            if r.words.len() > MAX_WORDS {
                self.over(format!(
                    "the scripts of the PATH directories name more than {MAX_WORDS} paths"
                ));
                return true;
            }
            let clean = super::script_facts::lexical(&w.word);
            // `/dev/stdin`, `/proc/self/fd/N`: the running script's own
            // descriptors and state, resolved here they would name skarn's.
            if clean.starts_with("/dev") || clean.starts_with("/proc") {
                continue;
            }
            let (Some(dir), Some(_)) = (clean.parent(), clean.file_name()) else {
                continue;
            };
            if !r.dirs.contains(dir) {
                if r.dirs.len() >= MAX_RESOLVED_DIRS {
                    self.over(format!(
                        "the scripts of the PATH directories name more than \
                         {MAX_RESOLVED_DIRS} directories"
                    ));
                    return true;
                }
                r.dirs.insert(dir.to_path_buf());
            }
            let Some(full) = &w.full else { continue };
            let hit = self
                .targets
                .iter()
                .position(|t| t.canons.iter().any(|c| full.starts_with(c)));
            if let Some(t) = hit {
                self.found_in_script(t, f, w.line as usize, w.word.clone(), r.narrow);
            }
        }
        false
    }
}

/// The word `tk` names `form` (or a path below it): the whole word.
fn names(tk: &Token, form: &str) -> Option<String> {
    let rest = tk.text.strip_prefix(form)?;
    let after = rest.chars().next().or(tk.after);
    after
        .is_none_or(|c| c == '/' || !is_name_char(c))
        .then(|| tk.text.clone())
}
