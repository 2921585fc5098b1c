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

    /// No byte (the patterns' own bytes are added: [`MayMatch::add`]).
    pub(super) fn none() -> MayMatch {
        MayMatch([false; 256])
    }

    /// The bytes every escape is written with but for the `"` and `/` of
    /// `\"` and `\/` (ASCII letters and digits, `\`, `%`, `&`, `#`, `;`,
    /// `{`, `}`, `_`): with the patterns' bytes added, the bytes of the raw
    /// text a match (raw or decoded) can span. A `\"` or `\/` inside one
    /// decodes to a pattern byte, so its `"` or `/` is one; one that does
    /// not is never inside a match, and this byte is its last
    /// ([`super::stretch`]).
    pub(super) fn syntax() -> MayMatch {
        let mut t = MayMatch::escapes();
        t.0[usize::from(b'"')] = false;
        t.0[usize::from(b'/')] = false;
        t
    }

    /// The bytes an escape starts with: `\\`, `%`, `&`.
    pub(super) fn escape_starts() -> MayMatch {
        let mut t = MayMatch::none();
        t.add(br"\%&");
        t
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
