//! Placeholder copies of credentials the user's files keep encoded
//! (atk27i F6): a URL's userinfo is percent-encoded (`git credential-store`
//! writes `p%40ss`, pip's `index-url` needs it for `@ / :`), npm's basic
//! auth is base64 (`_auth` = `user:password`, `_password` = the password).
//! Each is decoded the way the tool reads it, compared with the granted
//! values exactly, and the placeholder (letters and digits: it needs no
//! encoding) is written in the value's place, encoded as before.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::value_swap::ValueSwap;

/// `s` with `%XX` escapes decoded; `None` when the result is not UTF-8.
pub fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(h) = b.get(i + 1..i + 3)
            && let Ok(h) = std::str::from_utf8(h)
            && let Ok(v) = u8::from_str_radix(h, 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// The placeholder of the granted value `v` is, once percent-decoded.
pub fn placeholder_of_encoded<'a>(s: &'a impl ValueSwap, v: &str) -> Option<&'a str> {
    s.placeholder_of(v)
        .or_else(|| s.placeholder_of(&percent_decode(v)?))
}

/// Lines for the private home's `.npmrc` from the user's `text`: each
/// `_auth` whose password, and each `_password` that is a granted value,
/// with the placeholder, base64-encoded as npm reads them, plus the
/// `username` line a `_password` goes with.
pub fn npmrc_basic_lines(s: &impl ValueSwap, text: &str) -> Vec<String> {
    let settings: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|l| l.trim().split_once('='))
        .map(|(k, v)| (k.trim(), v.trim().trim_matches(['"', '\''])))
        .collect();
    let safe = |w: &str| {
        !w.is_empty()
            && !w.contains(char::is_whitespace)
            && !s.holds_value(w.as_bytes())
            && !super::credential_text::carries_credential(w)
    };
    let decode = |v: &str| {
        STANDARD
            .decode(v)
            .ok()
            .and_then(|d| String::from_utf8(d).ok())
    };
    let mut out = Vec::new();
    for (k, v) in &settings {
        if !safe(k) {
            continue;
        }
        if k == &"_auth" || k.ends_with(":_auth") {
            let Some(plain) = decode(v) else { continue };
            let Some((user, pass)) = plain.split_once(':') else {
                continue;
            };
            if let Some(ph) = s.placeholder_of(pass)
                && safe(user)
            {
                out.push(format!("{k}={}", STANDARD.encode(format!("{user}:{ph}"))));
            }
        } else if let Some(prefix) = k.strip_suffix("_password")
            && (prefix.is_empty() || prefix.ends_with(':'))
        {
            let Some(ph) = decode(v).and_then(|p| s.placeholder_of(&p)) else {
                continue;
            };
            out.push(format!("{k}={}", STANDARD.encode(ph)));
            let user_key = format!("{prefix}username");
            if let Some((_, u)) = settings.iter().find(|(k2, _)| *k2 == user_key)
                && safe(u)
            {
                out.push(format!("{user_key}={u}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_values_get_encoded_placeholders() {
        let v = "p@ss/word:1234567890ABCdefXYZ";
        let s = crate::secrets::value_swap::OneValue {
            value: v.into(),
            placeholder: "PHplaceholder0123456789abcd".into(),
        };
        assert_eq!(
            placeholder_of_encoded(&s, "p%40ss%2Fword%3a1234567890ABCdefXYZ"),
            Some("PHplaceholder0123456789abcd")
        );
        let text = format!(
            "//localhost:18443/:_password={}\n//localhost:18443/:username=x\n\
             //other/:_auth={}\n_auth={}\n",
            STANDARD.encode(v),
            STANDARD.encode("y:notgranted"),
            STANDARD.encode(format!("z:{v}"))
        );
        let lines = npmrc_basic_lines(&s, &text);
        assert_eq!(
            lines,
            [
                format!(
                    "//localhost:18443/:_password={}",
                    STANDARD.encode("PHplaceholder0123456789abcd")
                ),
                "//localhost:18443/:username=x".to_string(),
                format!("_auth={}", STANDARD.encode("z:PHplaceholder0123456789abcd")),
            ]
        );
    }
}
