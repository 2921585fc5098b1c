//! seccomp-bpf: one rule type and one compile path for both filter modes.
//!
//! A filter is a table of [`SyscallRule`]s owned by its user (the
//! sandbox's deny-list, the worker's allow-list), compiled for the running
//! architecture (x86_64 or aarch64) by [`compile`] with `seccompiler`.
//!
//! Modes ([`Mode`]):
//! - **Deny-list** (default allow): every rule says which errno a matching
//!   call gets; calls no rule matches are allowed. One program is built
//!   per errno value (a `seccompiler` filter has one match action), and the
//!   kernel answers with the most restrictive verdict of all programs.
//!   Numbers above the highest audited syscall fail with `ENOSYS` (what a
//!   kernel without that syscall says), so a syscall added by a later
//!   kernel is not allowed before someone has looked at it.
//! - **Allow-list** (default refuse): rules that allow a call (optionally
//!   only with matching arguments); everything else gets the mode's
//!   refusal, an errno or a kill of the whole process. A rule may instead
//!   answer with an errno (e.g. `clone3` → `ENOSYS`, so libc falls back to
//!   `clone`, whose flags a filter can read): such calls pass the
//!   allow-list program and are answered by an errno program installed
//!   before it.
//!
//! Layout: each program starts with a binary search over the numbers its
//! table names (module `shortcut`): other numbers get the
//! program's default answer after about seven comparisons instead of a
//! walk through `seccompiler`'s linear chain. [`eval`] computes a
//! program's answer to one call in user space, for tests.
//!
//! Foreign-ABI guard, both modes:
//! - `seccompiler` starts every program with an architecture check: a call
//!   made through another ABI of the same CPU (`int 0x80`, the i386 ABI,
//!   on x86_64; AArch32 on aarch64), whose numbers mean other syscalls,
//!   kills the process.
//! - x86_64 only: the x32 ABI shares the x86_64 architecture value and
//!   marks its numbers with bit 30. Right after the architecture check,
//!   such a number gets `ENOSYS` in a deny-list (as on a kernel built
//!   without x32) and the mode's refusal in an allow-list, so neither ABI
//!   can reach the kernel under a number the table does not name.

mod compile;
pub mod eval;
mod shortcut;

pub use compile::{Context, Mode, Refusal, SeccompError, compile, install};
pub use seccompiler::BpfProgram;

/// How wide a comparison is: `Dword` compares the low 32 bits only (file
/// descriptors, `int` flags, pids), `Qword` the whole 64-bit argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// Low 32 bits.
    Dword,
    /// All 64 bits.
    Qword,
}

/// One comparison of a syscall argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    /// Equal to the value.
    Eq(u64),
    /// Different from the value.
    Ne(u64),
    /// `argument & mask == value`.
    MaskedEq {
        /// Bits looked at.
        mask: u64,
        /// Their expected value.
        value: u64,
    },
    /// Equal to the pid of the process the filter is compiled for
    /// ([`Context::own_pid`]).
    EqOwnPid,
}

/// One check on argument `arg` (0 to 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgCheck {
    /// Argument index.
    pub arg: u8,
    /// Comparison width.
    pub width: Width,
    /// The comparison.
    pub cmp: Cmp,
}

impl ArgCheck {
    /// A check on the low 32 bits of argument `arg`.
    pub const fn dword(arg: u8, cmp: Cmp) -> Self {
        Self {
            arg,
            width: Width::Dword,
            cmp,
        }
    }

    /// A check on the whole of argument `arg`.
    pub const fn qword(arg: u8, cmp: Cmp) -> Self {
        Self {
            arg,
            width: Width::Qword,
            cmp,
        }
    }
}

/// Which calls of a syscall a rule matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgMatch {
    /// Every call.
    Any,
    /// Argument `arg` equals one of `values`.
    OneOf {
        /// Argument index.
        arg: u8,
        /// Comparison width.
        width: Width,
        /// Accepted values.
        values: &'static [u64],
    },
    /// Argument `arg` has at least one of the bits in `bits` set (each
    /// entry is one flag).
    AnyBit {
        /// Argument index.
        arg: u8,
        /// Individual flag bits.
        bits: &'static [u64],
    },
    /// Every check holds.
    All(&'static [ArgCheck]),
}

/// What a matching call gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnMatch {
    /// It runs.
    Allow,
    /// It fails with this errno.
    Errno(i32),
}

/// One entry of a filter table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyscallRule {
    /// Syscall name, with the argument pattern when there is one (for
    /// humans and `skarn doctor`).
    pub name: &'static str,
    /// Syscall number on the running architecture.
    pub nr: i64,
    /// Which calls the rule matches.
    pub args: ArgMatch,
    /// What a matching call gets.
    pub on_match: OnMatch,
    /// Why the rule exists.
    pub why: &'static str,
}

impl SyscallRule {
    /// A rule allowing the calls `args` matches.
    pub const fn allow(name: &'static str, nr: i64, args: ArgMatch, why: &'static str) -> Self {
        Self {
            name,
            nr,
            args,
            on_match: OnMatch::Allow,
            why,
        }
    }

    /// A rule failing the calls `args` matches with `errno`.
    pub const fn errno(
        name: &'static str,
        nr: i64,
        args: ArgMatch,
        errno: i32,
        why: &'static str,
    ) -> Self {
        Self {
            name,
            nr,
            args,
            on_match: OnMatch::Errno(errno),
            why,
        }
    }

    /// The errno a matching call gets, if the rule refuses it.
    pub const fn errno_value(&self) -> Option<i32> {
        match self.on_match {
            OnMatch::Allow => None,
            OnMatch::Errno(e) => Some(e),
        }
    }
}
