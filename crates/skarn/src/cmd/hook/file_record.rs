//! The places the agent's file tools write, recorded as places a run may
//! write (ADR 0307, attack atk27n F4, F4b).
//!
//! The tools write outside any sandbox, so what they may write counts
//! for everything that asks where a run may have planted something: the
//! record `~/.local/state/skarn/granted-dirs`. A secret's `command` source
//! then runs with those places hidden (ADR 0283) and is refused early by
//! its text (ADR 0250); a `skarn.toml` below them is not trusted.
//!
//! Each allowed write records, before the tool writes: the workspace (or
//! the write grant of the file boundary) holding the file, as `skarn run`
//! records them; a file in neither, or in one that is the home or holds
//! it (a place that cannot be hidden without hiding what every source
//! needs), is recorded by itself.

use std::path::{Path, PathBuf};

use skarn_sandbox::policy::granted::{GrantLog, Kind, log_path};

/// `p` is the home, or `/`, or an ancestor of the home.
fn holds_home(p: &Path, homes: &[PathBuf]) -> bool {
    p.parent().is_none() || homes.iter().any(|h| h.starts_with(p))
}

/// What one allowed write of `files` (absolute forms: as written and as
/// they resolve) adds to the record: the root of `roots` (`ws` first)
/// holding each, else the file itself.
pub fn places(
    files: &[PathBuf],
    ws: &Path,
    roots: &[PathBuf],
    home: &Path,
) -> Vec<(Kind, PathBuf)> {
    let homes: Vec<PathBuf> = [
        home.to_path_buf(),
        std::fs::canonicalize(home).unwrap_or_default(),
    ]
    .into_iter()
    .filter(|h| h.is_absolute())
    .collect();
    let ws_names = [
        ws.to_path_buf(),
        std::fs::canonicalize(ws).unwrap_or_else(|_| ws.to_path_buf()),
    ];
    let mut out: Vec<(Kind, PathBuf)> = Vec::new();
    let mut add = |e: (Kind, PathBuf)| {
        if !out.contains(&e) {
            out.push(e);
        }
    };
    for f in files {
        let root = ws_names
            .iter()
            .map(|w| (Kind::Workspace, w))
            .chain(roots.iter().map(|r| (Kind::Write, r)))
            .find(|(_, r)| r.is_absolute() && f.starts_with(r) && !holds_home(r, &homes));
        match root {
            Some((kind, r)) => {
                let kind = if ws_names.contains(r) {
                    Kind::Workspace
                } else {
                    kind
                };
                add((kind, r.clone()));
                if let Ok(c) = std::fs::canonicalize(r) {
                    add((kind, c));
                }
            }
            None => add((Kind::Write, f.clone())),
        }
    }
    out
}

/// Record the places of an allowed write of `files`; `Err` with why when
/// the record cannot be written (the guard then refuses the write).
pub fn record(files: &[PathBuf], ws: &Path, roots: &[PathBuf], home: &Path) -> Result<(), String> {
    let Some(log) = log_path(Some(home).filter(|h| h.is_dir())) else {
        return Err(format!(
            "HOME ({}) is not an existing directory, so the places the agent writes cannot \
             be recorded",
            home.display()
        ));
    };
    let entries = places(files, ws, roots, home);
    GrantLog::record(&log, &entries).map_err(|e| {
        format!(
            "the places the agent writes cannot be recorded in {} ({e}); unrecorded, a \
             secret's command source could run what this write plants",
            log.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_in_the_workspace_records_the_workspace_and_others_themselves() {
        let home = PathBuf::from("/nonexistent-h27q/home");
        let ws = home.join("proj");
        let grant = PathBuf::from("/nonexistent-h27q/shared");
        let files = [
            ws.join("a/b.py"),
            grant.join("c.txt"),
            home.join("tools/helper.py"),
        ];
        let got = places(&files, &ws, std::slice::from_ref(&grant), &home);
        assert_eq!(
            got,
            vec![
                (Kind::Workspace, ws.clone()),
                (Kind::Write, grant.clone()),
                (Kind::Write, home.join("tools/helper.py")),
            ]
        );
        // A workspace that is the home is no place to hide: the file is.
        let got = places(&[home.join("x.py")], &home, &[], &home);
        assert_eq!(got, vec![(Kind::Write, home.join("x.py"))]);
    }
}
