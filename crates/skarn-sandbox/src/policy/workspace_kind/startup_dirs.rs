//! The directories of the start-up files the caller's environment names
//! (`$BASH_ENV`, `$ENV`, `$INPUTRC`, `$PYTHONSTARTUP`, ...; attack atk22o
//! F6), as workspaces: a start-up file's neighbours may be read as code
//! by it, so a workspace that is or lies in its directory is refused, as
//! one that is `$ZDOTDIR` is ([`crate::protect::env_named_startup`]).

use std::path::{Path, PathBuf};

/// Why `ws` (canonical) is or lies in the directory of a start-up file
/// an environment variable names; `homes`: a home or a shared directory
/// holding one is no such directory (its own rules apply).
pub(super) fn reason(ws: &Path, homes: &[PathBuf]) -> Option<String> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    for (f, var) in crate::protect::env_named_files::files(home.as_deref()) {
        let Some(dir) = f.parent() else { continue };
        if !super::is_prefix(dir, homes) || !ws.starts_with(dir) {
            continue;
        }
        let how = if ws == dir { "is" } else { "lies in" };
        return Some(format!(
            "{} {how} {}, the directory of the start-up file ${var} names ({}): a host program \
             reads it as code with what it sources from there, so a file the command put there \
             would run on the host",
            ws.display(),
            dir.display(),
            f.display()
        ));
    }
    None
}
