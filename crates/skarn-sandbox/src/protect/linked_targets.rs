//! The files a protected path leads to through symbolic links (attack
//! atk24l F5): `.git/hooks/pre-commit -> ../../scripts/pre-commit`,
//! `.git/hooks -> ../githooks`, `.claude -> cfgdir`,
//! `.npmrc -> config/npmrc`. Host git, npm or the agent's client read the
//! protected name through the link, so the file it leads to is protected
//! too: the persistence protection decides by what a path is, not by the
//! name it was reached by. Read on the host before a run (and by the
//! hook's file guard); nothing of the project is executed.

use std::path::{Path, PathBuf};

use crate::protect::name_listing::Look;
use crate::protect::persistence::{ENTRIES, GIT_DIR_ENTRIES};

/// Entries of one protected directory looked at for links.
const MAX_CHILDREN: usize = 256;
/// Targets kept per base: past it [`of`] fails (attack atk24s F6: the
/// rest were silently not followed). Above the links Claude Code's
/// directories may hold ([`crate::protect::claude_links::MAX_LINKS`])
/// with every protected name besides.
const MAX_TARGETS: usize = 8192;

/// Links followed per path at most (the kernel's own limit).
const MAX_HOPS: usize = 40;

/// Where `p` leads, resolved as the kernel resolves it when a program
/// opens or creates it: each link on the way is followed where it stands
/// (a `..` after a link climbs from the link's target), and the first
/// missing component ends the lookup, the rest kept as written (where a
/// dangling `.cargo -> tools/cargo` makes `.cargo/config.toml` be created:
/// attack atk22h F35). A link at the end is followed too (creating a file
/// through a dangling link creates its target). `None`: a loop, or more
/// than [`MAX_HOPS`] links.
pub fn kernel_path(p: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let mut todo: Vec<std::ffi::OsString> = Vec::new();
    let push = |todo: &mut Vec<std::ffi::OsString>, q: &Path| {
        for c in q.components().rev() {
            match c {
                Component::Normal(n) => todo.push(n.to_os_string()),
                Component::ParentDir => todo.push("..".into()),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
    };
    let mut out = if p.is_absolute() {
        PathBuf::from("/")
    } else {
        std::env::current_dir().ok()?
    };
    push(&mut todo, p);
    let (mut hops, mut missing) = (0usize, false);
    while let Some(c) = todo.pop() {
        if c == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&c);
        if !missing {
            // Through the preparation's memo (ADR 0247): the workspace's
            // components were asked once per protected name (issue 30).
            match crate::policy::link_facts::kind(&next) {
                Ok(crate::policy::link_facts::Kind::Link) => {
                    hops += 1;
                    if hops > MAX_HOPS {
                        return None;
                    }
                    let t = crate::policy::link_facts::read_link(&next).ok()?;
                    if t.is_absolute() {
                        out = PathBuf::from("/");
                    }
                    push(&mut todo, &t);
                    continue;
                }
                Ok(_) => {}
                Err(_) => missing = true,
            }
        }
        out = next;
    }
    Some(out)
}

/// When a directory on the way to `p` is a link (`.cargo/config.toml`
/// with `.cargo -> cfg/cargo`): where the kernel puts `p` (its resolved
/// directory with its own name; a link at `p` itself is left to the
/// caller). `None`: no link on the way, or it does not resolve.
pub fn through_linked_dir(p: &Path) -> Option<PathBuf> {
    let (dir, name) = (p.parent()?, p.file_name()?);
    let real = kernel_path(dir)?;
    (real != dir).then(|| real.join(name))
}

/// Where `p` leads ([`kernel_path`]).
fn real(p: &Path) -> Option<PathBuf> {
    kernel_path(p)
}

/// The protected paths of `base` (its persistence entries, its git
/// directory's entries, the hooks in its hooks directory, the entries of
/// its protected directories) that lead elsewhere through a link: each
/// as (where it leads, the protected name), where-it-leads being neither
/// `base` nor one of its ancestors (a link to the project's top is not
/// followed: that would make the whole project read-only). `Err`: more
/// links than are followed (why, for the user): the caller fails closed.
pub fn of(base: &Path) -> Result<Vec<(PathBuf, PathBuf)>, String> {
    let Ok(top) = crate::policy::link_facts::canonicalize(base) else {
        return Ok(Vec::new());
    };
    let mut names: Vec<PathBuf> = GIT_DIR_ENTRIES
        .iter()
        .chain(ENTRIES)
        .map(|e| PathBuf::from(e.path))
        .collect();
    // What the protected directories hold (a hook installed as a link,
    // `.claude/settings.json` as one).
    // (Not one that leads to the top or above: its entries are the
    // project's own.)
    // (Most names are missing: the listings of their directories say so
    // without asking each; issue 30.)
    let mut listed = crate::protect::name_listing::Names::new(&top);
    let dirs: Vec<PathBuf> = names
        .iter()
        .filter(|n| {
            let d = top.join(n);
            match listed.look(n) {
                Look::Missing | Look::Other => false,
                // (A real directory below the top is its own canonical path.)
                Look::Dir => true,
                Look::Ask => {
                    d.is_dir()
                        && crate::policy::link_facts::canonicalize(&d)
                            .is_ok_and(|r| !top.starts_with(r))
                }
            }
        })
        .cloned()
        .collect();
    for d in dirs {
        let Ok(rd) = std::fs::read_dir(top.join(&d)) else {
            continue;
        };
        for e in rd.flatten().take(MAX_CHILDREN) {
            names.push(d.join(e.file_name()));
        }
    }
    // What Claude Code loads through links below its `.claude`
    // directories, nested ones included (atk24r F1, F3).
    names.extend(crate::protect::claude_links::links(&top)?);
    // A `.git` that is itself a link (atk24l F7): the reservation step
    // protects its git directory's entries where they are, each reserved
    // or not as git needs (a reserved `commondir` would stop git).
    let git_link = std::fs::symlink_metadata(top.join(".git")).is_ok_and(|m| m.is_symlink());
    let mut out: Vec<(PathBuf, PathBuf)> = Vec::new();
    for n in names {
        if git_link && n.starts_with(".git") && std::fs::symlink_metadata(top.join(&n)).is_err() {
            continue;
        }
        if out.len() >= MAX_TARGETS {
            return Err(format!(
                "{} has more than {MAX_TARGETS} protected names that lead elsewhere through \
                 symbolic links, more than skarn follows: it cannot keep all they lead to \
                 read-only",
                top.display()
            ));
        }
        // Only a name with a link on the way leads elsewhere (the
        // listings tell a missing or plain name without resolving it).
        if listed.look(&n) != Look::Ask {
            continue;
        }
        let named = top.join(&n);
        let Some(r) = real(&named) else { continue };
        if r == named || top.starts_with(&r) || out.iter().any(|(t, _)| *t == r) {
            continue;
        }
        out.push((r, named));
    }
    Ok(out)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn links_from_protected_names_are_followed() {
        let t = skarn_test_support::TempDir::new("linked-targets");
        let p = t.dir("p");
        t.file("p/scripts/pre-commit", "#!/bin/sh\n");
        t.dir("p/.git/hooks");
        std::os::unix::fs::symlink("../../scripts/pre-commit", p.join(".git/hooks/pre-commit"))
            .unwrap();
        std::os::unix::fs::symlink(
            "../../scripts/post-checkout",
            p.join(".git/hooks/post-checkout"),
        )
        .unwrap();
        t.file("p/config/npmrc", "fund=false\n");
        std::os::unix::fs::symlink("config/npmrc", p.join(".npmrc")).unwrap();
        t.file("p/cfgdir/settings.json", "{}\n");
        std::os::unix::fs::symlink("cfgdir", p.join(".claude")).unwrap();
        std::os::unix::fs::symlink(".", p.join(".vscode")).unwrap();
        t.file("p/notes.md", "x\n");
        let top = std::fs::canonicalize(&p).unwrap();
        let got: Vec<PathBuf> = of(&p).unwrap().into_iter().map(|(t, _)| t).collect();
        for want in [
            "scripts/pre-commit",
            "scripts/post-checkout",
            "config/npmrc",
            "cfgdir",
        ] {
            assert!(got.contains(&top.join(want)), "{want} missing: {got:?}");
        }
        assert!(!got.contains(&top), "{got:?}");
        assert!(!got.iter().any(|g| g.ends_with("notes.md")), "{got:?}");
    }

    #[test]
    fn a_dangling_link_on_the_way_leads_where_the_name_would_be_made() {
        let t = skarn_test_support::TempDir::new("linked-targets-dangling");
        let p = t.dir("p");
        t.dir("p/up");
        std::os::unix::fs::symlink("tools/cargo", p.join(".cargo")).unwrap();
        std::os::unix::fs::symlink("scripts/envrc", p.join(".envrc")).unwrap();
        let top = std::fs::canonicalize(&p).unwrap();
        let got: Vec<PathBuf> = of(&p).unwrap().into_iter().map(|(t, _)| t).collect();
        for want in [
            "tools/cargo/config.toml",
            "tools/cargo/config",
            "scripts/envrc",
        ] {
            assert!(got.contains(&top.join(want)), "{want} missing: {got:?}");
        }
        // `..` after a link climbs from where the link leads.
        std::os::unix::fs::symlink(top.join("up"), p.join("l")).unwrap();
        assert_eq!(
            kernel_path(&top.join("l/../x/y")),
            Some(top.join("x/y")),
            "climbs from the target's parent"
        );
        std::os::unix::fs::symlink("loop", p.join("loop")).unwrap();
        assert_eq!(kernel_path(&top.join("loop/x")), None);
    }
}
