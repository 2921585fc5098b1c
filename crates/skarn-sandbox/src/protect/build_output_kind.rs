//! What a build output is, by its content (issue 22, eighth round): a
//! file whose first bytes are those of a compiled object — ELF (objects,
//! archives' members, shared objects, programs), an `ar` archive (`.a`,
//! `.rlib`), a Java class, LLVM bitcode, WebAssembly, a GCC precompiled
//! header, Mach-O or a PE/COFF image. Time-stamp build tools (make,
//! ninja, scons, javac) link such a file when it is newer than its
//! sources; nobody writes one by hand, so one the run made or changed is
//! dated 1970 wherever it lies (a workspace that is no git repository,
//! the direct mode) and the host's next build makes it again. A text
//! file is not judged here (a new source must stay newer than the
//! outputs the host has).

use std::path::Path;

/// The magic numbers of compiled objects (prefixes).
const MAGICS: &[&[u8]] = &[
    b"\x7fELF",
    b"!<arch>\n",
    b"!<thin>\n",
    b"\xca\xfe\xba\xbe",
    b"BC\xc0\xde",
    b"\xde\xc0\x17\x0b",
    b"\0asm",
    b"gpch",
    b"\xcf\xfa\xed\xfe",
    b"\xce\xfa\xed\xfe",
    b"MZ",
];

/// Whether the regular file `p` (never through a link) starts like a
/// compiled object.
pub fn is_object(p: &Path) -> bool {
    use std::io::Read;
    let Some(mut f) = open_regular(p) else {
        return false;
    };
    let mut head = [0u8; 8];
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    starts_like_object(&head[..n])
}

/// Whether `head` (a file's first bytes) is a compiled object's.
pub fn starts_like_object(head: &[u8]) -> bool {
    MAGICS.iter().any(|m| head.starts_with(m))
}

/// Set the modification time of the regular file `p` (never through a
/// link) to the epoch; `true` when done.
pub fn date_old(p: &Path) -> bool {
    let Some(f) = open_regular(p) else {
        return false;
    };
    let t = std::time::UNIX_EPOCH;
    f.set_times(std::fs::FileTimes::new().set_modified(t).set_accessed(t))
        .is_ok()
}

/// `p` opened for reading if it is a regular file, never through a link
/// (and without blocking on a FIFO).
fn open_regular(p: &Path) -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(p)
        .ok()?;
    f.metadata().is_ok_and(|m| m.is_file()).then_some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_known_by_their_first_bytes() {
        assert!(starts_like_object(b"\x7fELF\x02\x01\x01\0"));
        assert!(starts_like_object(b"!<arch>\nx"));
        assert!(starts_like_object(b"\xca\xfe\xba\xbe\0\0"));
        assert!(!starts_like_object(b"int main"));
        assert!(!starts_like_object(b""));
    }
}
