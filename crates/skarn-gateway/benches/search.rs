//! Search quality and speed on the generated 500-tool, 16-server catalogue
//! (bench/gateway/catalog.json): recall@1 and recall@5 for the
//! description-phrased set and the reworded set, and the median search
//! latency. Run: `cargo bench -p skarn-gateway --bench search`.

// A benchmark over a fixed catalogue: a panic is its failure report.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Instant;

use serde_json::Value;
use skarn_gateway::search::{SearchDoc, SearchIndex};

fn load(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench/gateway")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

fn main() {
    let catalog = load("catalog.json");
    let mut docs = Vec::new();
    let mut names = Vec::new();
    for (server, tools) in catalog.as_object().unwrap() {
        for t in tools.as_array().unwrap() {
            let name = t["name"].as_str().unwrap();
            names.push(format!("{server}__{name}"));
            docs.push(SearchDoc {
                server: server.clone(),
                tool: name.to_owned(),
                description: t["description"].as_str().unwrap_or("").to_owned(),
                params: t["inputSchema"]["properties"]
                    .as_object()
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default(),
            });
        }
    }
    let t0 = Instant::now();
    let index = SearchIndex::build(&docs);
    let build = t0.elapsed();
    println!(
        "catalogue: {} tools, {} servers; index built in {:.2} ms",
        docs.len(),
        catalog.as_object().unwrap().len(),
        build.as_secs_f64() * 1e3
    );
    let verbose = std::env::args().any(|a| a == "--verbose");
    let mut all_times = Vec::new();
    for set in [
        "queries_description.json",
        "queries_reworded.json",
        "queries_heldout.json",
    ] {
        let queries = load(set);
        let queries = queries.as_array().unwrap();
        let (mut at1, mut at5) = (0, 0);
        for q in queries {
            let text = q["query"].as_str().unwrap();
            let want = q["expect"].as_str().unwrap();
            let hits = index.search(text, 5);
            let got: Vec<&str> = hits.iter().map(|h| names[h.doc].as_str()).collect();
            if got.first() == Some(&want) {
                at1 += 1;
            } else if verbose {
                println!("  miss@1 {text:?}: want {want}, got {got:?}");
            }
            if got.contains(&want) {
                at5 += 1;
            }
            // Timing: repeat each query to get stable per-query medians.
            for _ in 0..20 {
                let t = Instant::now();
                let h = index.search(text, 8);
                all_times.push(t.elapsed().as_secs_f64() * 1e6);
                std::hint::black_box(h);
            }
        }
        let n = queries.len() as f64;
        println!(
            "{set}: {} queries, recall@1 {:.1}% ({at1}), recall@5 {:.1}% ({at5})",
            queries.len(),
            100.0 * at1 as f64 / n,
            100.0 * at5 as f64 / n
        );
    }
    all_times.sort_by(f64::total_cmp);
    let pct = |p: f64| all_times[((all_times.len() as f64 - 1.0) * p) as usize];
    println!(
        "search latency over {} runs: median {:.1} us, p90 {:.1} us, p99 {:.1} us",
        all_times.len(),
        pct(0.5),
        pct(0.9),
        pct(0.99)
    );
}
