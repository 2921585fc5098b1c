//! Variables of the gateway's environment that hold a configured secret's
//! real value (its `from_env` source, or a copy under another name): no
//! server gets one through `{ from_env = ... }` (atk27i F8, atk27j F2) or
//! among the variables every stdio server inherits by name (`LC_*`,
//! `LANG`, ...), and the gateway sends none as an HTTP server's bearer
//! token (atk27j F7): a secret goes only to its own hosts, through the
//! proxy.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

use skarn_egress::secrets::config::SecretsConfig;
use skarn_egress::secrets::known::KnownValues;

use crate::config::EnvValue;

/// The user's secrets configuration, read from the gateway's own home
/// (`None`: no absolute `HOME`). A file that exists but cannot be read or
/// parsed is an error, never an empty configuration: every consumer (the
/// `from_env` and `bearer_env` refusals, the inherited-variable filter,
/// the hiding of `file` sources and of what `command` sources run) fails
/// closed, and the server does not start (atk27l F13).
pub fn user_config() -> Result<Option<(PathBuf, SecretsConfig)>, String> {
    let Some(home) = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
    else {
        return Ok(None);
    };
    let cfg = SecretsConfig::load(&home.join(".config/skarn/config.toml"))
        .map_err(|e| format!("{e}: the secrets configuration must parse before a server starts"))?;
    Ok(Some((home, cfg)))
}

/// The user's configured secrets' readable values (`None`: no home).
pub(crate) fn known() -> Result<Option<KnownValues>, String> {
    Ok(user_config()?.map(|(home, cfg)| cfg.known_values(Some(&home))))
}

/// An HTTP server's `auth = { bearer_env = "X" }` where `X` holds a
/// configured secret's value: refused (the gateway itself would send it to
/// the server's URL, which is not one of the secret's hosts).
pub(crate) fn refuse_bearer(var: &str) -> Result<(), String> {
    let Some(known) = known()? else {
        return Ok(());
    };
    match known.variable(var) {
        Some(secret) => Err(format!(
            "auth = {{ bearer_env = \"{var}\" }}: {var} holds the value of secret {secret}, \
             which goes only to its own hosts through skarn's proxy; give this server a token \
             of its own"
        )),
        None => Ok(()),
    }
}

/// A server's `{ from_env = "X" }` naming the variable a configured secret
/// is read from (`[secrets.S] from_env = "X"`), or one holding a
/// configured secret's value under another name, would hand it the real
/// value, which `skarn run` never passes in (atk27i F8, atk27j F2):
/// refused, pointing at `{ secret = "S" }`.
pub(crate) fn refuse_sources(
    known: &KnownValues,
    env: &BTreeMap<String, EnvValue>,
) -> Result<(), String> {
    for (name, v) in env {
        let EnvValue::FromEnv(f) = v else { continue };
        if let Some(secret) = known.variable(&f.from_env) {
            return Err(format!(
                "env {name} = {{ from_env = \"{var}\" }}: {var} holds the value of secret \
                 {secret}, which a server gets only as a placeholder: write {name} = \
                 {{ secret = \"{secret}\" }}",
                var = f.from_env
            ));
        }
    }
    Ok(())
}

/// Drop from a stdio server's environment `env` the variables it inherits
/// by name (the base set: `LC_*`, `LANG`, `USER`, ...; not those its
/// `configured` table names) that are a secret's source or hold a
/// configured secret's value.
pub(crate) fn drop_inherited(
    known: &KnownValues,
    env: &mut Vec<(OsString, OsString)>,
    configured: &BTreeMap<String, EnvValue>,
    alias: &str,
) {
    env.retain(|(k, v)| {
        let Some(name) = k.to_str() else {
            return true;
        };
        if configured.contains_key(name) {
            return true;
        }
        let secret = known
            .source_of(name)
            .or_else(|| known.holding(v.as_encoded_bytes()));
        if let Some(secret) = secret {
            tracing::info!(
                server = %alias,
                "{name} holds the value of secret {secret}: not passed to the server"
            );
        }
        secret.is_none()
    });
}
