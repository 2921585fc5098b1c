//! `[servers.X] env = { VAR = { secret = "name" } }` (issue 27): the
//! secrets a sandboxed server is granted, defined in the user's
//! configuration (`[secrets.name]` in ~/.config/skarn/config.toml), each
//! with its placeholder in `VAR`.

use std::path::Path;

use skarn_egress::secrets::config::SecretsConfig;
use skarn_sandbox::secrets::egress_secrets::RunSecrets;

use crate::sandbox_spawn::SandboxError;

/// Resolve `(VAR, secret name)` pairs; `None` when there are none.
pub(crate) fn resolve(
    pairs: &[(String, String)],
    home: Option<&Path>,
) -> Result<Option<RunSecrets>, SandboxError> {
    if pairs.is_empty() {
        return Ok(None);
    }
    let err = |e: String| SandboxError::Secrets(e);
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
