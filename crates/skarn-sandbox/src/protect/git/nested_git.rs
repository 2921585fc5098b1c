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

/// Directories walked at most per run (per walk before the run).
pub const MAX_DIRS: usize = 50_000;

/// Directory names not walked for repositories ([`crate::protect::grant_walk`]).
pub const SKIPPED: &[&str] = crate::protect::grant_walk::SKIPPED;

/// Time one walk before the run may take at most (beyond it, the walk
/// stops as at [`MAX_DIRS`], and says so).
pub const MAX_WALK: std::time::Duration = std::time::Duration::from_millis(750);

/// The bounds of the walk before the run.
pub const BEFORE: crate::protect::grant_walk::Bounds = crate::protect::grant_walk::Bounds {
    dirs: MAX_DIRS,
    time: MAX_WALK,
};

/// The bounds of the walk after the run (the run paid for every directory
/// it made; past them the check stops and says what it did not vet).
pub const AFTER: crate::protect::grant_walk::Bounds = crate::protect::grant_walk::Bounds {
    dirs: 400_000,
    time: std::time::Duration::from_secs(8),
};

/// Nested `.git` entries under `roots` (their own root level excluded),
/// and whether the walk stopped at [`MAX_DIRS`] or [`MAX_WALK`].
pub fn find(roots: &[PathBuf]) -> (Vec<PathBuf>, bool) {
    let w = crate::protect::grant_walk::walk(roots, BEFORE, false, &Default::default());
    (w.repos, w.truncated)
}

/// Sockets kept at most (a bound on what a tree can make us carry).
pub const MAX_SOCKETS: usize = crate::protect::grant_walk::MAX_FOUND;

/// The hooks directory a relative `core.hooksPath` of the global git
/// configuration (`hooks_rel`) names in the work tree of `git` (a `.git`
/// entry), if one is there: host git runs what it holds.
fn global_hooks(git: &Path, hooks_rel: &[PathBuf]) -> Option<String> {
    if git.file_name()? != ".git" {
        return None;
    }
    let top = git.parent()?;
    hooks_rel
        .iter()
        .find(|r| {
            let p = top.join(r);
            std::fs::symlink_metadata(&p).is_ok()
                && crate::protect::placeholder::is_placeholder(&p).is_none()
        })
        .map(|r| {
            format!(
                "hooks directory {} (core.hooksPath of the global git configuration)",
                r.display()
            )
        })
}

/// Why a repository created during the run is not kept, if it is not.
pub(crate) fn unsafe_repo(git: &Path) -> Option<String> {
    let md = std::fs::symlink_metadata(git).ok()?;
    if !md.is_dir() {
        return Some("a .git link to another repository".into());
    }
    for f in ["commondir", "config.worktree"] {
        if std::fs::symlink_metadata(git.join(f)).is_ok() {
            return Some(format!("it has {f}"));
        }
    }
    // Anything but a real directory of samples: a symbolic link (even a
    // dangling one, filled by a later run) or an unreadable directory may
    // hold hooks git runs.
    let hooks = git.join("hooks");
    match std::fs::symlink_metadata(&hooks) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Ok(m) if m.is_dir() => match std::fs::read_dir(&hooks) {
            Ok(rd) => {
                for e in rd {
                    let Ok(e) = e else {
                        return Some("an unreadable hooks directory".into());
                    };
                    if !e.file_name().to_string_lossy().ends_with(".sample") {
                        return Some(format!("hook {}", e.file_name().to_string_lossy()));
                    }
                }
            }
            Err(_) => return Some("an unreadable hooks directory".into()),
        },
        Ok(_) => return Some("hooks that is not a directory".into()),
        Err(_) => return Some("an unreadable hooks entry".into()),
    }
    // A link, FIFO or device node: host git writes through links (reflogs,
    // COMMIT_EDITMSG) and hangs on a FIFO; git makes none of them.
    if let Some(o) = crate::protect::git::git_sweep::scan(git, false).first() {
        return Some(format!("{} at {}", o.kind, o.path.display()));
    }
    let cfg = match crate::protect::git::gitconfig::read_file(&git.join("config")) {
        Ok(c) => c.unwrap_or_default(),
        Err(why) => return Some(format!("a config that is {why}")),
    };
    let parsed = crate::protect::git::gitconfig::parse(&cfg);
    if !parsed.bad_lines.is_empty() {
        return Some("an unparsable config".into());
    }
    // An allow-list, not a list of known dangers: git has many keys that
    // run programs (diff.external, submodule.*.update, ext:: remotes, ...).
    parsed
        .items
        .iter()
        .find(|i| !crate::linux::staging::allowed_key(i))
        .map(|i| format!("config {}", i.key()))
}

/// The workspace's `.git/HEAD` before the run, to put back if the run
/// spoils it (a `.git` that is no longer a repository makes git take the
/// workspace itself for one, with a configuration the command wrote).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct HeadGuard {
    head: Option<(PathBuf, String)>,
}

fn valid_head(text: &str) -> bool {
    let t = text.trim_end_matches('\n');
    if let Some(r) = t.strip_prefix("ref: ") {
        return r.starts_with("refs/") && !r.contains("..") && !r.contains(char::is_whitespace);
    }
    (t.len() == 40 || t.len() == 64) && t.bytes().all(|b| b.is_ascii_hexdigit())
}

impl HeadGuard {
    /// Remember `ws/.git/HEAD` when it is a valid HEAD.
    pub fn save(ws: &Path) -> HeadGuard {
        let p = ws.join(".git/HEAD");
        let head = std::fs::read_to_string(&p)
            .ok()
            .filter(|t| t.len() < 512 && valid_head(t))
            .map(|t| (p, t));
        HeadGuard { head }
    }

    /// Put HEAD back if the run left it invalid; one line when it did.
    pub fn check(&self) -> Option<String> {
        let (p, before) = self.head.as_ref()?;
        let now = std::fs::read_to_string(p).unwrap_or_default();
        if valid_head(&now) {
            return None;
        }
        let restored = std::fs::write(p, before).is_ok();
        Some(format!(
            "{} was left invalid by the command (git would then take the workspace itself for a \
             repository); {}",
            p.display(),
            if restored {
                "restored"
            } else {
                "it could not be restored: review it before running git"
            }
        ))
    }
}

/// After a run whose workspace holds the home: every top-level dot entry
/// of `home` that was not there before (`before`, names) is moved into
/// `home/.skarn-quarantine-<run id>/`, since host programs read dot files
/// there by name (`.lesskey`, `.psqlrc`, `.hgrc`, ...). Placeholders of the
/// run itself are left to their own clean-up.
pub fn quarantine_new_dot_entries(home: &Path, before: &[String]) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(home) else {
        return Vec::new();
    };
    let mut jail: Option<PathBuf> = None;
    let mut moved = Vec::new();
    let mut removed = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with('.')
            || name == ".git"
            || before.contains(&name)
            || name.starts_with(".skarn-quarantine-")
            || crate::protect::placeholder::is_placeholder(&e.path()).is_some()
        {
            continue;
        }
        // One jail per run, made with a fresh unguessable name (a
        // directory the run made under an expected name is not used).
        if jail.is_none() {
            for _ in 0..8 {
                let j = home.join(format!(
                    ".skarn-quarantine-{}",
                    crate::protect::set_aside::random_suffix()
                ));
                if std::fs::create_dir(&j).is_ok() {
                    jail = Some(j);
                    break;
                }
            }
        }
        let into = jail.as_ref().map(|j| j.join(&name));
        if into.is_some_and(|i| std::fs::rename(e.path(), i).is_ok()) {
            moved.push(name);
            continue;
        }
        match crate::protect::set_aside::set_aside(&e.path(), "skarn-quarantine") {
            crate::protect::set_aside::Aside::Left(why) => {
                removed.push(format!("{name} (LEFT IN PLACE: {why})"))
            }
            _ => removed.push(name),
        }
    }
    let mut out = Vec::new();
    if let (false, Some(j)) = (moved.is_empty(), &jail) {
        out.push(format!(
            "new dot files in the home ({}) were moved into {}: host programs read such files \
             by name; review them before moving them back",
            moved.join(", "),
            j.display()
        ));
    }
    if !removed.is_empty() {
        out.push(format!(
            "new dot files in the home ({}) could not be moved into a quarantine directory: \
             host programs read such files by name, so each was set aside beside itself or removed",
            removed.join(", ")
        ));
    }
    out
}

/// After the run: vet each `.git` under `roots` that was not in `before`,
/// and set aside each file host tools look up from any directory
/// ([`crate::protect::grant_walk::UPWARD`]) or settings entry read in any
/// directory ([`crate::protect::grant_walk::Walk::settings`]) that was made or
/// changed at or after `since`; returns one line per repository or entry
/// set aside.
pub fn vet_new(
    roots: &[PathBuf],
    before: &[PathBuf],
    hooks_rel: &[PathBuf],
    since: Option<std::time::SystemTime>,
) -> Vec<String> {
    let w = crate::protect::grant_walk::walk(roots, AFTER, false, &Default::default());
    let mut out = Vec::new();
    for git in w.repos.iter().filter(|g| !before.contains(g)) {
        if roots.contains(git) && std::fs::symlink_metadata(git.join("HEAD")).is_err() {
            continue;
        }
        let Some(why) = unsafe_repo(git).or_else(|| global_hooks(git, hooks_rel)) else {
            continue;
        };
        // A writable grant's root cannot be moved: its HEAD is, which is
        // enough for git not to take it for a repository.
        let what = if roots.contains(git) {
            git.join("HEAD")
        } else {
            git.clone()
        };
        let aside = crate::protect::set_aside::set_aside(&what, "skarn-quarantine");
        out.push(format!(
            "a repository created during the run at {} could run programs on the host ({why}); {}",
            git.display(),
            aside.describe("review it before renaming it back or running git there")
        ));
    }
    if let Some(since) = since {
        out.extend(set_aside_upward(&w.upward, since));
        out.extend(set_aside_settings(&w.settings, since));
        out.extend(crate::protect::venv_guard::set_aside(&w.venvs, since));
        // Editor workspace files at the top (`*.code-workspace`; existing
        // ones were read-only): found by pattern, not by name.
        let mut top = Vec::new();
        for r in roots {
            if let Ok(rd) = std::fs::read_dir(r) {
                top.extend(
                    rd.flatten()
                        .take(100_000)
                        .filter(|e| {
                            e.file_name()
                                .to_string_lossy()
                                .to_lowercase()
                                .ends_with(crate::protect::persistence::WORKSPACE_FILE_SUFFIX)
                        })
                        .map(|e| e.path()),
                );
            }
        }
        out.extend(set_aside_settings(&top, since));
    }
    if w.truncated {
        out.push(format!(
            "the check after the run stopped after {} directories of the writable grants \
             (bounds: {} directories, {} s): repositories and files host tools look up from \
             any directory (rust-toolchain.toml, .hg, mise.toml, ...) created in the \
             directories it did not reach were not vetted; review {} before running git, \
             rustup or hg below it",
            w.dirs,
            AFTER.dirs,
            AFTER.time.as_secs(),
            roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out
}

/// Set aside every settings entry of `found` (existing ones were kept
/// read-only) made or changed since `since` (an inode change time in its
/// tree at or after it) under a name no program reads.
fn set_aside_settings(found: &[PathBuf], since: std::time::SystemTime) -> Vec<String> {
    let mut out = Vec::new();
    for p in found {
        // (Gone with an entry set aside above it.)
        if std::fs::symlink_metadata(p).is_err() || !tree_changed_since(p, since) {
            continue;
        }
        let aside = crate::protect::set_aside::set_aside(p, "skarn-quarantine");
        out.push(format!(
            "{} was made or changed during the run: agents, editors and shells read it in \
             that directory and run what it names; {}",
            p.display(),
            aside.describe("review it before renaming it back or opening that directory")
        ));
    }
    out
}

/// Whether anything in the tree at `p` (not following links; at most
/// 10 000 entries, beyond which it counts as changed) was changed at or
/// after `since` ([`crate::protect::grant_walk::changed_since`]).
fn tree_changed_since(p: &Path, since: std::time::SystemTime) -> bool {
    let mut stack = vec![p.to_path_buf()];
    let mut budget = 10_000usize;
    while let Some(q) = stack.pop() {
        let Some(b) = budget.checked_sub(1) else {
            return true;
        };
        budget = b;
        if crate::protect::grant_walk::changed_since(&q, since) {
            return true;
        }
        if std::fs::symlink_metadata(&q).is_ok_and(|m| m.is_dir())
            && let Ok(rd) = std::fs::read_dir(&q)
        {
            stack.extend(rd.flatten().map(|e| e.path()));
        }
    }
    false
}

/// Set aside each of `found` (or the file inside that matters) that
/// changed at or after `since`.
fn set_aside_upward(found: &[PathBuf], since: std::time::SystemTime) -> Vec<String> {
    let mut out = Vec::new();
    for p in found {
        let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some((_, inner, why)) = crate::protect::grant_walk::UPWARD
            .iter()
            .find(|(n, _, _)| *n == name)
        else {
            continue;
        };
        let targets: Vec<PathBuf> = if inner.is_empty() {
            vec![p.clone()]
        } else {
            inner.iter().map(|i| p.join(i)).collect()
        };
        for t in targets {
            // Only inside a real directory of the grant: a `.hg` the run
            // made a link to a host directory must not make us rename a
            // host file. (This run's placeholders are removed by their own
            // step; a directory `repo` is jj's store.)
            let real_parent = t
                .parent()
                .is_some_and(|d| std::fs::canonicalize(d).is_ok_and(|c| c == d));
            if !real_parent
                || !crate::protect::grant_walk::changed_since(&t, since)
                || crate::protect::placeholder::is_placeholder(&t).is_some()
                || (t.ends_with(".jj/repo") && t.is_dir())
            {
                continue;
            }
            let aside = crate::protect::set_aside::set_aside(&t, "skarn-set-aside");
            out.push(format!(
                "{} was written during the run and host tools read it from any directory \
                 below ({why}); {}",
                t.display(),
                aside.describe("review it before renaming it back or running those tools there")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entry of `dir` that `name` was set aside as.
    fn aside_of(dir: &Path, name: &str) -> Option<PathBuf> {
        let prefix = format!("{name}.skarn-quarantine-");
        std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .find(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .map(|e| e.path())
    }

    #[test]
    fn finds_and_vets_nested_repositories() {
        let tmp = skarn_test_support::TempDir::new("nested");
        let d = tmp.path().to_path_buf();
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
        let w = vet_new(&roots, &before, &[], None);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(d.join("clone/.git").exists());
        assert!(!d.join("src/.git").exists() && aside_of(&d.join("src"), ".git").is_some());
        assert!(!d.join("evil/.git").exists());
        // The root turned into a bare repository: its HEAD is set aside.
        std::fs::create_dir_all(d.join("objects")).unwrap();
        std::fs::create_dir_all(d.join("refs")).unwrap();
        std::fs::write(d.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(d.join("config"), "[core]\n\tfsmonitor = x\n").unwrap();
        let w = vet_new(&roots, &before, &[], None);
        assert!(
            w.iter().any(|l| l.contains("HEAD.skarn-quarantine-")),
            "{w:?}"
        );
        assert!(!d.join("HEAD").exists());
        // A bare repository that takes objects, refs and config from
        // elsewhere through `commondir` is found and set aside too.
        std::fs::create_dir_all(d.join("cd/X")).unwrap();
        std::fs::create_dir_all(d.join("cd/Y/objects")).unwrap();
        std::fs::create_dir_all(d.join("cd/Y/refs/heads")).unwrap();
        std::fs::write(d.join("cd/X/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(d.join("cd/X/commondir"), "../Y\n").unwrap();
        std::fs::write(d.join("cd/Y/config"), "[core]\n\tpager = x\n").unwrap();
        let w = vet_new(&roots, &before, &[], None);
        assert!(w.iter().any(|l| l.contains("cd/X")), "{w:?}");
        assert!(!d.join("cd/X").exists() && aside_of(&d.join("cd"), "X").is_some());
        // A spoiled .git/HEAD is put back.
        std::fs::write(d.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let g = HeadGuard::save(&d);
        std::fs::write(d.join(".git/HEAD"), "junk").unwrap();
        assert!(g.check().is_some());
        assert_eq!(
            std::fs::read_to_string(d.join(".git/HEAD")).unwrap(),
            "ref: refs/heads/main\n"
        );
        assert!(g.check().is_none());
    }

    #[test]
    fn repositories_that_hide_hooks_or_config_from_a_strict_reader_are_not_kept() {
        let tmp = skarn_test_support::TempDir::new("nested-hide");
        let d = tmp.path().to_path_buf();
        let repo = |name: &str| {
            let g = d.join(name).join(".git");
            std::fs::create_dir_all(&g).unwrap();
            g
        };
        // A byte that is not UTF-8 in a comment; git reads the rest.
        let g = repo("latin");
        std::fs::write(
            g.join("config"),
            b"# \xff\n[core]\n\tfsmonitor = \"touch /tmp/p\"\n",
        )
        .unwrap();
        assert_eq!(unsafe_repo(&g).as_deref(), Some("config core.fsmonitor"));
        // The same with a harmless configuration is kept.
        let g = repo("latin-ok");
        std::fs::write(g.join("config"), b"[user]\n\tname = Jos\xe9\n").unwrap();
        assert_eq!(unsafe_repo(&g), None);
        // hooks: a dangling link (filled by a later run), a file.
        let g = repo("dangling");
        std::os::unix::fs::symlink("../hk", g.join("hooks")).unwrap();
        assert!(unsafe_repo(&g).is_some_and(|w| w.contains("hooks")));
        let g = repo("hooks-file");
        std::fs::write(g.join("hooks"), "").unwrap();
        assert!(unsafe_repo(&g).is_some_and(|w| w.contains("hooks")));
        // config: a link to a file elsewhere.
        let g = repo("config-link");
        std::fs::write(d.join("elsewhere"), "[user]\n\tname = x\n").unwrap();
        std::os::unix::fs::symlink("../../elsewhere", g.join("config")).unwrap();
        assert!(unsafe_repo(&g).is_some_and(|w| w.contains("config")));
    }
}
