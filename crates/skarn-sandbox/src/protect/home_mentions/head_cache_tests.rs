use std::path::Path;
use std::time::Duration;

use super::super::scan_settled;

fn put(p: &Path, bytes: &[u8], exec: bool) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(p, bytes).unwrap();
    let mode = if exec { 0o755 } else { 0o644 };
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The same mentions with the record of earlier scans as without it: a
/// program unchanged is not opened again, one rewritten into a script
/// naming the workspace is read again (its change time moved), and a
/// record inside a writable grant is not used (ADR 0290).
#[test]
fn the_record_of_program_heads_changes_no_answer() {
    let tmp = skarn_test_support::TempDir::new("head-cache");
    let d = tmp.path();
    let (home, ws, bin) = (d.join("home"), d.join("ws"), d.join("bin"));
    for p in [&home, &ws, &bin] {
        std::fs::create_dir_all(p).unwrap();
    }
    put(&ws.join("tool.py"), b"print(1)\n", false);
    for i in 0..40 {
        put(
            &bin.join(format!("prog{i}")),
            b"\x7fELF\x02\x01\x01\0\0\0\0",
            true,
        );
    }
    put(&bin.join("data"), b"plain text, not executable\n", false);
    put(&bin.join("packed"), b"#!/bin/sh\nexit 0\n\0\0payload", true);
    put(
        &bin.join("other"),
        b"#!/bin/sh\nexec python3 /opt/tool.py\n",
        true,
    );
    let grants = vec![ws.clone()];
    let path = vec![bin.clone()];
    let scan = || scan_settled(&home, &grants, &path, Duration::ZERO);
    let cold = |h: &Path| {
        let _ = std::fs::remove_dir_all(h.join(super::DIR));
        scan_settled(h, &grants, &path, Duration::ZERO)
    };

    let (first, hits) = scan();
    assert_eq!(hits, 0);
    assert!(first.found.is_empty(), "{first:?}");
    let (second, hits) = scan();
    assert_eq!(second, first);
    // The 40 programs, the text file, the script with a payload (not the
    // script, read every time).
    assert_eq!(hits, 42, "{second:?}");

    // A program rewritten in place into a wrapper naming the workspace.
    let line = format!("#!/bin/sh\nexec python3 {}/tool.py \"$@\"\n", ws.display());
    std::fs::write(bin.join("prog7"), line.as_bytes()).unwrap();
    let (warm, hits) = scan();
    assert_eq!(warm.found.len(), 1, "{warm:?}");
    assert_eq!(warm.found[0].file, bin.join("prog7"));
    assert!(hits <= 41, "{hits}");
    assert_eq!(cold(&home).0, warm);

    // The record inside a writable grant: not used.
    let grants = vec![ws.clone(), home.join(".local/state")];
    let (a, _) = scan_settled(&home, &grants, &path, Duration::ZERO);
    let (b, hits) = scan_settled(&home, &grants, &path, Duration::ZERO);
    assert_eq!(a, b);
    assert_eq!(hits, 0);
}
