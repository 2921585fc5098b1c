//! Real attempts against each mechanism of the kit, checked from outside.
//!
//! Every scenario runs in a fresh child (this binary re-executed with
//! `KIT_SCENARIO` set, so the child is single-threaded), which applies one
//! mechanism and then tries what it must forbid. The parent checks the
//! effect: the file or directory does not exist, the connection never
//! arrived, the child died of SIGSYS, the pipe saw EOF while the child
//! lived. Runs as root and as an unprivileged user; a scenario the host
//! cannot run (no Landlock, no user namespaces, not root) says so and is
//! skipped.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

#[cfg(target_os = "linux")]
mod linux {
    include!("kit_attempts/linux.rs");
}

#[cfg(target_os = "linux")]
fn main() {
    linux::main()
}

#[cfg(not(target_os = "linux"))]
fn main() {}
