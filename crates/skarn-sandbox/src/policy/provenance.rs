//! [`Provenance`]: which layer set each value of an assembled policy.
//!
//! Grants carry their own provenance ([`crate::Grant::source`]); this map
//! covers everything else, keyed by the setting's config name (`net`,
//! `timeout`, `private_home`, `preset`, ...) or, for list entries, by
//! `key.entry` (`allow_env.MY_TOKEN`, `allow_hosts.example.com`).
//! A key that no layer set is `default`.

use std::collections::BTreeMap;

use serde::Serialize;

/// The provenance of a value nobody set.
pub const DEFAULT: &str = "default";

/// Which layer set each value, plus notes gathered while assembling.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Provenance {
    /// Setting (or `key.entry`) to the layer that set it (`--net`,
    /// `/ws/skarn.toml:3:7`, ...).
    pub values: BTreeMap<String, String>,
    /// Notes for the user (e.g. what `registries` expanded to).
    pub notes: Vec<String>,
}

impl Provenance {
    /// Record that `source` set `key` (a later layer overwrites).
    pub fn set(&mut self, key: impl Into<String>, source: impl Into<String>) {
        self.values.insert(key.into(), source.into());
    }

    /// Who set `key`: its source, or [`DEFAULT`].
    pub fn get(&self, key: &str) -> &str {
        self.values.get(key).map_or(DEFAULT, String::as_str)
    }

    /// `key = source` lines, sorted by key.
    pub fn lines(&self) -> impl Iterator<Item = String> + '_ {
        self.values.iter().map(|(k, v)| format!("{k}: {v}"))
    }
}
