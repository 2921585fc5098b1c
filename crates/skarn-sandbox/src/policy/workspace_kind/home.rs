//! The home's own places as workspaces (attack atk22c F4, F5; atk22g
//! F15): the home itself, its dot entries and program directories, the
//! XDG directories, other accounts' homes, and what the home's dotfiles
//! link into.

use std::path::{Path, PathBuf};

use super::{ALLOW_HOME_FLAG, HOME_PROGRAM_DIRS, NonProject, env_dir, home_place};

/// The home directories of the accounts in `/etc/passwd` (and every
/// directory directly in `/home`), canonical, that exist and are not `/`.
pub(super) fn account_homes() -> Vec<(String, PathBuf)> {
    use std::io::Read;
    let mut text = String::new();
    if let Ok(f) = std::fs::File::open("/etc/passwd") {
        let _ = f.take(1 << 20).read_to_string(&mut text);
    }
    let mut out: Vec<(String, PathBuf)> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            let (user, dir) = (f.first()?, f.get(5)?);
            Some((user.to_string(), PathBuf::from(dir)))
        })
        .collect();
    if let Ok(rd) = std::fs::read_dir("/home") {
        out.extend(rd.flatten().take(10_000).filter_map(|e| {
            e.file_type()
                .ok()?
                .is_dir()
                .then(|| (e.file_name().to_string_lossy().into_owned(), e.path()))
        }));
    }
    out.into_iter()
        .filter(|(_, d)| d.is_absolute() && d.as_os_str() != "/")
        .filter_map(|(u, d)| std::fs::canonicalize(&d).ok().map(|c| (u, c)))
        .filter(|(_, d)| d.as_os_str() != "/" && d.is_dir())
        .collect()
}

pub(super) fn home_names(home: Option<&Path>) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = home.into_iter().map(Path::to_path_buf).collect();
    if let Some(real) = home.and_then(|h| std::fs::canonicalize(h).ok())
        && !v.contains(&real)
    {
        v.push(real);
    }
    v
}

pub(super) fn home_reason(ws: &Path, home: Option<&Path>) -> Option<NonProject> {
    let home_flag = |why: String| {
        Some(NonProject {
            why,
            flag: ALLOW_HOME_FLAG,
        })
    };
    let homes = home_names(home);
    // The home under a second name (a bind mount, a volume): compared by
    // directory identity (attack atk22c F5).
    if let Some(h) = home
        && !homes.iter().any(|n| n.starts_with(ws))
        && crate::policy::dir_identity::holds_home(ws, h)
    {
        return home_flag(format!(
            "{} is the home directory {} or holds it (the same directory under another name)",
            ws.display(),
            h.display()
        ));
    }
    let alias = home.and_then(|h| crate::policy::dir_identity::through_home_alias(ws, h));
    for (h, ws) in homes.iter().flat_map(|h| {
        std::iter::once(ws)
            .chain(alias.as_deref())
            .map(move |w| (h, w))
    }) {
        if h.starts_with(ws) {
            return home_flag(format!(
                "{} is the home directory or holds it",
                ws.display()
            ));
        }
        if let Ok(rel) = ws.strip_prefix(h)
            && let Some(place) = home_place(rel)
        {
            return home_flag(format!(
                "{} lies in {}, a directory of the home that host programs read, load or \
                 run on their own (configuration, state, start-up files, data, programs)",
                ws.display(),
                h.join(place).display()
            ));
        }
    }
    // A home place under another name (`~/.config` a bind mount of
    // `/persist/home/u/.config`): compared by directory identity with
    // every ancestor of the workspace (attack atk22g F15).
    if let Some(h) = home
        && let Some(place) =
            crate::policy::dir_identity::in_home_place_by_identity(ws, h, HOME_PROGRAM_DIRS)
    {
        return home_flag(format!(
            "{} lies in {}, a directory of the home that host programs read, load or run on their own (the same directory under another name)",
            ws.display(),
            place.display()
        ));
    }
    for var in [
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
    ] {
        if let Some(d) = env_dir(var)
            && ws.starts_with(&d)
        {
            return home_flag(format!("{} lies in ${var} ({})", ws.display(), d.display()));
        }
    }
    // Another account's home (as root, or a shared home a user may
    // write): its start-up files, keys and units are that account's
    // persistence (attack atk22c F4).
    for (user, h) in account_homes() {
        if homes.contains(&h) {
            continue;
        }
        if h.starts_with(ws) {
            return home_flag(format!(
                "{} is the home directory of the account {user:?} or holds it",
                ws.display()
            ));
        }
        if let Ok(rel) = ws.strip_prefix(&h)
            && let Some(place) = home_place(rel)
        {
            return home_flag(format!(
                "{} lies in {}, a directory of the account {user:?}'s home that host programs \
                 read, load or run on their own",
                ws.display(),
                h.join(place).display()
            ));
        }
    }
    #[cfg(unix)]
    if let Some(h) = home {
        for t in crate::protect::home_links::scan(h).trusted {
            // A start-up file's directory tree (`tree`) is accepted as a
            // workspace, read-only for the run (plan/trusted.rs `demote`).
            if t.tree.is_none() && ws.starts_with(&t.target) && t.target.is_dir() {
                return home_flag(format!(
                    "{} lies in {}, which the home reaches as {}",
                    ws.display(),
                    t.target.display(),
                    t.via
                ));
            }
        }
    }
    None
}
