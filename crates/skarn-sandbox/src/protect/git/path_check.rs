//! Paths and modes as git itself judges them when it writes an index or a
//! tree. Git never re-checks a path it reads from an index (host `git
//! checkout -- .` writes `x/../.git/hooks/pre-commit` where the path
//! leads: attack atk22j F2), and it reads a tree entry's mode as octal
//! digits, so `040000` is a directory (atk22j F1). What a run leaves in an
//! index or a new tree is judged here the way git's checkout acts on it:
//! a path git's own `verify_path` would refuse (with `core.protectHFS` and
//! `core.protectNTFS` both on, the stricter reading) is refused, and a
//! mode is read and made canonical as git's tree reader does.

/// Git's mode types.
const TYPE_MASK: u32 = 0o170000;
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const REGULAR: u32 = 0o100000;
const LINK: u32 = 0o120000;
const DIR: u32 = 0o040000;
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const GITLINK: u32 = 0o160000;

/// A tree entry's mode text read as git's tree reader reads it (octal
/// digits up to the space, wrapping as git's `unsigned int` does) and made
/// canonical (`canon_mode`): a regular file is `100644` or `100755` by its
/// owner's execute bit, a link `120000`, a directory `40000`, and any
/// other type a submodule (`160000`). `None`: git refuses the tree
/// ("malformed mode in tree entry").
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn tree_mode(text: &[u8]) -> Option<u32> {
    if text.is_empty() {
        return None;
    }
    let mut mode: u32 = 0;
    for c in text {
        if !(b'0'..=b'7').contains(c) {
            return None;
        }
        mode = mode.wrapping_shl(3).wrapping_add(u32::from(c - b'0'));
    }
    Some(match mode & TYPE_MASK {
        REGULAR if mode & 0o100 != 0 => 0o100755,
        REGULAR => 0o100644,
        LINK => LINK,
        DIR => DIR,
        _ => GITLINK,
    })
}

/// The canonical text of a mode [`tree_mode`] returned, as git writes it.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn mode_text(mode: u32) -> &'static [u8] {
    match mode {
        0o100755 => b"100755",
        0o100644 => b"100644",
        LINK => b"120000",
        DIR => b"40000",
        _ => b"160000",
    }
}

/// Whether git would write `path` (an index entry's or a tree's full
/// path, `/`-separated) with `mode`: not empty, no leading, doubled or
/// (but for a sparse directory entry) trailing `/`, no `.` or `..`
/// component, no component that is `.git` under another spelling a
/// case-insensitive, HFS+ or NTFS file system would take for it, and for
/// a link no `.gitmodules` under any such spelling.
pub(crate) fn git_accepts(path: &[u8], mode: u32) -> bool {
    let body = match path.strip_suffix(b"/") {
        Some(b) if mode & TYPE_MASK == DIR => b,
        Some(_) => return false,
        None => path,
    };
    if body.is_empty() {
        return false;
    }
    body.split(|c| *c == b'/').all(|c| {
        !c.is_empty()
            && c != b"."
            && c != b".."
            // NTFS reads a backslash as a separator too: each part of
            // the component is judged.
            && c.split(|x| *x == b'\\')
                .all(|part| !dot_git_alias(part, mode & TYPE_MASK == LINK))
    })
}

/// Whether a file system that folds case, drops the code points HFS+
/// ignores, or (NTFS) trailing dots and spaces and a `:stream` suffix,
/// would take `name` for `.git` (or its short name `git~1`), and for a
/// link `.gitmodules` (`gitmod~1`).
fn dot_git_alias(name: &[u8], link: bool) -> bool {
    let text = String::from_utf8_lossy(name);
    let folded: String = text
        .chars()
        .filter(|c| !hfs_ignored(*c))
        .collect::<String>()
        .to_lowercase();
    let ntfs = folded
        .split(':')
        .next()
        .unwrap_or_default()
        .trim_end_matches(['.', ' ']);
    let names: &[&str] = if link {
        &[".git", "git~1", ".gitmodules", "gitmod~1"]
    } else {
        &[".git", "git~1"]
    };
    names.iter().any(|n| folded == *n || ntfs == *n)
}

/// The code points HFS+ leaves out when it compares names.
fn hfs_ignored(c: char) -> bool {
    matches!(c as u32, 0x200c..=0x200f | 0x202a..=0x202e | 0x206a..=0x206f | 0xfeff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_read_and_made_canonical_as_git_does() {
        assert_eq!(tree_mode(b"40000"), Some(0o040000));
        assert_eq!(tree_mode(b"040000"), Some(0o040000));
        assert_eq!(tree_mode(b"0160000"), Some(0o160000));
        assert_eq!(tree_mode(b"0120000"), Some(0o120000));
        assert_eq!(tree_mode(b"100664"), Some(0o100644));
        assert_eq!(tree_mode(b"100700"), Some(0o100755));
        assert_eq!(tree_mode(b"170000"), Some(0o160000));
        assert_eq!(tree_mode(b"10064x"), None);
        assert_eq!(tree_mode(b""), None);
        assert_eq!(mode_text(tree_mode(b"040000").unwrap()), b"40000");
    }

    #[test]
    fn paths_git_refuses_to_write_are_refused() {
        for bad in [
            &b""[..],
            b"/a",
            b"a//b",
            b"a/",
            b"x/../.git/hooks/pre-commit",
            b"./a",
            b"a/.",
            b".git/config",
            b"sub/.GIT/hooks/x",
            b"GIT~1/config",
            b".git./hooks/x",
            b".git /x",
            b".git::$INDEX_ALLOCATION/x",
            b"a\\.git\\hooks",
            ".g\u{200c}it/config".as_bytes(),
        ] {
            assert!(
                !git_accepts(bad, 0o100644),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(!git_accepts(b".gitmodules", 0o120000));
        assert!(git_accepts(b".gitmodules", 0o100644));
        assert!(git_accepts(b"dir/", 0o040000));
        for good in [
            &b"a"[..],
            b".gitignore",
            b"a/.github/x",
            b"..a",
            b"a..",
            b"git",
        ] {
            assert!(
                git_accepts(good, 0o100644),
                "{}",
                String::from_utf8_lossy(good)
            );
        }
    }
}
