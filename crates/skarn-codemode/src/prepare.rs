//! Parse, validate and strip a script before anything runs.
//!
//! The script is parsed by oxc as a TypeScript module whose top level may
//! `return` (it becomes the body of an async function, so top-level `await`
//! works too). Syntax errors and validator violations are reported at the
//! user's own line and column. TypeScript is then stripped by
//! `oxc_transformer` (no down-levelling: QuickJS-NG runs modern
//! JavaScript), and `oxc_codegen` prints JavaScript with a source map used to
//! translate engine positions back to the user's text.
//!
//! TypeScript `enum` (and `const enum`) declarations are supported: oxc
//! compiles them to plain objects. `namespace` blocks with values are
//! supported the same way. Decorators are not (they are rejected as a syntax
//! error by the engine).

use std::path::Path;

use oxc_allocator::Allocator;
use oxc_ast::ast::Statement;
use oxc_codegen::{Codegen, CodegenOptions};
use oxc_parser::{ParseOptions, Parser};
use oxc_semantic::SemanticBuilder;
use oxc_span::SourceType;
use oxc_transformer::{TransformOptions, Transformer};

use crate::outcome::{ErrorKind, ExecError};
use crate::position::{LineIndex, SourceMap};
use crate::validate;

/// Scripts larger than this are refused before parsing.
pub const MAX_SCRIPT_BYTES: usize = 1 << 20;

/// Scripts with more nesting-capable tokens than this are refused before
/// parsing (see [`nesting_bound`]).
pub const MAX_NESTING_TOKENS: usize = 10_000;

/// Native stack the front end may need per nesting level (parser,
/// semantic analysis, validator, transformer and printer all recurse).
const STACK_PER_LEVEL: usize = if cfg!(debug_assertions) {
    24 << 10
} else {
    8 << 10
};
const STACK_BASE: usize = 16 << 20;

/// An upper bound on how deeply `code` can nest, from its raw text: every
/// character that can open a nesting level in JavaScript or TypeScript
/// (brackets, operators, `.`, `?`, `:`, `@`, backquote) and every keyword
/// that can (`if`, `else`, `typeof`, `new`, `await`...), counted everywhere,
/// strings and comments included. Over-counting is safe; the parser and
/// the passes after it recurse at most once per such token, so a thread
/// with `front_end_stack(bound)` bytes of stack cannot overflow.
pub(crate) fn nesting_bound(code: &str) -> usize {
    const KEYWORDS: &[&str] = &[
        "if",
        "else",
        "for",
        "while",
        "do",
        "with",
        "typeof",
        "void",
        "delete",
        "await",
        "new",
        "yield",
        "in",
        "of",
        "instanceof",
        "extends",
        "keyof",
        "infer",
        "is",
        "asserts",
        "satisfies",
        "as",
        "readonly",
        "unique",
        "abstract",
        "declare",
    ];
    let mut n = 0usize;
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphabetic() || b == b'_' || b == b'$' {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'$')
            {
                i += 1;
            }
            if KEYWORDS.contains(&&code[start..i]) {
                n += 1;
            }
            continue;
        }
        if matches!(
            b,
            b'(' | b'['
                | b'{'
                | b'!'
                | b'~'
                | b'+'
                | b'-'
                | b'*'
                | b'/'
                | b'%'
                | b'<'
                | b'>'
                | b'='
                | b'&'
                | b'|'
                | b'^'
                | b'?'
                | b':'
                | b'.'
                | b'@'
                | b'`'
        ) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The native stack to give the thread that runs [`prepare`] on `code`.
pub(crate) fn front_end_stack(bound: usize) -> usize {
    STACK_BASE.saturating_add(
        bound
            .min(MAX_NESTING_TOKENS)
            .saturating_mul(STACK_PER_LEVEL),
    )
}

/// A script ready to run: plain JavaScript (a module body that may `return`)
/// and the map from its positions back to the user's text.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub js: String,
    pub map: SourceMap,
}

/// Parse, validate and strip `code`. `Err` is `Syntax` or `Rejected`.
pub(crate) fn prepare(code: &str) -> Result<Prepared, ExecError> {
    if code.len() > MAX_SCRIPT_BYTES {
        return Err(ExecError::new(
            ErrorKind::Rejected,
            format!(
                "script is {} bytes; the limit is {} bytes",
                code.len(),
                MAX_SCRIPT_BYTES
            ),
        ));
    }
    let bound = nesting_bound(code);
    if bound > MAX_NESTING_TOKENS {
        return Err(ExecError::new(
            ErrorKind::Rejected,
            format!(
                "script is too complex: {bound} operators, brackets and nesting keywords; \
                 the limit is {MAX_NESTING_TOKENS} (pass large data through tool calls)"
            ),
        ));
    }
    let lines = LineIndex::new(code);
    let allocator = Allocator::default();
    let source_type = SourceType::ts().with_module(true);
    let parsed = Parser::new(&allocator, code, source_type)
        .with_options(ParseOptions {
            allow_return_outside_function: true,
            ..ParseOptions::default()
        })
        .parse();
    let mut program = parsed.program;

    let mut syntax: Vec<(u32, String)> = parsed
        .diagnostics
        .errors()
        .map(|d| (diag_offset(d), d.message.to_string()))
        .collect();
    if syntax.is_empty() && !parsed.panicked {
        let sem = SemanticBuilder::new()
            .with_check_syntax_error(true)
            .build(&program);
        syntax.extend(
            sem.diagnostics
                .errors()
                .map(|d| (diag_offset(d), d.message.to_string())),
        );
    }
    if !syntax.is_empty() || parsed.panicked {
        syntax.sort_by_key(|s| s.0);
        return Err(located(
            ErrorKind::Syntax,
            "syntax error",
            code,
            &lines,
            syntax,
        ));
    }

    let violations = validate::validate(&program);
    if !violations.is_empty() {
        let list = violations.into_iter().map(|v| (v.offset, v.what)).collect();
        return Err(located(
            ErrorKind::Rejected,
            "script rejected by the validator",
            code,
            &lines,
            list,
        ));
    }

    let scoping = SemanticBuilder::new()
        .with_enum_eval(true)
        .build(&program)
        .semantic
        .into_scoping();
    let path = Path::new("script.ts");
    let options = TransformOptions::default();
    let transformed =
        Transformer::new(&allocator, path, &options).build_with_scoping(scoping, &mut program);
    let errs: Vec<(u32, String)> = transformed
        .diagnostics
        .errors()
        .map(|d| (diag_offset(d), d.message.to_string()))
        .collect();
    if !errs.is_empty() {
        return Err(located(
            ErrorKind::Syntax,
            "unsupported TypeScript",
            code,
            &lines,
            errs,
        ));
    }

    // Erasing `import type` leaves an empty `export {}` that keeps the file a
    // module; the script is a function body, so drop it.
    program.body.retain(|stmt| {
        !matches!(stmt, Statement::ExportNamedDeclaration(e)
            if e.specifiers.is_empty())
    });

    let out = Codegen::new()
        .with_options(CodegenOptions {
            source_map_path: Some(path.to_path_buf()),
            ..CodegenOptions::default()
        })
        .build(&program);
    let map = out
        .map
        .as_ref()
        .map(SourceMap::from_oxc)
        .unwrap_or_default();
    recheck_output(&out.code)?;
    Ok(Prepared { js: out.code, map })
}

/// The engine runs the emitted JavaScript, not the script: parse it again
/// (as JavaScript) and validate it again, so what runs is exactly what the
/// validator approved. Emitted code that does not parse or that the
/// validator refuses means the TypeScript strip or the code generator
/// changed the program (a fuzzer found a script oxc accepted with an
/// identifier escape the generator dropped); it is refused, never run.
fn recheck_output(js: &str) -> Result<(), ExecError> {
    let mut why = Vec::new();
    // As JavaScript (what the engine parses), validated again; and in the
    // front end's own mode (TypeScript), which must accept its own output
    // too: either parser may be the lenient one for a given oddity.
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, js, SourceType::mjs())
        .with_options(ParseOptions {
            allow_return_outside_function: true,
            ..ParseOptions::default()
        })
        .parse();
    why.extend(parsed.diagnostics.errors().map(|d| d.message.to_string()));
    if why.is_empty() && !parsed.panicked {
        let sem = SemanticBuilder::new()
            .with_check_syntax_error(true)
            .build(&parsed.program);
        why.extend(sem.diagnostics.errors().map(|d| d.message.to_string()));
    }
    if why.is_empty() && !parsed.panicked {
        why.extend(
            validate::validate(&parsed.program)
                .into_iter()
                .map(|v| v.what),
        );
    }
    let ts_allocator = Allocator::default();
    let ts = Parser::new(&ts_allocator, js, SourceType::ts().with_module(true))
        .with_options(ParseOptions {
            allow_return_outside_function: true,
            ..ParseOptions::default()
        })
        .parse();
    why.extend(ts.diagnostics.errors().map(|d| d.message.to_string()));
    let parsed_panicked = parsed.panicked || ts.panicked;
    if why.is_empty() && !parsed_panicked {
        return Ok(());
    }
    if parsed_panicked && why.is_empty() {
        why.push("the parser gave up".into());
    }
    let mut err = ExecError::new(
        ErrorKind::Syntax,
        "the script could not be turned into JavaScript that means the same; \
         write it without TypeScript-only syntax or unusual escapes",
    );
    err.details = why
        .into_iter()
        .take(8)
        .map(|w| format!("in the emitted JavaScript: {w}"))
        .collect();
    Err(err)
}

/// Where a diagnostic points: its primary label, else its last one (for
/// "already declared" that is the redeclaration), else the start.
fn diag_offset(d: &oxc_diagnostics::OxcDiagnostic) -> u32 {
    d.labels
        .iter()
        .find(|l| l.primary())
        .or_else(|| d.labels.last())
        .map(|l| l.offset())
        .unwrap_or(0)
}

/// An error whose headline position is the first item, listing every item
/// as "line:col: what".
fn located(
    kind: ErrorKind,
    headline: &str,
    code: &str,
    lines: &LineIndex,
    items: Vec<(u32, String)>,
) -> ExecError {
    let mut err = ExecError::new(kind, headline);
    for (i, (offset, what)) in items.iter().enumerate() {
        let (l, c) = lines.line_col(code, *offset);
        if i == 0 {
            err.line = Some(l);
            err.column = Some(c);
            err.message = format!("{headline}: {what}");
        }
        err.details.push(format!("{l}:{c}: {what}"));
    }
    err
}
