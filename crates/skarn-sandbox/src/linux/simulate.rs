//! `SKARN_SANDBOX_SIMULATE_MISSING` ([`SIMULATE_MISSING_ENV`]), a testing
//! aid that pretends a mechanism is missing: honoured only by builds made
//! for tests (attack atk24i F4, ADR 0240), and the layers without which
//! `fail_closed` refuses ([`super::required_layers`]).

use crate::linux::host::SIMULATE_MISSING_ENV;

/// Whether this build honours [`SIMULATE_MISSING_ENV`]: only builds made
/// for tests (the `simulate-missing` feature, which the test suite enables
/// through a dev-dependency). Any other build ignores the variable, so no
/// environment an agent or a repository sets can weaken the sandbox.
pub const SIMULATION_HONOURED: bool = cfg!(feature = "simulate-missing");

/// The mechanisms to pretend missing: those [`SIMULATE_MISSING_ENV`] names
/// in a test build, none otherwise.
pub(crate) fn simulated_missing() -> Vec<String> {
    parse_simulated(
        std::env::var(SIMULATE_MISSING_ENV).ok().as_deref(),
        SIMULATION_HONOURED,
    )
}

/// [`simulated_missing`] for a given value and build.
fn parse_simulated(value: Option<&str>, honoured: bool) -> Vec<String> {
    match value {
        Some(v) if honoured => v
            .split(',')
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// The warning to print when [`SIMULATE_MISSING_ENV`] is set in a build
/// that ignores it (`None`: unset, empty, or a test build).
pub fn simulation_ignored() -> Option<String> {
    ignored_warning(
        std::env::var_os(SIMULATE_MISSING_ENV).as_deref(),
        SIMULATION_HONOURED,
    )
}

fn ignored_warning(value: Option<&std::ffi::OsStr>, honoured: bool) -> Option<String> {
    let v = value.filter(|v| !v.is_empty())?;
    (!honoured).then(|| {
        format!(
            "{SIMULATE_MISSING_ENV}={} is ignored: only builds made for skarn's tests \
             pretend a mechanism is missing",
            crate::protect::terminal_filter::one_line(&v.to_string_lossy())
        )
    })
}

#[cfg(test)]
mod simulate_tests {
    use super::*;

    #[test]
    fn only_a_test_build_pretends_a_mechanism_is_missing() {
        assert_eq!(
            parse_simulated(Some("seccomp, landlock"), true),
            ["seccomp", "landlock"]
        );
        assert!(parse_simulated(Some("seccomp,landlock"), false).is_empty());
        assert!(parse_simulated(None, true).is_empty());
        let w = ignored_warning(Some("seccomp".as_ref()), false).expect("warns");
        assert!(
            w.contains("SKARN_SANDBOX_SIMULATE_MISSING=seccomp is ignored"),
            "{w}"
        );
        assert!(ignored_warning(Some("seccomp".as_ref()), true).is_none());
        assert!(ignored_warning(Some("".as_ref()), false).is_none());
        assert!(ignored_warning(None, false).is_none());
    }
}
