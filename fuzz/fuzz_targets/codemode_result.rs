//! Code Mode result conversion both ways, as a hostile downstream server
//! and an LLM-written script drive it: the input's first line is the
//! script (empty: return the tool's answer as it came), the rest the JSON
//! a tool call answers. JSON to JS (the tool's answer) and JS to JSON (the
//! script's result) never panic, stay within the depth and output limits,
//! and a JSON answer handed straight back is the same JSON (numbers
//! compared as JavaScript reads them).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_fuzz::codemode;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (script, answer) = text.split_once('\n').unwrap_or(("", &text));
    if codemode::nesting(answer) > 2 * skarn_codemode::MAX_RESULT_DEPTH {
        return;
    }
    let Ok(answer) = serde_json::from_str::<serde_json::Value>(answer) else {
        return;
    };
    let echo = script.trim().is_empty();
    let script = if echo { codemode::ECHO } else { script };
    let out = codemode::run(script, answer.clone());
    let Ok(v) = out.result else {
        return;
    };
    assert!(
        skarn_codemode::json_depth(&v) <= skarn_codemode::MAX_RESULT_DEPTH,
        "a result deeper than the limit"
    );
    let len = serde_json::to_vec(&v).map_or(0, |b| b.len());
    assert!(len <= codemode::LIMITS_OUTPUT + 64, "{len} bytes of result");
    if echo {
        assert_eq!(
            codemode::as_js_reads(&v),
            codemode::as_js_reads(&answer),
            "a tool's answer came back changed"
        );
    }
});
