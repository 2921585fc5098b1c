//! skarn-sandbox's integration tests: one test binary with a module per
//! area, each a pure function of its inputs (no sandbox is started here).
//! Golden files live in `tests/golden` (re-bless with `SKARN_BLESS=1`
//! after reviewing the change).

// Tests may unwrap: a panic is how a test fails.
#![allow(clippy::unwrap_used)]

mod golden;
#[cfg(target_os = "linux")]
mod hosts;

// The macOS Seatbelt profile generator: pure, runs on every system.
mod macos_profile;
// The Linux backend's plan.
#[cfg(target_os = "linux")]
mod plan_golden;
#[cfg(target_os = "linux")]
mod plan_pure;
// The Windows plan: pure, runs on every system.
mod windows_plan;
