//! Resource limits, soft = hard.

use rustix::process::{Resource, Rlimit};

/// A resource limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `RLIMIT_AS`: address space.
    As,
    /// `RLIMIT_DATA`: data segment and private mappings.
    Data,
    /// `RLIMIT_NPROC`: processes (and threads) of the real uid.
    Nproc,
    /// `RLIMIT_FSIZE`: largest file written.
    Fsize,
    /// `RLIMIT_CORE`: core dump size.
    Core,
    /// `RLIMIT_NOFILE`: highest descriptor number + 1.
    Nofile,
    /// `RLIMIT_MEMLOCK`: locked memory.
    Memlock,
    /// `RLIMIT_MSGQUEUE`: POSIX message queue bytes.
    Msgqueue,
}

impl Limit {
    /// The kernel's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Limit::As => "RLIMIT_AS",
            Limit::Data => "RLIMIT_DATA",
            Limit::Nproc => "RLIMIT_NPROC",
            Limit::Fsize => "RLIMIT_FSIZE",
            Limit::Core => "RLIMIT_CORE",
            Limit::Nofile => "RLIMIT_NOFILE",
            Limit::Memlock => "RLIMIT_MEMLOCK",
            Limit::Msgqueue => "RLIMIT_MSGQUEUE",
        }
    }

    fn resource(self) -> Resource {
        match self {
            Limit::As => Resource::As,
            Limit::Data => Resource::Data,
            Limit::Nproc => Resource::Nproc,
            Limit::Fsize => Resource::Fsize,
            Limit::Core => Resource::Core,
            Limit::Nofile => Resource::Nofile,
            Limit::Memlock => Resource::Memlock,
            Limit::Msgqueue => Resource::Msgqueue,
        }
    }
}

/// Set `limit` to `value` (soft and hard) for the calling process. A
/// lowered hard limit cannot be raised again without `CAP_SYS_RESOURCE`.
pub fn set(limit: Limit, value: u64) -> std::io::Result<()> {
    Ok(rustix::process::setrlimit(
        limit.resource(),
        Rlimit {
            current: Some(value),
            maximum: Some(value),
        },
    )?)
}
