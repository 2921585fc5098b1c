//! The engine's integration tests, one binary with a module per area.
//! `abandon.rs` stays its own binary: it counts the isolate threads
//! abandoned in its process, which other tests here would change.

// Tests may unwrap: a panic is how a test fails.
#![allow(clippy::unwrap_used)]

mod api;
mod arrays;
#[allow(dead_code)]
mod common;
mod errors;
mod escapes;
mod frontend;
mod limits;
mod native_loops;
mod typescript;
mod validator;
