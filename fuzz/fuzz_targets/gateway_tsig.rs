//! Downstream JSON Schemas to TypeScript signatures (`read_tool_docs`):
//! whatever the schema, the answer is a signature within the budget or the
//! `TooLarge` error, never a panic, an abort or a long walk (libFuzzer's
//! timeout and RSS limit catch those).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_gateway::tsig::{MAX_SIGNATURE_BYTES, signature, ts_type};

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    if let Ok(t) = ts_type(&schema) {
        assert!(t.len() <= MAX_SIGNATURE_BYTES);
    }
    if let Some(o) = schema.as_object() {
        let _ = signature("s", "t", o, Some(o));
    }
});
