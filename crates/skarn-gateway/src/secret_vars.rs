//! Variables of the gateway's environment that hold a configured secret's
//! real value (its `from_env` source, or a copy under another name): no
//! server gets one through `{ from_env = ... }` (atk27i F8, atk27j F2),
//! and the gateway sends none as an HTTP server's bearer token (atk27j
//! F7): a secret goes only to its own hosts, through the proxy.

use std::path::PathBuf;

use skarn_egress::secrets::config::SecretsConfig;
use skarn_egress::secrets::known::KnownValues;

/// The user's configured secrets' readable values (`None`: no home or no
/// readable configuration).
pub(crate) fn known() -> Option<KnownValues> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())?;
    let cfg = SecretsConfig::load(&home.join(".config/skarn/config.toml")).ok()?;
    Some(cfg.known_values(Some(&home)))
}

/// An HTTP server's `auth = { bearer_env = "X" }` where `X` holds a
/// configured secret's value: refused (the gateway itself would send it to
/// the server's URL, which is not one of the secret's hosts).
pub(crate) fn refuse_bearer(var: &str) -> Result<(), String> {
    let Some(known) = known() else {
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
