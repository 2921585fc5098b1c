//! A file tool's call judged: the paths it names against the file guard,
//! the command boundary and the live runs (shared by every agent).

use std::path::{Path, PathBuf};

use anyhow::bail;
use serde_json::Value;

use super::Ctx;

/// Why this file tool call must not run (`None`: not the hook's to refuse,
/// or the guard is off). `tool_input` must name at least one path (else
/// the call is malformed: refused); every path named is judged.
pub(super) fn file_refusal(
    tool_input: &Value,
    tool: &str,
    cwd: Option<&Value>,
    ws: &str,
    ctx: &Ctx,
    call: Option<&Value>,
) -> anyhow::Result<Option<String>> {
    if !ctx.settings.guard_files {
        return Ok(None);
    }
    if !tool_input.is_object() {
        bail!("{tool}: the tool input is not an object");
    }
    let paths = match super::super::file_targets::targets(tool_input) {
        Ok(p) => p,
        Err(why) => return Ok(Some(super::super::files::reason(tool, &why))),
    };
    if paths.is_empty() {
        bail!("{tool}: the tool input names no file path");
    }
    let cwd = cwd
        .and_then(Value::as_str)
        .filter(|c| c.starts_with('/'))
        .unwrap_or(ws);
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    // A URI (`file:///...`, `vscode-remote://...`) names a file the way
    // the checks below do not read: refused, whatever it names (atk24e
    // F10).
    if let Some(uri) = paths.iter().find(|p| p.contains("://")) {
        return Ok(Some(super::super::files::reason(
            tool,
            &format!("{uri} is a URI; name the file by its absolute path"),
        )));
    }
    if let Some(why) = paths.iter().find_map(|path| {
        super::super::files::refusal_of(
            path,
            Path::new(cwd),
            Path::new(ws),
            home.as_deref(),
            Some((tool, tool_input)),
        )
    }) {
        return Ok(Some(super::super::files::reason(tool, &why)));
    }
    // Inside what the agent's commands could write (issue 24 item 6).
    let mut boundary: Vec<PathBuf> = Vec::new();
    if ctx.settings.file_boundary {
        let roots = match super::super::file_boundary::roots(Path::new(ws), home.as_deref()) {
            Ok(r) => r,
            Err(why) => return Ok(Some(super::super::files::reason(tool, &why))),
        };
        boundary.clone_from(&roots);
        for path in &paths {
            let c =
                match super::super::file_paths::candidates(path, Path::new(cwd), home.as_deref()) {
                    Ok(c) => c,
                    Err(why) => return Ok(Some(super::super::files::reason(tool, &why))),
                };
            if let Some(why) = super::super::file_boundary::outside(&c, &roots, Path::new(ws)) {
                return Ok(Some(super::super::files::reason(tool, &why)));
            }
        }
    }
    // What the tool may write counts as a place a run may write (ADR
    // 0307): recorded before the write, for the secrets' command sources.
    if let Some(h) = home.as_deref() {
        let mut files: Vec<PathBuf> = Vec::new();
        for path in &paths {
            match super::super::file_paths::candidates(path, Path::new(cwd), Some(h)) {
                Ok(c) => files.extend(c),
                Err(why) => return Ok(Some(super::super::files::reason(tool, &why))),
            }
        }
        if let Err(why) = super::super::file_record::record(&files, Path::new(ws), &boundary, h) {
            return Ok(Some(super::super::files::reason(tool, &why)));
        }
    }
    // No sandboxed command may be alive where the write goes (attack 24
    // F2): it could swap a name for a link before the tool writes.
    #[cfg(target_os = "linux")]
    if let Some(h) = home.as_deref() {
        let abs: Vec<PathBuf> = paths
            .iter()
            .filter_map(|p| super::super::file_paths::candidates(p, Path::new(cwd), Some(h)).ok())
            .flatten()
            .collect();
        // A run starting before the tool writes must not change the path
        // either (atk24j F7, ADR 0244): the lease is recorded first, then
        // live runs are looked for. A run reads the leases again once its
        // own record exists, so one of the two always sees the other.
        let ttl = ctx.settings.edit_lease;
        if let Err(why) = super::super::file_lease::record(&paths, Path::new(cwd), h, call, ttl) {
            return Ok(Some(format!(
                "skarn: {tool} refused for now: {why}; without it a sandboxed command started \
                 before the write could swap a name on the way for a link."
            )));
        }
        if let Some(why) = super::super::file_runs::live_refusal(&abs, Path::new(ws), h) {
            super::super::file_lease::release_paths(&paths, Path::new(cwd), h, call);
            return Ok(Some(format!("skarn: {tool} refused for now: {why}.")));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = call;
    Ok(None)
}
