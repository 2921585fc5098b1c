//! The files a protected path leads to through symbolic links (attack
//! atk24l F5): `.git/hooks/pre-commit -> ../../scripts/pre-commit`,
//! `.git/hooks -> ../githooks`, `.claude -> cfgdir`,
//! `.npmrc -> config/npmrc`. Host git, npm or the agent's client read the
//! protected name through the link, so the file it leads to is protected
//! too: the persistence protection decides by what a path is, not by the
//! name it was reached by. Read on the host before a run (and by the
//! hook's file guard); nothing of the project is executed.

use std::path::{Path, PathBuf};

use crate::protect::persistence::{ENTRIES, GIT_DIR_ENTRIES};

/// Entries of one protected directory looked at for links.
const MAX_CHILDREN: usize = 256;
/// Targets kept per base (past it the rest are not followed).
const MAX_TARGETS: usize = 512;

/// Where `p` leads: itself resolved when it exists, else its resolved
/// directory with its name (a dangling link: where the name would be
/// created). `None`: neither resolves.
fn real(p: &Path) -> Option<PathBuf> {
    if let Ok(r) = std::fs::canonicalize(p) {
        return Some(r);
    }
    let name = p.file_name()?;
    let mut r = std::fs::canonicalize(p.parent()?).ok()?;
    // A dangling link's own text, followed once (`post-checkout ->
    // ../../scripts/post-checkout` that the run could create).
    if let Ok(t) = std::fs::read_link(p) {
        let to = r.join(t);
        return Some(
            match (to.parent().map(std::fs::canonicalize), to.file_name()) {
                (Some(Ok(d)), Some(n)) => d.join(n),
                _ => to,
            },
        );
    }
    r.push(name);
    Some(r)
}

/// The protected paths of `base` (its persistence entries, its git
/// directory's entries, the hooks in its hooks directory, the entries of
/// its protected directories) that lead elsewhere through a link: each
/// as (where it leads, the protected name), where-it-leads being neither
/// `base` nor one of its ancestors (a link to the project's top is not
/// followed: that would make the whole project read-only).
pub fn of(base: &Path) -> Vec<(PathBuf, PathBuf)> {
    let Ok(top) = std::fs::canonicalize(base) else {
        return Vec::new();
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
    let dirs: Vec<PathBuf> = names
        .iter()
        .filter(|n| {
            let d = top.join(n);
            d.is_dir() && std::fs::canonicalize(&d).is_ok_and(|r| !top.starts_with(r))
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
            break;
        }
        let named = top.join(&n);
        // Only a name with a link on the way leads elsewhere.
        let Some(r) = real(&named) else { continue };
        if r == named || top.starts_with(&r) || out.iter().any(|(t, _)| *t == r) {
            continue;
        }
        out.push((r, named));
    }
    out
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
        let got: Vec<PathBuf> = of(&p).into_iter().map(|(t, _)| t).collect();
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
}
