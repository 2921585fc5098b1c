//! The places hidden from a `command` source while it runs (ADR 0283):
//! every place a sandboxed run may write ([`Places`]: this run's writable
//! grants, every root in `granted-dirs`, skarn's state directories, each
//! by every other name through another mount), and the per-run host
//! temporary directories (`skarn-tmp-*`). A place that holds the home or
//! is `/` cannot be hidden without hiding what every source needs: such a
//! source is refused, saying which place and why.

use std::path::{Path, PathBuf};

use skarn_egress::secrets::source_view::SourceView;

use super::root_files::Places;

/// The helper binary: the very image running (the file on disk may have
/// been replaced since).
const SELF_EXE: &str = "/proc/self/exe";

/// How `command` sources of a run or server whose writable grants are
/// `writable` are started; an error naming the place when one holds the
/// home or is `/`.
pub fn view(writable: &[PathBuf], home: Option<&Path>) -> Result<SourceView, String> {
    let places = Places::new(writable, home);
    let mut hide: Vec<(PathBuf, String)> = places
        .names()
        .map(|(p, w)| (p.to_path_buf(), w.to_string()))
        .collect();
    for tmp in [PathBuf::from("/tmp"), std::env::temp_dir()] {
        let Ok(rd) = std::fs::read_dir(&tmp) else {
            continue;
        };
        for e in rd.flatten() {
            if e.file_name().as_encoded_bytes().starts_with(b"skarn-tmp-") {
                hide.push((e.path(), "a run's temporary directory".into()));
            }
        }
    }
    let homes: Vec<PathBuf> = home
        .into_iter()
        .flat_map(|h| {
            [
                h.to_path_buf(),
                std::fs::canonicalize(h).unwrap_or_default(),
            ]
        })
        .filter(|h| h.is_absolute())
        .collect();
    for (p, why) in &hide {
        if p.parent().is_none() || homes.iter().any(|h| h.starts_with(p)) {
            return Err(format!(
                "{} is {why}: a secret's command source runs with every place a sandboxed run \
                 may write hidden from it, and this one holds {}; remove it from the grants \
                 (or from ~/.local/state/skarn/granted-dirs), or use a file or from_env source",
                p.display(),
                if p.parent().is_none() {
                    "every file".to_string()
                } else {
                    "the home".to_string()
                }
            ));
        }
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for (p, _) in hide {
        if p.is_absolute() && !out.contains(&p) {
            out.push(p);
        }
    }
    out.sort();
    Ok(SourceView::through(PathBuf::from(SELF_EXE), out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_holding_the_home_is_refused_and_others_are_hidden() {
        let d = std::env::temp_dir().join(format!("skarn-srcpl-{}", std::process::id()));
        let home = d.join("home");
        let ws = d.join("ws");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        let v = view(std::slice::from_ref(&ws), Some(&home)).unwrap();
        assert!(v.hidden().contains(&ws), "{:?}", v.hidden());
        assert!(v.hidden().contains(&home.join(".local/state/skarn")));
        let e = view(std::slice::from_ref(&d), Some(&home)).unwrap_err();
        assert!(e.contains("the home"), "{e}");
        let e = view(&[PathBuf::from("/")], Some(&home)).unwrap_err();
        assert!(e.contains("every file"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
