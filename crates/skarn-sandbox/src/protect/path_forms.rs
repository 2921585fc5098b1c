//! Where the kernel will find a `PATH` directory that does not exist yet
//! (attack atk22j F4). The caller's `PATH` may name the workspace through
//! a link the host has (`~/src -> /data/src`, then `~/src/proj/bin`), a
//! dangling link (`bin -> build/bin`) or a `..` after a missing name
//! (`proj/x/../bin`): compared as text with the workspace's canonical
//! path, none was a missing `PATH` directory of the grant, and the
//! program a run put there shadowed the host's. Each entry is resolved as
//! the kernel resolves it: the links of its existing part followed (a
//! link's text continues the walk, dangling or not), the missing rest
//! kept.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Links followed per entry, at most (the kernel's own bound).
const MAX_LINKS: usize = 40;

/// The places the missing `PATH` directory `p` (absolute) names: the
/// existing part resolved, then the missing rest as written (a link made
/// at or above any of it is a link above the directory), and the same
/// with the rest's `.` and `..` folded (exactly where the kernel will look
/// once the run makes the missing names plain directories). Empty when
/// `p` exists, is relative, or its links loop.
pub fn missing_forms(p: &Path) -> Vec<PathBuf> {
    if !p.is_absolute() || std::fs::metadata(p).is_ok() {
        return Vec::new();
    }
    let mut queue: VecDeque<OsString> = VecDeque::new();
    push_front(&mut queue, p);
    let mut cur = PathBuf::from("/");
    let mut links = 0;
    while let Some(c) = queue.pop_front() {
        match c.to_str() {
            Some("/") => cur = PathBuf::from("/"),
            Some(".") => {}
            Some("..") => {
                cur.pop();
            }
            _ => {
                let next = cur.join(&c);
                match std::fs::symlink_metadata(&next) {
                    Ok(m) if m.file_type().is_symlink() => {
                        links += 1;
                        let Ok(t) = std::fs::read_link(&next) else {
                            return Vec::new();
                        };
                        if links > MAX_LINKS {
                            return Vec::new();
                        }
                        push_front(&mut queue, &t);
                    }
                    Ok(_) => cur = next,
                    Err(_) => {
                        let mut raw = next.clone();
                        let mut folded = next;
                        for r in &queue {
                            raw.push(r);
                            match r.to_str() {
                                Some(".") => {}
                                Some("..") => {
                                    folded.pop();
                                }
                                _ => folded.push(r),
                            }
                        }
                        let mut out = vec![raw];
                        if !out.contains(&folded) {
                            out.push(folded);
                        }
                        return out;
                    }
                }
            }
        }
    }
    Vec::new()
}

/// Put the components of `p` in front of `queue` (a root as `/`).
fn push_front(queue: &mut VecDeque<OsString>, p: &Path) {
    let parts: Vec<OsString> = p
        .components()
        .filter_map(|c| match c {
            Component::RootDir => Some(OsString::from("/")),
            Component::CurDir => Some(OsString::from(".")),
            Component::ParentDir => Some(OsString::from("..")),
            Component::Normal(n) => Some(n.to_os_string()),
            Component::Prefix(_) => None,
        })
        .collect();
    for c in parts.into_iter().rev() {
        queue.push_front(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_entries_are_resolved_as_the_kernel_will() {
        let t = skarn_test_support::TempDir::new("path-forms");
        let d = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(d.join("ws/real")).unwrap();
        std::os::unix::fs::symlink("ws", d.join("wslink")).unwrap();
        std::os::unix::fs::symlink("build/bin", d.join("ws/bin")).unwrap();
        std::os::unix::fs::symlink("../ws/real", d.join("ws/up")).unwrap();
        let ws = d.join("ws");
        // Through a link of the host's.
        assert_eq!(
            missing_forms(&d.join("wslink/tools")),
            vec![ws.join("tools")]
        );
        assert_eq!(
            missing_forms(&d.join("wslink/node_modules/.bin")),
            vec![ws.join("node_modules/.bin")]
        );
        // A `..` after a missing name: as written, and folded.
        assert_eq!(
            missing_forms(&d.join("wslink/x/../tools")),
            vec![ws.join("x/../tools"), ws.join("tools")]
        );
        // A dangling link continues with its text.
        assert_eq!(missing_forms(&d.join("ws/bin")), vec![ws.join("build/bin")]);
        // A `..` after an existing link: the kernel's parent of its target.
        assert_eq!(missing_forms(&d.join("ws/up/../t")), vec![ws.join("t")]);
        // Existing, relative: none.
        assert!(missing_forms(&ws.join("real")).is_empty());
        assert!(missing_forms(Path::new("rel/bin")).is_empty());
        // A loop.
        std::os::unix::fs::symlink("loop", d.join("ws/loop")).unwrap();
        assert!(missing_forms(&d.join("ws/loop/bin")).is_empty());
    }
}
