//! A credential carried in a URL's *path* (atk27p F5, atk22m F6): webhook
//! and bot URLs (`/services/T…/B…/<secret>`, `/api/webhooks/<id>/<token>`,
//! `/bot<id>:<token>/…`), a channel token route (`/t/<token>/…`), a
//! token with a known prefix anywhere in the path. Judged by the shape of
//! each segment, never by the host: a segment is a credential when it
//! starts like a known token, looks random (long, of token characters,
//! letters and digits alternating or nearly every character different),
//! or follows a route word that names a token. A leaf of
//! [`super::query_credentials`].

/// Prefixes of well-known token formats (a segment starting with one and
/// long enough is a token).
const PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "gldt-",
    "glptt-",
    "glrt-",
    "npm_",
    "pypi-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xapp-",
    "sk-",
    "hf_",
    "AKIA",
    "ASIA",
];

/// Route words after which the next segment is a token (`/t/<token>/`).
const ROUTES: &[&str] = &[
    "t", "token", "tokens", "key", "keys", "secret", "secrets", "apikey", "api_key", "api-key",
];

/// Shortest segment judged random by its shape.
const MIN_RANDOM: usize = 20;

fn token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_')
}

/// The class of a character: upper, lower, digit, other.
fn class(c: char) -> u8 {
    if c.is_ascii_uppercase() {
        0
    } else if c.is_ascii_lowercase() {
        1
    } else if c.is_ascii_digit() {
        2
    } else {
        3
    }
}

/// Whether `seg` looks random: at least [`MIN_RANDOM`] token characters,
/// a dozen different ones, and either the classes (upper, lower, digit)
/// change at a third of the characters with digits among them, or
/// nearly every character is different. Words, package names, versions
/// and platform triples (`x86_64-unknown-linux-gnu`) change class rarely.
pub(crate) fn random_looking(seg: &str) -> bool {
    if seg.len() < MIN_RANDOM || !seg.chars().all(token_char) {
        return false;
    }
    let mut distinct: Vec<char> = seg.chars().collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < 12 {
        return false;
    }
    if distinct.len() >= 20 {
        return true;
    }
    let chars: Vec<char> = seg.chars().collect();
    let switches = chars
        .windows(2)
        .filter(|w| {
            let (a, b) = (class(w[0]), class(w[1]));
            a != 3 && b != 3 && a != b
        })
        .count();
    let plain = chars.iter().filter(|c| class(**c) != 3).count();
    let digits = chars.iter().filter(|c| c.is_ascii_digit()).count();
    digits >= 2 && switches * 10 >= plain * 3
}

/// Whether `seg` starts like a known token.
fn prefixed(seg: &str) -> bool {
    PREFIXES
        .iter()
        .any(|p| seg.starts_with(p) && seg.len() >= p.len() + 12 && seg.chars().all(token_char))
}

/// Whether the segment after a route word is a token: 16 or more token
/// characters with at least four digits (a forum's `/t/<topic-slug>/`
/// has words, not digits).
fn routed(seg: &str) -> bool {
    seg.len() >= 16
        && seg.chars().all(token_char)
        && seg.chars().filter(char::is_ascii_digit).count() >= 4
}

/// Whether a URL's `path` (from its first `/`, without query or
/// fragment) carries a credential (see the module text). Each segment is
/// judged by its runs of token characters, so punctuation around or after
/// a token (`;v=1`, `.json`, `bot<id>:<token>`) hides nothing (atk27q F4).
pub(crate) fn path_names_credential(path: &str) -> bool {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    segs.iter().enumerate().any(|(i, seg)| {
        let after_route = i > 0 && ROUTES.contains(&segs[i - 1].to_ascii_lowercase().as_str());
        seg.split(|c: char| !token_char(c))
            .any(|p| prefixed(p) || random_looking(p) || (after_route && routed(p)))
    })
}
