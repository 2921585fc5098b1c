//! Fixture battery: real outputs captured from real commands (see
//! fixtures/index.toml), each with a hand-reviewed list of lines an agent
//! must see (fixtures/NAME.keep).
//!
//! For every fixture: every must-keep line survives verbatim as a whole
//! line, the output (with its recall handle) never has more o200k_base
//! tokens than the input, the saving reaches the fixture's floor, and the
//! profile chosen is the expected one. Over the whole set: 100% of
//! must-keep lines kept and at least 85% of tokens saved.

use std::collections::HashSet;
use std::path::PathBuf;

use serde::Deserialize;
use skarn_compress::{Compressor, handle_line, lines, tokens};

#[derive(Deserialize)]
struct Index {
    fixture: Vec<Fixture>,
}

#[derive(Deserialize)]
struct Fixture {
    name: String,
    command: String,
    exit: i32,
    profile: String,
    /// Minimum share of tokens saved (0.0 for outputs that pass unchanged).
    min_saved: f64,
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

struct Figures {
    name: String,
    profile: String,
    before: usize,
    after: usize,
    keep_total: usize,
    keep_kept: usize,
}

fn run_all() -> Vec<Figures> {
    let index: Index =
        toml::from_str(&std::fs::read_to_string(dir().join("index.toml")).unwrap()).unwrap();
    let c = Compressor::builtin();
    let mut figs = Vec::new();
    let mut failures = Vec::new();
    for f in &index.fixture {
        let raw = std::fs::read(dir().join(format!("{}.out", f.name))).unwrap();
        let keep = std::fs::read_to_string(dir().join(format!("{}.keep", f.name))).unwrap();
        let out = c.compress(&raw, &f.command, Some(f.exit));
        if out.profile != f.profile {
            failures.push(format!(
                "{}: profile {} chosen, expected {}",
                f.name, out.profile, f.profile
            ));
        }
        let mut text = out.text.clone();
        if out.changed {
            text.push_str(&handle_line("0123456789ab", out.raw_lines, out.kept_lines));
            text.push('\n');
        }
        // Must-keep lines are written colour-free; compare against the
        // cleaned output lines.
        let got: HashSet<String> = lines::clean(&text).into_iter().collect();
        let mut kept = 0;
        let mut total = 0;
        for want in keep.lines().filter(|l| !l.trim().is_empty()) {
            total += 1;
            if got.contains(want) {
                kept += 1;
            } else {
                failures.push(format!("{}: must-keep line lost: {want:?}", f.name));
            }
        }
        let before = tokens::count(&String::from_utf8_lossy(&raw));
        let after = tokens::count(&text);
        if after > before {
            failures.push(format!("{}: output grew {before} -> {after}", f.name));
        }
        let saved = 1.0 - after as f64 / before as f64;
        if saved + 1e-9 < f.min_saved {
            failures.push(format!(
                "{}: saved {:.1}% < floor {:.1}%",
                f.name,
                saved * 100.0,
                f.min_saved * 100.0
            ));
        }
        if raw.iter().any(|b| !b.is_ascii_whitespace()) && out.text.trim().is_empty() {
            failures.push(format!("{}: came back empty", f.name));
        }
        figs.push(Figures {
            name: f.name.clone(),
            profile: out.profile.clone(),
            before,
            after,
            keep_total: total,
            keep_kept: kept,
        });
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    figs
}

#[test]
fn every_fixture_keeps_its_lines_and_saves_tokens() {
    let figs = run_all();
    let (mut b, mut a, mut kt, mut kk) = (0, 0, 0, 0);
    println!("| fixture | profile | tokens before | after | saved | must-keep kept |");
    println!("|---|---|---:|---:|---:|---:|");
    for f in &figs {
        println!(
            "| {} | {} | {} | {} | {:.1}% | {}/{} |",
            f.name,
            f.profile,
            f.before,
            f.after,
            100.0 * (1.0 - f.after as f64 / f.before as f64),
            f.keep_kept,
            f.keep_total
        );
        b += f.before;
        a += f.after;
        kt += f.keep_total;
        kk += f.keep_kept;
    }
    let saved = 1.0 - a as f64 / b as f64;
    println!(
        "| **total ({} fixtures)** | | {b} | {a} | {:.1}% | {kk}/{kt} |",
        figs.len(),
        saved * 100.0
    );
    assert_eq!(kk, kt, "every must-keep line survives");
    assert!(saved >= 0.85, "total saving {:.1}% < 85%", saved * 100.0);
}
