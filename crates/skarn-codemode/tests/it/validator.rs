//! The static validator: every banned name and property, every access form,
//! every violation listed with the user's line:col, and look-alikes pass.

use skarn_codemode::validate::{BANNED_NAMES, BANNED_PROPERTIES};
use skarn_codemode::{ErrorKind, ExecError, check};

fn rejected(code: &str) -> ExecError {
    match check(code) {
        Err(e) if e.kind == ErrorKind::Rejected => e,
        other => panic!("expected a rejection for {code:?}, got {other:?}"),
    }
}

fn accepted(code: &str) {
    if let Err(e) = check(code) {
        panic!("expected {code:?} to pass, got {e}");
    }
}

#[test]
fn every_banned_name_is_rejected_in_every_position() {
    for name in BANNED_NAMES {
        for code in [
            format!("return {name}"),
            format!("const e = {name}; return 1"),
            format!("{name}(1)"),
            format!("return typeof {name}"),
            format!("return [{name}]"),
            format!("const o = {{ {name} }}; return o"),
            format!("return (() => {name})()"),
            format!("return x?.[0] ?? {name}.y"),
            format!("new {name}()"),
        ] {
            let e = rejected(&code);
            assert!(
                e.details.iter().any(|d| d.contains(&format!("`{name}`"))),
                "{code}: {e}"
            );
        }
        // Declaring the name is refused too (`eval` as a binding is already
        // a strict-mode syntax error, the others are validator rejections).
        for code in [
            format!("let {name} = 1"),
            format!("function f({name}) {{}}"),
        ] {
            let e = check(&code).unwrap_err();
            assert!(
                matches!(e.kind, ErrorKind::Rejected | ErrorKind::Syntax),
                "{code}: {e}"
            );
            assert!(e.details.iter().any(|d| d.contains(name)), "{code}: {e}");
        }
    }
}

#[test]
fn every_banned_property_is_rejected_by_every_access_form() {
    for p in BANNED_PROPERTIES {
        let forms = [
            format!("return x.{p}"),
            format!("return x?.{p}"),
            format!("return x[\"{p}\"]"),
            format!("return x['{p}']"),
            format!("return x[`{p}`]"),
            format!("return x?.[\"{p}\"]"),
            format!("return x[\"{}\" + \"{}\"]", &p[..3], &p[3..]),
            format!("return x[`{}${{\"{}\"}}`]", &p[..3], &p[3..]),
            format!("return x[(\"{p}\")]"),
            format!("return x[\"{p}\" as any]"),
            format!("x.{p} = 1"),
            format!("const {{ {p}: c }} = x"),
            format!("const {{ {p} }} = x"),
            format!("const {{ [\"{p}\"]: c }} = x"),
            format!("let c; ({{ {p}: c }} = x)"),
            format!("let {p}2; ({{ {p} }} = x)"),
            format!("return {{ {p}: 1 }}"),
            format!("return {{ \"{p}\": 1 }}"),
            format!("return {{ [\"{p}\"]: 1 }}"),
            format!("return {{ {p}() {{}} }}"),
            format!("return {{ get {p}() {{ return 1 }} }}"),
            format!("class A {{ static {p}2 = 1; {p}_() {{}} get [\"{p}\"]() {{ return 1 }} }}"),
        ];
        for code in forms {
            let e = rejected(&code);
            assert!(e.details.iter().any(|d| d.contains(p)), "{code}: {e}");
        }
    }
}

#[test]
fn escaped_and_wrapped_spellings_are_rejected() {
    for code in [
        r"return x.\u0063onstructor",
        r#"return x["\u0063onstructor"]"#,
        r"return x[`\x63onstructor`]",
        r"return \u0065val",
        r"return \u{67}lobalThis",
        "return x!.constructor",
        "return (x as any).__proto__",
        "return (<any>x).prototype",
        "return x['__pro' + `to${'__'}`]",
        "class A extends Object { m() { return super.constructor } }",
        "const { a: { constructor: c } } = x",
        "const [{ prototype }] = x",
        "function f({ __proto__: p }: any) {} ",
        "for (const { constructor } of xs) {}",
        "return [...x].constructor",
        "return x?.constructor?.('return 1')",
        "delete x.__proto__",
        "namespace N { export const e = eval }",
        "enum E { A = eval('1') }",
    ] {
        rejected(code);
    }
}

#[test]
fn import_export_and_with_are_rejected() {
    for code in [
        "import fs from 'fs'",
        "import * as x from 'y'",
        "import 'side-effect'",
        "const m = await import('fs')",
        "return import.meta.url",
        "import x = require('fs')",
        "export const a = 1",
        "export default 1",
        "export * from 'x'",
    ] {
        rejected(code);
    }
}

#[test]
fn every_violation_is_listed_with_its_user_position() {
    let code = "const a = 1;\nconst e = eval;\n  x.constructor;\nreturn globalThis[`__proto__`];\n";
    let e = rejected(code);
    assert_eq!((e.line, e.column), (Some(2), Some(11)), "{e}");
    assert_eq!(e.details.len(), 4, "{e}");
    assert!(e.details[0].starts_with("2:11:"), "{e}");
    assert!(e.details[1].starts_with("3:5:"), "{e}");
    assert!(e.details[2].starts_with("4:8:"), "{e}");
    assert!(e.details[3].starts_with("4:19:"), "{e}");
}

#[test]
fn positions_count_utf16_columns_after_non_ascii_text() {
    let e = rejected("const s = \"héllo😀\"; eval(s)");
    // `const s = "héllo😀"; ` is 21 UTF-16 units; eval starts at column 22.
    assert_eq!((e.line, e.column), (Some(1), Some(22)), "{e}");
}

#[test]
fn look_alikes_pass() {
    for code in [
        "const constructorName = 1; return constructorName",
        "return 'eval'",
        "return \"Function\" + 'globalThis'",
        "const o = { evaluate: 1, evalX: 2 }; return o.evaluate",
        "const x = { prototypeName: 1, constructorOf: 2 }; return x.prototypeName",
        "const evaluation = 3; return evaluation",
        "const processed = [1]; return processed",
        "return ({ a: 1 })['constructor_']",
        "return 'constructor' in {}",
        "return Object.hasOwn({}, 'prototype')",
        "class A { constructor() { this.x = 1 } } return new A().x",
        "const s = `${'con'}`; return s",
        "let f: Function | undefined; return 1",
        "type T = typeof globalThis; return 1",
        "interface I { constructor: string; eval(): void } return 1",
        "return (x: Reflect) => x",
        "return x[k]",
        "const require_ = 1; return require_",
        "return [1,2].map(n => n * 2)",
    ] {
        accepted(code);
    }
}

#[test]
fn syntax_errors_point_at_the_users_line() {
    let e = check("const a = 1;\nconst b = ;\n").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Syntax, "{e}");
    assert_eq!(e.line, Some(2), "{e}");
    let e = check("let x = 1;\nlet x = 2;").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Syntax, "{e}");
    assert_eq!(e.line, Some(2), "{e}");
    // Strict mode: `with` and octal literals are syntax errors.
    assert!(check("with (a) {}").is_err());
    // await outside async nested function is a syntax error.
    let e = check("function f() { await 1 }").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Syntax, "{e}");
}

#[test]
fn oversized_scripts_are_refused() {
    let big = "// x\n".repeat(skarn_codemode::MAX_SCRIPT_BYTES / 5 + 10);
    let e = check(&big).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Rejected);
}
