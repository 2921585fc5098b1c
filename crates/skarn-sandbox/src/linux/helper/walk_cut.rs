//! A walk of the writable grants before the run that did not cover them
//! all (a bound or a cap reached): what the run loses, said on stderr
//! whatever the report format (attack atk24d F6, ADR 0204).
//!
//! Unix sockets are hidden by name, so a host server's socket the walk did
//! not reach (a project database's, an editor's) would be reachable. Such
//! a run makes no unix socket: the target's seccomp filter refuses
//! `socket(AF_UNIX, ...)` and datagram socket pairs
//! ([`crate::linux::seccomp::DENY_UNIX_SOCKETS`]); stream socket pairs
//! stay. The line names the bound and the setting that raises it.

use crate::protect::grant_walk::{Bounds, MAX_FOUND, Stop, Walk};

/// The line for a walk that left unix sockets uncovered, if it did.
pub(super) fn line(w: &Walk, bounds: Bounds) -> Option<String> {
    if !w.sockets_uncovered() {
        return None;
    }
    let suggest = bounds.dirs.saturating_mul(4).max(200_000);
    let raise = format!(
        "raise the bound to walk the whole tree: --walk-max-dirs {suggest} or [run] \
         walk_max_dirs = {suggest}"
    );
    let (what, fix) = match w.stopped_by {
        Some(Stop::Dirs) => (
            format!(
                "the walk of the writable grants before the run stopped at its bound of {} \
                 directories",
                bounds.dirs
            ),
            raise,
        ),
        Some(Stop::Time) => (
            format!(
                "the walk of the writable grants before the run stopped at its time bound ({} \
                 ms, after {} directories; it grows with the directory bound)",
                bounds.time.as_millis(),
                w.dirs
            ),
            raise,
        ),
        Some(Stop::Vetted) => (
            format!(
                "the walk of the writable grants before the run stopped at {} repositories, \
                 settings and toolchain files",
                crate::protect::grant_walk::MAX_VETTED
            ),
            "remove the generated ones from the writable grants".to_owned(),
        ),
        None if w.vanished && !w.unlisted_capped && !w.sockets_capped => (
            "a directory of the writable grants vanished while the walk before the run read \
             them (another process, or another run in this workspace, renamed or removed it)"
                .to_owned(),
            "run again once nothing moves directories in the workspace".to_owned(),
        ),
        None if w.sockets_capped => (
            format!("the writable grants hold more than {MAX_FOUND} unix sockets"),
            "remove the stale ones from the writable grants".to_owned(),
        ),
        None => (
            format!("the writable grants hold more than {MAX_FOUND} directories it cannot list"),
            "make them listable or move them out of the writable grants".to_owned(),
        ),
    };
    let repos = if w.truncated {
        "; repositories and settings past it were not kept read-only (those changed during \
         the run are set aside after it), nor other names (hard links) of protected files \
         hidden"
    } else {
        ""
    };
    Some(format!(
        "{what}: unix sockets are unavailable in this run (socket(AF_UNIX) is refused, stream \
         socket pairs still work), since a host server's socket it did not reach would not be \
         hidden{repos}; {fix}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn bounds() -> Bounds {
        Bounds {
            dirs: 100,
            time: Duration::from_millis(750),
        }
    }

    #[test]
    fn a_complete_walk_says_nothing() {
        assert!(line(&Walk::default(), bounds()).is_none());
    }

    #[test]
    fn each_cut_names_its_bound_and_fix() {
        let w = Walk {
            truncated: true,
            stopped_by: Some(Stop::Dirs),
            ..Walk::default()
        };
        let l = line(&w, bounds()).unwrap();
        assert!(l.contains("bound of 100 directories"), "{l}");
        assert!(l.contains("unix sockets are unavailable"), "{l}");
        assert!(l.contains("--walk-max-dirs 200000"), "{l}");
        assert!(l.contains("not kept read-only"), "{l}");
        let w = Walk {
            truncated_late: true,
            stopped_by: Some(Stop::Time),
            ..Walk::default()
        };
        let l = line(&w, bounds()).unwrap();
        assert!(l.contains("time bound (750 ms"), "{l}");
        assert!(!l.contains("not kept read-only"), "{l}");
        let w = Walk {
            sockets_capped: true,
            ..Walk::default()
        };
        assert!(
            line(&w, bounds())
                .unwrap()
                .contains("more than 4096 unix sockets")
        );
        let w = Walk {
            unlisted_capped: true,
            ..Walk::default()
        };
        assert!(line(&w, bounds()).unwrap().contains("cannot list"));
    }
}
