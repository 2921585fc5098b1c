//! The bytes a match of the echo scrubber can be made of (what it
//! holds back at the end of a read: [`super`]).

/// The bytes that can be part of a match: those of the patterns, in
/// either ASCII case, and those escapes are written with (`\`, `%`, `&`,
/// `#`, `;`, `"`, `/`, `{`, `}`, `_` and ASCII letters and digits:
/// [`super::super::unescape`]).
#[derive(Clone)]
pub(crate) struct MayMatch([bool; 256]);

impl MayMatch {
    pub(super) fn escapes() -> MayMatch {
        let mut t = [false; 256];
        for b in 0..=255u8 {
            t[usize::from(b)] = b.is_ascii_alphanumeric() || br#"\%&#;"/{}_"#.contains(&b);
        }
        MayMatch(t)
    }

    pub(super) fn add(&mut self, pattern: &[u8]) {
        for b in pattern {
            self.0[usize::from(b.to_ascii_lowercase())] = true;
            self.0[usize::from(b.to_ascii_uppercase())] = true;
        }
    }

    pub(super) fn has(&self, b: u8) -> bool {
        self.0[usize::from(b)]
    }
}
