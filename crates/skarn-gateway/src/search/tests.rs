//! Ranking on a small catalogue, and the bounded edit distance.

use super::expansion::edit_distance;
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

#[test]
fn huge_words_are_cut_so_matching_stays_bounded() {
    let long = "a".repeat(100_000);
    let ws = super::words::words(&format!("{long} b{long}"));
    assert!(ws.iter().all(|w| w.len() <= super::words::MAX_WORD_BYTES));
    let docs = vec![doc("s", "t", &format!("{long}x"), &[])];
    let idx = SearchIndex::build(&docs);
    // A long query term near the long word: a bounded number of short pairs.
    let q = format!("{}y", "a".repeat(100_000));
    let _ = idx.search(&q, 5);
}

#[test]
fn a_server_indexes_within_its_budget() {
    use super::budget::{INDEX_DESCRIPTION_BYTES, INDEX_PARAM_BYTES, INDEX_SERVER_BYTES};
    let mut b = ServerBudget::default();
    // Long runs cut into 64-byte words: few terms to stem.
    let desc = "wordy".repeat(1000);
    let params: Vec<String> = (0..1000).map(|i| format!("param{i}")).collect();
    let docs: Vec<SearchDoc> = (0..600)
        .map(|i| {
            b.doc(
                "s",
                &format!("tool{i}"),
                &desc,
                params.iter().map(String::as_str),
            )
        })
        .collect();
    assert!(
        docs.iter()
            .all(|d| d.description.len() <= INDEX_DESCRIPTION_BYTES)
    );
    assert!(
        docs.iter()
            .all(|d| d.params.iter().map(|p| p.len() + 1).sum::<usize>() <= INDEX_PARAM_BYTES)
    );
    let total: usize = docs.iter().map(|d| d.description.len()).sum();
    assert!(total <= INDEX_SERVER_BYTES, "{total}");
    assert!(docs[599].description.is_empty());
    assert!(b.cut > 0);
    // Past the budget a tool is still found by name.
    let idx = SearchIndex::build(&docs);
    assert_eq!(top(&idx, &docs, "tool599"), "s__tool599");
    // A cut never splits a character.
    assert_eq!(cut("ééé", 3), "é");
}

#[test]
fn a_query_of_many_unknown_words_is_bounded_and_still_finds_exact_ones() {
    // A large vocabulary of unique words, and a query of many unknown ones
    // plus one known: the known one is still scored.
    let mut docs = catalogue();
    let mut b = ServerBudget::default();
    for i in 0..600 {
        let words: Vec<String> = (0..40).map(|j| format!("w{i}x{j}q")).collect();
        docs.push(b.doc("junk", &format!("j{i}"), &words.join(" "), []));
    }
    let idx = SearchIndex::build(&docs);
    let mut q: Vec<String> = (0..200).map(|i| format!("zqw{i}x{i}qzz")).collect();
    q.push("postgres".into());
    let hits = idx.search(&q.join(" "), 3);
    assert!(hits.is_empty() || hits.len() <= 3);
    // Only the first 32 distinct terms are read; a known word first is found.
    q.insert(0, "postgres".into());
    assert_eq!(top(&idx, &docs, &q.join(" ")), "postgres__run_query");
    // Prefix matches still come from the sorted vocabulary.
    assert_eq!(top(&idx, &docs, "kube postgr"), "postgres__run_query");
}
