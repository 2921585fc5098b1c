//! Planning the idmapped binds ([`crate::linux::idmap`]): which grants of the new
//! root are bound through the id mapping, what the report says about
//! files closed to others, and the host facts of the namespace fallback
//! plan (which has no mount namespace, so no idmapped bind). Pure: looks
//! only at its arguments.

use std::path::{Path, PathBuf};

use crate::linux::host::HostFacts;
use crate::linux::plan::{Access, FsOp};
use crate::report::RestrictionReport;

fn read_only(a: Access) -> bool {
    matches!(a, Access::Read | Access::ReadExec)
}

fn depth(p: &Path) -> usize {
    p.components().count()
}

/// The bind steps of the new root, shallow first: each read-only grant in
/// one of `dirs` (the directories the host binds idmapped) becomes an
/// [`FsOp::IdmapBind`], unless a writable grant holds it (the walk skipped
/// those too: the command could change them anyway); a directory of
/// `dirs` granted only through a read-only ancestor (`--read /`) gets an
/// idmapped bind of its own on top. Everything else is a plain
/// [`FsOp::Bind`].
pub(crate) fn bind_steps(binds: &[(PathBuf, Access)], dirs: &[PathBuf]) -> Vec<FsOp> {
    let in_writable = |p: &Path| {
        binds
            .iter()
            .any(|(g, a)| !read_only(*a) && p.starts_with(g) && g != p)
    };
    let mut steps: Vec<(PathBuf, Access, bool)> = binds
        .iter()
        .map(|(p, a)| {
            let idmap = read_only(*a) && dirs.iter().any(|d| p.starts_with(d)) && !in_writable(p);
            (p.clone(), *a, idmap)
        })
        .collect();
    for d in dirs {
        if binds.iter().any(|(g, _)| g == d) {
            continue;
        }
        let deciding = binds
            .iter()
            .filter(|(g, _)| d.starts_with(g))
            .max_by_key(|(g, _)| depth(g));
        if let Some((_, a)) = deciding
            && read_only(*a)
            && !in_writable(d)
        {
            steps.push((d.clone(), *a, true));
        }
    }
    steps.sort_by_key(|(p, _, _)| depth(p));
    steps
        .into_iter()
        .map(|(path, access, idmap)| {
            if idmap {
                FsOp::IdmapBind { path, access }
            } else {
                FsOp::Bind { path, access }
            }
        })
        .collect()
}

/// The host facts the namespace fallback plan is made with: no
/// namespaces, hence no idmapped binds. The directories that were to be
/// bound idmapped were not walked for files closed to others, so they are
/// listed as closed entries themselves and hidden whole (fail closed, the
/// rule of a walk stopped at its cap); the fallback's report says so.
pub(crate) fn without_namespaces(host: &HostFacts) -> HostFacts {
    let mut h = HostFacts {
        namespaces: false,
        ..host.clone()
    };
    if h.idmap_dirs.is_empty() {
        return h;
    }
    let dirs = std::mem::take(&mut h.idmap_dirs);
    h.owner_only
        .retain(|p| !dirs.iter().any(|d| p.starts_with(d)));
    h.owner_only.extend(dirs.iter().cloned());
    h.owner_only.sort();
    h.idmap_unavailable = Some(format!(
        "no namespaces at run time: {} not walked, hidden whole",
        dirs.iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    h
}

/// What the report says about files closed to others (root callers).
pub fn note(host: &HostFacts, mount_ns: bool, report: &mut RestrictionReport) {
    if host.uid != 0 {
        return;
    }
    let list = |v: &[PathBuf]| {
        v.iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !host.idmap_dirs.is_empty() {
        if mount_ns {
            report.notes.push(format!(
                "files closed to others under {} stay unreadable: bound read-only through an \
                 id mapping (root's files belong to uid/gid {} inside), at any depth and for \
                 files the host adds during the run",
                list(&host.idmap_dirs),
                crate::linux::idmap::NOBODY
            ));
        } else {
            report.degrade(format!(
                "files closed to others under {} are not hidden: the idmapped binds need a \
                 mount namespace",
                list(&host.idmap_dirs)
            ));
        }
    }
    let walked: Vec<PathBuf> = crate::protect::owner_only::WALKED_DIRS
        .iter()
        .map(PathBuf::from)
        .filter(|d| !host.idmap_dirs.contains(d))
        .collect();
    if !walked.is_empty() {
        report.notes.push(format!(
            "files closed to others under {} are hidden by a walk before the run ({} found){}",
            list(&walked),
            host.owner_only.len(),
            match &host.idmap_unavailable {
                Some(why) => format!("; idmapped binds unavailable: {why}"),
                None => String::new(),
            }
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    fn kinds(steps: &[FsOp]) -> Vec<(String, bool)> {
        steps
            .iter()
            .map(|o| match o {
                FsOp::Bind { path, .. } => (path.display().to_string(), false),
                FsOp::IdmapBind { path, .. } => (path.display().to_string(), true),
                other => panic!("unexpected step {other:?}"),
            })
            .collect()
    }

    #[test]
    fn system_dirs_and_read_grants_in_them_are_idmapped() {
        let binds = vec![
            (p("/usr"), Access::ReadExec),
            (p("/etc"), Access::ReadExec),
            (p("/opt"), Access::ReadExec),
            (p("/opt/app"), Access::ReadWrite),
            (p("/opt/app/data"), Access::Read),
            (p("/srv/site"), Access::Read),
            (p("/work/ws"), Access::ReadWrite),
        ];
        let dirs = vec![p("/etc"), p("/opt"), p("/srv")];
        assert_eq!(
            kinds(&bind_steps(&binds, &dirs)),
            vec![
                ("/usr".into(), false),
                ("/etc".into(), true),
                ("/opt".into(), true),
                ("/opt/app".into(), false),
                ("/srv/site".into(), true),
                ("/work/ws".into(), false),
                ("/opt/app/data".into(), false),
            ]
        );
    }

    #[test]
    fn a_dir_granted_through_an_ancestor_gets_its_own_idmapped_bind() {
        let binds = vec![(p("/"), Access::Read), (p("/etc"), Access::ReadExec)];
        let dirs = vec![p("/etc"), p("/srv")];
        assert_eq!(
            kinds(&bind_steps(&binds, &dirs)),
            vec![
                ("/".into(), false),
                ("/etc".into(), true),
                ("/srv".into(), true)
            ]
        );
        // Not when the ancestor is writable, nor without any grant.
        let binds = vec![(p("/srv"), Access::ReadWrite)];
        assert_eq!(
            kinds(&bind_steps(&binds, &[p("/srv"), p("/opt")])),
            vec![("/srv".into(), false)]
        );
    }

    #[test]
    fn without_idmapped_dirs_every_bind_is_plain() {
        let binds = vec![(p("/etc"), Access::ReadExec), (p("/srv/x"), Access::Read)];
        assert!(
            kinds(&bind_steps(&binds, &[]))
                .iter()
                .all(|(_, idmap)| !idmap)
        );
    }
}
