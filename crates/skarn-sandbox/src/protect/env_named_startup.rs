//! Start-up files the caller's environment names (attack atk22o F6):
//! `$BASH_ENV` (every non-interactive bash), `$ENV` (sh), `$INPUTRC`,
//! `$PYTHONSTARTUP`, `$MYVIMRC`/`$VIMINIT`/`$EXINIT`, `$PSQLRC`,
//! `$LUA_INIT` (`@file`), `$IRBRC`, ... Read like a home start-up file
//! ([`crate::protect::shell_sources::sourced_from`]): what it sources is
//! followed, and its directory tree is host code (a start-up file's
//! neighbours may be read as code by it), kept read-only where it lies
//! inside a writable grant. A workspace that is or lies in that
//! directory is refused ([`crate::policy::workspace_kind`], as for
//! `$ZDOTDIR`). A directory that is a home or a shared directory
//! (`BASH_ENV=~/.bash_env`) is no tree: the file alone is kept there
//! (the home's own rules cover its neighbours).

use std::path::{Path, PathBuf};

use crate::protect::trusted::{Tree, Trusted};

/// What the named start-up files make trusted: each file, its directory
/// tree (when a code tree), and what it sources (followed like a home
/// start-up file's); lines not expanded are said in `unresolved`.
pub fn places(home: Option<&Path>) -> (Vec<Trusted>, Vec<String>, Option<PathBuf>) {
    let named = crate::protect::env_named_files::files(home);
    let mut out = Vec::new();
    for (f, var) in &named {
        out.push(Trusted::new(
            f,
            f.clone(),
            format!("${var} (a start-up file a host program reads)"),
            false,
        ));
        if let Some(dir) = f.parent()
            && crate::policy::workspace_kind::launchers::is_code_tree(dir)
        {
            let via = format!(
                "the directory of {} (${var}): a start-up file's neighbours may be read as code \
                 by it",
                f.display()
            );
            out.push(Trusted::tree(dir, dir.to_path_buf(), via, Tree::Dir));
        }
    }
    let Some(h) = home else {
        return (out, Vec::new(), None);
    };
    let files: Vec<PathBuf> = named.into_iter().map(|(f, _)| f).collect();
    if files.is_empty() {
        return (out, Vec::new(), None);
    }
    let sc = crate::protect::shell_sources::sourced_from(h, &files);
    for r in sc.reached {
        let Ok(real) = std::fs::canonicalize(&r.path) else {
            // Missing: kept as named (reserved by the planner).
            out.push(Trusted::new(&r.path, r.path.clone(), r.via, false));
            continue;
        };
        match r.tree {
            Some(tree) => out.push(Trusted::tree(&r.path, real, r.via, tree)),
            None => {
                let sourced = r.via.starts_with("sourced by");
                if sourced
                    && let Some(dir) = real.parent()
                    && crate::policy::workspace_kind::launchers::is_code_tree(dir)
                {
                    let via = format!(
                        "the directory of {} ({}): a start-up file's neighbours may be read as \
                         code by it",
                        real.display(),
                        r.via
                    );
                    out.push(Trusted::tree(&r.path, dir.to_path_buf(), via, Tree::Dir));
                }
                out.push(Trusted::new(&r.path, real, r.via, false));
            }
        }
    }
    (out, sc.unresolved, sc.stopped)
}
