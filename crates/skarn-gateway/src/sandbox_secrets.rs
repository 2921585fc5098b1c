//! `[servers.X] env = { VAR = { secret = "name" } }` (issue 27): the
//! secrets a sandboxed server is granted, defined in the user's
//! configuration (`[secrets.name]` in ~/.config/skarn/config.toml), each
//! with its placeholder in `VAR`.

use std::path::Path;

use skarn_egress::secrets::config::SecretsConfig;
use skarn_sandbox::secrets::egress_secrets::RunSecrets;

/// The `file` sources of every secret the user configured (and the
/// targets of linked ones): never readable by a sandboxed server, whatever
/// its `read` grants cover (atk27 F9). A configuration that does not parse
/// is an error (atk27l F13b), not "no sources".
pub(crate) fn source_files(home: Option<&Path>) -> Result<Vec<std::path::PathBuf>, String> {
    let Some(h) = home else {
        return Ok(Vec::new());
    };
    let cfg = load(h)?;
    let mut out = Vec::new();
    for f in cfg.secrets.values().filter_map(|c| c.source_file(home)) {
        if std::fs::symlink_metadata(&f).is_err() {
            continue;
        }
        if let Ok(real) = std::fs::canonicalize(&f)
            && real != f
        {
            out.push(real);
        }
        out.push(f);
    }
    Ok(out)
}

/// [`SecretsConfig::host_places`] of the user's configuration (an error
/// when it does not parse).
pub(crate) fn host_places(
    home: Option<&Path>,
) -> Result<Vec<(std::path::PathBuf, String, bool)>, String> {
    let Some(h) = home else {
        return Ok(Vec::new());
    };
    let cfg = load(h)?;
    let mut out = cfg.host_places(home);
    // Where each value was really read from (ADR 0319).
    out.extend(skarn_sandbox::secrets::source_reads::host_places(
        &cfg, home,
    ));
    Ok(out)
}

/// The user's secrets configuration under `home`; one that does not parse
/// stops the server's start.
fn load(home: &Path) -> Result<SecretsConfig, String> {
    SecretsConfig::load(&home.join(".config/skarn/config.toml"))
        .map_err(|e| format!("{e}: the secrets configuration must parse before a server starts"))
}

/// Resolve `(VAR, secret name)` pairs; `None` when there are none.
pub(crate) fn resolve(
    pairs: &[(String, String)],
    writable: &[std::path::PathBuf],
    home: Option<&Path>,
) -> Result<Option<RunSecrets>, String> {
    if pairs.is_empty() {
        return Ok(None);
    }
    let err = |e: String| e;
    let home =
        home.ok_or_else(|| err("no HOME: the secrets' definitions cannot be read".into()))?;
    let cfg = load(home)?;
    // A sandboxed server carries secrets through its egress proxy: none
    // without a network namespace, so no source runs (atk27o F4).
    skarn_sandbox::secrets::run_needs::check()?;
    let mut specs = Vec::new();
    for (var, name) in pairs {
        let c = cfg.secrets.get(name).ok_or_else(|| {
            err(skarn_egress::secrets::config::SecretError::Unknown(name.clone()).to_string())
        })?;
        // A `command` source runs on the host at every start (and
        // restart): refused when what it runs lies where a sandboxed run
        // or server may write (atk27j F10, F11).
        skarn_sandbox::secrets::command_places::check(name, c, writable, Some(home))?;
        // ... and run with every place a sandboxed run or server may
        // write hidden (ADR 0283).
        let view = match c.command.is_some() || c.keyring.is_some() {
            true => skarn_sandbox::secrets::source_places::view(writable, Some(home))
                .map_err(|e| format!("secret {name}: {e}"))?,
            false => skarn_egress::secrets::source_view::SourceView::direct(),
        };
        if let Some(n) = skarn_egress::secrets::derived::derived_credential_note(name, c) {
            tracing::warn!("{n}");
        }
        let mut s = skarn_egress::secrets::config::resolve(name, c, Some(home), &view)
            .map_err(|e| err(e.to_string()))?;
        skarn_egress::secrets::keep_reads(name);
        s.env = var.clone();
        specs.push(s);
    }
    // Where each value was really read from, for every later run and
    // server (ADR 0319).
    skarn_sandbox::secrets::source_reads::settle(&cfg, &specs, Some(home))?;
    RunSecrets::new(specs).map_err(err)
}

/// A server granted secrets whose grants hold a granted value in a file
/// it could read (a clone URL in `.git/config`, an `.npmrc`, a `.env`,
/// a toolchain's `etc/npmrc`, a system `gitconfig`, what a `command`
/// source reads): such a file in its writable grants keeps it from
/// starting, the file named (as `skarn run` refuses; the placeholder in
/// its variable would be worth nothing while the file hands over the
/// value); elsewhere it is hidden (ADR 0217).
pub(crate) fn refuse_stored_values(
    s: &RunSecrets,
    policy: &mut skarn_sandbox::policy::Policy,
    home: Option<&Path>,
) -> Result<(), String> {
    use skarn_sandbox::secrets::{stored_values, value_scan::Budget, value_scope};
    let places = match home {
        Some(h) => load(h)?.value_places(home),
        None => Vec::new(),
    };
    let mut refuse_under = vec![policy.workspace.clone()];
    for g in &policy.write {
        refuse_under.push(g.path.clone());
        if let Ok(c) = std::fs::canonicalize(&g.path) {
            refuse_under.push(c);
        }
    }
    let scope = value_scope::scope(policy, refuse_under, &places, home);
    let mut v = stored_values::check(s, &scope, Budget::default()).map_err(|e| e.to_string())?;
    for f in std::mem::take(&mut v.hide) {
        policy.deny_read.push(skarn_sandbox::policy::Grant::new(
            f,
            "default (holds a granted secret's value)",
        ));
    }
    // Names no file: the server reads this (atk27o F9, ADR 0314).
    match stored_values::refusal(s, &v, home) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}
