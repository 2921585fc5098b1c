//! Plugins Claude Code loads for one session only (`claude --plugin-dir
//! DIR`, repeatable): nothing in the hook input names them, but the
//! client is an ancestor of the hook's process, so on Linux its command
//! line is read from `/proc` (a bounded walk up the parents). Their hooks
//! count like installed plugins' ([`super::claude_peers`]). Elsewhere, or
//! when `/proc` cannot be read, none are found (docs/hook.md says so).

use std::path::PathBuf;

/// How many ancestors are looked at (the hook's shell, the client, ...).
#[cfg(target_os = "linux")]
const MAX_DEPTH: usize = 8;

/// The `--plugin-dir` directories of the hook's ancestors' command lines.
#[cfg(target_os = "linux")]
pub fn from_parents() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pid = std::process::id();
    for _ in 0..MAX_DEPTH {
        let Some(ppid) = parent(pid) else { break };
        if ppid <= 1 {
            break;
        }
        let cwd = std::fs::read_link(format!("/proc/{ppid}/cwd")).ok();
        if let Ok(cmdline) = std::fs::read(format!("/proc/{ppid}/cmdline")) {
            out.extend(plugin_dirs(&cmdline, cwd.as_deref()));
        }
        pid = ppid;
    }
    out
}

/// Elsewhere none are found (docs/hook.md says so).
#[cfg(not(target_os = "linux"))]
pub fn from_parents() -> Vec<PathBuf> {
    Vec::new()
}

/// The parent of `pid` (`/proc/PID/stat`, the field after the command's
/// closing parenthesis).
#[cfg(target_os = "linux")]
fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The `--plugin-dir DIR` and `--plugin-dir=DIR` values of a NUL-separated
/// command line, relative ones against `cwd`.
#[cfg(any(target_os = "linux", test))]
fn plugin_dirs(cmdline: &[u8], cwd: Option<&std::path::Path>) -> Vec<PathBuf> {
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = if a == "--plugin-dir" {
            it.next().cloned()
        } else {
            a.strip_prefix("--plugin-dir=").map(str::to_string)
        };
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            let p = PathBuf::from(&v);
            match (p.is_absolute(), cwd) {
                (true, _) => out.push(p),
                (false, Some(c)) => out.push(c.join(p)),
                (false, None) => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_are_read() {
        let c = b"node\0/usr/bin/claude\0--plugin-dir\0/opt/p1\0--plugin-dir=rel/p2\0-p\0x\0";
        assert_eq!(
            plugin_dirs(c, Some(std::path::Path::new("/w"))),
            vec![PathBuf::from("/opt/p1"), PathBuf::from("/w/rel/p2")]
        );
        assert!(plugin_dirs(b"claude\0--plugin-dir\0", None).is_empty());
    }
}
