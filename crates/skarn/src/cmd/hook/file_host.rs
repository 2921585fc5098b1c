//! The places host programs run or trust, as `skarn run` finds them
//! ([`skarn_sandbox::protect::host_places::collect`], the same function:
//! the home's dotfiles and where they lead, the programs git's global
//! configuration names, the files the caller's `BASH_ENV`,
//! `PYTHONSTARTUP`, `NODE_OPTIONS`, `PERL5OPT`, `JAVA_TOOL_OPTIONS`, ...
//! name, `PATH`, the yarn program a `.yarnrc.yml` names, what the user's
//! secrets make skarn run on the host): `skarn run`
//! keeps those inside its grants read-only, and the agent's file tools,
//! which write outside any sandbox, may not write them anywhere (attack
//! atk24i F9). The hook runs with the agent's environment, which the
//! agent's commands and the host programs started after them inherit.

use std::path::{Path, PathBuf};

use super::file_paths::fold;

/// The places, folded for comparing names.
pub struct HostPlaces {
    /// (folded target, target, how the host reaches it).
    places: Vec<(PathBuf, PathBuf, String)>,
}

impl HostPlaces {
    #[cfg(unix)]
    pub fn new(ws: &Path, cwd: &Path, home: Option<&Path>) -> HostPlaces {
        // The secrets' host places too (a `command` source's program and
        // scripts, a missing `file` source): the file tools write outside
        // any sandbox, and the next resolution runs what they wrote on
        // the host (atk27k F19).
        #[cfg(target_os = "linux")]
        // A configuration that does not parse names no place: the hook's
        // own check of the configuration refuses the edit then.
        let secrets = crate::cmd::run_secrets::host_places(home).unwrap_or_default();
        #[cfg(not(target_os = "linux"))]
        let secrets: Vec<(PathBuf, String, bool)> = Vec::new();
        let found = skarn_sandbox::protect::host_places::collect(home, ws, cwd, &secrets);
        let places = found
            .trusted
            .into_iter()
            // `/` or an ancestor of the home is no file a host program
            // runs (as `skarn run` leaves it out): a link pointed there
            // must not make every path a protected one.
            .filter(|t| {
                t.target.parent().is_some() && !home.is_some_and(|h| h.starts_with(&t.target))
            })
            .map(|t| (fold(&t.target), t.target, t.via))
            .collect();
        HostPlaces { places }
    }

    /// Host places are found the unix way only.
    #[cfg(not(unix))]
    pub fn new(_ws: &Path, _cwd: &Path, _home: Option<&Path>) -> HostPlaces {
        HostPlaces { places: Vec::new() }
    }

    /// Why `c` may not be written, if it is (or lies in) such a place.
    pub fn refusal(&self, c: &Path) -> Option<String> {
        let fc = fold(c);
        self.places
            .iter()
            .find(|(f, _, _)| fc.starts_with(f))
            .map(|(_, target, via)| {
                format!(
                    "{} is (or lies in) {}, which the host reaches as {via}: host programs \
                     read or run it; sandboxed commands cannot write it either",
                    c.display(),
                    target.display()
                )
            })
    }
}
