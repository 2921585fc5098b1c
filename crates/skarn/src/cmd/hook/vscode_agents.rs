//! VS Code's custom agents (`*.agent.md`; attacks atk24r F8, atk24s F5):
//! their frontmatter `hooks:` run on the host while the agent is active,
//! as Claude Code's subagents' do. VS Code reads them from
//! `.github/agents`, from every folder `chat.agentFilesLocations` names
//! in the workspace's or the user's settings, and from the user profile
//! (`~/.copilot/agents`, the profile's `agents` and `prompts` folders):
//! [`skarn_sandbox::protect::agent_md`] lists them all, one list for the
//! hook's judgement, `init`'s listing and wrapping, and (for the folders
//! inside the workspace) `skarn run`'s protection and the file guard. The
//! VS Code hook refuses every call while one has a hook neither wrapped
//! nor trusted; a location setting skarn cannot read counts as such.

use std::path::{Path, PathBuf};

use skarn_sandbox::protect::agent_md::{self, Location};

/// The custom agent files VS Code loads for the workspace `ws` (links
/// followed); past the bounds a directory, and for a location setting
/// skarn cannot read the settings file's directory (both count as
/// unconfined: a directory cannot be read as a file).
pub fn files(ws: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut out = Vec::new();
    for l in agent_md::vscode_locations(ws, home) {
        match l {
            // Hook files (`.github/hooks`, `chat.hookFilesLocations`) are
            // JSON, judged with the client's hooks; agents only here.
            Location::Dir(d, _) if d.ends_with(".github/hooks") => {}
            Location::Dir(d, _) => dirs.push(d),
            Location::Unreadable(s, _) => out.push(s.parent().map_or(s.clone(), Path::to_path_buf)),
        }
    }
    if let Some(h) = home {
        dirs.extend(agent_md::vscode_user_agent_dirs(h));
    }
    for d in dirs {
        let mut found = Vec::new();
        agent_md::md_files(&d, &mut found);
        // The `prompts` folder holds prompt and instruction files too:
        // agents only (`*.agent.md`) there.
        let prompts = d.file_name().is_some_and(|n| n == "prompts");
        out.extend(
            found
                .into_iter()
                .filter(|f| !prompts || f.is_dir() || f.to_string_lossy().ends_with(".agent.md")),
        );
    }
    out.dedup();
    out
}
