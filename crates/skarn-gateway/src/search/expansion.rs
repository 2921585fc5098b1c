//! Query expansion: every indexed term one query term stands for (itself,
//! its synonyms, prefixes both ways, near misspellings), with the weight
//! each counts for.

use super::SearchIndex;
use super::budget::{MAX_EXPANSIONS, Work};

/// Expansion weights: how much a non-exact match of a query term counts.
const X_SYNONYM: f32 = 0.75;
const X_PREFIX: f32 = 0.6;
const X_FUZZY: f32 = 0.55;

impl SearchIndex {
    /// Every indexed term a query term `t` stands for, with its weight.
    /// Prefix and fuzzy matches are looked for while `work` is left, at
    /// most [`MAX_EXPANSIONS`] of them.
    pub(super) fn expand(&self, t: &str, work: &mut Work) -> Vec<(String, f32)> {
        let mut out: Vec<(String, f32)> = Vec::new();
        let push = |term: &str, w: f32, out: &mut Vec<(String, f32)>| {
            if let Some(e) = out.iter_mut().find(|(x, _)| x == term) {
                e.1 = e.1.max(w);
            } else {
                out.push((term.to_owned(), w));
            }
        };
        let known = self.postings.contains_key(t);
        if known {
            push(t, 1.0, &mut out);
        }
        if let Some(syns) = self.synonyms.get(t) {
            for s in syns {
                if self.postings.contains_key(s) {
                    push(s, X_SYNONYM, &mut out);
                }
            }
        }
        let tlen = t.chars().count();
        if !known && tlen >= 3 {
            // Prefixes both ways: "postgresql" -> "postgres" (a prefix of
            // `t` at most 4 characters shorter, looked up), "kube" ->
            // "kubernetes" (the sorted run of terms starting with `t`).
            for (n, (i, _)) in t.char_indices().enumerate() {
                if n >= 4 && tlen - n <= 4 && self.postings.contains_key(&t[..i]) {
                    push(&t[..i], X_PREFIX, &mut out);
                }
            }
            let start = self.vocab.partition_point(|v| v.as_str() < t);
            for v in self.vocab[start..]
                .iter()
                .take_while(|v| v.starts_with(t))
                .take(MAX_EXPANSIONS)
            {
                if !work.take(1) {
                    break;
                }
                push(v, X_PREFIX, &mut out);
            }
        }
        if !known && tlen >= 4 {
            let max = if tlen >= 8 { 2 } else { 1 };
            'lengths: for len in tlen.saturating_sub(max).max(3)..=tlen + max {
                for &i in self.by_len.get(len).map_or(&[][..], Vec::as_slice) {
                    if out.len() >= MAX_EXPANSIONS || !work.take(1) {
                        break 'lengths;
                    }
                    let v = &self.vocab[i as usize];
                    if edit_distance(t, v, max) <= max {
                        push(v, X_FUZZY, &mut out);
                    }
                }
            }
        }
        // A misspelled synonym key ("postgress" is one; "pign" is not).
        if !known && out.is_empty() {
            let max = if tlen >= 8 { 2 } else { 1 };
            if tlen >= 4 {
                for (k, syns) in &self.synonyms {
                    if k.chars().count().abs_diff(tlen) <= max && edit_distance(t, k, max) <= max {
                        for s in syns {
                            if self.postings.contains_key(s) {
                                push(s, X_SYNONYM * X_FUZZY, &mut out);
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

/// Damerau-Levenshtein (optimal string alignment) distance, giving up once
/// it exceeds `max` (returns `max + 1`).
pub(super) fn edit_distance(a: &str, b: &str, max: usize) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let (n, m) = (a.len(), b.len());
    if n.abs_diff(m) > max {
        return max + 1;
    }
    let mut prev2 = vec![0usize; m + 1];
    let mut prev: Vec<usize> = (0..=m).collect();
    let mut cur = vec![0usize; m + 1];
    for i in 1..=n {
        cur[0] = i;
        let mut row_min = cur[0];
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(prev2[j - 2] + 1);
            }
            cur[j] = v;
            row_min = row_min.min(v);
        }
        if row_min > max {
            return max + 1;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[m]
}
