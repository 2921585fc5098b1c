//! Build product: the prelude's QuickJS bytecode (ADR 0344).
//!
//! Compiles src/array_guard.js + src/native_guard.js + src/prelude.js, in
//! that order, as the module `skarn:prelude` with the engine the crate links
//! (the build-dependency on rquickjs names the same version and features as
//! the normal one, and Cargo.lock pins both to one package), in a context
//! with the same intrinsics and with the same `Module::write` options as the
//! run-time compile in src/prelude_bc.rs. The bytes go to
//! `$OUT_DIR/prelude.bc`, which the crate embeds.
//!
//! An empty file is written instead (the crate then compiles the prelude
//! from source at run time, as before) when:
//! - cross-compiling (TARGET differs from HOST): the engine here is the
//!   host's build, whose bytecode need not match the target's;
//! - `SKARN_PRELUDE_BYTECODE=off` is set at build time (tests of the
//!   source path);
//! - the compile fails here for any reason (a warning says why).

use std::error::Error;
use std::path::PathBuf;

use rquickjs::context::intrinsic;
use rquickjs::module::WriteOptions;
use rquickjs::{Context, Module, Runtime};

/// The prelude's parts, in module order (same as `PRELUDE_SRC`).
const PARTS: [&str; 3] = [
    "src/array_guard.js",
    "src/native_guard.js",
    "src/prelude.js",
];
/// Same as `PRELUDE_NAME` in src/prelude_bc.rs.
const NAME: &str = "skarn:prelude";
const SWITCH: &str = "SKARN_PRELUDE_BYTECODE";

fn main() -> Result<(), Box<dyn Error>> {
    for p in PARTS {
        println!("cargo:rerun-if-changed={p}");
    }
    println!("cargo:rerun-if-env-changed={SWITCH}");
    let out =
        PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?).join("prelude.bc");
    let same_target = std::env::var("TARGET").ok() == std::env::var("HOST").ok();
    let off = std::env::var(SWITCH).is_ok_and(|v| v == "off");
    let bytes = if same_target && !off {
        compile().unwrap_or_else(|why| {
            println!("cargo:warning=prelude bytecode not embedded (compiled at run time): {why}");
            Vec::new()
        })
    } else {
        Vec::new()
    };
    std::fs::write(&out, bytes)?;
    Ok(())
}

fn compile() -> Result<Vec<u8>, Box<dyn Error>> {
    let mut src = String::new();
    for p in PARTS {
        src.push_str(&std::fs::read_to_string(p)?);
    }
    let rt = Runtime::new()?;
    let ctx = Context::custom::<(intrinsic::Eval, intrinsic::RegExpCompiler)>(&rt)?;
    ctx.with(|ctx| -> Result<Vec<u8>, Box<dyn Error>> {
        let m = Module::declare(ctx.clone(), NAME, src).map_err(|e| {
            let exc = ctx.catch();
            format!("{e}: {exc:?}")
        })?;
        Ok(m.write(WriteOptions::default())?)
    })
}
