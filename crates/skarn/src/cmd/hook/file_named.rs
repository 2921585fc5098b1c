//! The files the workspace's protected configuration names, refused to
//! the agent's file tools: [`skarn_sandbox::protect::config_named`], the
//! list `skarn run` keeps read-only (attack atk24j F3).

use std::path::{Path, PathBuf};

use super::file_paths::fold;

/// The named files, as found and folded.
pub struct Named {
    /// (folded, named file, the configuration naming it).
    files: Vec<(PathBuf, PathBuf, PathBuf)>,
    /// (folded, where a protected name leads through a link, that name):
    /// [`skarn_sandbox::protect::linked_targets`] (attack atk24l F5).
    linked: Vec<(PathBuf, PathBuf, PathBuf)>,
    /// Why the links could not all be followed (every write refused:
    /// attack atk24s F6).
    incomplete: Option<String>,
}

impl Named {
    /// The files the configuration of each base names.
    pub fn new(bases: &[PathBuf]) -> Named {
        let mut files = Vec::new();
        let mut linked = Vec::new();
        let mut incomplete = None;
        for base in bases {
            for (f, cfg) in skarn_sandbox::protect::config_named::named(base) {
                files.push((fold(&f), f, cfg));
            }
            match skarn_sandbox::protect::linked_targets::of(base) {
                Ok(l) => linked.extend(l.into_iter().map(|(t, name)| (fold(&t), t, name))),
                Err(why) => incomplete = Some(why),
            }
        }
        Named {
            files,
            linked,
            incomplete,
        }
    }

    /// Why `c` may not be written, if the configuration names it.
    pub fn refusal(&self, c: &Path) -> Option<String> {
        if let Some(why) = &self.incomplete {
            return Some(format!(
                "{why}; so no file is written by the file tools here (fail closed)"
            ));
        }
        let fc = fold(c);
        if let Some((_, t, name)) = self.linked.iter().find(|(f, _, _)| fc.starts_with(f)) {
            return Some(format!(
                "{} is where the protected path {} leads (a symbolic link): host programs read \
                 it by that name, so rewriting it is rewriting {}; sandboxed commands cannot \
                 write it either",
                t.display(),
                name.display(),
                name.display()
            ));
        }
        self.files
            .iter()
            // (A directory named, a `cd` target, covers what lies below.)
            .find(|(f, _, _)| fc.starts_with(f))
            .map(|(_, f, cfg)| {
                format!(
                    "{} is named by {}, which an agent client or a host tool runs outside any \
                     sandbox (a hook, a server, a task, a git or toolchain setting): rewriting \
                     it is rewriting that configuration; sandboxed commands cannot write it \
                     either",
                    f.display(),
                    cfg.display()
                )
            })
    }
}
