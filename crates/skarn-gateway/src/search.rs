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

use std::collections::HashMap;

use rust_stemmers::{Algorithm, Stemmer};

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

/// Expansion weights: how much a non-exact match of a query term counts.
const X_SYNONYM: f32 = 0.75;
const X_PREFIX: f32 = 0.6;
const X_FUZZY: f32 = 0.55;

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

/// Words agents use mapped to words tool descriptions use. Keys and values
/// are lower-case surface words; both sides are stemmed when the table is
/// built. A key maps to every word on its right.
const SYNONYMS: &[(&str, &[&str])] = &[
    // messaging
    ("ping", &["post", "send", "message", "notify"]),
    ("notify", &["post", "send", "message", "notification"]),
    ("tell", &["post", "send", "message"]),
    ("announce", &["post", "send", "message"]),
    ("dm", &["direct", "message", "send"]),
    ("say", &["message"]),
    ("said", &["message", "history"]),
    ("today", &["history", "recent"]),
    ("recent", &["history", "recent"]),
    ("everyone", &["channel", "post"]),
    ("general", &["channel"]),
    ("write", &["post", "send", "create", "write"]),
    ("chat", &["message", "channel", "slack"]),
    ("room", &["channel"]),
    ("team", &["channel", "team"]),
    ("thread", &["reply", "thread"]),
    ("react", &["reaction", "emoji"]),
    ("emoji", &["reaction"]),
    // products implied
    ("ec2", &["aws", "instance", "instances"]),
    ("vm", &["instance", "virtual", "machine"]),
    ("vms", &["instance", "virtual", "machine"]),
    ("server", &["instance"]),
    ("box", &["instance"]),
    ("s3", &["aws", "bucket", "object"]),
    ("lambda", &["aws", "function"]),
    ("cloudwatch", &["aws", "metric", "log"]),
    ("iam", &["aws", "role", "policy", "user"]),
    ("dynamodb", &["aws", "table", "item"]),
    ("rds", &["aws", "database"]),
    ("amazon", &["aws"]),
    ("postgresql", &["postgres", "sql"]),
    ("postgress", &["postgres"]),
    ("psql", &["postgres", "sql"]),
    ("pg", &["postgres"]),
    ("sql", &["query", "postgres"]),
    ("db", &["database", "postgres"]),
    ("k8s", &["kubernetes"]),
    ("kube", &["kubernetes"]),
    ("kubectl", &["kubernetes"]),
    ("pod", &["pod", "kubernetes"]),
    ("container", &["container", "docker", "pod"]),
    ("image", &["image", "docker"]),
    ("gmail", &["email", "mail"]),
    ("mail", &["email"]),
    ("inbox", &["email", "message"]),
    ("gdrive", &["drive", "file"]),
    ("drive", &["drive", "file"]),
    ("gcal", &["calendar", "event"]),
    ("meeting", &["event"]),
    ("appointment", &["event"]),
    ("schedule", &["event", "create"]),
    ("invite", &["attendee", "add"]),
    ("git", &["github", "repository", "commit"]),
    ("repo", &["repository"]),
    ("repos", &["repository"]),
    ("pr", &["pull", "request"]),
    ("prs", &["pull", "request"]),
    ("mr", &["pull", "request", "merge"]),
    ("ci", &["workflow", "run", "pipeline"]),
    ("build", &["workflow", "run", "build"]),
    ("ticket", &["issue"]),
    ("tickets", &["issue"]),
    ("bug", &["issue", "error"]),
    ("task", &["issue", "task"]),
    ("sprint", &["sprint", "cycle"]),
    ("wiki", &["page", "document"]),
    ("doc", &["document", "page"]),
    ("docs", &["document", "page"]),
    ("note", &["page", "note"]),
    ("exception", &["error", "issue"]),
    ("crash", &["error", "issue", "event"]),
    ("stacktrace", &["error", "event"]),
    ("payment", &["charge", "payment", "stripe"]),
    ("pay", &["payment", "charge"]),
    ("refund", &["refund"]),
    ("bill", &["invoice", "billing"]),
    ("billing", &["invoice", "subscription"]),
    ("money", &["charge", "payment", "balance"]),
    ("customer", &["customer"]),
    ("monitor", &["monitor", "metric", "alert"]),
    ("dashboard", &["dashboard"]),
    ("alert", &["alert", "monitor"]),
    ("metrics", &["metric"]),
    ("folder", &["directory"]),
    ("dir", &["directory"]),
    ("path", &["file", "directory"]),
    // verbs
    ("find", &["search", "find", "lookup", "list", "get"]),
    ("lookup", &["search", "get", "find"]),
    ("look", &["search", "get", "find"]),
    ("locate", &["search", "find"]),
    ("query", &["query", "search"]),
    ("show", &["list", "get"]),
    ("fetch", &["get", "read", "download"]),
    ("retrieve", &["get", "read"]),
    ("view", &["get", "read", "describe"]),
    ("see", &["get", "list", "read"]),
    ("check", &["get", "status", "describe"]),
    ("open", &["create", "open", "read"]),
    ("make", &["create"]),
    ("new", &["create"]),
    ("add", &["create", "add"]),
    ("file", &["file", "create"]),
    ("spin", &["create", "run", "launch", "start"]),
    ("launch", &["run", "start", "create"]),
    ("boot", &["start", "run"]),
    ("kill", &["stop", "terminate", "delete"]),
    ("shutdown", &["stop", "terminate"]),
    ("halt", &["stop"]),
    ("remove", &["delete", "remove"]),
    ("erase", &["delete"]),
    ("drop", &["delete", "drop"]),
    ("destroy", &["delete", "terminate"]),
    ("trash", &["delete"]),
    ("change", &["update", "edit"]),
    ("modify", &["update", "edit"]),
    ("edit", &["update", "edit"]),
    ("rename", &["update", "rename", "move"]),
    ("set", &["update", "set"]),
    ("close", &["close", "update", "resolve"]),
    ("resolve", &["resolve", "close"]),
    ("enumerate", &["list"]),
    ("count", &["count"]),
    ("run", &["run", "execute"]),
    ("execute", &["run", "execute", "query"]),
    ("deploy", &["deploy", "apply", "release"]),
    ("ship", &["deploy", "release"]),
    ("upload", &["upload", "put", "write"]),
    ("download", &["download", "get", "read"]),
    ("save", &["write", "create", "upload"]),
    ("copy", &["copy"]),
    ("move", &["move"]),
    ("comment", &["comment"]),
    ("reply", &["reply", "comment"]),
    ("assign", &["assign", "assignee"]),
    ("label", &["label", "tag"]),
    ("tag", &["tag", "label"]),
    ("merge", &["merge"]),
    ("approve", &["review", "approve"]),
    ("review", &["review"]),
    ("scale", &["scale", "replica"]),
    ("restart", &["restart", "reboot"]),
    ("reboot", &["reboot", "restart"]),
    ("log", &["log"]),
    ("logs", &["log"]),
    ("cost", &["cost", "billing"]),
    ("spend", &["cost"]),
    ("people", &["user", "member"]),
    ("person", &["user", "member"]),
    ("member", &["user", "member"]),
    ("teammate", &["user", "member"]),
    ("colleague", &["user", "member"]),
    ("status", &["status", "get"]),
    ("secret", &["secret"]),
    ("password", &["secret"]),
    ("storage", &["bucket", "storage"]),
    ("remind", &["create", "reminder"]),
    ("shut", &["stop", "shutdown"]),
    ("call", &["invoke", "run"]),
    ("grep", &["filter", "search"]),
    ("column", &["describe", "column"]),
    ("columns", &["describe", "column"]),
    ("big", &["size"]),
    ("large", &["size"]),
    ("readme", &["file", "contents"]),
    ("leave", &["create", "post", "add"]),
    ("current", &["get", "active"]),
    ("email", &["email", "send"]),
    ("fill", &["update", "write"]),
    ("cell", &["spreadsheet", "range"]),
    ("cells", &["spreadsheet", "range"]),
    ("sheet", &["spreadsheet"]),
    ("filter", &["query", "filter"]),
    ("rows", &["query"]),
    ("charge", &["create", "payment"]),
    ("back", &["refund"]),
    ("stop", &["cancel", "stop"]),
    ("subscriber", &["subscription"]),
    ("fix", &["resolve"]),
    ("fixed", &["resolve"]),
    ("silence", &["mute"]),
    ("declare", &["create"]),
    ("raise", &["create"]),
    ("running", &["list", "describe", "run"]),
];

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
    /// Every indexed term, for prefix and fuzzy lookup.
    vocab: Vec<String>,
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

/// Split into lower-case words: on anything not alphanumeric, and on
/// camelCase boundaries ("listIssues" -> "list", "issues").
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower && !cur.is_empty() {
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

fn is_stop(w: &str) -> bool {
    STOP_WORDS.contains(&w)
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

    /// Every indexed term a query term `t` stands for, with its weight.
    fn expand(&self, t: &str) -> Vec<(String, f32)> {
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
            // Prefixes both ways: "postgresql" -> "postgres", "kube" -> "kubernetes".
            for v in &self.vocab {
                let vlen = v.chars().count();
                if (vlen >= 4 && t.starts_with(v.as_str()) && tlen - vlen <= 4)
                    || (v.starts_with(t) && vlen > tlen)
                {
                    push(v, X_PREFIX, &mut out);
                }
            }
        }
        if !known && tlen >= 4 {
            let max = if tlen >= 8 { 2 } else { 1 };
            for v in &self.vocab {
                let vlen = v.chars().count();
                if vlen.abs_diff(tlen) <= max && vlen >= 3 && edit_distance(t, v, max) <= max {
                    push(v, X_FUZZY, &mut out);
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

    /// The best `limit` documents for `query`, best first. Ties keep the
    /// documents' order.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let n = self.doc_len.len();
        if n == 0 || limit == 0 {
            return Vec::new();
        }
        let mut qterms = self.terms(query);
        if qterms.is_empty() {
            // A query of stop words only: fall back to the raw words.
            qterms = words(query).iter().map(|w| self.stem(w)).collect();
        }
        qterms.dedup();
        let mut scores = vec![0.0f32; n];
        let mut best = vec![0.0f32; n];
        let mut touched: Vec<usize> = Vec::new();
        for q in &qterms {
            touched.clear();
            for (term, weight) in self.expand(q) {
                let Some(posts) = self.postings.get(&term) else {
                    continue;
                };
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

/// Damerau-Levenshtein (optimal string alignment) distance, giving up once
/// it exceeds `max` (returns `max + 1`).
fn edit_distance(a: &str, b: &str, max: usize) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(server: &str, tool: &str, description: &str, params: &[&str]) -> SearchDoc {
        SearchDoc {
            server: server.into(),
            tool: tool.into(),
            description: description.into(),
            params: params.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn catalogue() -> Vec<SearchDoc> {
        vec![
            doc(
                "slack",
                "post_message",
                "Post a message to a Slack channel",
                &["channel", "text"],
            ),
            doc(
                "slack",
                "list_channels",
                "List the channels in the workspace",
                &["limit"],
            ),
            doc(
                "github",
                "create_issue",
                "Create a new issue in a repository",
                &["owner", "repo", "title"],
            ),
            doc(
                "github",
                "list_pull_requests",
                "List pull requests of a repository",
                &["owner", "repo", "state"],
            ),
            doc(
                "postgres",
                "run_query",
                "Run a read-only SQL query",
                &["sql"],
            ),
            doc(
                "aws",
                "describe_instances",
                "Describe compute instances in a region",
                &["region"],
            ),
            doc(
                "jira",
                "create_issue",
                "Create a Jira issue in a project",
                &["project", "summary"],
            ),
        ]
    }

    fn top(idx: &SearchIndex, docs: &[SearchDoc], q: &str) -> String {
        let h = idx.search(q, 1);
        assert!(!h.is_empty(), "no hit for {q:?}");
        let d = &docs[h[0].doc];
        format!("{}__{}", d.server, d.tool)
    }

    #[test]
    fn ranks_description_synonym_product_typo_and_prefix_queries() {
        let docs = catalogue();
        let idx = SearchIndex::build(&docs);
        assert_eq!(
            top(&idx, &docs, "post a message to a channel"),
            "slack__post_message"
        );
        assert_eq!(
            top(&idx, &docs, "ping the team channel on slack"),
            "slack__post_message"
        );
        assert_eq!(
            top(&idx, &docs, "list my EC2 boxes"),
            "aws__describe_instances"
        );
        assert_eq!(top(&idx, &docs, "postgress query"), "postgres__run_query");
        assert_eq!(top(&idx, &docs, "postgresql"), "postgres__run_query");
        assert_eq!(top(&idx, &docs, "open PRs"), "github__list_pull_requests");
        assert_eq!(top(&idx, &docs, "file a jira ticket"), "jira__create_issue");
        assert_eq!(
            top(&idx, &docs, "listPullRequests"),
            "github__list_pull_requests"
        );
    }

    #[test]
    fn nonsense_finds_nothing_and_empty_is_fine() {
        let docs = catalogue();
        let idx = SearchIndex::build(&docs);
        assert!(idx.search("zzzqqq", 5).is_empty());
        assert!(idx.search("", 5).is_empty());
        assert!(SearchIndex::build(&[]).search("x", 5).is_empty());
    }

    #[test]
    fn edit_distance_is_bounded() {
        assert_eq!(edit_distance("postgress", "postgres", 2), 1);
        assert_eq!(edit_distance("pots", "post", 1), 1);
        assert_eq!(edit_distance("abc", "xyz", 1), 2);
    }
}
