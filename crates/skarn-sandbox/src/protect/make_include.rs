//! What a workspace's makefiles make of other files (attack atk22m F10).
//! `make` reads every file a makefile names by `include`, `-include` or
//! `sinclude` as makefile text, and its recipes run the values of
//! variables as programs: make's own program variables (`$(RM)`,
//! `$(AR)`, `$(LD)`, `$(MAKE)`, the shell ...) and any variable a recipe
//! line starts a command with (`$(GO) build`). So a file a makefile
//! includes is judged like an environment file make reads
//! ([`crate::protect::dotenv::judge`]), whatever its name, and an
//! assignment to one of those variables, in any environment file or
//! included file, is code: `RM=sh` turns `$(RM) *.o` into `sh main.o`.

use std::path::{Component, Path, PathBuf};

/// The makefile names make reads in a directory, in its order.
pub const MAKEFILES: &[&str] = &["GNUmakefile", "makefile", "Makefile"];

/// Make's built-in variables whose value it runs as a program, or that
/// change how a recipe is run (GNU make's implicit variables; their
/// `*FLAGS` are judged by [`crate::protect::dotenv`]'s suffixes).
const PROGRAMS: &[&str] = &[
    "AR",
    "AS",
    "CC",
    "CXX",
    "CPP",
    "FC",
    "F77",
    "M2C",
    "M4",
    "PC",
    "CO",
    "GET",
    "LEX",
    "YACC",
    "LINT",
    "MAKEINFO",
    "TEX",
    "TEXI2DVI",
    "WEAVE",
    "CWEAVE",
    "TANGLE",
    "CTANGLE",
    "RM",
    "LD",
    "OBJC",
    "MAKE",
    "MAKE_COMMAND",
    "SHELL",
    "OUTPUT_OPTION",
    "SUFFIXES",
];

/// Prefixes of make's built-in command variables (`COMPILE.c`,
/// `LINK.o`, `PREPROCESS.S`) and of its special variables
/// (`.SHELLFLAGS`, `.RECIPEPREFIX`, `.DEFAULT_GOAL`).
const PROGRAM_PREFIXES: &[&str] = &["COMPILE.", "LINK.", "PREPROCESS.", "."];

/// Whether make runs the value of `name` (any case) as a program or by
/// it changes how recipes run.
pub fn make_program(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    PROGRAMS.contains(&up.as_str()) || PROGRAM_PREFIXES.iter().any(|p| up.starts_with(p))
}

/// Bytes read of one makefile.
const MAX_BYTES: u64 = 1 << 20;
/// Directories above a file whose makefiles are asked whether they
/// include it (`include config/local.mk`).
const UP: usize = 4;

/// The text of the makefile `p` (a small regular file, links followed
/// as make follows them), or `None`.
fn read(p: &Path) -> Option<String> {
    use std::io::Read;
    let f = std::fs::File::open(p).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut b = Vec::new();
    f.take(MAX_BYTES).read_to_end(&mut b).ok()?;
    Some(String::from_utf8_lossy(&b).into_owned())
}

/// The makefiles' texts of `dir`.
fn makefiles(dir: &Path) -> Vec<String> {
    MAKEFILES
        .iter()
        .filter_map(|m| read(&dir.join(m)))
        .collect()
}

/// The logical lines of makefile text: continuations joined, with
/// whether each is a recipe line (it starts with a tab).
pub(crate) fn logical_lines(text: &str) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    let mut joined = String::new();
    for raw in text.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let trailing = raw.chars().rev().take_while(|&c| c == '\\').count();
        if trailing % 2 == 1 {
            joined.push_str(&raw[..raw.len() - 1]);
            joined.push(' ');
            continue;
        }
        joined.push_str(raw);
        let l = std::mem::take(&mut joined);
        out.push((l.starts_with('\t'), l));
    }
    out
}

/// The words `include`, `-include` and `sinclude` lines of makefile
/// `text` name (a `$(wildcard PATTERN)` gives its pattern; other computed
/// names are not followed).
pub fn include_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (recipe, l) in logical_lines(text) {
        if recipe {
            continue;
        }
        let l = l.split('#').next().unwrap_or("").trim();
        let mut words = l.split_whitespace();
        let first = words.next().unwrap_or("");
        if !matches!(first, "include" | "-include" | "sinclude") {
            continue;
        }
        let rest: Vec<&str> = words.collect();
        let rest = rest.join(" ");
        for w in rest.split_whitespace() {
            let w = w
                .strip_prefix("$(wildcard")
                .or_else(|| w.strip_prefix("${wildcard"))
                .unwrap_or(w);
            let w = w.trim_end_matches([')', '}']);
            if !w.is_empty() && !w.contains('$') {
                out.push(w.to_string());
            }
        }
    }
    out
}

/// `p` with `.` and `..` removed as written (no link followed: make opens
/// the name as given, relative to its directory).
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether the file name `name` matches the pattern `pat` (`*` and `?`).
fn glob(pat: &[u8], name: &[u8]) -> bool {
    match (pat.first(), name.first()) {
        (None, None) => true,
        (Some(b'*'), _) => glob(&pat[1..], name) || (!name.is_empty() && glob(pat, &name[1..])),
        (Some(b'?'), Some(_)) => glob(&pat[1..], &name[1..]),
        (Some(a), Some(b)) if a == b => glob(&pat[1..], &name[1..]),
        _ => false,
    }
}

/// Whether `word` (an include word of a makefile in `dir`) names `file`.
fn names(dir: &Path, word: &str, file: &Path) -> bool {
    let w = lexical(&dir.join(word));
    if w == file {
        return true;
    }
    let (Some(wp), Some(fp), Some(wn), Some(fname)) =
        (w.parent(), file.parent(), w.file_name(), file.file_name())
    else {
        return false;
    };
    wp == fp
        && wn.as_encoded_bytes().contains(&b'*')
        && glob(wn.as_encoded_bytes(), fname.as_encoded_bytes())
}

/// Whether a makefile in a directory at or above `file` (up to [`UP`]
/// levels; not above `top` when given) includes it.
pub fn included(file: &Path, top: Option<&Path>) -> bool {
    let file = lexical(file);
    file.ancestors()
        .skip(1)
        .take(UP + 1)
        .take_while(|d| top.is_none_or(|t| d.starts_with(t)))
        .any(|d| {
            makefiles(d)
                .iter()
                .flat_map(|t| include_words(t))
                .any(|w| names(d, &w, &file))
        })
}

/// The existing files the makefiles of `dir` include (patterns expanded
/// in their directory).
pub fn included_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for w in makefiles(dir).iter().flat_map(|t| include_words(t)) {
        let p = lexical(&dir.join(&w));
        let found: Vec<PathBuf> = if w.contains(['*', '?']) {
            let Some(parent) = p.parent() else { continue };
            let Ok(rd) = std::fs::read_dir(parent) else {
                continue;
            };
            rd.flatten()
                .take(10_000)
                .map(|e| e.path())
                .filter(|f| names(dir, &w, f))
                .collect()
        } else {
            vec![p]
        };
        for f in found {
            if std::fs::symlink_metadata(&f).is_ok() && !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// The variables the recipes of makefile `text` start a command with
/// (`$(GO) build`, `@$(Q)$(NODE) x.js`, `cd d && $(PY) -m x`).
pub fn command_variables(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (recipe, l) in logical_lines(text) {
        if !recipe {
            continue;
        }
        for cmd in l.split([';', '&', '|', '`']) {
            let mut c = cmd
                .trim_start()
                .trim_start_matches(['@', '-', '+', '(', '{', ' ', '\t']);
            // Each reference at the command's start (`$(Q)$(CC)`).
            while let Some(r) = c.strip_prefix("$(").or_else(|| c.strip_prefix("${")) {
                let end = r.find([')', '}']).unwrap_or(r.len());
                let name = &r[..end];
                if !name.is_empty() && !name.contains([' ', '\t', '\n', '$', ',', ':']) {
                    if !out.iter().any(|n| n == name) {
                        out.push(name.to_string());
                    }
                } else {
                    break;
                }
                c = r.get(end + 1..).unwrap_or("");
            }
        }
    }
    out
}

/// The first assignment in `text` (an environment or included file, read
/// as make reads it) to a variable the makefiles of `dir` and of the
/// directories above it (up to [`UP`] levels: the one that includes
/// `config/local.mk`) run as a command: (1-based line, name).
pub fn assigns_command(text: &str, dir: &Path) -> Option<(usize, String)> {
    let vars: Vec<String> = dir
        .ancestors()
        .take(UP + 1)
        .flat_map(makefiles)
        .flat_map(|t| command_variables(&t))
        .collect();
    if vars.is_empty() {
        return None;
    }
    for (i, l) in text.split('\n').enumerate() {
        let mut l = l.trim_start_matches([' ', '\t']);
        for k in ["export", "override", "unexport", "private"] {
            if let Some(r) = l.strip_prefix(k).filter(|r| r.starts_with([' ', '\t'])) {
                l = r.trim_start_matches([' ', '\t']);
            }
        }
        let end = l.find(['=', ':', '?', '+', '!', ' ', '\t']).unwrap_or(0);
        let name = l[..end].trim_matches(['"', '\'']);
        if !name.is_empty() && vars.iter().any(|v| v == name) {
            return Some((i + 1, name.to_string()));
        }
    }
    None
}

#[cfg(test)]
#[path = "make_include_tests.rs"]
mod tests;
