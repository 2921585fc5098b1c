//! Cargo's outputs (atk22o F8): host cargo trusts what a profile
//! directory holds by its fingerprints, and reuses a build script's
//! cached `output` (its `cargo:rustc-link-arg=` lines reach the linker)
//! without running the script again; `target/.rustc_info.json` decides
//! the sysroot cargo puts on the library path. A run's changes there are
//! undone after it (`skarn_sandbox::protect::cargo_target`); the agent's
//! file tools write outside any run, so they may not write there at all
//! (cargo's outputs are never an agent's hand edit).

use std::path::Path;

/// Whether `d` lies directly in a `target` (or a `target/<triple>`)
/// beside a `Cargo.toml`: a profile directory before cargo made its
/// `.fingerprint` (the layer's test).
fn shaped(d: &Path) -> bool {
    d.ancestors().skip(1).take(2).any(|t| {
        t.file_name().is_some_and(|n| n == "target")
            && t.parent()
                .is_some_and(|p| std::fs::symlink_metadata(p.join("Cargo.toml")).is_ok())
    })
}

/// Why the file tools may not write `c`: it lies in a cargo profile
/// directory, or is cargo's `.rustc_info.json`.
pub fn refusal(c: &Path) -> Option<String> {
    if c.file_name().is_some_and(|n| n == ".rustc_info.json") {
        return Some(format!(
            "{} is cargo's record of the compiler (it decides the library path of what host \
             cargo runs); only cargo writes it",
            c.display()
        ));
    }
    let dir = c
        .ancestors()
        .skip(1)
        .take_while(|a| a.parent().is_some())
        .find(|a| is_profile(a) || shaped(a))?;
    Some(format!(
        "{} lies in the cargo profile directory {}: host cargo reuses what it holds (a build \
         script's recorded output, compiled units) without building it again; only cargo \
         writes there (`skarn run` undoes a run's changes there too)",
        c.display(),
        dir.display()
    ))
}

/// cargo's own test of a profile directory (its bookkeeping; Unix builds
/// of the sandbox have it, elsewhere the shape alone decides).
#[cfg(unix)]
fn is_profile(a: &Path) -> bool {
    skarn_sandbox::protect::cargo_target::is_profile(a)
}

#[cfg(not(unix))]
fn is_profile(_: &Path) -> bool {
    false
}
