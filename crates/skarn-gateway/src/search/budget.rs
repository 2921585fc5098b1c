//! What one server may put into the search index, and what one query may
//! cost. A downstream's catalogue is untrusted: ten thousand tools with
//! descriptions of unique words made an index of millions of terms
//! (hundreds of MiB) that every unknown query word scanned in full. So
//! each tool's indexed text is cut, each server's indexed text is capped
//! in all (tools past it are found by name and parameters only), and a
//! query's expansion work is charged against [`QUERY_WORK`].

use super::SearchDoc;

/// Bytes of a tool's description indexed (`read_tool_docs` still shows
/// more of it).
pub const INDEX_DESCRIPTION_BYTES: usize = 2 << 10;
/// Bytes of a tool's parameter names indexed.
pub const INDEX_PARAM_BYTES: usize = 1 << 10;
/// Bytes of description text one server may have indexed, over all of its
/// tools: past it, its tools are indexed by name and parameters only.
pub const INDEX_SERVER_BYTES: usize = 1 << 20;

/// Bytes of a query read (the rest is ignored).
pub const MAX_QUERY_BYTES: usize = 4 << 10;
/// Distinct terms of a query used.
pub const MAX_QUERY_TERMS: usize = 32;
/// Indexed terms one query term may stand for (prefix and fuzzy matches).
pub const MAX_EXPANSIONS: usize = 64;
/// Work one query may do: vocabulary entries compared plus postings
/// scored. Past it, the remaining terms count only where they match
/// exactly (or by synonym).
pub const QUERY_WORK: usize = 250_000;

/// `s` cut to at most `max` bytes, at a character boundary.
pub fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    &s[..i]
}

/// The indexing budget of one server, spent tool by tool.
#[derive(Debug)]
pub struct ServerBudget {
    left: usize,
    /// Tools whose description was cut or left out of the index because
    /// the server's budget ran out.
    pub cut: usize,
}

impl Default for ServerBudget {
    fn default() -> Self {
        ServerBudget {
            left: INDEX_SERVER_BYTES,
            cut: 0,
        }
    }
}

impl ServerBudget {
    /// The search document of one tool of `server`, within the budget.
    pub fn doc<'a>(
        &mut self,
        server: &str,
        tool: &str,
        description: &str,
        params: impl IntoIterator<Item = &'a str>,
    ) -> SearchDoc {
        let d = cut(description, INDEX_DESCRIPTION_BYTES.min(self.left));
        if self.left < description.len().min(INDEX_DESCRIPTION_BYTES) {
            self.cut += 1;
        }
        self.left -= d.len();
        let mut room = INDEX_PARAM_BYTES;
        let mut kept = Vec::new();
        for p in params {
            if p.len() >= room {
                break;
            }
            room -= p.len() + 1;
            kept.push(p.to_owned());
        }
        SearchDoc {
            server: server.to_owned(),
            tool: tool.to_owned(),
            description: d.to_owned(),
            params: kept,
        }
    }
}

/// Work left for one query.
#[derive(Debug)]
pub struct Work(usize);

impl Default for Work {
    fn default() -> Self {
        Work(QUERY_WORK)
    }
}

impl Work {
    /// Charge `n`; false (and nothing charged) when less is left.
    pub fn take(&mut self, n: usize) -> bool {
        match self.0.checked_sub(n) {
            Some(left) => {
                self.0 = left;
                true
            }
            None => false,
        }
    }
}
