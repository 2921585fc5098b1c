//! Closed sections: which body lines survive (keep, show and context,
//! units with their head, tail and caps), and where the section goes
//! (printed, merged into a group, or dropped with a passing verdict).

use std::collections::HashSet;

use crate::rules::{BodyMode, Profile, Section};

use super::{ALWAYS, Group, Open, Out, Piece, Run, omitted};

impl Run<'_> {
    pub(super) fn close(&mut self, o: Open, verdict: Option<bool>) {
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
        let none = [];
        let forced: &[bool] = if self.forced_in_sections {
            &self.forced
        } else {
            &none
        };
        let pieces = render_body(self.p, sec, body_mode, self.lines, &o.body, forced);
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
        class[k] = if sec.keep.is_match(l)
            || p.keep.is_match(l)
            || forced.get(x) == Some(&true)
            || ALWAYS.is_match(l)
        {
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
