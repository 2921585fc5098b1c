//! Placeholders: random, exactly as long as the value (so a substitution
//! never changes a header's or body's length), keeping a value's public
//! format prefix (`ghp_`, `sk-ant-`, `npm_`, `glpat-`) so tools that check
//! the shape of a token accept it.

use rand::Rng;

/// Values shorter than this are refused: a same-length placeholder would
/// be guessable and collide with ordinary text.
pub const MIN_LEN: usize = 8;

/// Random characters a placeholder keeps at least.
const MIN_RANDOM: usize = 8;

/// The format prefix of `value`: the characters up to and including the
/// last `_` or `-` within its first 8, if all before it are alphanumeric.
fn prefix(value: &str) -> &str {
    let head: &str = value.get(..8.min(value.len())).unwrap_or("");
    let Some(i) = head.rfind(['_', '-']) else {
        return "";
    };
    let p = &value[..=i];
    if p.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && value.len() - p.len() >= MIN_RANDOM
    {
        p
    } else {
        ""
    }
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
        // A value with a multi-byte character: same byte length.
        assert_eq!(make("pässwörd-1234").unwrap().len(), "pässwörd-1234".len());
    }
}
