//! Ranked tool search: BM25F over tool names, server aliases, descriptions
//! and parameter names, with stop words dropped, Snowball stemming, prefix
//! and fuzzy (edit-distance) matching of unknown terms, and a small alias /
//! synonym table for words agents use that descriptions do not ("ping",
//! "EC2", "postgresql", "ticket"...).
//!
//! Hand-rolled because no maintained crate offers an in-memory BM25 with
//! per-field weights and query expansion at this size (a few thousand
//! documents) without a large index engine; the whole index is rebuilt on
//! every catalogue change, which takes well under a millisecond per hundred
//! tools.
//!
//! `words` splits text, `synonyms` is the alias table, `expansion`
//! finds what one query term stands for, `budget` bounds what a server may
//! index and what a query may cost; this module builds the index and
//! ranks.

mod budget;
mod expansion;
mod synonyms;
#[cfg(test)]
mod tests;
mod words;

use std::collections::HashMap;

use rust_stemmers::{Algorithm, Stemmer};

use budget::{MAX_QUERY_BYTES, MAX_QUERY_TERMS, Work};
pub use budget::{ServerBudget, cut};
use synonyms::SYNONYMS;
use words::{is_stop, words};

/// One searchable tool.
#[derive(Debug, Clone)]
pub struct SearchDoc {
    /// Server alias.
    pub server: String,
    /// Tool name as the server gives it.
    pub tool: String,
    /// Description (may be empty).
    pub description: String,
    /// Names of the input parameters.
    pub params: Vec<String>,
}

/// Field weights (BM25F): a term in the tool's name counts more than one in
/// its description.
const W_NAME: f32 = 3.0;
const W_SERVER: f32 = 2.0;
const W_DESC: f32 = 1.0;
const W_PARAM: f32 = 0.5;
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// A search result before it is resolved against the catalogue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Index into the documents the index was built from.
    pub doc: usize,
    pub score: f32,
}

/// The inverted index.
pub struct SearchIndex {
    stemmer: Stemmer,
    /// term -> (doc, weighted term frequency)
    postings: HashMap<String, Vec<(u32, f32)>>,
    /// Every indexed term, sorted, for prefix lookup.
    vocab: Vec<String>,
    /// Positions in `vocab` by the term's length in characters, for fuzzy
    /// lookup (only terms of about the same length are compared).
    by_len: Vec<Vec<u32>>,
    doc_len: Vec<f32>,
    avg_len: f32,
    synonyms: HashMap<String, Vec<String>>,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("docs", &self.doc_len.len())
            .field("terms", &self.vocab.len())
            .finish()
    }
}

impl SearchIndex {
    fn stem(&self, w: &str) -> String {
        self.stemmer.stem(w).into_owned()
    }

    fn terms(&self, text: &str) -> Vec<String> {
        words(text)
            .into_iter()
            .filter(|w| !is_stop(w))
            .map(|w| self.stem(&w))
            .collect()
    }

    /// Build the index over `docs` (hits refer to positions in it).
    pub fn build(docs: &[SearchDoc]) -> SearchIndex {
        let mut idx = SearchIndex {
            stemmer: Stemmer::create(Algorithm::English),
            postings: HashMap::new(),
            vocab: Vec::new(),
            by_len: Vec::new(),
            doc_len: Vec::with_capacity(docs.len()),
            avg_len: 1.0,
            synonyms: HashMap::new(),
        };
        for (key, vals) in SYNONYMS {
            let k = idx.stem(key);
            let entry = idx.synonyms.entry(k.clone()).or_default();
            for v in *vals {
                let v = idx.stemmer.stem(v).into_owned();
                if v != k && !entry.contains(&v) {
                    entry.push(v);
                }
            }
        }
        for (i, d) in docs.iter().enumerate() {
            let mut tf: HashMap<String, f32> = HashMap::new();
            let mut len = 0.0;
            let fields: [(f32, Vec<String>); 4] = [
                (W_NAME, idx.terms(&d.tool)),
                (W_SERVER, idx.terms(&d.server)),
                (W_DESC, idx.terms(&d.description)),
                (W_PARAM, idx.terms(&d.params.join(" "))),
            ];
            for (w, terms) in fields {
                for t in terms {
                    *tf.entry(t).or_default() += w;
                    len += w;
                }
            }
            idx.doc_len.push(len);
            for (t, f) in tf {
                idx.postings.entry(t).or_default().push((i as u32, f));
            }
        }
        let n = idx.doc_len.len().max(1) as f32;
        idx.avg_len = (idx.doc_len.iter().sum::<f32>() / n).max(1.0);
        idx.vocab = idx.postings.keys().cloned().collect();
        idx.vocab.sort();
        for (i, v) in idx.vocab.iter().enumerate() {
            let n = v.chars().count();
            if idx.by_len.len() <= n {
                idx.by_len.resize_with(n + 1, Vec::new);
            }
            idx.by_len[n].push(i as u32);
        }
        idx
    }

    /// Number of indexed documents.
    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// The best `limit` documents for `query`, best first. Ties keep the
    /// documents' order. The query is read up to [`MAX_QUERY_BYTES`] and
    /// [`MAX_QUERY_TERMS`] distinct terms, and its work is budgeted
    /// (`budget::QUERY_WORK`).
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let n = self.doc_len.len();
        if n == 0 || limit == 0 {
            return Vec::new();
        }
        let query = cut(query, MAX_QUERY_BYTES);
        let mut qterms = self.terms(query);
        if qterms.is_empty() {
            // A query of stop words only: fall back to the raw words.
            qterms = words(query).iter().map(|w| self.stem(w)).collect();
        }
        let mut seen = std::collections::HashSet::new();
        qterms.retain(|t| seen.insert(t.clone()));
        qterms.truncate(MAX_QUERY_TERMS);
        let mut work = Work::default();
        let mut scores = vec![0.0f32; n];
        let mut best = vec![0.0f32; n];
        let mut touched: Vec<usize> = Vec::new();
        for q in &qterms {
            touched.clear();
            for (term, weight) in self.expand(q, &mut work) {
                let Some(posts) = self.postings.get(&term) else {
                    continue;
                };
                // Exact matches are always scored; expansions while work
                // is left.
                if !work.take(posts.len()) && term != *q {
                    continue;
                }
                let df = posts.len() as f32;
                let idf = (1.0 + (n as f32 - df + 0.5) / (df + 0.5)).ln();
                for &(d, tf) in posts {
                    let d = d as usize;
                    let norm = 1.0 - B + B * self.doc_len[d] / self.avg_len;
                    let s = weight * idf * tf * (K1 + 1.0) / (tf + K1 * norm);
                    if best[d] == 0.0 {
                        touched.push(d);
                    }
                    if s > best[d] {
                        best[d] = s;
                    }
                }
            }
            for &d in &touched {
                scores[d] += best[d];
                best[d] = 0.0;
            }
        }
        let mut hits: Vec<Hit> = scores
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0.0)
            .map(|(doc, &score)| Hit { doc, score })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
        hits.truncate(limit);
        hits
    }
}
