//! The line engine: applies one compiled [`Profile`] to cleaned lines.
//!
//! Order of decisions for a line outside a section: the profile's `keep`
//! (always kept), a section start, the profile's `drop`, blank lines, then
//! the profile's `other` mode. Inside a section: a deferred verdict
//! (`passed`/`failed`), `end`, `until`, or any section start closes the section; everything else is body (a profile `keep` line
//! inside a section is kept there). Every line a `keep`
//! pattern matches is printed verbatim; nothing but markers is ever added.

use std::collections::{HashMap, HashSet};

use std::sync::LazyLock;

use regex::Regex;

use crate::listing;

/// A line that starts with its own source location (`path:12:` or
/// `path(12,3):`).
static LOCATED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\S+(:\d+[:,]|\(\d+,\d+\): )").expect("valid pattern"));
use crate::rules::{BodyMode, OtherMode, Profile, Section};

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
    /// Texts of the other lines already printed (a block printed again
    /// later, like a warning repeated by every build step, is cut).
    printed: HashSet<&'a str>,
    /// Located `keep` lines already printed.
    located: HashSet<&'a str>,
}

/// Compress `lines` with profile `p`. `forced[i]` marks lines that must be
/// kept whatever the rules say (the tail of a failed command).
pub fn run(p: &Profile, lines: &[String], forced: Vec<bool>) -> EngineResult {
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
        if p.keep.is_match(line) || r.forced[i] {
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

impl<'a> Run<'a> {
    fn flush_run(&mut self) {
        if self.run.is_empty() {
            return;
        }
        let run = std::mem::take(&mut self.run);
        // Squeeze runs of lines that differ only in numbers.
        let mut squeezed: Vec<Piece> = Vec::new();
        let mut k = 0;
        while k < run.len() {
            let shape = shape_of(&self.lines[run[k]]);
            let mut j = k + 1;
            while j < run.len() && shape_of(&self.lines[run[j]]) == shape {
                j += 1;
            }
            let n = j - k;
            if n >= 4 {
                squeezed.push(Piece::Line(run[k]));
                squeezed.push(Piece::Text(format!("… {} similar lines", n - 2)));
                squeezed.push(Piece::Line(run[j - 1]));
            } else {
                squeezed.extend(run[k..j].iter().map(|&x| Piece::Line(x)));
            }
            k = j;
        }
        // Blocks of two or more lines already printed by an earlier run.
        let mut fresh: Vec<Piece> = Vec::with_capacity(squeezed.len());
        let mut k = 0;
        while k < squeezed.len() {
            let seen = |p: &Piece| match p {
                Piece::Line(x) => {
                    let l = self.lines[*x].as_str();
                    !l.trim().is_empty() && self.printed.contains(l)
                }
                Piece::Text(_) => false,
            };
            let mut j = k;
            while j < squeezed.len() && seen(&squeezed[j]) {
                j += 1;
            }
            if j - k >= 2 {
                fresh.push(Piece::Text(format!(
                    "… {} lines repeated from above",
                    j - k
                )));
                k = j;
            } else {
                fresh.push(squeezed[k].clone());
                k += 1;
            }
        }
        for &x in &run {
            self.printed.insert(self.lines[x].as_str());
        }
        let mut squeezed = fresh;
        let (h, t) = (self.p.run_head, self.p.run_tail);
        if squeezed.len() > h + t + 1 {
            let cut: usize = squeezed[h..squeezed.len() - t]
                .iter()
                .map(|p| match p {
                    Piece::Line(_) => 1,
                    Piece::Text(s) => similar_count(s),
                })
                .sum();
            let tail = squeezed.split_off(squeezed.len() - t);
            squeezed.truncate(h);
            squeezed.push(Piece::Text(omitted(cut)));
            squeezed.extend(tail);
        }
        for piece in squeezed {
            self.out.push(match piece {
                Piece::Line(x) => Out::Line(x),
                Piece::Text(s) => Out::Text(s),
            });
        }
    }

    fn close(&mut self, o: Open, verdict: Option<bool>) {
        let sec = &self.p.sections[o.sec];
        if verdict == Some(false) {
            // A passing test's log: gone, with its start line.
            return;
        }
        let key = self.lines[o.start].as_str();
        let again = sec.group && self.group_index.contains_key(key);
        let body_mode = match sec.repeat_body {
            Some(m) if again => m,
            _ => sec.body,
        };
        let pieces = render_body(self.p, sec, body_mode, self.lines, &o.body, &self.forced);
        let deferred = sec.passed.is_some() || sec.failed.is_some();
        if deferred && verdict.is_none() && pieces.is_empty() {
            return;
        }
        if sec.group {
            if let Some(&g) = self.group_index.get(key) {
                let group = &mut self.groups[g];
                for piece in pieces {
                    let fresh = match &piece {
                        Piece::Line(x) => group.seen.insert(self.lines[*x].as_str()),
                        Piece::Text(_) => true,
                    };
                    if fresh {
                        group.lines.push(piece);
                    }
                }
                return;
            }
            let mut lines = vec![Piece::Line(o.start)];
            let mut seen = HashSet::new();
            seen.insert(key);
            for piece in pieces {
                let fresh = match &piece {
                    Piece::Line(x) => seen.insert(self.lines[*x].as_str()),
                    Piece::Text(_) => true,
                };
                if fresh {
                    lines.push(piece);
                }
            }
            self.groups.push(Group { lines, seen });
            self.group_index.insert(key, self.groups.len() - 1);
            self.out.push(Out::Group(self.groups.len() - 1));
            return;
        }
        self.out.push(Out::Line(o.start));
        for piece in pieces {
            self.out.push(match piece {
                Piece::Line(x) => Out::Line(x),
                Piece::Text(s) => Out::Text(s),
            });
        }
    }

    fn render(mut self) -> EngineResult {
        let mut text = String::new();
        let mut kept = 0usize;
        let mut pending_blank = false;
        let mut any = false;
        let out = std::mem::take(&mut self.out);
        let mut emit = |s: &str, is_line: bool, text: &mut String, pending: &mut bool| {
            if *pending && any {
                text.push('\n');
            }
            *pending = false;
            any = true;
            text.push_str(s);
            text.push('\n');
            if is_line {
                kept += 1;
            }
        };
        // Identical consecutive lines (the same message printed again and
        // again) are shown once with a count.
        let mut last: Option<usize> = None;
        let mut repeats = 0usize;
        let flush_repeats = |repeats: &mut usize, text: &mut String| {
            if *repeats > 0 {
                text.push_str(&format!("… repeated {} more times\n", *repeats));
                *repeats = 0;
            }
        };
        // Runs of two or more duplicates become one marker; a lone one is
        // printed.
        let mut out2: Vec<Out> = Vec::with_capacity(out.len());
        let mut k = 0;
        let n = out.len();
        let mut out = out.into_iter().map(Some).collect::<Vec<_>>();
        while k < n {
            let mut j = k;
            while j < n && matches!(out[j], Some(Out::Dup(_))) {
                j += 1;
            }
            if j - k >= 2 {
                out2.push(Out::Text(format!("… {} lines repeated from above", j - k)));
                k = j;
                continue;
            }
            match out[k].take() {
                Some(Out::Dup(x)) => out2.push(Out::Line(x)),
                Some(o) => out2.push(o),
                None => {}
            }
            k += 1;
        }
        // "… N lines omitted" markers separated only by blank lines (a
        // commit's message body and its stat) become one.
        let mut out3: Vec<Out> = Vec::with_capacity(out2.len());
        for piece in out2 {
            if let Out::Text(s) = &piece
                && let Some(n) = omitted_count(s)
            {
                let mut blanks = 0;
                while matches!(out3.last(), Some(Out::Blank)) {
                    out3.pop();
                    blanks += 1;
                }
                if let Some(Out::Text(prev)) = out3.last()
                    && let Some(m) = omitted_count(prev)
                {
                    *out3.last_mut().expect("just matched") = Out::Text(omitted(m + n));
                    continue;
                }
                out3.extend((0..blanks).map(|_| Out::Blank));
            }
            out3.push(piece);
        }
        for piece in out3 {
            if let Out::Line(x) = piece
                && let Some(l) = last
                && self.lines[l] == self.lines[x]
            {
                repeats += 1;
                continue;
            }
            if !matches!(piece, Out::Blank) {
                flush_repeats(&mut repeats, &mut text);
                last = None;
            }
            match piece {
                Out::Blank => pending_blank = true,
                Out::Line(x) | Out::Dup(x) => {
                    last = Some(x);
                    emit(&self.lines[x], true, &mut text, &mut pending_blank)
                }
                Out::Text(s) => emit(&s, false, &mut text, &mut pending_blank),
                Out::Group(g) => {
                    for p in &self.groups[g].lines {
                        match p {
                            Piece::Line(x) => {
                                emit(&self.lines[*x], true, &mut text, &mut pending_blank)
                            }
                            Piece::Text(s) => emit(s, false, &mut text, &mut pending_blank),
                        }
                    }
                }
                Out::Listing => {
                    let entries = std::mem::take(&mut self.listing);
                    for p in listing::render(self.p, self.lines, &entries) {
                        match p {
                            listing::Item::Line(x) => {
                                emit(&self.lines[x], true, &mut text, &mut pending_blank)
                            }
                            listing::Item::Text(s) => {
                                emit(&s, false, &mut text, &mut pending_blank)
                            }
                        }
                    }
                }
            }
        }
        flush_repeats(&mut repeats, &mut text);
        EngineResult {
            text,
            kept_lines: kept,
        }
    }
}

/// N of a "… N lines omitted" marker.
fn omitted_count(marker: &str) -> Option<usize> {
    if marker == "… 1 line omitted" {
        return Some(1);
    }
    marker
        .strip_prefix("… ")?
        .strip_suffix(" lines omitted")?
        .parse()
        .ok()
}

fn similar_count(marker: &str) -> usize {
    marker
        .strip_prefix("… ")
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

/// A line's shape: digit runs and long hex runs collapsed, so that
/// "loaded record 38" and "loaded record 39" look alike.
fn shape_of(line: &str) -> String {
    let mut s = String::with_capacity(line.len());
    let mut in_num = false;
    for c in line.chars() {
        if c.is_ascii_digit() {
            if !in_num {
                s.push('#');
                in_num = true;
            }
        } else {
            in_num = false;
            s.push(c);
        }
    }
    s
}

/// Decide which body lines of a closed section survive.
fn render_body(
    p: &Profile,
    sec: &Section,
    body_mode: BodyMode,
    lines: &[String],
    body: &[usize],
    forced: &[bool],
) -> Vec<Piece> {
    #[derive(Clone, Copy, PartialEq)]
    enum C {
        Keep,
        Cand,
        Out,
    }
    let n = body.len();
    let mut class = vec![C::Out; n];
    let mut show = vec![false; n];
    for (k, &x) in body.iter().enumerate() {
        let l = lines[x].as_str();
        // `show` also marks kept lines, so `context` can work around them.
        show[k] = sec.show.is_match(l);
        class[k] = if sec.keep.is_match(l) || p.keep.is_match(l) || forced[x] {
            C::Keep
        } else if sec.drop.is_match(l) {
            show[k] = false;
            C::Out
        } else if show[k] || (body_mode == BodyMode::Keep && !l.trim().is_empty()) {
            C::Cand
        } else {
            C::Out
        };
    }
    if sec.context > 0 {
        for (k, &is_show) in show.iter().enumerate() {
            if !is_show {
                continue;
            }
            let lo = k.saturating_sub(sec.context);
            let hi = (k + sec.context).min(n - 1);
            for j in lo..=hi {
                if class[j] == C::Out
                    && !sec.drop.is_match(&lines[body[j]])
                    && !lines[body[j]].trim().is_empty()
                {
                    class[j] = C::Cand;
                }
            }
        }
    }
    let mut cut = vec![false; n];
    if sec.head.is_some() || sec.tail.is_some() || sec.unit_max.is_some() {
        let mut unit = vec![0usize; n];
        let mut u = 0usize;
        for k in 0..n {
            let starts = match &sec.unit {
                Some(re) => re.is_match(&lines[body[k]]),
                None => true,
            };
            if starts && k > 0 {
                u += 1;
            }
            unit[k] = u;
        }
        let units = u + 1;
        if let Some(m) = sec.unit_max {
            let mut seen = 0;
            for k in 0..n {
                if k > 0 && unit[k] != unit[k - 1] {
                    seen = 0;
                }
                if class[k] == C::Cand {
                    seen += 1;
                    if seen > m {
                        cut[k] = true;
                    }
                }
            }
        }
        for k in 0..n {
            if sec.head.is_none() && sec.tail.is_none() {
                break;
            }
            if class[k] != C::Cand {
                continue;
            }
            let in_head = sec.head.is_some_and(|h| unit[k] < h);
            let in_tail = sec.tail.is_some_and(|t| unit[k] + t >= units);
            if !in_head && !in_tail {
                cut[k] = true;
            }
        }
    }
    if let Some(max) = sec.max {
        let mut seen = 0;
        for k in 0..n {
            if class[k] == C::Cand && !cut[k] {
                seen += 1;
                if seen > max {
                    cut[k] = true;
                }
            }
        }
    }
    let mut pieces = Vec::new();
    let mut pending_cut = 0usize;
    for k in 0..n {
        match class[k] {
            C::Out => {}
            C::Cand if cut[k] => pending_cut += 1,
            C::Keep | C::Cand => {
                if pending_cut > 0 && sec.marker {
                    pieces.push(Piece::Text(omitted(pending_cut)));
                }
                pending_cut = 0;
                pieces.push(Piece::Line(body[k]));
            }
        }
    }
    if pending_cut > 0 && sec.marker {
        pieces.push(Piece::Text(omitted(pending_cut)));
    }
    pieces
}
