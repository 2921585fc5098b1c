//! The prelude's bytecode: embedded at build time (build.rs, ADR 0344),
//! else compiled from source once per process.
//!
//! Parsing the ~24 KB prelude was most of a `skarn exec --code 'return 1'`
//! process's CPU time (issue 30). build.rs compiles the same source with
//! the same engine, intrinsics and write options and the bytes are embedded
//! here; at run time they are only loaded. Correctness never depends on the
//! build product: when it is absent (a cross build, the build-time switch
//! `SKARN_PRELUDE_BYTECODE=off`) or does not load, the prelude is compiled
//! from source exactly as before.

use std::sync::OnceLock;

use rquickjs::module::WriteOptions;
use rquickjs::{Ctx, Module};

use crate::outcome::ExecError;
use crate::report::{exception_text, internal};

pub(crate) const PRELUDE_NAME: &str = "skarn:prelude";

/// The prelude module: the array and native-loop guards, then the
/// definition of `skarn` (build.rs concatenates the same files in the same
/// order).
pub(crate) const PRELUDE_SRC: &str = concat!(
    include_str!("array_guard.js"),
    include_str!("native_guard.js"),
    include_str!("prelude.js")
);

/// The build product: empty when build.rs did not make it.
static EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/prelude.bc"));

/// The prelude's bytecode, for `Module::load` in the execution context.
/// `ctx` is the compile context (it has the eval intrinsic).
pub(crate) fn prelude_bytecode(ctx: &Ctx<'_>) -> Result<&'static [u8], ExecError> {
    static EMBEDDED_LOADS: OnceLock<bool> = OnceLock::new();
    static COMPILED: OnceLock<Vec<u8>> = OnceLock::new();
    if let Some(bc) = COMPILED.get() {
        return Ok(bc);
    }
    if !EMBEDDED.is_empty() && *EMBEDDED_LOADS.get_or_init(|| embedded_loads(ctx)) {
        return Ok(EMBEDDED);
    }
    let bc = compile_source(ctx)?;
    Ok(COMPILED.get_or_init(|| bc))
}

/// Whether the embedded bytes read back as a module in this engine (a
/// format or version mismatch fails here; the caller then compiles from
/// source).
fn embedded_loads(ctx: &Ctx<'_>) -> bool {
    // SAFETY: the bytes are EMBEDDED: part of this binary, never bytes from
    // outside it. build.rs wrote them with `Module::write` of the same
    // rquickjs/QuickJS-NG version (one package in Cargo.lock serves both
    // the build-dependency and this dependency, with the same features),
    // built for the same target triple (build.rs embeds nothing when
    // cross-compiling), from the same prelude source, with the same compile
    // intrinsics and write options as `compile_source` below; a unit test
    // checks the bytes equal `compile_source`'s. QuickJS's reader also
    // checks the bytecode version and bounds every read by the length. The
    // slice is 'static, so it outlives the module (JS_READ_OBJ_ROM_DATA).
    let m = unsafe { Module::load(ctx.clone(), EMBEDDED) };
    if m.is_err() {
        let _ = ctx.catch();
    }
    m.is_ok()
}

/// Compile the prelude source in `ctx` (the run-time path, as before).
pub(crate) fn compile_source(ctx: &Ctx<'_>) -> Result<Vec<u8>, ExecError> {
    let m = Module::declare(ctx.clone(), PRELUDE_NAME, PRELUDE_SRC)
        .map_err(|e| internal("prelude does not compile", exception_text(ctx, e)))?;
    m.write(WriteOptions::default())
        .map_err(|e| internal("prelude bytecode", e))
}

#[cfg(test)]
#[path = "prelude_bc_tests.rs"]
mod tests;
