//! The agent's file tools inside the boundary of its commands (issue 24
//! item 6, ADR 0192): a Write, Edit, ... outside what a `skarn run` in the
//! workspace could write is refused. That place is the workspace and the
//! write grants of the user's configuration (`~/.config/skarn/config.toml`,
//! a trusted workspace `skarn.toml`: the layers `skarn run` reads, an
//! untrusted file's widening left out). Without this, root's Write of
//! `/etc/profile.d/x.sh` or any user's of a file beside the project met no
//! objection from the hook while the same write from a command failed.
//!
//! What the tools may write is recorded as run-writable by
//! [`super::file_record`] (ADR 0307, atk27n F4b).

use std::path::{Path, PathBuf};

use skarn_sandbox::policy::granted::{GrantLog, log_path};
use skarn_sandbox::policy::layers::Layer;
use skarn_sandbox::policy::trust::TrustStore;

use super::file_paths::fold;

/// Where a `skarn run` in `ws` could write: the workspace and the write
/// grants of the configuration it reads (each as given and canonical).
/// `Err`: the configuration cannot be read (the run would refuse to
/// start: so does the guard).
pub fn roots(ws: &Path, home: Option<&Path>) -> Result<Vec<PathBuf>, String> {
    let granted = log_path(home)
        .map(|p| GrantLog::load(&p))
        .unwrap_or_default();
    let (layers, _) = Layer::config_files(ws, home, &granted, &TrustStore::for_home(home))
        .map_err(|e| {
            format!(
                "skarn's configuration for {} cannot be read ({e})",
                ws.display()
            )
        })?;
    // A workspace `skarn run` refuses (`/`, a system or shared directory,
    // a home: `workspace_kind::non_project`) is no boundary for the file
    // tools either (attack atk24d F2): only the user's write grants are.
    let real = std::fs::canonicalize(ws).unwrap_or_else(|_| ws.to_path_buf());
    let mut out = if skarn_sandbox::policy::workspace_kind::non_project(&real, home).is_some() {
        Vec::new()
    } else {
        vec![ws.to_path_buf()]
    };
    let grants: Vec<skarn_sandbox::Grant> = layers
        .iter()
        .flat_map(|l| l.write.iter().cloned())
        .collect();
    for g in settled_grants(ws, grants) {
        out.extend(g.alias);
        out.push(g.path);
    }
    let canon: Vec<PathBuf> = out
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    out.extend(canon);
    out.retain(|p| p.is_absolute());
    Ok(out)
}

/// The write grants as `skarn run` binds them
/// ([`skarn_sandbox::policy::grants::canonicalize`], the function the run
/// itself calls): a grant it refuses (a link a confined command could
/// have planted, one leading into a home place) or drops is no root, and
/// a kept one counts under its canonical and written names. Only the
/// canonical path is a root, never the link's target reached otherwise
/// (attack atk24i F2). A refused grant is left out and the others are
/// settled again, as many times as there are grants.
fn settled_grants(ws: &Path, mut grants: Vec<skarn_sandbox::Grant>) -> Vec<skarn_sandbox::Grant> {
    use skarn_sandbox::policy::grants::{GrantError, canonicalize};
    for _ in 0..=grants.len() {
        let mut policy = skarn_sandbox::Policy::new(ws);
        policy.write = grants.clone();
        match canonicalize(&mut policy) {
            Ok(_) => return policy.write,
            Err(GrantError::LinkedGrant { path, .. } | GrantError::PlantedSymlink { path, .. }) => {
                grants.retain(|g| g.path != path)
            }
        }
    }
    Vec::new()
}

/// Why `candidates` (the absolute names one tool path may write, as
/// written and resolved) are not all inside `roots`.
pub fn outside(candidates: &[PathBuf], roots: &[PathBuf], ws: &Path) -> Option<String> {
    let c = candidates
        .iter()
        .find(|c| !roots.iter().any(|r| fold(c).starts_with(fold(r))))?;
    Some(format!(
        "{} is outside the workspace {} and the places the user's skarn configuration lets \
         commands write: the agent's commands cannot write there, and its file tools stay \
         inside the same boundary",
        c.display(),
        ws.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_and_write_grants_only() {
        let t = skarn_test_support::TempDir::new("hook_boundary");
        let (ws, home, out) = (t.dir("ws"), t.dir("home"), t.dir("shared"));
        let r = roots(&ws, Some(&home)).unwrap();
        assert!(outside(&[ws.join("src/a.rs")], &r, &ws).is_none());
        assert!(outside(&[out.join("x")], &r, &ws).is_some());
        // System places (what root's file tools could otherwise write),
        // the home, the host's temporary directory (the commands' is
        // private).
        for p in [
            "/etc/profile.d/x.sh",
            "/etc/cron.d/x",
            "/usr/local/lib/x.so",
            "/var/spool/cron/crontabs/root",
            "/tmp/scratch.txt",
        ] {
            assert!(outside(&[PathBuf::from(p)], &r, &ws).is_some(), "{p}");
        }
        assert!(outside(&[home.join("notes.md")], &r, &ws).is_some());
        std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
        std::fs::write(
            home.join(".config/skarn/config.toml"),
            format!("[run]\nwrite = [{:?}]\n", out.display().to_string()),
        )
        .unwrap();
        let r = roots(&ws, Some(&home)).unwrap();
        assert!(outside(&[out.join("x")], &r, &ws).is_none(), "{r:?}");
        // A workspace file's widening, untrusted: not a grant.
        let other = t.dir("other");
        std::fs::write(
            ws.join("skarn.toml"),
            format!("[run]\nwrite = [{:?}]\n", other.display().to_string()),
        )
        .unwrap();
        let r = roots(&ws, Some(&home)).unwrap();
        assert!(outside(&[other.join("x")], &r, &ws).is_some(), "{r:?}");
    }
}
