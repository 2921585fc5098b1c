//! skarn-egress's integration tests: one test binary, a module per area;
//! the proxy runs in-process against upstreams on loopback.

// Tests may unwrap: a panic is how a test fails.
#![allow(clippy::unwrap_used)]

#[cfg(target_os = "linux")]
mod body_flush;
mod common;
mod limits;
mod proxy;
mod relay_integrity;
mod secrets;
mod secrets_echo;
mod secrets_stream;
