//! `[servers.X] env = { VAR = { secret = "name" } }` (issue 27): the
//! secrets a sandboxed server is granted, defined in the user's
//! configuration (`[secrets.name]` in ~/.config/skarn/config.toml), each
//! with its placeholder in `VAR`.

use std::path::Path;

use skarn_egress::secrets::config::SecretsConfig;
use skarn_sandbox::secrets::egress_secrets::RunSecrets;

/// Resolve `(VAR, secret name)` pairs; `None` when there are none.
/// The `file` sources of every secret the user configured (and the
/// targets of linked ones): never readable by a sandboxed server, whatever
/// its `read` grants cover (atk27 F9).
pub(crate) fn source_files(home: Option<&Path>) -> Vec<std::path::PathBuf> {
    let Some(h) = home else {
        return Vec::new();
    };
    let Ok(cfg) = SecretsConfig::load(&h.join(".config/skarn/config.toml")) else {
        return Vec::new();
    };
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
    out
}

/// [`SecretsConfig::host_places`] of the user's configuration.
pub(crate) fn host_places(home: Option<&Path>) -> Vec<(std::path::PathBuf, String, bool)> {
    let Some(h) = home else {
        return Vec::new();
    };
    SecretsConfig::load(&h.join(".config/skarn/config.toml"))
        .map(|c| c.host_places(home))
        .unwrap_or_default()
}

pub(crate) fn resolve(
    pairs: &[(String, String)],
    home: Option<&Path>,
) -> Result<Option<RunSecrets>, String> {
    if pairs.is_empty() {
        return Ok(None);
    }
    let err = |e: String| e;
    let home =
        home.ok_or_else(|| err("no HOME: the secrets' definitions cannot be read".into()))?;
    let cfg = SecretsConfig::load(&home.join(".config/skarn/config.toml"))
        .map_err(|e| err(e.to_string()))?;
    let mut specs = Vec::new();
    for (var, name) in pairs {
        let c = cfg.secrets.get(name).ok_or_else(|| {
            err(skarn_egress::secrets::config::SecretError::Unknown(name.clone()).to_string())
        })?;
        let mut s = skarn_egress::secrets::config::resolve(name, c, Some(home))
            .map_err(|e| err(e.to_string()))?;
        s.env = var.clone();
        specs.push(s);
    }
    RunSecrets::new(specs).map_err(err)
}

/// A server granted secrets whose grants hold a granted value in a file
/// tools read credentials from (a clone URL in `.git/config`, an `.npmrc`,
/// a `.env`): not started, the file named (as `skarn run` refuses; the
/// placeholder in its variable would be worth nothing while the file
/// hands over the value).
pub(crate) fn refuse_stored_values(
    s: &RunSecrets,
    policy: &skarn_sandbox::policy::Policy,
) -> Result<(), String> {
    let roots: Vec<std::path::PathBuf> = policy
        .write
        .iter()
        .chain(&policy.read)
        .chain(&policy.exec)
        .chain(&policy.overlay)
        .map(|g| g.path.clone())
        .filter(|p| p.exists())
        .collect();
    let found = skarn_sandbox::secrets::stored_values::stored_in(s, &roots);
    if found.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
    Err(format!(
        "a granted secret's real value is stored in {} (or the file is over 4 MiB and \
         cannot be checked), which the server could read: remove it from there (a \
         credential helper or the secret's placeholder takes its place)",
        names.join(", ")
    ))
}
