//! Runs of ordinary lines: lines alike but for numbers squeezed, blocks
//! already printed cut, and the run cut to the profile's head and tail.

use super::{Out, Piece, Run, omitted};

impl Run<'_> {
    pub(super) fn flush_run(&mut self) {
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
