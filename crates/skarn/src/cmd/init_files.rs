//! Where `skarn init` writes, and how: symbolic links are followed only
//! while they stay inside the directory the file belongs to, files are
//! replaced through a temporary file and a rename in the real file's
//! directory, and a backup is made next to the file actually changed.
//!
//! The rule (also in `skarn init --help` and docs/gateway.md): every file
//! has a base directory — the project (the current directory) for project
//! files and for `--config` inside it, the home directory for user-level
//! client files, the file's own directory for a `--config` elsewhere. A
//! path whose real location (every link resolved) is outside its base, or
//! that is a dangling link, is refused, naming the link and its target.
//! So a cloned repository's `.mcp.json -> ~/.claude.json` or
//! `.claude -> /tmp/x` is refused, while `~/.claude.json ->
//! ~/dotfiles/claude.json` (a dotfiles checkout in the home) is followed.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, bail};

/// A file `init` may write, resolved.
#[derive(Debug, Clone)]
pub struct Target {
    /// The path as named (shown to the user, used in the summary).
    pub path: PathBuf,
    /// The real file: every link resolved, inside the base directory.
    pub real: PathBuf,
}

impl Target {
    /// Whether a link was followed to reach the real file.
    pub fn via_link(&self) -> bool {
        self.path != self.real
    }
}

/// Resolve `path` (absolute) for writing; `base` is the directory its real
/// location must stay in.
pub fn resolve(path: &Path, base: &Path) -> anyhow::Result<Target> {
    if !path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
        bail!("{}: expected an absolute path without `..`", path.display());
    }
    let base_real = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    // The deepest part of the path that exists (a link counts, even dangling).
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    while std::fs::symlink_metadata(&existing).is_err() {
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_owned());
                existing = parent.to_path_buf();
            }
            _ => bail!("{}: no part of this path exists", path.display()),
        }
    }
    let mut real = match std::fs::canonicalize(&existing) {
        Ok(r) => r,
        Err(e) => {
            let target = std::fs::read_link(&existing)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into());
            bail!(
                "{} is a symbolic link to {target}, which does not exist ({e}): skarn init does \
                 not create files through links (remove the link or point it at an existing \
                 file)",
                existing.display()
            );
        }
    };
    for name in rest.iter().rev() {
        real.push(name);
    }
    let lexical = relocate(path, base, &base_real);
    if real != lexical && !real.starts_with(&base_real) {
        bail!(
            "{} leads through a symbolic link to {}, outside {}: skarn init does not write \
             through links that leave {} (edit the real file by hand, or replace the link)",
            path.display(),
            real.display(),
            base_real.display(),
            base_real.display()
        );
    }
    if real.is_dir() {
        bail!("{} is a directory", path.display());
    }
    Ok(Target {
        path: path.to_path_buf(),
        real,
    })
}

/// `path` with its `base` prefix replaced by the real base (so a home that
/// is itself a link does not count as a link inside the home).
fn relocate(path: &Path, base: &Path, base_real: &Path) -> PathBuf {
    match path.strip_prefix(base) {
        Ok(rel) => base_real.join(rel),
        Err(_) => path.to_path_buf(),
    }
}

/// The current text of the real file, `None` if there is none (or only a
/// live run's placeholder: see `skarn_sandbox::policy::config_read`).
pub fn read(t: &Target) -> anyhow::Result<Option<String>> {
    skarn_sandbox::policy::config_read::read_text(&t.real)
        .with_context(|| format!("cannot read {}", t.real.display()))
}

/// Refuse to write `t` while a `skarn run` holds a placeholder at it or
/// at a directory on the way: the run covers that name in its sandbox,
/// and replacing the placeholder on the host would lift the cover for the
/// rest of the run (the sandboxed command could then rewrite what `init`
/// wrote). Waiting is no answer either (a dev server can run for hours),
/// so `init` stops before writing anything, and says when to try again.
pub fn refuse_placeholder(t: &Target) -> anyhow::Result<()> {
    if let Some(p) = skarn_sandbox::policy::config_read::run_placeholder_on_the_way(&t.real) {
        let at = if p == t.real {
            String::new()
        } else {
            format!(" (through {})", p.display())
        };
        bail!(
            "{}{at} is reserved by a `skarn run` that is running in this project: its empty \
             placeholder keeps the sandboxed command from creating that name, and init does \
             not replace it. Nothing was written; run `skarn init` again once that run has \
             ended (a background command, e.g. a dev server or a watcher, started through \
             `skarn run`)",
            t.path.display()
        );
    }
    Ok(())
}

/// Replace the real file with `text`: a backup of the old file next to it
/// first (when there is one), then a temporary file in the same directory
/// renamed over it. Returns the backup's path.
pub fn write(t: &Target, text: &str, stamp: &str) -> anyhow::Result<Option<PathBuf>> {
    refuse_placeholder(t)?;
    let backup = if t.real.exists() {
        Some(backup(&t.real, stamp)?)
    } else {
        None
    };
    let dir = t
        .real
        .parent()
        .with_context(|| format!("{} has no directory", t.real.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let name = t
        .real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (tmp, mut file) = create_free(dir, &format!(".{name}.skarn-tmp"), &t.real)?;
    let done = (|| -> std::io::Result<()> {
        file.write_all(text.as_bytes())?;
        if let Ok(meta) = std::fs::metadata(&t.real) {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, &t.real)
    })();
    if let Err(e) = done {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", t.real.display()));
    }
    Ok(backup)
}

/// Copy `real` to `<real>.skarn-backup-<stamp>` (a free name, never
/// through an existing file or link), with its permissions.
fn backup(real: &Path, stamp: &str) -> anyhow::Result<PathBuf> {
    let dir = real.parent().unwrap_or(Path::new("/"));
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (path, mut file) = create_free(dir, &format!("{name}.skarn-backup-{stamp}"), real)?;
    let copied = (|| -> std::io::Result<()> {
        let mut src = std::fs::File::open(real)?;
        std::io::copy(&mut src, &mut file)?;
        file.sync_all()
    })();
    if let Err(e) = copied {
        let _ = std::fs::remove_file(&path);
        return Err(e).with_context(|| format!("cannot back up {}", real.display()));
    }
    Ok(path)
}

/// Create a new file `dir/<base>` (or `<base>-2`, `-3`, ...) that did not
/// exist before (O_EXCL: an existing file or link is never opened), with
/// the permissions of `like` when it exists.
fn create_free(dir: &Path, base: &str, like: &Path) -> anyhow::Result<(PathBuf, std::fs::File)> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let mode = std::fs::metadata(like).map_or(0o666, |m| m.permissions().mode() & 0o777);
        opts.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = like;
    for n in 1..1000 {
        let p = if n == 1 {
            dir.join(base)
        } else {
            dir.join(format!("{base}-{n}"))
        };
        match opts.open(&p) {
            Ok(f) => return Ok((p, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", p.display())),
        }
    }
    bail!("no free name for {} in {}", base, dir.display())
}

#[cfg(all(test, unix))]
mod tests;
