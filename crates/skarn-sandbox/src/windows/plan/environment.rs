//! The command's environment in the container: scrubbed, with `TEMP` and
//! `TMP` in the container's own folder.

use std::ffi::OsString;

use super::super::host_facts::WindowsHostFacts;
use super::super::winpath;
use crate::policy::Policy;

/// The environment the command gets, and the names scrubbed from it.
pub(super) fn container_env(
    policy: &Policy,
    env: &[(OsString, OsString)],
    facts: &WindowsHostFacts,
    profile: &str,
    notes: &mut Vec<String>,
) -> (Vec<(String, String)>, Vec<String>) {
    let (kept, removed) = crate::policy::env::scrub(env.iter().cloned(), &policy.allow_env);
    let mut env: Vec<(String, String)> = kept
        .into_iter()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .filter(|(k, _)| !k.eq_ignore_ascii_case("TEMP") && !k.eq_ignore_ascii_case("TMP"))
        .collect();
    if crate::policy::offline_env::is_offline(&policy.net) {
        let set = crate::policy::offline_env::offline_env(&policy.net);
        env.retain(|(k, _)| !set.iter().any(|(s, _)| k.eq_ignore_ascii_case(s)));
        env.extend(set);
        notes.push(crate::policy::offline_env::offline_note());
    }
    match &facts.local_app_data {
        Some(l) => {
            let t = container_temp(l, profile);
            env.push(("TEMP".into(), t.clone()));
            env.push(("TMP".into(), t));
            notes.push(
                "TEMP and TMP point into the container's own folder, kept between runs of this \
                 workspace"
                    .into(),
            );
        }
        None => notes.push("LOCALAPPDATA unknown: TEMP and TMP are not set".into()),
    }
    (env, removed)
}

/// The container's temporary directory under `%LOCALAPPDATA%`.
pub fn container_temp(local_app_data: &str, profile: &str) -> String {
    winpath::join(local_app_data, &format!("Packages\\{profile}\\AC\\Temp"))
}
