//! The host's launcher files, read for the programs they start (attack
//! atk22o F12): desktop entries (`Exec=`, `TryExec=`) of every
//! `applications` directory of `$XDG_DATA_DIRS` and every `autostart`
//! directory of `$XDG_CONFIG_DIRS`, systemd system and user units
//! (`ExecStart=` and the other `Exec*=` keys, drop-ins one level down),
//! D-Bus activation files (`Exec=`) and cron tables (every absolute word
//! of a line). Only those directories are listed, one level (no tree
//! walks); bounded by [`MAX_FILES`] files of at most [`MAX_BYTES`] each.

use std::path::{Path, PathBuf};

use crate::fact_deps::{Deps, Node};

/// Files read at most, over every directory.
pub(super) const MAX_FILES: usize = 20_000;
/// Bytes read per file.
const MAX_BYTES: u64 = 256 * 1024;

/// systemd's unit directories (system and user, vendor and local).
const UNIT_DIRS: &[&str] = &[
    "/etc/systemd/system",
    "/run/systemd/system",
    "/usr/local/lib/systemd/system",
    "/usr/lib/systemd/system",
    "/lib/systemd/system",
    "/etc/systemd/user",
    "/usr/local/lib/systemd/user",
    "/usr/lib/systemd/user",
    "/lib/systemd/user",
    "/etc/xdg/systemd/user",
];

/// D-Bus activation directories besides `<XDG data dir>/dbus-1/...`.
const DBUS_DIRS: &[&str] = &["/usr/lib/dbus-1.0/services", "/etc/dbus-1/services"];

/// Cron tables and their directories.
const CRON_FILES: &[&str] = &["/etc/crontab", "/etc/anacrontab"];
const CRON_DIRS: &[&str] = &[
    "/etc/cron.d",
    "/var/spool/cron/crontabs",
    "/var/spool/cron",
    "/var/spool/anacron",
];

/// How a file names programs.
#[derive(Clone, Copy)]
enum Kind {
    /// `Exec=`/`TryExec=` (desktop entries, D-Bus services).
    Desktop,
    /// `Exec*=` keys of a unit.
    Unit,
    /// Every absolute word of every line.
    Cron,
}

/// What the launcher files name: (path as named, how), and whether the
/// file bound was reached (then the list is incomplete).
pub(super) fn named(deps: &mut Deps) -> (Vec<(PathBuf, String)>, bool) {
    let list = |var: &str, default: &str| -> Vec<PathBuf> {
        let v = std::env::var(var)
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| default.to_string());
        v.split(':')
            .filter(|d| d.starts_with('/'))
            .map(PathBuf::from)
            .take(64)
            .collect()
    };
    let data = list("XDG_DATA_DIRS", "/usr/local/share:/usr/share");
    let config = list("XDG_CONFIG_DIRS", "/etc/xdg");
    let mut dirs: Vec<(PathBuf, Kind)> = Vec::new();
    for d in &data {
        dirs.push((d.join("applications"), Kind::Desktop));
        dirs.push((d.join("dbus-1/services"), Kind::Desktop));
        dirs.push((d.join("dbus-1/system-services"), Kind::Desktop));
    }
    for d in ["/usr/share", "/usr/local/share"] {
        for s in ["applications", "dbus-1/services", "dbus-1/system-services"] {
            dirs.push((Path::new(d).join(s), Kind::Desktop));
        }
    }
    for d in &config {
        dirs.push((d.join("autostart"), Kind::Desktop));
    }
    dirs.push((PathBuf::from("/etc/xdg/autostart"), Kind::Desktop));
    dirs.extend(DBUS_DIRS.iter().map(|d| (PathBuf::from(d), Kind::Desktop)));
    dirs.extend(UNIT_DIRS.iter().map(|d| (PathBuf::from(d), Kind::Unit)));
    dirs.extend(CRON_DIRS.iter().map(|d| (PathBuf::from(d), Kind::Cron)));
    let mut files: Vec<(PathBuf, Kind)> = CRON_FILES
        .iter()
        .map(|f| (PathBuf::from(f), Kind::Cron))
        .collect();
    let mut seen_dirs: Vec<PathBuf> = Vec::new();
    let mut over = false;
    for (d, kind) in dirs {
        let Some((real, Node::Dir)) = deps.resolve(&d) else {
            continue;
        };
        if seen_dirs.contains(&real) {
            continue;
        }
        seen_dirs.push(real.clone());
        list_dir(deps, &real, &d, kind, 1, &mut files, &mut over);
    }
    let mut out = Vec::new();
    for (f, kind) in files.iter().take(MAX_FILES) {
        let Some(text) = read(deps, f) else { continue };
        for p in programs_of(&text, *kind) {
            out.push((p, format!("named by {}", f.display())));
        }
    }
    (out, over || files.len() > MAX_FILES)
}

/// The regular files of `d` (and, `depth` levels down, of its
/// subdirectories: a unit's `.d` drop-ins, `applications/<vendor>/`),
/// as named below `shown` (`d` is its resolved directory, stamped).
fn list_dir(
    deps: &mut Deps,
    d: &Path,
    shown: &Path,
    kind: Kind,
    depth: u32,
    files: &mut Vec<(PathBuf, Kind)>,
    over: &mut bool,
) {
    let Ok(rd) = std::fs::read_dir(d) else { return };
    for e in rd.flatten() {
        if files.len() > MAX_FILES {
            *over = true;
            return;
        }
        let shown = shown.join(e.file_name());
        match deps.resolve(&d.join(e.file_name())) {
            Some((_, Node::File)) => files.push((shown, kind)),
            Some((real, Node::Dir)) if depth > 0 => {
                list_dir(deps, &real, &shown, kind, depth - 1, files, over);
            }
            _ => {}
        }
    }
}

/// What `f` holds (links followed), the file stamped first.
fn read(deps: &mut Deps, f: &Path) -> Option<String> {
    use std::io::Read;
    let (real, _) = deps.resolve(f)?;
    let file = deps.open_file(&real)?;
    let mut buf = Vec::new();
    file.take(MAX_BYTES).read_to_end(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// The absolute paths a launcher file's program lines name.
fn programs_of(text: &str, kind: Kind) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let value = match kind {
            Kind::Cron => Some(line),
            Kind::Desktop => line
                .split_once('=')
                .filter(|(k, _)| matches!(k.trim(), "Exec" | "TryExec"))
                .map(|(_, v)| v),
            Kind::Unit => line
                .split_once('=')
                .filter(|(k, _)| k.trim().starts_with("Exec"))
                .map(|(_, v)| v),
        };
        let Some(v) = value else { continue };
        for w in v.split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '=')) {
            // systemd's prefixes (`-`, `@`, `:`, `+`, `!`) and quotes.
            let w = w.trim_start_matches(['-', '@', ':', '+', '!']);
            let w = w.trim_matches(|c| c == '"' || c == '\'');
            if w.starts_with('/') {
                out.push(PathBuf::from(w));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_lines_are_read() {
        let d = programs_of(
            "[Desktop Entry]\nName=/not/this\nExec=\"/opt/a/a\" %U\nTryExec=/opt/b/bin/b\n",
            Kind::Desktop,
        );
        assert_eq!(
            d,
            vec![PathBuf::from("/opt/a/a"), PathBuf::from("/opt/b/bin/b")]
        );
        let u = programs_of(
            "[Service]\nExecStart=-/opt/s/s --x\nExecStartPre=+/srv/p/pre\nUser=/x\n",
            Kind::Unit,
        );
        assert_eq!(
            u,
            vec![PathBuf::from("/opt/s/s"), PathBuf::from("/srv/p/pre")]
        );
        let c = programs_of("# c\n*/5 * * * * root cd /srv/app && ./run\n", Kind::Cron);
        assert_eq!(c, vec![PathBuf::from("/srv/app")]);
    }
}
