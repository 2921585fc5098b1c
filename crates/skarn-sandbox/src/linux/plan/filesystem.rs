//! Planning part 2: namespaces and the new root (private /proc, /dev,
//! /tmp and home, the grants' binds, the names they were given).

use std::path::{Path, PathBuf};

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
    fs.extend(crate::linux::plan::idmap::bind_steps(
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

/// The workspace's store (ADR 0175): each cache of the active presets
/// under the private home becomes a [`FsOp::Store`] step (its discarded
/// layer replaced; one the host lacks added after the grants). Returns
/// the store's directory, None without a private home or caches.
pub(super) fn store_steps(
    policy: &Policy,
    host: &HostFacts,
    home: Option<&PathBuf>,
    fs: &mut Vec<FsOp>,
    report: &mut RestrictionReport,
) -> Option<PathBuf> {
    let (home, host_home) = (home?, host.home.as_ref()?);
    let under_home = |p: &PathBuf| p.starts_with(home) || p.starts_with(host_home);
    let caches: Vec<&PathBuf> = policy.cache_dirs.iter().filter(|p| under_home(p)).collect();
    if caches.is_empty() {
        return None;
    }
    // The canonical home: overlayfs gets these paths after the root moved,
    // where a link on the way would not resolve (atk27m F4).
    let dir = crate::linux::store::dir_for(home, &policy.workspace);
    let step = |path: &PathBuf| {
        let (upper, work) = crate::linux::store::slot(&dir, path);
        FsOp::Store {
            path: path.clone(),
            upper,
            work,
        }
    };
    let mut placed = Vec::new();
    for op in fs.iter_mut() {
        if let FsOp::Bind {
            path,
            access: Access::Private,
        } = op
            && caches.contains(&&*path)
        {
            placed.push(path.clone());
            *op = step(path);
        }
    }
    let at = fs
        .iter()
        .rposition(|o| {
            matches!(
                o,
                FsOp::Bind { .. } | FsOp::IdmapBind { .. } | FsOp::Store { .. }
            )
        })
        .map_or(fs.len(), |i| i + 1);
    let added: Vec<FsOp> = caches
        .iter()
        .filter(|p| !placed.contains(p))
        .map(|p| step(p))
        .collect();
    fs.splice(at..at, added);
    for c in &caches {
        if let Some(g) = report
            .grants
            .iter_mut()
            .find(|g| Path::new(&g.path) == c.as_path())
        {
            g.access = "read-write (workspace store: kept for the next run here)".into();
        }
    }
    report.notes.push(format!(
        "store: {} keeps what this workspace's runs write to {} for its next runs (over the \
         host's caches, read-only below; never read by host tools; `skarn cache clear` \
         empties it)",
        dir.display(),
        caches
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Some(dir)
}
