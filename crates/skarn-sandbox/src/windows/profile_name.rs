//! The AppContainer profile of a workspace: one per workspace path, with a
//! name that is stable across runs (same path, same container SID) and
//! valid for `CreateAppContainerProfile` (at most 64 characters of
//! `[-_. A-Za-z0-9]`).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::winpath;

/// Longest profile name Windows accepts.
pub(crate) const MAX_NAME: usize = 64;
/// Longest display name Windows accepts.
pub(crate) const MAX_DISPLAY_NAME: usize = 512;

/// Name, display name and description given to `CreateAppContainerProfile`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerProfile {
    /// `skarn.` + 16 hex digits of SHA-256 of the lower-cased, normalized
    /// workspace path.
    pub name: String,
    /// `Skarn sandbox: <workspace>` (cut to 512 characters).
    pub display_name: String,
    /// Fixed description.
    pub description: String,
}

/// The profile of `workspace` (a Windows path string).
pub fn for_workspace(workspace: &str) -> ContainerProfile {
    let digest = Sha256::digest(winpath::identity(workspace).as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let display: String = format!("Skarn sandbox: {}", winpath::normalize(workspace))
        .chars()
        .take(MAX_DISPLAY_NAME)
        .collect();
    ContainerProfile {
        name: format!("skarn.{hex}"),
        display_name: display,
        description: "Commands run by skarn run in this workspace".into(),
    }
}

/// Whether `name` is a valid AppContainer profile name.
pub(crate) fn is_valid(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b' '))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_valid_and_case_insensitive() {
        let a = for_workspace("C:\\Users\\u\\proj");
        assert_eq!(a.name, for_workspace("c:/users/U/proj/").name);
        assert!(is_valid(&a.name), "{}", a.name);
        assert_eq!(a.name.len(), "skarn.".len() + 16);
        assert_ne!(a.name, for_workspace("C:\\Users\\u\\proj2").name);
    }

    #[test]
    fn long_and_odd_paths_still_give_valid_names() {
        let long = format!("C:\\{}", "ä€ x;\"".repeat(400));
        let p = for_workspace(&long);
        assert!(is_valid(&p.name));
        assert!(p.display_name.chars().count() <= MAX_DISPLAY_NAME);
        assert!(!is_valid(&"x".repeat(65)));
        assert!(!is_valid("a/b"));
    }
}
