//! Protected files whose protection lapsed during a run.
//!
//! A read-only bind sits on a file's name; when another process on the
//! host replaces that file by a rename (`git config`, `git push -u`, an
//! editor's atomic save), the kernel detaches the bind in every other mount
//! namespace, and from then on the sandbox can write the new file. The
//! helper snapshots each protected regular file before the run and checks
//! it after: a git configuration that gained a setting that runs code is
//! restored (the changed copy is kept beside it for review); any other
//! protected file replaced and changed during the run is named on stderr.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Largest file snapshotted.
const MAX_SNAPSHOT: u64 = 1 << 20;

/// One protected file as it was before the run.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Snapshot {
    path: PathBuf,
    ino: u64,
    dev: u64,
    /// Its bytes (git reads configuration as bytes; a Latin-1 name is
    /// not UTF-8, and a restore must give back exactly what was there).
    bytes: Option<Vec<u8>>,
}

/// When the earliest other live run in this workspace started (set once
/// by the helper before [`snapshot`]).
static OTHERS_SINCE: std::sync::OnceLock<Option<std::time::SystemTime>> =
    std::sync::OnceLock::new();

/// Record when the earliest other live run whose roots overlap this run's
/// started ([`crate::protect::run_record::live_since`]): [`snapshot`]
/// leaves out the files changed since (they may be that run's plants,
/// attack 24c F4: a snapshot is what a lapse restores).
pub(crate) fn other_runs_since(t: Option<std::time::SystemTime>) {
    let _ = OTHERS_SINCE.set(t);
}

/// Changed at or after `since` (status-change time: a rename or a write
/// sets it, `touch -d` cannot set it back).
fn changed_since(md: &std::fs::Metadata, since: std::time::SystemTime) -> bool {
    let ctime = std::time::UNIX_EPOCH
        + std::time::Duration::new(
            u64::try_from(md.ctime()).unwrap_or(0),
            u32::try_from(md.ctime_nsec()).unwrap_or(0),
        );
    ctime >= since
}

/// Snapshot the existing regular files among `paths`, leaving out those
/// changed since another live run started ([`other_runs_since`]).
pub fn snapshot(paths: &[PathBuf]) -> Vec<Snapshot> {
    snapshot_unless_since(paths, OTHERS_SINCE.get().copied().flatten())
}

fn snapshot_unless_since(paths: &[PathBuf], since: Option<std::time::SystemTime>) -> Vec<Snapshot> {
    paths
        .iter()
        .filter_map(|p| {
            let md = std::fs::symlink_metadata(p).ok()?;
            if !md.is_file() || since.is_some_and(|t| changed_since(&md, t)) {
                return None;
            }
            let bytes = (md.len() <= MAX_SNAPSHOT)
                .then(|| std::fs::read(p).ok())
                .flatten();
            Some(Snapshot {
                path: p.clone(),
                ino: md.ino(),
                dev: md.dev(),
                bytes,
            })
        })
        .collect()
}

/// Whether a git configuration key makes git run a program.
pub fn runs_code(key: &str, value: Option<&str>) -> bool {
    let k = key.to_ascii_lowercase();
    let last = k.rsplit('.').next().unwrap_or("");
    let first = k.split('.').next().unwrap_or("");
    matches!(
        k.as_str(),
        "core.fsmonitor"
            | "core.hookspath"
            | "core.sshcommand"
            | "core.pager"
            | "core.editor"
            | "core.askpass"
            | "core.gitproxy"
            | "core.worktree"
            | "sequence.editor"
            | "gpg.program"
            | "credential.helper"
            | "include.path"
            | "uploadpack.packobjectshook"
            | "extensions.worktreeconfig"
    ) || (first == "alias" && value.is_some_and(|v| v.trim_start().starts_with('!')))
        || (first == "filter" && matches!(last, "clean" | "smudge" | "process"))
        || (first == "diff" && matches!(last, "textconv" | "command"))
        || (first == "merge" && last == "driver")
        || (first == "includeif" && last == "path")
        || (first == "gpg" && last == "program")
        || (first == "credential" && last == "helper")
        || (first == "remote" && matches!(last, "uploadpack" | "receivepack" | "proxy"))
        || (first == "pager")
}

/// Entries not on the allow-list of settings that run nothing (see
/// [`crate::linux::staging::allowed_key`]): an addition of any of them while the
/// protection had lapsed is undone.
fn code_entries(text: &str) -> Vec<String> {
    let p = crate::protect::git::gitconfig::parse(text);
    let mut out: Vec<String> = p
        .items
        .into_iter()
        .filter(|i| {
            !crate::linux::staging::allowed_key(i) || runs_code(&i.key(), i.value.as_deref())
        })
        .map(|i| format!("{}={}", i.key(), i.value.unwrap_or_default()))
        .collect();
    if !p.bad_lines.is_empty() {
        out.push(format!("unparsable lines {:?}", p.bad_lines));
    }
    out
}

fn is_git_config(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    matches!(name, "config" | "config.worktree")
        && p.components()
            .any(|c| c.as_os_str() == ".git" || c.as_os_str() == "worktrees")
}

/// Check the snapshots after the run; returns one warning per lapse.
pub fn check(snaps: &[Snapshot]) -> Vec<String> {
    let mut out = Vec::new();
    for s in snaps {
        let Ok(md) = std::fs::symlink_metadata(&s.path) else {
            continue;
        };
        if md.ino() == s.ino && md.dev() == s.dev {
            continue; // same inode: the read-only bind held
        }
        let now = std::fs::read(&s.path).ok();
        if now == s.bytes {
            continue;
        }
        let (Some(before), Some(after)) = (&s.bytes, &now) else {
            out.push(format!(
                "{} was replaced during the run (its read-only protection lapsed from then \
                 on); review it",
                s.path.display()
            ));
            continue;
        };
        if is_git_config(&s.path) {
            let old = code_entries(&String::from_utf8_lossy(before));
            let added: Vec<String> = code_entries(&String::from_utf8_lossy(after))
                .into_iter()
                .filter(|e| !old.contains(e))
                .collect();
            // Bytes that run code themselves are never written back
            // (they may be another run's plant, attack 24c F4).
            let before_runs: Vec<String> =
                crate::protect::git::gitconfig::parse(&String::from_utf8_lossy(before))
                    .items
                    .into_iter()
                    .filter(|i| runs_code(&i.key(), i.value.as_deref()))
                    .map(|i| format!("{}={}", i.key(), i.value.unwrap_or_default()))
                    .collect();
            if !added.is_empty() && !before_runs.is_empty() {
                let kept = crate::protect::set_aside::set_aside(&s.path, "skarn-rejected");
                let old = s.path.with_file_name(format!(
                    "{}.skarn-before-{}",
                    s.path.file_name().unwrap_or_default().to_string_lossy(),
                    crate::protect::set_aside::random_suffix()
                ));
                let saved = write_new(&old, before);
                out.push(format!(
                    "{} was replaced during the run and gained settings outside the allow-list \
                     ({}); the version from before the run runs programs too ({}), so it is not \
                     put back either: the changed one {}; the earlier one {}. Review both \
                     before running git there",
                    s.path.display(),
                    added.join(", "),
                    before_runs.join(", "),
                    kept.describe("review it"),
                    if saved {
                        format!("is kept as {}", old.display())
                    } else {
                        "could not be kept".to_string()
                    }
                ));
                continue;
            }
            if !added.is_empty() {
                let kept = crate::protect::set_aside::set_aside(&s.path, "skarn-rejected");
                let restored = !matches!(kept, crate::protect::set_aside::Aside::Left(_))
                    && std::fs::write(&s.path, before).is_ok();
                out.push(format!(
                    "{} was replaced during the run and gained settings outside the allow-list ({}); \
                     {}",
                    s.path.display(),
                    added.join(", "),
                    if restored {
                        format!(
                            "the version from before the run is restored; the changed one: {}",
                            kept.describe("review it")
                        )
                    } else {
                        "it could not be restored: review it before running git".to_string()
                    }
                ));
                continue;
            }
        }
        out.push(format!(
            "{} was replaced during the run (its read-only protection lapsed from then on) \
             and changed; review it",
            s.path.display()
        ));
    }
    out
}

/// Write `bytes` to a new file `p` (never through an existing name).
fn write_new(p: &Path, bytes: &[u8]) -> bool {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(p)
        .and_then(|mut f| f.write_all(bytes))
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_running_keys() {
        assert!(runs_code("core.fsmonitor", Some("x")));
        assert!(runs_code("filter.lfs.smudge", Some("x")));
        assert!(runs_code("alias.st", Some("!sh -c x")));
        assert!(!runs_code("alias.st", Some("status")));
        assert!(!runs_code("user.name", Some("A")));
        assert!(!runs_code("remote.origin.url", Some("u")));
    }

    #[test]
    fn replaced_git_config_with_new_hooks_is_restored() {
        let tmp = skarn_test_support::TempDir::new("lapse");
        let d = tmp.path().to_path_buf();
        std::fs::create_dir_all(d.join(".git")).unwrap();
        let cfg = d.join(".git/config");
        std::fs::write(&cfg, "[core]\n\tbare = false\n").unwrap();
        let snaps = snapshot(std::slice::from_ref(&cfg));
        // The host replaces it (rename), then the command appends a hook.
        std::fs::write(
            d.join("tmp"),
            "[core]\n\tbare = false\n[user]\n\tname = x\n",
        )
        .unwrap();
        std::fs::rename(d.join("tmp"), &cfg).unwrap();
        let mut f = std::fs::OpenOptions::new().append(true).open(&cfg).unwrap();
        std::io::Write::write_all(&mut f, b"[core]\n\tfsmonitor = touch /tmp/p\n").unwrap();
        let w = check(&snaps);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("core.fsmonitor"), "{}", w[0]);
        assert_eq!(
            std::fs::read_to_string(&cfg).unwrap(),
            "[core]\n\tbare = false\n"
        );
        assert!(
            std::fs::read_dir(d.join(".git"))
                .unwrap()
                .flatten()
                .any(|e| e
                    .file_name()
                    .to_string_lossy()
                    .starts_with("config.skarn-rejected-"))
        );
        // Unchanged inode: nothing to say.
        assert!(check(&snapshot(std::slice::from_ref(&cfg))).is_empty());
    }

    /// Attack 24c F4: a snapshot that itself runs code (another live
    /// run's plant taken for the user's) is never written back.
    #[test]
    fn a_snapshot_that_runs_code_is_not_restored() {
        let tmp = skarn_test_support::TempDir::new("lapse-planted");
        let d = tmp.path().to_path_buf();
        std::fs::create_dir_all(d.join("pkg/.git")).unwrap();
        let cfg = d.join("pkg/.git/config");
        std::fs::write(&cfg, "[core]\n\tfsmonitor = echo A-PLANT\n").unwrap();
        let snaps = snapshot_unless_since(std::slice::from_ref(&cfg), None);
        assert_eq!(snaps.len(), 1);
        std::fs::write(d.join("tmp"), "[core]\n\tfsmonitor = echo B-PLANT\n").unwrap();
        std::fs::rename(d.join("tmp"), &cfg).unwrap();
        let w = check(&snaps);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("not put back"), "{}", w[0]);
        let now = std::fs::read_to_string(&cfg).unwrap_or_default();
        assert!(!now.contains("fsmonitor"), "{now}");
    }

    /// A file changed since another live run started is not snapshotted.
    #[test]
    fn files_changed_since_another_run_started_are_not_snapshotted() {
        let tmp = skarn_test_support::TempDir::new("lapse-since");
        let d = tmp.path().to_path_buf();
        let (old, new) = (d.join("old"), d.join("new"));
        std::fs::write(&old, "x").unwrap();
        let md = std::fs::metadata(&old).unwrap();
        let t = std::time::UNIX_EPOCH
            + std::time::Duration::new(md.ctime() as u64, md.ctime_nsec() as u32 + 1);
        std::fs::write(&new, "y").unwrap();
        // (Stamp `new` after `t` whatever the clock's granularity.)
        let later = std::fs::metadata(&new).unwrap();
        if !changed_since(&later, t) {
            std::thread::sleep(std::time::Duration::from_millis(20));
            std::fs::rename(&new, d.join("n2")).unwrap();
            std::fs::rename(d.join("n2"), &new).unwrap();
        }
        let s = snapshot_unless_since(&[old.clone(), new.clone()], Some(t));
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].path, old);
        assert_eq!(snapshot_unless_since(&[old, new], None).len(), 2);
    }

    #[test]
    fn configurations_that_are_not_utf8_are_compared_and_restored_as_bytes() {
        let tmp = skarn_test_support::TempDir::new("lapse-latin1");
        let d = tmp.path().to_path_buf();
        std::fs::create_dir_all(d.join(".git")).unwrap();
        let cfg = d.join(".git/config");
        let original: &[u8] = b"[user]\n\tname = Jos\xe9\n";
        std::fs::write(&cfg, original).unwrap();
        let snaps = snapshot(std::slice::from_ref(&cfg));
        let mut planted = original.to_vec();
        planted.extend_from_slice(b"# \xff\n[core]\n\tfsmonitor = touch /tmp/p\n");
        std::fs::write(d.join("tmp"), &planted).unwrap();
        std::fs::rename(d.join("tmp"), &cfg).unwrap();
        let w = check(&snaps);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("core.fsmonitor"), "{}", w[0]);
        assert_eq!(
            std::fs::read(&cfg).unwrap(),
            original,
            "restored byte for byte"
        );
    }
}
