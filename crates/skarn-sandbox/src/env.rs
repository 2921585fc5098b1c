//! Environment scrubbing: variables that look like secrets are removed
//! unless explicitly allowed. Only names are ever reported, never values.

use std::ffi::{OsStr, OsString};

/// Substrings (upper-cased) that mark a variable name as secret.
pub const SECRET_NAME_PARTS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "API_KEY",
    "APIKEY",
    "PRIVATE_KEY",
    "CREDENTIAL",
    "ACCESS_KEY",
    "AUTH_KEY",
    "SESSION_KEY",
    "CLIENT_KEY",
    "WEBHOOK",
];

/// Name suffixes (upper-cased) that mark a variable as secret
/// (`OPENAI_KEY`, `DB_PASS`, `STRIPE_SK`, `SENTRY_DSN`, ...).
pub const SECRET_NAME_SUFFIXES: &[&str] = &["_KEY", "_PASS", "_PWD", "_SK", "_DSN", "_AUTH"];

/// Name prefixes (upper-cased) that mark a variable as secret.
pub const SECRET_NAME_PREFIXES: &[&str] = &["AWS_", "AZURE_", "GITHUB_TOKEN", "GH_", "VAULT_"];

/// Exact names (upper-cased) treated as secret.
pub const SECRET_NAMES: &[&str] = &[
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "DATABASE_URL",
    "NETRC",
    "KUBECONFIG",
    "DOCKER_AUTH_CONFIG",
];

/// Whether `name` looks like a secret.
pub fn looks_secret(name: &OsStr) -> bool {
    let up = name.to_string_lossy().to_ascii_uppercase();
    SECRET_NAME_PARTS.iter().any(|p| up.contains(p))
        || SECRET_NAME_PREFIXES.iter().any(|p| up.starts_with(p))
        || SECRET_NAME_SUFFIXES.iter().any(|p| up.ends_with(p))
        || SECRET_NAMES.contains(&up.as_str())
}

/// Split `vars` into (kept, removed names). `allow` lists names kept anyway
/// (exact match).
pub fn scrub(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    allow: &[String],
) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let mut kept = Vec::new();
    let mut removed = Vec::new();
    for (k, v) in vars {
        let allowed = allow.iter().any(|a| OsStr::new(a) == k.as_os_str());
        if looks_secret(&k) && !allowed {
            removed.push(k.to_string_lossy().into_owned());
        } else {
            kept.push((k, v));
        }
    }
    removed.sort();
    (kept, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubs_secret_names_only() {
        let vars = [
            ("PATH", "/usr/bin"),
            ("GITHUB_TOKEN", "x"),
            ("my_api_key", "x"),
            ("AWS_REGION", "x"),
            ("DB_PASSWORD", "x"),
            ("HOME", "/root"),
            ("OPENAI_API_KEY", "x"),
            ("KEEP_TOKEN", "x"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let (kept, removed) = scrub(vars, &["KEEP_TOKEN".to_string()]);
        let kept: Vec<_> = kept.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert_eq!(kept, ["PATH", "HOME", "KEEP_TOKEN"]);
        assert_eq!(
            removed,
            [
                "AWS_REGION",
                "DB_PASSWORD",
                "GITHUB_TOKEN",
                "OPENAI_API_KEY",
                "my_api_key"
            ]
        );
    }
}
