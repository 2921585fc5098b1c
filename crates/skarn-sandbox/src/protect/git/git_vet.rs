//! Git's effective layout and configuration, read on the host before a run
//! (no git process, nothing of the workspace is executed), and the paths
//! that must stay read-only so the run cannot make host git run code:
//! the git and common directories' `hooks`, `config`, `config.worktree`,
//! `commondir`, `modules`, linked worktrees' `commondir`, `config.worktree`
//! and `gitdir`, a `.git` file, every `core.hooksPath` directory and every
//! `include.path` / `includeIf.*.path` file. Includes are followed
//! whatever their condition (a branch switch during the run could make one
//! active), so the result over-approximates what git reads.

use std::path::{Component, Path, PathBuf};

use crate::protect::git::gitconfig::{self, Item};

/// Where git keeps a working tree's repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Top of the working tree (the directory holding `.git`).
    pub top: PathBuf,
    /// The `.git` file, when `.git` is a gitdir pointer or a symbolic
    /// link to the git directory.
    pub git_file: Option<PathBuf>,
    /// The git directory.
    pub git_dir: PathBuf,
    /// The common directory (= `git_dir` unless `commondir` redirects it).
    pub common_dir: PathBuf,
}

/// One path to keep read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    /// Absolute host path.
    pub path: PathBuf,
    /// Reserve it (placeholder) when missing.
    pub reserve: bool,
    /// Reserve it with an empty regular file rather than a placeholder
    /// socket: git reads this file and stops on an unreadable one, while
    /// an empty configuration file changes nothing.
    pub empty_file: bool,
}

/// Normalize `.` and `..` lexically (no symlink resolution).
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
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

fn resolve(base: &Path, p: &str, home: Option<&Path>) -> Option<PathBuf> {
    // The bytes git uses (see `gitconfig::decode_bytes`).
    let path = if let Some(rest) = p.strip_prefix("~/") {
        home?.join(gitconfig::value_path(rest))
    } else {
        let pb = gitconfig::value_path(p);
        if pb.is_absolute() { pb } else { base.join(pb) }
    };
    Some(lexical(&path))
}

/// A small regular file's text (see [`gitconfig::read_file`]), if there
/// is one.
fn read_small(p: &Path) -> Option<String> {
    gitconfig::read_file(p).ok().flatten()
}

/// The directory a `.git` file names, read as git reads it: the file
/// starts with `gitdir: ` (one blank), the path is the rest less trailing
/// CR/LF, as bytes (a NUL ends it). `None` when git refuses the file.
/// (Joining an absolute path replaces the base.)
pub fn gitfile_target(bytes: &[u8]) -> Option<&Path> {
    use std::os::unix::ffi::OsStrExt;
    let end = bytes.len()
        - bytes
            .iter()
            .rev()
            .take_while(|b| matches!(b, b'\n' | b'\r'))
            .count();
    let text = bytes[..end].split(|b| *b == 0).next()?;
    let path = text.strip_prefix(b"gitdir: ")?;
    (!path.is_empty()).then(|| Path::new(std::ffi::OsStr::from_bytes(path)))
}

/// The directory a `commondir` file names, as git reads it: the bytes
/// less trailing CR/LF, a NUL ends it.
pub fn commondir_target(bytes: &[u8]) -> &Path {
    use std::os::unix::ffi::OsStrExt;
    let end = bytes.len()
        - bytes
            .iter()
            .rev()
            .take_while(|b| matches!(b, b'\n' | b'\r'))
            .count();
    let text = bytes[..end].split(|b| *b == 0).next().unwrap_or_default();
    Path::new(std::ffi::OsStr::from_bytes(text))
}

fn looks_like_git_dir(d: &Path) -> bool {
    d.join("HEAD").exists() && (d.join("objects").is_dir() || d.join("commondir").exists())
}

/// Find the repository of `start` the way git discovers it (upwards).
pub fn discover(start: &Path) -> Option<Layout> {
    let mut dir = Some(start);
    while let Some(d) = dir {
        let dotgit = d.join(".git");
        if let Ok(md) = std::fs::symlink_metadata(&dotgit) {
            let (git_file, git_dir) = if md.is_file() {
                let bytes = gitconfig::read_bytes(&dotgit).ok().flatten()?;
                let target = gitfile_target(&bytes)?;
                (Some(dotgit.clone()), lexical(&d.join(target)))
            } else if md.file_type().is_symlink() {
                // A `.git` that is a symbolic link (the Android `repo`
                // tool's `.git -> .repo/projects/p.git`, a git directory
                // kept elsewhere; atk24l F7): host git follows it, so the
                // git directory is where it leads, and the link itself is
                // kept like a `.git` file.
                match std::fs::canonicalize(&dotgit) {
                    Ok(real) if real.is_dir() => (Some(dotgit.clone()), real),
                    _ => (None, dotgit.clone()),
                }
            } else {
                (None, dotgit.clone())
            };
            if looks_like_git_dir(&git_dir) {
                let common_dir = match gitconfig::read_bytes(&git_dir.join("commondir")) {
                    Ok(Some(t)) => lexical(&git_dir.join(commondir_target(&t))),
                    _ => git_dir.clone(),
                };
                return Some(Layout {
                    top: d.to_path_buf(),
                    git_file,
                    git_dir,
                    common_dir,
                });
            }
        }
        dir = d.parent();
    }
    None
}

/// What the configuration files git reads name: hooks directories,
/// include files, and whether per-worktree config is on.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Named {
    /// `core.hooksPath` values, resolved.
    pub hooks_paths: Vec<PathBuf>,
    /// Include files (any condition), resolved, each once.
    pub includes: Vec<PathBuf>,
    /// `extensions.worktreeConfig` is true somewhere.
    pub worktree_config: bool,
    /// Paths the program-valued keys name (`core.fsmonitor =
    /// tools/fs.sh`, `filter.x.clean`, `alias.x = !tools/p.sh`), relative
    /// ones against the work tree's top, where git runs them (atk22g F20).
    pub programs: Vec<PathBuf>,
    /// The configuration named more than [`MAX_INCLUDES`] includes or
    /// more than [`MAX_CONFIG_BYTES`] of configuration: reading stopped,
    /// so the lists above are incomplete. No real configuration comes
    /// near; callers refuse (fail closed) rather than protect a part.
    pub over_limit: bool,
}

/// Most include files followed for one repository (a real configuration
/// has a handful); past it [`Named::over_limit`] is set.
pub const MAX_INCLUDES: usize = 1000;

/// Most configuration text read for one repository, all files together.
pub(crate) const MAX_CONFIG_BYTES: usize = 8 << 20;

/// One walk over a repository's configuration files: each include is
/// read once (a set of seen paths keeps the walk linear), and the walk
/// stops at the bounds above.
struct Walk<'a> {
    top: &'a Path,
    home: Option<&'a Path>,
    n: Named,
    seen: std::collections::HashSet<PathBuf>,
    bytes: usize,
}

impl Walk<'_> {
    /// Collect from one config text (at `file`), recursing into includes.
    fn collect(&mut self, file: &Path, text: &str, depth: u32) {
        self.bytes += text.len();
        if self.bytes > MAX_CONFIG_BYTES {
            self.n.over_limit = true;
        }
        if self.n.over_limit {
            return;
        }
        let base = file.parent().unwrap_or(Path::new("/"));
        for it in gitconfig::parse(text).items {
            if self.n.over_limit {
                return;
            }
            self.item(&it, base, depth);
        }
    }

    fn item(&mut self, it: &Item, base: &Path, depth: u32) {
        let v = it.value.as_deref();
        match (it.section.as_str(), it.name.as_str()) {
            ("core", "hookspath") if it.sub.is_none() => {
                if let Some(p) = v.and_then(|v| resolve(self.top, v, self.home)) {
                    if self.n.hooks_paths.len() >= MAX_INCLUDES {
                        self.n.over_limit = true;
                        return;
                    }
                    self.n.hooks_paths.push(p);
                }
            }
            _ if crate::protect::git::program_keys::names_program(it)
                && !(it.section == "core" && it.name == "hookspath") =>
            {
                for w in v.unwrap_or_default().split(|c: char| {
                    c.is_whitespace() || matches!(c, '|' | ';' | '&' | '(' | ')' | '=')
                }) {
                    let w = w.trim_start_matches('!').trim_matches(['"', '\'']);
                    if !w.contains('/') || w.contains("://") || w.starts_with('-') {
                        continue;
                    }
                    if self.n.programs.len() >= MAX_INCLUDES {
                        self.n.over_limit = true;
                        return;
                    }
                    if let Some(p) = resolve(self.top, w, self.home) {
                        self.n.programs.push(p);
                    }
                }
            }
            ("extensions", "worktreeconfig") if it.sub.is_none() => {
                self.n.worktree_config |= gitconfig::is_true(v);
            }
            ("include" | "includeif", "path") => {
                let Some(p) = v.and_then(|v| resolve(base, v, self.home)) else {
                    return;
                };
                if self.seen.contains(&p) {
                    return;
                }
                if self.n.includes.len() >= MAX_INCLUDES {
                    self.n.over_limit = true;
                    return;
                }
                self.seen.insert(p.clone());
                self.n.includes.push(p.clone());
                if depth < 10
                    && let Some(t) = read_small(&p)
                {
                    self.collect(&p, &t, depth + 1);
                }
            }
            _ => {}
        }
    }
}

/// The configuration files git reads for `layout` (system, global,
/// repository, worktree), those that exist.
fn config_files(layout: &Layout, home: Option<&Path>) -> Vec<PathBuf> {
    let mut v = vec![PathBuf::from("/etc/gitconfig")];
    if let Some(h) = home {
        let xdg = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| h.join(".config"));
        v.push(xdg.join("git/config"));
        v.push(h.join(".gitconfig"));
    }
    if let Some(g) = std::env::var_os("GIT_CONFIG_GLOBAL") {
        v.push(PathBuf::from(g));
    }
    v.push(layout.common_dir.join("config"));
    v.push(layout.git_dir.join("config.worktree"));
    v
}

/// Read what git's configuration names for `layout`.
pub fn named(layout: &Layout, home: Option<&Path>) -> Named {
    let mut w = Walk {
        top: &layout.top,
        home,
        n: Named::default(),
        seen: std::collections::HashSet::new(),
        bytes: 0,
    };
    for f in config_files(layout, home) {
        if let Some(t) = read_small(&f) {
            w.collect(&f, &t, 0);
        }
    }
    w.n
}

/// Relative `core.hooksPath` values of the system and global git
/// configuration (and their includes): git resolves them against each
/// repository's work tree, so they name a hooks directory in every
/// repository, nested ones and ones created during a run included.
pub fn global_relative_hooks(home: Option<&Path>) -> Vec<PathBuf> {
    // A work tree no configuration can name: what the values resolve
    // below it is relative.
    let top = Path::new("/skarn-relative-top");
    let layout = Layout {
        top: top.to_path_buf(),
        git_file: None,
        git_dir: top.join(".git"),
        common_dir: top.join(".git"),
    };
    let mut out: Vec<PathBuf> = named(&layout, home)
        .hooks_paths
        .iter()
        .filter_map(|p| p.strip_prefix(top).ok())
        .filter(|r| !r.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .take(16)
        .collect();
    out.dedup();
    out
}

/// The configuration of `layout` names more than git_vet reads
/// ([`Named::over_limit`]): the repository is refused.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "the git configuration of {top} names more than {MAX_INCLUDES} include files or more \
     than 8 MiB of configuration: too much to vet, refused (check its .git/config)"
)]
pub struct TooMuchConfig {
    /// Top of the working tree.
    pub top: String,
}

/// [`guards_for`], refusing a configuration past the bounds (whose
/// guards would be incomplete).
pub fn checked_guards_for(
    layout: &Layout,
    writable: &[PathBuf],
    home: Option<&Path>,
) -> Result<Vec<Guard>, TooMuchConfig> {
    let n = named(layout, home);
    if n.over_limit {
        return Err(TooMuchConfig {
            top: layout.top.display().to_string(),
        });
    }
    Ok(guards_from(layout, n, writable))
}

fn inside(p: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|r| p.starts_with(r))
}

/// Paths to keep read-only for the repository of `ws`, limited to those
/// inside `writable` (everything else is read-only or absent in the
/// sandbox already). Missing paths that git would read if created are
/// reserved; `commondir` never is (git stops on an unreadable one).
pub fn guards(ws: &Path, writable: &[PathBuf], home: Option<&Path>) -> Vec<Guard> {
    let Some(layout) = discover(ws) else {
        return Vec::new();
    };
    guards_for(&layout, writable, home)
}

/// [`guards`] for a known layout.
/// (A configuration past the bounds gives the guards read so far: see
/// [`checked_guards_for`].)
pub fn guards_for(layout: &Layout, writable: &[PathBuf], home: Option<&Path>) -> Vec<Guard> {
    guards_from(layout, named(layout, home), writable)
}

fn guards_from(layout: &Layout, n: Named, writable: &[PathBuf]) -> Vec<Guard> {
    let mut out: Vec<Guard> = Vec::new();
    let mut taken = std::collections::HashSet::new();
    let mut add = |path: PathBuf, reserve: bool, empty_file: bool| {
        if inside(&path, writable) && taken.insert(path.clone()) {
            out.push(Guard {
                path,
                reserve,
                empty_file,
            });
        }
    };
    if let Some(f) = &layout.git_file {
        add(f.clone(), false, false);
    }
    let mut dirs = vec![layout.git_dir.clone()];
    if layout.common_dir != layout.git_dir {
        dirs.push(layout.common_dir.clone());
    }
    for d in &dirs {
        add(d.join("hooks"), true, false);
        add(d.join("config"), true, false);
        add(d.join("config.worktree"), n.worktree_config, true);
        add(d.join("commondir"), false, false);
        add(d.join("modules"), true, false);
        add(d.join("gitdir"), false, false);
    }
    if let Ok(rd) = std::fs::read_dir(layout.common_dir.join("worktrees")) {
        for e in rd.flatten() {
            for f in ["commondir", "config.worktree", "gitdir"] {
                let p = e.path().join(f);
                if std::fs::symlink_metadata(&p).is_ok() {
                    add(p, false, false);
                }
            }
        }
    }
    for h in n.hooks_paths {
        add(h, true, false);
    }
    for p in n.programs {
        add(p, false, false);
    }
    for i in n.includes {
        add(i, true, true);
    }
    out
}

#[cfg(test)]
#[path = "git_vet_tests.rs"]
mod tests;
