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
//!
//! A release build on x86-64 is also linked with the functions a `skarn
//! run` executes laid out together (`link/run-order.txt`, ADR 0352): the
//! kernel maps a binary's code 64 KiB around every page a process first
//! runs, so the ~1,600 functions of a run, scattered over 25 MB of code,
//! made 9 MB of its peak resident memory; packed they take ~2.5 MB. Only
//! with the linker rustc uses there by default (its own `lld`, found
//! beside it and tried first), and never with another linker configured.

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
    println!("cargo:rerun-if-changed={ORDER}");
    if native && var("PROFILE") == "release" && var("TARGET") == "x86_64-unknown-linux-gnu" {
        order_functions(&var);
    }
}

/// The list of a run's functions, in the order they are laid out.
const ORDER: &str = "link/run-order.txt";

/// Lay out [`ORDER`]'s functions first, when rustc links with its own
/// `lld` (the default on this target) and a trial link takes the flags.
fn order_functions(var: &dyn Fn(&str) -> String) {
    let configured = var("CARGO_ENCODED_RUSTFLAGS").contains("link")
        || !var("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_empty()
        || !var("RUSTC_LINKER").is_empty();
    if configured {
        return;
    }
    let file = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join(ORDER);
    let Some(gcc_ld) = rustc_gcc_ld(&var("RUSTC"), &var("TARGET")) else {
        return;
    };
    let flags = [
        "-fuse-ld=lld".to_string(),
        format!("-B{}", gcc_ld.display()),
        format!("-Wl,--symbol-ordering-file={}", file.display()),
        "-Wl,--no-warn-symbol-ordering".to_string(),
    ];
    if file.is_file() && links_with(&var("OUT_DIR"), &flags) {
        // (rustc passes `-fuse-ld=lld -B<gcc-ld>` itself.)
        for f in &flags[2..] {
            println!("cargo:rustc-link-arg-bin=skarn={f}");
        }
    }
}

/// The directory of rustc's own `lld` wrapper for `cc`.
fn rustc_gcc_ld(rustc: &str, target: &str) -> Option<std::path::PathBuf> {
    let out = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let root = String::from_utf8(out.stdout).ok()?;
    let d = std::path::Path::new(root.trim()).join(format!("lib/rustlib/{target}/bin/gcc-ld"));
    d.join("ld.lld").is_file().then_some(d)
}

/// Whether the C compiler rustc links with (`cc`) links a trivial program
/// with the flag.
fn linker_accepts(out_dir: &str) -> bool {
    links_with(out_dir, &[FLAG.to_string()])
}

/// Whether `cc` links a trivial program with `flags`.
fn links_with(out_dir: &str, flags: &[String]) -> bool {
    let out = std::path::Path::new(out_dir).join("link-probe");
    let child = Command::new("cc")
        .args(["-x", "c", "-", "-o"])
        .arg(&out)
        .args(flags)
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
