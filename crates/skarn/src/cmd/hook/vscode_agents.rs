//! VS Code's custom agents (`.github/agents/*.agent.md`; attack atk24r
//! F8): their frontmatter `hooks:` run on the host while the agent is
//! active, as Claude Code's subagents' do. The VS Code hook judges them
//! like Claude Code's files (refusing every call while one is neither
//! wrapped nor trusted); `skarn run` and the file guard keep the
//! directory as agent configuration.

use std::path::{Path, PathBuf};

/// Most files looked at.
const MAX_FILES: usize = 512;

/// The custom agent files of the project `ws` (links followed, as VS
/// Code reads them); past the bound the directory itself, which counts
/// as unconfined.
pub fn files(ws: &Path) -> Vec<PathBuf> {
    let dir = ws.join(".github/agents");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (n, e) in rd.flatten().enumerate() {
        if n >= MAX_FILES {
            out.push(dir);
            break;
        }
        let p = e.path();
        if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
    out
}
