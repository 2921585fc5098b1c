//! The program a workspace's `.yarnrc.yml` names (`yarnPath:`): host
//! yarn runs that file instead of itself, so it is kept read-only like the
//! `.yarnrc.yml` (a persistence path) that names it.

use std::path::{Path, PathBuf};

/// Bytes read of `.yarnrc.yml`.
const MAX_BYTES: u64 = 256 << 10;

/// The file `ws/.yarnrc.yml` names as `yarnPath`, resolved against `ws`.
pub fn named(ws: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let f = std::fs::File::open(ws.join(".yarnrc.yml")).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    f.take(MAX_BYTES).read_to_string(&mut text).ok()?;
    parse(&text).map(|p| ws.join(p))
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
    }
}
