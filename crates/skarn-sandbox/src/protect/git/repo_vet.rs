//! Whether a repository made or changed during a run could make host git
//! run programs: its hooks, its configuration (an allow-list of keys,
//! [`super::safe_keys::allowed_key`], plus a `core.worktree` that stays in
//! the workspace), entries git never makes, and `.git` files that link
//! to another repository (a linked worktree of the workspace's own
//! repository, made by `git worktree add`, is kept).

use std::path::{Component, Path, PathBuf};

use crate::protect::git::gitconfig::Item;

/// [`super::safe_keys::allowed_key`], and `core.worktree` when the git
/// directory lies `depth` directories below the workspace and the value
/// (relative, resolved against it) stays inside the workspace: a
/// submodule's git directory names its work tree so.
pub(crate) fn allowed_key_at(it: &Item, depth: Option<usize>) -> bool {
    if super::safe_keys::allowed_key(it) {
        return true;
    }
    if (it.section.as_str(), it.sub.is_some(), it.name.as_str()) != ("core", false, "worktree") {
        return false;
    }
    let (Some(depth), Some(v)) = (depth, it.value.as_deref()) else {
        return false;
    };
    let p = Path::new(v);
    if p.is_absolute() || v.starts_with('~') || v.is_empty() {
        return false;
    }
    let mut ups = 0;
    let mut down = false;
    for c in p.components() {
        match c {
            Component::ParentDir if !down => ups += 1,
            // Not back into a git directory (`../.git/hooks`).
            Component::Normal(n) if n.eq_ignore_ascii_case(".git") => return false,
            Component::Normal(_) => down = true,
            Component::CurDir => {}
            _ => return false,
        }
    }
    // Exactly out of the git directory (`depth` levels: `..` from
    // `.git`, `../../..` from `.git/modules/<name>`), to the repository's
    // top or below it; fewer climbs land inside the git directory, where
    // host git would check tracked files out into `hooks` (attack
    // atk22h F30).
    ups == depth
}

/// Whether the `.git` file `dotgit` (its `content`) links to a git
/// directory of a repository above it, as git makes them: a linked
/// worktree's (`git worktree add`: `<repo>/.git/worktrees/<name>`, whose
/// `commondir` is `../..` and whose `gitdir` names this file back) or a
/// submodule's (`git submodule add`: `<repo>/.git/modules/<name>`, a git
/// directory). Host git there runs the hooks and configuration kept in
/// `<repo>/.git`, which are protected and vetted as the workspace's own.
pub(crate) fn linked_worktree(dotgit: &Path, content: &[u8]) -> bool {
    linked_to_worktrees(dotgit, content) || linked_to_modules(dotgit, content)
}

/// A submodule's `.git` file: its target lies in `<repo>/.git/modules/`
/// of a repository holding `dotgit`, and is a git directory.
fn linked_to_modules(dotgit: &Path, content: &[u8]) -> bool {
    let Some(target) = crate::protect::git::git_vet::gitfile_target(content) else {
        return false;
    };
    let Some(base) = dotgit.parent() else {
        return false;
    };
    let t = lexical(&base.join(target));
    let comps: Vec<_> = t.components().collect();
    let Some(i) = comps.iter().rposition(|c| c.as_os_str() == "modules") else {
        return false;
    };
    let git: std::path::PathBuf = comps[..i].iter().collect();
    let top = git.parent().unwrap_or(Path::new("/"));
    git.file_name() == Some(std::ffi::OsStr::new(".git"))
        && i + 1 < comps.len()
        && comps[i + 1..]
            .iter()
            .all(|c| matches!(c, Component::Normal(_)))
        && dotgit.starts_with(top)
        && std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir())
        && std::fs::symlink_metadata(t.join("HEAD")).is_ok_and(|m| m.is_file())
        && std::fs::symlink_metadata(t.join("commondir")).is_err()
}

fn linked_to_worktrees(dotgit: &Path, content: &[u8]) -> bool {
    let Some(target) = crate::protect::git::git_vet::gitfile_target(content) else {
        return false;
    };
    let Some(base) = dotgit.parent() else {
        return false;
    };
    let wt = lexical(&base.join(target));
    let Some(worktrees) = wt.parent() else {
        return false;
    };
    let Some(git) = worktrees.parent() else {
        return false;
    };
    if worktrees.file_name() != Some(std::ffi::OsStr::new("worktrees"))
        || git.file_name() != Some(std::ffi::OsStr::new(".git"))
        || !std::fs::symlink_metadata(git).is_ok_and(|m| m.is_dir())
        || !std::fs::symlink_metadata(&wt).is_ok_and(|m| m.is_dir())
    {
        return false;
    }
    let common = crate::protect::git::gitconfig::read_bytes(&wt.join("commondir"))
        .ok()
        .flatten()
        .unwrap_or_default();
    if crate::protect::git::git_vet::commondir_target(&common) != Path::new("../..") {
        return false;
    }
    let back = crate::protect::git::gitconfig::read_bytes(&wt.join("gitdir"))
        .ok()
        .flatten()
        .unwrap_or_default();
    lexical(crate::protect::git::git_vet::commondir_target(&back)) == lexical(dotgit)
        && std::fs::symlink_metadata(wt.join("config.worktree")).is_err()
}

fn lexical(p: &Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Why a repository created during the run is not kept, if it is not.
pub(crate) fn unsafe_repo(git: &Path) -> Option<String> {
    unsafe_repo_at(git, None).or_else(|| unsafe_inner(git))
}

/// The git directories a repository keeps inside its own: each submodule's
/// (`modules/<name>`, nested submodules too) is vetted like a repository,
/// and a linked worktree's (`worktrees/<wt>`) may not hold its own
/// `config.worktree` (attack atk24e F7: hooks and `core.fsmonitor`
/// planted in `.git/modules/sub/` ran when host git entered the
/// submodule). At most 256 directories are looked at; past that, unsafe.
fn unsafe_inner(git: &Path) -> Option<String> {
    let mut budget = 256usize;
    let mut stack: Vec<(PathBuf, usize)> = vec![(git.join("modules"), 0)];
    while let Some((dir, k)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            if budget == 0 {
                return Some("more submodule git directories than are vetted (256)".into());
            }
            budget -= 1;
            let p = e.path();
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if std::fs::symlink_metadata(p.join("HEAD")).is_ok() {
                // A submodule's git directory: `core.worktree` may climb
                // to the superproject's top (`.git`, `modules`, the name).
                if let Some(why) = unsafe_repo_at(&p, Some(2 + k + 1)) {
                    return Some(format!("submodule git directory {}: {why}", p.display()));
                }
                stack.push((p.join("modules"), 0));
            } else if k < 4 {
                // A name with slashes (`modules/a/b`).
                stack.push((p, k + 1));
            }
        }
    }
    let Ok(rd) = std::fs::read_dir(git.join("worktrees")) else {
        return None;
    };
    for e in rd.flatten().take(256) {
        let p = e.path();
        if std::fs::symlink_metadata(p.join("config.worktree")).is_ok() {
            return Some(format!("worktree {} has config.worktree", p.display()));
        }
        let hooks = p.join("hooks");
        if std::fs::symlink_metadata(&hooks).is_ok() {
            return Some(format!("worktree {} has hooks", p.display()));
        }
        // Its own operation in progress and MERGE_RR (atk22j F17, F14).
        if let Some(s) = crate::protect::rebase_todo::STATE_DIRS
            .iter()
            .chain(&[super::rerere::MERGE_RR])
            .find(|s| std::fs::symlink_metadata(p.join(s)).is_ok())
        {
            return Some(format!("worktree {} has {s}", p.display()));
        }
    }
    None
}

/// [`unsafe_repo`] for a git directory `depth` directories below the
/// workspace (its `core.worktree` may climb that many, as a submodule's
/// does).
pub(crate) fn unsafe_repo_at(git: &Path, depth: Option<usize>) -> Option<String> {
    let md = std::fs::symlink_metadata(git).ok()?;
    if md.is_file() && linked_worktree(git, &std::fs::read(git).unwrap_or_default()) {
        return None;
    }
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
    if let Some(why) = state_left(git) {
        return Some(why);
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
        .find(|i| !allowed_key_at(i, depth))
        .map(|i| format!("config {}", i.key()))
}

/// State a repository the run created may not hold, none of which
/// `git init`, `git clone` or ordinary work leaves behind, and all of
/// which makes host git act on what the run chose (attack atk22j F16,
/// F17): an operation in progress (`git rebase --continue` runs the
/// `exec` lines of its to-do list), rerere state (reads and writes the
/// paths `MERGE_RR` names), legacy remote files (`remotes/`,
/// `branches/`: `git push origin` sends the project to the URL one
/// names, and `git remote -v` shows none), grafts and replace refs (host
/// git shows and checks out other objects than the refs name). The
/// repositories there before the run are checked against their state
/// then ([`crate::protect::rebase_todo`], [`super::rerere`],
/// [`super::history_refs`]); a new one has no state before.
fn state_left(git: &Path) -> Option<String> {
    let exists = |n: &str| std::fs::symlink_metadata(git.join(n)).is_ok();
    if let Some(s) = crate::protect::rebase_todo::STATE_DIRS
        .iter()
        .find(|s| exists(s))
    {
        return Some(format!(
            "an operation in progress ({s}: `--continue` on the host runs what it names)"
        ));
    }
    if let Some(n) = super::rerere::present(git) {
        return Some(format!("rerere state ({n})"));
    }
    for d in ["remotes", "branches"] {
        match std::fs::read_dir(git.join(d)).map(|mut rd| rd.next().is_some()) {
            Ok(true) => {
                return Some(format!("a legacy remote file in {d}/"));
            }
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Some(format!("an unreadable {d} entry"));
            }
            _ => {}
        }
    }
    if exists("info/grafts") {
        return Some("grafts (info/grafts)".into());
    }
    match std::fs::read_dir(git.join("refs/replace")).map(|mut rd| rd.next().is_some()) {
        Ok(true) => return Some("a replace ref".into()),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Some("an unreadable refs/replace".into());
        }
        _ => {}
    }
    let packed = std::fs::read(git.join("packed-refs")).unwrap_or_default();
    if packed.windows(13).any(|w| w == b"refs/replace/") {
        return Some("a packed replace ref".into());
    }
    if exists("reftable") {
        match super::reftable_read::dir_refs(&git.join("reftable")) {
            Some(refs) if super::reftable_read::replace_refs(&refs).is_empty() => {}
            Some(_) => return Some("a replace ref (reftable)".into()),
            None => return Some("reftable refs that do not read whole".into()),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_new_repository_may_not_hold_state_git_acts_on_later() {
        let tmp = skarn_test_support::TempDir::new("repovet-state");
        let d = tmp.path().to_path_buf();
        let mk = |name: &str, rel: &str| {
            let g = d.join(name).join(".git");
            std::fs::create_dir_all(g.join("branches")).unwrap();
            std::fs::create_dir_all(g.join("refs/heads")).unwrap();
            std::fs::write(g.join("HEAD"), "ref: refs/heads/main\n").unwrap();
            if !rel.is_empty() {
                let p = g.join(rel);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, "x").unwrap();
            }
            g
        };
        // What `git init` makes (an empty branches/) is kept.
        assert_eq!(unsafe_repo(&mk("plain", "")), None);
        for rel in [
            "rebase-merge/git-rebase-todo",
            "sequencer/todo",
            "rebase-apply/next",
            "MERGE_RR",
            "rr-cache/0123/preimage",
            "remotes/origin",
            "branches/origin",
            "info/grafts",
            "refs/replace/0123456789012345678901234567890123456789",
            "worktrees/wt/rebase-merge/done",
            "worktrees/wt/MERGE_RR",
        ] {
            let name = rel.replace('/', "_");
            assert!(unsafe_repo(&mk(&name, rel)).is_some(), "{rel}");
        }
        let g = mk("packed", "");
        std::fs::write(
            g.join("packed-refs"),
            "0123456789012345678901234567890123456789 refs/replace/0123456789012345678901234567890123456789\n",
        )
        .unwrap();
        assert!(unsafe_repo(&g).is_some());
    }

    #[test]
    fn a_submodule_worktree_may_stay_inside_the_workspace_only() {
        let it = |v: &str| Item {
            section: "core".into(),
            sub: None,
            name: "worktree".into(),
            value: Some(v.into()),
        };
        assert!(allowed_key_at(&it("../../../sub"), Some(3)));
        assert!(allowed_key_at(&it(".."), Some(1)));
        assert!(!allowed_key_at(&it("hooks"), Some(1)));
        assert!(!allowed_key_at(&it("../../hooks"), Some(3)));
        assert!(!allowed_key_at(&it("../.git/hooks"), Some(1)));
        assert!(!allowed_key_at(&it("../../../../x"), Some(3)));
        assert!(!allowed_key_at(&it("/home/u"), Some(3)));
        assert!(!allowed_key_at(&it("../../../a/../../.."), Some(3)));
        assert!(!allowed_key_at(&it("../sub"), None));
    }

    #[test]
    fn a_linked_worktree_of_the_repository_beside_is_kept() {
        let tmp = skarn_test_support::TempDir::new("repovet-wt");
        let d = tmp.path().to_path_buf();
        let wt = d.join(".git/worktrees/wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::create_dir_all(d.join("wt")).unwrap();
        std::fs::write(wt.join("commondir"), "../..\n").unwrap();
        std::fs::write(
            wt.join("gitdir"),
            format!("{}\n", d.join("wt/.git").display()),
        )
        .unwrap();
        let f = d.join("wt/.git");
        let link = format!("gitdir: {}\n", wt.display());
        std::fs::write(&f, &link).unwrap();
        assert!(linked_worktree(&f, link.as_bytes()));
        assert_eq!(unsafe_repo(&f), None);
        // Elsewhere, or with its own commondir: a link to another repository.
        let other = "gitdir: /elsewhere/.git/worktrees/wt\n";
        assert!(!linked_worktree(&f, other.as_bytes()));
        std::fs::write(wt.join("commondir"), "/elsewhere/.git\n").unwrap();
        assert!(!linked_worktree(&f, link.as_bytes()));
        assert!(unsafe_repo(&f).is_some());
        // A submodule's: into .git/modules of the repository above.
        let m = d.join(".git/modules/sm");
        std::fs::create_dir_all(m.join("objects")).unwrap();
        std::fs::write(m.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(d.join("sm")).unwrap();
        let f = d.join("sm/.git");
        std::fs::write(&f, "gitdir: ../.git/modules/sm\n").unwrap();
        assert_eq!(unsafe_repo(&f), None);
        std::fs::write(&f, "gitdir: ../.git/modules/../../x\n").unwrap();
        assert!(unsafe_repo(&f).is_some());
    }
}
