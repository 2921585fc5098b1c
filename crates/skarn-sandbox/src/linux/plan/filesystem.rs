//! Planning part 2: namespaces and the new root (private /proc, /dev,
//! /tmp and home, the grants' binds, the names they were given).

use std::path::PathBuf;

use super::grants::Granted;
use super::{Access, FsOp, Namespaces};
use crate::linux::host::HostFacts;
use crate::policy::Policy;
use crate::report::{GrantReport, RestrictionReport};

/// Which namespaces the run gets.
pub(super) fn namespaces(
    policy: &Policy,
    host: &HostFacts,
    report: &mut RestrictionReport,
) -> Namespaces {
    if host.namespaces {
        return Namespaces {
            user: host.needs_userns,
            mount: true,
            pid: true,
            net: policy.net.wants_netns(),
            ipc: true,
            uts: true,
        };
    }
    report.degrade(
        "namespaces unavailable (no user namespaces for this user): no private /tmp, /proc, \
         /dev or PID namespace; the filesystem allow-list relies on Landlock alone",
    );
    if !policy.overlay.is_empty() {
        report.degrade(
            "toolchain caches are read-only: a private copy-on-write layer needs a mount \
             namespace",
        );
    }
    Namespaces::default()
}

/// The private home's path: a tmpfs at the canonical home directory unless
/// a grant already covers the home itself (a grant of the home or of an
/// ancestor: the user asked for it).
pub(super) fn private_home(
    policy: &Policy,
    g: &Granted,
    ns: Namespaces,
    report: &mut RestrictionReport,
) -> Option<PathBuf> {
    let h = g.home_real.as_ref()?;
    let private = policy.private_home
        && ns.mount
        && !g
            .binds
            .iter()
            .any(|(b, _, _)| h.starts_with(b) && !Granted::is_system(b));
    if !private {
        return None;
    }
    report.grants.push(GrantReport {
        path: h.display().to_string(),
        access: "read-write (private home, discarded)".into(),
        source: "default (private_home)".into(),
    });
    Some(h.clone())
}

/// The first steps of the new root: /proc, /dev, /tmp, the private home
/// and its files, every grant's bind, and the names grants were given.
pub(super) fn root_steps(
    policy: &Policy,
    host: &HostFacts,
    g: &Granted,
    home: Option<&PathBuf>,
) -> Vec<FsOp> {
    let mut fs = vec![FsOp::Proc, FsOp::Dev, FsOp::Tmp];
    if let Some(h) = home {
        fs.push(FsOp::Home { path: h.clone() });
        if let Some(named) = &host.home
            && named != h
        {
            fs.push(FsOp::Symlink {
                path: named.clone(),
                target: h.clone(),
            });
        }
        for (p, c) in &policy.home_files {
            if p.starts_with(h) && g.deciding(p).is_none() {
                fs.push(FsOp::File {
                    path: p.clone(),
                    contents: c.clone(),
                });
            }
        }
    }
    let granted: Vec<(PathBuf, Access)> = g.binds.iter().map(|(p, a, _)| (p.clone(), *a)).collect();
    fs.extend(crate::linux::idmap_plan::bind_steps(
        &granted,
        &host.idmap_dirs,
    ));
    for grant in policy
        .read
        .iter()
        .chain(&policy.exec)
        .chain(&policy.write)
        .chain(&policy.overlay)
    {
        if let Some(alias) = &grant.alias
            && g.binds.iter().any(|(p, _, _)| *p == grant.path)
        {
            fs.push(FsOp::Symlink {
                path: alias.clone(),
                target: grant.path.clone(),
            });
        }
    }
    fs
}
