//! Whether a configuration value carries a credential anywhere in it: a
//! URL with a password or an http(s) user name, a query parameter named
//! like a token (`?token=`, `access_token`, `sig`, `api_key`, ...), a path
//! segment or word shaped like a known token (`ghp_...`, `glpat-...`,
//! `npm_...`, `pypi-...`, `AKIA...`, `xoxb-...`, `sk-...`), or a long
//! random-looking word (letters and digits mixed, 32 characters or more).
//! The dotfiles sanitiser ([`crate::secrets::dotfiles`]) drops every value this
//! says yes to, wherever it sits (an alias, an index URL, a proxy).

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
        if crate::policy::query_credentials::url_names_credential(raw) {
            return true;
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

#[cfg(target_os = "linux")]
/// Whether `text`, a setting copied into the sandbox with `placeholders`
/// where granted values were, still carries a credential of its own
/// (atk27g F11: the copy kept a URL password, a query-string secret or an
/// `insteadOf` password next to the placeholder). A URL's user info or a
/// base64 `user:password` pair that holds a placeholder is allowed only
/// as `user:PLACEHOLDER` or `PLACEHOLDER[:]` with a user name that is not
/// token-shaped; everything else is judged by [`carries_credential`]
/// with the placeholders taken out.
pub(crate) fn carries_other_credential(text: &str, placeholders: &[&str]) -> bool {
    let mut rest = String::with_capacity(text.len());
    for word in text.split_inclusive(|c: char| c.is_whitespace()) {
        let (w, tail) = match word.char_indices().last() {
            Some((i, c)) if c.is_whitespace() => (&word[..i], &word[i..]),
            _ => (word, ""),
        };
        match without_placeholder_userinfo(w, placeholders) {
            Some(Ok(stripped)) => rest.push_str(&stripped),
            Some(Err(())) => return true,
            None if decoded_pair_holds_placeholder(w, placeholders) => {
                if !pair_is_clean(&decode_b64(w).unwrap_or_default(), placeholders) {
                    return true;
                }
            }
            None => rest.push_str(w),
        }
        rest.push_str(tail);
    }
    for ph in placeholders.iter().filter(|p| !p.is_empty()) {
        rest = rest.replace(ph, "x");
    }
    carries_credential(&rest)
}

#[cfg(target_os = "linux")]
/// `user:pass` (or `user`) holding a placeholder, with nothing else
/// secret: the password is a placeholder or empty, the user a placeholder
/// or a plain name.
fn pair_is_clean(pair: &str, placeholders: &[&str]) -> bool {
    let is_ph = |s: &str| placeholders.contains(&s);
    let (user, pass) = pair.split_once(':').unwrap_or((pair, ""));
    let user_ok = is_ph(user)
        || (!placeholders.iter().any(|p| user.contains(p))
            && !user.split(|c: char| !is_token_char(c)).any(token_shaped)
            && !user.contains(['@', '/', '?']));
    let pass_ok = pass.is_empty() || is_ph(pass);
    user_ok && pass_ok && (is_ph(user) || is_ph(pass))
}

#[cfg(target_os = "linux")]
/// For a URL word whose user info holds a placeholder: `Ok` with the user
/// info taken out when that user info is clean, `Err` when it is not;
/// `None` when the word has no such user info.
fn without_placeholder_userinfo(word: &str, placeholders: &[&str]) -> Option<Result<String, ()>> {
    let (scheme, rest) = word.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (userinfo, host) = rest[..end].rsplit_once('@')?;
    if !placeholders
        .iter()
        .any(|p| !p.is_empty() && userinfo.contains(p))
    {
        return None;
    }
    if !pair_is_clean(userinfo, placeholders) {
        return Some(Err(()));
    }
    Some(Ok(format!("{scheme}://{host}{}", &rest[end..])))
}

#[cfg(target_os = "linux")]
fn decode_b64(word: &str) -> Option<String> {
    use base64::Engine;
    let b = base64::engine::general_purpose::STANDARD
        .decode(word)
        .ok()?;
    String::from_utf8(b).ok()
}

#[cfg(target_os = "linux")]
/// Whether `word` is base64 of text holding a placeholder.
fn decoded_pair_holds_placeholder(word: &str, placeholders: &[&str]) -> bool {
    word.len() >= 8
        && decode_b64(word)
            .is_some_and(|d| placeholders.iter().any(|p| !p.is_empty() && d.contains(p)))
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

    #[cfg(target_os = "linux")]
    #[test]
    fn other_credentials_next_to_a_placeholder_are_found() {
        const PH: &str = "PLACEHOLDER-xyzw09876543210";
        let b64 = |s: &str| {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.encode(s)
        };
        let phs = [PH];
        for clean in [
            format!("Authorization: Bearer {PH}"),
            format!(
                "Authorization: Basic {}",
                b64(&format!("x-access-token:{PH}"))
            ),
            format!("Authorization: Basic {}", b64(&format!("{PH}:"))),
            format!("https://me:{PH}@git.test/"),
            format!("https://{PH}@git.test/org/"),
            "https://git.test/".to_string(),
        ] {
            assert!(!carries_other_credential(&clean, &phs), "{clean}");
        }
        for dirty in [
            format!("https://{PH}:hunter2@git.test/"),
            format!("https://me:{PH}@git.test/?sig=abc"),
            format!("https://me:{PH}@git.test/ https://u:pw@other.test/"),
            format!("Authorization: Basic {}", b64(&format!("{PH}:hunter2"))),
            format!("Authorization: Bearer {PH} ghp_abcdefghijklmnopqrstuv"),
            format!("https://ghp_abcdefghijklmnopqrstuv:{PH}@git.test/"),
            "https://u:pw@git.test/".to_string(),
        ] {
            assert!(carries_other_credential(&dirty, &phs), "{dirty}");
        }
    }
}
