//! How a configuration names the local files it loads, read per kind
//! ([`crate::protect::config_refs`]): a JavaScript module's static
//! relative `require` / `import` specifiers, the relative paths of a data
//! configuration (JSON, YAML: ESLint's, Prettier's, RuboCop's
//! `inherit_from`), the module names of pylint's `load-plugins`, mypy's
//! `plugins` and pytest's `-p`, the paths of `deno.json`'s lint plugins
//! and of `package.json`'s tool keys.

/// What one configuration file names.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Refs {
    /// Relative paths resolved as node resolves a relative specifier.
    pub js: Vec<String>,
    /// Package names and subpath imports (`@acme/x`, `x/y`, `#rules`),
    /// resolved as node resolves them
    /// ([`crate::protect::config_refs_node`]).
    pub bare: Vec<String>,
    /// Words of a data configuration that may name a package (ESLint's
    /// `extends` / `plugins`, Babel's presets, Prettier's shared
    /// configuration): followed only where they lead to a workspace
    /// package, silently otherwise.
    pub names: Vec<String>,
    /// Paths relative to the file's directory, as written (`.rb` added
    /// by the reader when missing).
    pub paths: Vec<String>,
    /// Python module names (`pkg.mod`), found from the file's directory.
    pub modules: Vec<String>,
    /// A reference that is not a literal (`require(name)`).
    pub dynamic: bool,
}

/// File name extensions of JavaScript and TypeScript modules.
pub const JS_EXTS: &[&str] = &["js", "cjs", "mjs", "ts", "mts", "cts", "jsx", "tsx"];

/// Whether `s` is a relative specifier (`./x`, `../x`).
fn relative(s: &str) -> bool {
    s.starts_with("./") || s.starts_with("../") || s == "." || s == ".."
}

/// Whether `s` is a specifier node resolves through `node_modules` or a
/// `package.json` `imports` map: a package name (`x`, `@s/x`, with a
/// subpath) or `#x`; not a built-in (`node:`), a URL or an absolute path.
pub fn bare(s: &str) -> bool {
    let first = s.split('/').next().unwrap_or("");
    !s.is_empty()
        && !relative(s)
        && !s.starts_with('/')
        && !s.contains(':')
        && !s.contains(char::is_whitespace)
        && !s.contains('\\')
        && s.len() <= 214
        && (s.starts_with('#') || !first.is_empty())
        && !first.starts_with('.')
}

/// The string literal at the start of `s` (after blanks): `Some(Ok)` a
/// plain literal, `Some(Err)` a template with a substitution, `None` no
/// literal.
fn literal(s: &str) -> Option<Result<String, ()>> {
    let s = s.trim_start();
    let q = s.chars().next().filter(|c| matches!(c, '\'' | '"' | '`'))?;
    let body = &s[1..];
    let end = body.find(q)?;
    let v = &body[..end];
    if q == '`' && v.contains("${") {
        return Some(Err(()));
    }
    Some(Ok(v.to_string()))
}

/// The static relative and bare specifiers of JavaScript text (`require('./x')`,
/// `require.resolve`, `import ... from './x'`, `import './x'`,
/// `import('./x')`, `export ... from './x'`); `dynamic` when a
/// `require` / `import()` takes anything but a literal.
pub fn js(text: &str) -> Refs {
    let mut r = Refs::default();
    let b = text.as_bytes();
    let word_at = |i: usize, w: &str| {
        text[i..].starts_with(w)
            && (i == 0
                || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'$'))
            && b.get(i + w.len())
                .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_' || *c == b'$'))
    };
    for i in 0..b.len() {
        if !text.is_char_boundary(i) {
            continue;
        }
        let (after, call) = if word_at(i, "require") {
            let rest = text[i + 7..].trim_start();
            let rest = rest.strip_prefix(".resolve").unwrap_or(rest).trim_start();
            match rest.strip_prefix('(') {
                Some(x) => (x, true),
                None => continue,
            }
        } else if word_at(i, "import") {
            let rest = text[i + 6..].trim_start();
            match rest.strip_prefix('(') {
                Some(x) => (x, true),
                None => (rest, false),
            }
        } else if word_at(i, "from") {
            (&text[i + 4..], false)
        } else {
            continue;
        };
        match literal(after) {
            Some(Ok(s)) if relative(&s) && !r.js.contains(&s) => r.js.push(s),
            Some(Ok(s)) if bare(&s) && !r.bare.contains(&s) => r.bare.push(s),
            Some(Ok(_)) => {}
            Some(Err(())) => r.dynamic = true,
            None if call => r.dynamic = true,
            None => {}
        }
    }
    r
}

/// The words of data text (JSON, YAML, TOML, INI), split at blanks,
/// quotes, brackets, commas and `=`.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| {
        c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | '[' | ']' | '{' | '}' | '=')
    })
    .filter(|w| !w.is_empty())
}

/// The relative paths of a data configuration (ESLint's, Prettier's,
/// Babel's, commitlint's ...): every word that starts with `./` or `../`
/// (a YAML key's `:` taken off).
pub fn data(text: &str) -> Refs {
    let mut r = Refs::default();
    for w in words(text) {
        let w = w.trim_end_matches(':');
        if relative(w) && !r.js.iter().any(|x| x == w) {
            r.js.push(w.to_string());
        } else if r.names.len() < MAX_NAMES
            && !w.starts_with('#')
            && bare(w.strip_prefix("plugin:").unwrap_or(w))
            && !r.names.iter().any(|x| x == w)
        {
            r.names.push(w.to_string());
        }
    }
    r
}

/// Words of one data configuration tried as package names.
const MAX_NAMES: usize = 512;

/// RuboCop's (and standard's, erb_lint's, Solargraph's) configuration:
/// `inherit_from` files (`.rubocop_todo.yml`, written without `./`) and
/// the Ruby files `require` / `plugins` name by a relative path.
pub(crate) fn ruby(text: &str) -> Refs {
    let mut r = Refs::default();
    for w in words(text) {
        let w = w.trim_end_matches(':');
        let file = [".yml", ".yaml", ".rb"].iter().any(|x| w.ends_with(x));
        if (relative(w) || file) && !w.contains("://") {
            let w = if file {
                w.to_string()
            } else {
                format!("{w}.rb")
            };
            if !r.paths.contains(&w) {
                r.paths.push(w);
            }
        }
    }
    r
}

/// Whether `w` is a dotted Python module name.
fn module_name(w: &str) -> bool {
    !w.is_empty()
        && w.split('.').all(|p| {
            p.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
}

/// Python tools' configuration (pylint's `load-plugins`, mypy's
/// `plugins`, pytest's `addopts = -p NAME`), in any of INI and TOML: the
/// module names, and the plugin paths mypy takes (`x.py`).
pub(crate) fn python(text: &str) -> Refs {
    let mut r = Refs::default();
    let mut key: Option<&str> = None;
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with(['#', ';']) {
            continue;
        }
        // A key line, or a continuation of the last key (indented, or a
        // TOML list's items).
        let (k, value) = match l.split_once('=') {
            Some((k, v)) if !line.starts_with([' ', '\t']) => {
                let k = k.trim().trim_matches('"').replace('_', "-");
                key = ["load-plugins", "plugins", "addopts"]
                    .into_iter()
                    .find(|x| *x == k);
                (key, v)
            }
            _ if l.starts_with('[') && !l.starts_with("[\"") && !l.starts_with("['") => {
                key = None;
                (None, "")
            }
            _ => (key, l),
        };
        let Some(k) = k else { continue };
        let ws: Vec<&str> = words(value).collect();
        for (i, w) in ws.iter().enumerate() {
            let m = if k == "addopts" {
                match w.strip_prefix("-p") {
                    Some("") => ws.get(i + 1).copied().unwrap_or(""),
                    Some(rest) => rest,
                    None => continue,
                }
            } else {
                w
            };
            let m = m.trim_start_matches("no:");
            if m.ends_with(".py") || relative(m) {
                if !r.paths.iter().any(|x| x == m) {
                    r.paths.push(m.to_string());
                }
            } else if module_name(m) && !r.modules.iter().any(|x| x == m) {
                r.modules.push(m.to_string());
            }
        }
    }
    r
}

/// `deno.json`'s lint plugins: the relative paths in each `"plugins"`
/// list.
pub(crate) fn deno(text: &str) -> Refs {
    let mut r = Refs::default();
    for (i, _) in text.match_indices("\"plugins\"") {
        let rest = &text[i..];
        let (Some(open), Some(close)) = (rest.find('['), rest.find(']')) else {
            continue;
        };
        if open < close {
            r.js.extend(data(&rest[open..close]).js);
        }
    }
    r
}

/// `package.json`'s tool keys (what [`crate::protect::tool_keys`] judges:
/// `prettier`, `eslintConfig`, `stylelint`, `babel`, ...; commitizen's
/// `config.commitizen.path`): their relative paths.
pub(crate) fn package_json(text: &str, keys: &[&str]) -> Refs {
    let mut r = Refs::default();
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return r;
    };
    fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    for k in keys {
        if let Some(x) = v.get(k) {
            strings(x, &mut found);
        }
    }
    if let Some(x) = v.pointer("/config/commitizen") {
        strings(x, &mut found);
    }
    for s in found {
        if relative(&s) {
            r.js.push(s);
        } else if bare(&s) && !r.bare.contains(&s) {
            r.bare.push(s);
        }
    }
    r
}

#[cfg(test)]
#[path = "config_refs_read_tests.rs"]
mod tests;
