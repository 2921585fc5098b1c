//! A credential in a URL's query (`?token=`, `&password=`, `?api_key=`,
//! signed-URL signatures) or its path (webhook, bot and channel tokens,
//! [`path`]): one list, read by the environment scrub
//! ([`crate::policy::env`]) and the dotfiles sanitiser
//! ([`crate::secrets::credential_text`]). A leaf: it uses nothing else of
//! the crate.

#[path = "path_credentials.rs"]
mod path;

/// Whether URL `word` carries a credential in its query
/// ([`query_names_credential`]) or its path (atk27p F5, atk22m F6).
pub(crate) fn url_names_credential(word: &str) -> bool {
    query_names_credential(word) || path::path_names_credential(word)
}

/// Query parameters that carry a credential.
const SECRET_PARAMS: &[&str] = &[
    "token",
    "access_token",
    "auth",
    "auth_token",
    "api_key",
    "apikey",
    "key",
    "secret",
    "password",
    "passwd",
    "pwd",
    "sig",
    "signature",
    "x-amz-signature",
    "x-amz-credential",
    "private_token",
    "client_secret",
    "job_token",
    "private-token",
    "x-goog-signature",
    "x-goog-credential",
    "code",
    "sas",
    "sv",
];

/// Whether `word` has a query (after its first `?`) with a parameter named
/// like a credential ([`SECRET_PARAMS`], any case).
pub(crate) fn query_names_credential(word: &str) -> bool {
    let Some((_, query)) = word.split_once('?') else {
        return false;
    };
    query.split(['&', '#', ';']).any(|pair| {
        let name = pair.split('=').next().unwrap_or("").to_ascii_lowercase();
        if SECRET_PARAMS.contains(&name.as_str()) {
            return true;
        }
        // Any spelling of a credential's name (`accessToken`, `authToken`,
        // `sslpassword`, `X-Amz-Security-Token`; atk27p F5).
        let plain: String = name.chars().filter(char::is_ascii_alphanumeric).collect();
        SECRET_NAME_PARTS.iter().any(|p| plain.contains(p))
    })
}

/// Parts of a parameter's name (lower case, letters and digits only) that
/// make it a credential whatever surrounds them.
const SECRET_NAME_PARTS: &[&str] = &[
    "token",
    "password",
    "passwd",
    "passphrase",
    "secret",
    "apikey",
    "signature",
    "credential",
    "accesskey",
    "privatekey",
    "sessionkey",
];

#[cfg(test)]
#[path = "path_credentials_tests.rs"]
mod path_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_parameters_are_found_in_any_case() {
        for w in [
            "jdbc:postgresql://h/db?user=u&password=jdbcpw",
            "https://a.example/v1?api_key=abc",
            "https://a.example/v1?x=1&Token=abc",
            "https://b.example/o?X-Amz-Signature=ff",
            "https://b.example/o?accessToken=ff",
            "https://b.example/o?authToken=ff",
            "postgres://h/db?sslpassword=ff",
            "https://b.example/o?X-Amz-Security-Token=ff",
        ] {
            assert!(query_names_credential(w), "{w}");
        }
        for w in [
            "https://a.example/v1?page=2",
            "https://a.example/v1",
            "no query at all",
            "https://a.example/?sort=name&dir=up",
        ] {
            assert!(!query_names_credential(w), "{w}");
        }
    }
}
