//! The program a workspace's `.yarnrc.yml` names (`yarnPath:`), or Yarn
//! 1's `.yarnrc` (`yarn-path`, atk24h F10): host yarn runs that file
//! instead of itself, so it is kept read-only like the file (a
//! persistence path) that names it.

use std::path::{Path, PathBuf};

/// Bytes read of `.yarnrc.yml`.
const MAX_BYTES: u64 = 256 << 10;

/// The files `ws/.yarnrc.yml` (`yarnPath`) and `ws/.yarnrc` (`yarn-path`)
/// name, resolved against `ws`.
pub fn named(ws: &Path) -> Vec<PathBuf> {
    let read = |name: &str| -> Option<String> {
        use std::io::Read;
        let f = std::fs::File::open(ws.join(name)).ok()?;
        if !f.metadata().ok()?.is_file() {
            return None;
        }
        let mut text = String::new();
        f.take(MAX_BYTES).read_to_string(&mut text).ok()?;
        Some(text)
    };
    let mut out = Vec::new();
    out.extend(
        read(".yarnrc.yml")
            .and_then(|t| parse(&t))
            .map(|p| ws.join(p)),
    );
    out.extend(
        read(".yarnrc")
            .and_then(|t| parse_v1(&t))
            .map(|p| ws.join(p)),
    );
    out
}

/// The `yarn-path` value of a Yarn 1 `.yarnrc` text (`yarn-path VALUE`,
/// the key or value quoted or not; the last one counts, as in yarn).
fn parse_v1(text: &str) -> Option<String> {
    let unquote = |s: &str| s.trim().trim_matches('"').to_owned();
    text.lines().rev().find_map(|l| {
        let l = l.trim();
        let rest = l
            .strip_prefix("\"yarn-path\"")
            .or_else(|| l.strip_prefix("yarn-path"))?;
        if !rest.starts_with([' ', '\t']) {
            return None;
        }
        let v = unquote(rest);
        (!v.is_empty()).then_some(v)
    })
}

/// The `yarnPath` value of a `.yarnrc.yml` text (top-level key, quotes
/// removed).
fn parse(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let v = l.strip_prefix("yarnPath:")?;
        let v = v
            .split(" #")
            .next()?
            .trim()
            .trim_matches(|c| c == '"' || c == '\'');
        (!v.is_empty()).then(|| v.to_owned())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn yarn_path_is_read() {
        assert_eq!(
            super::parse("a: 1\nyarnPath: \"tools/y.cjs\" # pinned\n").as_deref(),
            Some("tools/y.cjs")
        );
        assert_eq!(super::parse("  yarnPath: x\n"), None);
        assert_eq!(
            super::parse_v1("# c\nyarn-path \"./bin/yarn.js\"\n").as_deref(),
            Some("./bin/yarn.js")
        );
        assert_eq!(
            super::parse_v1("\"yarn-path\" tools/y.js\n").as_deref(),
            Some("tools/y.js")
        );
        assert_eq!(super::parse_v1("yarn-pathx y\n"), None);
    }
}
