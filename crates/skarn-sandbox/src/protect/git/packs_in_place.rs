//! Packs a run wrote in place (issue 22, ADR 0296): in the repositories
//! nested in a workspace the run writes directly and in `--write` grants,
//! no layer holds the run's git changes apart, so what is new is told by
//! time: a pack whose index or data file was made or changed at or after
//! the run's start (an inode change time no process can set back) is the
//! run's. Each is read as the layer's packs are ([`super::new_packs`],
//! ADR 0286): every entry checked against its id, each commit (and tag
//! of a tree) the older packs and loose objects lack judged by
//! [`super::commit_walk`]. An unsafe one sets the run's new packs aside,
//! as an unsafe loose commit is ([`super::new_commits`], which runs
//! first: a packed commit above a loose one set aside is judged against
//! no parent, its whole tree as new).
//!
//! Commit graphs and multi-pack indexes the run wrote there are removed
//! (git makes them again; host git would take a commit's tree or an
//! object's place from them without reading the object, ADR 0257).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::new_packs::{PackVet, judge_packs, new_packs, set_aside};
use super::object_store::Store;
use crate::protect::grant_walk::changed_since;

/// Vet the packs the run made in the git directory `git` (work tree
/// `work`, inside `bound`) since `since`; one line per pack or index set
/// aside.
pub fn vet(git: &Path, work: &Path, bound: &Path, since: SystemTime) -> Vec<String> {
    let mut lines = drop_rebuilt(git, since);
    let dir = git.join("objects/pack");
    let stems: Vec<String> = new_packs(&dir)
        .into_iter()
        .filter(|s| {
            ["pack", "idx"]
                .iter()
                .any(|e| changed_since(&dir.join(format!("{s}.{e}")), since))
        })
        .collect();
    if stems.is_empty() {
        return lines;
    }
    let old = |idx: &Path| {
        let stem = idx.file_stem().map(|s| s.to_string_lossy().into_owned());
        !stem.is_some_and(|s| stems.contains(&s)) || idx.parent() != Some(dir.as_path())
    };
    let oid_len = crate::protect::git::object_format::oid_len(git);
    let mut out = PackVet::default();
    let mut store = Store::in_place(git, oid_len, since, &old).ok();
    let judged = match store.as_mut() {
        Some(s) => judge_packs(s, &dir, work, bound, since, &stems, &mut out),
        None => Err(std::io::Error::other(
            "the repository's packs could not be opened",
        )),
    };
    let why = match judged {
        Ok(None) => {
            lines.extend(out.lines);
            return lines;
        }
        Ok(Some(why)) => why,
        Err(e) => {
            crate::protect::git::nested_git::count_incomplete();
            format!("they could not be vetted ({e}), so the run fails")
        }
    };
    lines.extend(out.lines);
    // No layer holds the repository's old objects apart (`git gc` removed
    // the loose ones and the old packs): every other object of the packs
    // is written loose first, so only the unsafe ones are lost to git.
    let kept = match store.as_mut() {
        Some(s) => super::loose_write::unpack_except(s, &out.unsafe_packed),
        None => Err(std::io::Error::other("not opened")),
    };
    let kept = match kept {
        Ok(n) => format!("its other {n} objects were written loose, so host git reads them"),
        Err(e) => {
            crate::protect::git::nested_git::count_incomplete();
            format!(
                "its other objects could not be written loose ({e}): objects the run removed \
                 from the repository (`git gc`, `git repack`) may lie only there; review it \
                 with `git verify-pack` before renaming it back"
            )
        }
    };
    for (stem, files) in set_aside(&dir, &stems) {
        lines.push(format!(
            "the pack {stem} the run made in {}: {why}; its files: {files}; {kept}",
            dir.display()
        ));
    }
    // Refs the run moved to a commit of those packs (or above one) are
    // put back, as for loose commits set aside (attack atk22h F38).
    lines.extend(super::ref_repair::repair(git, since));
    lines
}

/// Remove the commit graphs and multi-pack indexes of `git` made or
/// changed since `since`: indexes git makes again from the objects,
/// left out quietly as the layer leaves them out (ADR 0257).
fn drop_rebuilt(git: &Path, since: SystemTime) -> Vec<String> {
    let mut found: Vec<PathBuf> = vec![
        git.join("objects/info/commit-graph"),
        git.join("objects/info/commit-graphs"),
    ];
    for e in std::fs::read_dir(git.join("objects/pack"))
        .into_iter()
        .flatten()
        .flatten()
    {
        if e.file_name()
            .to_string_lossy()
            .starts_with("multi-pack-index")
        {
            found.push(e.path());
        }
    }
    let mut lines = Vec::new();
    for p in found.iter().filter(|p| changed_since(p, since)) {
        let gone = if std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()) {
            std::fs::remove_dir_all(p)
        } else {
            std::fs::remove_file(p)
        };
        if let Err(e) = gone {
            crate::protect::git::nested_git::count_incomplete();
            lines.push(format!(
                "{} was written during the run and could not be removed ({e}): host git may \
                 take commits' trees from it; remove it (git makes it again), so the run fails",
                p.display()
            ));
        }
    }
    lines
}

/// [`vet`] for the repositories at the top of each of `roots` (their
/// `.git` directories) and their submodules' git directories, judged as
/// their loose commits are ([`super::new_commits::vet`], run before).
pub fn vet_tops(roots: &[PathBuf], since: SystemTime) -> Vec<String> {
    let mut lines = Vec::new();
    for r in roots {
        let git = r.join(".git");
        if !std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let bound = super::new_commits::outermost(roots, r);
        lines.extend(vet(&git, r, bound, since));
        let mut modules = Vec::new();
        super::new_commits::module_dirs(&git.join("modules"), 0, &mut modules);
        for m in modules {
            lines.extend(vet(&m, &m, bound, since));
        }
    }
    lines
}
