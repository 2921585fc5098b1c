//! Which file a file tool's path names: made absolute, `~/` taken as the
//! home (as the agents' tools expand it), symbolic links followed (a
//! bounded number of hops: a loop is a refusal, never a crash), and a
//! folded form for comparing names the way case-insensitive volumes do.

use std::path::{Component, Path, PathBuf};

/// Links followed at most while resolving one path (Linux's own bound).
pub const MAX_LINKS: usize = 40;

/// `p` made absolute against `cwd`, `.` and `..` removed by name (what a
/// tool that cleans its path first, as Node's `path.resolve` does, writes).
fn absolute(p: &Path, cwd: &Path) -> PathBuf {
    skarn_sandbox::policy::config::normalize(&cwd.join(p))
}

/// `p` (absolute) as the kernel reads it (what a tool that hands the path
/// to `open` as given writes, Codex's `apply_patch` among them): a `..`
/// goes up from where the part before it leads, so `link/..` is the
/// parent of the link's target, not the directory holding the link
/// (atk24g F6). `Err`: a link loop on the way.
fn as_kernel_reads(p: &Path) -> Result<PathBuf, String> {
    Ok(resolved(p)?.unwrap_or_else(|| p.to_path_buf()))
}

/// Where `p` really leads: links followed one at a time (dangling ones
/// too) and each `..` taken from where the part before it leads, as the
/// kernel does ([`super::file_runs::trail`]). `Err` past [`MAX_LINKS`]
/// hops (a loop).
pub fn resolved(p: &Path) -> Result<Option<PathBuf>, String> {
    if let Ok(r) = std::fs::canonicalize(p) {
        return Ok(Some(r));
    }
    match super::file_runs::trail(p).end {
        Some(end) => Ok(Some(end)),
        None => Err(format!(
            "{} leads through more than {MAX_LINKS} symbolic links (a loop?), so the hook \
             cannot tell which file it is",
            p.display()
        )),
    }
}

/// The paths a tool's `path` may name: as written (against `cwd`), as
/// resolved, and for `~/x` the home's `x` (as written and resolved).
/// `Err`: why the hook cannot tell (a `~name` form, a link loop).
pub fn candidates(path: &str, cwd: &Path, home: Option<&Path>) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut push = |p: PathBuf| -> Result<(), String> {
        let r = resolved(&p)?;
        out.push(p);
        out.extend(r);
        Ok(())
    };
    if path.starts_with('~') {
        // Agents' file tools expand `~/` to the home; `~name/` forms name
        // another user's home, which the hook does not look up.
        let (Some(rest), Some(h)) = (path.strip_prefix("~/"), home) else {
            return Err(format!(
                "{path} starts with '~' in a form the hook does not resolve (only ~/ with \
                 HOME set); name the file by its absolute path"
            ));
        };
        push(skarn_sandbox::policy::config::normalize(&h.join(rest)))?;
        push(as_kernel_reads(&h.join(rest))?)?;
    }
    push(absolute(Path::new(path), cwd))?;
    push(as_kernel_reads(&cwd.join(path))?)?;
    out.dedup();
    Ok(out)
}

/// The absolute forms of `path` before any `.` or `..` is removed (for
/// following it one link at a time: [`super::file_runs::trail`] reads
/// `..` as the kernel does).
pub fn raw_forms(path: &str, cwd: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = vec![cwd.join(path)];
    if let (Some(rest), Some(h)) = (path.strip_prefix("~/"), home) {
        out.push(h.join(rest));
    }
    out
}

/// `p` as compared by name: each component case-folded, trailing dots and
/// blanks and any `:stream` suffix dropped (what macOS and Windows volumes
/// ignore or strip), so `.CLAUDE/Settings.json` and `skarn.toml.` are
/// judged as what they are there. On a case-sensitive volume this only
/// refuses a few more names, never fewer.
///
/// Folding is upper-casing, then lower-casing ([`fold_name`]): NTFS
/// compares upper-cased names (`ſ` upper-cases to `S`), and Unicode case
/// folding, which APFS and casefold ext4/tmpfs volumes apply, maps `ſ` to
/// `s`, the Kelvin sign to `k` and `ﬁ` to `fi`; lower-casing alone leaves
/// `ſkarn.toml` and `.vſcode` unlike the names they open there (attack
/// atk24i F7). Every name either folding makes ASCII, this one makes the
/// same ASCII.
pub fn fold(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(n) => {
                let s = fold_name(&n.to_string_lossy());
                let s = s.split(':').next().unwrap_or_default();
                let s = s.trim_end_matches(['.', ' ']);
                out.push(if s.is_empty() { "." } else { s });
            }
            other => out.push(other),
        }
    }
    out
}

/// One name folded as [`fold`] says: upper-cased (NTFS's comparison, and
/// the full mappings that take `ﬁ` to `FI`), then lower-cased (back to
/// the form of the protected names, `ſ` and `S` both `s`).
pub fn fold_name(n: &str) -> String {
    n.to_uppercase().to_lowercase()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn link_loops_are_an_error_and_dangling_links_are_followed() {
        let t = skarn_test_support::TempDir::new("hook_paths");
        let d = t.path().to_path_buf();
        std::os::unix::fs::symlink("a", d.join("a")).unwrap();
        std::os::unix::fs::symlink("c", d.join("b")).unwrap();
        std::os::unix::fs::symlink("b", d.join("c")).unwrap();
        assert!(resolved(&d.join("a")).is_err());
        assert!(resolved(&d.join("b/x")).is_err());
        std::os::unix::fs::symlink(d.join("real/deep"), d.join("dir")).unwrap();
        let r = resolved(&d.join("dir/new/f")).unwrap().unwrap();
        assert!(r.ends_with("real/deep/new/f"), "{r:?}");
        assert!(candidates("~alice/.bashrc", &d, Some(&d)).is_err());
        assert_eq!(
            fold(Path::new("/H/.Claude/Settings.JSON. ")),
            PathBuf::from("/h/.claude/settings.json")
        );
        // Case folding, not lower-casing (atk24i F7): long s, ligatures,
        // the Kelvin sign, final sigma.
        for (odd, plain) in [
            ("/w/\u{17f}karn.toml", "/w/skarn.toml"),
            ("/w/.v\u{17f}code/x", "/w/.vscode/x"),
            (
                "/w/.pre-commit-con\u{fb01}g.yaml",
                "/w/.pre-commit-config.yaml",
            ),
            ("/w/ru\u{fb06}-toolchain.toml", "/w/rust-toolchain.toml"),
            ("/w/\u{212a}", "/w/k"),
        ] {
            assert_eq!(fold(Path::new(odd)), fold(Path::new(plain)), "{odd}");
        }
        assert_eq!(fold(Path::new("/\u{3c2}")), fold(Path::new("/\u{3a3}")));
        assert_eq!(
            fold(Path::new("/w/skarn.toml::$DATA")),
            PathBuf::from("/w/skarn.toml")
        );
    }
}
