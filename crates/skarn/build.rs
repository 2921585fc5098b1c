//! Link the `skarn` binary with packed relative relocations (`DT_RELR`)
//! where the toolchain offers them (issue 30: start-up). The binary is a
//! position-independent executable, so its address space stays randomised;
//! its ~41,000 relative relocations then take a few kilobytes instead of
//! about a megabyte of `.rela.dyn` the loader has to page in and walk at
//! every start. The linker adds a version need on the C library's
//! `GLIBC_ABI_DT_RELR` only when that C library has it, so a binary built
//! against an older one simply keeps the plain format.
//!
//! Only for a native build (host = target) on Linux with glibc, and only
//! when a trial link with the flag succeeds.

use std::io::Write;
use std::process::{Command, Stdio};

const FLAG: &str = "-Wl,-z,pack-relative-relocs";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let native = var("HOST") == var("TARGET");
    if native
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && linker_accepts(&var("OUT_DIR"))
    {
        println!("cargo:rustc-link-arg-bins={FLAG}");
    }
}

/// Whether the C compiler rustc links with (`cc`) links a trivial program
/// with the flag.
fn linker_accepts(out_dir: &str) -> bool {
    let out = std::path::Path::new(out_dir).join("relr-probe");
    let child = Command::new("cc")
        .args(["-x", "c", "-", "-o"])
        .arg(&out)
        .arg(FLAG)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(b"int main(void) { return 0; }\n");
    }
    let ok = child.wait().is_ok_and(|s| s.success());
    let _ = std::fs::remove_file(&out);
    ok
}
