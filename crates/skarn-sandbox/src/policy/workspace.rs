//! Which directory a run's workspace is, and why (for the report).

use std::path::{Path, PathBuf};

use crate::policy::policy_error::PolicyError;

/// How the default workspace is chosen when none is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WorkspaceRoot {
    /// The top of the git work tree holding the current directory (below
    /// the home directory), else the current directory.
    #[default]
    Repo,
    /// The current directory.
    Cwd,
}

/// The resolved workspace of a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// Canonical, existing directory.
    pub path: PathBuf,
    /// Why this directory (`--workspace`, `the current directory`, ...).
    pub source: String,
    /// The command's working directory, when inside the workspace.
    pub cwd: Option<PathBuf>,
}

impl Workspace {
    /// `named` (relative to `cwd`), else the default chosen by `root`.
    pub fn resolve(
        named: Option<&Path>,
        root: WorkspaceRoot,
        cwd: &Path,
        home: Option<&Path>,
    ) -> Result<Workspace, PolicyError> {
        let (arg, source) = match named {
            Some(w) => (cwd.join(w), "--workspace".to_string()),
            None if root == WorkspaceRoot::Repo => match enclosing_work_tree(cwd, home) {
                Some(top) if top != cwd => {
                    let why = format!(
                        "the git work tree holding the current directory {} \
                         (--workspace-root repo, the default)",
                        cwd.display()
                    );
                    (top, why)
                }
                _ => (cwd.to_path_buf(), "the current directory".to_string()),
            },
            None => (
                cwd.to_path_buf(),
                "the current directory (--workspace-root cwd)".into(),
            ),
        };
        let shown = named.map_or(arg.clone(), Path::to_path_buf);
        let path = std::fs::canonicalize(&arg).map_err(|e| {
            PolicyError::Workspace(format!("workspace {} does not exist: {e}", shown.display()))
        })?;
        if !path.is_dir() {
            return Err(PolicyError::Workspace(format!(
                "workspace {} is not a directory",
                path.display()
            )));
        }
        let real_cwd = std::fs::canonicalize(cwd).unwrap_or(cwd.to_path_buf());
        let cwd = real_cwd.starts_with(&path).then_some(real_cwd);
        Ok(Workspace { path, source, cwd })
    }

    /// A workspace taken as given (already canonical), e.g. a gateway
    /// server's private state directory.
    pub fn fixed(path: impl Into<PathBuf>, source: impl Into<String>) -> Workspace {
        Workspace {
            path: path.into(),
            source: source.into(),
            cwd: None,
        }
    }
}

/// The top of the git work tree holding `cwd` (the nearest directory with
/// a `.git` entry, or a `.hg`, `.jj` or `.sl` directory), if it lies strictly below the home directory (a
/// dotfiles repository in the home is not a project) and is not `/`.
pub(crate) fn enclosing_work_tree(cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let mut d = Some(cwd);
    while let Some(dir) = d {
        if let Some(h) = home
            && h.starts_with(dir)
        {
            return None;
        }
        dir.parent()?;
        // (Mercurial's, Jujutsu's and Sapling's tops too: a directory
        // inside `.hg` resolves to the repository's top, whose protected
        // entries then apply; atk22m F5.)
        if crate::policy::workspace_kind::vcs::is_repository_top(dir) {
            return Some(dir.to_path_buf());
        }
        d = dir.parent();
    }
    None
}
