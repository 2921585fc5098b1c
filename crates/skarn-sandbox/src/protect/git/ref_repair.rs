//! Refs a run moved to a commit host git can no longer read (attack
//! atk22h F38). When a commit the run made is set aside
//! ([`super::new_commits`], [`super::new_packs`]), the branch the run
//! moved to it (or to a commit above it) still names it: every host `git
//! log`, `git status`, `git commit` then fails with "bad object HEAD"
//! until the user repairs the ref by hand.
//!
//! After the vetting, each ref the run wrote (a loose ref file, the
//! `packed-refs` file, a detached `HEAD`, changed at or after the run's
//! start) is followed through the objects the run made; one that reaches
//! an object git cannot read is put back to the newest value of its
//! reflog that git can read whole (what the host had before the run,
//! for a branch the run moved), or removed when there is none (a branch
//! the run made). A tip of an older object (loose from before the run, or
//! packed) is taken as readable: its history was the host's.
//! Repositories with the reftable ref store are not rewritten here.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::protect::grant_walk::changed_since;

/// Loose ref files looked at per repository, at most.
const MAX_REFS: usize = 10_000;
/// Objects followed from one tip, at most (past it the tip is kept).
const MAX_WALK: usize = 20_000;

/// One ref the run wrote.
enum Place {
    /// A loose ref file (or `HEAD`, a worktree's `HEAD`).
    Loose(PathBuf),
    /// A line of `packed-refs`.
    Packed,
}

struct Ref {
    name: String,
    /// Its reflog.
    log: PathBuf,
    value: String,
    place: Place,
}

/// Repair the refs of the git directory `git` that the run (started at
/// `since`) left pointing at objects git cannot read; one line each.
pub fn repair(git: &Path, since: SystemTime) -> Vec<String> {
    if std::fs::symlink_metadata(git.join("reftable")).is_ok() {
        return Vec::new();
    }
    let mut refs = Vec::new();
    loose_refs(git, since, &mut refs);
    let packed = git.join("packed-refs");
    let packed_changed = changed_since(&packed, since);
    if packed_changed {
        for (name, value) in packed_lines(&packed) {
            refs.push(Ref {
                log: git.join("logs").join(&name),
                name,
                value,
                place: Place::Packed,
            });
        }
    }
    if refs.is_empty() {
        return Vec::new();
    }
    let mut objs = Reader::new(git, since);
    let mut out = Vec::new();
    let mut packed_fix: Vec<(String, Option<String>)> = Vec::new();
    for r in refs {
        if !objs.broken(&r.value) {
            continue;
        }
        let back = reflog_values(&r.log)
            .into_iter()
            .find(|v| *v != r.value && !objs.broken(v));
        let done = match (&r.place, &back) {
            (Place::Loose(p), Some(v)) => write_ref(p, v).is_ok(),
            (Place::Loose(p), None) => !r.name.ends_with("HEAD") && std::fs::remove_file(p).is_ok(),
            (Place::Packed, _) => {
                packed_fix.push((r.name.clone(), back.clone()));
                true
            }
        };
        let what = match (&back, done) {
            (Some(v), true) => format!("it was put back to {v} (its reflog's last readable value)"),
            (None, true) => "it was removed (no readable earlier value)".to_string(),
            (_, false) => "it could not be repaired: repair it with git update-ref".to_string(),
        };
        out.push(format!(
            "{} of {} pointed at {} whose history holds an object set aside or missing (host \
             git could not read it); {what}",
            r.name,
            git.display(),
            r.value
        ));
    }
    if !packed_fix.is_empty() && rewrite_packed(&packed, &packed_fix).is_err() {
        out.push(format!(
            "{} could not be rewritten: repair the refs above with git update-ref",
            packed.display()
        ));
    }
    out
}

/// Loose refs under `refs/`, `HEAD` and worktrees' `HEAD` changed since
/// `since` that hold an object id.
fn loose_refs(git: &Path, since: SystemTime, out: &mut Vec<Ref>) {
    let mut files = vec![(git.join("HEAD"), git.join("logs/HEAD"))];
    if let Ok(rd) = std::fs::read_dir(git.join("worktrees")) {
        for e in rd.flatten().take(256) {
            files.push((e.path().join("HEAD"), e.path().join("logs/HEAD")));
        }
    }
    let mut stack = vec![(git.join("refs"), "refs".to_string())];
    let mut seen = 0usize;
    while let Some((d, name)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_REFS {
                return;
            }
            let n = format!("{name}/{}", e.file_name().to_string_lossy());
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push((e.path(), n)),
                Ok(t) if t.is_file() => files.push((e.path(), git.join("logs").join(n))),
                _ => {}
            }
        }
    }
    for (p, log) in files {
        if !changed_since(&p, since) {
            continue;
        }
        let Some(value) = read_oid(&p) else {
            continue;
        };
        let name = p
            .strip_prefix(git)
            .unwrap_or(&p)
            .to_string_lossy()
            .into_owned();
        out.push(Ref {
            name,
            log,
            value,
            place: Place::Loose(p),
        });
    }
}

fn is_oid(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The object id a ref file holds (`None`: a symbolic ref, or no id).
fn read_oid(p: &Path) -> Option<String> {
    let t = std::fs::read(p).ok()?;
    let t = String::from_utf8_lossy(t[..t.len().min(200)].trim_ascii()).into_owned();
    is_oid(&t).then_some(t)
}

/// The `(name, id)` entries of a `packed-refs` file.
fn packed_lines(p: &Path) -> Vec<(String, String)> {
    let t = std::fs::read(p).unwrap_or_default();
    String::from_utf8_lossy(&t)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('^'))
        .filter_map(|l| {
            let (v, n) = l.split_once(' ')?;
            is_oid(v).then(|| (n.to_string(), v.to_string()))
        })
        .collect()
}

/// The values a ref's reflog names, newest first (each line's old value,
/// then its new one).
fn reflog_values(log: &Path) -> Vec<String> {
    let t = std::fs::read(log).unwrap_or_default();
    let mut v = Vec::new();
    for l in String::from_utf8_lossy(&t).lines().rev() {
        let mut w = l.split(' ');
        let (Some(old), Some(new)) = (w.next(), w.next()) else {
            continue;
        };
        for x in [old, new] {
            if is_oid(x) && x.bytes().any(|b| b != b'0') {
                v.push(x.to_string());
            }
        }
    }
    v
}

/// Write a loose ref: a new file renamed over the old one.
fn write_ref(p: &Path, value: &str) -> std::io::Result<()> {
    let tmp = p.with_extension("skarn-repair");
    std::fs::write(&tmp, format!("{value}\n"))?;
    std::fs::rename(&tmp, p)
}

/// Rewrite `packed-refs` with each of `fix` put back (`Some`) or dropped
/// (`None`), with its peeled line.
fn rewrite_packed(p: &Path, fix: &[(String, Option<String>)]) -> std::io::Result<()> {
    let t = std::fs::read(p)?;
    let mut out = String::new();
    let mut skipping = false;
    for l in String::from_utf8_lossy(&t).lines() {
        if l.starts_with('^') {
            if !skipping {
                out.push_str(l);
                out.push('\n');
            }
            continue;
        }
        skipping = false;
        let name = l.split_once(' ').map(|(_, n)| n);
        if let Some((n, v)) = fix.iter().find(|(n, _)| Some(n.as_str()) == name) {
            skipping = true;
            if let Some(v) = v {
                out.push_str(&format!("{v} {n}\n"));
            }
            continue;
        }
        out.push_str(l);
        out.push('\n');
    }
    let tmp = p.with_extension("skarn-repair");
    std::fs::write(&tmp, out)?;
    std::fs::rename(&tmp, p)
}

/// What a ref's objects are read from: loose objects (those older than
/// the run end a walk), and the packs (an object found there ends it).
struct Reader {
    objects: PathBuf,
    since: SystemTime,
    oid_len: usize,
    packs: Option<Vec<super::pack_read::Pack>>,
    ok: HashSet<String>,
}

impl Reader {
    fn new(git: &Path, since: SystemTime) -> Reader {
        Reader {
            objects: git.join("objects"),
            since,
            oid_len: 20,
            packs: None,
            ok: HashSet::new(),
        }
    }

    fn in_packs(&mut self, hex: &str) -> bool {
        let Some(raw) = super::pack_read::unhex(hex) else {
            return false;
        };
        let (dir, len) = (self.objects.join("pack"), self.oid_len);
        let packs = self.packs.get_or_insert_with(|| {
            std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "idx"))
                .filter_map(|p| super::pack_read::Pack::open(&p, len).ok())
                .collect()
        });
        packs.iter().any(|p| p.find(&raw).is_some())
    }

    /// Whether following `tip` through the run's objects reaches one git
    /// cannot read.
    fn broken(&mut self, tip: &str) -> bool {
        self.oid_len = tip.len() / 2;
        let mut stack = vec![tip.to_string()];
        let mut seen = HashSet::new();
        while let Some(h) = stack.pop() {
            if self.ok.contains(&h) || !seen.insert(h.clone()) {
                continue;
            }
            if seen.len() > MAX_WALK {
                return false;
            }
            let loose = self.objects.join(&h[..2]).join(&h[2..]);
            if std::fs::symlink_metadata(&loose).is_ok() {
                if !changed_since(&loose, self.since) {
                    continue;
                }
                let Some((kind, body)) = super::pack_read::read_loose(&self.objects, &h) else {
                    return true;
                };
                let key: &[u8] = match kind.as_str() {
                    "commit" => b"parent ",
                    "tag" => b"object ",
                    _ => continue,
                };
                for l in body.split(|b| *b == b'\n') {
                    if l.is_empty() {
                        break;
                    }
                    if let Some(rest) = l.strip_prefix(key) {
                        let x = String::from_utf8_lossy(rest).into_owned();
                        if is_oid(&x) {
                            stack.push(x.to_ascii_lowercase());
                        }
                    }
                }
                continue;
            }
            if !self.in_packs(&h) {
                return true;
            }
        }
        self.ok.extend(seen);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflog_values_are_newest_first_without_zero_ids() {
        let d = tempfile::tempdir().unwrap();
        let z = "0".repeat(40);
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        std::fs::create_dir_all(d.path().join("logs/refs/heads")).unwrap();
        std::fs::write(
            d.path().join("logs/refs/heads/main"),
            format!(
                "{z} {a} u <u@x> 1 +0000\tcommit (initial): i\n{a} {b} u <u@x> 2 +0000\tcommit: x\n"
            ),
        )
        .unwrap();
        assert_eq!(
            reflog_values(&d.path().join("logs/refs/heads/main")),
            vec![a.clone(), b.clone(), a.clone()]
        );
    }

    #[test]
    fn packed_refs_are_put_back_or_dropped_with_their_peeled_line() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("packed-refs");
        let (a, b, c) = ("a".repeat(40), "b".repeat(40), "c".repeat(40));
        std::fs::write(
            &p,
            format!("# pack-refs with: peeled\n{a} refs/heads/main\n{b} refs/tags/t\n^{c}\n{c} refs/heads/x\n"),
        )
        .unwrap();
        rewrite_packed(
            &p,
            &[
                ("refs/heads/main".into(), Some(c.clone())),
                ("refs/tags/t".into(), None),
            ],
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            format!("# pack-refs with: peeled\n{c} refs/heads/main\n{c} refs/heads/x\n")
        );
    }
}
