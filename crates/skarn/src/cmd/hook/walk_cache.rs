//! The nested walk of [`super::claude_dirs`] remembered between hook
//! calls (the hook runs on every Read, Glob, Grep and LS too: walking a
//! large project each time cost tens of milliseconds per call).
//!
//! What the walk found depends only on the directories it read: a name
//! cannot be added to, removed from or renamed in a directory without its
//! change time (`ctime`) moving, and no process can set `ctime`. So the
//! walk is kept with the device, inode, modification and change times of
//! every directory it read, and reused while each is the same. What lies
//! outside those directories (where a link leads, whether a `.claude`
//! entry is a directory) is looked at again on every use.
//!
//! - A walk that read a directory changed within [`SETTLE`] before it is
//!   not kept: a change right after the read could land within the same
//!   clock tick and leave `ctime` equal.
//! - The place is `~/.local/state/skarn/hook-walks`, under skarn's own
//!   state, which no run is granted and the file tools may not write; it
//!   is found, checked, read and written by `skarn_sandbox::state_file`
//!   (ADR 0317: the user's own, private, no link), else nothing is kept
//!   or read.
//! - A record that cannot be read or parsed, of another version or other
//!   bounds, or longer than [`MAX_BYTES`], is no record: the walk is made
//!   again.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where the walks are kept, below the user's home.
#[cfg(unix)]
pub const DIR: &str = ".local/state/skarn/hook-walks";

/// Bytes of one kept walk at most (read and written).
#[cfg(unix)]
pub const MAX_BYTES: usize = 16 << 20;

/// How long a directory must have been unchanged before a walk that read
/// it is kept.
pub const SETTLE: Duration = Duration::from_secs(2);

/// A directory's identity and times (`None`: it could not be looked at).
pub type Stamp = Option<[i64; 6]>;

/// One walk below `top`, as [`super::claude_dirs`] makes it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Walk {
    /// Every directory read, with its stamp taken before the read.
    pub dirs: Vec<(PathBuf, Stamp)>,
    /// Every `.claude` entry met below the top (found when a directory).
    pub claudes: Vec<PathBuf>,
    /// Every link met below the top (found when it leads to a directory
    /// holding `.claude`).
    pub links: Vec<PathBuf>,
    /// Whether the walk stayed within its bounds.
    pub complete: bool,
}

impl Walk {
    /// The nested `.claude` directories, looked at now.
    pub fn found(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self
            .claudes
            .iter()
            .filter(|p| p.is_dir())
            .cloned()
            .chain(
                self.links
                    .iter()
                    .map(|l| l.join(".claude"))
                    .filter(|c| c.is_dir()),
            )
            .collect();
        out.sort();
        out
    }
}

/// The stamp of the directory `d` (links followed).
#[cfg(unix)]
pub fn stamp(d: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(d).ok()?;
    Some([
        m.dev() as i64,
        m.ino() as i64,
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    ])
}

/// Elsewhere no stamp is taken, so no walk is kept.
#[cfg(not(unix))]
pub fn stamp(_: &Path) -> Stamp {
    None
}

/// The first line of a record: this layout, skarn's version and the
/// walk's bounds.
fn header(bounds: &str) -> String {
    format!("skarn hook-walk 1 {} {bounds}", env!("CARGO_PKG_VERSION"))
}

/// The place of the records and the name of the one for `top` walked
/// within `bounds`; `None` when it cannot be used.
#[cfg(unix)]
fn file(
    home: &Path,
    top: &Path,
    bounds: &str,
) -> Option<(skarn_sandbox::state_file::StateDir, String)> {
    let dir = skarn_sandbox::state_file::StateDir::open(home, DIR, &[])?;
    // The name only spreads the records; each names its top inside.
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    top.hash(&mut h);
    bounds.hash(&mut h);
    Some((dir, format!("{:016x}", h.finish())))
}

/// The kept walk's text (none elsewhere).
fn read(home: &Path, top: &Path, bounds: &str) -> Option<String> {
    #[cfg(unix)]
    {
        let (dir, name) = file(home, top, bounds)?;
        String::from_utf8(dir.read(&name, MAX_BYTES)?).ok()
    }
    #[cfg(not(unix))]
    {
        let _ = (home, top, bounds);
        None
    }
}

/// Keep the walk's text (nothing elsewhere).
fn write(home: &Path, top: &Path, bounds: &str, text: &str) {
    #[cfg(unix)]
    if let Some((dir, name)) = file(home, top, bounds) {
        dir.write(&name, text.as_bytes(), MAX_BYTES);
    }
    #[cfg(not(unix))]
    let _ = (home, top, bounds, text);
}

/// The kept walk below `top` when every directory it read is unchanged.
pub fn load(home: &Path, top: &Path, bounds: &str) -> Option<Walk> {
    let text = read(home, top, bounds)?;
    let mut lines = text.lines();
    if lines.next()? != header(bounds) || lines.next()? != format!("top {}", top.to_str()?) {
        return None;
    }
    let mut w = Walk {
        complete: lines.next()? == "complete 1",
        ..Walk::default()
    };
    for l in lines {
        let (kind, rest) = l.split_once(' ')?;
        match kind {
            "c" => w.claudes.push(PathBuf::from(rest)),
            "l" => w.links.push(PathBuf::from(rest)),
            "d" => {
                let (s, p) = rest.split_once(' ')?;
                let s: Stamp = if s == "-" {
                    None
                } else {
                    let v: Vec<i64> = s
                        .split(',')
                        .map(str::parse)
                        .collect::<Result<_, _>>()
                        .ok()?;
                    Some(v.try_into().ok()?)
                };
                let p = PathBuf::from(p);
                if stamp(&p) != s {
                    return None;
                }
                w.dirs.push((p, s));
            }
            _ => return None,
        }
    }
    Some(w)
}

/// Keep `w` (made below `top`, started at `started`) when every directory
/// it read had settled.
pub fn save(home: &Path, top: &Path, bounds: &str, w: &Walk, started: SystemTime) {
    let Some(before) = started
        .checked_sub(SETTLE)
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
    else {
        return;
    };
    let before = (before.as_secs() as i64, i64::from(before.subsec_nanos()));
    let settled = w
        .dirs
        .iter()
        .all(|(_, s)| s.is_some_and(|s| (s[2], s[3]) < before && (s[4], s[5]) < before));
    if !settled {
        return;
    }
    let Some(top_s) = top.to_str() else { return };
    let mut out = format!(
        "{}\ntop {top_s}\ncomplete {}\n",
        header(bounds),
        u8::from(w.complete)
    );
    let line = |p: &Path| p.to_str().filter(|s| !s.contains('\n')).map(str::to_owned);
    for (p, s) in &w.dirs {
        let Some(p) = line(p) else { return };
        let s = s.map_or("-".to_string(), |s| {
            s.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
        });
        out.push_str(&format!("d {s} {p}\n"));
    }
    for (k, ps) in [("c", &w.claudes), ("l", &w.links)] {
        for p in ps {
            let Some(p) = line(p) else { return };
            out.push_str(&format!("{k} {p}\n"));
        }
    }
    write(home, top, bounds, &out);
}
