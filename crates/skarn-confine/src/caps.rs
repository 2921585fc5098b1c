//! Capabilities: the bounding set, the ambient set, and the
//! effective/permitted/inheritable sets of the calling thread.

use rustix::io::Errno;
use rustix::thread::{CapabilitySet, CapabilitySets};

/// What became of the bounding set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bounding {
    /// Every capability is out of it: no later `execve` can regain one.
    Cleared,
    /// Left as is: the caller lacks `CAP_SETPCAP` (an unprivileged process
    /// outside a user namespace, which holds no capability anyway).
    LeftAsIs,
}

/// Drop every capability from the bounding set, up to the kernel's last
/// one (found at run time: numbers past it give `EINVAL`). Capability
/// numbers are used as raw bits so that capabilities newer than this
/// build are dropped too.
pub fn drop_bounding_set() -> std::io::Result<Bounding> {
    let mut result = Bounding::Cleared;
    for cap in 0..64u32 {
        let one = CapabilitySet::from_bits_retain(1u64 << cap);
        match rustix::thread::remove_capability_from_bounding_set(one) {
            Ok(()) => {}
            Err(Errno::INVAL) => break,
            Err(Errno::PERM) => result = Bounding::LeftAsIs,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(result)
}

/// Clear the ambient set (`PR_CAP_AMBIENT_CLEAR_ALL`). `EINVAL` means a
/// kernel older than ambient capabilities (4.3).
pub fn clear_ambient() -> std::io::Result<()> {
    Ok(rustix::thread::clear_ambient_capability_set()?)
}

/// Empty the effective, permitted and inheritable sets of the calling
/// thread.
pub fn clear_sets() -> std::io::Result<()> {
    Ok(rustix::thread::set_capabilities(
        None,
        CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        },
    )?)
}

/// All three steps: the bounding set where the caller may, the ambient
/// set (a kernel without it is fine), the other sets.
pub fn drop_all() -> std::io::Result<Bounding> {
    let bounding = drop_bounding_set()?;
    match clear_ambient() {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
        r => r?,
    }
    clear_sets()?;
    Ok(bounding)
}
