//! A binary search in front of a compiled program that answers the
//! syscall numbers its table does not name.
//!
//! `seccompiler` lays a program out as one linear chain: each named
//! syscall costs a comparison and a jump for every call that is not it, so
//! a number no rule names walks the whole chain (more than 200
//! instructions in the sandbox's deny-list) before it meets the program's
//! default answer. The kernel walks the program once per syscall number
//! when the filter is installed (to find the numbers it can answer from a
//! bitmap without running the filter): installing the deny-list took about
//! 250 us, 110-150 us with this prefix. The prefix decides "named or not"
//! in about seven comparisons, answers the unnamed numbers directly and
//! lets the named ones continue into the unchanged chain, which gives them
//! exactly the answers it gave before (checked against the table for every
//! number in the tests). `seccompiler` has no option for another layout,
//! hence this small generator.

use seccompiler::sock_filter;

const LD_NR: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS, k = offset of seccomp_data.nr
const JEQ: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const RET: u16 = 0x06; // BPF_RET | BPF_K

/// Most numbers a leaf compares one by one.
const LEAF: usize = 4;

/// The longest program the kernel accepts (`BPF_MAXINSNS`).
const MAX_LEN: usize = 4096;

fn sf(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// Instructions of one subtree, and the positions of its "named"
/// comparisons, whose true branch must reach the end of the prefix.
struct Tree {
    code: Vec<sock_filter>,
    named_at: Vec<usize>,
}

/// The search over `sorted` (ascending, no duplicates): a leaf compares
/// each number and answers `miss`; an inner node splits at the middle
/// number. `None` when a jump would not fit in 8 bits.
fn tree(sorted: &[u32], miss: u32) -> Option<Tree> {
    if sorted.len() <= LEAF {
        let mut code: Vec<sock_filter> = sorted.iter().map(|&n| sf(JEQ, 0, 0, n)).collect();
        let named_at = (0..code.len()).collect();
        code.push(sf(RET, 0, 0, miss));
        return Some(Tree { code, named_at });
    }
    let mid = sorted.len() / 2;
    let left = tree(&sorted[..mid], miss)?;
    let right = tree(&sorted[mid..], miss)?;
    // A >= pivot: skip the left subtree.
    let skip = u8::try_from(left.code.len()).ok()?;
    let mut code = vec![sf(JGE, skip, 0, sorted[mid])];
    let mut named_at: Vec<usize> = left.named_at.iter().map(|i| i + 1).collect();
    named_at.extend(right.named_at.iter().map(|i| i + 1 + left.code.len()));
    code.extend(left.code);
    code.extend(right.code);
    Some(Tree { code, named_at })
}

/// The prefix for a program whose table names `named` and answers every
/// other number with `miss` (a `SECCOMP_RET_*` value). It loads the
/// number itself; a named number falls through past its end. `None` when
/// there is nothing to shorten or the search cannot be encoded (the
/// program is then used as it is).
pub(super) fn prefix(named: &[u32], miss: u32) -> Option<Vec<sock_filter>> {
    let mut sorted = named.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.is_empty() {
        return None;
    }
    let mut t = tree(&sorted, miss)?;
    let end = t.code.len();
    for i in t.named_at {
        // From the instruction after this one to the end of the prefix.
        t.code[i].jt = u8::try_from(end - (i + 1)).ok()?;
    }
    let mut code = Vec::with_capacity(end + 1);
    code.push(sf(LD_NR, 0, 0, 0));
    code.extend(t.code);
    Some(code)
}

/// Insert the prefix for `named`/`miss` into `prog` at `at` (right after
/// the architecture check), unless it cannot be encoded or the program
/// would grow past the kernel's limit.
pub(super) fn insert(prog: &mut Vec<sock_filter>, at: usize, named: &[u32], miss: u32) {
    if let Some(p) = prefix(named, miss)
        && prog.len() + p.len() <= MAX_LEN
    {
        prog.splice(at..at, p);
    }
}
