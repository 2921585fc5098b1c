//! The index of a repository the run wrote directly (a `--write` grant's,
//! a nested one: no layer, so the index from before the run is gone),
//! vetted after the run (attack atk22h F12). Host `git checkout -- .`
//! writes what the index stages into the work tree: content staged at a
//! protected path that is neither what `HEAD` holds there nor the user's
//! own file there makes the index set aside (host git then sees no index;
//! `git reset` rebuilds it from `HEAD`).

use std::path::Path;
use std::time::SystemTime;

use crate::protect::grant_walk::changed_since;

/// Largest index read.
const MAX_INDEX: u64 = 256 << 20;

/// Vet the index of the repository whose work tree is `top`; one line
/// when it was set aside.
pub(crate) fn vet(top: &Path, bound: &Path, since: SystemTime) -> Option<String> {
    let git = top.join(".git");
    let index = git.join("index");
    let m = std::fs::symlink_metadata(&index).ok()?;
    if !m.is_file() || !changed_since(&index, since) {
        return None;
    }
    let why = if m.len() > MAX_INDEX {
        Some("it is too large to vet".to_string())
    } else {
        let b = std::fs::read(&index).ok()?;
        let hash_len = crate::protect::git::object_format::oid_len(&git);
        // Every stage (atk22j F2c: `git checkout --theirs` writes stage
        // 3); a split index's shared file is not read (F2d).
        match crate::protect::git::index_vet::all_entries(&b, hash_len) {
            None => Some(
                "it does not parse as git's index (or holds a path git would never write)"
                    .to_string(),
            ),
            Some((_, true)) => {
                Some("is a split index whose entries in its shared file are not vetted".to_string())
            }
            Some((entries, false)) => planted(top, bound, &git, &entries, since),
        }
    };
    let why = why?;
    let a = crate::protect::set_aside::set_aside(&index, "skarn-set-aside");
    Some(format!(
        "the index of {} {why} (host `git checkout -- .` would write it into the work tree); it \
         was {}",
        top.display(),
        a.describe("run `git reset` to rebuild it from HEAD, or review it before renaming it back")
    ))
}

/// Why the entries stage planted content at a protected path.
fn planted(
    top: &Path,
    bound: &Path,
    git: &Path,
    entries: &[(Vec<u8>, u32, String)],
    since: SystemTime,
) -> Option<String> {
    let mut head: Option<Option<String>> = None;
    for (path, mode, oid) in entries {
        let p = String::from_utf8_lossy(path);
        // A link out of the work tree (attack atk22h F21), unless HEAD
        // has it there.
        if *mode & 0o170000 == 0o120000
            && let Some((_, text)) = read(git, oid)
            && let Err(why) =
                crate::protect::git::commit_walk::link_out_within(bound, top, &p, &text)
        {
            let at_head = head
                .get_or_insert_with(|| head_tree(git))
                .as_deref()
                .and_then(|t| entry_at(git, t, &p));
            if at_head.as_deref() != Some(oid.as_str()) {
                return Some(format!("stages {p}, {why}"));
            }
        }
        if !crate::protect::git::commit_walk::protected(&p) {
            continue;
        }
        let own = *mode & 0o170000 == 0o100000
            && is_users_own(top, &p, since).is_some_and(|bytes| {
                crate::protect::git::pack_read::unhex(oid)
                    .is_some_and(|id| crate::protect::git::pack_read::hash_ok(&id, "blob", &bytes))
            });
        if own {
            continue;
        }
        let at_head = head
            .get_or_insert_with(|| head_tree(git))
            .as_deref()
            .and_then(|t| entry_at(git, t, &p));
        if at_head.as_deref() == Some(oid.as_str()) {
            continue;
        }
        return Some(format!("stages content for the protected path {p}"));
    }
    None
}

/// The bytes of the user's own file at `path` of `top` (a regular file,
/// no link on the way, unchanged since the run started).
fn is_users_own(top: &Path, path: &str, since: SystemTime) -> Option<Vec<u8>> {
    let mut at = top.to_path_buf();
    for c in path.split('/') {
        if c.is_empty() || c == "." || c == ".." {
            return None;
        }
        at.push(c);
        if std::fs::symlink_metadata(&at)
            .ok()?
            .file_type()
            .is_symlink()
        {
            return None;
        }
    }
    let m = std::fs::symlink_metadata(&at).ok()?;
    if !m.is_file() || m.len() > 1 << 20 || changed_since(&at, since) {
        return None;
    }
    std::fs::read(&at).ok()
}

/// The tree of the commit `HEAD` names (hex).
fn head_tree(git: &Path) -> Option<String> {
    let head = std::fs::read_to_string(git.join("HEAD")).ok()?;
    let head = head.trim();
    let commit = match head.strip_prefix("ref: ") {
        None => head.to_string(),
        Some(r) => {
            if r.split('/').any(|c| c == ".." || c.is_empty()) {
                return None;
            }
            match std::fs::read_to_string(git.join(r)) {
                Ok(t) => t.trim().to_string(),
                Err(_) => std::fs::read_to_string(git.join("packed-refs"))
                    .ok()?
                    .lines()
                    .find_map(|l| {
                        let (id, name) = l.split_once(' ')?;
                        (name == r).then(|| id.to_string())
                    })?,
            }
        }
    };
    let (k, body) = read(git, &commit)?;
    if k != "commit" {
        return None;
    }
    crate::protect::git::commit_walk::first_line_oid(&body, b"tree ")
}

/// The object id at `path` of the tree `tree`.
fn entry_at(git: &Path, tree: &str, path: &str) -> Option<String> {
    let mut cur = tree.to_string();
    for c in path.split('/') {
        let (k, body) = read(git, &cur)?;
        if k != "tree" {
            return None;
        }
        let oid_len = cur.len() / 2;
        let mut i = 0;
        let mut next = None;
        while i < body.len() {
            let sp = body[i..].iter().position(|b| *b == b' ')? + i;
            let nul = body[sp..].iter().position(|b| *b == 0)? + sp;
            let end = nul + 1 + oid_len;
            let name = body.get(sp + 1..nul)?;
            if name == c.as_bytes() {
                next = Some(crate::protect::git::pack_read::hex(body.get(nul + 1..end)?));
                break;
            }
            i = end;
        }
        cur = next?;
    }
    Some(cur)
}

/// An object of the repository at `git` (loose or packed).
fn read(git: &Path, hex: &str) -> Option<(String, Vec<u8>)> {
    use crate::protect::git::pack_read::{Pack, read_loose, type_name, unhex};
    let objects = git.join("objects");
    if let Some(o) = read_loose(&objects, hex) {
        return Some(o);
    }
    let raw = unhex(hex)?;
    for e in std::fs::read_dir(objects.join("pack")).ok()?.flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "idx") {
            continue;
        }
        let Ok(mut pk) = Pack::open(&p, raw.len()) else {
            continue;
        };
        if let Some(j) = pk.find(&raw) {
            let mut none = |_: &[u8]| None;
            let (t, b) = pk.read(j, &mut none).ok()?;
            return Some((type_name(t).to_string(), b.to_vec()));
        }
    }
    None
}
