//! Reading the user's CA files for a run (atk27i F3, F4, F7): decided by
//! what the file is, not by the variable that names it.
//!
//! A CA file or directory is taken only when no sandboxed run could have
//! written it or redirected it: the path is resolved here, link by link,
//! and refused when a link on the way, or the file reached, lies in a
//! place some run may write ([`Places`]: this run's writable grants, every
//! workspace and write grant of earlier runs in the record
//! `~/.local/state/skarn/granted-dirs`, Skarn's stores under
//! `~/.local/state`, the per-run host temporary directories of runs
//! without a mount namespace). The file reached must be a regular file
//! owned by the user or root and not writable by others. It is opened
//! without following links, and only the certificates in it are kept
//! ([`skarn_egress::root_pem::certificates_only`]): a file that is not a
//! CA bundle yields nothing, whatever it holds.
//!
//! The rest of the home is not such a place (a run's home is a private
//! tmpfs): a CA kept there (mkcert's, a corporate CA in `~/certs`) works.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// The most bytes read from one file or directory.
const MAX_BYTES: u64 = 8 << 20;
/// The most links followed while resolving one path.
const MAX_LINKS: usize = 40;

/// Directories some sandboxed run may write.
#[derive(Debug, Default)]
pub struct Places {
    dirs: Vec<(PathBuf, String)>,
    /// Each existing place's directory identity (device, inode): the same
    /// tree through another mount (a bind-mount alias of the workspace)
    /// has another name but the same identity (atk27k F18).
    ids: Vec<((u64, u64), PathBuf)>,
}

/// The (device, inode) of what `p` names, following links.
#[cfg(unix)]
fn identity(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(_p: &Path) -> Option<(u64, u64)> {
    None
}

impl Places {
    /// This run's `writable` grants, the record of earlier runs' writable
    /// directories and Skarn's stores of `home`.
    pub fn new(writable: &[PathBuf], home: Option<&Path>) -> Places {
        let mut dirs = Vec::new();
        let mut add = |p: &Path, why: &str| {
            dirs.push((p.to_path_buf(), why.to_string()));
            if let Ok(c) = std::fs::canonicalize(p)
                && c != p
            {
                dirs.push((c, why.to_string()));
            }
        };
        for w in writable {
            add(w, "a writable grant of this run");
        }
        if let Some(h) = home {
            add(
                &h.join(".local/state/skarn"),
                "skarn's state, where runs keep their stores",
            );
            add(
                &h.join(".local/state/skarn-servers"),
                "the gateway servers' state",
            );
            if let Some(f) = crate::policy::granted::log_path(Some(h)) {
                let log = crate::policy::granted::GrantLog::load(&f);
                for (_, root) in log.roots {
                    dirs.push((
                        root,
                        "writable by an earlier run or the agent's file tools (granted-dirs)"
                            .into(),
                    ));
                }
            }
        }
        // Other names of a place, or of a directory inside one, through
        // another mount of its filesystem (`~/dotfiles/bin` bound at
        // `~/bin`: atk27l F10); the identities below catch a place's top
        // only.
        let tops: Vec<PathBuf> = dirs.iter().map(|(d, _)| d.clone()).collect();
        let mounts = crate::protect::mountinfo::read_mountinfo();
        for (name, of) in crate::protect::mountinfo::mount_names(&tops, &mounts) {
            let why = dirs
                .iter()
                .find(|(d, _)| *d == of)
                .map(|(_, w)| w.clone())
                .unwrap_or_default();
            let what = kind(&name);
            dirs.push((
                name,
                format!(
                    "another name (the same {what} through another mount) of {}, which is {why}",
                    of.display()
                ),
            ));
        }
        let mut ids: Vec<((u64, u64), PathBuf)> = Vec::new();
        for (d, _) in &dirs {
            if let Some(id) = identity(d)
                && !ids.iter().any(|(i, _)| *i == id)
            {
                ids.push((id, d.clone()));
            }
        }
        Places { dirs, ids }
    }

    /// Every place by name (each grant, its resolved name, every other
    /// name of it through another mount), with why it is one.
    pub fn names(&self) -> impl Iterator<Item = (&Path, &str)> {
        self.dirs.iter().map(|(d, w)| (d.as_path(), w.as_str()))
    }

    /// Why `p` (a path without links) lies in a place a run may write.
    pub fn inside(&self, p: &Path) -> Option<String> {
        if let Some((d, why)) = self.dirs.iter().find(|(d, _)| p.starts_with(d)) {
            return Some(format!("{} is {why}", d.display()));
        }
        // Another name of such a place: an existing directory on the way
        // with a place's identity (a bind mount of the workspace).
        if !self.ids.is_empty() {
            for a in p.ancestors().filter(|a| a.parent().is_some()) {
                let Some(id) = identity(a) else { continue };
                if let Some((_, d)) = self.ids.iter().find(|(i, _)| *i == id) {
                    let why = self
                        .dirs
                        .iter()
                        .find(|(x, _)| x == d)
                        .map(|(_, w)| w.as_str())
                        .unwrap_or("a place a run may write");
                    return Some(format!(
                        "{} is another name (the same {} through another mount) of {}, \
                         which is {why}",
                        a.display(),
                        kind(a),
                        d.display()
                    ));
                }
            }
        }
        // A name through another mount of a directory below such a place
        // (a bind mount of the workspace's `bin`, atk27k F18b).
        #[cfg(target_os = "linux")]
        for (name, _) in crate::protect::mount_aliases::other_names(&[p.to_path_buf()]) {
            if let Some((d, why)) = self.dirs.iter().find(|(d, _)| name.starts_with(d)) {
                return Some(format!(
                    "{} is another name (through another mount) of {}, in {}, which is {why}",
                    p.display(),
                    name.display(),
                    d.display()
                ));
            }
        }
        // The host temporary directory of a run without a mount namespace.
        for tmp in [PathBuf::from("/tmp"), std::env::temp_dir()] {
            if let Ok(rest) = p.strip_prefix(&tmp)
                && let Some(Component::Normal(first)) = rest.components().next()
                && first.as_encoded_bytes().starts_with(b"skarn-tmp-")
            {
                return Some(format!(
                    "{} is a run's temporary directory",
                    tmp.join(first).display()
                ));
            }
        }
        None
    }
}

/// What `p` is, for a message: a bind mount may name a single file
/// (atk27m H2).
fn kind(p: &Path) -> &'static str {
    match std::fs::symlink_metadata(p) {
        Ok(m) if !m.is_dir() => "file",
        _ => "directory",
    }
}

/// `p` resolved link by link (relative to the current directory); an
/// error naming why when a link on the way lies in `places`, or the path
/// reached does, or it cannot be resolved.
pub fn resolve(p: &Path, places: &Places) -> Result<PathBuf, String> {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?
            .join(p)
    };
    let mut todo: Vec<PathBuf> = Vec::new();
    push_components(&mut todo, &abs);
    let mut cur = PathBuf::from("/");
    let mut links = 0;
    while let Some(c) = todo.pop() {
        let name = c.as_os_str();
        if name == OsStr::new("/") {
            cur = PathBuf::from("/");
            continue;
        }
        if name == OsStr::new("..") {
            cur.pop();
            continue;
        }
        let next = cur.join(name);
        let md = std::fs::symlink_metadata(&next)
            .map_err(|e| format!("cannot read {}: {e}", next.display()))?;
        if !md.file_type().is_symlink() {
            cur = next;
            continue;
        }
        if let Some(why) = places.inside(&next) {
            return Err(format!(
                "it goes through the link {}, and {why}",
                next.display()
            ));
        }
        links += 1;
        if links > MAX_LINKS {
            return Err("too many links".into());
        }
        let target = std::fs::read_link(&next)
            .map_err(|e| format!("cannot read the link {}: {e}", next.display()))?;
        push_components(&mut todo, &target);
    }
    if let Some(why) = places.inside(&cur) {
        return Err(format!("{} is there, and {why}", cur.display()));
    }
    Ok(cur)
}

/// Queue `p`'s components (last first, so that the first pops first);
/// `/` restarts from the root.
fn push_components(todo: &mut Vec<PathBuf>, p: &Path) {
    for c in p.components().rev() {
        match c {
            Component::RootDir => todo.push(PathBuf::from("/")),
            Component::ParentDir => todo.push(PathBuf::from("..")),
            Component::Normal(n) => todo.push(PathBuf::from(n)),
            Component::CurDir | Component::Prefix(_) => {}
        }
    }
}

/// The certificates of the file `p`, vetted as the module says.
pub fn read_file(p: &Path, places: &Places) -> Result<String, String> {
    let real = resolve(p, places)?;
    let text = read_vetted(&real, MAX_BYTES)?;
    Ok(skarn_egress::root_pem::certificates_only(&text))
}

/// The certificates of the files in directory `d` (each vetted as the
/// module says; others skipped).
pub fn read_dir(d: &Path, places: &Places) -> Result<String, String> {
    let real = resolve(d, places)?;
    let rd = std::fs::read_dir(&real).map_err(|e| format!("cannot list it: {e}"))?;
    let mut names: Vec<PathBuf> = rd.flatten().map(|e| real.join(e.file_name())).collect();
    names.sort();
    let mut text = Vec::new();
    for f in names {
        let room = MAX_BYTES.saturating_sub(text.len() as u64);
        if let Ok(t) = resolve(&f, places).and_then(|r| read_vetted(&r, room)) {
            text.extend(t);
            text.push(b'\n');
        }
    }
    Ok(skarn_egress::root_pem::certificates_only(&text))
}

/// The bytes of `real` (a path without links), opened without following
/// a link, if it is a regular file of the user or root that others
/// cannot write, of at most `room` bytes.
#[cfg(unix)]
fn read_vetted(real: &Path, room: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(real)
        .map_err(|e| format!("cannot open {}: {e}", real.display()))?;
    let md = f.metadata().map_err(|e| e.to_string())?;
    if !md.is_file() {
        return Err(format!("{} is not a regular file", real.display()));
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if md.uid() != me && md.uid() != 0 {
        return Err(format!("{} belongs to another user", real.display()));
    }
    if md.mode() & 0o002 != 0 {
        return Err(format!("{} is writable by every user", real.display()));
    }
    if md.len() > room {
        return Err(format!("{} is too large", real.display()));
    }
    let mut buf = Vec::new();
    f.take(room)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read {}: {e}", real.display()))?;
    Ok(buf)
}

#[cfg(not(unix))]
fn read_vetted(_real: &Path, _room: u64) -> Result<Vec<u8>, String> {
    Err("not supported on this platform".into())
}

#[cfg(test)]
#[path = "root_files_tests.rs"]
mod tests;
