//! Credentials a bound host derives from a secret (ADR 0243, atk27h F7):
//! an access token a token endpoint returns for a refresh token or client
//! secret, a session cookie a login sets, a pre-signed URL. They come back
//! to the command as they are (the scrubber replaces the value only), and
//! they are bound to nothing. The proxy cannot tell them from any other
//! answer, so this is a documented limit; a secret whose binding names
//! such an endpoint gets a warning when it is granted.

use super::config::SecretConfig;

/// Words of a path glob that names a place issuing credentials.
const ISSUING: &[&str] = &[
    "token",
    "oauth",
    "login",
    "logon",
    "signin",
    "sign-in",
    "session",
    "authorize",
    "sts",
];

/// The warning for secret `name`, when one of its `paths` names an
/// endpoint that issues credentials; `None` otherwise.
pub fn derived_credential_note(name: &str, c: &SecretConfig) -> Option<String> {
    let hit = c.paths.iter().find(|p| {
        p.split(['/', '.', '_', '?', '*', '-'])
            .chain(std::iter::once(p.as_str()))
            .any(|seg| {
                let seg = seg.to_ascii_lowercase();
                ISSUING
                    .iter()
                    .any(|w| seg == *w || seg.contains("token") || seg.contains("oauth"))
            })
    })?;
    Some(format!(
        "secret {name} is bound to {hit}, which looks like an endpoint that issues credentials: a \
         token or session cookie it returns reaches the command as is, and is not bound to the \
         secret's hosts, methods or paths (ADR 0243); grant it only to commands you would give \
         that credential"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(paths: &[&str]) -> SecretConfig {
        SecretConfig {
            paths: paths.iter().map(|p| p.to_string()).collect(),
            ..SecretConfig::default()
        }
    }

    #[test]
    fn token_endpoints_are_named_and_others_are_not() {
        for p in [
            "/oauth/token",
            "/login/oauth/access_token",
            "/v1/tokens",
            "/api/session",
            "/authorize*",
            "/v2/sts",
        ] {
            let n = derived_credential_note("rt", &cfg(&[p]));
            assert!(n.is_some_and(|n| n.contains(p)), "{p}");
        }
        for p in [
            "/v1/*",
            "/repos/me/*",
            "/simple/*",
            "/stsx",
            "/api/sessions-list",
        ] {
            assert!(derived_credential_note("x", &cfg(&[p])).is_none(), "{p}");
        }
        assert!(derived_credential_note("x", &cfg(&[])).is_none());
    }
}
