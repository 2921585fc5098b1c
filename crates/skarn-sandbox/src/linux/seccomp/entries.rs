//! Building blocks of the deny-list: one constructor per kind of entry,
//! and the join of the family tables into one.

use super::{ArgMatch, SyscallRule};

pub(super) const EPERM: i32 = libc::EPERM;
pub(super) const ENOSYS: i32 = libc::ENOSYS;

/// `name` fails with EPERM, whatever its arguments.
pub(super) const fn deny(name: &'static str, nr: i64, why: &'static str) -> SyscallRule {
    SyscallRule::errno(name, nr, ArgMatch::Any, EPERM, why)
}

/// `name` fails with ENOSYS, what a kernel without it says, so callers
/// fall back to an older call.
pub(super) const fn nosys(name: &'static str, nr: i64, why: &'static str) -> SyscallRule {
    SyscallRule::errno(name, nr, ArgMatch::Any, ENOSYS, why)
}

/// How many rules `tables` hold together.
pub(super) const fn total_len(tables: &[&[SyscallRule]]) -> usize {
    let mut n = 0;
    let mut t = 0;
    while t < tables.len() {
        n += tables[t].len();
        t += 1;
    }
    n
}

/// `tables` one after the other, in order, as one array of their
/// [`total_len`] (evaluated at compile time: a wrong `N` does not build).
pub(super) const fn join<const N: usize>(tables: &[&[SyscallRule]]) -> [SyscallRule; N] {
    // Every slot is overwritten below; this value never survives.
    const UNSET: SyscallRule = SyscallRule::errno("", -1, ArgMatch::Any, 0, "");
    let mut out = [UNSET; N];
    let mut n = 0;
    let mut t = 0;
    while t < tables.len() {
        let mut i = 0;
        while i < tables[t].len() {
            out[n] = tables[t][i];
            n += 1;
            i += 1;
        }
        t += 1;
    }
    assert!(n == N, "N must be the tables' total length");
    out
}
