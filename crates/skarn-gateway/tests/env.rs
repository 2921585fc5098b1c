//! A stdio downstream gets a minimal environment plus exactly what its
//! configuration names (issue 10). The only test in this binary: it sets
//! variables in the process environment, which the gateway reads.

// Tests may unwrap: a panic is how a test fails.
#![allow(clippy::unwrap_used)]

// The helpers of the `it` binary.
#[allow(dead_code)]
#[path = "it/common.rs"]
mod common;

use std::collections::BTreeMap;

use common::{gateway, hostile, rt};
use skarn_test_support::TempDir;

fn dump(path: &std::path::Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

#[test]
fn secrets_reach_only_the_server_that_names_them() {
    // SAFETY: this binary has this one test; nothing else reads or writes
    // the environment concurrently.
    unsafe {
        std::env::set_var("SKARN_HTTP_TOKEN", "http-token-value");
        std::env::set_var("UNRELATED_SECRET", "unrelated-value");
        std::env::set_var("GITHUB_TOKEN", "github-token-value");
        std::env::set_var("LC_TIME", "C");
    }
    let dir = TempDir::new("env");
    let (a, b) = (dir.path().join("a.env"), dir.path().join("b.env"));
    let servers = format!(
        "{}{}{}",
        hostile(
            "a",
            &["--env-dump", a.to_str().unwrap()],
            r#"env = { GH = { from_env = "GITHUB_TOKEN" }, MODE = "literal" }"#
        ),
        hostile("b", &["--env-dump", b.to_str().unwrap()], ""),
        hostile(
            "c",
            &[],
            r#"env = { X = { from_env = "SKARN_TEST_UNSET_VAR" } }"#
        ),
    );
    rt().block_on(async {
        let gw = gateway(&servers, "").await;
        let a = dump(&a);
        let b = dump(&b);
        assert_eq!(a.get("GH").map(String::as_str), Some("github-token-value"));
        assert_eq!(a.get("MODE").map(String::as_str), Some("literal"));
        assert_eq!(a.get("LC_TIME").map(String::as_str), Some("C"));
        assert!(a.contains_key("PATH"), "{a:?}");
        for env in [&a, &b] {
            for k in ["SKARN_HTTP_TOKEN", "UNRELATED_SECRET", "GITHUB_TOKEN"] {
                assert!(!env.contains_key(k), "{k} leaked: {env:?}");
            }
        }
        assert!(
            !b.values().any(|v| v.contains("value")),
            "a secret reached b: {b:?}"
        );
        // A missing from_env variable fails that server by name, without values.
        let h = gw.health();
        let c = h.iter().find(|s| s.name == "c").unwrap();
        assert_eq!(c.status, "failed");
        assert!(
            c.cause.as_deref().unwrap().contains("SKARN_TEST_UNSET_VAR"),
            "{c:?}"
        );
        gw.shutdown();
    });
}
