//! The output written out: duplicate runs and neighbouring cut markers
//! merged, identical consecutive lines counted, groups and the listing
//! expanded in place.

use crate::listing;

use super::{EngineResult, LONG_LINE, LONG_LINE_HEAD, Out, Piece, Run, omitted};

impl Run<'_> {
    pub(super) fn render(mut self) -> EngineResult {
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
            if is_line && s.len() > LONG_LINE {
                push_cut(text, s);
            } else {
                text.push_str(s);
            }
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

/// The start of a long line, then a marker saying how much of it was cut.
fn push_cut(text: &mut String, line: &str) {
    let mut end = LONG_LINE_HEAD.min(line.len());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    text.push_str(&line[..end]);
    text.push_str(&format!(
        " … [{} more bytes of this line cut; see the full output]",
        line.len() - end
    ));
}
