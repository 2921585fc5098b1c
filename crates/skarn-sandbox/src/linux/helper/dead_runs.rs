//! The checks after the run of runs killed before theirs (ADR 0145): a
//! dead run's record (its lock free, [`crate::protect::run_record`]) has
//! its pending check run here by the reaper, the next `skarn run` or the
//! file guard, and is then removed.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::dead_index;

use crate::protect::run_record::{
    Info, MAX_INFO, MAX_RECORDS, MAX_VET, Retention, lock, open, read_bounded, records,
    write_locked,
};

/// Run the pending check of every dead run of `dir` whose record `want`
/// accepts, and remove those records; one line per finding, each naming
/// the run. `check` runs a pending check's record (the helper's checks
/// after the run).
pub fn catch_up(dir: &Path, want: &dyn Fn(&Info) -> bool) -> Vec<String> {
    catch_up_noting_dead(dir, want, Retention::default()).0
}

/// [`catch_up`], also returning the records it found dead and left in
/// place (another workspace's): a dead run's record is never locked by
/// its run again, so [`live_since`] need not open them a second time.
pub(crate) fn catch_up_noting_dead(
    dir: &Path,
    want: &dyn Fn(&Info) -> bool,
    keep: Retention,
) -> (Vec<String>, std::collections::HashSet<PathBuf>) {
    let mut out = Vec::new();
    let mut dead = std::collections::HashSet::new();
    // Records found dead and left in place before (ADR 0248): decided
    // from what they said, without opening them again.
    let known = dead_index::read(dir);
    let mut index = dead_index::Index::default();
    for p in records(dir) {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        if let Some((name, e)) = name.and_then(|n| known.runs.get(&n).map(|e| (n, e)))
            && !want(&e.info)
            && !e.older_than(keep.age)
            && std::fs::symlink_metadata(&e.info.workspace).is_ok()
        {
            index.runs.insert(name, e.clone());
            dead.insert(p);
            continue;
        }
        let (found, left) = check(&p, want, false, keep.age);
        out.extend(found);
        if let Some(e) = left {
            if let Some(n) = p.file_name() {
                index.runs.insert(n.to_string_lossy().into_owned(), e);
            }
            dead.insert(p);
        }
    }
    // Past the bound, the oldest left in place are checked here (their
    // findings kept for their own workspace): what later runs look at
    // does not grow with the runs killed before them.
    if index.runs.len() > keep.count {
        let mut by_age: Vec<(u64, String)> = index
            .runs
            .iter()
            .map(|(n, e)| (e.modified, n.clone()))
            .collect();
        by_age.sort();
        let excess = by_age.len() - keep.count;
        for (_, name) in by_age.into_iter().take(excess) {
            index.runs.remove(&name);
            let p = dir.join(&name);
            dead.remove(&p);
            let _ = check(&p, &|_| true, true, keep.age);
        }
    }
    if index != known {
        dead_index::write(dir, &index);
    }
    out.extend(found_files(dir, want, keep));
    (out, dead)
}

/// Run one record's pending check if its run is dead and `want` accepts
/// it; with `keep`, the findings are also written for later display.
fn check_one(run: &Path, want: &dyn Fn(&Info) -> bool, keep: bool) -> Vec<String> {
    check(run, want, keep, Retention::default().age).0
}

/// [`check_one`], and what the record said when it was found dead and
/// left in place.
fn check(
    run: &Path,
    want: &dyn Fn(&Info) -> bool,
    keep: bool,
    stale_after: std::time::Duration,
) -> (Vec<String>, Option<dead_index::Entry>) {
    let Some(mut f) = open(run) else {
        return (Vec::new(), None);
    };
    if !lock(&f, libc::LOCK_EX) {
        return (Vec::new(), None); // alive, or another process catches it up
    }
    // Still the record at that name (not one removed meanwhile by another
    // catch-up that held the lock before us).
    let same = match (f.metadata(), std::fs::symlink_metadata(run)) {
        (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
        _ => false,
    };
    if !same {
        return (Vec::new(), None);
    }
    let info = read_bounded(&mut f, MAX_INFO).and_then(|b| serde_json::from_slice::<Info>(&b).ok());
    // A run whose workspace is gone, or dead for a day, is taken by
    // anyone: records of places nobody runs in again (a killed gateway's
    // server, a deleted checkout) do not pile up.
    let modified = f.metadata().and_then(|m| m.modified()).ok();
    let stale = modified
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > stale_after);
    if let Some(i) = &info
        && !want(i)
        && !stale
        && std::fs::symlink_metadata(&i.workspace).is_ok()
    {
        // Rounded down: the index never makes a record younger.
        let modified = modified
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs());
        let entry = dead_index::Entry {
            info: i.clone(),
            modified,
        };
        return (Vec::new(), Some(entry));
    }
    let vet = run.with_extension("vet");
    let mut out = Vec::new();
    let who = info.as_ref().map_or_else(
        || "an earlier run".to_string(),
        |i| {
            format!(
                "an earlier run in {} (helper pid {})",
                i.workspace.display(),
                i.pid
            )
        },
    );
    // (No `.vet`: killed before the command started.)
    if let Some(bytes) = open(&vet).and_then(|mut v| read_bounded(&mut v, MAX_VET)) {
        match crate::linux::helper::catch_up(&bytes) {
            Ok(found) => out.extend(found.into_iter().map(|w| {
                format!("{who} ended before its check after the run (killed); checked now: {w}")
            })),
            Err(e) => out.push(format!(
                "{who} ended before its check after the run, and its record is unreadable \
                 ({e}): review what it may have left in its workspace"
            )),
        }
    }
    if keep
        && !out.is_empty()
        && let Some(i) = info
        && let Ok(b) = serde_json::to_vec(&Found {
            run: i,
            lines: out.clone(),
        })
    {
        // Kept for whoever shows findings next (the reaper has no
        // terminal): the next run or file-guard call in that workspace.
        let dir = run.parent().unwrap_or(Path::new("/"));
        let _ = write_locked(dir, &run.with_extension("found"), &b);
    }
    let _ = std::fs::remove_file(&vet);
    let _ = std::fs::remove_file(run);
    (out, None)
}

/// Findings a reaper could not show.
#[derive(Serialize, Deserialize)]
struct Found {
    run: Info,
    lines: Vec<String>,
}

/// One record's pending check, from the reaper: the findings stay in `<id>.found`.
pub(crate) fn catch_up_to_file(run: &Path) {
    let _ = check_one(run, &|_| true, true);
}

/// Findings of checks caught up by a reaper (`<id>.found`) of the runs
/// `want` accepts, removed once read; those older than `keep.age` are
/// removed unread, and past `keep.count` the oldest (their checks were
/// done; only the lines saying so go).
fn found_files(dir: &Path, want: &dyn Fn(&Info) -> bool, keep: Retention) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = rd
        .flatten()
        .take(MAX_RECORDS)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "found"))
        .filter_map(|p| {
            let t = std::fs::symlink_metadata(&p)
                .and_then(|m| m.modified())
                .ok()?;
            Some((t, p))
        })
        .collect();
    files.sort();
    let excess = files.len().saturating_sub(keep.count);
    for (i, (t, p)) in files.into_iter().enumerate() {
        if i < excess || t.elapsed().is_ok_and(|age| age > keep.age) {
            let _ = std::fs::remove_file(&p);
            continue;
        }
        let found = open(&p)
            .and_then(|mut f| read_bounded(&mut f, MAX_VET))
            .and_then(|b| serde_json::from_slice::<Found>(&b).ok());
        match found {
            Some(f) if !want(&f.run) => continue,
            Some(f) => out.extend(f.lines),
            None => {}
        }
        let _ = std::fs::remove_file(&p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protect::run_record::{Held, dir, live, new_paths};

    #[test]
    fn a_held_record_is_live_and_a_released_one_is_caught_up() {
        let t = skarn_test_support::TempDir::new("run_record");
        let d = dir(t.path());
        std::fs::create_dir_all(t.path().join("ws")).unwrap();
        let info = Info {
            workspace: t.path().join("ws"),
            roots: vec![t.path().join("ws")],
            pid: 1,
        };
        let (run, vet) = new_paths(&d);
        let held = Held::start(&run, &vet, &info).unwrap();
        assert_eq!(live(&d), vec![info.clone()]);
        assert!(info.covers(&t.path().join("ws/a/b")));
        assert!(!info.covers(&t.path().join("other")));
        assert!(catch_up(&d, &|_| true).is_empty());
        assert!(run.exists(), "a live record stays");
        // The helper dies (its descriptor closes) without finishing.
        drop(held);
        assert!(live(&d).is_empty());
        assert!(catch_up(&d, &|_| false).is_empty());
        assert!(run.exists(), "not wanted: kept");
        let _ = catch_up(&d, &|_| true);
        assert!(!run.exists());
        // A dead run whose workspace is gone is taken by anyone.
        let gone = Info {
            workspace: t.path().join("gone"),
            ..info.clone()
        };
        let (run, vet) = new_paths(&d);
        drop(Held::start(&run, &vet, &gone).unwrap());
        let _ = catch_up(&d, &|_| false);
        assert!(!run.exists());
        // A dead record over another workspace is remembered (ADR 0248):
        // a later run decides from the index without reading it again (its
        // text replaced here by garbage, which a full check would take as
        // a record to catch up and remove)...
        let other = Info {
            workspace: t.path().join("ws"),
            roots: vec![t.path().join("ws")],
            pid: 2,
        };
        let (run, vet) = new_paths(&d);
        drop(Held::start(&run, &vet, &other).unwrap());
        let (_, dead) = catch_up_noting_dead(&d, &|_| false, Retention::default());
        assert!(dead.contains(&run), "not noted dead");
        assert!(d.join(dead_index::NAME).exists(), "no index written");
        std::fs::write(&run, "not json").unwrap();
        let (_, dead) = catch_up_noting_dead(&d, &|_| false, Retention::default());
        assert!(run.exists(), "the index was not used");
        assert!(dead.contains(&run));
        // ...but a run over its places still checks it in full.
        let _ = catch_up(&d, &|_| true);
        assert!(!run.exists(), "an overlapping run did not catch it up");
        // Its workspace gone: checked in full, taken by anyone.
        let (run, vet) = new_paths(&d);
        drop(Held::start(&run, &vet, &other).unwrap());
        let _ = catch_up(&d, &|_| false);
        assert!(run.exists());
        std::fs::remove_dir(t.path().join("ws")).unwrap();
        let _ = catch_up(&d, &|_| false);
        assert!(!run.exists(), "a record of a gone workspace stayed");
        std::fs::create_dir(t.path().join("ws")).unwrap();
        // A finished run leaves nothing.
        let (run, vet) = new_paths(&d);
        Held::start(&run, &vet, &info).unwrap().finish();
        assert!(records(&d).is_empty());
    }

    #[test]
    fn dead_records_over_other_workspaces_are_bounded_by_the_retention() {
        let t = skarn_test_support::TempDir::new("run_record_keep");
        let d = dir(t.path());
        std::fs::create_dir_all(t.path().join("ws")).unwrap();
        let info = Info {
            workspace: t.path().join("ws"),
            roots: vec![t.path().join("ws")],
            pid: 1,
        };
        for _ in 0..7 {
            let (run, vet) = new_paths(&d);
            drop(Held::start(&run, &vet, &info).unwrap());
        }
        // Another workspace's run keeps at most `count` of them...
        let keep = Retention {
            age: std::time::Duration::from_secs(3600),
            count: 3,
        };
        let (_, dead) = catch_up_noting_dead(&d, &|_| false, keep);
        assert_eq!(records(&d).len(), 3, "the oldest past the bound stayed");
        assert_eq!(dead.len(), 3);
        // ...and none older than `age`.
        let keep = Retention {
            age: std::time::Duration::ZERO,
            count: 3,
        };
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let _ = catch_up_noting_dead(&d, &|_| false, keep);
        assert!(records(&d).is_empty(), "records past the age stayed");
    }
}
