//! Windows path strings handled the same way on every OS, so the plan is
//! computed (and golden-tested) identically on Linux and on Windows.
//!
//! Paths are kept as written (backslashes, original case); comparisons
//! are component-wise and case-insensitive, as NTFS names are by default.

/// Backslashes only, no trailing separator (except after a drive, `C:\`),
/// no `.` components, no doubled separators.
pub fn normalize(p: &str) -> String {
    let p = strip_verbatim(&p.replace('/', "\\"));
    let (prefix, rest) = split_prefix(&p);
    let parts: Vec<&str> = rest
        .split('\\')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let mut out = prefix.to_string();
    if prefix.ends_with(':') || prefix.is_empty() && p.starts_with('\\') {
        out.push('\\');
    }
    if !prefix.is_empty() && !prefix.ends_with(':') && !parts.is_empty() {
        out.push('\\');
    }
    out.push_str(&parts.join("\\"));
    out
}

/// `\\?\C:\x` -> `C:\x`, `\\?\UNC\srv\share` -> `\\srv\share` (what
/// `std::fs::canonicalize` returns on Windows, written the usual way).
fn strip_verbatim(p: &str) -> String {
    if let Some(rest) = p.strip_prefix("\\\\?\\UNC\\") {
        return format!("\\\\{rest}");
    }
    match p.strip_prefix("\\\\?\\") {
        Some(rest) if rest.as_bytes().get(1) == Some(&b':') => rest.to_string(),
        _ => p.to_string(),
    }
}

/// The prefix (`C:`, `\\?\C:`, `\\server\share`) and the rest.
fn split_prefix(p: &str) -> (&str, &str) {
    let b = p.as_bytes();
    if let Some(rest) = p.strip_prefix("\\\\?\\") {
        let (inner, tail) = split_prefix(rest);
        if inner.ends_with(':') {
            return (&p[..4 + inner.len()], tail);
        }
        return (&p[..4], rest);
    }
    if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
        return (&p[..2], &p[2..]);
    }
    if let Some(rest) = p.strip_prefix("\\\\") {
        // \\server\share
        let mut it = rest.splitn(3, '\\');
        let server = it.next().unwrap_or("");
        let share = it.next().unwrap_or("");
        let len = 2 + server.len() + if share.is_empty() { 0 } else { 1 + share.len() };
        return (&p[..len], &p[len..]);
    }
    ("", p)
}

/// Whether `p` is absolute (`C:\...`, `\\server\share\...`, `\\?\...`).
pub fn is_absolute(p: &str) -> bool {
    let p = p.replace('/', "\\");
    let (prefix, rest) = split_prefix(&p);
    (prefix.ends_with(':') && rest.starts_with('\\'))
        || (prefix.starts_with("\\\\") && !prefix.ends_with(':'))
}

/// Whether `p` is a drive or share root (`C:\`, `\\server\share`).
pub fn is_root(p: &str) -> bool {
    let n = normalize(p);
    let (prefix, rest) = split_prefix(&n);
    !prefix.is_empty() && rest.trim_matches('\\').is_empty()
}

/// Lower-cased components (the comparison key).
fn key(p: &str) -> Vec<String> {
    normalize(p)
        .split('\\')
        .filter(|c| !c.is_empty())
        .map(|c| c.to_lowercase())
        .collect()
}

/// Whether `p` is `base` or lies under it (case-insensitive).
pub(crate) fn is_under(p: &str, base: &str) -> bool {
    let (p, b) = (key(p), key(base));
    p.len() >= b.len() && p[..b.len()] == b[..]
}

/// Whether the two paths name the same place (case-insensitive).
pub fn same(a: &str, b: &str) -> bool {
    key(a) == key(b)
}

/// `base` joined with a relative path written with `/` or `\`.
pub fn join(base: &str, rel: &str) -> String {
    normalize(&format!("{}\\{}", normalize(base), rel))
}

/// The directories strictly between `base` and `p` (outermost first), when
/// `p` lies under `base`; e.g. `C:\w`, `C:\w\.git\hooks` -> [`C:\w\.git`].
pub fn between(base: &str, p: &str) -> Vec<String> {
    if !is_under(p, base) {
        return Vec::new();
    }
    let b = key(base).len();
    let full = normalize(p);
    let comps: Vec<&str> = full.split('\\').filter(|c| !c.is_empty()).collect();
    // `comps` may hold an empty-free drive ("C:") as first component, like `key`.
    let mut out = Vec::new();
    for end in b + 1..comps.len() {
        out.push(normalize(&comps[..end].join("\\")));
    }
    // Re-add the leading `\\` of a UNC path.
    if full.starts_with("\\\\") {
        out = out.into_iter().map(|d| format!("\\\\{d}")).collect();
    }
    out
}

/// The stable identity of a path used to derive names: normalized and
/// lower-cased.
pub fn identity(p: &str) -> String {
    normalize(p).to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_separators_and_dots() {
        assert_eq!(normalize("C:/Users/u/proj/"), "C:\\Users\\u\\proj");
        assert_eq!(normalize("C:\\a\\.\\b\\\\c"), "C:\\a\\b\\c");
        assert_eq!(normalize("c:\\"), "c:\\");
        assert_eq!(normalize("\\\\srv\\share\\x"), "\\\\srv\\share\\x");
        assert_eq!(normalize("\\\\?\\C:\\a\\"), "C:\\a");
        assert_eq!(normalize("\\\\?\\UNC\\srv\\sh\\a"), "\\\\srv\\sh\\a");
    }

    #[test]
    fn absolute_and_roots() {
        assert!(is_absolute("C:\\a"));
        assert!(is_absolute("\\\\srv\\share\\a"));
        assert!(!is_absolute("a\\b"));
        assert!(!is_absolute("C:a"));
        assert!(is_root("C:\\"));
        assert!(is_root("d:/"));
        assert!(is_root("\\\\srv\\share"));
        assert!(!is_root("C:\\Users"));
    }

    #[test]
    fn under_is_case_insensitive_and_component_wise() {
        assert!(is_under("c:\\users\\U\\Proj\\x", "C:\\Users\\u\\proj"));
        assert!(is_under("C:\\w", "C:\\w\\"));
        assert!(!is_under("C:\\work2", "C:\\work"));
        assert!(same("C:/W/a", "c:\\w\\A\\"));
    }

    #[test]
    fn between_lists_intermediate_directories() {
        assert_eq!(between("C:\\w", "C:\\w\\.git\\hooks"), ["C:\\w\\.git"]);
        assert!(between("C:\\w", "C:\\w\\.envrc").is_empty());
        assert!(between("C:\\w", "D:\\x\\y").is_empty());
        assert_eq!(join("C:\\w\\", ".config/gh"), "C:\\w\\.config\\gh");
    }
}
