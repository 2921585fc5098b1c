//! The search index over a downstream's catalogue and a client's query
//! (`search`): input is catalogue lines (`tool<TAB>description<TAB>params`)
//! then, after a NUL byte, the query. Whatever both hold: no panic, at most
//! `limit` hits, each naming an indexed tool, and every query's work within
//! its budget (libFuzzer's timeout and RSS limit catch long walks).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_gateway::search::{SearchIndex, ServerBudget};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (catalogue, query) = text.split_once('\0').unwrap_or((&text, "file"));
    let mut budget = ServerBudget::default();
    let docs: Vec<_> = catalogue
        .lines()
        .map(|l| {
            let mut f = l.split('\t');
            let tool = f.next().unwrap_or_default();
            let description = f.next().unwrap_or_default();
            budget.doc("s", tool, description, f)
        })
        .collect();
    let index = SearchIndex::build(&docs);
    for limit in [1, 8] {
        let hits = index.search(query, limit);
        assert!(hits.len() <= limit);
        assert!(hits.iter().all(|h| h.doc < docs.len() && h.score > 0.0));
    }
});
