//! Issue 24, attack pass atk24g/h: each finding made as the attack made
//! it and judged from outside (the hook's exit status and JSON as the
//! agent reads them; the file outside not written).

use std::path::Path;

use serde_json::json;

use crate::agent_atk24c::{claude_file, hook};
use crate::common::*;
use skarn_test_support::TempDir;

/// Write `path` (relative to `ws`) as a tool that hands it to the kernel
/// unchanged does, unless the hook refused.
fn write_if_allowed(refused: bool, ws: &Path, path: &str) {
    if !refused {
        let _ = std::fs::write(ws.join(path), "planted\n");
    }
}

/// F6: `link/..` is the parent of where the link leads (the kernel's
/// reading, Codex's `apply_patch`), not the directory holding the link.
/// The guard read it as text: `l/../x` with `l -> outside/deep` passed as
/// the workspace's own `x` and the write landed outside; likewise a
/// top-level protected name reached through a link one directory down.
#[test]
fn dot_dot_after_a_link_is_read_as_the_kernel_reads_it() {
    let t = TempDir::new("atk24g_dotdot");
    let (ws, home, out) = (t.dir("ws"), t.dir("home"), t.dir("out"));
    std::fs::create_dir_all(out.join("deep")).unwrap();
    std::os::unix::fs::symlink(out.join("deep"), ws.join("l")).unwrap();
    // Claude Code's Write.
    let w = claude_file(
        "Write",
        json!({"file_path": "l/../planted.sh", "content": "id\n"}),
        &ws,
        &home,
        &[],
    );
    write_if_allowed(w.is_some(), &ws, "l/../planted.sh");
    assert!(!out.join("planted.sh").exists(), "written outside: {w:?}");
    assert!(w.is_some_and(|w| w.contains(&out.display().to_string())));
    // Codex's apply_patch: exit 2 is its refusal.
    let patch = "*** Begin Patch\n*** Add File: l/../planted2.sh\n+id\n*** End Patch\n";
    let i = json!({"hook_event_name": "PreToolUse", "tool_name": "apply_patch", "cwd": ws,
                   "tool_input": {"command": patch}});
    let o = hook(&["codex"], &i.to_string(), &home, &ws);
    write_if_allowed(code(&o) == 2, &ws, "l/../planted2.sh");
    assert!(!out.join("planted2.sh").exists(), "{o:?}");
    assert_eq!(code(&o), 2, "{o:?}");
    // Inside the workspace, with the boundary off: a name protected only
    // at the top, reached as `sub/l/..` with `l -> ../b`.
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(ws.join("b")).unwrap();
    std::os::unix::fs::symlink("../b", ws.join("sub/l")).unwrap();
    let p = "sub/l/../.pre-commit-config.yaml";
    let w = claude_file(
        "Write",
        json!({"file_path": p, "content": "repos: []\n"}),
        &ws,
        &home,
        &["--no-file-boundary"],
    );
    write_if_allowed(w.is_some(), &ws, p);
    assert!(!ws.join(".pre-commit-config.yaml").exists(), "{w:?}");
    assert!(
        w.as_deref().is_some_and(|w| w.contains("protected")),
        "{w:?}"
    );
    // Nothing against a plain file, nor against `..` that stays inside.
    assert_eq!(
        claude_file(
            "Write",
            json!({"file_path": "sub/../src/a.rs", "content": ""}),
            &ws,
            &home,
            &[]
        ),
        None
    );
}
