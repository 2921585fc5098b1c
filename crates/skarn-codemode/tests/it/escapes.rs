//! The isolate boundary: no string ever becomes code, whatever path reaches
//! a function constructor; no host capability exists besides `skarn`.

use crate::common::*;
use skarn_codemode::ErrorKind;

/// Each script tries to compile "return 42" at run time through a key the
/// validator cannot see. Every one must throw, never return 42.
#[test]
fn string_to_code_is_impossible_at_run_time() {
    let k = r#"const k = ["con", "struc", "tor"].join("");"#;
    let scripts = [
        format!("{k} return (async () => {{}})[k]('return 42')"),
        format!("{k} return (() => {{}})[k]('return 42')()"),
        format!("{k} return Object.getPrototypeOf(async function () {{}})[k]('return 42')"),
        format!("{k} return Object.getPrototypeOf(function* () {{}})[k]('return 42')().next().value"),
        format!("{k} return Object.getPrototypeOf(async function* () {{}})[k]('return 42')"),
        format!("{k} return new ((() => {{}})[k])('return 42')()"),
        format!("{k} return [].map[k]('return 42')()"),
        format!("{k} return 'x'.toString[k]('return 42')()"),
        format!("{k} return skarn.log[k]('return 42')()"),
        format!("{k} return Object.getOwnPropertyDescriptor(Object.getPrototypeOf(() => {{}}), k).value('return 42')()"),
        // Keys built from char codes.
        "const k = String.fromCharCode(99,111,110,115,116,114,117,99,116,111,114); return (async () => {})[k]('return 42')".to_owned(),
        "const k = atobLike(); function atobLike() { return [99,111,110,115,116,114,117,99,116,111,114].map(c => String.fromCharCode(c)).join('') } return Math.max[k]('return 42')()".to_owned(),
        // Getter tricks: reach Function through a prototype getter.
        "const p = ['__pro', 'to__'].join(''); const g = Object.getOwnPropertyDescriptor(Object.getPrototypeOf({}), p).get; const FP = g.call(() => {}); const k = ['con','structor'].join(''); return FP[k]('return 42')()".to_owned(),
        "const k = ['con','structor'].join(''); const o = { get f() { return (() => {})[k] } }; return o.f('return 42')()".to_owned(),
        "const k = ['con','structor'].join(''); const F = Reflect_get(() => {}, k); function Reflect_get(o, key) { return o[key] } return F('return 42')()".to_owned(),
        // The global `eval` is present only as a function that refuses.
        "const e = ['ev','al'].join(''); const g = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Object.getPrototypeOf(skarn) ?? {}) ?? {}, e); return typeof g".to_owned(),
        // Indirect eval through a lookup on a function's realm is not possible.
        "const k = ['con','structor'].join(''); const F = (async () => {})[k]; return await F('return 42')()".to_owned(),
    ];
    for code in &scripts {
        let out = run(code);
        match &out.result {
            Ok(v) => {
                assert_ne!(v, &serde_json::json!(42), "{code}: compiled a string!");
                // Only the descriptor probe may succeed (it returns a type name).
                assert!(v.is_string(), "{code}: unexpected success {v}");
            }
            Err(e) => assert_eq!(e.kind, ErrorKind::Runtime, "{code}: {e}"),
        }
    }
}

#[test]
fn constructor_calls_report_that_eval_is_unsupported() {
    let e = runtime_error(
        "const k = ['con','structor'].join('');\nreturn (async () => {})[k]('return 42')",
    );
    assert!(e.message.contains("eval is not supported"), "{e}");
    assert_eq!(e.line, Some(2), "{e}");
}

#[test]
fn statically_visible_escapes_are_rejected_before_running() {
    for code in [
        r#"const k = "con" + "structor"; return (async () => {})[k]("return 42")"#,
        r#"return (async () => {})["con" + "structor"]("return 42")"#,
        r#"return (async () => {})[`con${"structor"}`]("return 42")"#,
        "return (function () {}).constructor('return 42')()",
        "return Function('return 42')()",
        "return eval('42')",
        "const e = eval; return e('42')",
        "return globalThis.process",
        "return Reflect.get({}, 'a')",
        "const { constructor: F } = () => {}; return F('return 42')()",
    ] {
        let out = run(code);
        let e = out.result.expect_err(code);
        // The first one folds to a constant key only when it is direct;
        // either way nothing ran.
        assert!(
            matches!(e.kind, ErrorKind::Rejected | ErrorKind::Runtime),
            "{code}: {e}"
        );
        assert_ne!(out.tool_calls, 1);
    }
}

#[test]
fn strict_mode_blocks_arguments_callee_and_sloppy_this() {
    let e = runtime_error("return (function () { return arguments.callee })()");
    assert!(e.message.contains("TypeError"), "{e}");
    assert_eq!(
        value("return (function () { return this })() === undefined"),
        true
    );
    assert_eq!(value("return this === undefined"), true);
}

#[test]
fn no_host_capability_exists_besides_skarn() {
    for name in [
        "setTimeout",
        "setInterval",
        "fetch",
        "XMLHttpRequest",
        "WebSocket",
        "std",
        "os",
        "print",
        "console",
        "scriptArgs",
        "performance",
        "Worker",
        "navigator",
        "location",
        "importScripts",
        "module",
        "exports",
        "__dirname",
    ] {
        assert_eq!(
            value(&format!("return typeof {name}")),
            serde_json::json!("undefined"),
            "{name} exists in the isolate"
        );
    }
}

#[test]
fn skarn_cannot_be_tampered_with() {
    for code in [
        "skarn.callTool = () => 1",
        "skarn.evil = 1",
        "delete skarn.log",
        "Object.defineProperty(skarn, 'x', { value: 1 })",
        "Object.setPrototypeOf(skarn, {})",
        "skarn = {}",
        "skarn.server('a').tool = 1",
    ] {
        let e = runtime_error(code);
        assert!(e.message.contains("TypeError"), "{code}: {e}");
    }
    // Replacing globals the prelude used does not change what skarn does.
    let v = value(
        "Proxy = function () { throw 1 }; Object.freeze = () => 1; \
         try { await skarn.server('s').t({}) } catch (e) { return e.message }",
    );
    assert_eq!(v, serde_json::json!("no server named \"s\""));
}

#[test]
fn each_run_gets_a_fresh_isolate() {
    let out =
        run("Object.getPrototypeOf([]).leak = 1; Object.getPrototypeOf({}).polluted = 2; return 1");
    assert!(out.result.is_ok());
    assert_eq!(
        value("return [typeof [].leak, typeof ({}).polluted]"),
        serde_json::json!(["undefined", "undefined"])
    );
}
