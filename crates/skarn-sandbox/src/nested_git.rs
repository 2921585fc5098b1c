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

/// Time one walk before the run may take at most (beyond it, the walk
/// stops as at [`MAX_DIRS`], and says so).
pub const MAX_WALK: std::time::Duration = std::time::Duration::from_millis(750);

/// Nested `.git` entries under `roots` (their own root level excluded),
/// and whether the walk stopped at [`MAX_DIRS`] or [`MAX_WALK`].
pub fn find(roots: &[PathBuf]) -> (Vec<PathBuf>, bool) {
    let w = find_with_sockets(roots);
    (w.repos, w.truncated)
}

/// What one walk of the writable grants found.
#[derive(Debug, Default)]
pub struct Walk {
    /// Nested repositories (see [`find`]).
    pub repos: Vec<PathBuf>,
    /// Unix sockets (a host server's socket in a writable grant: Landlock
    /// cannot stop `connect(2)` to it, so the run hides it).
    pub sockets: Vec<PathBuf>,
    /// Entries below the grants' top that their programs read in any
    /// directory ([`crate::persistence::any_depth`]: `sub/.claude`,
    /// `sub/.envrc`, ...): kept read-only like the top's.
    pub settings: Vec<PathBuf>,
    /// The walk stopped at [`MAX_DIRS`] or [`MAX_WALK`].
    pub truncated: bool,
}

/// [`find`], plus the unix sockets and settings entries met on the way.
pub fn find_with_sockets(roots: &[PathBuf]) -> Walk {
    let mut w = Walk::default();
    let deadline = std::time::Instant::now() + MAX_WALK;
    let (repos, truncated) = find_capped(
        roots,
        MAX_DIRS,
        Some(&mut w.sockets),
        Some(&mut w.settings),
        Some(deadline),
    );
    w.repos = repos;
    w.truncated = truncated;
    w
}

/// Sockets kept at most (a bound on what a tree can make us carry).
pub const MAX_SOCKETS: usize = 4096;

fn find_capped(
    roots: &[PathBuf],
    cap: usize,
    mut sockets: Option<&mut Vec<PathBuf>>,
    mut settings: Option<&mut Vec<PathBuf>>,
    deadline: Option<std::time::Instant>,
) -> (Vec<PathBuf>, bool) {
    use std::os::unix::fs::FileTypeExt;
    let mut out = Vec::new();
    let mut seen = 0usize;
    for root in roots {
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            seen += 1;
            if seen > cap
                || (seen.is_multiple_of(256)
                    && deadline.is_some_and(|d| std::time::Instant::now() > d))
            {
                return (out, true);
            }
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            let entries: Vec<_> = rd.flatten().collect();
            // A bare repository (HEAD, objects, refs; or HEAD and a
            // `commondir` naming where objects, refs, config and hooks
            // are): host git uses it when run inside it.
            let has = |n: &str| entries.iter().any(|e| e.file_name() == n);
            if has("HEAD") && ((has("objects") && has("refs")) || has("commondir")) {
                // (The root too: with its `.git` missing or spoiled, git
                // takes the directory itself for a bare repository.)
                out.push(dir.clone());
                if dir != *root {
                    continue;
                }
            }
            for e in entries {
                let name = e.file_name();
                let Ok(ft) = e.file_type() else { continue };
                if name == ".git" {
                    if dir != *root {
                        out.push(e.path());
                    }
                    // Sockets at the git directory's top (git's fsmonitor
                    // daemon, tools' IPC) are hidden too.
                    if let Some(s) = sockets.as_deref_mut()
                        && ft.is_dir()
                        && let Ok(rd) = std::fs::read_dir(e.path())
                    {
                        for g in rd.flatten().take(4096) {
                            if g.file_type().is_ok_and(|t| t.is_socket()) && s.len() < MAX_SOCKETS {
                                s.push(g.path());
                            }
                        }
                    }
                    continue;
                }
                if dir != *root
                    && crate::persistence::any_depth_name(&name)
                    && let Some(s) = settings.as_deref_mut()
                    && (deadline.is_none() || s.len() < MAX_SOCKETS)
                {
                    s.push(e.path());
                }
                if ft.is_dir() && !SKIPPED.iter().any(|s| name == *s) {
                    stack.push(e.path());
                } else if ft.is_socket()
                    && let Some(s) = sockets.as_deref_mut()
                    && s.len() < MAX_SOCKETS
                {
                    s.push(e.path());
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
    if let Some(o) = crate::git_sweep::scan(git, false).first() {
        return Some(format!("{} at {}", o.kind, o.path.display()));
    }
    let cfg = match crate::gitconfig::read_file(&git.join("config")) {
        Ok(c) => c.unwrap_or_default(),
        Err(why) => return Some(format!("a config that is {why}")),
    };
    let parsed = crate::gitconfig::parse(&cfg);
    if !parsed.bad_lines.is_empty() {
        return Some("an unparsable config".into());
    }
    // An allow-list, not a list of known dangers: git has many keys that
    // run programs (diff.external, submodule.*.update, ext:: remotes, ...).
    parsed
        .items
        .iter()
        .find(|i| !crate::staging::allowed_key(i))
        .map(|i| format!("config {}", i.key()))
}

/// The workspace's `.git/HEAD` before the run, to put back if the run
/// spoils it (a `.git` that is no longer a repository makes git take the
/// workspace itself for one, with a configuration the command wrote).
#[derive(Debug, Clone, Default)]
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
pub fn quarantine_new_dot_entries(home: &Path, before: &[String], run_id: u32) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(home) else {
        return Vec::new();
    };
    let jail = home.join(format!(".skarn-quarantine-{run_id}"));
    let mut moved = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with('.')
            || name == ".git"
            || before.contains(&name)
            || name.starts_with(".skarn-quarantine-")
            || crate::placeholder::is_placeholder(&e.path()).is_some()
        {
            continue;
        }
        if std::fs::create_dir_all(&jail).is_ok()
            && std::fs::rename(e.path(), jail.join(&name)).is_ok()
        {
            moved.push(name);
        }
    }
    if moved.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "new dot files in the home ({}) were moved into {}: host programs read such files by \
         name; review them before moving them back",
        moved.join(", "),
        jail.display()
    )]
}

/// After the run: every settings entry below the top of `roots` (see
/// [`Walk::settings`]) made or changed since `since` (an inode change
/// time in its tree at or after it; existing ones were read-only) is set
/// aside under a name no program reads; returns one line per entry.
pub fn set_aside_new_settings(
    roots: &[PathBuf],
    since: std::time::SystemTime,
    run_id: u32,
) -> Vec<String> {
    let mut found = Vec::new();
    // No cap, as for repositories: the run paid for every directory.
    find_capped(roots, usize::MAX, None, Some(&mut found), None);
    let mut out = Vec::new();
    for p in found {
        // (Gone with an entry set aside above it.)
        if std::fs::symlink_metadata(&p).is_err() || !changed_since(&p, since) {
            continue;
        }
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        let aside = p.with_file_name(format!(
            "{}.skarn-quarantine-{run_id}",
            name.unwrap_or_default()
        ));
        let moved = std::fs::rename(&p, &aside).is_ok();
        out.push(format!(
            "{} was made or changed during the run: agents, editors and shells read it in \
             that directory and run what it names; {}",
            p.display(),
            if moved {
                format!(
                    "set aside as {} (review it before renaming it back)",
                    aside.display()
                )
            } else {
                "it could not be set aside: review it before opening that directory".into()
            }
        ));
    }
    out
}

/// Whether anything in the tree at `p` (not following links; at most
/// 10 000 entries, beyond which it counts as changed) has an inode change
/// time at or after `since`.
fn changed_since(p: &Path, since: std::time::SystemTime) -> bool {
    use std::os::unix::fs::MetadataExt;
    let since = since
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| (d.as_secs() as i64, i64::from(d.subsec_nanos())))
        .unwrap_or_default();
    let mut stack = vec![p.to_path_buf()];
    let mut budget = 10_000usize;
    while let Some(q) = stack.pop() {
        let Some(b) = budget.checked_sub(1) else {
            return true;
        };
        budget = b;
        let Ok(md) = std::fs::symlink_metadata(&q) else {
            continue;
        };
        if (md.ctime(), md.ctime_nsec()) >= since {
            return true;
        }
        if md.is_dir()
            && let Ok(rd) = std::fs::read_dir(&q)
        {
            stack.extend(rd.flatten().map(|e| e.path()));
        }
    }
    false
}

/// After the run: vet each `.git` under `roots` that was not in `before`;
/// returns one line per repository set aside.
pub fn vet_new(roots: &[PathBuf], before: &[PathBuf], run_id: u32) -> Vec<String> {
    // No cap here: the run paid for every directory it made, and a capped
    // walk would let it hide a repository behind enough of them.
    let (now, truncated) = find_capped(roots, usize::MAX, None, None, None);
    let mut out = Vec::new();
    for git in now.iter().filter(|g| !before.contains(g)) {
        if roots.contains(git) && std::fs::symlink_metadata(git.join("HEAD")).is_err() {
            continue;
        }
        let Some(why) = unsafe_repo(git) else {
            continue;
        };
        // A writable grant's root cannot be moved: its HEAD is, which is
        // enough for git not to take it for a repository.
        let (what, aside) = if roots.contains(git) {
            let h = git.join("HEAD");
            (
                h.clone(),
                git.join(format!("HEAD.skarn-quarantine-{run_id}")),
            )
        } else {
            let name = git.file_name().map(|n| n.to_string_lossy().into_owned());
            let aside = git.with_file_name(format!(
                "{}.skarn-quarantine-{run_id}",
                name.unwrap_or_default()
            ));
            (git.clone(), aside)
        };
        let moved = std::fs::rename(&what, &aside).is_ok();
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
        let w = vet_new(&roots, &before, 9);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(d.join("clone/.git").exists());
        assert!(!d.join("src/.git").exists() && d.join("src/.git.skarn-quarantine-9").exists());
        assert!(!d.join("evil/.git").exists());
        // The root turned into a bare repository: its HEAD is set aside.
        std::fs::create_dir_all(d.join("objects")).unwrap();
        std::fs::create_dir_all(d.join("refs")).unwrap();
        std::fs::write(d.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(d.join("config"), "[core]\n\tfsmonitor = x\n").unwrap();
        let w = vet_new(&roots, &before, 10);
        assert!(
            w.iter().any(|l| l.contains("HEAD.skarn-quarantine-10")),
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
        let w = vet_new(&roots, &before, 11);
        assert!(w.iter().any(|l| l.contains("cd/X")), "{w:?}");
        assert!(!d.join("cd/X").exists() && d.join("cd/X.skarn-quarantine-11").exists());
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
