//! The user's and the workspace's configuration files read as policy
//! layers, and whether the workspace's file is trusted (its widening
//! settings used) or only narrows ([`crate::policy::untrusted`]).

use std::path::Path;

use crate::policy::config::{ConfigError, RunConfig};
use crate::policy::granted::GrantLog;
use crate::policy::layers::Layer;
use crate::policy::trust::TrustStore;

impl Layer {
    /// The user's config file (`~/.config/skarn/config.toml`), then the
    /// workspace's `skarn.toml`, as layers (absent files give none), and
    /// notes. The workspace file may come from a cloned repository or the
    /// agent itself: unless `trust` holds its exact content (`skarn
    /// trust`), only its narrowing settings apply ([`crate::policy::untrusted`])
    /// and a note names the ones ignored. A file that earlier sandboxed
    /// runs could have written (`granted`: see [`crate::policy::granted`]) is
    /// treated the same way, with a note saying why.
    pub fn config_files(
        workspace: &Path,
        home: Option<&Path>,
        granted: &GrantLog,
        trust: &TrustStore,
    ) -> Result<(Vec<Layer>, Vec<String>), ConfigError> {
        let mut out = Vec::new();
        let mut notes = Vec::new();
        let user_file = home.map(|h| h.join(".config/skarn/config.toml"));
        if user_file.as_deref().is_some_and(hard_linked) {
            // Another name of the same file may lie in a directory a run
            // can write: not trusted.
            notes.push(format!(
                "warning: {} is not used: it has other names (hard links), and one may lie \
                 where a sandboxed command can write it",
                user_file
                    .as_deref()
                    .map(Path::display)
                    .map_or_else(String::new, |d| d.to_string())
            ));
        } else if let Some(h) = home
            && let Some(c) = RunConfig::load(&h.join(".config/skarn/config.toml"), h)?
        {
            out.push(Layer::from_config(&c, home)?);
        }
        let file = workspace.join("skarn.toml");
        let Some(c) = RunConfig::load(&file, workspace)? else {
            return Ok((out, notes));
        };
        let mut layer = Layer::from_config(&c, home)?;
        // Only the user's own file (or the flag) may keep a workspace the
        // home's configuration names writable: never the workspace's.
        if layer
            .trust_home_config_workspace
            .take()
            .is_some_and(|v| v.value)
        {
            notes.push(format!(
                "warning: {}: trust_home_config_workspace is ignored: only \
                 ~/.config/skarn/config.toml or --trust-home-config-workspace may set it",
                file.display()
            ));
        }
        if layer.state_keep.take().is_some() {
            notes.push(format!(
                "warning: {}: state_keep is ignored: only ~/.config/skarn/config.toml may set it",
                file.display()
            ));
        }
        if layer.scan_cache_max.take().is_some() {
            notes.push(format!(
                "warning: {}: scan_cache_max is ignored: only ~/.config/skarn/config.toml may set it",
                file.display()
            ));
        }
        if trust.trusts(&file, c.text.as_bytes()) {
            out.push(layer);
            return Ok((out, notes));
        }
        let (narrowed, dropped) = crate::policy::untrusted::narrow(layer, &out);
        out.push(narrowed);
        if let Some(root) = granted.writable_by_earlier_runs(&file) {
            notes.push(format!(
                "warning: {}: its settings that widen the sandbox are not used: it lies inside \
                 {}, which an earlier sandboxed run could write, so a command may have put it \
                 there (the record of such directories: {}); check it and run `skarn trust {}` \
                 to use it",
                file.display(),
                root.display(),
                granted
                    .file
                    .as_deref()
                    .map_or_else(|| "none".into(), |f| f.display().to_string()),
                file.display(),
            ));
        } else if !dropped.is_empty() {
            notes.push(untrusted_note(&file, &dropped));
        }
        Ok((out, notes))
    }
}

/// The note for an untrusted file whose widening settings were ignored.
pub(crate) fn untrusted_note(file: &Path, dropped: &[String]) -> String {
    format!(
        "warning: {} is not trusted: its settings that widen the sandbox ({}) are ignored \
         (narrowing ones apply); if you wrote it, check it and run `skarn trust {}`",
        file.display(),
        dropped.join(", "),
        file.display()
    )
}

/// Whether `p` is a file with more than one name.
fn hard_linked(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.nlink() > 1)
    }
    #[cfg(not(unix))]
    {
        let _ = p;
        false
    }
}
