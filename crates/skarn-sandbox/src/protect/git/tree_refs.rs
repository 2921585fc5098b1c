//! Refs a run wrote that name a tree directly (attack atk22i F10, ADR
//! 0278). Commits and tags of a tree are judged as objects
//! ([`super::commit_walk`]), but a lightweight ref (`refs/tags/v1`, a
//! note, any ref outside `refs/heads/`, a pseudo-ref such as
//! `ORIG_HEAD`, a reflog line) may name a tree with no commit or tag
//! object at all: host `git checkout v1 -- .`, `git restore --source v1
//! .` or `git read-tree` writes that tree into the work tree. Every ref
//! place the run changed is read, whatever the namespace; a ref naming a
//! tree with content at a protected path (judged as a tag of that tree)
//! is removed: a loose ref or reflog is set aside out of `refs/`, a
//! `packed-refs` line is dropped.

use std::path::{Path, PathBuf};

use super::commit_walk::{Source, WorkTree, tree_ref_unsafe};
use crate::protect::grant_walk::changed_since;

/// Ref files read per repository, at most; refs beyond are not judged
/// and the caller is told.
const MAX_REFS: usize = 200_000;
/// Largest reflog read.
const MAX_REFLOG: u64 = 256 << 20;

/// One line per ref removed (or per repository not fully read).
pub(crate) fn vet(git: &Path, work: &WorkTree<'_>, src: &mut dyn Source) -> (Vec<String>, bool) {
    let mut files = Vec::new();
    let mut incomplete = false;
    for sub in ["refs", "logs"] {
        collect(&git.join(sub), work, &mut files, 0, &mut incomplete);
    }
    // Pseudo-refs at the top of the git directory (`ORIG_HEAD`,
    // `FETCH_HEAD`, any upper-case name git resolves).
    for e in std::fs::read_dir(git).into_iter().flatten().flatten() {
        let n = e.file_name();
        let n = n.to_string_lossy();
        if !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
            && changed_since(&e.path(), work.since)
        {
            files.push(e.path());
        }
    }
    let mut lines = Vec::new();
    let mut seen = std::collections::HashMap::new();
    for f in files {
        let reflog = f.strip_prefix(git).is_ok_and(|r| r.starts_with("logs"));
        let Some(why) = file_unsafe(&f, reflog, work, src, &mut seen) else {
            continue;
        };
        let rel = f
            .strip_prefix(git)
            .unwrap_or(&f)
            .to_string_lossy()
            .into_owned();
        let base = git.join(rel.replace('/', "_"));
        let aside = crate::protect::set_aside::set_aside_as(&f, &base, "skarn-set-aside");
        lines.push(format!(
            "{rel} was written during the run and names a tree that {why}: host git would \
             write it into the work tree on `git checkout <ref> -- .`; the ref {}",
            aside.describe("review the tree with git ls-tree before using it")
        ));
    }
    let packed = git.join("packed-refs");
    if changed_since(&packed, work.since)
        && let Some(l) = packed_refs(&packed, work, src)
    {
        lines.push(l);
    }
    if let Some(l) = reftable(git, work, src, &mut seen) {
        lines.push(l);
    }
    if incomplete {
        lines.push(format!(
            "more than {MAX_REFS} ref files, or refs more than 64 levels deep, were changed \
             during the run in {}: refs naming trees were not all vetted, so the run fails",
            git.display()
        ));
    }
    (lines, incomplete)
}

/// The refs of the reftable tables written during the run (atk22j F7):
/// a table cannot be rewritten here, so a ref naming a tree with content
/// at a protected path, or a new table that does not read whole, makes
/// the repository's `HEAD` set aside, as a replace ref does (ADR 0268).
fn reftable(
    git: &Path,
    work: &WorkTree<'_>,
    src: &mut dyn Source,
    seen: &mut std::collections::HashMap<String, Option<String>>,
) -> Option<String> {
    use super::reftable_read::{Value, read_table, table_refs};
    let dir = git.join("reftable");
    let list = dir.join("tables.list");
    if !changed_since(&list, work.since) {
        return None;
    }
    let text = std::fs::read(&list).ok()?;
    let mut why = None;
    for name in String::from_utf8_lossy(&text)
        .lines()
        .filter(|l| !l.is_empty())
    {
        let t = dir.join(name);
        if name.contains('/') || !changed_since(&t, work.since) {
            continue;
        }
        let Some(refs) = read_table(&t).and_then(|b| table_refs(&b)) else {
            why = Some(format!("its table {name} does not read whole"));
            break;
        };
        why = refs.into_iter().find_map(|(n, v)| {
            let Some(Value::Oid(raw)) = v else {
                return None;
            };
            let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
            let w = seen
                .entry(hex)
                .or_insert_with_key(|o| tree_ref_unsafe(src, work, o))
                .clone()?;
            Some(format!("{n} names a tree that {w}"))
        });
        if why.is_some() {
            break;
        }
    }
    let why = why?;
    let head = git.join("HEAD");
    let a = crate::protect::set_aside::set_aside(&head, "skarn-quarantine");
    Some(format!(
        "the reftable refs the run wrote in {}: {why} (host git would write it into the work tree on `git checkout <ref> -- .`); its HEAD was {}",
        git.display(),
        a.describe("delete that ref with `git update-ref -d` before renaming it back")
    ))
}

/// The regular files under `dir` changed during the run (deeper than
/// git's own refs go: `incomplete`).
fn collect(
    dir: &Path,
    work: &WorkTree<'_>,
    out: &mut Vec<PathBuf>,
    depth: usize,
    incomplete: &mut bool,
) {
    if depth > 64 {
        *incomplete = true;
        return;
    }
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(t) = e.file_type() else { continue };
        let p = e.path();
        if t.is_dir() {
            collect(&p, work, out, depth + 1, incomplete);
        } else if t.is_file() && changed_since(&p, work.since) {
            if out.len() >= MAX_REFS {
                *incomplete = true;
                return;
            }
            out.push(p);
        }
    }
}

/// The object ids at the start of each line of `text` and after the
/// first space (a ref file holds one; a reflog line `<old> <new> ...`).
fn oids(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for l in text.lines() {
        for w in l.split([' ', '\t']).take(2) {
            if (w.len() == 40 || w.len() == 64) && w.bytes().all(|b| b.is_ascii_hexdigit()) {
                out.push(w.to_ascii_lowercase());
            }
        }
    }
    out
}

/// Why the ref (or reflog) file `f` names an unsafe tree, if it does.
fn file_unsafe(
    f: &Path,
    reflog: bool,
    work: &WorkTree<'_>,
    src: &mut dyn Source,
    seen: &mut std::collections::HashMap<String, Option<String>>,
) -> Option<String> {
    use std::io::Read as _;
    let m = std::fs::symlink_metadata(f).ok()?;
    // Git reads a ref file's first line, whatever follows it (atk22j F10:
    // an id padded with 17 MB of blanks was skipped as too large); a
    // reflog is read whole, and one too large to read is unsafe.
    if reflog && m.len() > MAX_REFLOG {
        return Some(format!("is a reflog larger than {} MiB", MAX_REFLOG >> 20));
    }
    let cap = if reflog { MAX_REFLOG } else { 1 << 20 };
    let mut bytes = Vec::new();
    std::fs::File::open(f)
        .ok()?
        .take(cap)
        .read_to_end(&mut bytes)
        .ok()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    // (A reflog repeats the same commits in many files: each judged once.)
    oids(&text).into_iter().find_map(|o| {
        seen.entry(o)
            .or_insert_with_key(|o| tree_ref_unsafe(src, work, o))
            .clone()
    })
}

/// Drop from `packed-refs` the refs naming an unsafe tree (with their
/// peeled lines); one line for the user when one was.
fn packed_refs(p: &Path, work: &WorkTree<'_>, src: &mut dyn Source) -> Option<String> {
    let text = String::from_utf8_lossy(&std::fs::read(p).ok()?).into_owned();
    let mut kept = String::with_capacity(text.len());
    let mut dropped = Vec::new();
    let mut skipping = false;
    for l in text.lines() {
        if l.starts_with('^') {
            if !skipping {
                kept.push_str(l);
                kept.push('\n');
            }
            continue;
        }
        skipping = false;
        if !l.starts_with('#')
            && let Some((oid, name)) = l.split_once(' ')
            && let Some(why) = tree_ref_unsafe(src, work, &oid.to_ascii_lowercase())
        {
            dropped.push(format!("{name} ({why})"));
            skipping = true;
            continue;
        }
        kept.push_str(l);
        kept.push('\n');
    }
    if dropped.is_empty() {
        return None;
    }
    let tmp = p.with_extension("skarn-vetted");
    let done = std::fs::write(&tmp, kept).and_then(|()| std::fs::rename(&tmp, p));
    Some(match done {
        Ok(()) => format!(
            "packed-refs named trees host git would write into the work tree on `git checkout \
             <ref> -- .`; these refs were dropped: {}",
            dropped.join(", ")
        ),
        Err(e) => format!(
            "packed-refs names trees host git would write into the work tree ({}) and could not \
             be rewritten ({e}): review it before running git",
            dropped.join(", ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_ids_are_read_from_ref_files_and_reflog_lines() {
        let a = "0123456789abcdef0123456789abcdef01234567";
        let b = "89abcdef0123456789abcdef0123456789abcdef";
        assert_eq!(oids(&format!("{a}\n")), vec![a.to_string()]);
        assert_eq!(
            oids(&format!("{a} {b} u <u@x> 1 +0000\tupdate\n")),
            vec![a.to_string(), b.to_string()]
        );
        assert!(oids("ref: refs/heads/main\n").is_empty());
    }
}
