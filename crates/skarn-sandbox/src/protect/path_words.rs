//! Path-like words of a configuration file's text (TOML, INI, YAML,
//! `PATH` lists), resolved against the places the reading program
//! resolves them from: shared by the upward configuration reader
//! (`protect::ancestor_config`) and git's configuration names
//! (`protect::git::config_names`).

use std::path::{Path, PathBuf};

/// The path-like words of a configuration text (`/abs`, `~/x`,
/// `$HOME/x`, `rel/x`, `./x`, `../x`), resolved against each of `bases`
/// (relative ones) and `home`, lexically normalised. Words are split at
/// blanks, quotes and the separators of TOML, INI, YAML and `PATH`
/// lists; a leading `!` (a git shell alias) or `@` is dropped.
pub fn path_words(text: &str, bases: &[&Path], home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let seps = |c: char| c.is_whitespace() || "\"'`=,;:()[]{}<>|&".contains(c);
    for w in text.split(seps) {
        let w = w.trim_start_matches(['!', '@']);
        // A pattern or a URL's rest (`//host/...`) names no one file.
        if w.is_empty() || w.starts_with('#') || w.starts_with("//") || w.contains('*') {
            continue;
        }
        let home_rest = w
            .strip_prefix("~/")
            .or_else(|| w.strip_prefix("$HOME/"))
            .or_else(|| w.strip_prefix("${HOME}/"));
        if let Some(rest) = home_rest {
            if let Some(h) = home {
                out.push(crate::policy::config::normalize(&h.join(rest)));
            }
            continue;
        }
        if w.starts_with('/') {
            out.push(crate::policy::config::normalize(Path::new(w)));
            continue;
        }
        if w.contains('/') || w.starts_with('.') {
            for b in bases {
                out.push(crate::policy::config::normalize(&b.join(w)));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}
