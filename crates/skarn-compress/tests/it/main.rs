//! skarn-compress's integration tests, one binary with a module per area.

// Tests may unwrap: a panic is how a test fails.
#![allow(clippy::unwrap_used)]

mod capture;
mod fixtures;
mod profiles;
