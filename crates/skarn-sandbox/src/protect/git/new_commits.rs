//! Commits a run made, vetted before host git can check them out (issue
//! 22, helper h22f). A run may not write `.envrc`, `.vscode/tasks.json`
//! or a hook manager's configuration in the work tree, and the index it
//! leaves is vetted (ADR 0235), but `git commit` inside the run writes
//! objects: a commit whose tree holds planted content at such a path
//! reaches the work tree when the host checks it out, resets or stashes
//! to it (`git reset --hard`, an IDE's checkout of the agent's branch),
//! and the host's direnv, editor or hook manager then runs it.
//!
//! After a run, every loose object of the workspace's repositories made
//! during it (change time) is read as git stores it (zlib, `<type>
//! <size>\0`); each commit (and tag of a tree) is judged by
//! [`super::commit_walk`]. An unsafe one's object is set aside: host git
//! can no longer read, check out or reset to it (nor to the commits above
//! it), and the report names it. Commits the run packed (`git gc`, a
//! local fetch of more than 100 objects) are vetted before the layer over
//! `.git` is applied ([`super::new_packs`], ADR 0257).

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::commit_parents::judge as object_unsafe;
use super::commit_walk::{Source, WorkTree};
use crate::protect::grant_walk::changed_since;

/// New loose objects looked at per repository, at most.
const MAX_NEW: usize = 100_000;
/// Largest object inflated.
const MAX_OBJECT: u64 = 64 << 20;

/// What [`vet`] found.
#[derive(Debug, Default)]
pub struct Vetted {
    /// One line per commit set aside or repository not fully vetted.
    pub lines: Vec<String>,
    /// A repository could not be vetted whole: the run must fail.
    pub incomplete: bool,
}

/// One repository's objects made during the run.
struct Objects {
    dir: PathBuf,
    /// Hex names of the loose objects made during the run.
    new: HashSet<String>,
    /// Bytes of an object id (20 for SHA-1, 32 for SHA-256).
    oid_len: usize,
    /// The repository's packs, opened when an older object is read.
    packs: Option<Vec<super::pack_read::Pack>>,
}

/// Vet the repositories at the top of each of `roots` (their `.git`
/// directories) for commits made at or after `since`.
pub fn vet(roots: &[PathBuf], since: SystemTime) -> Vetted {
    let mut out = Vetted::default();
    for r in roots {
        let git = r.join(".git");
        if !std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let bound = outermost(roots, r);
        let work = WorkTree {
            root: r,
            since,
            bound,
        };
        vet_repo(&git, &work, &mut out);
        // The submodules' git directories: host `git submodule update`
        // checks their commits out below the superproject (atk22i F12,
        // ADR 0278). Judged as at their own top, no file there being the
        // user's: stricter than at the submodule's path.
        let mut modules = Vec::new();
        module_dirs(&git.join("modules"), 0, &mut modules);
        for m in modules {
            let work = WorkTree {
                root: &m,
                since,
                bound,
            };
            vet_repo(&m, &work, &mut out);
            // Their refs too: a branch left on a commit (or pack) set aside.
            out.lines.extend(super::ref_repair::repair(&m, since));
        }
        // Refs the run moved to a commit set aside (or above it) are put
        // back (attack atk22h F38).
        out.lines.extend(super::ref_repair::repair(&git, since));
    }
    out
}

/// The outermost of `roots` that `r` lies in (`r` itself when none).
pub(crate) fn outermost<'a>(roots: &'a [PathBuf], r: &'a Path) -> &'a Path {
    roots
        .iter()
        .filter(|x| r.starts_with(x))
        .min_by_key(|x| x.components().count())
        .map_or(r, PathBuf::as_path)
}

/// The git directories under `dir` (`.git/modules/<name>`, nested as
/// `modules/<name>/modules/<sub>` and by names with slashes).
pub(crate) fn module_dirs(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 16 || out.len() >= 10_000 {
        return;
    }
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let p = e.path();
        if std::fs::symlink_metadata(p.join("objects")).is_ok_and(|m| m.is_dir()) {
            module_dirs(&p.join("modules"), depth + 1, out);
            out.push(p);
        } else {
            module_dirs(&p, depth + 1, out);
        }
    }
}

fn vet_repo(git: &Path, work: &WorkTree<'_>, out: &mut Vetted) {
    let dir = git.join("objects");
    let Some(mut objs) = new_objects(&dir, work.since, out) else {
        return;
    };
    let mut names: Vec<String> = objs.new.iter().cloned().collect();
    names.sort();
    // Every verdict first, then a commit (or tag) above an unsafe one of
    // the run is unsafe too, whatever its own tree: judged against an
    // unsafe parent it would look unchanged (attack atk22i F4).
    let mut unsafe_: HashMap<String, (String, String)> = HashMap::new();
    let mut above: Vec<(String, String, Vec<String>)> = Vec::new();
    for hex in names {
        let Some((kind, body, whole)) = objs.read_whole(&hex) else {
            continue;
        };
        // A loose object is its content's hash: one whose content is not
        // (an old object's file the run rewrote, say HEAD's tree) would be
        // read by host git as is (helper h22g's gap). Objects past the
        // read bound are not checked.
        if whole && !name_ok(&hex, &kind, &body) {
            let aside = crate::protect::set_aside::set_aside(&objs.path(&hex), "skarn-set-aside");
            out.lines.push(format!(
                "the object file {hex} was written during the run with content that is not \
                 that object (host git would read it in place of the object it names); its \
                 file was {}",
                aside.describe("review it with git cat-file; git fsck names what needs it")
            ));
            continue;
        }
        let below = linked(&kind, &body);
        if let Some(why) = object_unsafe(&mut objs, work, &kind, &body) {
            unsafe_.insert(hex.clone(), (kind.clone(), why));
        }
        if !below.is_empty() {
            above.push((hex, kind, below));
        }
    }
    loop {
        let mut more = false;
        for (hex, kind, below) in &above {
            if unsafe_.contains_key(hex) {
                continue;
            }
            if let Some(b) = below.iter().find(|b| unsafe_.contains_key(*b)) {
                let why = format!("lies above {b}, which the run made unsafe");
                unsafe_.insert(hex.clone(), (kind.clone(), why));
                more = true;
            }
        }
        if !more {
            break;
        }
    }
    let mut found: Vec<(String, (String, String))> = unsafe_.into_iter().collect();
    found.sort();
    for (hex, (kind, why)) in found {
        let file = objs.path(&hex);
        let aside = crate::protect::set_aside::set_aside(&file, "skarn-set-aside");
        out.lines.push(format!(
            "{kind} {hex} was made during the run and {why}: host git would write it into the \
             work tree on a checkout, reset or stash of that commit; its object {}",
            aside.describe(
                "git cannot read that commit or those above it; review it with git cat-file \
                 before renaming it back"
            )
        ));
    }
    // Refs naming a tree directly (ADR 0278).
    let (lines, incomplete) = super::tree_refs::vet(git, work, &mut objs);
    out.lines.extend(lines);
    out.incomplete |= incomplete;
}

/// The objects a commit (its parents) or a tag (its target) stands on.
pub(super) fn linked(kind: &str, body: &[u8]) -> Vec<String> {
    let key: &[u8] = match kind {
        "commit" => b"parent ",
        "tag" => b"object ",
        _ => return Vec::new(),
    };
    body.split(|b| *b == b'\n')
        .take_while(|l| !l.is_empty())
        .filter_map(|l| super::commit_walk::first_line_oid(l, key))
        .collect()
}

/// The loose objects under `dir` made at or after `since`.
fn new_objects(dir: &Path, since: SystemTime, out: &mut Vetted) -> Option<Objects> {
    let mut new = HashSet::new();
    let mut oid_len = 20;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let d = e.file_name();
        let d = d.to_str().unwrap_or("");
        if d.len() != 2 || !d.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(e.path()) else {
            continue;
        };
        for f in rd.flatten() {
            let n = f.file_name();
            let n = n.to_str().unwrap_or("");
            if !(n.len() == 38 || n.len() == 62) || !n.bytes().all(|b| b.is_ascii_hexdigit()) {
                continue;
            }
            if !changed_since(&f.path(), since) {
                continue;
            }
            if new.len() >= MAX_NEW {
                out.incomplete = true;
                out.lines.push(format!(
                    "more than {MAX_NEW} objects were made during the run in {}: the commits \
                     among them were not all vetted, so the run fails; review the branches the \
                     run made before checking them out",
                    dir.display()
                ));
                return None;
            }
            if n.len() == 62 {
                oid_len = 32;
            }
            new.insert(format!("{d}{n}"));
        }
    }
    Some(Objects {
        dir: dir.to_path_buf(),
        new,
        oid_len,
        packs: None,
    })
}

/// Whether the loose object file `file` holds the object `hex` names
/// (one past the read bound, or unreadable, counts as holding it: git
/// refuses an unreadable one itself).
pub(crate) fn loose_file_matches(file: &Path, hex: &str) -> bool {
    match read_file(file) {
        Some((kind, body, true)) => name_ok(hex, &kind, &body),
        _ => true,
    }
}

/// A loose object file: its type, its body, and whether the body is
/// whole (its header's size, within the read bound).
fn read_file(file: &Path) -> Option<(String, Vec<u8>, bool)> {
    let f = std::fs::File::open(file).ok()?;
    let mut z = flate2::read::ZlibDecoder::new(f).take(MAX_OBJECT);
    let mut raw = Vec::new();
    z.read_to_end(&mut raw).ok()?;
    let nul = raw.iter().position(|b| *b == 0)?;
    let head = std::str::from_utf8(&raw[..nul]).ok()?;
    let mut w = head.split(' ');
    let kind = w.next()?.to_string();
    let size: Option<usize> = w.next().and_then(|n| n.parse().ok());
    let body = raw[nul + 1..].to_vec();
    let whole = size == Some(body.len()) && (raw.len() as u64) < MAX_OBJECT;
    Some((kind, body, whole))
}

/// Whether `body` of type `kind` hashes to the name `hex`.
fn name_ok(hex: &str, kind: &str, body: &[u8]) -> bool {
    super::pack_read::unhex(hex).is_some_and(|id| super::pack_read::hash_ok(&id, kind, body))
}

impl Objects {
    fn path(&self, hex: &str) -> PathBuf {
        self.dir.join(&hex[..2]).join(&hex[2..])
    }

    /// A loose object: its type and body (`None` when it cannot be read).
    fn read(&self, hex: &str) -> Option<(String, Vec<u8>)> {
        self.read_whole(hex).map(|(k, b, _)| (k, b))
    }

    /// [`Objects::read`], and whether the body is whole (its header's
    /// size, within the read bound).
    fn read_whole(&self, hex: &str) -> Option<(String, Vec<u8>, bool)> {
        read_file(&self.path(hex))
    }
}

impl Source for Objects {
    fn read(&mut self, hex: &str) -> Option<(String, Vec<u8>)> {
        // Older objects (a parent's tree) may lie in a pack.
        if let Some(o) = Objects::read(self, hex) {
            return Some(o);
        }
        let raw = super::pack_read::unhex(hex)?;
        let packs = self.packs.get_or_insert_with(|| {
            std::fs::read_dir(self.dir.join("pack"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "idx"))
                .filter_map(|p| super::pack_read::Pack::open(&p, self.oid_len).ok())
                .collect()
        });
        for p in packs.iter_mut() {
            if let Some(j) = p.find(&raw) {
                let mut none = |_: &[u8]| None;
                let (t, b) = p.read(j, &mut none).ok()?;
                return Some((super::pack_read::type_name(t).to_string(), b.to_vec()));
            }
        }
        None
    }

    fn oid_len(&self) -> usize {
        self.oid_len
    }
}
