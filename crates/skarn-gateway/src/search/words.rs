//! Text to words: lower-case splitting on punctuation and camelCase, and
//! the stop words a query or description drops.

const STOP_WORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "and",
    "or",
    "of",
    "to",
    "in",
    "on",
    "for",
    "with",
    "by",
    "from",
    "at",
    "into",
    "is",
    "are",
    "be",
    "it",
    "its",
    "this",
    "that",
    "these",
    "those",
    "my",
    "our",
    "your",
    "me",
    "we",
    "i",
    "you",
    "please",
    "can",
    "could",
    "would",
    "should",
    "will",
    "do",
    "does",
    "some",
    "any",
    "as",
    "if",
    "then",
    "so",
    "via",
    "using",
    "use",
    "about",
    "want",
    "need",
    "how",
    "what",
    "which",
    "who",
    "whose",
    "when",
    "where",
    "there",
    "their",
    "them",
    "all",
    "every",
    "each",
    "given",
    "specified",
    "specific",
    "provided",
    "optional",
    "optionally",
    "returns",
    "return",
    "tool",
    "tools",
    "let",
    "lets",
    "just",
    "also",
    "up",
    "out",
    "one",
];

/// Longest word kept whole, in bytes: longer runs are cut into pieces of
/// this size, so that matching a query term against the vocabulary (edit
/// distance, prefixes) costs a bounded amount per pair whatever a
/// downstream description or a client's query holds.
pub(super) const MAX_WORD_BYTES: usize = 64;

/// Split into lower-case words: on anything not alphanumeric, and on
/// camelCase boundaries ("listIssues" -> "list", "issues").
pub(super) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if (c.is_uppercase() && prev_lower || cur.len() >= MAX_WORD_BYTES) && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            cur.extend(c.to_lowercase());
        } else {
            prev_lower = false;
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

pub(super) fn is_stop(w: &str) -> bool {
    STOP_WORDS.contains(&w)
}
