//! Agent configuration written as Markdown (attack atk24r F7, F8; atk24s
//! F5): Claude Code's skills, subagents and slash commands (their
//! frontmatter `hooks:` and `mcpServers:`, their `` !`cmd` `` lines and
//! ```` ```! ```` fences) and VS Code's custom agents (`*.agent.md`,
//! frontmatter `hooks:`), in the folders VS Code's location settings
//! name too. What their commands name (`./scripts/ctx.sh`, `bash
//! tools/fmt.sh`, `node tools/srv.js`) runs on the host when the user
//! trusts the entry, so [`crate::protect::config_named`] keeps those files
//! read-only in runs and refused to the file tools, as for a settings
//! file's hook; and a folder a location setting names is agent
//! configuration as `.github/agents` is. Only the command text is read
//! (the frontmatter without its prose keys, and the shell lines), never
//! the prose: a skill's text naming `src/main.rs` does not freeze it.
//! Read on the host, bounded; nothing of the project is executed.

use std::path::{Path, PathBuf};

/// Markdown files read at most (per call).
const MAX_FILES: usize = 512;
/// Deepest directory walked below a configuration folder.
const MAX_DEPTH: usize = 8;
/// Bytes read per file, at most.
const MAX_BYTES: u64 = 1 << 20;

/// VS Code settings naming folders whose files it loads as agent
/// configuration that runs commands: custom agents (frontmatter hooks)
/// and hook files.
pub const VSCODE_LOCATION_KEYS: &[&str] = &["chat.agentFilesLocations", "chat.hookFilesLocations"];

/// Frontmatter keys whose values are prose, not commands.
const PROSE_KEYS: &[&str] = &[
    "name",
    "description",
    "argument-hint",
    "when-to-use",
    "when_to_use",
    "label",
    "prompt",
    "title",
    "model",
    "color",
];

/// The user's VS Code settings files (each build's, each profile's).
pub fn vscode_user_settings(home: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for user in vscode_user_dirs(home) {
        out.push(user.join("settings.json"));
        if let Ok(rd) = std::fs::read_dir(user.join("profiles")) {
            out.extend(
                rd.flatten()
                    .take(64)
                    .map(|e| e.path().join("settings.json")),
            );
        }
    }
    out
}

/// The `User` folders of VS Code's builds.
pub fn vscode_user_dirs(home: &Path) -> Vec<PathBuf> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".config"));
    let mut out = Vec::new();
    for base in [xdg, home.join("Library/Application Support")] {
        for product in ["Code", "Code - Insiders", "VSCodium", "Code - OSS"] {
            out.push(base.join(product).join("User"));
        }
    }
    out
}

/// A folder VS Code's location settings make it load, or a setting skarn
/// cannot read (then what it names is unknown: the caller fails closed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// (the folder, the settings file naming it).
    Dir(PathBuf, PathBuf),
    /// (the settings file, why).
    Unreadable(PathBuf, String),
}

/// The folders VS Code loads custom agents (and hook files) from for the
/// workspace folder `ws`: `.github/agents`, `.github/hooks`, and those the
/// workspace's `.vscode/settings.json` and the user's settings name under
/// [`VSCODE_LOCATION_KEYS`] (JSON with comments, as VS Code reads it;
/// relative to the workspace, `~/` from the home, absolute as written; a
/// glob taken from its last plain directory, walked whole).
pub fn vscode_locations(ws: &Path, home: Option<&Path>) -> Vec<Location> {
    let mut out = vec![
        Location::Dir(ws.join(".github/agents"), PathBuf::new()),
        Location::Dir(ws.join(".github/hooks"), PathBuf::new()),
    ];
    let mut settings = vec![ws.join(".vscode/settings.json")];
    if let Some(h) = home {
        settings.extend(vscode_user_settings(h));
    }
    for s in settings {
        let Ok(m) = std::fs::metadata(&s) else {
            continue;
        };
        let text = match std::fs::read(&s) {
            Ok(b) if m.len() <= MAX_BYTES => String::from_utf8_lossy(&b).into_owned(),
            _ => {
                out.push(Location::Unreadable(s, "too large or unreadable".into()));
                continue;
            }
        };
        if !VSCODE_LOCATION_KEYS.iter().any(|k| text.contains(k)) {
            continue;
        }
        let Some(v) = crate::protect::jsonc::jsonc_value(&text) else {
            out.push(Location::Unreadable(s, "not JSON with comments".into()));
            continue;
        };
        for key in VSCODE_LOCATION_KEYS {
            let named: Vec<String> = match v.get(*key) {
                None => continue,
                // `{"folder": true}`; anything but `false` counts.
                Some(serde_json::Value::Object(o)) => o
                    .iter()
                    .filter(|(_, on)| on.as_bool() != Some(false))
                    .map(|(k, _)| k.clone())
                    .collect(),
                Some(serde_json::Value::Array(a)) => a
                    .iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect(),
                Some(other) => {
                    out.push(Location::Unreadable(s.clone(), format!("{key} = {other}")));
                    continue;
                }
            };
            for n in named {
                match folder(&n, ws, home) {
                    Some(d) => out.push(Location::Dir(d, s.clone())),
                    None => out.push(Location::Unreadable(s.clone(), format!("{key}: {n:?}"))),
                }
            }
        }
    }
    out
}

/// The folder a location setting's entry names (a glob: its plain
/// directories before the first pattern character).
fn folder(entry: &str, ws: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let e = entry.trim();
    let e = e.strip_prefix("${workspaceFolder}").unwrap_or(e);
    let plain: Vec<&str> = e
        .split('/')
        .take_while(|c| !c.contains(['*', '?', '[', '{', '$']))
        .collect();
    let plain = plain.join("/");
    let p = if let Some(rest) = plain.strip_prefix("~/") {
        home?.join(rest)
    } else if plain == "~" {
        home?.to_path_buf()
    } else if plain.starts_with('/') {
        PathBuf::from(&plain)
    } else {
        ws.join(plain.trim_start_matches("./"))
    };
    let p = crate::policy::config::normalize(&p);
    // A setting naming the workspace itself (or `/`) would make every
    // Markdown file an agent: taken as unreadable, not walked.
    (p != ws && p.parent().is_some()).then_some(p)
}

/// The user profile's custom agent folders VS Code reads: `~/.copilot/agents`
/// and each build's `User/agents` and `User/prompts`.
pub fn vscode_user_agent_dirs(home: &Path) -> Vec<PathBuf> {
    let mut out = vec![home.join(".copilot/agents")];
    for u in vscode_user_dirs(home) {
        out.push(u.join("agents"));
        out.push(u.join("prompts"));
    }
    out
}

/// The Markdown files below `dir` (links followed, each directory once),
/// within the bounds; past them `dir` itself (the caller fails closed).
pub fn md_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((d, depth)) = stack.pop() {
        let Ok(real) = std::fs::canonicalize(&d) else {
            continue;
        };
        if seen.contains(&real) {
            continue;
        }
        seen.push(real);
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            if out.len() >= MAX_FILES || seen.len() > MAX_FILES {
                out.push(dir.to_path_buf());
                return;
            }
            let p = e.path();
            if p.is_dir() {
                if depth < MAX_DEPTH {
                    stack.push((p, depth + 1));
                } else {
                    out.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
}

/// The agent Markdown files whose commands may name files of the project
/// `base`: its `.claude/{skills,agents,commands}`, `.github/agents`, the
/// folders VS Code's settings name (those inside `base`), and the user's
/// own Claude Code skills, subagents and commands.
pub fn files(base: &Path) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let mut dirs: Vec<PathBuf> = ["skills", "agents", "commands"]
        .iter()
        .map(|d| base.join(".claude").join(d))
        .collect();
    for l in vscode_locations(base, home.as_deref()) {
        if let Location::Dir(d, _) = l
            && d.starts_with(base)
        {
            dirs.push(d);
        }
    }
    // The user's own skills, subagents and commands: their lines and
    // hooks run in the project, so their relative words name its files.
    let user = std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".claude")));
    if let Some(u) = user {
        dirs.extend(["skills", "agents", "commands"].iter().map(|d| u.join(d)));
    }
    let mut out = Vec::new();
    for d in dirs {
        md_files(&d, &mut out);
    }
    out.retain(|f| f.is_file());
    out
}

/// The command text of an agent Markdown file: its frontmatter without
/// the prose keys, and its shell lines (`` !`...` `` to the closing
/// backtick, ```` ```! ```` fences to the closing fence), one per line.
pub fn command_text(text: &str) -> String {
    let mut out = String::new();
    let mut body = text;
    if let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    {
        let end = rest.find("\n---").unwrap_or(rest.len());
        let mut skip_indent: Option<usize> = None;
        for line in rest[..end].lines() {
            let indent = line.len() - line.trim_start().len();
            if let Some(i) = skip_indent {
                if line.trim().is_empty() || indent > i {
                    continue;
                }
                skip_indent = None;
            }
            let key = line.trim_start().trim_start_matches("- ");
            let prose = PROSE_KEYS.iter().find(|k| {
                key.strip_prefix(**k)
                    .is_some_and(|r| r.trim_start().starts_with(':'))
            });
            if prose.is_some() {
                skip_indent = Some(indent);
                continue;
            }
            out.push_str(line);
            out.push('\n');
        }
        body = &rest[end.min(rest.len())..];
    }
    // Inline lines: `!` then a backtick, to the next backtick.
    let mut rest = body;
    while let Some(i) = rest.find("!`") {
        let after = &rest[i + 2..];
        let end = after.find('`').unwrap_or(after.len());
        out.push_str(&after[..end]);
        out.push('\n');
        rest = &after[end.min(after.len())..];
        rest = rest.strip_prefix('`').unwrap_or(rest);
    }
    // Fences: "```!" to the next "```".
    let mut rest = body;
    while let Some(i) = rest.find("```!") {
        let after = &rest[i + 4..];
        let end = after.find("```").unwrap_or(after.len());
        out.push_str(&after[..end]);
        out.push('\n');
        rest = &after[end.min(after.len())..];
        rest = rest.strip_prefix("```").unwrap_or(rest);
    }
    out
}

/// The folders inside `base` VS Code's location settings (the
/// workspace's and the user's) name, each with the settings file.
pub fn location_dirs(base: &Path) -> Vec<(PathBuf, PathBuf)> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    vscode_locations(base, home.as_deref())
        .into_iter()
        .filter_map(|l| match l {
            Location::Dir(d, cfg) if !cfg.as_os_str().is_empty() && d.starts_with(base) => {
                Some((d, cfg))
            }
            _ => None,
        })
        .collect()
}

/// Each agent Markdown file of `base` with its command text (bounded).
pub fn commands(base: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for f in files(base) {
        let Ok(m) = std::fs::metadata(&f) else {
            continue;
        };
        if m.len() > MAX_BYTES {
            continue;
        }
        let Ok(b) = std::fs::read(&f) else { continue };
        let text = command_text(&String::from_utf8_lossy(&b));
        if !text.trim().is_empty() {
            out.push((f, text));
        }
    }
    out
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn only_commands_are_read() {
        let t = "---\nname: helper\ndescription: |\n  edits src/main.rs\n  and more\nhooks:\n  PostToolUse:\n    - type: command\n      command: \"./tools/fmt.sh\"\nmcpServers:\n  - docs:\n      command: node\n      args: [\"tools/srv.js\"]\n---\nEdit src/lib.rs. Status: !`./scripts/ctx.sh` and ```!\nbash scripts/y\n```\n";
        let c = command_text(t);
        for want in [
            "./tools/fmt.sh",
            "tools/srv.js",
            "./scripts/ctx.sh",
            "bash scripts/y",
        ] {
            assert!(c.contains(want), "{want}: {c}");
        }
        for not in ["src/main.rs", "src/lib.rs", "helper"] {
            assert!(!c.contains(not), "{not}: {c}");
        }
    }

    #[test]
    fn vscode_location_settings_are_read_as_vscode_reads_them() {
        let t = skarn_test_support::TempDir::new("agent-md-loc");
        let p = t.dir("p");
        t.file(
            "p/.vscode/settings.json",
            "{\n  // shared agents\n  \"chat.agentFilesLocations\": {\"tools/agents\": true, \"off\": false,},\n}\n",
        );
        let got = vscode_locations(&p, None);
        assert!(got.contains(&Location::Dir(
            p.join("tools/agents"),
            p.join(".vscode/settings.json")
        )));
        assert!(
            !got.iter()
                .any(|l| matches!(l, Location::Dir(d, _) if d.ends_with("off")))
        );
        t.file(
            "p/.vscode/settings.json",
            "{\"chat.agentFilesLocations\": 3}",
        );
        assert!(
            vscode_locations(&p, None)
                .iter()
                .any(|l| matches!(l, Location::Unreadable(..)))
        );
    }
}
