//! The line engine: applies one compiled [`Profile`] to cleaned lines.
//!
//! Order of decisions for a line outside a section: the profile's `keep`,
//! a forced line or an [`ALWAYS`] line (always kept), a section start, the profile's `drop`, blank lines, then
//! the profile's `other` mode. Inside a section: a deferred verdict
//! (`passed`/`failed`), `end`, `until`, or any section start closes the section; everything else is body (a profile `keep` line
//! inside a section is kept there). Every line a `keep`
//! pattern matches is printed verbatim; nothing but markers is ever added.
//!
//! This module walks the lines and decides each one's place; `runs`
//! squeezes runs of ordinary lines, `sections` decides what of a closed
//! section survives, `render` writes the result with its markers.

mod render;
mod runs;
mod sections;

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use regex::{Regex, RegexSet};

use crate::rules::{OtherMode, Profile};

/// Lines kept in every profile, wherever they are (also inside a section,
/// where they are never capped): panics and failure summaries.
pub(crate) static ALWAYS: LazyLock<RegexSet> = LazyLock::new(|| {
    RegexSet::new([
        r"^thread '.*' panicked at ",
        r"^\s*FAILED\b",
        r"^test result: FAILED\b",
        r"^error: (test failed|\d+ targets? failed)\b",
    ])
    .expect("valid patterns")
});

/// Longest line printed whole; a longer kept line is cut to its first
/// [`LONG_LINE_HEAD`] bytes and a marker (the raw output keeps it whole),
/// so one huge line cannot push its neighbours out of the compressed view.
pub const LONG_LINE: usize = 4096;
/// Bytes of a long line printed before its marker.
pub const LONG_LINE_HEAD: usize = 2000;

/// A line that starts with its own source location (`path:12:` or
/// `path(12,3):`).
static LOCATED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\S+(:\d+[:,]|\(\d+,\d+\): )").expect("valid pattern"));

/// One piece of the output, in order.
enum Out {
    Line(usize),
    /// A located diagnostic already printed verbatim.
    Dup(usize),
    Text(String),
    Group(usize),
    Blank,
    Listing,
}

struct Group<'a> {
    lines: Vec<Piece>,
    /// Texts of the lines already in the group (dedupe in O(1)).
    seen: HashSet<&'a str>,
}

#[derive(Clone)]
enum Piece {
    Line(usize),
    Text(String),
}

struct Open {
    sec: usize,
    start: usize,
    body: Vec<usize>,
}

/// Result of running the engine.
pub struct EngineResult {
    pub text: String,
    pub kept_lines: usize,
}

/// Cut-marker wording, shared so tests and docs agree.
pub fn omitted(n: usize) -> String {
    if n == 1 {
        "… 1 line omitted".to_string()
    } else {
        format!("… {n} lines omitted")
    }
}

struct Run<'a> {
    p: &'a Profile,
    lines: &'a [String],
    out: Vec<Out>,
    groups: Vec<Group<'a>>,
    group_index: HashMap<&'a str, usize>,
    run: Vec<usize>,
    listing: Vec<usize>,
    listing_placed: bool,
    forced: Vec<bool>,
    /// Whether forced lines are also kept inside sections (else a section's
    /// own rules decide there).
    forced_in_sections: bool,
    /// Texts of the other lines already printed (a block printed again
    /// later, like a warning repeated by every build step, is cut).
    printed: HashSet<&'a str>,
    /// Located `keep` lines already printed.
    located: HashSet<&'a str>,
}

/// Compress `lines` with profile `p`. `forced[i]` marks lines that must be
/// kept whatever the rules say (the tail of a failed command), inside
/// sections too when `forced_in_sections`; lines matching [`ALWAYS`] are
/// kept everywhere.
pub fn run(
    p: &Profile,
    lines: &[String],
    forced: Vec<bool>,
    forced_in_sections: bool,
) -> EngineResult {
    let mut r = Run {
        p,
        lines,
        out: Vec::new(),
        groups: Vec::new(),
        group_index: HashMap::new(),
        run: Vec::new(),
        listing: Vec::new(),
        listing_placed: false,
        forced,
        forced_in_sections,
        printed: HashSet::new(),
        located: HashSet::new(),
    };
    let mut open: Option<Open> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].as_str();
        if let Some(o) = open.as_mut() {
            let sec = &p.sections[o.sec];
            let verdict = if sec.passed.as_ref().is_some_and(|re| re.is_match(line)) {
                Some(false)
            } else if sec.failed.as_ref().is_some_and(|re| re.is_match(line)) {
                Some(true)
            } else {
                None
            };
            if let Some(keep) = verdict {
                let o = open.take().expect("open section");
                r.close(o, Some(keep));
                continue; // reprocess this line at top level
            }
            if sec.end.is_match(line) {
                o.body.push(i);
                let o = open.take().expect("open section");
                r.close(o, None);
                i += 1;
                continue;
            }
            if sec.until.is_match(line) || (!sec.absorb && p.starts.is_match(line)) {
                let o = open.take().expect("open section");
                r.close(o, None);
                continue;
            }
            o.body.push(i);
            i += 1;
            continue;
        }
        if p.keep.is_match(line) || r.forced[i] || ALWAYS.is_match(line) {
            r.flush_run();
            // A diagnostic carrying its own location, printed again
            // verbatim (a linter reporting a file twice), is a duplicate.
            if !r.forced[i] && LOCATED.is_match(line) && !r.located.insert(line) {
                r.out.push(Out::Dup(i));
            } else {
                r.out.push(Out::Line(i));
            }
        } else if p.starts.is_match(line) {
            r.flush_run();
            let sec = p
                .starts
                .matches(line)
                .iter()
                .next()
                .expect("is_match implies a match");
            open = Some(Open {
                sec,
                start: i,
                body: Vec::new(),
            });
        } else if p.drop.is_match(line) {
            // structural noise
        } else if line.trim().is_empty() {
            r.flush_run();
            r.out.push(Out::Blank);
        } else {
            match p.other {
                OtherMode::Keep => r.run.push(i),
                OtherMode::Drop => {}
                OtherMode::Listing => {
                    if !r.listing_placed {
                        r.listing_placed = true;
                        r.out.push(Out::Listing);
                    }
                    r.listing.push(i);
                }
            }
        }
        i += 1;
    }
    if let Some(o) = open.take() {
        r.close(o, None);
    }
    r.flush_run();
    r.render()
}
