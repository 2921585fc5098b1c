//! Persistence checks around the run, on the host: snapshots of the
//! protected files taken before the target starts (a host rename could
//! detach a read-only bind), and after the run the plan's
//! [`crate::linux::plan::AfterRun`] checks (HEAD, new repositories, new dot
//! entries of a home workspace) and the snapshot comparison
//! ([`crate::linux::lapse`]) and the sweep of the git directories for links,
//! FIFOs and device nodes made during the run ([`crate::protect::git::git_sweep`]). Each
//! finding is a warning and a degradation.

use std::path::PathBuf;

use crate::linux::plan::{AfterRun, FsOp, Plan};
use crate::linux::sys;
use crate::protect::git::nested_git::HeadGuard;
use crate::report::RestrictionReport;

/// What was saved before the run.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Before {
    snapshots: Vec<crate::linux::lapse::Snapshot>,
    head: Option<HeadGuard>,
    git_odd: Option<crate::protect::git::git_sweep::Before>,
    todos: Option<crate::protect::rebase_todo::Before>,
    /// Replace refs and grafts of the git directories written directly
    /// (attack atk22h F15).
    #[serde(default)]
    history: Option<crate::protect::git::history_refs::Before>,
    /// Which git directories written directly had an `rr-cache` (rerere
    /// state the run makes is set aside: attack atk22j F14).
    #[serde(default)]
    rerere: Option<crate::protect::git::rerere::Before>,
    /// When the checks started (files changed since are the run's: set
    /// aside; a margin covers the file system's coarse clock).
    start: std::time::SystemTime,
    /// The inode of each nested repository's git entry found before the
    /// run: one at the same path with another inode after it was made
    /// again during the run (after another live run's plant there was set
    /// aside: attack atk24c F4) and is vetted like a new one.
    #[serde(default)]
    nested_inodes: Vec<(PathBuf, u64, u64)>,
    /// The walk before the run stopped before it reached every ordinary
    /// directory: a repository not found then may be the user's, so one
    /// is vetted only when changed during the run (ADR 0204).
    #[serde(default)]
    walk_cut: bool,
    /// The workspace is a copy-on-write layer, vetted when applied: only
    /// the other writable grants are checked here.
    #[serde(default)]
    layered: bool,
    /// The `.git` at the top of each writable grant other than the
    /// workspace, with the inode of the one there before the run (None:
    /// none was): one made during the run is vetted like a repository made
    /// below the top (attack atk24l F12).
    #[serde(default)]
    top_gits: Vec<(PathBuf, Option<(u64, u64)>)>,
    /// The `package.json` at the top of each writable grant written
    /// directly, for its lint-staged key.
    #[serde(default)]
    package_json: crate::protect::package_json::Saved,
    /// The files at the top of each writable grant whose linters' and
    /// package tools' keys are judged (atk22l F3, F4, F9).
    #[serde(default)]
    tool_keys: crate::protect::tool_keys_direct::Saved,
}

/// The `.git` entries at the tops of `roots` other than `ws`, each with
/// the device and inode of the one there now.
fn top_gits(roots: &[PathBuf], ws: &std::path::Path) -> Vec<(PathBuf, Option<(u64, u64)>)> {
    use std::os::unix::fs::MetadataExt;
    roots
        .iter()
        .filter(|r| r.as_path() != ws)
        .map(|r| {
            let g = r.join(".git");
            let id = std::fs::symlink_metadata(&g)
                .ok()
                .map(|m| (m.dev(), m.ino()));
            (g, id)
        })
        .collect()
}

/// Those of `saved` made during the run: missing before it, or another
/// inode now.
fn new_top_gits(saved: &[(PathBuf, Option<(u64, u64)>)]) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    saved
        .iter()
        .filter(|(g, before)| {
            std::fs::symlink_metadata(g)
                .ok()
                .is_some_and(|m| *before != Some((m.dev(), m.ino())))
        })
        .map(|(g, _)| g.clone())
        .collect()
}

/// Save the state the checks after the run compare with (`fs`: the
/// resolved new-root steps; `nested`: repositories found by the
/// reservation step).
pub(super) fn before(plan: &Plan, fs: &[FsOp], nested: &[PathBuf], walk_cut: bool) -> Before {
    let protected: Vec<PathBuf> = fs
        .iter()
        .filter_map(|o| match o {
            // A path held for the agent's pending edit is the agent's
            // to write during the run (ADR 0244): not a lapse.
            FsOp::Protect { path, .. } if !plan.pending_edits.contains(path) => Some(path.clone()),
            _ => None,
        })
        .collect();
    let git_dirs = plan
        .after_run
        .as_ref()
        .map(|a| crate::protect::git::git_sweep::git_dirs(&plan.workspace, nested, &a.vet_roots));
    Before {
        start: file_system_now(),
        walk_cut,
        nested_inodes: inodes(nested),
        todos: git_dirs.as_deref().map(crate::protect::rebase_todo::before),
        history: git_dirs
            .as_deref()
            .map(crate::protect::git::history_refs::before),
        rerere: git_dirs.as_deref().map(crate::protect::git::rerere::before),
        snapshots: crate::linux::lapse::snapshot(&protected),
        head: plan
            .after_run
            .as_ref()
            .map(|_| HeadGuard::save(&plan.workspace)),
        git_odd: git_dirs.map(crate::protect::git::git_sweep::before),
        layered: false,
        top_gits: plan
            .after_run
            .as_ref()
            .map(|a| top_gits(&a.vet_roots, &plan.workspace))
            .unwrap_or_default(),
        package_json: plan
            .after_run
            .as_ref()
            .map(|a| crate::protect::package_json::before(&a.vet_roots))
            .unwrap_or_default(),
        tool_keys: plan
            .after_run
            .as_ref()
            .map(|a| crate::protect::tool_keys_direct::before(&a.vet_roots))
            .unwrap_or_default(),
    }
}

/// The inode of each nested repository's git entry, now.
fn inodes(nested: &[PathBuf]) -> Vec<(PathBuf, u64, u64)> {
    nested
        .iter()
        .filter_map(|p| {
            use std::os::unix::fs::MetadataExt;
            let m = std::fs::symlink_metadata(p).ok()?;
            Some((p.clone(), m.dev(), m.ino()))
        })
        .collect()
}

/// What the checks after a run need, as recorded before the command
/// starts ([`crate::protect::run_record`]): a run killed before its own check is
/// checked later from this.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Pending {
    after_run: Option<AfterRun>,
    nested: Vec<PathBuf>,
    before: Before,
}

/// The time file systems stamp a change with now: the status-change time
/// of a file made for the purpose (the kernel's coarse clock, which can
/// lag the precise one by a tick). A file changed after this call has a
/// status-change time at or after it; one the user made a moment before
/// the run does not count as the run's. Without a scratch file, the
/// precise clock less 50 ms.
fn file_system_now() -> std::time::SystemTime {
    use std::os::unix::fs::MetadataExt;
    let fallback = || std::time::SystemTime::now() - std::time::Duration::from_millis(50);
    // An unnamed file (O_TMPFILE): nothing to remove, nothing seen.
    let f = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
            .open(std::env::temp_dir())
    };
    let Ok(m) = f.and_then(|f| f.metadata()) else {
        return fallback();
    };
    let (Ok(secs), Ok(nanos)) = (u64::try_from(m.ctime()), u32::try_from(m.ctime_nsec())) else {
        return fallback();
    };
    std::time::UNIX_EPOCH + std::time::Duration::new(secs, nanos)
}

/// With the workspace in a copy-on-write layer (which vets it when
/// applied): the checks after the run of the other writable grants (the
/// user's `--write` directories, PATH directories granted whole), as the
/// direct mode runs them; `None` when there is no other.
pub(super) fn layered_others(plan: &Plan) -> Option<AfterRun> {
    let a = plan.after_run.as_ref()?;
    let ws = &plan.workspace;
    // A write grant inside the workspace on another mount keeps its bind
    // (the layer does not show it), so its writes are checked here like
    // those of the grants outside (attack atk22h F23).
    let bound_inside: Vec<PathBuf> = plan
        .fs
        .iter()
        .filter_map(|op| match op {
            FsOp::Bind {
                path,
                access: crate::linux::plan::Access::ReadWrite,
            } if path != ws && path.starts_with(ws) && !super::absorb::absorbed(ws, path) => {
                Some(path.clone())
            }
            _ => None,
        })
        .collect();
    let outside = |p: &PathBuf| !p.starts_with(ws) || bound_inside.iter().any(|b| p.starts_with(b));
    let mut o = a.clone();
    o.vet_roots.retain(outside);
    o.other_tops.retain(outside);
    o.missing_path_dirs.retain(|(d, _)| outside(d));
    o.changed_path_dirs.retain(|(d, _)| outside(d));
    o.link_guards.retain(|(l, _)| outside(l));
    o.quarantine_home = o.quarantine_home.filter(|q| outside(&q.home));
    (!o.vet_roots.is_empty()).then_some(o)
}

/// [`before`] for [`layered_others`]: no snapshots or HEAD of the
/// workspace (the layer's), but the git directories of the other grants'
/// repositories (their tops' and the nested ones) are swept and their
/// rebase to-do lists read as in the direct mode (attack atk22h F2, F3).
pub(super) fn before_layered(
    others: &AfterRun,
    ws: &std::path::Path,
    nested: &[PathBuf],
    walk_cut: bool,
) -> Before {
    let git_dirs = crate::protect::git::git_sweep::git_dirs_of_grants(nested, &others.vet_roots);
    Before {
        top_gits: top_gits(&others.vet_roots, ws),
        snapshots: Vec::new(),
        head: None,
        todos: Some(crate::protect::rebase_todo::before(&git_dirs)),
        history: Some(crate::protect::git::history_refs::before(&git_dirs)),
        rerere: Some(crate::protect::git::rerere::before(&git_dirs)),
        git_odd: Some(crate::protect::git::git_sweep::before(git_dirs)),
        start: file_system_now(),
        nested_inodes: inodes(nested),
        walk_cut,
        layered: true,
        package_json: crate::protect::package_json::before(&others.vet_roots),
        tool_keys: crate::protect::tool_keys_direct::before(&others.vet_roots),
    }
}

/// The checks of [`layered_others`] after the layer was applied.
pub(super) fn after_layered(
    others: &AfterRun,
    saved: Before,
    nested: &[PathBuf],
    report: &mut RestrictionReport,
) {
    for w in checks(Some(others), &saved, nested) {
        tell(&w, report);
    }
}

/// The record of the pending check of this run (JSON): `after_run` is
/// the plan's, or with the layer [`layered_others`]' (a killed run's
/// layer is dropped, its other grants are checked: attack atk22h F6).
pub(super) fn pending(
    after_run: Option<&AfterRun>,
    saved: &Before,
    nested: &[PathBuf],
) -> Option<Vec<u8>> {
    #[derive(serde::Serialize)]
    struct Ref<'a> {
        after_run: Option<&'a AfterRun>,
        nested: &'a [PathBuf],
        before: &'a Before,
    }
    serde_json::to_vec(&Ref {
        after_run,
        nested,
        before: saved,
    })
    .ok()
}

/// Run the checks of a recorded pending check (a run killed before its
/// own); the findings, or why the record is unusable.
pub(crate) fn catch_up(record: &[u8]) -> Result<Vec<String>, String> {
    let p: Pending = serde_json::from_slice(record).map_err(|e| e.to_string())?;
    Ok(checks(p.after_run.as_ref(), &p.before, &p.nested))
}

/// Run the checks after the run (`nested`: repositories found by the
/// reservation step). Called once the target's PID namespace is gone
/// (init reaped: the kernel had killed and reaped every process in it),
/// so no sandboxed process can race the checks.
pub(super) fn after(
    plan: &Plan,
    saved: Before,
    nested: &[PathBuf],
    report: &mut RestrictionReport,
) {
    for w in checks(plan.after_run.as_ref(), &saved, nested) {
        tell(&w, report);
    }
}

/// One finding: on stderr and in the report.
pub(super) fn tell(w: &str, report: &mut RestrictionReport) {
    // Paths the command chose may hold control strings.
    let w = crate::protect::terminal_filter::printable(w);
    sys::write_fd(2, format!("skarn: warning: {w}\n").as_bytes());
    report.degrade(w);
}

/// The checks themselves; one line per finding.
fn checks(after_run: Option<&AfterRun>, saved: &Before, nested: &[PathBuf]) -> Vec<String> {
    let mut found = Vec::new();
    if let Some(a) = after_run {
        // skarn's own placeholder copies are not the run's (atk27k F6).
        crate::protect::own_files::drop_unchanged(&a.own_files);
    }
    if let Some(a) = after_run.filter(|_| saved.head.is_some() || saved.layered) {
        if let Some(head) = &saved.head {
            found.extend(head.check());
        }
        if let Some(q) = &a.quarantine_home {
            found.extend(crate::protect::git::nested_git::quarantine_new_dot_entries(
                &q.home,
                &q.existing,
            ));
        }
        // (Repositories, files host tools look up from any directory and
        // settings read in any directory: one walk.)
        // A nested repository made again since the walk before the run
        // (another inode at its path) is not the one found there.
        let same: Vec<PathBuf> = nested
            .iter()
            .filter(|p| {
                use std::os::unix::fs::MetadataExt;
                let now = std::fs::symlink_metadata(p).ok();
                match saved.nested_inodes.iter().find(|(q, _, _)| q == *p) {
                    Some((_, dev, ino)) => now.is_some_and(|m| m.dev() == *dev && m.ino() == *ino),
                    None => true,
                }
            })
            .cloned()
            .collect();
        found.extend(crate::protect::git::nested_git::vet_new(
            &a.vet_roots,
            &same,
            &new_top_gits(&saved.top_gits),
            &a.hooks_rel,
            Some(saved.start),
            saved.walk_cut,
        ));
        found.extend(crate::protect::grant_tops::set_aside_new(
            &a.other_tops,
            saved.start,
        ));
        // The hook managers' files and `.gitmodules` at the top of each
        // nested repository (atk22j F8, F9).
        let tops: Vec<PathBuf> = same
            .iter()
            .filter(|g| g.file_name() == Some(std::ffi::OsStr::new(".git")))
            .filter_map(|g| g.parent().map(std::path::Path::to_path_buf))
            .filter(|t| !a.other_tops.contains(t) && !a.vet_roots.contains(t))
            .collect();
        found.extend(crate::protect::repo_top::set_aside_new(&tops, saved.start));
        found.extend(crate::protect::home_links::restore_links(&a.link_guards));
        // Links the run made to writable directories outside the grants.
        found.extend(crate::protect::links_out::set_aside(
            &a.vet_roots,
            saved.start,
        ));
        found.extend(crate::protect::path_shadow::set_aside_shadows(
            &a.missing_path_dirs,
            &a.vet_roots,
            &a.path_configured,
        ));
        found.extend(crate::protect::path_shadow::set_aside_shadows_since(
            &a.changed_path_dirs,
            &a.vet_roots,
            Some(saved.start),
            &a.path_configured,
        ));
        let top: Vec<PathBuf> = a.changed_path_dirs.iter().map(|(d, _)| d.clone()).collect();
        found.extend(crate::protect::path_shadow_walk::set_aside(
            &a.relative_path,
            &a.path_later,
            &a.vet_roots,
            &top,
            Some(saved.start),
            &a.path_configured,
        ));
    }
    if let Some(b) = &saved.git_odd {
        found.extend(crate::protect::git::git_sweep::sweep(b, b.dirs()));
    }
    if let Some(t) = &saved.todos {
        found.extend(crate::protect::rebase_todo::after(t));
    }
    if let Some(h) = &saved.history {
        found.extend(crate::protect::git::history_refs::after(h));
    }
    if let Some(r) = &saved.rerere {
        found.extend(crate::protect::git::rerere::after(r, saved.start));
    }
    found.extend(crate::linux::lapse::check(&saved.snapshots));
    found.extend(crate::protect::package_json::after(&saved.package_json));
    found.extend(crate::protect::tool_keys_direct::after(&saved.tool_keys));
    found
}
