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
}
