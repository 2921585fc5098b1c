//! Environment scrubbing: variables that look like secrets, by name
//! ([`looks_secret`]) or by value ([`value_looks_secret`]), are removed
//! unless explicitly allowed. Only names are ever reported, never values.

use std::ffi::{OsStr, OsString};

/// Substrings (upper-cased) that mark a variable name as secret.
pub(crate) const SECRET_NAME_PARTS: &[&str] = &[
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
    // A session cookie is a bearer credential (atk22l F6).
    "COOKIE",
];

/// Name suffixes (upper-cased) that mark a variable as secret
/// (`OPENAI_KEY`, `DB_PASS`, `STRIPE_SK`, `SENTRY_DSN`, ...).
pub(crate) const SECRET_NAME_SUFFIXES: &[&str] = &["_KEY", "_PASS", "_PWD", "_SK", "_DSN", "_AUTH"];

/// Name prefixes (upper-cased) that mark a variable as secret: password
/// manager sessions (`OP_SESSION_<account>`), CI job credentials.
pub(crate) const SECRET_NAME_PREFIXES: &[&str] = &[
    "AZURE_",
    "GITHUB_TOKEN",
    "GH_",
    "VAULT_",
    "OP_SESSION_",
    "CI_JOB_JWT",
    "ACTIONS_ID_TOKEN_REQUEST_",
    "ACTIONS_RUNTIME_",
];

/// Exact names (upper-cased) treated as secret.
pub(crate) const SECRET_NAMES: &[&str] = &[
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "DATABASE_URL",
    "NETRC",
    "KUBECONFIG",
    "DOCKER_AUTH_CONFIG",
    "BW_SESSION",
    "CI_JOB_TOKEN",
    "CI_REGISTRY_PASSWORD",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
];

/// Names kept although a part or suffix above matches them: configuration
/// that names a file or region, not a credential.
pub(crate) const NOT_SECRET_NAMES: &[&str] = &[
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_CA_BUNDLE",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "SSL_CERT_FILE",
];

/// Whether `name` looks like a secret.
pub(crate) fn looks_secret(name: &OsStr) -> bool {
    let up = name.to_string_lossy().to_ascii_uppercase();
    if NOT_SECRET_NAMES.contains(&up.as_str()) {
        return false;
    }
    SECRET_NAME_PARTS.iter().any(|p| up.contains(p))
        || SECRET_NAME_PREFIXES.iter().any(|p| up.starts_with(p))
        || SECRET_NAME_SUFFIXES.iter().any(|p| up.ends_with(p))
        || SECRET_NAMES.contains(&up.as_str())
}

/// Well-known token prefixes, each with the minimum number of token
/// characters (`[A-Za-z0-9_-]`) that must follow it.
const TOKEN_PREFIXES: &[(&str, usize)] = &[
    ("ghp_", 20),        // GitHub personal access token
    ("gho_", 20),        // GitHub OAuth
    ("ghu_", 20),        // GitHub user-to-server
    ("ghs_", 20),        // GitHub server-to-server
    ("ghr_", 20),        // GitHub refresh
    ("github_pat_", 20), // GitHub fine-grained PAT
    ("glpat-", 16),      // GitLab personal access token
    ("gldt-", 16),       // GitLab deploy token
    ("glrt-", 16),       // GitLab runner token
    ("xoxa-", 10),       // Slack
    ("xoxb-", 10),
    ("xoxp-", 10),
    ("xoxr-", 10),
    ("xoxs-", 10),
    ("sk-ant-", 16),  // Anthropic
    ("sk-", 20),      // OpenAI and others
    ("sk_live_", 16), // Stripe
    ("rk_live_", 16),
    ("npm_", 30),    // npm
    ("pypi-", 30),   // PyPI
    ("hf_", 30),     // Hugging Face
    ("dop_v1_", 30), // DigitalOcean
    ("AIza", 30),    // Google API key
    ("ya29.", 20),   // Google OAuth access token
    ("SG.", 30),     // SendGrid
    ("shpat_", 20),  // Shopify
];

fn token_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

fn base64url_part(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'=')
}

/// `scheme://user:password@host...` (a non-empty password before the host).
fn url_with_password(v: &str) -> bool {
    let Some((scheme, rest)) = v.split_once("://") else {
        return false;
    };
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
    {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let Some((userinfo, _host)) = authority.rsplit_once('@') else {
        return false;
    };
    userinfo
        .split_once(':')
        .is_some_and(|(_, pw)| !pw.is_empty())
}

/// A key-value connection string with a password (`Server=x;Password=y;`,
/// `host=x password=y`, `PWD=y`): ADO.NET, ODBC and libpq styles.
fn connection_string_password(v: &str) -> bool {
    v.split([';', ' ', '\t']).any(|kv| {
        kv.split_once('=').is_some_and(|(k, val)| {
            let k = k.trim().to_ascii_lowercase();
            matches!(k.as_str(), "password" | "pwd" | "passwd" | "pass") && !val.trim().is_empty()
        })
    })
}

/// A JSON Web Token: `eyJ` + three base64url parts separated by dots.
fn jwt(v: &str) -> bool {
    let mut parts = v.split('.');
    let (Some(h), Some(p), Some(sig), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    h.starts_with("eyJ")
        && h.len() >= 10
        && p.len() >= 10
        && base64url_part(h)
        && base64url_part(p)
        && (sig.is_empty() || base64url_part(sig))
}

/// AWS access key id: AKIA/ASIA (and other 4-letter id prefixes) followed
/// by 16 upper-case letters or digits.
fn aws_key_id(w: &str) -> bool {
    let b = w.as_bytes();
    b.len() == 20
        && ["AKIA", "ASIA", "ABIA", "ACCA"]
            .iter()
            .any(|p| w.starts_with(p))
        && b[4..]
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// Whether a value looks like a credential, whatever the variable's name:
/// a URL with an embedded password, a JWT, an AWS access key id, or a
/// well-known token prefix. Checked word by word (a value may hold several,
/// e.g. `--token=ghp_...` in an options variable).
pub(crate) fn value_looks_secret(value: &OsStr) -> bool {
    let v = value.to_string_lossy();
    if url_with_password(&v) || connection_string_password(&v) {
        return true;
    }
    // A credential in a URL's query (`?password=`, `&api_key=`; atk22l F6)
    // or its path (webhook, bot, channel tokens; atk27p F5).
    if v.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ','))
        .any(crate::policy::query_credentials::url_names_credential)
    {
        return true;
    }
    v.split(|c: char| c.is_whitespace() || matches!(c, '=' | ',' | ';' | '"' | '\'' | ':' | '@'))
        .any(|w| {
            url_with_password(w)
                || jwt(w)
                || aws_key_id(w)
                || TOKEN_PREFIXES.iter().any(|(p, min)| {
                    w.strip_prefix(p)
                        .is_some_and(|rest| rest.len() >= *min && rest.bytes().all(token_char))
                })
        })
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
        if (looks_secret(&k) || value_looks_secret(&v)) && !allowed {
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
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("DB_PASSWORD", "x"),
            ("HOME", "/root"),
            ("OPENAI_API_KEY", "x"),
            ("KEEP_TOKEN", "x"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let (kept, removed) = scrub(vars, &["KEEP_TOKEN".to_string()]);
        let kept: Vec<_> = kept.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert_eq!(kept, ["PATH", "AWS_REGION", "HOME", "KEEP_TOKEN"]);
        assert_eq!(
            removed,
            [
                "AWS_SECRET_ACCESS_KEY",
                "DB_PASSWORD",
                "GITHUB_TOKEN",
                "OPENAI_API_KEY",
                "my_api_key"
            ]
        );
    }

    fn secret(k: &str, v: &str) -> bool {
        looks_secret(OsStr::new(k)) || value_looks_secret(OsStr::new(v))
    }

    #[test]
    fn secret_names_beyond_keywords() {
        for k in [
            "OP_SESSION_my_team",
            "BW_SESSION",
            "CI_JOB_JWT",
            "CI_JOB_JWT_V2",
            "CI_JOB_TOKEN",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
            "ACTIONS_ID_TOKEN_REQUEST_URL",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
        ] {
            assert!(secret(k, "plain"), "{k}");
        }
        for k in [
            "AWS_REGION",
            "AWS_DEFAULT_REGION",
            "AWS_PROFILE",
            "AWS_CA_BUNDLE",
            "AWS_CONFIG_FILE",
            "PATH",
            "TERM",
        ] {
            assert!(!secret(k, "/etc/ssl/certs/ca.pem"), "{k}");
        }
    }

    #[test]
    fn connection_strings_and_tokens_behind_colons() {
        for v in [
            "Server=db;User Id=sa;Password=hunter2;",
            "host=db user=app password=s3cret",
            "user:ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        ] {
            assert!(value_looks_secret(OsStr::new(v)), "{v}");
        }
        for v in [
            "Server=db;Integrated Security=true",
            "a:b:c",
            "/usr/bin:/bin",
        ] {
            assert!(!value_looks_secret(OsStr::new(v)), "{v}");
        }
    }

    #[test]
    fn secret_values_whatever_the_name() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        for v in [
            "redis://default:hunter2@cache.internal:6379/0",
            "mongodb+srv://app:s3cr3t@cluster0.example.net/db?retryWrites=true",
            "https://user:pw@example.com/",
            jwt,
            "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
            "glpat-abcdefghij0123456789",
            "xoxb-123456789012-abcdefghijkl",
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
            "AKIAIOSFODNN7EXAMPLE",
            "ASIAY34FZKBOKMUTVV7A",
            "npm_abcdefghijklmnopqrstuvwxyz0123456789",
            "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoaWprbG1ub3A",
            "--verbose --token=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        ] {
            assert!(value_looks_secret(OsStr::new(v)), "{v}");
        }
        for v in [
            "/usr/bin:/bin",
            "https://example.com/path?x=1",
            "https://user@example.com/",
            "postgres://localhost:5432/db",
            "en_US.UTF-8",
            "xterm-256color",
            "sk-",
            "task-1234",
            "1.2.3",
            "eyJ.a.b",
            "AKIA",
            "/home/u/.aws/config",
            "git@github.com:org/repo.git",
        ] {
            assert!(!value_looks_secret(OsStr::new(v)), "{v}");
        }
    }

    #[test]
    fn removed_by_value_reports_the_name_only() {
        let vars = [
            ("REDIS_URL", "redis://:hunter2@h:6379"),
            ("MY_CFG", "AKIAIOSFODNN7EXAMPLE"),
            ("LANG", "C.UTF-8"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let (kept, removed) = scrub(vars, &[]);
        assert_eq!(kept.len(), 1);
        assert_eq!(removed, ["MY_CFG", "REDIS_URL"]);
        assert!(removed.iter().all(|n| !n.contains("hunter2")));
    }
}
