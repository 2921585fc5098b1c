// Shared by build.rs and the state_file tests (`include!`d by both): the
// digest of every file under a crate's `src/`, names and bytes, in sorted
// order. Records kept in skarn's state carry it in their names, so any
// change to the code that worked a record out (whichever module it is in)
// makes every record of the older build a miss.

/// Every file under `dir`, recursively, sorted by path.
fn source_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => source_files(&p, out),
            Ok(t) if t.is_file() => out.push(p),
            _ => {}
        }
    }
}

/// Hex SHA-256 of each file's path below `src` and its bytes.
fn source_digest(src: &std::path::Path) -> (String, usize) {
    use sha2::Digest;
    let mut files = Vec::new();
    source_files(src, &mut files);
    files.sort();
    let mut h = sha2::Sha256::new();
    for f in &files {
        let rel = f.strip_prefix(src).unwrap_or(f).to_string_lossy().into_owned();
        let bytes = std::fs::read(f).unwrap_or_default();
        h.update((rel.len() as u64).to_le_bytes());
        h.update(rel.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    let hex = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    (hex, files.len())
}
