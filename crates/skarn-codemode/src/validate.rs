//! Layer 1: the static validator (defense in depth, not the boundary).
//!
//! Walks the oxc AST of the user's script and lists every violation:
//! - a reference to, or binding of, a banned global name ([`BANNED_NAMES`]);
//! - `import` in any form (declaration, `import()`, `import.meta`,
//!   `import x = require(...)`), `export` in any form;
//! - the properties [`BANNED_PROPERTIES`] by dot (`a.constructor`, `a?.constructor`),
//!   bracket (`a["constructor"]`), template key (`` a[`constructor`] ``),
//!   constant concatenation (`a["con" + "structor"]`), as object-literal keys
//!   (`{__proto__: x}`, `{constructor}`), in destructuring patterns
//!   (`const {constructor: c} = f`, `({prototype: p} = f)`), and as class
//!   member names other than the class `constructor` itself.
//!
//! `"constructor" in x` and `Object.hasOwn(x, "constructor")` are allowed:
//! they read no value. Type-only TypeScript syntax is not inspected: it is
//! erased before anything runs. What the validator cannot see (keys computed
//! at run time) is the isolate's job: it has no string-to-code path at all.

use oxc_ast::ast::*;
use oxc_ast_visit::{Visit, walk};
use oxc_span::GetSpan;

/// Global names a script may not mention.
pub const BANNED_NAMES: &[&str] = &[
    "eval",
    "Function",
    "require",
    "process",
    "Deno",
    "Bun",
    "globalThis",
    "Reflect",
    "WebAssembly",
    "SharedArrayBuffer",
    "Atomics",
];

/// Property names a script may not use.
pub const BANNED_PROPERTIES: &[&str] = &["constructor", "__proto__", "prototype"];

/// One violation: byte offset in the user's text and what it is.
#[derive(Debug, Clone)]
pub(crate) struct Violation {
    pub offset: u32,
    pub what: String,
}

pub(crate) fn validate(program: &Program<'_>) -> Vec<Violation> {
    let mut v = Validator {
        out: Vec::new(),
        namespace_depth: 0,
    };
    v.visit_program(program);
    v.out.sort_by_key(|x| x.offset);
    v.out
}

struct Validator {
    out: Vec<Violation>,
    /// Inside a TypeScript `namespace` body, `export` is its own syntax.
    namespace_depth: u32,
}

fn banned_property(name: &str) -> bool {
    BANNED_PROPERTIES.contains(&name)
}

/// The string value of an expression when it is a compile-time constant
/// string: a string literal, a template literal whose parts are all
/// constant, or a `+` concatenation of those (parentheses and TypeScript
/// wrappers such as `as` are looked through).
fn const_string(expr: &Expression<'_>) -> Option<String> {
    const_string_depth(expr, 0)
}

fn const_string_depth(expr: &Expression<'_>, depth: u32) -> Option<String> {
    if depth > 64 {
        return None;
    }
    match expr.get_inner_expression() {
        Expression::StringLiteral(s) => Some(s.value.to_string()),
        Expression::TemplateLiteral(t) => {
            let mut out = String::new();
            for (i, q) in t.quasis.iter().enumerate() {
                out.push_str(q.value.cooked.as_ref()?.as_str());
                if let Some(e) = t.expressions.get(i) {
                    out.push_str(&const_string_depth(e, depth + 1)?);
                }
            }
            Some(out)
        }
        Expression::BinaryExpression(b) if b.operator == BinaryOperator::Addition => {
            let l = const_string_depth(&b.left, depth + 1)?;
            let r = const_string_depth(&b.right, depth + 1)?;
            Some(l + &r)
        }
        _ => None,
    }
}

/// The static name of a property key: identifier, string, template or constant.
fn key_name(key: &PropertyKey<'_>) -> Option<String> {
    match key {
        PropertyKey::StaticIdentifier(id) => Some(id.name.to_string()),
        PropertyKey::PrivateIdentifier(_) => None,
        _ => key.as_expression().and_then(const_string),
    }
}

impl Validator {
    fn push(&mut self, offset: u32, what: String) {
        self.out.push(Violation { offset, what });
    }

    fn check_name(&mut self, name: &str, offset: u32, how: &str) {
        if BANNED_NAMES.contains(&name) {
            self.push(offset, format!("{how} `{name}` is not allowed"));
        }
    }

    fn check_key(&mut self, key: &PropertyKey<'_>, how: &str) {
        if let Some(name) = key_name(key)
            && banned_property(&name)
        {
            self.push(
                key.span().start,
                format!("{how} `{name}` is not allowed (banned property)"),
            );
        }
    }
}

impl<'a> Visit<'a> for Validator {
    fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
        self.check_name(&it.name, it.span.start, "reference to");
    }

    fn visit_binding_identifier(&mut self, it: &BindingIdentifier<'a>) {
        self.check_name(&it.name, it.span.start, "declaring");
    }

    fn visit_static_member_expression(&mut self, it: &StaticMemberExpression<'a>) {
        if banned_property(&it.property.name) {
            self.push(
                it.property.span.start,
                format!("property `.{}` is not allowed", it.property.name),
            );
        }
        walk::walk_static_member_expression(self, it);
    }

    fn visit_computed_member_expression(&mut self, it: &ComputedMemberExpression<'a>) {
        if let Some(name) = const_string(&it.expression)
            && banned_property(&name)
        {
            self.push(
                it.expression.span().start,
                format!("property `[{name:?}]` is not allowed"),
            );
        }
        walk::walk_computed_member_expression(self, it);
    }

    fn visit_object_property(&mut self, it: &ObjectProperty<'a>) {
        self.check_key(&it.key, "object key");
        walk::walk_object_property(self, it);
    }

    fn visit_binding_property(&mut self, it: &BindingProperty<'a>) {
        self.check_key(&it.key, "destructuring");
        walk::walk_binding_property(self, it);
    }

    fn visit_assignment_target_property_identifier(
        &mut self,
        it: &AssignmentTargetPropertyIdentifier<'a>,
    ) {
        if banned_property(&it.binding.name) {
            self.push(
                it.binding.span.start,
                format!(
                    "destructuring `{}` is not allowed (banned property)",
                    it.binding.name
                ),
            );
        }
        walk::walk_assignment_target_property_identifier(self, it);
    }

    fn visit_assignment_target_property_property(
        &mut self,
        it: &AssignmentTargetPropertyProperty<'a>,
    ) {
        self.check_key(&it.name, "destructuring");
        walk::walk_assignment_target_property_property(self, it);
    }

    fn visit_method_definition(&mut self, it: &MethodDefinition<'a>) {
        if it.kind != MethodDefinitionKind::Constructor {
            self.check_key(&it.key, "class member");
        }
        walk::walk_method_definition(self, it);
    }

    fn visit_property_definition(&mut self, it: &PropertyDefinition<'a>) {
        self.check_key(&it.key, "class member");
        walk::walk_property_definition(self, it);
    }

    fn visit_accessor_property(&mut self, it: &AccessorProperty<'a>) {
        self.check_key(&it.key, "class member");
        walk::walk_accessor_property(self, it);
    }

    fn visit_import_expression(&mut self, it: &ImportExpression<'a>) {
        self.push(it.span.start, "dynamic `import()` is not allowed".into());
        walk::walk_import_expression(self, it);
    }

    fn visit_import_declaration(&mut self, it: &ImportDeclaration<'a>) {
        // `import type` is erased before running; any other import is refused.
        if !it.import_kind.is_type() {
            self.push(it.span.start, "`import` is not allowed".into());
        }
    }

    fn visit_ts_module_block(&mut self, it: &TSModuleBlock<'a>) {
        self.namespace_depth += 1;
        walk::walk_ts_module_block(self, it);
        self.namespace_depth -= 1;
    }

    fn visit_import_meta(&mut self, it: &ImportMeta) {
        self.push(it.span.start, "`import.meta` is not allowed".into());
    }

    fn visit_ts_import_equals_declaration(&mut self, it: &TSImportEqualsDeclaration<'a>) {
        self.push(it.span.start, "`import ... =` is not allowed".into());
    }

    fn visit_export_named_declaration(&mut self, it: &ExportNamedDeclaration<'a>) {
        if self.namespace_depth == 0 {
            self.push(
                it.span.start,
                "`export` is not allowed (use `return`)".into(),
            );
        }
        walk::walk_export_named_declaration(self, it);
    }

    fn visit_export_declaration(&mut self, it: &ExportDeclaration<'a>) {
        if self.namespace_depth == 0 {
            self.push(
                it.span.start,
                "`export` is not allowed (use `return`)".into(),
            );
        }
        walk::walk_export_declaration(self, it);
    }

    fn visit_export_from_declaration(&mut self, it: &ExportFromDeclaration<'a>) {
        self.push(
            it.span.start,
            "`export` is not allowed (use `return`)".into(),
        );
    }

    fn visit_export_default_declaration(&mut self, it: &ExportDefaultDeclaration<'a>) {
        if self.namespace_depth == 0 {
            self.push(
                it.span.start,
                "`export` is not allowed (use `return`)".into(),
            );
        }
        walk::walk_export_default_declaration(self, it);
    }

    fn visit_export_all_declaration(&mut self, it: &ExportAllDeclaration<'a>) {
        self.push(
            it.span.start,
            "`export` is not allowed (use `return`)".into(),
        );
    }

    fn visit_ts_export_assignment(&mut self, it: &TSExportAssignment<'a>) {
        self.push(
            it.span.start,
            "`export =` is not allowed (use `return`)".into(),
        );
        walk::walk_ts_export_assignment(self, it);
    }

    fn visit_with_statement(&mut self, it: &WithStatement<'a>) {
        self.push(it.span.start, "`with` is not allowed".into());
        walk::walk_with_statement(self, it);
    }

    // Type-only syntax is erased before the script runs: names in it are
    // harmless (`let f: Function` is fine).
    fn visit_ts_type(&mut self, _it: &TSType<'a>) {}
    fn visit_ts_type_annotation(&mut self, _it: &TSTypeAnnotation<'a>) {}
    fn visit_ts_type_parameter_instantiation(&mut self, _it: &TSTypeParameterInstantiation<'a>) {}
    fn visit_ts_type_parameter_declaration(&mut self, _it: &TSTypeParameterDeclaration<'a>) {}
    fn visit_ts_type_alias_declaration(&mut self, _it: &TSTypeAliasDeclaration<'a>) {}
    fn visit_ts_interface_declaration(&mut self, _it: &TSInterfaceDeclaration<'a>) {}
    fn visit_ts_class_implements(&mut self, _it: &TSClassImplements<'a>) {}
}
