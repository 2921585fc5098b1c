//! Search-path variables of the caller that name the current directory
//! (attack atk22o F4). The loader reads an empty or relative
//! `LD_LIBRARY_PATH` entry (`:/usr/local/lib`, the usual result of
//! `export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/opt/x/lib` when it was unset)
//! as the directory a program is started in; python, perl, ruby, node and
//! java do the same with a relative entry of theirs, and node resolves a
//! relative (or bare) `--require`/`--import`/`--loader` of `NODE_OPTIONS`
//! from there. With such a variable every host program started in the
//! workspace loads what a run left at its top (a `libgcc_s.so.1` for
//! `node`, a `yaml.py` for a host python tool), and no check by place can
//! tell those files from the project's own. So `skarn run` refuses to
//! start, naming the variable, unless `--allow-non-project-workspace`
//! accepts the risk (ADR 0331).

/// Variables whose entries the loaders read as directories (`:`-separated).
const SEARCH_PATHS: &[&str] = &[
    "LD_LIBRARY_PATH",
    "PYTHONPATH",
    "PERL5LIB",
    "PERLLIB",
    "RUBYLIB",
    "NODE_PATH",
    "CLASSPATH",
    "GEM_PATH",
    "GEM_HOME",
];

/// Variables whose entries the dynamic loader opens as shared objects
/// in every program it starts (`:`- or blank-separated): a name with a
/// `/` that is not absolute is opened from the current directory (a bare
/// name is searched like a needed library: the search paths judged
/// above).
const LOADER_LISTS: &[&str] = &["LD_PRELOAD", "LD_AUDIT"];

/// Options of `NODE_OPTIONS` naming a module node loads at start.
const NODE_PRELOADS: &[&str] = &[
    "--require",
    "-r",
    "--import",
    "--loader",
    "--experimental-loader",
];

/// Entries of one variable looked at, at most (past it: refused).
const MAX_ENTRIES: usize = 1000;

/// The first entry of the search-path value `v` that names the current
/// directory: empty (in a value that is not empty as a whole) or not
/// absolute. `Some("")` for an empty one.
pub(super) fn relative_entry(v: &str) -> Option<String> {
    if v.is_empty() {
        return None;
    }
    let entries: Vec<&str> = v.split(':').collect();
    if entries.len() > MAX_ENTRIES {
        return Some(format!("(more than {MAX_ENTRIES} entries)"));
    }
    entries
        .into_iter()
        .find(|e| !e.starts_with('/'))
        .map(String::from)
}

/// The first entry of the loader list `v` (`LD_PRELOAD`, `LD_AUDIT`)
/// the loader opens relative to the current directory: one holding a `/`
/// that is not absolute (`./x.so`, `lib/x.so`). `$ORIGIN` entries are the
/// program's own directory (`$LIB`/`$PLATFORM` expand to relative names); empty entries are skipped by it.
pub(super) fn relative_object(v: &str) -> Option<String> {
    let entries: Vec<&str> = v
        .split([':', ' ', '\t', '\n'])
        .filter(|e| !e.is_empty())
        .collect();
    if entries.len() > MAX_ENTRIES {
        return Some(format!("(more than {MAX_ENTRIES} entries)"));
    }
    entries
        .into_iter()
        .find(|e| {
            e.contains('/')
                && !e.starts_with('/')
                && !e.starts_with("$ORIGIN")
                && !e.starts_with("${ORIGIN}")
        })
        .map(String::from)
}

/// The first module `NODE_OPTIONS` value `v` preloads by a relative or
/// bare name (node resolves it from the directory it starts in).
pub(super) fn relative_preload(v: &str) -> Option<String> {
    let words = node_words(v);
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let (opt, val) = match w.split_once('=') {
            Some((o, x)) if o.starts_with('-') => (o, Some(x.to_string())),
            _ => (w.as_str(), None),
        };
        if !NODE_PRELOADS.contains(&opt) {
            continue;
        }
        let Some(val) = val.or_else(|| it.next().cloned()) else {
            return Some(String::new());
        };
        let path = val.strip_prefix("file://").unwrap_or(&val);
        if !path.starts_with('/') {
            return Some(val);
        }
    }
    None
}

/// `NODE_OPTIONS` split as node splits it: at blanks, a double-quoted
/// part (with `\\` escapes) kept whole; a single quote is taken as a
/// quote too (fail closed: a path it holds is judged).
fn node_words(v: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), '\\') => cur.extend(chars.next()),
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => quote = Some(c),
            (None, c) if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Why no workspace is safe with the caller's environment, if it is not.
pub(super) fn reason() -> Option<String> {
    for var in SEARCH_PATHS {
        let Some(v) = std::env::var_os(var) else {
            continue;
        };
        let v = v.to_string_lossy();
        if let Some(e) = relative_entry(&v) {
            return Some(format!(
                "your ${var} holds the entry {e:?} (empty or relative): its loader reads it as \
                 the directory a program is started in, so every host program started in the \
                 workspace would load what the command left there; make the entry absolute or \
                 remove it"
            ));
        }
    }
    for var in LOADER_LISTS {
        let Some(v) = std::env::var_os(var) else {
            continue;
        };
        if let Some(e) = relative_object(&v.to_string_lossy()) {
            return Some(format!(
                "your ${var} names the shared object {e:?} by a relative path: the loader \
                 opens it from the directory a program is started in, so every host program \
                 started in the workspace would load what the command left there; make the \
                 entry absolute or remove it"
            ));
        }
    }
    let v = std::env::var_os("NODE_OPTIONS")?;
    let m = relative_preload(&v.to_string_lossy())?;
    Some(format!(
        "your $NODE_OPTIONS preloads {m:?} by a relative or bare name: node resolves it from \
         the directory it is started in, so every host node started in the workspace would \
         load what the command left there; give an absolute path"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_naming_the_current_directory() {
        assert_eq!(relative_entry(":/usr/local/lib").as_deref(), Some(""));
        assert_eq!(relative_entry("/a::/b").as_deref(), Some(""));
        assert_eq!(relative_entry("/a:").as_deref(), Some(""));
        assert_eq!(relative_entry(".").as_deref(), Some("."));
        assert_eq!(relative_entry("/a:lib").as_deref(), Some("lib"));
        assert_eq!(relative_entry("~/lib").as_deref(), Some("~/lib"));
        assert_eq!(relative_entry("/usr/local/lib:/opt/x"), None);
        assert_eq!(relative_entry(""), None);
        assert_eq!(relative_object("./x.so").as_deref(), Some("./x.so"));
        assert_eq!(
            relative_object("/a.so lib/x.so").as_deref(),
            Some("lib/x.so")
        );
        assert_eq!(relative_object("/a.so:../b.so").as_deref(), Some("../b.so"));
        assert_eq!(relative_object("libjemalloc.so.2:/usr/lib/x.so"), None);
        assert_eq!(relative_object("$ORIGIN/x.so"), None);
        assert!(relative_object("$LIB/x.so").is_some());
        assert_eq!(relative_object(""), None);
        for v in [
            "--require ./x.js",
            "-r x",
            "--require=./x.js",
            "--import=./l.mjs",
            "--max-old-space-size=100 --loader ts-node/esm",
            "--experimental-loader 'a b.mjs'",
            "--require",
        ] {
            assert!(relative_preload(v).is_some(), "{v}");
        }
        for v in [
            "--require /w/x.js",
            "--import=file:///w/l.mjs",
            "--max-old-space-size=4096",
            "",
        ] {
            assert!(relative_preload(v).is_none(), "{v}");
        }
    }
}
