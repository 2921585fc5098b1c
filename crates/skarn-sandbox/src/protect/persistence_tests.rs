use super::*;
use crate::protect::persistence_families::LEFTHOOK;

#[test]
fn entries_are_unique_relative_and_explained() {
    let mut seen = std::collections::BTreeSet::new();
    for en in ENTRIES.iter().chain(GIT_DIR_ENTRIES) {
        assert!(seen.insert(en.path), "duplicate {}", en.path);
        assert!(!en.path.starts_with('/') && !en.path.contains(".."));
        assert!(!en.reason.is_empty());
        if let Reserve::IfAny(family) = en.reserve {
            assert!(!family.is_empty());
        }
    }
}

#[test]
fn any_depth_names_what_is_read_below_the_top() {
    let deep = |p: &str| ENTRIES.iter().any(|en| en.path == p && any_depth(en));
    for p in [
        ".claude",
        ".mcp.json",
        ".vscode",
        ".envrc",
        "mise.toml",
        "skarn.toml",
    ] {
        assert!(deep(p), "{p}");
    }
    for p in [
        "HEAD",
        ".gitmodules",
        ".husky",
        "lefthook.yml",
        ".bashrc",
        "flake.nix",
    ] {
        assert!(!deep(p), "{p}");
    }
    for p in TOP_ONLY {
        assert!(ENTRIES.iter().any(|en| en.path == *p), "{p} not listed");
    }
}

#[test]
fn families_name_listed_paths() {
    for fam in [LEFTHOOK, LINT_STAGED, MISE] {
        for p in fam {
            assert!(ENTRIES.iter().any(|en| en.path == *p), "{p} not listed");
        }
    }
}
