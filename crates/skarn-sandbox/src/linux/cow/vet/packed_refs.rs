//! A `packed-refs` the run wrote: its new replace refs.

use std::path::Path;

/// The replace-ref lines of a `packed-refs` file.
fn replace_lines(p: &Path) -> Vec<String> {
    std::fs::read(p)
        .map(|b| {
            String::from_utf8_lossy(&b)
                .lines()
                .filter(|l| l.contains("refs/replace/"))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the `packed-refs` a run wrote names a replace ref the host's
/// does not.
pub(super) fn adds_replace_refs(upper: &Path, host_path: &Path) -> bool {
    let host = replace_lines(host_path);
    replace_lines(upper).iter().any(|l| !host.contains(l))
}

/// Drop from the `packed-refs` a run wrote (`upper`, rewritten in place)
/// the replace refs the host's file does not have, with their peeled
/// lines; the other refs (`git pack-refs --all` moves every branch there)
/// are applied. One line for the user when something was dropped.
pub(crate) fn sanitize_packed_refs(upper: &Path, host_path: &Path) -> Option<String> {
    if !adds_replace_refs(upper, host_path) {
        return None;
    }
    let host = replace_lines(host_path);
    let text = String::from_utf8_lossy(&std::fs::read(upper).ok()?).into_owned();
    let mut out = String::with_capacity(text.len());
    let mut skipping = false;
    for l in text.lines() {
        if l.starts_with('^') {
            if !skipping {
                out.push_str(l);
                out.push('\n');
            }
            continue;
        }
        skipping = l.contains("refs/replace/") && !host.iter().any(|h| h == l);
        if !skipping {
            out.push_str(l);
            out.push('\n');
        }
    }
    let tmp = upper.with_extension("skarn-vetted");
    std::fs::write(&tmp, out)
        .and_then(|()| std::fs::rename(&tmp, upper))
        .ok()?;
    Some("replace refs were dropped: host git would show and check out other objects".into())
}
