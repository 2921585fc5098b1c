//! What makes host git take other objects than the refs name, in the
//! repositories a run writes directly (a `--write` grant's, one nested in
//! the workspace in the direct mode; attack atk22h F15): replace refs of
//! any object type (`git replace <HEAD's tree> <planted tree>`: the next
//! host `git reset --hard` checks out the planted tree, no commit made),
//! and grafts. The copy-on-write layer refuses them in the workspace
//! ([`crate::linux::cow::vet`]); here the state before the run is saved
//! and after it, replace refs the run added or changed are removed (loose
//! files, `packed-refs` lines), a grafts file it wrote is set aside, and
//! a repository whose reftable refs gained a replace ref (or no longer
//! read whole) has its `HEAD` set aside (a reftable cannot be rewritten
//! here; host git no longer takes the directory for a repository).

use std::path::{Path, PathBuf};

use super::reftable_read::{Value, dir_refs, replace_refs};

/// Replace refs read per repository, at most.
const MAX_REFS: usize = 10_000;

/// One repository's state before the run.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Repo {
    /// Loose replace refs: name, content.
    loose: Vec<(String, String)>,
    /// `packed-refs` lines naming a replace ref.
    packed: Vec<String>,
    /// `info/grafts`.
    grafts: Option<Vec<u8>>,
    /// Replace refs of the reftable (name, value as text); `None`: none,
    /// or it did not read whole.
    reftable: Option<Vec<(String, String)>>,
    /// Files of `remotes/` and `branches/` (git's pre-config remotes:
    /// with no `remote.<name>.url`, host git fetches from and pushes to
    /// the URL one names; attack atk22i F1): path and content.
    #[serde(default)]
    legacy: Vec<(PathBuf, Vec<u8>)>,
}

/// The saved states.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Before {
    seen: Vec<(PathBuf, Repo)>,
}

fn text(v: &Value) -> String {
    match v {
        Value::Oid(b) => super::pack_read::hex(b),
        Value::Symref(s) => format!("ref: {s}"),
    }
}

fn reftable(git: &Path) -> Option<Vec<(String, String)>> {
    let refs = dir_refs(&git.join("reftable"))?;
    Some(
        replace_refs(&refs)
            .iter()
            .map(|(n, v)| (n.clone(), text(v)))
            .collect(),
    )
}

/// Loose replace refs of `git`: name, content, file.
fn loose(git: &Path) -> Vec<(String, String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![(git.join("refs/replace"), "refs/replace".to_string())];
    while let Some((d, name)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            if out.len() >= MAX_REFS {
                return out;
            }
            let n = format!("{name}/{}", e.file_name().to_string_lossy());
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push((e.path(), n)),
                Ok(_) => {
                    let c = std::fs::read(e.path()).unwrap_or_default();
                    let c = String::from_utf8_lossy(&c[..c.len().min(300)])
                        .trim()
                        .to_string();
                    out.push((n, c, e.path()));
                }
                Err(_) => {}
            }
        }
    }
    out
}

fn packed(git: &Path) -> Vec<String> {
    let t = std::fs::read(git.join("packed-refs")).unwrap_or_default();
    String::from_utf8_lossy(&t)
        .lines()
        .filter(|l| l.contains("refs/replace/"))
        .map(str::to_string)
        .collect()
}

/// The files of `remotes/` and `branches/` of `git` (at most 256 each).
fn legacy(git: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for d in ["remotes", "branches"] {
        let Ok(rd) = std::fs::read_dir(git.join(d)) else {
            continue;
        };
        for e in rd.flatten().take(256) {
            let c = std::fs::read(e.path()).unwrap_or_default();
            out.push((e.path(), c));
        }
    }
    out
}

fn state(git: &Path) -> Repo {
    Repo {
        loose: loose(git).into_iter().map(|(n, c, _)| (n, c)).collect(),
        packed: packed(git),
        grafts: std::fs::read(git.join("info/grafts")).ok(),
        reftable: reftable(git),
        legacy: legacy(git),
    }
}

/// Save the state of `git_dirs` before the run.
pub fn before(git_dirs: &[PathBuf]) -> Before {
    let mut dirs = git_dirs.to_vec();
    dirs.sort();
    dirs.dedup();
    Before {
        seen: dirs.iter().map(|g| (g.clone(), state(g))).collect(),
    }
}

/// After the run: undo what the run added; one line each.
pub fn after(b: &Before) -> Vec<String> {
    let mut out = Vec::new();
    for (git, was) in &b.seen {
        if !std::fs::symlink_metadata(git).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        for (n, c, p) in loose(git) {
            if was.loose.iter().any(|(wn, wc)| *wn == n && *wc == c) {
                continue;
            }
            let done = if std::fs::remove_file(&p).is_ok() {
                "removed"
            } else {
                "could not be removed: remove it with `git replace -d`"
            };
            out.push(format!(
                "the run made the replace ref {n} ({c}) in {}: host git would show and check \
                 out other objects than the refs name; it was {done}",
                git.display()
            ));
        }
        let now = packed(git);
        let added: Vec<&String> = now.iter().filter(|l| !was.packed.contains(l)).collect();
        if !added.is_empty() {
            let done = if drop_packed(&git.join("packed-refs"), &was.packed).is_ok() {
                "they were dropped"
            } else {
                "they could not be dropped: remove them with `git replace -d`"
            };
            out.push(format!(
                "the run packed replace refs into {}/packed-refs ({}): host git would show and \
                 check out other objects than the refs name; {done}",
                git.display(),
                added
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        for (p, c) in legacy(git) {
            if was.legacy.iter().any(|(wp, wc)| *wp == p && *wc == c) {
                continue;
            }
            let a = crate::protect::set_aside::set_aside(&p, "skarn-set-aside");
            out.push(format!(
                "the run wrote the legacy remote file {} (host git fetch, pull and push take a \
                 remote's URL from it): it was {}",
                p.display(),
                a.describe("review it before renaming it back")
            ));
        }
        let grafts = git.join("info/grafts");
        if let Ok(g) = std::fs::read(&grafts)
            && was.grafts.as_ref() != Some(&g)
        {
            let a = crate::protect::set_aside::set_aside(&grafts, "skarn-set-aside");
            out.push(format!(
                "the run wrote {} (host git would show and check out other history): it was {}",
                grafts.display(),
                a.describe("review it before renaming it back")
            ));
        }
        if std::fs::symlink_metadata(git.join("reftable")).is_ok() {
            let now = reftable(git);
            let fine = match (&now, &was.reftable) {
                (Some(n), Some(w)) => n.iter().all(|x| w.contains(x)),
                (Some(n), None) => n.is_empty(),
                (None, _) => false,
            };
            if !fine && now != was.reftable {
                let head = git.join("HEAD");
                let a = crate::protect::set_aside::set_aside(&head, "skarn-quarantine");
                let why = if now.is_some() {
                    "gained a replace ref (host git would show and check out other objects)"
                } else {
                    "no longer read whole (they could hold a replace ref)"
                };
                out.push(format!(
                    "the reftable refs of {} {why}; its HEAD was {}",
                    git.display(),
                    a.describe(
                        "run `git replace -l` and `git replace -d` on what the run added \
                         before renaming it back"
                    )
                ));
            }
        }
    }
    out
}

/// Rewrite `packed-refs` keeping only the replace-ref lines in `keep`
/// (with their peeled lines).
fn drop_packed(p: &Path, keep: &[String]) -> std::io::Result<()> {
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
        skipping = l.contains("refs/replace/") && !keep.iter().any(|k| k == l);
        if !skipping {
            out.push_str(l);
            out.push('\n');
        }
    }
    let tmp = p.with_extension("skarn-vetted");
    std::fs::write(&tmp, out)?;
    std::fs::rename(&tmp, p)
}
