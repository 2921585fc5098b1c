//! Placeholders: random, exactly as long as the value (so a substitution
//! never changes a header's or body's length), keeping a value's public
//! format prefix (`ghp_`, `sk-ant-`, `npm_`, `glpat-`) so tools that check
//! the shape of a token accept it. Only prefixes of documented token
//! formats are kept: any other characters of the value are secret, and a
//! placeholder never copies them (atk27 F8).

use rand::Rng;

/// Values shorter than this are refused: a same-length placeholder would
/// be guessable and collide with ordinary text.
pub const MIN_LEN: usize = 8;

/// Random characters a placeholder keeps at least.
const MIN_RANDOM: usize = 8;

/// Public prefixes of documented token formats (GitHub, GitLab, npm,
/// PyPI, Slack, Stripe, OpenAI, Anthropic, Hugging Face), longest first
/// where one begins another.
const PUBLIC_PREFIXES: &[&str] = &[
    "github_pat_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "glpat-",
    "npm_",
    "pypi-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xapp-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "rk_test_",
    "sk-ant-api03-",
    "sk-ant-",
    "sk-proj-",
    "sk-",
    "hf_",
];

/// The documented format prefix `value` starts with, if any (and the
/// value has enough characters after it).
fn prefix(value: &str) -> &str {
    PUBLIC_PREFIXES
        .iter()
        .find(|p| value.starts_with(*p) && value.len() - p.len() >= MIN_RANDOM)
        .copied()
        .unwrap_or("")
}

/// A fresh placeholder for `value`; `None` when the value is too short.
pub fn make(value: &str) -> Option<String> {
    if value.len() < MIN_LEN {
        return None;
    }
    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let p = prefix(value);
    let mut rng = rand::rng();
    loop {
        let mut s = String::with_capacity(value.len());
        s.push_str(p);
        while s.len() < value.len() {
            s.push(ALNUM[rng.random_range(0..ALNUM.len())] as char);
        }
        if s != value {
            return Some(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_length_random_prefix_kept() {
        let v = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        let a = make(v).unwrap();
        let b = make(v).unwrap();
        assert_eq!(a.len(), v.len());
        assert!(a.starts_with("ghp_"));
        assert_ne!(a, b);
        assert_ne!(a, v);
        assert!(
            make("sk-ant-api03-abcdefgh")
                .unwrap()
                .starts_with("sk-ant-")
        );
        assert_eq!(make("hunter2pw").unwrap().len(), 9);
        assert!(make("short").is_none());
        // Anything else shaped like a prefix is the value's own: not kept.
        for v in ["Hk7Qz2p_mN4vR8sL1xT6wB3", "db-pass-word-0001-secret"] {
            let p = make(v).unwrap();
            assert!(
                p.bytes().zip(v.bytes()).take_while(|(a, b)| a == b).count() < 3,
                "{p}"
            );
        }
        assert!(
            make("sk-live-Abc123Def456Ghi789")
                .unwrap()
                .starts_with("sk-")
        );
        // A value with a multi-byte character: same byte length.
        assert_eq!(make("pässwörd-1234").unwrap().len(), "pässwörd-1234".len());
    }
}
