//! Codex's own review of hooks (attack atk24i F12): Codex runs a hook of
//! the user's `config.toml` only once the user has approved that exact hook
//! in Codex (`/hooks`), which Codex records as
//! `[hooks.state."<file>:pre_tool_use:<group>:<handler>"] trusted_hash`.
//! A hook `init` adds (or rewrites after an upgrade moved skarn) is not run
//! until then, and Codex runs Bash and apply_patch without it. `init` says
//! what to do; `doctor` says when skarn's hook has no approval on record.

use std::path::Path;

/// What `init --client codex` tells the user after writing the hook.
pub const APPROVE: &str = "Codex runs a hook from ~/.codex/config.toml only after you approve \
    it: start codex, type /hooks and trust skarn's PreToolUse hook (matcher \
    ^(Bash|apply_patch)$). Until then Codex runs Bash and apply_patch without it. Any change \
    to the hook (running `skarn init --client codex` again after skarn moved) needs the \
    approval again; `skarn doctor` says when none is on record";

/// Why skarn's hook in Codex's `config.toml` (`path`, holding `text`) does
/// not run (`None`: not installed, or approved and enabled on record).
/// Codex compares the recorded hash with the hook's; a hash recorded for
/// an earlier form of the hook is not detected here.
// (`skarn doctor`'s Codex check is Linux-only for now.)
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub fn not_approved(path: &Path, text: &str) -> Option<String> {
    let doc: toml::Table = text.parse().ok()?;
    let hooks = doc.get("hooks")?.as_table()?;
    let groups = hooks.get("PreToolUse")?.as_array()?;
    let (g, h) = groups.iter().enumerate().find_map(|(g, group)| {
        let list = group.get("hooks")?.as_array()?;
        list.iter()
            .position(|h| {
                h.get("command")
                    .and_then(toml::Value::as_str)
                    .is_some_and(|c| crate::cmd::hook::is_installed_hook(c, "codex"))
            })
            .map(|h| (g, h))
    })?;
    let key = format!("{}:pre_tool_use:{g}:{h}", path.display());
    let state = hooks
        .get("state")
        .and_then(toml::Value::as_table)
        .and_then(|s| s.get(&key))
        .and_then(toml::Value::as_table);
    let approved = state.is_some_and(|s| s.get("trusted_hash").is_some());
    let enabled =
        state.is_none_or(|s| s.get("enabled").and_then(toml::Value::as_bool) != Some(false));
    if !approved {
        Some(format!(
            "{}: Codex has no approval on record for skarn's hook ({key}): Codex does not run \
             it, so Bash and apply_patch run without it; start codex, type /hooks and trust it",
            path.display()
        ))
    } else if !enabled {
        Some(format!(
            "{}: skarn's hook is disabled in Codex ({key} enabled = false): Bash and \
             apply_patch run without it; enable it with /hooks",
            path.display()
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_without_a_recorded_approval_is_named() {
        let p = Path::new("/h/.codex/config.toml");
        let cmd = crate::cmd::hook::installed_command("/opt/skarn", "codex");
        let hook = format!(
            "[[hooks.PreToolUse]]\nmatcher = \"x\"\n[[hooks.PreToolUse.hooks]]\n\
             type = \"command\"\ncommand = {}\n",
            toml::Value::String(cmd)
        );
        assert!(not_approved(p, "").is_none());
        assert!(not_approved(p, &hook).unwrap().contains("pre_tool_use:0:0"));
        let ok = format!(
            "{hook}[hooks.state.\"/h/.codex/config.toml:pre_tool_use:0:0\"]\n\
             trusted_hash = \"sha256:0\"\n"
        );
        assert!(not_approved(p, &ok).is_none());
        let off = format!("{ok}enabled = false\n");
        assert!(not_approved(p, &off).unwrap().contains("disabled"));
    }
}
