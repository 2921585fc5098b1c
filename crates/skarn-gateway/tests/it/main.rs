//! The gateway's integration tests, one binary with a module per area.
//! `env.rs` stays its own binary: it sets variables in the process
//! environment, which the gateway reads and other tests here would race.

// Tests may unwrap: a panic is how a test fails.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
mod common;
mod downstream;
mod exec_share;
mod hostile;
#[cfg(unix)]
mod http_isolation;
mod relay_asks;
mod relay_bounds;
mod relay_logs;
mod relay_order;
mod relay_text;
mod starts;
