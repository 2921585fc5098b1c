//! Git repositories below the root of a writable grant.
//!
//! Host git runs hooks and code-running settings of whatever repository it
//! finds from the current directory, so a repository anywhere under a
//! writable grant is a persistence path (a shell prompt runs git on `cd`).
//! Before the run, existing nested repositories are found so that their
//! hooks and configuration are protected like the workspace's; after the
//! run, a repository that appeared during it is vetted: it is kept only if
//! its hooks are samples and its configuration runs nothing, else it is
//! set aside under a name git ignores and the user is told.

use std::path::{Path, PathBuf};

/// Directories walked at most per run (per walk).
pub const MAX_DIRS: usize = 50_000;

/// Directory names not walked: dependency and build trees, large and
/// rebuilt by tools (a repository planted there is only reached by a user
/// who enters it by hand).
pub const SKIPPED: &[&str] = &["node_modules", "target", ".venv", "venv", "__pycache__"];

/// Nested `.git` entries under `roots` (their own root level excluded),
/// and whether the walk stopped at [`MAX_DIRS`].
pub fn find(roots: &[PathBuf]) -> (Vec<PathBuf>, bool) {
    let mut out = Vec::new();
    let mut seen = 0usize;
    for root in roots {
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            seen += 1;
            if seen > MAX_DIRS {
                return (out, true);
            }
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            let entries: Vec<_> = rd.flatten().collect();
            // A bare repository (HEAD, objects, refs): host git uses it
            // when run inside it.
            let has = |n: &str| entries.iter().any(|e| e.file_name() == n);
            if dir != *root && has("HEAD") && has("objects") && has("refs") {
                out.push(dir.clone());
                continue;
            }
            for e in entries {
                let name = e.file_name();
                let Ok(ft) = e.file_type() else { continue };
                if name == ".git" {
                    if dir != *root {
                        out.push(e.path());
                    }
                    continue;
                }
                if ft.is_dir() && !SKIPPED.iter().any(|s| name == *s) {
                    stack.push(e.path());
                }
            }
        }
    }
    out.sort();
    (out, false)
}

/// Why a repository created during the run is not kept, if it is not.
fn unsafe_repo(git: &Path) -> Option<String> {
    let md = std::fs::symlink_metadata(git).ok()?;
    if !md.is_dir() {
        return Some("a .git link to another repository".into());
    }
    for f in ["commondir", "config.worktree"] {
        if std::fs::symlink_metadata(git.join(f)).is_ok() {
            return Some(format!("it has {f}"));
        }
    }
    if let Ok(rd) = std::fs::read_dir(git.join("hooks")) {
        for e in rd.flatten() {
            if !e.file_name().to_string_lossy().ends_with(".sample") {
                return Some(format!("hook {}", e.file_name().to_string_lossy()));
            }
        }
    }
    let cfg = std::fs::read_to_string(git.join("config")).unwrap_or_default();
    let parsed = crate::gitconfig::parse(&cfg);
    if !parsed.bad_lines.is_empty() {
        return Some("an unparsable config".into());
    }
    parsed
        .items
        .iter()
        .find(|i| crate::lapse::runs_code(&i.key(), i.value.as_deref()))
        .map(|i| format!("config {}", i.key()))
}

/// After the run: vet each `.git` under `roots` that was not in `before`;
/// returns one line per repository set aside.
pub fn vet_new(roots: &[PathBuf], before: &[PathBuf], run_id: u32) -> Vec<String> {
    let (now, truncated) = find(roots);
    let mut out = Vec::new();
    for git in now.iter().filter(|g| !before.contains(g)) {
        let Some(why) = unsafe_repo(git) else {
            continue;
        };
        let name = git.file_name().map(|n| n.to_string_lossy().into_owned());
        let aside = git.with_file_name(format!(
            "{}.skarn-quarantine-{run_id}",
            name.unwrap_or_default()
        ));
        let moved = std::fs::rename(git, &aside).is_ok();
        out.push(format!(
            "a repository created during the run at {} could run programs on the host ({why}); {}",
            git.display(),
            if moved {
                format!(
                    "set aside as {} (review it before renaming it back)",
                    aside.display()
                )
            } else {
                "it could not be set aside: review it before running git there".into()
            }
        ));
    }
    if truncated {
        out.push(format!(
            "more than {MAX_DIRS} directories under the writable grants: repositories created \
             deeper were not checked"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_vets_nested_repositories() {
        let d = std::env::temp_dir().join(format!("skarn-nested-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join(".git")).unwrap();
        std::fs::create_dir_all(d.join("vendor/lib/.git/hooks")).unwrap();
        std::fs::create_dir_all(d.join("node_modules/x/.git")).unwrap();
        let roots = vec![d.clone()];
        let (before, t) = find(&roots);
        assert!(!t);
        assert_eq!(before, vec![d.join("vendor/lib/.git")]);
        // During the run: a clean clone and a hostile gitdir link.
        std::fs::create_dir_all(d.join("clone/.git/hooks")).unwrap();
        std::fs::write(d.join("clone/.git/hooks/pre-commit.sample"), "").unwrap();
        std::fs::write(
            d.join("clone/.git/config"),
            "[remote \"origin\"]\n\turl = ../x\n",
        )
        .unwrap();
        std::fs::create_dir_all(d.join("src")).unwrap();
        std::fs::write(d.join("src/.git"), "gitdir: ../.cache-x\n").unwrap();
        std::fs::create_dir_all(d.join("evil/.git")).unwrap();
        std::fs::write(
            d.join("evil/.git/config"),
            "[core]\n\tfsmonitor = touch /tmp/p\n",
        )
        .unwrap();
        let w = vet_new(&roots, &before, 9);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(d.join("clone/.git").exists());
        assert!(!d.join("src/.git").exists() && d.join("src/.git.skarn-quarantine-9").exists());
        assert!(!d.join("evil/.git").exists());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
