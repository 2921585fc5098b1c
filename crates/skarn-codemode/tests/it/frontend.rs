//! Hostile input to the front end: deep nesting of every kind never
//! overflows a stack (the process would abort); it ends in a clear error.

use crate::common::*;
use skarn_codemode::{ErrorKind, MAX_NESTING_TOKENS, check};

/// (pattern builder, nesting tokens per level)
fn deep(kind: &str, levels: usize) -> String {
    match kind {
        "paren" => format!("return {}1{}", "(".repeat(levels), ")".repeat(levels)),
        "array" => format!("return {}{}", "[".repeat(levels), "]".repeat(levels)),
        "object" => format!("return {}1{}", "{a:".repeat(levels), "}".repeat(levels)),
        "block" => format!("{}{}", "{".repeat(levels), "}".repeat(levels)),
        "not" => format!("return {}1", "!".repeat(levels)),
        "typeof" => format!("return {}1", "typeof ".repeat(levels)),
        "plus" => format!("return {}1", "1+".repeat(levels)),
        "member" => format!("const a = {{}}; return a{}", ".b".repeat(levels)),
        "call" => format!("const f = () => f; return f{}", "()".repeat(levels)),
        "arrow" => format!("return {}1", "x=>".repeat(levels)),
        "ternary" => format!("const a = 1, b = 2; return {}1", "a?b:".repeat(levels)),
        "if" => format!("const a = 0; {};", "if(a)".repeat(levels)),
        "template" => format!("return {}1{}", "`${".repeat(levels), "}`".repeat(levels)),
        "await" => format!("return {}1", "await ".repeat(levels)),
        "new" => format!("return {}Object", "new ".repeat(levels)),
        "label" => format!(
            "{}1",
            "l: "
                .repeat(levels)
                .chars()
                .enumerate()
                .map(|(i, c)| if c == 'l' {
                    char::from(b'a' + (i % 26) as u8)
                } else {
                    c
                })
                .collect::<String>()
        ),
        "type" => format!(
            "let x: {}number{} = 1; return x",
            "Array<".repeat(levels),
            ">".repeat(levels)
        ),
        "assign" => format!("let a; return {}1", "a=".repeat(levels)),
        "function" => format!(
            "return {}1{}",
            "function(){return ".repeat(levels),
            "}".repeat(levels)
        ),
        "class" => format!(
            "return {}1{}",
            "class{m(){return ".repeat(levels),
            "}}".repeat(levels)
        ),
        "spread" => format!("return {}[]{}", "[...".repeat(levels), "]".repeat(levels)),
        "optional" => format!("const a = {{}}; return a{}", "?.b".repeat(levels)),
        "arrow_block" => format!(
            "return {}1{}",
            "()=>{return ".repeat(levels),
            "}".repeat(levels)
        ),
        "ts_as" => format!("return 1{}", " as any".repeat(levels)),
        "union" => format!(
            "let x: {}string{} = 1; return x",
            "(number|".repeat(levels),
            ")".repeat(levels)
        ),
        _ => unreachable!(),
    }
}

const KINDS: &[&str] = &[
    "paren",
    "array",
    "object",
    "block",
    "not",
    "typeof",
    "plus",
    "member",
    "call",
    "arrow",
    "ternary",
    "if",
    "template",
    "await",
    "new",
    "label",
    "type",
    "assign",
    "function",
    "class",
    "spread",
    "optional",
    "arrow_block",
    "ts_as",
    "union",
];

#[test]
fn deep_nesting_just_under_the_bound_never_crashes() {
    for kind in KINDS {
        // Find the largest level count whose script stays within the bound.
        let mut levels = MAX_NESTING_TOKENS;
        while skarn_codemode::check(&deep(kind, levels))
            .err()
            .is_some_and(|e| e.message.contains("too complex"))
        {
            levels = levels * 9 / 10;
        }
        let code = deep(kind, levels);
        // Generous deadline: some pathological shapes take the (debug)
        // front end seconds; this test is about never crashing.
        let out = run_with(
            &code,
            std::sync::Arc::new(skarn_codemode::bridge::NoServers),
            &limits_ms(600_000),
        );
        if let Err(e) = &out.result {
            assert!(
                matches!(
                    e.kind,
                    ErrorKind::Syntax | ErrorKind::Rejected | ErrorKind::Runtime | ErrorKind::Stack
                ),
                "{kind} x{levels}: {e}"
            );
        }
    }
}

#[test]
fn nesting_past_the_bound_is_rejected_up_front() {
    for kind in KINDS {
        let code = deep(kind, MAX_NESTING_TOKENS + 10);
        let e = check(&code).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Rejected, "{kind}: {e}");
        assert!(e.message.contains("too complex"), "{kind}: {e}");
    }
    // The same at the size limit, with every byte a nesting token.
    let e = check(&format!(
        "return {}1",
        "!".repeat(skarn_codemode::MAX_SCRIPT_BYTES - 10)
    ))
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Rejected);
}

#[test]
fn check_and_worker_entry_are_safe_on_small_caller_stacks() {
    // A 256 KiB caller thread: the front end runs on its own thread.
    let h = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(|| {
            let code = deep("paren", 20_000);
            let _ = check(&code);
            let out = skarn_codemode::execute_on_current_thread(
                "return [1, 2].length",
                &skarn_codemode::bridge::NoServers,
                &skarn_codemode::Limits::default(),
            );
            out.result.unwrap()
        })
        .unwrap();
    assert_eq!(h.join().unwrap(), serde_json::json!(2));
}

/// Found by the `codemode_front_end` fuzz target: oxc accepted this
/// script (TypeScript mode; `\?` inside identifiers) and the code
/// generator emitted JavaScript that means something else
/// (`+eetet <  < e + t ...`). What the engine runs must be what the
/// validator approved, so the emitted code is parsed and validated again
/// and this is refused as a syntax error before anything runs.
#[test]
fn emitted_javascript_that_differs_is_refused() {
    let code = r"+eete\?t<\><e+t\?<t<<t<<r";
    let err = skarn_codemode::front_end_for_testing(code).expect_err("must be refused");
    assert_eq!(err.kind, ErrorKind::Syntax, "{err:?}");
    assert!(
        err.details.iter().any(|d| d.contains("emitted JavaScript"))
            || err.message.contains("syntax error"),
        "{err:?}"
    );
    // Whatever the front end accepts, it accepts again from its own output.
    for ok in [
        "return 1",
        "const x: number = 2; return x * 3",
        "let a = 1; return a < 2",
    ] {
        let js = skarn_codemode::front_end_for_testing(ok).expect("accepted");
        skarn_codemode::front_end_for_testing(&js).expect("its own output is accepted");
    }
}
