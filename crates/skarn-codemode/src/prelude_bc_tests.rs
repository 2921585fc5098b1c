use rquickjs::context::intrinsic;
use rquickjs::{Context, Runtime};

use super::{EMBEDDED, compile_source, prelude_bytecode};

/// Compile context as in build.rs and engine.rs.
fn compile_ctx(rt: &Runtime) -> Context {
    Context::custom::<(intrinsic::Eval, intrinsic::RegExpCompiler)>(rt).unwrap()
}

/// The build product is what the run-time compile produces, byte for byte
/// (same engine, source, intrinsics and write options). Empty only when the
/// build was told not to make it.
#[test]
fn embedded_bytecode_equals_runtime_compile() {
    if option_env!("SKARN_PRELUDE_BYTECODE") == Some("off") {
        assert!(EMBEDDED.is_empty());
        return;
    }
    assert!(!EMBEDDED.is_empty(), "build.rs did not embed the prelude");
    let rt = Runtime::new().unwrap();
    let ctx = compile_ctx(&rt);
    let compiled = ctx.with(|ctx| compile_source(&ctx).unwrap());
    assert_eq!(compiled.as_slice(), EMBEDDED);
}

/// The run-time choice is the embedded bytes when they exist and load.
#[test]
fn runtime_uses_embedded_bytecode() {
    let rt = Runtime::new().unwrap();
    let ctx = compile_ctx(&rt);
    let bc = ctx.with(|ctx| prelude_bytecode(&ctx).unwrap());
    if EMBEDDED.is_empty() {
        assert!(!bc.is_empty());
    } else {
        assert_eq!(bc.as_ptr(), EMBEDDED.as_ptr());
    }
}
