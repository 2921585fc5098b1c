//! The paths git's configuration makes run programs on the host, decided
//! by the same function `skarn run` uses to keep them read-only
//! ([`skarn_sandbox::protect::git::git_vet::guards_for`]): the git and common
//! directories' hooks and configuration, every `core.hooksPath` directory
//! (`tools/hooks`, `.husky`), every included configuration file, a linked
//! worktree's files, a `.git` file.

use std::path::{Path, PathBuf};

/// What git protects for the repositories of the workspace and of the
/// file written.
pub struct Protected {
    /// Protected paths, as git's configuration names them and resolved.
    paths: Vec<PathBuf>,
    /// A repository whose configuration is too large to vet (bounded,
    /// linear read: [`skarn_sandbox::protect::git::git_vet::MAX_INCLUDES`]): every write
    /// is refused, as what it protects is not known.
    too_much: Option<String>,
}

impl Protected {
    #[cfg(unix)]
    pub fn new(ws: &Path, candidates: &[PathBuf], home: Option<&Path>) -> Protected {
        use skarn_sandbox::protect::git::git_vet::{checked_guards_for, discover};
        let mut starts: Vec<PathBuf> = vec![ws.to_path_buf()];
        // The nearest existing directory of each candidate.
        starts.extend(
            candidates
                .iter()
                .filter_map(|c| c.ancestors().skip(1).find(|a| a.is_dir()))
                .map(Path::to_path_buf),
        );
        let mut layouts = Vec::new();
        for s in &starts {
            if let Some(l) = discover(s)
                && !layouts.contains(&l)
            {
                layouts.push(l);
            }
        }
        let mut paths = Vec::new();
        for l in &layouts {
            // Every path is "writable" here: the agent's tools write anywhere.
            let everywhere = vec![PathBuf::from("/")];
            match checked_guards_for(l, &everywhere, home) {
                Ok(guards) => {
                    for g in guards {
                        paths.extend(std::fs::canonicalize(&g.path));
                        paths.push(g.path);
                    }
                }
                Err(e) => {
                    return Protected {
                        paths: Vec::new(),
                        too_much: Some(e.to_string()),
                    };
                }
            }
        }
        Protected {
            paths,
            too_much: None,
        }
    }

    /// Git's protections are read from unix git layouts only.
    #[cfg(not(unix))]
    pub fn new(_ws: &Path, _candidates: &[PathBuf], _home: Option<&Path>) -> Protected {
        Protected {
            paths: Vec::new(),
            too_much: None,
        }
    }

    /// Why `c` may not be written, if git's configuration protects it.
    pub fn refusal(&self, c: &Path) -> Option<String> {
        if let Some(why) = &self.too_much {
            return Some(format!("{} cannot be judged: {why}", c.display()));
        }
        let fc = super::file_paths::fold(c);
        self.paths
            .iter()
            .find(|p| fc.starts_with(super::file_paths::fold(p)))
            .map(|p| {
                format!(
                    "{} is in {}, which this repository's git configuration runs or reads \
                     (hooks, core.hooksPath, an included configuration); sandboxed commands \
                     cannot write it either",
                    c.display(),
                    p.display()
                )
            })
    }
}
