//! The workspace's store around the run ([`crate::linux::store`], ADR 0175):
//! locked and filled before init mounts its caches; when another run holds
//! it, its caches become discarded layers for this run, said at once.

use std::path::PathBuf;

use crate::linux::plan::{Access, FsOp, Plan};
use crate::linux::{store, store_vet, sys};
use crate::report::RestrictionReport;

/// Vet the held store's layers before the run ([`crate::linux::store_vet`]):
/// what was removed is said; `Err` when something could not be.
fn vet(held: &store::Held, fs: &[FsOp], report: &mut RestrictionReport) -> Result<(), String> {
    let layers: Vec<store_vet::Layer> = fs
        .iter()
        .filter_map(|o| match o {
            FsOp::Store { path, upper, .. } => Some(store_vet::Layer {
                path: path.clone(),
                upper: upper.clone(),
            }),
            _ => None,
        })
        .collect();
    match store_vet::vet(&layers) {
        Ok(removed) if removed.is_empty() => Ok(()),
        Ok(removed) => {
            let msg = format!(
                "the workspace's store held what Python runs at every start, left by an \
                 earlier run; removed before this run: {}",
                removed.join(", ")
            );
            let line = crate::protect::terminal_filter::printable(&msg);
            sys::write_fd(2, format!("skarn: warning: {line}\n").as_bytes());
            report.notes.push(msg);
            Ok(())
        }
        Err(why) => Err(format!(
            "the workspace's store {} holds what Python runs at every start, left by an \
             earlier run, and it could not be removed ({why}): the store is not used \
             (`skarn cache clear` empties it)",
            held.dir.display()
        )),
    }
}

/// Lock the plan's store and make its caches' directories; or, when that
/// fails, turn its [`FsOp::Store`] steps into discarded layers (a host
/// cache) or drop them (the private home's tmpfs then holds the writes).
pub(super) fn hold(
    plan: &Plan,
    fs: &mut Vec<FsOp>,
    report: &mut RestrictionReport,
) -> Option<store::Held> {
    let dir = plan.store.as_ref()?;
    let caches: Vec<PathBuf> = fs
        .iter()
        .filter_map(|o| match o {
            FsOp::Store { path, .. } => Some(path.clone()),
            _ => None,
        })
        .collect();
    if caches.is_empty() {
        return None;
    }
    let e = match store::open(dir, &plan.workspace, &caches) {
        Ok(h) => match vet(&h, fs, report) {
            Ok(()) => return Some(h),
            Err(why) => why,
        },
        Err(e) => e.to_string(),
    };
    fs.retain_mut(|o| {
        let FsOp::Store { path, .. } = o else {
            return true;
        };
        if !std::fs::symlink_metadata(&*path).is_ok_and(|m| m.is_dir()) {
            return false;
        }
        *o = FsOp::Bind {
            path: path.clone(),
            access: Access::Private,
        };
        true
    });
    let msg = format!("{e}: what this run writes to the toolchain caches is discarded after it");
    let line = crate::protect::terminal_filter::printable(&msg);
    sys::write_fd(2, format!("skarn: warning: {line}\n").as_bytes());
    report.notes.push(msg);
    None
}
