//! Planning part 3b: places the host trusts that its own files lead into
//! a writable grant ([`HostFacts::trusted`]: home files through links,
//! git's global includes and programs, `PATH` directories). Each is kept
//! read-only, reserved when missing, and named in the report. Secrets
//! reached the same way are hidden by [`super::grants`].

use std::path::PathBuf;

use super::grants::Granted;
use super::{Access, FsOp};
use crate::linux::host::HostFacts;
use crate::report::RestrictionReport;

/// The mark [`demote`] adds to a grant's source. A demoted grant is still
/// walked like a writable one (`protect::writable_roots`): read-only
/// grants keep host sockets connectable (Landlock ABI 7 cannot restrict
/// connect(2)), so the walk that hides them must go on covering it.
pub(super) const DEMOTED: &str = " (read-only: a home start-up file reaches it)";

/// Writable grants inside a directory tree the home's start-up files
/// reach ([`crate::protect::trusted::Trusted::tree`]: a start-up file's own
/// directory, a directory they source by pattern or through a variable, a
/// `PATH` directory they add) become read-only for the run, said.
pub(super) fn demote(
    policy: &crate::Policy,
    host: &HostFacts,
    binds: &mut [(PathBuf, Access, String)],
    report: &mut RestrictionReport,
) {
    for (p, a, src) in binds.iter_mut() {
        if *a != Access::ReadWrite {
            continue;
        }
        let why: Vec<String> = host
            .trusted
            .iter()
            .filter(|t| t.tree.is_some() && !t.secret && p.starts_with(&t.target))
            .take(4)
            .map(|t| format!("{}: {}", t.target.display(), t.via))
            .collect();
        if why.is_empty() {
            continue;
        }
        report.notes.push(format!(
            "{} is read-only for this run: the home's start-up files, toolchains or build tools \
             reach it ({}); skarn does not parse what they run from there, so the whole tree is \
             kept read-only",
            p.display(),
            why.join("; ")
        ));
        *a = Access::ReadExec;
        src.push_str(DEMOTED);
    }
    // What the precise rules above left writable.
    super::mentions::demote(policy, host, binds, report);
}

/// The protecting steps for trusted places inside writable grants.
pub(super) fn protects(host: &HostFacts, g: &Granted, report: &mut RestrictionReport) -> Vec<FsOp> {
    let mut out = Vec::new();
    // A link on the way inside a writable grant could be pointed
    // elsewhere: the directory holding it stays read-only.
    for t in &host.trusted {
        for hop in &t.hops {
            let Some(w) = g.writable(hop) else { continue };
            match hop.parent().filter(|d| *d != w && d.starts_with(&w)) {
                Some(dir) => {
                    report.notes.push(format!(
                        "{} ({}) passes through the link {} inside the writable {}: its \
                         directory {} is kept read-only",
                        t.target.display(),
                        t.via,
                        hop.display(),
                        w.display(),
                        dir.display()
                    ));
                    out.push(FsOp::Protect {
                        path: dir.to_path_buf(),
                        reserve: false,
                        reserve_if: Vec::new(),
                    });
                }
                None => report.notes.push(format!(
                    "{} ({}) passes through the link {} at the top of the writable {}: put \
                     back after the run if the command changes it",
                    t.target.display(),
                    t.via,
                    hop.display(),
                    w.display()
                )),
            }
        }
    }
    for t in host.trusted.iter().filter(|t| !t.secret) {
        let Some(w) = g.writable(&t.target) else {
            continue;
        };
        if t.tree.is_some() {
            // Inside a writable grant (a grant at or below it was made
            // read-only by `demote`): the tree, read-only, reserved if
            // missing.
            report.notes.push(format!(
                "{} lies inside the writable {} and the home's start-up files, toolchains or \
                 build tools reach it ({}): the directory tree is kept read-only (reserved if \
                 missing)",
                t.target.display(),
                w.display(),
                t.via
            ));
            out.push(FsOp::Protect {
                path: t.target.clone(),
                reserve: true,
                reserve_if: Vec::new(),
            });
            continue;
        }
        // Hidden already (a secret, or inside one): nothing to keep
        // read-only, and a reservation inside the mask would fail.
        if g.secrets.iter().any(|(s, _)| t.target.starts_with(s)) {
            continue;
        }
        if t.target == w {
            // The user granted this very directory (a workspace allowed
            // with --allow-home-workspace or --allow-non-project-workspace,
            // or a --write grant): said, not undone.
            report.degrade(format!(
                "{} is the writable grant {} itself: the host trusts it ({}); not protected \
                 (a PATH directory's new programs named like later ones are set aside after \
                 the run)",
                t.target.display(),
                w.display(),
                t.via
            ));
            continue;
        }
        if t.via.starts_with("PATH entry ") && super::protect::missing_in_grant(&t.target, g) {
            // Reserving it would stop the tool that makes it (npm and
            // node_modules/.bin): checked after the run instead.
            report.notes.push(format!(
                "{} ({}) is missing inside the writable {}: the run may create it; new \
                 programs in it named like programs later on PATH are set aside after the run",
                t.target.display(),
                t.via,
                w.display()
            ));
            continue;
        }
        report.notes.push(format!(
            "{} lies inside the writable {} and the host trusts it ({}): kept read-only \
             (reserved if missing)",
            t.target.display(),
            w.display(),
            t.via
        ));
        out.push(FsOp::Protect {
            path: t.target.clone(),
            reserve: true,
            reserve_if: Vec::new(),
        });
    }
    for t in host.trusted.iter().filter(|t| t.secret) {
        if let Some((grant, _)) = g.deciding(&t.target) {
            report.notes.push(format!(
                "secret {} lies inside the grant {} ({}): hidden",
                t.target.display(),
                grant.display(),
                t.via
            ));
            // Hiding the file does not hide the repository's copies of
            // it (objects, history): said, not claimed.
            if let Some(repo) = t
                .target
                .ancestors()
                .skip(1)
                .take_while(|a| a.starts_with(&grant))
                .find(|a| std::fs::symlink_metadata(a.join(".git")).is_ok())
            {
                report.degrade(format!(
                    "secret {} lies inside the git repository {}: if git tracks it (or did), \
                     its content stays readable from the repository (git show, git log -p)",
                    t.target.display(),
                    repo.display()
                ));
            }
        }
    }
    // A relative name a start-up file sources is read from the directory
    // the shell starts in: any writable grant (an editor's terminal).
    for (name, how) in &host.startup_relative {
        for (p, a, _) in &g.binds {
            if *a != Access::ReadWrite {
                continue;
            }
            report.notes.push(format!(
                "{} is kept read-only (reserved if missing): {how}",
                p.join(name).display()
            ));
            out.push(FsOp::Protect {
                path: p.join(name),
                reserve: true,
                reserve_if: Vec::new(),
            });
        }
    }
    if !host.trusted_unresolved.is_empty() {
        report.degrade(format!(
            "the home's start-up files source paths skarn cannot expand ({}): a file they \
             reach that way inside a writable grant is protected only if it lies in a \
             directory tree protected for another reason",
            host.trusted_unresolved.join("; ")
        ));
    }
    for n in &host.config_notes {
        report.degrade(n.clone());
    }
    if !host.trusted_unfinished.is_empty() {
        let dirs: Vec<String> = host
            .trusted_unfinished
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        report.degrade(format!(
            "the links under {} were not all followed (bounds: {} entries, {} levels): a home \
             file reached through one of them into a writable grant is not protected",
            dirs.join(", "),
            crate::protect::home_links::MAX_ENTRIES,
            crate::protect::home_links::MAX_DEPTH
        ));
    }
    out
}
