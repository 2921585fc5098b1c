//! The host's launcher list kept across runs (issue 30, ADR 0339).
//!
//! Working the list out reads every desktop entry, unit, D-Bus service
//! and cron table and resolves every link of the `PATH` directories
//! (about 28,000 `readlink` calls and 400 files here, twice a run). The
//! list is kept in skarn's state (`~/.local/state/skarn/scan-cache`,
//! hidden from every run, read and written by [`crate::state_file`])
//! with every path it was read from and that path's stamp
//! ([`crate::fact_deps`]): each directory walked or listed, each file
//! read. A later run uses it only when its inputs are the same (the
//! caller's `PATH` directories, the homes, the XDG variables, the user
//! and groups: a digest kept with it) and every stamp is unchanged (one
//! `lstat` each; up to 16 input sets kept side by side, and a list
//! checked once per `skarn run` process); anything else is a miss and the full work, whose
//! result replaces the record (not when a stamp was too recent or
//! anything could not be stamped: see [`crate::fact_deps`]).

use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::launchers::Installation;
use crate::fact_deps::{self, Deps};
use crate::state_file::{Fields, StateDir};

/// The sources whose change makes an older record another build's.
const SOURCES: &[&str] = &[
    include_str!("launcher_record.rs"),
    include_str!("launchers.rs"),
    include_str!("launcher_files.rs"),
    include_str!("opt_links.rs"),
    include_str!("../workspace_kind.rs"),
    include_str!("../../fact_deps.rs"),
];

/// Bytes of the inputs' digest.
const KEY: usize = 32;

/// The list (`work` with a fresh [`Deps`] on a miss) and whether a bound
/// was reached.
pub(super) fn cached(
    reals: &[(PathBuf, PathBuf)],
    homes: &[PathBuf],
    work: impl FnOnce(&mut Deps) -> (Vec<Installation>, bool),
) -> (Vec<Installation>, bool) {
    let dir = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .and_then(|h| StateDir::open(&h, crate::protect::home_mentions::SCAN_CACHE, &[]));
    let Some(dir) = dir else {
        return work(&mut Deps::new());
    };
    let mut parts: Vec<&[u8]> = vec![
        b"skarn launcher-list 1",
        env!("CARGO_PKG_VERSION").as_bytes(),
    ];
    parts.extend(SOURCES.iter().map(|s| s.as_bytes()));
    let key = key(reals, homes);
    // One of 16 records per build, chosen by the first hex digit of the
    // inputs' digest (`key` is hex):
    // callers with different `PATH`s (an agent's and a user's shell) keep
    // one each instead of replacing each other's on every run; a slot's
    // kept key is still compared in full.
    let slot = key.first().map_or('0', |b| char::from(*b));
    let name = format!(
        "launchers-{}-{slot}",
        crate::state_file::digest_name(&parts, 12)
    );
    if let Some(hit) = remembered(&key) {
        return hit;
    }
    let max = crate::protect::home_mentions::scan_cache_max();
    if let Some(hit) = dir.read(&name, max).and_then(|b| parse(&b, &key)) {
        remember(&key, &hit);
        return hit;
    }
    let mut deps = Deps::new();
    let found = work(&mut deps);
    if !deps.unsure()
        && let Some(bytes) = encode(&key, &deps, &found)
    {
        dir.write(&name, &bytes, max);
    }
    remember(&key, &found);
    found
}

/// Lists worked out or checked in this process, by their inputs' digest:
/// `skarn run` asks for the list twice before one run starts (the
/// workspace check, the planner's host places); only kept after
/// [`remember_lists`].
type Kept = Vec<(Vec<u8>, (Vec<Installation>, bool))>;
static REMEMBERED: std::sync::Mutex<Kept> = std::sync::Mutex::new(Vec::new());
static REMEMBERING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on a list worked out or checked in this process is reused by
/// later asks with the same inputs: for a short-lived process that starts
/// one run (`skarn run`), never a long-lived one (a gateway), whose host
/// may change.
pub fn remember_lists() {
    REMEMBERING.store(true, std::sync::atomic::Ordering::SeqCst);
}

fn remembering() -> bool {
    REMEMBERING.load(std::sync::atomic::Ordering::SeqCst)
}

fn remembered(key: &[u8]) -> Option<(Vec<Installation>, bool)> {
    if !remembering() {
        return None;
    }
    let r = REMEMBERED.lock().unwrap_or_else(|e| e.into_inner());
    r.iter().find(|(k, _)| k == key).map(|(_, l)| l.clone())
}

fn remember(key: &[u8], list: &(Vec<Installation>, bool)) {
    if remembering() {
        let mut r = REMEMBERED.lock().unwrap_or_else(|e| e.into_inner());
        r.retain(|(k, _)| k != key);
        r.push((key.to_vec(), list.clone()));
    }
}

/// A digest of everything besides the stamped paths the list depends on.
fn key(reals: &[(PathBuf, PathBuf)], homes: &[PathBuf]) -> Vec<u8> {
    let mut b: Vec<u8> = Vec::new();
    // SAFETY: geteuid and getegid have no preconditions.
    let ids = unsafe { [libc::geteuid(), libc::getegid()] };
    for id in ids {
        b.extend_from_slice(&id.to_le_bytes());
    }
    let mut groups = vec![0 as libc::gid_t; 1024];
    // SAFETY: the buffer holds `groups.len()` entries.
    let n = unsafe { libc::getgroups(groups.len() as libc::c_int, groups.as_mut_ptr()) };
    groups.truncate(usize::try_from(n).unwrap_or(0));
    b.push(if n < 0 { 1 } else { 0 });
    for g in groups {
        b.extend_from_slice(&g.to_le_bytes());
    }
    let path = |b: &mut Vec<u8>, p: &std::path::Path| {
        let _ = fact_deps::put_bytes(b, p.as_os_str().as_bytes());
    };
    for (r, d) in reals {
        path(&mut b, r);
        path(&mut b, d);
    }
    b.push(0xff);
    for h in homes {
        path(&mut b, h);
    }
    for v in ["XDG_DATA_DIRS", "XDG_CONFIG_DIRS"] {
        let _ = fact_deps::put_bytes(&mut b, std::env::var_os(v).unwrap_or_default().as_bytes());
    }
    let digest = crate::state_file::digest_name(&[&b], KEY / 2);
    digest.into_bytes()
}

fn encode(key: &[u8], deps: &Deps, found: &(Vec<Installation>, bool)) -> Option<Vec<u8>> {
    let mut out = key.to_vec();
    deps.put(&mut out)?;
    out.push(u8::from(found.1));
    out.extend_from_slice(&u32::try_from(found.0.len()).ok()?.to_le_bytes());
    for i in &found.0 {
        fact_deps::put_bytes(&mut out, i.dir.as_os_str().as_bytes())?;
        fact_deps::put_bytes(&mut out, i.via.as_bytes())?;
    }
    Some(out)
}

/// The kept list, when its key is `key` and every stamp still holds.
fn parse(b: &[u8], key: &[u8]) -> Option<(Vec<Installation>, bool)> {
    let mut r = Fields(b);
    if r.bytes(key.len())? != key {
        return None;
    }
    if !fact_deps::still(&mut r)? {
        return None;
    }
    let over = r.bytes(1)?[0] != 0;
    let n = r.u32()? as usize;
    let mut list = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        let dir = fact_deps::take_path(&mut r)?;
        let via = String::from_utf8(fact_deps::take_bytes(&mut r)?.to_vec()).ok()?;
        list.push(Installation { dir, via });
    }
    r.is_empty().then_some((list, over))
}
