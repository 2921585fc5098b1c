//! Whether a configuration value carries a credential anywhere in it: a
//! URL with a password or an http(s) user name, a query parameter named
//! like a token (`?token=`, `access_token`, `sig`, `api_key`, ...), a path
//! segment or word shaped like a known token (`ghp_...`, `glpat-...`,
//! `npm_...`, `pypi-...`, `AKIA...`, `xoxb-...`, `sk-...`), or a long
//! random-looking word (letters and digits mixed, 32 characters or more).
//! The dotfiles sanitiser ([`crate::secrets::dotfiles`]) drops every value this
//! says yes to, wherever it sits (an alias, an index URL, a proxy).

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

/// Prefixes of well-known token formats.
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "npm_",
    "pypi-",
    "AKIA",
    "ASIA",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "sk-",
    "hf_",
];

/// A character a token can hold (letters, digits and `-_.~+=`).
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~' | '+' | '=')
}

/// Whether `word` looks like a token by its shape.
fn token_shaped(word: &str) -> bool {
    if TOKEN_PREFIXES
        .iter()
        .any(|p| word.starts_with(p) && word.len() >= p.len() + 12)
    {
        return true;
    }
    let tokenish = word.chars().all(is_token_char);
    let digits = word.chars().filter(char::is_ascii_digit).count();
    let letters = word.chars().filter(char::is_ascii_alphabetic).count();
    // A bare key in a URL path (16+ letters and digits mixed, nothing
    // else: a package name has dashes or dots).
    let bare_key = word.len() >= 16
        && word.chars().all(|c| c.is_ascii_alphanumeric())
        && digits >= 3
        && letters >= 3;
    bare_key || (tokenish && word.len() >= 32 && digits >= 4 && letters >= 8)
}

/// Whether `url` carries credentials: a password (`user:pass@`) in any
/// scheme, or any user name over http(s) (tokens are passed that way). An
/// ssh user name (`git@host:`) is not a credential.
pub(crate) fn url_has_credentials(url: &str) -> bool {
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (s.to_ascii_lowercase(), r),
        None => (String::new(), url),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let Some((userinfo, _)) = authority.rsplit_once('@') else {
        return false;
    };
    if userinfo.contains(':') {
        // scp-like `user@host:path` has its ':' after the '@'.
        return true;
    }
    !(scheme.is_empty() || scheme == "ssh" || scheme == "git+ssh" || scheme == "ssh+git")
}

/// Whether a URL that starts inside `word` (after `?`, `=`, `(`... as in
/// `https://a/?u=https://user:pw@b/`) carries credentials.
fn inner_url_has_credentials(word: &str) -> bool {
    word.match_indices("://").any(|(i, _)| {
        let scheme = word[..i]
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-')))
            .next()
            .unwrap_or("");
        url_has_credentials(&format!("{scheme}{}", &word[i..]))
    })
}

/// Whether `value` carries a credential anywhere (see the module text).
pub(crate) fn carries_credential(value: &str) -> bool {
    for raw in value.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';')) {
        if raw.is_empty() {
            continue;
        }
        if raw.contains('@') && (url_has_credentials(raw) || inner_url_has_credentials(raw)) {
            return true;
        }
        if let Some((_, query)) = raw.split_once('?') {
            for pair in query.split(['&', '#']) {
                let name = pair.split('=').next().unwrap_or("").to_ascii_lowercase();
                if SECRET_PARAMS.contains(&name.as_str()) {
                    return true;
                }
            }
        }
        if raw
            .split(['/', '?', '&', '=', ':', '#', '@'])
            .any(token_shaped)
        {
            return true;
        }
        // A token behind any other punctuation (`(ghp_...)`, `<ghp_...>`,
        // `$ghp_...`) is still a token: words are also cut at every
        // character a token cannot hold.
        if raw.split(|c: char| !is_token_char(c)).any(token_shaped) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_anywhere_are_found() {
        for v in [
            "!git push https://u:TOKEN@host/x",
            "https://pkgs.example/simple?token=abc",
            "https://pkgs.example/t/ghp_abcdefghijklmnopqrst/simple",
            "https://npm.fury.io/Ab12Cd34Ef56Gh78Ij90/me/",
            "https://gitlab.example/api?job_token=abc",
            "https://host/AKIAABCDEFGHIJKLMNOP/x",
            "https://host/0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b/x",
            // Found by the `dotfiles` fuzz target: punctuation the word
            // split did not cut at hid the token's prefix.
            "log (ghp_Mk7Qz2Lw9Xr4Tb6Nc8Vd1Fh3Jp5Sg0Ya2Ue)",
            "<ghp_Mk7Qz2Lw9Xr4Tb6Nc8Vd1Fh3Jp5Sg0Ya2Ue>",
            "$ghp_abcdefghijklmnop",
            "!glpat-abcdefghijklmnopqrst",
            // Also found by it: a URL with a password inside another
            // URL's query.
            "https://b.example?https://ada:pw@h.example/simple",
            "https://b.example/?next=https://ada:pw@h.example/",
        ] {
            assert!(carries_credential(v), "{v}");
        }
        for v in [
            "log --oneline --graph",
            "https://pypi.example/simple",
            "git@github.com:me/repo.git",
            "status -sb",
            "https://host/packages/some-long-package-name-without-digits/x",
        ] {
            assert!(!carries_credential(v), "{v}");
        }
    }
}
