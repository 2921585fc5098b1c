//! A credential in a URL's query (`?token=`, `&password=`, `?api_key=`,
//! signed-URL signatures) or its path (webhook, bot and channel tokens,
//! [`path`]): one list, read by the environment scrub
//! ([`crate::policy::env`]) and the dotfiles sanitiser
//! ([`crate::secrets::credential_text`]). A leaf: it uses nothing else of
//! the crate.

#[path = "url_decoded.rs"]
mod decoded;
#[path = "path_credentials.rs"]
mod path;

/// Whether `text` holds a URL carrying a credential in its query or
/// fragment ([`query_names_credential`]) or its path (atk27p F5, atk22m
/// F6). URLs are found inside any text, as the scrub is applied: wrapped
/// in `<>`, `()`, `{}`, followed by `|`, or written without a scheme
/// (`host.tld/path`; atk27q F4). The text is judged as written and in its
/// decoded forms (atk27r F5: a JSON string's `https:\/\/...`, a URL
/// percent-encoded inside another, one escaped character in a token):
/// one JSON-unescape pass, one percent-decode pass, and both (bounded:
/// one pass each, linear in the text).
pub fn url_names_credential(text: &str) -> bool {
    if names_credential(text) {
        return true;
    }
    let json = decoded::json_unescaped(text);
    let forms = [
        json.clone(),
        json.as_deref().and_then(decoded::percent_decoded),
        decoded::percent_decoded(text),
    ];
    forms.into_iter().flatten().any(|t| names_credential(&t))
}

/// [`url_names_credential`] of `text` as written.
fn names_credential(text: &str) -> bool {
    query_names_credential(text)
        || text.split(url_end).any(|piece| {
            urls(piece).any(|rest| {
                let cut = rest.find(['?', '#']).unwrap_or(rest.len());
                path::path_names_credential(&rest[..cut])
                    || params_name_credential(rest.get(cut + 1..).unwrap_or(""))
            })
        })
}

/// Characters no URL holds unescaped: where a URL inside text ends.
fn url_end(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '<' | '>' | '(' | ')' | '{' | '}' | '|' | '\\' | '"' | '\'' | '`' | '^'
        )
}

/// The URLs in `piece` (one run without [`url_end`] characters), each
/// from the end of its authority (its path, query and fragment): one per
/// `://`, and a scheme-less `host.tld[:port]/path` at its start.
fn urls(piece: &str) -> impl Iterator<Item = &str> {
    let with_scheme = piece.match_indices("://").filter_map(|(i, _)| {
        let rest = &piece[i + 3..];
        rest.find(['/', '?', '#']).map(|j| &rest[j..])
    });
    let bare = (!piece.contains("://"))
        .then(|| {
            let j = piece.find('/')?;
            host_like(&piece[..j]).then(|| &piece[j..])
        })
        .flatten();
    with_scheme.chain(bare)
}

/// Whether `auth` (what precedes a scheme-less URL's first `/`, perhaps
/// after `name=` or `name:`) names a host: labels of letters, digits and
/// `-`, two or more, the last with a letter; a port allowed.
fn host_like(auth: &str) -> bool {
    let auth = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
    let auth = match auth.rsplit_once(':') {
        Some((h, p)) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => auth,
    };
    let host = auth.rsplit([':', '=']).next().unwrap_or("");
    let labels: Vec<&str> = host.split('.').collect();
    labels.len() >= 2
        && labels
            .iter()
            .all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        && labels
            .last()
            .is_some_and(|l| l.chars().any(|c| c.is_ascii_alphabetic()))
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
    params_name_credential(query)
}

/// Whether a query or fragment (`a=1&access_token=...`) has a parameter
/// named like a credential: an OAuth redirect's `#access_token=` is one
/// (atk27q F4).
fn params_name_credential(query: &str) -> bool {
    query.split(['&', '#', ';', '?']).any(|pair| {
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

    #[test]
    fn escaped_and_nested_credential_urls_are_found() {
        let t = "Zq8Lm3Xp0Tv5Wn9Rc4Yb7Hs2";
        let u = format!("https://hooks.example.test/services/T0AB12CD3/B0EF45GH6/{t}");
        assert!(url_names_credential(&u));
        let json = format!("{{\"webhook\":\"{}\"}}", u.replace('/', "\\/"));
        assert!(url_names_credential(&json), "{json}");
        let enc = u.replace(':', "%3A").replace('/', "%2F");
        let nested = format!("https://relay.example.test/forward?to={enc}");
        assert!(url_names_credential(&nested), "{nested}");
        let one = format!(
            "https://hooks.example.test/services/T0AB12CD3/B0EF45GH6/{}%2D{}",
            &t[..12],
            &t[12..]
        );
        assert!(url_names_credential(&one), "{one}");
        for plain in [
            "https://relay.example.test/forward?to=https%3A%2F%2Fexample.test%2Fdocs",
            "{\"home\":\"https:\\/\\/example.test\\/docs\\/intro\"}",
            "100%25 done",
        ] {
            assert!(!url_names_credential(plain), "{plain}");
        }
    }
}
