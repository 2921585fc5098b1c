//! The record of directories that sandboxed runs were allowed to write,
//! kept so that a later run does not trust configuration a sandboxed
//! command could have written.
//!
//! Only `<workspace>/skarn.toml` is protected during a run. A command can
//! still write `sub/skarn.toml` (and `sub/.git`, which makes `sub` a
//! workspace of its own), and a later run from `sub` would read it as the
//! user's settings: network, grants, kept variables. So every run appends
//! its workspace and write grants to a log in Skarn's state directory
//! (which no sandboxed command can write: it is a secret path, never
//! granted), and a workspace configuration file that lies strictly inside
//! a recorded workspace, or anywhere inside a recorded write grant, is not
//! trusted. A file at a recorded workspace's root was protected in that
//! run, and stays trusted unless it is also inside some other record.
//!
//! The format is one line per directory: `workspace<TAB>path` or
//! `write<TAB>path`, with `\` and newline escaped. It is append-only and
//! deduplicated on reading; past [`MAX_BYTES`] it is rewritten without
//! duplicates (newest kept).

use std::io::Write;
use std::path::{Path, PathBuf};

/// Size past which the log is compacted.
pub(crate) const MAX_BYTES: u64 = 256 * 1024;

/// What a recorded directory was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A run's workspace (its root `skarn.toml` was protected).
    Workspace,
    /// A write grant: everything under it was writable.
    Write,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Workspace => "workspace",
            Kind::Write => "write",
        }
    }
}

/// The directories recorded so far.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct GrantLog {
    /// Oldest first, without duplicates.
    pub roots: Vec<(Kind, PathBuf)>,
    /// The file it was read from.
    pub file: Option<PathBuf>,
}

/// `<home>/.local/state/skarn/granted-dirs`. Not under `$XDG_STATE_HOME`:
/// that may name a directory a run can write (the workspace), while
/// `~/.local/state/skarn` is a secret path no run is granted.
pub fn log_path(home: Option<&Path>) -> Option<PathBuf> {
    Some(home?.join(".local/state/skarn/granted-dirs"))
}

pub(crate) fn escape(p: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for &b in p.as_os_str().as_encoded_bytes() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b => out.push(b),
        }
    }
    out
}

#[cfg(unix)]
pub(crate) fn unescape(s: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match (s[i], s.get(i + 1)) {
            (b'\\', Some(b'n')) => {
                out.push(b'\n');
                i += 2;
            }
            (b'\\', Some(b'\\')) => {
                out.push(b'\\');
                i += 2;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

#[cfg(not(unix))]
pub(crate) fn unescape(s: &[u8]) -> PathBuf {
    PathBuf::from(
        String::from_utf8_lossy(s)
            .replace("\\n", "\n")
            .replace("\\\\", "\\"),
    )
}

/// Record the workspace and write grants of `policy` (canonical already)
/// in the log of `home`, before the command starts, so that later runs
/// do not trust configuration it may leave inside them. Every caller that
/// starts a sandboxed command records through here ([`crate::prepare`]).
/// Returns warnings for the caller to show: nothing is recorded without
/// an existing home (a `HOME` naming a missing directory is never
/// created), or when the log cannot be written.
pub(crate) fn record_policy(policy: &crate::Policy, home: Option<&Path>) -> Vec<String> {
    let Some(file) = log_path(home.filter(|h| h.is_dir())) else {
        return vec![
            "HOME is unset or not an existing directory: this run's writable directories \
             are not recorded"
                .into(),
        ];
    };
    let mut dirs = vec![(Kind::Workspace, policy.workspace.clone())];
    dirs.extend(policy.write.iter().map(|g| (Kind::Write, g.path.clone())));
    let mut warnings = Vec::new();
    if dirs.iter().any(|(_, d)| file.starts_with(d)) {
        warnings.push(format!(
            "the record of writable directories ({}) lies inside this run's writable \
             directories: a command may change it",
            file.display()
        ));
    }
    if let Err(e) = GrantLog::record(&file, &dirs) {
        warnings.push(format!(
            "cannot record this run's writable directories in {}: {e}; a later run may \
             trust a skarn.toml this run writes below its workspace",
            file.display()
        ));
    }
    warnings
}

fn line(kind: Kind, p: &Path) -> Vec<u8> {
    let mut l = kind.word().as_bytes().to_vec();
    l.push(b'\t');
    l.extend(escape(p));
    l.push(b'\n');
    l
}

impl GrantLog {
    /// Read the log (missing or unreadable: empty; bad lines skipped).
    pub fn load(file: &Path) -> GrantLog {
        let bytes = std::fs::read(file).unwrap_or_default();
        let mut log = GrantLog {
            file: Some(file.to_path_buf()),
            ..GrantLog::default()
        };
        let mut all = Vec::new();
        for l in bytes.split(|b| *b == b'\n') {
            let Some(tab) = l.iter().position(|b| *b == b'\t') else {
                continue;
            };
            let kind = match &l[..tab] {
                b"workspace" => Kind::Workspace,
                b"write" => Kind::Write,
                _ => continue,
            };
            let p = unescape(&l[tab + 1..]);
            if p.is_absolute() {
                all.push((kind, p));
            }
        }
        // Without duplicates, each where it was last recorded.
        let mut seen = std::collections::HashSet::new();
        let mut newest_first: Vec<(Kind, PathBuf)> = all
            .into_iter()
            .rev()
            .filter(|e| seen.insert(e.clone()))
            .collect();
        newest_first.reverse();
        log.roots = newest_first;
        log
    }

    fn add(&mut self, kind: Kind, p: PathBuf) {
        self.roots.retain(|(k, q)| !(*k == kind && *q == p));
        self.roots.push((kind, p));
    }

    /// Append `dirs` to the log at `file` (creating it and its directory,
    /// owner-only), compacting it past [`MAX_BYTES`].
    pub fn record(file: &Path, dirs: &[(Kind, PathBuf)]) -> std::io::Result<()> {
        let mut log = GrantLog::load(file);
        let new: Vec<&(Kind, PathBuf)> = dirs.iter().filter(|d| !log.roots.contains(d)).collect();
        if new.is_empty() {
            return Ok(());
        }
        if let Some(dir) = file.parent() {
            create_private_dir(dir)?;
        }
        let mut text = Vec::new();
        for (k, p) in &new {
            text.extend(line(*k, p));
        }
        let mut f = open_append(file)?;
        f.write_all(&text)?;
        if f.metadata()?.len() > MAX_BYTES {
            for (k, p) in &new {
                log.add(*k, p.clone());
            }
            log.compact(file, &new)?;
        }
        Ok(())
    }

    /// Rewrite the file with the newest entries that fit in half of
    /// [`MAX_BYTES`], leaving out first the directories that no longer
    /// exist (what a run wrote inside one went with it; a directory made
    /// there later is no run's: issue 30, test runs' temporary
    /// directories filled the log and pushed out live ones).
    /// (The entries `now` being recorded stay either way: this run may
    /// make its grant.)
    fn compact(&self, file: &Path, now: &[&(Kind, PathBuf)]) -> std::io::Result<()> {
        let mut kept: Vec<Vec<u8>> = Vec::new();
        let mut size = 0;
        for (k, p) in self
            .roots
            .iter()
            .rev()
            .filter(|e| now.contains(e) || std::fs::symlink_metadata(&e.1).is_ok())
        {
            let l = line(*k, p);
            size += l.len() as u64;
            if size > MAX_BYTES / 2 {
                break;
            }
            kept.push(l);
        }
        let tmp = file.with_extension(format!("tmp-{}", std::process::id()));
        std::fs::write(&tmp, kept.into_iter().rev().flatten().collect::<Vec<u8>>())?;
        std::fs::rename(&tmp, file)
    }

    /// The recorded directory through which an earlier sandboxed run could
    /// have written `file` (a configuration file about to be trusted), if
    /// any: a workspace it lies strictly inside (not at its root, which
    /// was protected), or a write grant it lies in.
    pub fn writable_by_earlier_runs(&self, file: &Path) -> Option<&Path> {
        let dir = file.parent()?;
        self.roots.iter().find_map(|(k, root)| {
            let inside = match k {
                Kind::Workspace => dir.starts_with(root) && dir != root,
                Kind::Write => file.starts_with(root),
            };
            inside.then_some(root.as_path())
        })
    }
}

#[cfg(unix)]
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

fn open_append(file: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    o.open(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_configs_in_recorded_dirs_are_not_trusted() {
        let t = skarn_test_support::TempDir::new("granted");
        let f = t.path().join("state/skarn/granted-dirs");
        GrantLog::record(
            &f,
            &[
                (Kind::Workspace, PathBuf::from("/ws")),
                (Kind::Write, PathBuf::from("/out")),
            ],
        )
        .unwrap();
        // Again: no duplicate lines.
        GrantLog::record(&f, &[(Kind::Workspace, PathBuf::from("/ws"))]).unwrap();
        let log = GrantLog::load(&f);
        assert_eq!(log.roots.len(), 2, "{log:?}");
        let w = |p: &str| log.writable_by_earlier_runs(Path::new(p));
        assert_eq!(w("/ws/skarn.toml"), None, "the root one was protected");
        assert_eq!(w("/ws/sub/skarn.toml"), Some(Path::new("/ws")));
        assert_eq!(w("/ws/a/b/skarn.toml"), Some(Path::new("/ws")));
        assert_eq!(w("/out/skarn.toml"), Some(Path::new("/out")));
        assert_eq!(w("/wsx/skarn.toml"), None);
        assert_eq!(w("/elsewhere/skarn.toml"), None);
    }

    #[cfg(unix)]
    #[test]
    fn odd_paths_round_trip_and_the_log_stays_bounded() {
        let t = skarn_test_support::TempDir::new("granted2");
        let f = t.path().join("granted-dirs");
        let odd = PathBuf::from("/a\nworkspace\t/b\\c");
        GrantLog::record(&f, &[(Kind::Write, odd.clone())]).unwrap();
        let log = GrantLog::load(&f);
        assert_eq!(log.roots, vec![(Kind::Write, odd)]);
        let w = t.path().join("w");
        let many: Vec<(Kind, PathBuf)> = (0..4000)
            .map(|i| (Kind::Workspace, w.join(format!("{i:080}"))))
            .collect();
        for (_, d) in &many {
            std::fs::create_dir_all(d).unwrap();
        }
        GrantLog::record(&f, &many).unwrap();
        assert!(std::fs::metadata(&f).unwrap().len() <= MAX_BYTES + 200);
        let log = GrantLog::load(&f);
        // The newest is kept.
        assert_eq!(log.roots.last().unwrap().1, w.join(format!("{:080}", 3999)));
        // A compaction leaves out the directories gone first: an old one
        // that still exists stays, newer gone ones go.
        let f = t.path().join("granted-dirs-2");
        let old = t.dir("old-ws");
        GrantLog::record(&f, &[(Kind::Write, old.clone())]).unwrap();
        let gone: Vec<(Kind, PathBuf)> = (0..4000)
            .map(|i| (Kind::Workspace, PathBuf::from(format!("/gone/{i:080}"))))
            .collect();
        for batch in gone.chunks(100) {
            GrantLog::record(&f, batch).unwrap();
        }
        let log = GrantLog::load(&f);
        assert!(
            log.roots.contains(&(Kind::Write, old)),
            "{}",
            log.roots.len()
        );
    }
}
