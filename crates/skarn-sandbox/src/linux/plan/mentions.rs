//! Planning part 3a: writable grants a home configuration file names
//! ([`HostFacts::home_mentions`], ADR 0160). Host programs run what their
//! configuration names; skarn does not parse it, so such a grant is
//! read-only for the run, the file and line named in the report, unless
//! the user trusts it (`--trust-home-config-workspace`, or
//! `[run] trust_home_config_workspace` in the user's own config), which
//! the report then names as a gap.

use std::path::PathBuf;

use super::grants::Granted;
use super::trusted::DEMOTED;
use super::{Access, FsOp};
use crate::linux::host::HostFacts;
use crate::report::RestrictionReport;

/// The flag that keeps such a grant writable.
pub(crate) const TRUST_FLAG: &str = "--trust-home-config-workspace";

/// Make each writable grant a home configuration file names read-only
/// (or, trusted, say the gap).
pub(super) fn demote(
    policy: &crate::Policy,
    host: &HostFacts,
    binds: &mut [(PathBuf, Access, String)],
    report: &mut RestrictionReport,
) {
    let m = &host.home_mentions;
    let scanned: Vec<&PathBuf> = std::iter::once(&policy.workspace)
        .chain(policy.write.iter().map(|g| &g.path))
        .collect();
    for (p, a, src) in binds.iter_mut() {
        if *a != Access::ReadWrite {
            continue;
        }
        let why = match m.found.iter().find(|x| p.starts_with(&x.grant)) {
            Some(x) if x.line == 0 => format!(
                "{} is a home configuration file whose real place is {}",
                x.file.display(),
                x.named
            ),
            Some(x) => format!("{}:{} names {}", x.file.display(), x.line, x.named),
            None => match &m.over_budget {
                // Past a bound: every grant looked for counts as named.
                Some(b) if scanned.iter().any(|g| p.starts_with(g)) => format!(
                    "the home's configuration files were not all read ({b}), so it counts \
                     as named"
                ),
                _ => continue,
            },
        };
        if policy.trust_home_config_workspace {
            report.degrade(format!(
                "{} stays writable although the home's configuration reaches it ({why}): \
                 trusted by the user ({TRUST_FLAG} or [run] trust_home_config_workspace); \
                 host programs may run what the command writes there",
                p.display()
            ));
            continue;
        }
        report.notes.push(format!(
            "{} is read-only for this run: the home's start-up files reach it ({why}); skarn \
             does not parse what host programs run from there, so the whole tree is kept \
             read-only (to keep it writable, pass {TRUST_FLAG} or set [run] \
             trust_home_config_workspace = true in ~/.config/skarn/config.toml)",
            p.display()
        ));
        *a = Access::ReadExec;
        src.push_str(DEMOTED);
    }
}

/// The places inside writable grants that `PATH` scripts name
/// ([`crate::protect::home_mentions::Place`]): each kept read-only,
/// reserved when missing, said.
pub(super) fn protects(host: &HostFacts, g: &Granted, report: &mut RestrictionReport) -> Vec<FsOp> {
    let mut out = Vec::new();
    for p in &host.home_mentions.places {
        let Some(w) = g.writable(&p.path) else {
            continue;
        };
        report.notes.push(format!(
            "{} lies inside the writable {} and the PATH script {}:{} names it ({}): kept \
             read-only (reserved if missing), the rest of the grant stays writable",
            p.path.display(),
            w.display(),
            p.file.display(),
            p.line,
            p.named
        ));
        out.push(FsOp::Protect {
            path: p.path.clone(),
            reserve: true,
            reserve_if: Vec::new(),
        });
    }
    out
}
