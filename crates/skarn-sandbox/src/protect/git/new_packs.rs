//! Commits a run packed, vetted before the layer over `.git` is applied
//! (issue 22, ADR 0257). `git gc`, `git repack` or a local fetch of more
//! than 100 objects stores the run's commits in a pack, which the loose
//! objects' vetting ([`super::new_commits`]) does not read. Both the copy-
//! on-write workspace and the direct mode's git layer hold the run's
//! `.git` changes in an upper directory while the host's `.git` is still
//! as it was before the run, so what is new is told exactly: an object
//! the upper directory holds (loose or in a pack) that the host's
//! repository does not.
//!
//! The objects are read by the host's `git` (from a system directory,
//! with no system or global configuration, no replace refs), as git
//! reads them, deltas and all: each new pack is first checked by `git
//! index-pack --verify` (its index must say what the pack holds: an index
//! naming an old object at new content would make host git read planted
//! content for an old commit's tree), then every object of the upper
//! directory is listed, the host is asked which it lacks, and each new
//! commit (and tag of a tree) is judged by [`super::commit_walk`].
//!
//! An unsafe commit, a pack that does not verify, or a pack that could
//! not be vetted (no git, too many objects) makes every new pack of the
//! run set aside (renamed so git does not read it), and the run's
//! removals of objects are not applied (after `git gc` the old packs
//! hold the repository's history); an unsafe loose commit is set aside
//! alone.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::SystemTime;

use super::commit_walk::{Source, WorkTree, object_unsafe};

/// Objects of the upper directory looked at, at most.
const MAX_OBJECTS: usize = 2_000_000;
/// Largest object read.
const MAX_OBJECT: u64 = 64 << 20;

/// Where host git is taken from (never from `PATH`: a run may have put
/// a `git` in a writable grant on it).
const GIT: &[&str] = &[
    "/usr/bin/git",
    "/bin/git",
    "/usr/local/bin/git",
    "/run/current-system/sw/bin/git",
    "/nix/var/nix/profiles/default/bin/git",
];

/// What [`vet_layer`] found.
#[derive(Debug, Default)]
pub struct PackVet {
    /// One line per commit or pack set aside.
    pub lines: Vec<String>,
    /// The run's removals under `objects` must not be applied.
    pub keep_objects: bool,
}

/// Vet the layer over a git directory: `upper` is the layer's copy of
/// it (what the run wrote), `host` the repository as it was before the
/// run, `work` its work tree.
pub fn vet_layer(upper: &Path, host: &Path, work: &Path, since: SystemTime) -> PackVet {
    let mut out = PackVet::default();
    let packs = new_packs(&upper.join("objects/pack"));
    if packs.is_empty() {
        return out;
    }
    let why = match vet_packs(upper, host, work, since, &packs, &mut out) {
        Ok(None) => return out,
        Ok(Some(why)) => why,
        Err(e) => format!("they could not be vetted ({e}), so the run fails"),
    };
    out.keep_objects = true;
    for stem in &packs {
        let mut moved = Vec::new();
        for ext in ["pack", "idx", "rev", "bitmap", "mtimes", "keep", "promisor"] {
            let p = upper.join("objects/pack").join(format!("{stem}.{ext}"));
            if std::fs::symlink_metadata(&p).is_ok() {
                let a = crate::protect::set_aside::set_aside(&p, "skarn-set-aside");
                if !matches!(a, crate::protect::set_aside::Aside::Moved(_)) {
                    crate::protect::git::nested_git::count_incomplete();
                }
                moved.push(a.describe("git does not read it"));
            }
        }
        out.lines.push(format!(
            "the pack {stem} the run made in {}/objects/pack: {why}; its files: {}; the objects \
             the run removed were kept",
            host.display(),
            moved.join("; ")
        ));
    }
    if out.lines.iter().any(|l| l.contains("could not be vetted")) {
        crate::protect::git::nested_git::count_incomplete();
    }
    out
}

/// The stems (`pack-<hex>`) of the packs the upper directory holds.
fn new_packs(dir: &Path) -> Vec<String> {
    let mut stems = HashSet::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if let Some(stem) = n.strip_suffix(".pack").or_else(|| n.strip_suffix(".idx")) {
            stems.insert(stem.to_string());
        }
    }
    let mut v: Vec<String> = stems.into_iter().collect();
    v.sort();
    v
}

/// `Ok(Some(why))`: the new packs must be set aside.
fn vet_packs(
    upper: &Path,
    host: &Path,
    work: &Path,
    since: SystemTime,
    packs: &[String],
    out: &mut PackVet,
) -> std::io::Result<Option<String>> {
    let git = GIT
        .iter()
        .map(Path::new)
        .find(|p| p.is_file())
        .ok_or_else(|| std::io::Error::other("no git in a system directory"))?;
    let g = Git {
        bin: git,
        host: host.to_path_buf(),
        upper: upper.join("objects"),
    };
    for stem in packs {
        let pack = upper.join("objects/pack").join(format!("{stem}.pack"));
        let idx = upper.join("objects/pack").join(format!("{stem}.idx"));
        if !std::fs::symlink_metadata(&pack).is_ok_and(|m| m.is_file())
            || !std::fs::symlink_metadata(&idx).is_ok_and(|m| m.is_file())
        {
            return Ok(Some(format!(
                "{stem} lacks its pack or its index (git would pair it with the host's)"
            )));
        }
        let ok = g
            .command(true)
            .arg("index-pack")
            .arg("--verify")
            .arg(&pack)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?
            .success();
        if !ok {
            return Ok(Some(format!(
                "{stem}'s index does not match its content (git index-pack --verify failed)"
            )));
        }
    }
    // Every object of the upper directory, then those the host lacks.
    let listed = g
        .command(true)
        .args([
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname) %(objecttype)",
        ])
        .stderr(Stdio::null())
        .output()?;
    if !listed.status.success() {
        return Err(std::io::Error::other("git cat-file could not list the objects"));
    }
    let mut all: Vec<(String, String)> = Vec::new();
    for l in listed.stdout.split(|b| *b == b'\n') {
        let l = String::from_utf8_lossy(l);
        if let Some((id, kind)) = l.split_once(' ') {
            all.push((id.to_string(), kind.to_string()));
        }
        if all.len() > MAX_OBJECTS {
            return Err(std::io::Error::other(format!(
                "more than {MAX_OBJECTS} objects"
            )));
        }
    }
    let new = g.missing_on_host(all.iter().map(|(id, _)| id.as_str()))?;
    let oid_len = all.first().map_or(20, |(id, _)| id.len() / 2);
    let mut src = Batch::start(&g, new, oid_len)?;
    let wt = WorkTree { root: work, since };
    let mut in_pack = None;
    for (id, kind) in &all {
        if (kind != "commit" && kind != "tag") || !src.new.contains(id) {
            continue;
        }
        let Some((k, body)) = src.read(id) else {
            return Err(std::io::Error::other(format!("{id} could not be read")));
        };
        let Some(why) = object_unsafe(&mut src, &wt, &k, &body) else {
            continue;
        };
        let loose = upper.join("objects").join(&id[..2]).join(&id[2..]);
        if std::fs::symlink_metadata(&loose).is_ok() {
            let a = crate::protect::set_aside::set_aside(&loose, "skarn-set-aside");
            out.lines.push(format!(
                "{kind} {id} was made during the run and {why}: host git would write it into \
                 the work tree on a checkout, reset or stash of it; its object {}",
                a.describe("review it with git cat-file before renaming it back")
            ));
        } else if in_pack.is_none() {
            in_pack = Some(format!(
                "it holds {kind} {id}, which {why} (host git would write it into the work tree \
                 on a checkout, reset or stash of it)"
            ));
        }
    }
    Ok(in_pack)
}

/// The object `hex` as host git will read it once the layer over the git
/// directory is applied (`upper`: the layer's copy of the git directory,
/// `host`: the host's).
pub(crate) fn read_object(upper: &Path, host: &Path, hex: &str) -> Option<(String, Vec<u8>)> {
    let bin = GIT.iter().map(Path::new).find(|p| p.is_file())?;
    let g = Git {
        bin,
        host: host.to_path_buf(),
        upper: upper.join("objects"),
    };
    let mut b = Batch::start(&g, HashSet::new(), hex.len() / 2).ok()?;
    b.read(hex)
}

/// Host git, reading the layer's objects (and the host's, as
/// alternates) the way host git will once they are applied.
struct Git<'a> {
    bin: &'a Path,
    host: PathBuf,
    upper: PathBuf,
}

impl Git<'_> {
    /// A git command with a safe environment; `layer`: the layer's
    /// objects first, the host's as alternates (else the host's only).
    fn command(&self, layer: bool) -> Command {
        let mut c = Command::new(self.bin);
        c.env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("LC_ALL", "C")
            .env("HOME", "/nonexistent")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_DIR", &self.host)
            .args(["-c", "safe.directory=*", "-c", "core.commitGraph=false"])
            .args(["-c", "core.multiPackIndex=false"])
            .stdin(Stdio::null());
        if layer {
            c.env("GIT_OBJECT_DIRECTORY", &self.upper)
                .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", self.host.join("objects"));
        }
        c
    }

    /// Of `ids`, those the host's repository does not hold.
    fn missing_on_host<'i>(
        &self,
        ids: impl Iterator<Item = &'i str>,
    ) -> std::io::Result<HashSet<String>> {
        let input: Vec<u8> = ids.flat_map(|i| [i.as_bytes(), b"\n"].concat()).collect();
        let mut child = self
            .command(false)
            .args(["cat-file", "--batch-check=%(objectname)"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let mut stdin = child.stdin.take().ok_or_else(|| std::io::Error::other("stdin"))?;
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let mut text = Vec::new();
        if let Some(mut o) = child.stdout.take() {
            o.read_to_end(&mut text)?;
        }
        let _ = writer.join();
        if !child.wait()?.success() {
            return Err(std::io::Error::other("git cat-file --batch-check failed"));
        }
        Ok(text
            .split(|b| *b == b'\n')
            .filter_map(|l| {
                let l = std::str::from_utf8(l).ok()?;
                l.strip_suffix(" missing").map(str::to_string)
            })
            .collect())
    }
}

/// Objects read through one `git cat-file --batch`.
struct Batch {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    new: HashSet<String>,
    oid_len: usize,
}

impl Batch {
    fn start(g: &Git<'_>, new: HashSet<String>, oid_len: usize) -> std::io::Result<Batch> {
        let mut child = g
            .command(true)
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().ok_or_else(|| std::io::Error::other("stdin"))?;
        let stdout = BufReader::new(
            child
                .stdout
                .take()
                .ok_or_else(|| std::io::Error::other("stdout"))?,
        );
        Ok(Batch {
            child,
            stdin,
            stdout,
            new,
            oid_len,
        })
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Source for Batch {
    fn is_new(&self, hex: &str) -> bool {
        self.new.contains(hex)
    }

    fn read(&mut self, hex: &str) -> Option<(String, Vec<u8>)> {
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.stdin.write_all(format!("{hex}\n").as_bytes()).ok()?;
        self.stdin.flush().ok()?;
        let mut head = String::new();
        self.stdout.read_line(&mut head).ok()?;
        let mut f = head.split_whitespace();
        let (_, kind, size) = (f.next()?, f.next()?.to_string(), f.next()?);
        let size: u64 = size.parse().ok()?;
        let mut body = Vec::new();
        (&mut self.stdout)
            .take(size.min(MAX_OBJECT))
            .read_to_end(&mut body)
            .ok()?;
        if size > MAX_OBJECT {
            // The rest is read and dropped; the object counts as unread.
            std::io::copy(
                &mut (&mut self.stdout).take(size - MAX_OBJECT + 1),
                &mut std::io::sink(),
            )
            .ok()?;
            return None;
        }
        let mut nl = [0u8; 1];
        self.stdout.read_exact(&mut nl).ok()?;
        Some((kind, body))
    }

    fn oid_len(&self) -> usize {
        self.oid_len
    }
}
