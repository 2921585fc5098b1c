//! One way to check output against a reviewed golden file in
//! `tests/golden`: `SKARN_BLESS=1` rewrites the file; a difference names
//! the first differing line only (the files are long).

/// Compare `got` with `tests/golden/<file>` (or bless it), failing with
/// `what` and the first differing line.
pub fn assert_golden(file: &str, got: &str, what: &str) {
    let path = format!("{}/tests/golden/{file}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("SKARN_BLESS").is_some() {
        std::fs::write(&path, got).expect("bless");
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    if got != want {
        let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
        let at = g
            .iter()
            .zip(&w)
            .position(|(a, b)| a != b)
            .unwrap_or(g.len().min(w.len()));
        panic!(
            "{what} changed at line {} (got {} lines, golden {}): got {:?}, golden {:?}; \
             review and re-bless with SKARN_BLESS=1",
            at + 1,
            g.len(),
            w.len(),
            g.get(at),
            w.get(at)
        );
    }
}
