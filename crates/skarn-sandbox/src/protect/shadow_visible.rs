//! Whether a source module named like the standard library's that a run
//! made would show in `git status` (ADR 0310): visible source code is the
//! user's to review like any other code the agent writes, so such a file
//! is kept when git lists it as new or changed, judged by the ignore
//! rules as they were before the run.
//!
//! The rules before the run: when any file that holds them on the
//! module's way (a `.gitignore` from the repository's top down to the
//! module's directory, the repository's `info/exclude`, its `config`,
//! the `.git` file of a linked work tree, `core.excludesFile`) was made
//! or changed by the run, the answer is no (the caller's stricter rule
//! applies); else those files are the ones of before the run, and their
//! patterns are matched the cautious way ([`ignore_match`]: a pattern
//! that might ignore it is taken to). No repository, a configuration that
//! hides new files or includes others: no. (git itself is not run: the
//! process that applies the layer can start no program.)

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::protect::ignore_match;

/// Whether the file `file` (absolute, in a work tree) would be listed by
/// `git status` as new or changed, by the ignore rules of before the run;
/// `changed(p)`: whether the run made, changed or removed `p`.
pub fn shown_by_git(file: &Path, changed: &dyn Fn(&Path) -> bool) -> bool {
    let Some(dir) = file.parent() else {
        return false;
    };
    // The repository's top, and the directories down to the module's.
    let mut dirs = Vec::new();
    let mut top = None;
    for d in dir.ancestors() {
        dirs.push(d);
        let dot = d.join(".git");
        if std::fs::symlink_metadata(&dot).is_ok() || changed(&dot) {
            top = Some(d);
            break;
        }
    }
    let Some(top) = top else {
        return false;
    };
    let Ok(rel) = file.strip_prefix(top) else {
        return false;
    };
    if dirs.iter().any(|d| changed(&d.join(".gitignore"))) {
        return false;
    }
    let Some(stores) = git_stores(&top.join(".git"), changed) else {
        return false;
    };
    if stores.iter().any(|s| {
        ["config", "config.worktree", "info/exclude", "info"]
            .iter()
            .any(|f| changed(&s.join(f)))
    }) {
        return false;
    }
    // The configuration: where the user's excludes file is; a setting
    // that hides new files, or an include this reading does not follow,
    // and the answer is no.
    let mut configs: Vec<PathBuf> = stores.iter().map(|s| s.join("config")).collect();
    configs.push(PathBuf::from("/etc/gitconfig"));
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|x| !x.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    configs.extend(home.iter().map(|h| h.join(".gitconfig")));
    let mut patterns: Vec<PathBuf> = stores.iter().map(|s| s.join("info/exclude")).collect();
    if let Some(x) = &xdg {
        configs.push(x.join("git/config"));
        patterns.push(x.join("git/ignore"));
    }
    for c in &configs {
        let Ok(text) = std::fs::read_to_string(c) else {
            continue;
        };
        match excludes_files(&text, home.as_deref(), top) {
            Some(e) => patterns.extend(e),
            None => return false,
        }
    }
    if patterns.iter().any(|p| changed(p)) {
        return false;
    }
    let path: Vec<&[u8]> = rel.iter().map(OsStr::as_encoded_bytes).collect();
    let read = |p: &Path| std::fs::read(p).unwrap_or_default();
    if patterns
        .iter()
        .any(|p| ignore_match::might_ignore(&read(p), &[], &path))
    {
        return false;
    }
    !dirs.iter().any(|d| {
        let base: Vec<&[u8]> = d
            .strip_prefix(top)
            .map(|b| b.iter().map(OsStr::as_encoded_bytes).collect())
            .unwrap_or_default();
        ignore_match::might_ignore(&read(&d.join(".gitignore")), &base, &path)
    })
}

/// The `core.excludesFile` values of the configuration `text`; None when
/// it turns off the listing of new files or includes other files.
fn excludes_files(text: &str, home: Option<&Path>, top: &Path) -> Option<Vec<PathBuf>> {
    let lower = text.to_ascii_lowercase();
    if lower.contains("showuntrackedfiles") || lower.contains("[include") {
        return None;
    }
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        let Some((k, v)) = l.split_once('=') else {
            if l.to_ascii_lowercase().starts_with("excludesfile") {
                return None;
            }
            continue;
        };
        if !k.trim().eq_ignore_ascii_case("excludesfile") {
            continue;
        }
        let v = v.trim().trim_matches('"');
        let p = match (v.strip_prefix("~/"), home) {
            (Some(r), Some(h)) => h.join(r),
            (Some(_), None) => return None,
            _ => top.join(v),
        };
        out.push(p);
    }
    Some(out)
}

/// The git directories whose files hold the rules of the work tree whose
/// `.git` is `dot`: itself when a directory; for a linked work tree's
/// `.git` file, the directory it names and that one's common directory.
/// None when the run made or changed the `.git` file, or it cannot be
/// read.
fn git_stores(dot: &Path, changed: &dyn Fn(&Path) -> bool) -> Option<Vec<PathBuf>> {
    let m = std::fs::symlink_metadata(dot).ok()?;
    if m.is_dir() {
        return Some(vec![dot.to_path_buf()]);
    }
    if !m.is_file() || changed(dot) {
        return None;
    }
    let text = std::fs::read_to_string(dot).ok()?;
    let named = text.strip_prefix("gitdir:")?.trim();
    let gitdir = dot.parent()?.join(named);
    let mut out = vec![gitdir.clone()];
    if let Ok(c) = std::fs::read_to_string(gitdir.join("commondir")) {
        out.push(gitdir.join(c.trim()));
    }
    if out.iter().any(|s| changed(&s.join("commondir"))) {
        return None;
    }
    Some(out)
}

#[cfg(test)]
#[path = "shadow_visible_tests.rs"]
mod tests;
