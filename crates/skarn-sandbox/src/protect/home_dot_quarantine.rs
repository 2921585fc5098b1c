//! New top-level dot entries of a home the run could write, moved into a
//! quarantine directory after the run (host programs read them by name).

use std::path::{Path, PathBuf};

/// After a run whose workspace holds the home: every top-level dot entry
/// of `home` that was not there before (`before`, names) is moved into
/// `home/.skarn-quarantine-<run id>/`, since host programs read dot files
/// there by name (`.lesskey`, `.psqlrc`, `.hgrc`, ...). Placeholders of the
/// run itself are left to their own clean-up.
pub(crate) fn quarantine_new_dot_entries(home: &Path, before: &[String]) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(home) else {
        return Vec::new();
    };
    let mut jail: Option<PathBuf> = None;
    let mut moved = Vec::new();
    let mut removed = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with('.')
            || name == ".git"
            || before.contains(&name)
            || name.starts_with(".skarn-quarantine-")
            || crate::protect::placeholder::is_placeholder(&e.path()).is_some()
        {
            continue;
        }
        // One jail per run, made with a fresh unguessable name (a
        // directory the run made under an expected name is not used).
        if jail.is_none() {
            for _ in 0..8 {
                let j = home.join(format!(
                    ".skarn-quarantine-{}",
                    crate::protect::set_aside::random_suffix()
                ));
                if std::fs::create_dir(&j).is_ok() {
                    jail = Some(j);
                    break;
                }
            }
        }
        let into = jail.as_ref().map(|j| j.join(&name));
        if into.is_some_and(|i| std::fs::rename(e.path(), i).is_ok()) {
            moved.push(name);
            continue;
        }
        match crate::protect::set_aside::set_aside(&e.path(), "skarn-quarantine") {
            crate::protect::set_aside::Aside::Left(why) => {
                removed.push(format!("{name} (LEFT IN PLACE: {why})"))
            }
            _ => removed.push(name),
        }
    }
    let mut out = Vec::new();
    if let (false, Some(j)) = (moved.is_empty(), &jail) {
        out.push(format!(
            "new dot files in the home ({}) were moved into {}: host programs read such files \
             by name; review them before moving them back",
            moved.join(", "),
            j.display()
        ));
    }
    if !removed.is_empty() {
        out.push(format!(
            "new dot files in the home ({}) could not be moved into a quarantine directory: \
             host programs read such files by name, so each was set aside beside itself or removed",
            removed.join(", ")
        ));
    }
    out
}
