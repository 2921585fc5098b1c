//! When the hook must not answer "allow" (runs confined) but ask: the
//! `[run]` policy may fail open, or the host lacks a layer `skarn run`
//! needs.

use std::path::{Path, PathBuf};

/// Whether the `[run]` policy in force (the user's file, then the
/// workspace's as `skarn run` reads it: untrusted widening ignored) says
/// `fail_closed = false`. An unreadable or invalid file counts as yes:
/// `skarn run` would refuse it anyway, and the user should see the command.
fn may_fail_open(ws: &str) -> bool {
    use skarn_sandbox::policy::granted::{GrantLog, log_path};
    use skarn_sandbox::policy::layers::Layer;
    use skarn_sandbox::policy::trust::TrustStore;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let home = home.as_deref();
    let granted = log_path(home)
        .map(|p| GrantLog::load(&p))
        .unwrap_or_default();
    match Layer::config_files(Path::new(ws), home, &granted, &TrustStore::for_home(home)) {
        Ok((layers, _)) => layers
            .iter()
            .rev()
            .find_map(|l| l.fail_closed.as_ref())
            .is_some_and(|f| !f.value),
        Err(_) => true,
    }
}

/// Why `allow` ("runs confined") would promise too much, for an `ask`
/// instead: the `[run]` policy may fail open ([`may_fail_open`]), or this
/// host lacks a layer without which `skarn run` refuses every command
/// (attack atk24i F4).
pub(super) fn allow_withheld(ws: &str) -> Option<String> {
    if may_fail_open(ws) {
        return Some(
            "skarn: runs under skarn run, but [run] fail_closed = false may run it unconfined \
             on this host"
                .to_string(),
        );
    }
    #[cfg(target_os = "linux")]
    {
        let missing = skarn_sandbox::linux::required_layers::missing_required_layers();
        if !missing.is_empty() {
            return Some(format!(
                "skarn: this host lacks {}: skarn run refuses to run the command",
                missing.join(" and ")
            ));
        }
    }
    None
}
