//! TypeScript is accepted and stripped; positions stay the user's.

use crate::common::*;
use serde_json::json;
use skarn_codemode::{ErrorKind, check};

#[test]
fn type_syntax_is_stripped() {
    for (code, want) in [
        ("const x: number = 1; return x", json!(1)),
        (
            "interface P { a: number; b?: string }\nconst p: P = { a: 2 };\nreturn p.a",
            json!(2),
        ),
        (
            "type Pair<T> = [T, T];\nconst p: Pair<number> = [1, 2];\nreturn p",
            json!([1, 2]),
        ),
        (
            "function id<T>(x: T): T { return x }\nreturn id<string>('g')",
            json!("g"),
        ),
        ("const v = ('5' as unknown) as string; return v", json!("5")),
        (
            "const o = { a: 1 } satisfies Record<string, number>; return o",
            json!({ "a": 1 }),
        ),
        (
            "const m = new Map<string, number>([['k', 3]]); return m.get('k')!",
            json!(3),
        ),
        (
            "const f = async (x: number): Promise<number> => x * 2; return await f(4)",
            json!(8),
        ),
        ("let u: string | undefined; u ??= 'd'; return u", json!("d")),
        ("const t = <T,>(x: T) => x; return t(1)", json!(1)),
        (
            "class A { private n: number; constructor(n: number) { this.n = n } get v(): number { return this.n } }\nreturn new A(7).v",
            json!(7),
        ),
        (
            "class B { constructor(public readonly x: number, private y = 2) {} sum() { return this.x + this.y } }\nreturn new B(1).sum()",
            json!(3),
        ),
        (
            "abstract class S { abstract f(): number; g() { return this.f() + 1 } }\nclass T extends S { f() { return 1 } }\nreturn new T().g()",
            json!(2),
        ),
        (
            "declare const ext: number;\nreturn typeof ext",
            json!("undefined"),
        ),
        (
            "const tuple = [1, 'a'] as const; return tuple",
            json!([1, "a"]),
        ),
        (
            "function assert(x: unknown): asserts x is string {}\nassert('s'); return 1",
            json!(1),
        ),
        ("let n!: number; n = 3; return n", json!(3)),
        ("import type { X } from './x';\nreturn 1", json!(1)),
        ("type Fn = typeof Function; return 1", json!(1)),
    ] {
        match run(code).result {
            Ok(v) => assert_eq!(v, want, "{code}"),
            Err(e) => panic!("{code:?}: {e}"),
        }
    }
}

#[test]
fn enums_are_supported() {
    assert_eq!(
        value(
            "enum Color { Red, Green = 5, Blue }\nreturn [Color.Red, Color.Green, Color.Blue, Color[5]]"
        ),
        json!([0, 5, 6, "Green"])
    );
    assert_eq!(
        value("enum Dir { Up = 'UP', Down = 'DOWN' }\nreturn Object.values(Dir)"),
        json!(["UP", "DOWN"])
    );
    assert_eq!(
        value("const enum K { A = 1, B = A * 2 }\nreturn K.B"),
        json!(2)
    );
    assert_eq!(
        value("namespace NS { export const v = 4 }\nreturn NS.v"),
        json!(4)
    );
}

#[test]
fn positions_survive_stripping() {
    let code = "interface Big {\n  a: number;\n  b: string;\n}\ntype T = Big;\nconst x: T = { a: 1, b: 'x' } as T;\n\nconst y = (x as any).missing.deep;\n";
    let e = runtime_error(code);
    assert_eq!(e.line, Some(8), "{e}");
    assert_eq!(e.column, Some(12), "{e}");

    let code =
        "function f<T extends object>(o: T): number {\n  return (o as any).q.r;\n}\nreturn f({})";
    let e = runtime_error(code);
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.details.iter().any(|d| d.starts_with("at f (2:")), "{e:?}");

    // Validator positions refer to the TypeScript text itself.
    let e = check("type A = { x: number };\nconst a: A = { x: 1 };\nreturn (a as any).constructor")
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Rejected);
    assert_eq!((e.line, e.column), (Some(3), Some(19)), "{e}");

    // TS syntax errors too.
    let e = check("const a: = 1").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Syntax);
    assert_eq!(e.line, Some(1));
}

#[test]
fn typescript_only_runtime_features_that_are_unsupported_say_so() {
    // Decorators need a runtime helper: refused clearly before running.
    let out = run("function d(x: any) { return x }\n@d class A {}\nreturn 1");
    match out.result {
        Ok(v) => assert_eq!(v, json!(1)),
        Err(e) => assert!(
            matches!(e.kind, ErrorKind::Syntax | ErrorKind::Rejected),
            "{e}"
        ),
    }
}
