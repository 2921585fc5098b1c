//! Set-up shared by the h22p tests (`run_h22p*`): the workspace layers
//! each attack is made in, and one failure report for all of them.

/// Both workspace layers: each attack is made in each.
pub const LAYERS: &[&str] = &["direct", "cow"];

/// Fail with every message in `failed`, one a line.
pub fn failures(failed: Vec<String>) {
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
