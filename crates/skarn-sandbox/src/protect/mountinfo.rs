//! `/proc/self/mountinfo`: the mounts of this mount namespace, and the
//! other names a path has through other mounts of its filesystem (a bind
//! mount). A leaf: used by the hiding of secrets' other names
//! ([`crate::protect::secret_names`]) and by
//! [`crate::protect::mount_aliases`].

use std::path::PathBuf;

/// One line of `/proc/self/mountinfo`: device, root inside the
/// filesystem, mount point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mount {
    dev: String,
    root: PathBuf,
    point: PathBuf,
}

impl Mount {
    /// Its device (`major:minor`).
    pub(crate) fn dev(&self) -> &str {
        &self.dev
    }
}

pub(crate) fn read_mountinfo() -> Vec<Mount> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|t| parse_mountinfo(&t))
        .unwrap_or_default()
}

/// The mounts of a `mountinfo` text (fields: id, parent, major:minor,
/// root, mount point, ...; spaces and the like octal-escaped).
pub(crate) fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split(' ');
            let dev = f.nth(2)?.to_owned();
            let root = PathBuf::from(unescape(f.next()?));
            let point = PathBuf::from(unescape(f.next()?));
            Some(Mount { dev, root, point })
        })
        .collect()
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Other names of `hidden` places through other mounts of their
/// filesystem: (the other name, the hidden place).
pub(crate) fn mount_names(hidden: &[PathBuf], mounts: &[Mount]) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for s in hidden {
        // The mount `s` is reached through: the deepest mount point above
        // it (the last one listed there, on top).
        let Some((ci, c)) = mounts
            .iter()
            .enumerate()
            .filter(|(_, m)| s.starts_with(&m.point))
            .max_by_key(|(i, m)| (m.point.components().count(), *i))
        else {
            continue;
        };
        let Ok(rest) = s.strip_prefix(&c.point) else {
            continue;
        };
        let in_fs = c.root.join(rest);
        for (i, m) in mounts.iter().enumerate() {
            if i == ci || m.dev != c.dev {
                continue;
            }
            let name = if m.root.starts_with(&in_fs) {
                m.point.clone()
            } else if let Ok(below) = in_fs.strip_prefix(&m.root) {
                m.point.join(below)
            } else {
                continue;
            };
            if name != *s && !out.iter().any(|(n, _)| *n == name) {
                out.push((name, s.clone()));
            }
        }
    }
    out
}
