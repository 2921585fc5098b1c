//! The file guard against a path that changes under it (attack 24 F2,
//! ADR 0147). The agent's file tool writes in the agent's own process,
//! after the hook answered, following whatever links are there then; a
//! sandboxed command may swap any name of its writable area for a link
//! between the two. So the guard:
//!
//! - refuses while a sandboxed run whose writable area the path touches
//!   (as written, or at any link it passes through) is still alive
//!   ([`skarn_sandbox::protect::run_record::live`]: a run's record stays locked
//!   until no process of its sandbox is left). With no confined process
//!   alive, nothing can swap the path before the write;
//! - refuses a path that leaves the workspace through a link inside it
//!   (a link left there by an earlier run, or one of the project's);
//! - first runs the pending check of a run killed before its own
//!   ([`skarn_sandbox::linux::helper::dead_runs::catch_up`], attack 24 F4).

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use super::file_paths::{MAX_LINKS, fold};

/// Where following `p` one link at a time goes: every path passed
/// through (`p` itself, then each link's target with the rest of the
/// path), the places of the links followed, and the end.
#[derive(Debug, Default)]
pub struct Trail {
    /// `p` and each intermediate full path.
    pub steps: Vec<PathBuf>,
    /// The links followed.
    pub links: Vec<PathBuf>,
    /// Where it ends (`None`: more than [`MAX_LINKS`] hops).
    pub end: Option<PathBuf>,
}

/// Follow `p` (absolute) one component and one link at a time.
pub fn trail(p: &Path) -> Trail {
    let mut t = Trail {
        steps: vec![p.to_path_buf()],
        ..Trail::default()
    };
    let mut todo: Vec<OsString> = parts(p);
    todo.reverse();
    let mut acc = PathBuf::from("/");
    let mut hops = 0;
    while let Some(c) = todo.pop() {
        if c == ".." {
            acc.pop();
            continue;
        }
        if c == "." || c == "/" {
            continue;
        }
        let next = acc.join(&c);
        let Ok(target) = std::fs::read_link(&next) else {
            acc = next;
            continue;
        };
        hops += 1;
        if hops > MAX_LINKS {
            return t;
        }
        t.links.push(next);
        let target = if target.is_absolute() {
            target
        } else {
            acc.join(target)
        };
        let mut rest: Vec<OsString> = parts(&target);
        rest.reverse();
        let mut full = skarn_sandbox::policy::config::normalize(&target);
        for r in todo.iter().rev() {
            full.push(r);
        }
        t.steps
            .push(skarn_sandbox::policy::config::normalize(&full));
        // Start again from the root with the target, then the rest.
        todo.extend(rest);
        acc = PathBuf::from("/");
    }
    t.end = Some(acc);
    t
}

fn parts(p: &Path) -> Vec<OsString> {
    p.components()
        .map(|c| match c {
            Component::Normal(n) => n.to_owned(),
            Component::ParentDir => "..".into(),
            _ => ".".into(),
        })
        .collect()
}

/// `p` lies in one of `dirs` (by name, as [`fold`] compares).
fn inside(p: &Path, dirs: &[PathBuf]) -> bool {
    dirs.iter().any(|d| fold(p).starts_with(fold(d)))
}

/// Why the path `abs` (absolute, as written) may not be written: it
/// leaves the workspace (`ws_names`: its given and real names) through
/// a link inside it.
pub fn link_out(abs: &Path, ws_names: &[PathBuf]) -> Option<String> {
    let t = trail(abs);
    let Some(end) = &t.end else {
        return None; // a loop: refused by the caller's resolution
    };
    let through = t.links.iter().find(|l| inside(l, ws_names))?;
    if inside(end, ws_names) {
        return None;
    }
    Some(format!(
        "{} passes through the link {} inside the workspace and leads to {}, outside it: a \
         sandboxed command can make or change such links, so the file tools do not write \
         through them (write {} by its own name if you mean it)",
        abs.display(),
        through.display(),
        end.display(),
        end.display()
    ))
}

/// Why no file may be written at `abs` now: a sandboxed run that can
/// change a name on its way is still alive. Dead runs' pending checks run
/// first (their findings on stderr).
#[cfg(target_os = "linux")]
pub fn live_refusal(abs: &[PathBuf], ws: &Path, home: &Path) -> Option<String> {
    use skarn_sandbox::protect::run_record;
    let dir = run_record::dir(home);
    if std::fs::symlink_metadata(&dir).is_err() {
        return None; // no run recorded yet
    }
    let steps: Vec<PathBuf> = abs
        .iter()
        .flat_map(|p| {
            let t = trail(p);
            t.steps.into_iter().chain(t.end)
        })
        .collect();
    let ws = [ws.to_path_buf()];
    let touches = |i: &run_record::Info| i.overlaps(&ws) || steps.iter().any(|s| i.covers(s));
    for w in skarn_sandbox::linux::helper::dead_runs::catch_up(&dir, &touches) {
        eprintln!(
            "skarn: warning: {}",
            skarn_sandbox::protect::terminal_filter::printable(&w)
        );
    }
    let run = run_record::live(&dir)
        .into_iter()
        .find(|i| steps.iter().any(|s| i.covers(s)))?;
    let root = steps
        .iter()
        .find_map(|s| run.roots.iter().find(|r| s.starts_with(r)))
        .map_or_else(
            || run.workspace.display().to_string(),
            |r| r.display().to_string(),
        );
    if let Some(alias) = server_alias(&run.workspace) {
        // A gateway server lives as long as the agent's session (atk24i
        // F11): say so, and what ends the refusal (ADR 0242).
        return Some(format!(
            "the MCP server {alias} (sandboxed by skarn serve, helper pid {}) may write {root}, \
             where this path leads, and runs as long as the agent's session: it could swap a \
             name on the way for a link between this check and the write, so the file tools do \
             not write there while it runs. Write the file with a shell command instead (it \
             runs confined, like the server). The user can end this by narrowing the server's \
             write grant ([servers.{alias}.sandbox] write) to what it needs, away from the \
             files the agent edits, or by stopping the server",
            run.pid
        ));
    }
    Some(format!(
        "a sandboxed command (skarn run, helper pid {}, workspace {}) is still running and can \
         write {root}, where this path leads: it could swap a name on the way for a link \
         between this check and the write. Wait until it has ended (or stop it), or write the \
         file with a shell command, which runs confined",
        run.pid,
        run.workspace.display()
    ))
}

/// The alias of the gateway server whose state directory is `ws`
/// (`.../skarn-servers/<alias>-<16 hex digits>`, see
/// `skarn_gateway::state_dirs::dir_name`); `None`: a `skarn run`.
#[cfg(any(target_os = "linux", all(test, unix)))]
fn server_alias(ws: &Path) -> Option<String> {
    let parent = ws.parent()?;
    if parent.file_name()? != "skarn-servers" {
        return None;
    }
    let name = ws.file_name()?.to_str()?;
    let (alias, hex) = name.rsplit_once('-')?;
    (hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()) && !alias.is_empty())
        .then(|| skarn_sandbox::protect::terminal_filter::one_line(alias))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_gateway_servers_state_directory_names_its_alias() {
        let a = |p: &str| server_alias(Path::new(p));
        assert_eq!(
            a("/h/.local/state/skarn-servers/fs-0123456789abcdef").as_deref(),
            Some("fs")
        );
        assert_eq!(
            a("/h/.local/state/skarn-servers/my-docs-0123456789abcdef").as_deref(),
            Some("my-docs")
        );
        assert_eq!(a("/h/project"), None);
        assert_eq!(a("/h/skarn-servers/fs-123"), None);
    }

    #[test]
    fn trails_record_every_link_and_links_out_of_the_workspace_are_refused() {
        let t = skarn_test_support::TempDir::new("hook_trail");
        let d = std::fs::canonicalize(t.path()).unwrap();
        let (ws, out) = (d.join("ws"), d.join("out"));
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::os::unix::fs::symlink(&out, ws.join("d")).unwrap();
        std::os::unix::fs::symlink("sub", ws.join("in")).unwrap();
        let names = [ws.clone()];
        let tr = trail(&ws.join("d/x"));
        assert_eq!(tr.end.as_deref(), Some(out.join("x").as_path()));
        assert_eq!(tr.links, vec![ws.join("d")]);
        assert!(tr.steps.contains(&out.join("x")));
        assert!(link_out(&ws.join("d/x"), &names).is_some());
        assert!(link_out(&ws.join("in/x"), &names).is_none(), "stays inside");
        assert!(link_out(&ws.join("sub/x"), &names).is_none());
        // A link outside leading in, then out again through the workspace.
        std::os::unix::fs::symlink(ws.join("d"), d.join("via")).unwrap();
        let tr = trail(&d.join("via/y"));
        assert!(tr.steps.contains(&ws.join("d/y")), "{tr:?}");
        assert!(link_out(&d.join("via/y"), &names).is_some());
        std::os::unix::fs::symlink("loop", d.join("loop")).unwrap();
        assert!(trail(&d.join("loop/x")).end.is_none());
    }
}
