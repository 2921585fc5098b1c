//! Compiling a table of [`SyscallRule`]s into BPF programs, with the
//! foreign-ABI guard, and installing them.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

use super::{ArgCheck, ArgMatch, Cmp, OnMatch, SyscallRule, Width};

/// The filter mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Unmatched calls are allowed; every rule must refuse with an errno.
    DenyList {
        /// Numbers above this one fail with `ENOSYS`.
        highest_audited: u32,
    },
    /// Unmatched calls get `otherwise`.
    AllowList {
        /// The answer to a call no rule allows.
        otherwise: Refusal,
    },
}

/// How an allow-list refuses a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The call fails with this errno; the process goes on.
    Errno(i32),
    /// The whole process is killed (`SECCOMP_RET_KILL_PROCESS`).
    KillProcess,
}

/// Facts about the process a filter is compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    /// Its pid (for [`Cmp::EqOwnPid`]).
    pub own_pid: u32,
}

impl Context {
    /// The calling process.
    pub fn current() -> Self {
        Self {
            own_pid: rustix::process::getpid()
                .as_raw_nonzero()
                .get()
                .unsigned_abs(),
        }
    }
}

/// Errors building or installing a filter (a bug in a table, or a kernel
/// without seccomp; never the confined program's doing).
#[derive(Debug, thiserror::Error)]
pub enum SeccompError {
    /// Unsupported CPU architecture.
    #[error("seccomp: unsupported architecture {0}")]
    Arch(&'static str),
    /// A rule does not fit the mode.
    #[error("seccomp: rule {0}: {1}")]
    Rule(&'static str, &'static str),
    /// seccompiler rejected the table.
    #[error("seccomp: {0}")]
    Compile(#[from] seccompiler::BackendError),
    /// The kernel refused the program.
    #[error("seccomp: install failed: {0}")]
    Install(#[from] seccompiler::Error),
}

fn target_arch() -> Result<TargetArch, SeccompError> {
    match std::env::consts::ARCH {
        "x86_64" => Ok(TargetArch::x86_64),
        "aarch64" => Ok(TargetArch::aarch64),
        a => Err(SeccompError::Arch(a)),
    }
}

fn condition(c: &ArgCheck, ctx: &Context) -> Result<SeccompCondition, SeccompError> {
    let len = match c.width {
        Width::Dword => SeccompCmpArgLen::Dword,
        Width::Qword => SeccompCmpArgLen::Qword,
    };
    let (op, value) = match c.cmp {
        Cmp::Eq(v) => (SeccompCmpOp::Eq, v),
        Cmp::Ne(v) => (SeccompCmpOp::Ne, v),
        Cmp::MaskedEq { mask, value } => (SeccompCmpOp::MaskedEq(mask), value),
        Cmp::EqOwnPid => (SeccompCmpOp::Eq, u64::from(ctx.own_pid)),
    };
    Ok(SeccompCondition::new(c.arg, len, op, value)?)
}

/// The seccompiler rules for one table rule: `None` means "every call"
/// (seccompiler's empty rule list), which wins over any narrower rule for
/// the same syscall.
fn alternatives(args: ArgMatch, ctx: &Context) -> Result<Option<Vec<SeccompRule>>, SeccompError> {
    let one = |c: ArgCheck| -> Result<SeccompRule, SeccompError> {
        Ok(SeccompRule::new(vec![condition(&c, ctx)?])?)
    };
    Ok(Some(match args {
        ArgMatch::Any => return Ok(None),
        ArgMatch::OneOf { arg, width, values } => values
            .iter()
            .map(|&v| {
                one(ArgCheck {
                    arg,
                    width,
                    cmp: Cmp::Eq(v),
                })
            })
            .collect::<Result<_, _>>()?,
        ArgMatch::AnyBit { arg, bits } => bits
            .iter()
            .map(|&b| one(ArgCheck::qword(arg, Cmp::MaskedEq { mask: b, value: b })))
            .collect::<Result<_, _>>()?,
        ArgMatch::All(checks) => {
            let conds = checks
                .iter()
                .map(|c| condition(c, ctx))
                .collect::<Result<Vec<_>, _>>()?;
            vec![SeccompRule::new(conds)?]
        }
    }))
}

/// syscall number → alternatives, `None` (every call) dominating.
type Table = BTreeMap<i64, Option<Vec<SeccompRule>>>;

fn add(table: &mut Table, nr: i64, alts: Option<Vec<SeccompRule>>) {
    match (table.entry(nr).or_insert_with(|| Some(Vec::new())), alts) {
        (slot @ Some(_), None) => *slot = None,
        (Some(v), Some(more)) => v.extend(more),
        (None, _) => {}
    }
}

fn program(
    table: Table,
    on_match: SeccompAction,
    otherwise: SeccompAction,
) -> Result<BpfProgram, SeccompError> {
    let named: Vec<u32> = table
        .keys()
        .filter_map(|&nr| u32::try_from(nr).ok())
        .collect();
    let miss = ret(otherwise.clone());
    let mut prog = unshortened(table, on_match, otherwise)?;
    // After seccompiler's 3-instruction architecture check.
    super::shortcut::insert(&mut prog, 3, &named, miss);
    Ok(prog)
}

/// `seccompiler`'s program for `table`, as it lays it out.
fn unshortened(
    table: Table,
    on_match: SeccompAction,
    otherwise: SeccompAction,
) -> Result<BpfProgram, SeccompError> {
    let map = table
        .into_iter()
        .map(|(nr, alts)| (nr, alts.unwrap_or_default()))
        .collect();
    let filter = SeccompFilter::new(map, otherwise, on_match, target_arch()?)?;
    Ok(filter.try_into()?)
}

fn ret(action: SeccompAction) -> u32 {
    u32::from(action)
}

fn sf(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// Insert the guard right after seccompiler's 3-instruction architecture
/// check (no jump crosses that point; the code after it, the shortcut and
/// then seccompiler's chain, loads the syscall number itself). `x32` answers x32-ABI numbers on x86_64;
/// `above` answers numbers above the given one.
fn guard(prog: &mut BpfProgram, x32: u32, above: Option<(u32, u32)>) {
    const LD_NR: u16 = 0x20; // ld [0] (seccomp_data.nr)
    const JSET: u16 = 0x45;
    const JGT: u16 = 0x25;
    const RET: u16 = 0x06;
    let mut g = vec![sf(LD_NR, 0, 0, 0)];
    if std::env::consts::ARCH == "x86_64" {
        const X32_BIT: u32 = 0x4000_0000;
        g.push(sf(JSET, 0, 1, X32_BIT));
        g.push(sf(RET, 0, 0, x32));
    }
    if let Some((highest, answer)) = above {
        g.push(sf(JGT, 0, 1, highest));
        g.push(sf(RET, 0, 0, answer));
    }
    if g.len() > 1 {
        prog.splice(3..3, g);
    }
}

fn errno_groups(
    rules: &[SyscallRule],
    ctx: &Context,
) -> Result<BTreeMap<i32, Table>, SeccompError> {
    let mut groups: BTreeMap<i32, Table> = BTreeMap::new();
    for r in rules {
        if let OnMatch::Errno(e) = r.on_match {
            add(
                groups.entry(e).or_default(),
                r.nr,
                alternatives(r.args, ctx)?,
            );
        }
    }
    Ok(groups)
}

/// Compile `rules` for `mode`, returning the programs in the order they
/// must be installed (see the module documentation).
pub fn compile(
    rules: &[SyscallRule],
    mode: Mode,
    ctx: &Context,
) -> Result<Vec<BpfProgram>, SeccompError> {
    let enosys = ret(SeccompAction::Errno(libc::ENOSYS as u32));
    let mut out = Vec::new();
    match mode {
        Mode::DenyList { highest_audited } => {
            if let Some(r) = rules.iter().find(|r| r.on_match == OnMatch::Allow) {
                return Err(SeccompError::Rule(r.name, "an allow rule in a deny-list"));
            }
            for (e, table) in errno_groups(rules, ctx)? {
                let mut p = program(table, SeccompAction::Errno(e as u32), SeccompAction::Allow)?;
                guard(&mut p, enosys, Some((highest_audited, enosys)));
                out.push(p);
            }
        }
        Mode::AllowList { otherwise } => {
            let refuse = match otherwise {
                Refusal::Errno(e) => SeccompAction::Errno(e as u32),
                Refusal::KillProcess => SeccompAction::KillProcess,
            };
            let mut allowed = Table::new();
            for r in rules {
                match r.on_match {
                    OnMatch::Allow => add(&mut allowed, r.nr, alternatives(r.args, ctx)?),
                    // Answered by the errno program; let it through here.
                    OnMatch::Errno(_) => add(&mut allowed, r.nr, None),
                }
            }
            for (e, table) in errno_groups(rules, ctx)? {
                out.push(program(
                    table,
                    SeccompAction::Errno(e as u32),
                    SeccompAction::Allow,
                )?);
            }
            let refuse_ret = ret(refuse.clone());
            let mut p = program(allowed, SeccompAction::Allow, refuse)?;
            guard(&mut p, refuse_ret, None);
            // Last: it refuses the call that would install another filter.
            out.push(p);
        }
    }
    Ok(out)
}

/// Install `programs` on the calling thread, in order. Requires
/// `no_new_privs` (or `CAP_SYS_ADMIN`). Irreversible.
pub fn install(programs: &[BpfProgram]) -> Result<(), SeccompError> {
    for p in programs {
        seccompiler::apply_filter(p)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTX: Context = Context { own_pid: 42 };
    const PRCTL_NAME: &[ArgCheck] = &[ArgCheck::qword(0, Cmp::Eq(libc::PR_SET_NAME as u64))];

    #[test]
    fn deny_list_gets_one_program_per_errno_with_both_guards() {
        let rules = [
            SyscallRule::errno("ptrace", libc::SYS_ptrace, ArgMatch::Any, libc::EPERM, "x"),
            SyscallRule::errno(
                "openat2",
                libc::SYS_openat2,
                ArgMatch::Any,
                libc::ENOSYS,
                "y",
            ),
        ];
        let progs = compile(
            &rules,
            Mode::DenyList {
                highest_audited: 469,
            },
            &CTX,
        );
        let progs = progs.expect("compiles");
        assert_eq!(progs.len(), 2);
        let x86 = std::env::consts::ARCH == "x86_64";
        for p in &progs {
            if x86 {
                assert_eq!((p[4].code, p[4].k), (0x45, 0x4000_0000));
            }
            let g = if x86 { 6 } else { 4 };
            assert_eq!((p[g].code, p[g].k), (0x25, 469));
        }
    }

    #[test]
    fn allow_rule_in_a_deny_list_is_refused() {
        let rules = [SyscallRule::allow(
            "read",
            libc::SYS_read,
            ArgMatch::Any,
            "x",
        )];
        let r = compile(
            &rules,
            Mode::DenyList {
                highest_audited: 469,
            },
            &CTX,
        );
        assert!(matches!(r, Err(SeccompError::Rule("read", _))));
    }

    #[test]
    fn allow_list_puts_errno_programs_first_and_guards_x32_with_its_refusal() {
        let rules = [
            SyscallRule::allow("prctl", libc::SYS_prctl, ArgMatch::All(PRCTL_NAME), "x"),
            SyscallRule::errno("clone3", libc::SYS_clone3, ArgMatch::Any, libc::ENOSYS, "y"),
        ];
        let mode = Mode::AllowList {
            otherwise: Refusal::KillProcess,
        };
        let progs = compile(&rules, mode, &CTX).expect("compiles");
        assert_eq!(progs.len(), 2);
        let last = &progs[1];
        if std::env::consts::ARCH == "x86_64" {
            assert_eq!((last[4].code, last[4].k), (0x45, 0x4000_0000));
            assert_eq!(last[5].k, libc::SECCOMP_RET_KILL_PROCESS);
        }
    }

    /// Arguments worth trying against `rules`: zeros, extremes, and every
    /// constant the rules compare with, in each position.
    fn arg_vectors(rules: &[SyscallRule]) -> Vec<[u64; 6]> {
        let mut consts = vec![0, 1, 0xFFFF_FFFF, 1 << 32, u64::MAX, 42, 43];
        let mut wanted = Vec::new();
        for r in rules {
            match r.args {
                ArgMatch::Any => {}
                ArgMatch::OneOf { values, .. } => consts.extend(values),
                ArgMatch::AnyBit { bits, .. } => consts.extend(bits),
                ArgMatch::All(checks) => {
                    let mut v = [0u64; 6];
                    for c in checks {
                        let x = match c.cmp {
                            Cmp::Eq(x) | Cmp::Ne(x) => x,
                            Cmp::MaskedEq { mask, value } => {
                                consts.push(mask);
                                value
                            }
                            Cmp::EqOwnPid => 42,
                        };
                        consts.push(x);
                        v[usize::from(c.arg)] = x;
                    }
                    wanted.push(v);
                }
            }
        }
        let mut out = vec![[0u64; 6]];
        out.extend(wanted);
        for i in 0..6 {
            for &c in &consts {
                let mut v = [0u64; 6];
                v[i] = c;
                out.push(v);
            }
        }
        out
    }

    /// Rules of every shape, over many syscall numbers.
    fn mixed_rules() -> Vec<SyscallRule> {
        const CHECKS: &[ArgCheck] = &[
            ArgCheck::dword(0, Cmp::Eq(7)),
            ArgCheck::qword(
                1,
                Cmp::MaskedEq {
                    mask: 0xF0,
                    value: 0x30,
                },
            ),
            ArgCheck::dword(2, Cmp::Ne(0)),
        ];
        const OWN: &[ArgCheck] = &[ArgCheck::dword(0, Cmp::EqOwnPid)];
        let mut rules = Vec::new();
        for nr in (0..460).step_by(4) {
            let args = match nr % 5 {
                0 => ArgMatch::Any,
                1 => ArgMatch::OneOf {
                    arg: 1,
                    width: Width::Dword,
                    values: &[3, 9, 0x8000_0000],
                },
                2 => ArgMatch::AnyBit {
                    arg: 2,
                    bits: &[0x10, 1 << 40],
                },
                3 => ArgMatch::All(CHECKS),
                _ => ArgMatch::All(OWN),
            };
            let errno = if nr % 3 == 0 {
                libc::EPERM
            } else {
                libc::ENOSYS
            };
            rules.push(SyscallRule::errno("t", nr, args, errno, "test"));
        }
        rules
    }

    #[test]
    fn the_shortcut_changes_no_answer_and_shortens_unnamed_numbers() {
        use crate::seccomp::eval::{Call, evaluate, native_arch};
        let rules = mixed_rules();
        let vectors = arg_vectors(&rules);
        let mut tables: Vec<(Table, SeccompAction, SeccompAction)> = errno_groups(&rules, &CTX)
            .expect("groups")
            .into_iter()
            .map(|(e, t)| (t, SeccompAction::Errno(e as u32), SeccompAction::Allow))
            .collect();
        // An allow-list shape too: named calls allowed, the rest killed.
        let mut allowed = Table::new();
        for r in &rules {
            add(
                &mut allowed,
                r.nr,
                alternatives(r.args, &CTX).expect("alts"),
            );
        }
        tables.push((allowed, SeccompAction::Allow, SeccompAction::KillProcess));
        for (table, on_match, otherwise) in tables {
            let named: Vec<i64> = table.keys().copied().collect();
            let plain =
                unshortened(table.clone(), on_match.clone(), otherwise.clone()).expect("compiles");
            let short = program(table, on_match, otherwise.clone()).expect("compiles");
            assert!(short.len() > plain.len(), "the shortcut is in place");
            for arch in [native_arch(), 0x4000_0003] {
                for nr in 0..520 {
                    for args in &vectors {
                        let call = Call {
                            nr,
                            arch,
                            ip: 0,
                            args: *args,
                        };
                        let a = evaluate(&plain, &call).expect("plain evaluates");
                        let b = evaluate(&short, &call).expect("short evaluates");
                        assert_eq!(a.ret, b.ret, "nr {nr} arch {arch:#x} args {args:?}");
                        if arch == native_arch() && !named.contains(&i64::from(nr)) {
                            assert_eq!(b.ret, ret(otherwise.clone()));
                            assert!(b.steps <= 16, "nr {nr}: {} steps", b.steps);
                            assert!(a.steps > 100, "nr {nr}: {} steps before", a.steps);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_call_dominates_narrower_rules_for_the_same_syscall() {
        let mut t = Table::new();
        add(&mut t, 1, Some(Vec::new()));
        add(&mut t, 1, None);
        add(&mut t, 1, Some(Vec::new()));
        assert!(t[&1].is_none());
    }
}
