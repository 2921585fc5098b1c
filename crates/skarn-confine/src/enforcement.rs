//! What one confinement layer achieved: the status vocabulary shared by
//! the sandbox's `RestrictionReport` and the worker's `ConfinementReport`.

use serde::{Deserialize, Serialize};

/// How much of what was asked the host enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    /// Everything asked is in force.
    FullyEnforced,
    /// Part of it is in force; the detail names the gap.
    PartiallyEnforced,
    /// Nothing of it is in force.
    NotEnforced,
}

/// One confinement layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// User, network, mount, PID, IPC or UTS namespaces.
    Namespaces,
    /// Capabilities (bounding, ambient, effective/permitted/inheritable).
    Capabilities,
    /// `PR_SET_NO_NEW_PRIVS`.
    NoNewPrivs,
    /// Resource limits.
    Rlimits,
    /// Landlock ruleset.
    Landlock,
    /// seccomp-bpf filter.
    Seccomp,
    /// Death with the parent.
    ParentDeath,
    /// Inherited descriptors closed.
    Descriptors,
    /// macOS: a Seatbelt profile applied with `sandbox_init` (reported by
    /// the macOS worker; this crate's mechanisms are Linux's).
    Seatbelt,
    /// A new mount namespace whose root holds only the granted paths.
    Mounts,
    /// Control groups (process count, memory of the whole tree).
    Cgroup,
    /// The network policy as in force (namespace, loopback, proxy).
    Network,
    /// Windows: the AppContainer token and its capability SIDs.
    #[serde(rename = "appcontainer")]
    AppContainer,
    /// Windows: the job object (tree kill, process and memory limits).
    JobObject,
    /// Windows: access-control entries added for the run.
    Acls,
}

impl Layer {
    /// The layer's name as serialised (`landlock`, `no_new_privs`, ...),
    /// for text reports.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Namespaces => "namespaces",
            Layer::Capabilities => "capabilities",
            Layer::NoNewPrivs => "no_new_privs",
            Layer::Rlimits => "rlimits",
            Layer::Landlock => "landlock",
            Layer::Seccomp => "seccomp",
            Layer::ParentDeath => "parent_death",
            Layer::Descriptors => "descriptors",
            Layer::Seatbelt => "seatbelt",
            Layer::Mounts => "mounts",
            Layer::Cgroup => "cgroup",
            Layer::Network => "network",
            Layer::AppContainer => "appcontainer",
            Layer::JobObject => "job_object",
            Layer::Acls => "acls",
        }
    }
}

impl Status {
    /// A short word for text reports: `enforced`, `partial`, `NOT enforced`.
    pub fn word(self) -> &'static str {
        match self {
            Status::FullyEnforced => "enforced",
            Status::PartiallyEnforced => "partial",
            Status::NotEnforced => "NOT enforced",
        }
    }
}

/// What one layer achieved, with a one-line detail for humans.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Enforcement {
    /// The layer.
    pub layer: Layer,
    /// Its status.
    pub status: Status,
    /// What was applied, or what is missing.
    pub detail: String,
}

impl Enforcement {
    /// A fully enforced layer.
    pub fn full(layer: Layer, detail: impl Into<String>) -> Self {
        Self {
            layer,
            status: Status::FullyEnforced,
            detail: detail.into(),
        }
    }

    /// A partially enforced layer; `detail` names the gap.
    pub fn partial(layer: Layer, detail: impl Into<String>) -> Self {
        Self {
            layer,
            status: Status::PartiallyEnforced,
            detail: detail.into(),
        }
    }

    /// A layer not in force; `detail` says why.
    pub fn not_enforced(layer: Layer, detail: impl Into<String>) -> Self {
        Self {
            layer,
            status: Status::NotEnforced,
            detail: detail.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_keeps_its_wire_names() {
        // The sandbox's report files and golden plans carry these names.
        let s = serde_json::to_string(&Status::PartiallyEnforced);
        assert_eq!(s.ok().as_deref(), Some("\"PartiallyEnforced\""));
        let e = Enforcement::full(Layer::NoNewPrivs, "set");
        let v = serde_json::to_value(&e).ok();
        assert_eq!(
            v.as_ref().and_then(|v| v["layer"].as_str()),
            Some("no_new_privs")
        );
    }

    #[test]
    fn layer_names_are_the_serialised_names() {
        for l in [
            Layer::Namespaces,
            Layer::Capabilities,
            Layer::NoNewPrivs,
            Layer::Rlimits,
            Layer::Landlock,
            Layer::Seccomp,
            Layer::ParentDeath,
            Layer::Descriptors,
            Layer::Seatbelt,
            Layer::Mounts,
            Layer::Cgroup,
            Layer::Network,
            Layer::AppContainer,
            Layer::JobObject,
            Layer::Acls,
        ] {
            let wire = serde_json::to_value(l).ok();
            assert_eq!(wire.as_ref().and_then(|v| v.as_str()), Some(l.name()));
        }
    }
}
