//! Reading a small configuration file the way a protection must: never
//! through a link, never blocking on a FIFO, never more than [`MAX_FILE`].
//! Used by git's configuration reader and the virtual-environment guard.

/// Largest file read.
pub const MAX_FILE: u64 = 1 << 20;

/// The bytes of a regular file of at most [`MAX_FILE`], opened without
/// following a link or blocking on a FIFO: `Ok(None)` when it does not
/// exist, `Err` with why when it is not such a file.
pub fn read_bytes(p: &std::path::Path) -> Result<Option<Vec<u8>>, &'static str> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(p)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err("a symbolic link"),
        Err(_) => return Err("unreadable"),
    };
    match f.metadata() {
        Ok(m) if !m.is_file() => return Err("not a regular file"),
        Ok(m) if m.len() > MAX_FILE => return Err("larger than 1 MiB"),
        Ok(_) => {}
        Err(_) => return Err("unreadable"),
    }
    let mut bytes = Vec::new();
    f.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| "unreadable")?;
    if bytes.len() as u64 > MAX_FILE {
        return Err("larger than 1 MiB");
    }
    Ok(Some(bytes))
}
