//! What the command wrote in the private home outside the workspace's
//! store (ADR 0175): init notes the home's entries once the root is
//! built and compares after the command, so the discarded writes (`pip
//! install --user`, a tool's own cache the store does not keep) are said
//! in one line when the run ends, not found missing a command later.
//! Only the home's own tmpfs is walked: grants and the store's caches are
//! other mounts.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::linux::plan::FsOp;

/// Most entries looked at (a bound on the walk).
const MAX_ENTRIES: usize = 20_000;
/// Most entries named in the line.
const MAX_NAMED: usize = 8;

/// The private home's entries: path to (modification time, is dir).
pub(super) struct Snapshot {
    home: PathBuf,
    dev: u64,
    seen: HashMap<PathBuf, (i64, i64, bool)>,
}

/// The private home of the plan's steps, when it has one.
pub(super) fn home_of(fs: &[FsOp]) -> Option<&Path> {
    fs.iter().find_map(|o| match o {
        FsOp::Home { path } => Some(path.as_path()),
        _ => None,
    })
}

fn walk(home: &Path, dev: u64, mut each: impl FnMut(&Path, &std::fs::Metadata) -> bool) {
    let mut stack = vec![home.to_path_buf()];
    let mut n = 0;
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            n += 1;
            if n > MAX_ENTRIES {
                return;
            }
            let p = e.path();
            let Ok(md) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if md.dev() != dev {
                continue; // a grant or a store's cache
            }
            if each(&p, &md) && md.is_dir() {
                stack.push(p);
            }
        }
    }
}

/// Note the home's entries (right after the root is built).
pub(super) fn snapshot(home: &Path) -> Option<Snapshot> {
    let dev = std::fs::symlink_metadata(home).ok()?.dev();
    let mut seen = HashMap::new();
    walk(home, dev, |p, md| {
        seen.insert(p.to_path_buf(), (md.mtime(), md.mtime_nsec(), md.is_dir()));
        true
    });
    Some(Snapshot {
        home: home.to_path_buf(),
        dev,
        seen,
    })
}

impl Snapshot {
    /// The entries made or changed since: new ones named at their top
    /// (`~/.local/lib/python3.11`), changed files by name; None when there
    /// are none.
    pub(super) fn written(&self) -> Option<String> {
        let mut out: Vec<String> = Vec::new();
        let mut total = 0usize;
        walk(&self.home, self.dev, |p, md| match self.seen.get(p) {
            None => {
                total += 1;
                if out.len() < MAX_NAMED {
                    out.push(self.name(p));
                }
                false // named at its top
            }
            Some((s, ns, true)) if md.is_dir() => {
                let _ = (s, ns);
                true
            }
            Some((s, ns, _)) => {
                if (md.mtime(), md.mtime_nsec()) != (*s, *ns) {
                    total += 1;
                    if out.len() < MAX_NAMED {
                        out.push(self.name(p));
                    }
                }
                false
            }
        });
        if total == 0 {
            return None;
        }
        out.sort();
        let more = total.saturating_sub(out.len());
        Some(if more > 0 {
            format!("{} and {more} more", out.join(" "))
        } else {
            out.join(" ")
        })
    }

    fn name(&self, p: &Path) -> String {
        match p.strip_prefix(&self.home) {
            Ok(rel) => format!("~/{}", rel.display()),
            Err(_) => p.display().to_string(),
        }
    }
}
