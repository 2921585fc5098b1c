//! What a compiled program answers for one call, computed in user space:
//! a reference for tests (each rule of a table gets the answer it declares,
//! whatever layout the compiler chose; [`rule_matches`] reads the table
//! directly) and for counting how far a call walks into a program.
//!
//! Only the classic-BPF instructions `seccompiler` and this crate emit are
//! understood (absolute 32-bit loads from `seccomp_data`, `and` with a
//! constant, constant jumps, constant returns); anything else is an error
//! rather than a guess.

use seccompiler::sock_filter;

use super::{ArgCheck, ArgMatch, Cmp, SyscallRule, Width};

/// The call as the kernel shows it to a filter (`struct seccomp_data`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    /// Syscall number.
    pub nr: i32,
    /// `AUDIT_ARCH_*` value of the ABI used.
    pub arch: u32,
    /// Instruction pointer.
    pub ip: u64,
    /// The six arguments.
    pub args: [u64; 6],
}

impl Call {
    /// A call of `nr` through the native ABI of the running CPU with
    /// `args`.
    pub fn native(nr: i64, args: [u64; 6]) -> Self {
        Self {
            nr: nr as i32,
            arch: native_arch(),
            ip: 0,
            args,
        }
    }
}

/// `AUDIT_ARCH_*` of the running CPU's native ABI (0 elsewhere).
pub fn native_arch() -> u32 {
    match std::env::consts::ARCH {
        "x86_64" => 0xC000_003E,
        "aarch64" => 0xC000_00B7,
        _ => 0,
    }
}

/// The answer and the number of instructions run to reach it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// The `SECCOMP_RET_*` value returned.
    pub ret: u32,
    /// Instructions executed, the return included.
    pub steps: usize,
}

/// Why a program could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// An instruction this evaluator does not know.
    #[error("instruction {at}: code {code:#x} not understood")]
    Unknown {
        /// Its index.
        at: usize,
        /// Its opcode.
        code: u16,
    },
    /// A load outside `seccomp_data` or not 4-byte aligned.
    #[error("instruction {at}: load at offset {offset}")]
    BadLoad {
        /// Its index.
        at: usize,
        /// The offset.
        offset: u32,
    },
    /// Control ran past the last instruction.
    #[error("ran past the end of the program")]
    FellOff,
}

fn word(call: &Call, offset: u32) -> Option<u32> {
    if !offset.is_multiple_of(4) {
        return None;
    }
    let half = |v: u64, hi: bool| if hi { (v >> 32) as u32 } else { v as u32 };
    match offset {
        0 => Some(call.nr as u32),
        4 => Some(call.arch),
        8 | 12 => Some(half(call.ip, offset == 12)),
        16..=63 => {
            let i = ((offset - 16) / 8) as usize;
            Some(half(call.args[i], (offset - 16) % 8 == 4))
        }
        _ => None,
    }
}

/// Run `prog` on `call`.
pub fn evaluate(prog: &[sock_filter], call: &Call) -> Result<Verdict, EvalError> {
    let mut a: u32 = 0;
    let mut pc = 0usize;
    let mut steps = 0usize;
    loop {
        let Some(i) = prog.get(pc) else {
            return Err(EvalError::FellOff);
        };
        steps += 1;
        let next = pc + 1;
        let jump = |cond: bool| next + usize::from(if cond { i.jt } else { i.jf });
        pc = match i.code {
            0x20 => {
                a = word(call, i.k).ok_or(EvalError::BadLoad {
                    at: pc,
                    offset: i.k,
                })?;
                next
            }
            0x54 => {
                a &= i.k;
                next
            }
            0x05 => next + i.k as usize,
            0x15 => jump(a == i.k),
            0x25 => jump(a > i.k),
            0x35 => jump(a >= i.k),
            0x45 => jump(a & i.k != 0),
            0x06 => return Ok(Verdict { ret: i.k, steps }),
            code => return Err(EvalError::Unknown { at: pc, code }),
        };
    }
}

/// The kernel's answer when all of `progs` are installed, in this order:
/// the most restrictive action wins and, between equally restrictive
/// ones, the program installed last.
pub fn evaluate_all(progs: &[Vec<sock_filter>], call: &Call) -> Result<u32, EvalError> {
    // Lower action values are more restrictive (SECCOMP_RET_ACTION_FULL,
    // compared as signed, as the kernel does).
    let rank = |r: u32| (r & 0xFFFF_0000) as i32;
    let mut best: Option<u32> = None;
    for p in progs.iter().rev() {
        let r = evaluate(p, call)?.ret;
        if best.is_none_or(|b| rank(r) < rank(b)) {
            best = Some(r);
        }
    }
    Ok(best.unwrap_or(SECCOMP_RET_ALLOW))
}

/// `SECCOMP_RET_ALLOW`.
pub const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
/// `SECCOMP_RET_ERRNO` (the errno goes in the low 16 bits).
pub const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
/// `SECCOMP_RET_KILL_PROCESS`.
pub const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;

fn holds(c: &ArgCheck, v: u64, own_pid: u32) -> bool {
    let v = match c.width {
        Width::Dword => v & 0xFFFF_FFFF,
        Width::Qword => v,
    };
    match c.cmp {
        Cmp::Eq(x) => v == x,
        Cmp::Ne(x) => v != x,
        Cmp::MaskedEq { mask, value } => v & mask == value,
        Cmp::EqOwnPid => v == u64::from(own_pid),
    }
}

/// Whether `rule` names this call, read straight from the table (the
/// reference the compiled programs are checked against).
pub fn rule_matches(rule: &SyscallRule, call: &Call, own_pid: u32) -> bool {
    if i64::from(call.nr) != rule.nr {
        return false;
    }
    match rule.args {
        ArgMatch::Any => true,
        ArgMatch::OneOf { arg, width, values } => values.iter().any(|&x| {
            holds(
                &ArgCheck {
                    arg,
                    width,
                    cmp: Cmp::Eq(x),
                },
                call.args[usize::from(arg)],
                own_pid,
            )
        }),
        ArgMatch::AnyBit { arg, bits } => {
            bits.iter().any(|&b| call.args[usize::from(arg)] & b == b)
        }
        ArgMatch::All(checks) => checks
            .iter()
            .all(|c| holds(c, call.args[usize::from(c.arg)], own_pid)),
    }
}

/// Arguments for which `rule` matches (`None` if its checks contradict
/// each other).
pub fn matching_args(rule: &SyscallRule, own_pid: u32) -> Option<[u64; 6]> {
    let mut args = [0u64; 6];
    match rule.args {
        ArgMatch::Any => {}
        ArgMatch::OneOf { arg, values, .. } => args[usize::from(arg)] = *values.first()?,
        ArgMatch::AnyBit { arg, bits } => args[usize::from(arg)] = *bits.first()?,
        ArgMatch::All(checks) => {
            for i in 0..6u8 {
                let mine: Vec<&ArgCheck> = checks.iter().filter(|c| c.arg == i).collect();
                if mine.is_empty() {
                    continue;
                }
                let mut candidates: Vec<u64> = (0..=64).collect();
                for c in &mine {
                    match c.cmp {
                        Cmp::Eq(x) => candidates.push(x),
                        Cmp::Ne(x) => candidates.push(x.wrapping_add(1)),
                        Cmp::MaskedEq { value, .. } => candidates.push(value),
                        Cmp::EqOwnPid => candidates.push(u64::from(own_pid)),
                    }
                }
                args[usize::from(i)] = candidates
                    .into_iter()
                    .find(|&v| mine.iter().all(|c| holds(c, v, own_pid)))?;
            }
        }
    }
    Some(args)
}
