//! Error reports are bounded: whatever a script throws (huge names and
//! messages, forged stacks, getters, proxies, a tampered `String`), the
//! report carries at most the error cap of text, read without running the
//! script's code, and every cut is marked.

use std::sync::Arc;

use crate::common::*;
use skarn_codemode::bridge::BridgeError;
use skarn_codemode::{ErrorKind, ExecError, Limits, MAX_ERROR_BYTES, MAX_ERROR_FRAMES};
use skarn_test_support::FakeBridge;

fn thrown(code: &str, limits: &Limits) -> ExecError {
    let out = run_with(code, Arc::new(skarn_codemode::bridge::NoServers), limits);
    error(&out, ErrorKind::Runtime, code)
}

fn within_cap(e: &ExecError, limits: &Limits) {
    let cap = limits.error_bytes();
    assert!(
        e.text_bytes() <= cap,
        "{} bytes of error text, cap {cap}",
        e.text_bytes()
    );
    // What the gateway and `skarn exec --json` serialize stays near it.
    let json = serde_json::to_string(e).unwrap();
    assert!(json.len() <= cap + 256, "{} bytes of JSON", json.len());
}

#[test]
fn huge_messages_and_names_are_cut_inside_the_cap_and_marked() {
    let l = limits_ms(20_000);
    assert_eq!(l.error_bytes(), MAX_ERROR_BYTES);
    let e = thrown(r#"throw new Error("x".repeat(3e7))"#, &l);
    within_cap(&e, &l);
    assert!(e.message.starts_with("Error: xxxx"), "{}", &e.message[..40]);
    assert!(
        e.message.ends_with(" bytes]") && e.message.contains("… [truncated at least "),
        "{}",
        &e.message[e.message.len() - 60..]
    );
    assert_eq!(e.line, Some(1));

    let e = thrown(
        r#"const e = new Error("m"); e.name = "N".repeat(3e7); throw e"#,
        &l,
    );
    within_cap(&e, &l);
    assert!(e.message.starts_with("NNNN"), "{}", &e.message[..40]);
    assert!(e.message.contains("… [truncated at least "));

    // Wide characters and surrogate pairs cut on a character boundary.
    let e = thrown(r#"throw new Error("é🎉".repeat(1e6))"#, &l);
    within_cap(&e, &l);
    assert!(!e.message.contains('\u{FFFD}'), "a pair was split");

    // A small output cap gives a small error cap (never below 1 KiB).
    let small = Limits {
        max_output_bytes: 100,
        ..limits_ms(20_000)
    };
    assert_eq!(small.error_bytes(), 1024);
    let e = thrown(r#"throw new TypeError("q\n".repeat(1e5))"#, &small);
    within_cap(&e, &small);
    assert!(e.message.starts_with("TypeError: q\nq"), "{}", e.message);
}

#[test]
fn forged_stacks_give_a_bounded_number_of_frames() {
    let l = limits_ms(20_000);
    for n in ["2e5", "2e6"] {
        let code = format!(
            "const e = new Error('m');\n\
             Object.defineProperty(e, 'stack', {{ value: 'at x (script:2:1)\\n'.repeat({n}) }});\n\
             throw e"
        );
        let e = thrown(&code, &l);
        within_cap(&e, &l);
        assert_eq!(e.message, "Error: m");
        assert_eq!(
            e.details.len(),
            MAX_ERROR_FRAMES + 1,
            "{:?}",
            &e.details[..3]
        );
        let last = e.details.last().unwrap();
        assert!(
            last.starts_with("… [truncated ") && last.contains("bytes of stack not read"),
            "{last}"
        );
    }
    // Long function names in forged frames are cut too.
    let code = "const e = new Error('m');\n\
                e.stack = ('at ' + 'f'.repeat(50000) + ' (script:2:1)\\n').repeat(40);\n\
                throw e";
    let e = thrown(code, &l);
    within_cap(&e, &l);
    assert!(e.details.last().unwrap().starts_with("… [truncated "));
}

#[test]
fn reporting_runs_none_of_the_scripts_code() {
    // Each would loop until the deadline (or throw) if the report read it
    // through a getter, a proxy trap or `toString`: the run ends as the
    // script's own runtime error instead.
    let l = limits_ms(3_000);
    for (code, want) in [
        (
            "const e = new Error('m'); Object.defineProperty(e, 'message', { get() { for (;;) {} } }); throw e",
            "Error",
        ),
        (
            "const e = new RangeError('m'); Object.defineProperty(e, 'name', { get() { throw 1 } }); throw e",
            "Error: m",
        ),
        (
            "const e = new Error('m'); Object.defineProperty(e, 'stack', { get() { for (;;) {} } }); throw e",
            "Error: m",
        ),
        (
            "const e = new Error('m'); Object.setPrototypeOf(e, new Proxy({}, { get() { for (;;) {} }, getOwnPropertyDescriptor() { for (;;) {} }, getPrototypeOf() { for (;;) {} } })); throw e",
            "Error: m",
        ),
        (
            "const e = new Error('m'); e.toString = () => { for (;;) {} }; Object.getPrototypeOf(e).toString = e.toString; throw e",
            "Error: m",
        ),
        (
            "Object.defineProperty(Object.getPrototypeOf(new Error()), 'name', { get() { for (;;) {} } }); throw new Error('m')",
            "Error: m",
        ),
    ] {
        let e = thrown(code, &l);
        assert_eq!(e.message, want, "{code}");
    }
}

#[test]
fn a_tampered_string_prototype_does_not_change_the_cut() {
    let l = limits_ms(20_000);
    let e = thrown(
        "const S = Object.getPrototypeOf('');\n\
         S.slice = function () { return 'forged'.repeat(1e6) };\n\
         S.substring = S.slice;\n\
         throw new Error('x'.repeat(1e6))",
        &l,
    );
    within_cap(&e, &l);
    assert!(e.message.starts_with("Error: xxx"), "{}", &e.message[..40]);
    assert!(!e.message.contains("forged"));
}

#[test]
fn an_uncaught_downstream_error_is_cut_like_any_other() {
    let bridge = Arc::new(FakeBridge::echo().on_call(|server, tool, _| {
        Err(BridgeError::ToolFailed {
            server: server.into(),
            tool: tool.into(),
            message: "secret ".repeat(750_000),
        })
    }));
    let l = limits_ms(20_000);
    let out = run_with("await skarn.callTool('s', 't', {})", bridge, &l);
    let e = error(&out, ErrorKind::Runtime, "downstream");
    within_cap(&e, &l);
    assert!(e.message.contains("secret secret"), "{}", &e.message[..80]);
    assert!(e.message.contains("… [truncated at least "));
    // The script itself still sees the whole text.
    let bridge = Arc::new(FakeBridge::echo().on_call(|server, tool, _| {
        Err(BridgeError::ToolFailed {
            server: server.into(),
            tool: tool.into(),
            message: "z".repeat(5_000_000),
        })
    }));
    let out = run_with(
        "try { await skarn.callTool('s', 't', {}) } catch (e) { return e.message.length > 5e6 - 1 }",
        bridge,
        &l,
    );
    assert_eq!(out.result.unwrap(), serde_json::json!(true));
}

#[test]
fn non_error_values_and_returned_errors_stay_bounded() {
    let l = limits_ms(20_000);
    let e = thrown("throw 'x'.repeat(3e7)", &l);
    within_cap(&e, &l);
    assert_eq!(e.message, "uncaught exception: string");
    let e = thrown("throw { message: 'x'.repeat(3e7) }", &l);
    within_cap(&e, &l);
    // A returned Error is measured before its text is copied out.
    let out = run_with(
        "return new Error('x'.repeat(3e7))",
        Arc::new(skarn_codemode::bridge::NoServers),
        &l,
    );
    let e = error(&out, ErrorKind::Output, "returned error");
    within_cap(&e, &l);
}

#[test]
fn bound_cuts_any_error_and_keeps_small_ones() {
    let mut e = ExecError::new(ErrorKind::Internal, "y".repeat(100_000));
    e.details = vec!["d".repeat(10); 10_000];
    e.bound(4096);
    assert!(e.text_bytes() <= 4096, "{}", e.text_bytes());
    assert!(e.message.ends_with(&format!(
        "… [truncated {} bytes]",
        100_000 - e.message.find('…').unwrap()
    )));
    let mut small = ExecError::new(ErrorKind::Runtime, "Error: m");
    small.details = vec!["at <script> (1:1)".into()];
    let before = small.clone();
    small.bound(1024);
    assert_eq!(small, before);
}
