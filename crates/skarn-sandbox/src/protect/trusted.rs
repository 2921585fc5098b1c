//! A place the host trusts, found by following its name: the record the
//! home's link scan, the host programs' lists and the shell-sources reader
//! make, and the links met on the way ([`link_hops`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One place the host trusts, found by following its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trusted {
    /// Canonical place (dangling links followed to where the name would
    /// be created).
    pub target: PathBuf,
    /// How the host reaches it, for the report (`~/.bashrc (a link)`,
    /// `include.path of /home/u/.gitconfig`, `PATH entry`).
    pub via: String,
    /// A secret (hidden under every grant) rather than a file a host
    /// program runs or trusts (read-only under writable grants).
    pub secret: bool,
    /// The links passed on the way (their own places): one inside a
    /// writable grant could be pointed elsewhere by the command.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hops: Vec<PathBuf>,
    /// What each of `hops` pointed at when seen (same order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hop_texts: Vec<PathBuf>,
    /// Protect the directory tree at `target` rather than one file: a
    /// start-up file's directory, or one it reaches in a way that cannot
    /// be resolved exactly (a pattern, a variable, a `PATH` line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<Tree>,
}

/// How much a tree entry ([`Trusted::tree`]) protects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tree {
    /// The directory and everything below it, where it lies in a writable
    /// grant (the grant itself read-only when the directory is its root).
    Dir,
    /// That, and every writable grant below the directory (a pattern that
    /// reaches more than one level down: `~/src/*/env.sh`).
    Below,
}

impl Trusted {
    /// The place `name` leads to (`target`, already resolved), with the
    /// links on the way.
    pub fn new(name: &Path, target: PathBuf, via: String, secret: bool) -> Trusted {
        let hops = link_hops(name);
        let hop_texts = hops
            .iter()
            .map(|h| std::fs::read_link(h).unwrap_or_default())
            .collect();
        Trusted {
            target,
            via,
            secret,
            hops,
            hop_texts,
            tree: None,
        }
    }

    /// A tree entry: the directory `dir` (resolved) is protected whole.
    pub fn tree(dir: &Path, target: PathBuf, via: String, tree: Tree) -> Trusted {
        Trusted {
            tree: Some(tree),
            ..Trusted::new(dir, target, via, false)
        }
    }
}

/// The symbolic links met while resolving `p` component by component
/// (their own places), at most 40.
pub fn link_hops(p: &Path) -> Vec<PathBuf> {
    link_hops_to(p).0
}

/// [`link_hops`], and the path the walk ended at (where `p` leads, when
/// no bound was hit).
pub fn link_hops_to(p: &Path) -> (Vec<PathBuf>, PathBuf) {
    use std::collections::VecDeque;
    use std::path::Component;
    let mut hops = Vec::new();
    let mut done = PathBuf::from("/");
    let mut rest: VecDeque<std::ffi::OsString> = VecDeque::new();
    let push_all = |rest: &mut VecDeque<std::ffi::OsString>, p: &Path, front: bool| {
        let parts: Vec<std::ffi::OsString> = p
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_os_string()),
                Component::ParentDir => Some("..".into()),
                _ => None,
            })
            .collect();
        if front {
            for x in parts.into_iter().rev() {
                rest.push_front(x);
            }
        } else {
            rest.extend(parts);
        }
    };
    push_all(&mut rest, p, false);
    while let Some(c) = rest.pop_front() {
        if c == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&c);
        match crate::policy::link_facts::kind(&next) {
            Ok(crate::policy::link_facts::Kind::Link) => {
                hops.push(next.clone());
                if hops.len() >= 40 {
                    break;
                }
                let Ok(t) = crate::policy::link_facts::read_link(&next) else {
                    break;
                };
                if t.is_absolute() {
                    done = PathBuf::from("/");
                }
                push_all(&mut rest, &t, true);
            }
            _ => done = next,
        }
    }
    (hops, done)
}
