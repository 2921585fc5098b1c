//! What a run granted secrets needs from the host, asked before any
//! secret's source runs (atk27o F4): the egress proxy that puts the values
//! in lives in the run's own network namespace. Where none can be made (no
//! unprivileged user namespaces: a container's seccomp profile, an
//! AppArmor default), the run would be refused after its sources ran, a
//! `command` source then in the caller's view judged by its text only,
//! which buys nothing: the run is refused first, no source run.

use crate::HostFacts;

/// Why a run cannot carry secrets on `host`; `None` when it can.
pub fn missing(host: &HostFacts) -> Option<String> {
    (!host.namespaces).then(|| {
        "secrets need the egress proxy, which needs a network namespace (not available \
         here: no user namespaces for this user); no secret source was run"
            .to_string()
    })
}

/// [`missing`] for the running host.
pub fn check() -> Result<(), String> {
    match missing(&HostFacts::probe()) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}
