//! The workspace's `.gitmodules`, writable with the direct mode's git
//! layer (ADR 0181) so that `git submodule add` works, and vetted after
//! the run: only the keys a submodule needs to be cloned and checked out
//! may change (`path`, `url` without the `ext::`/`fd::` transports or an
//! option, `branch`, `shallow`, `ignore`, `fetchRecurseSubmodules`,
//! `update` by a named strategy); a URL only where it leads host git to a
//! place the run could read, a relative one resolved as git resolves it
//! against the remotes ([`super::submodule_url`]). Git ignores `update = !command` from
//! this file; it is refused all the same. A file with anything else is
//! put back as it was (or removed when there was none), one line each.

use std::path::Path;

use crate::protect::git::gitconfig::{self, Item};
use crate::protect::git::submodule_url::Bases;

/// Whether one `.gitmodules` item is allowed; `bases` says where its
/// repository's submodule URLs lead.
pub(crate) fn allowed(it: &Item, bases: &Bases) -> bool {
    if it.section != "submodule" || it.sub.is_none() {
        return false;
    }
    let v = it.value.as_deref().unwrap_or("");
    match it.name.as_str() {
        "path" => {
            let p = Path::new(v);
            !v.is_empty()
                && p.is_relative()
                && p.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
                && !p.components().any(|c| c.as_os_str() == ".git")
                // Host `git submodule update` checks the submodule out
                // there: never at or above a protected path (atk22i F12).
                && !super::commit_walk::holds_protected(v)
        }
        // Host `git submodule update --init` connects to it: a network
        // address the run chose carries what the run put in it past the
        // network policy (atk22i F9, ADR 0278), also when it is relative
        // and climbs over the remote's host (atk22j F3, ADR 0291); a local
        // one brings a repository into the workspace.
        "url" => super::safe_keys::allowed_key(it) && bases.url_ok(v),
        "branch" | "shallow" | "ignore" | "fetchrecursesubmodules" | "update" => {
            super::safe_keys::allowed_key(it)
        }
        _ => false,
    }
}

/// After the run: vet `file` against what it held before (`before`);
/// one line per refused item, the file restored when one is.
pub(crate) fn after(file: &Path, before: Option<&[u8]>, bases: &Bases) -> Vec<String> {
    let now = std::fs::symlink_metadata(file).ok();
    let now_bytes = now
        .as_ref()
        .filter(|m| m.is_file())
        .and_then(|_| gitconfig::read_bytes(file).ok().flatten());
    if now.is_some() && now_bytes.is_none() {
        // A link, directory, FIFO or oversized file: never kept.
        return restore(file, before, vec!["it is not a small regular file".into()]);
    }
    let Some(bytes) = now_bytes else {
        return Vec::new(); // removed (or never made)
    };
    if before == Some(bytes.as_slice()) {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let old = before
        .map(|b| gitconfig::parse(&String::from_utf8_lossy(b)).items)
        .unwrap_or_default();
    let p = gitconfig::parse(&text);
    let mut bad: Vec<String> = p
        .items
        .iter()
        .filter(|it| !allowed(it, bases) && !old.contains(it))
        .map(|it| format!("{} = {:?}", it.key(), it.value.as_deref().unwrap_or("true")))
        .collect();
    if !p.bad_lines.is_empty() {
        bad.push("lines that do not parse".into());
    }
    if bad.is_empty() {
        return Vec::new();
    }
    restore(file, before, bad)
}

fn restore(file: &Path, before: Option<&[u8]>, why: Vec<String>) -> Vec<String> {
    let done = match before {
        Some(b) => {
            let tmp = file.with_extension("skarn-restore");
            std::fs::write(&tmp, b).and_then(|()| std::fs::rename(&tmp, file))
        }
        None => std::fs::remove_file(file).or_else(|_| std::fs::remove_dir_all(file)),
    };
    let what = match (&done, before) {
        (Ok(()), Some(_)) => "put back as it was".to_string(),
        (Ok(()), None) => "removed".to_string(),
        (Err(e), _) => format!("it could not be put back ({e}): review it before running git"),
    };
    why.into_iter()
        .map(|w| {
            format!(
                "{}: {w} is not a submodule setting skarn lets a run write; the file was {what}",
                file.display()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submodule_settings_are_kept_and_others_put_back() {
        let t = skarn_test_support::TempDir::new("gitmodules");
        let top = std::fs::canonicalize(t.path()).unwrap();
        let bases = Bases {
            remotes: vec![top.to_string_lossy().into_owned()],
            reach: crate::protect::git::remote_redirect::Reach {
                top: top.clone(),
                paths: vec![(top.clone(), true)],
                ..Default::default()
            },
        };
        let after = |f: &Path, b: Option<&[u8]>| after(f, b, &bases);
        let f = top.join(".gitmodules");
        let ok = "[submodule \"sm\"]\n\tpath = sm\n\turl = ./sm\n";
        std::fs::write(&f, ok).unwrap();
        assert!(after(&f, None).is_empty());
        let bad = format!("{ok}\tupdate = !touch /tmp/x\n[core]\n\tfsmonitor = x\n");
        std::fs::write(&f, &bad).unwrap();
        let w = after(&f, Some(ok.as_bytes()));
        assert_eq!(w.len(), 2, "{w:?}");
        assert_eq!(std::fs::read_to_string(&f).unwrap(), ok);
        std::fs::write(&f, "[submodule \"x\"]\n\tpath = ../../etc\n").unwrap();
        assert_eq!(after(&f, None).len(), 1);
        assert!(!f.exists());
        std::fs::write(&f, "[submodule \"x\"]\n\turl = ext::sh -c id\n").unwrap();
        assert_eq!(after(&f, None).len(), 1);
        // Relative, climbing out of what the run could read.
        std::fs::write(&f, "[submodule \"x\"]\n\turl = ../../../h:1/x\n").unwrap();
        assert_eq!(after(&f, None).len(), 1);
    }
}
