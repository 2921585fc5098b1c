//! The error cap: an [`ExecError`]'s message and details cut to a number
//! of bytes, every cut marked in the text ("… [truncated N bytes]").
//!
//! Bytes are counted as the output cap counts a returned value: the text
//! as it stands inside a JSON string (escapes included).

use crate::outcome::ExecError;

/// Room kept for one marker (the longest one is under 128 bytes).
const MARK: usize = 128;

/// What was cut before the text reached [`fit`] (inside the engine).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct EarlierCuts {
    /// UTF-16 code units of the message not copied out of the engine (each
    /// is at least one UTF-8 byte).
    pub(crate) message_units: u64,
    /// Stack frames found but not kept.
    pub(crate) frames: u64,
    /// UTF-16 code units of the stack not copied out of the engine.
    pub(crate) stack_units: u64,
}

// The error's own methods for the cap live here, beside the cap, so that
// `outcome` (the result types) does not depend on this module.
impl ExecError {
    /// Bytes of text this error carries: its message and details as they
    /// stand inside JSON strings (escapes included), as the error cap
    /// counts them.
    pub fn text_bytes(&self) -> usize {
        text_bytes(self)
    }

    /// Cut the message and details to at most `max_bytes` bytes of text (as
    /// [`text_bytes`](Self::text_bytes) counts; exact for `max_bytes` of at
    /// least 384, which [`Limits::error_bytes`](crate::Limits::error_bytes)
    /// always is). The message keeps its start and ends with
    /// "… [truncated N bytes]"; details are kept in order while they fit and
    /// a last one says how many were cut. Unchanged when it already fits.
    pub fn bound(&mut self, max_bytes: usize) {
        fit(self, max_bytes, EarlierCuts::default());
    }
}

/// Bytes of `s` inside a JSON string literal.
pub(crate) fn json_len(s: &str) -> usize {
    crate::convert::escaped_len(s)
}

/// Bytes of text `err` carries: its message and details as JSON strings.
pub(crate) fn text_bytes(err: &ExecError) -> usize {
    err.details
        .iter()
        .map(|d| json_len(d))
        .fold(json_len(&err.message), usize::saturating_add)
}

/// Cut `err` to at most `max` bytes of text (as [`text_bytes`] counts;
/// exact for `max` of at least 3 × 128 bytes). The message keeps its start
/// and ends with "… [truncated N bytes]"; details are kept in order while
/// they fit, and a last one says how many were cut.
pub(crate) fn fit(err: &mut ExecError, max: usize, earlier: EarlierCuts) {
    let frames_cut = earlier.frames > 0 || earlier.stack_units > 0;
    if earlier.message_units == 0 && !frames_cut && text_bytes(err) <= max {
        return;
    }
    // The message first, leaving room for a marker after the details.
    let msg_budget = max.saturating_sub(2 * MARK);
    if earlier.message_units > 0 || json_len(&err.message) > msg_budget {
        let keep = cut_point(&err.message, msg_budget);
        let removed = (err.message.len() - keep) as u64;
        err.message.truncate(keep);
        let lower_bound = earlier.message_units > 0;
        let n = removed.saturating_add(earlier.message_units);
        let at_least = if lower_bound { "at least " } else { "" };
        err.message
            .push_str(&format!("… [truncated {at_least}{n} bytes]"));
    }
    let room = max.saturating_sub(json_len(&err.message));
    let all: usize = err.details.iter().map(|d| json_len(d)).sum();
    if !frames_cut && all <= room {
        return;
    }
    let mut used = 0usize;
    let mut kept = 0usize;
    for d in &err.details {
        let n = json_len(d);
        if used.saturating_add(n) > room.saturating_sub(MARK) {
            break;
        }
        used += n;
        kept += 1;
    }
    let dropped = (err.details.len() - kept) as u64 + earlier.frames;
    err.details.truncate(kept);
    let stack = if earlier.stack_units > 0 {
        format!(
            " and at least {} bytes of stack not read",
            earlier.stack_units
        )
    } else {
        String::new()
    };
    err.details
        .push(format!("… [truncated {dropped} frame(s){stack}]"));
}

/// The largest char boundary of `s` whose prefix takes at most `budget`
/// bytes as JSON string contents.
fn cut_point(s: &str, budget: usize) -> usize {
    let mut used = 0usize;
    for (i, c) in s.char_indices() {
        let cost = match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            '\0'..='\u{1f}' => 6,
            c => c.len_utf8(),
        };
        if used + cost > budget {
            return i;
        }
        used += cost;
    }
    s.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{ErrorKind, ExecError};

    fn err(message: &str, details: &[&str]) -> ExecError {
        let mut e = ExecError::new(ErrorKind::Runtime, message);
        e.details = details.iter().map(|d| d.to_string()).collect();
        e
    }

    #[test]
    fn small_errors_are_unchanged() {
        let mut e = err("Error: boom", &["at f (1:2)"]);
        let before = e.clone();
        fit(&mut e, 1024, EarlierCuts::default());
        assert_eq!(e, before);
    }

    #[test]
    fn long_messages_and_many_details_fit_and_say_so() {
        let long = "é\"\u{1}".repeat(10_000);
        let frames: Vec<String> = (0..5000).map(|i| format!("at f{i} (1:1)")).collect();
        let refs: Vec<&str> = frames.iter().map(String::as_str).collect();
        for max in [384, 1024, 4096, 65_536] {
            let mut e = err(&long, &refs);
            fit(&mut e, max, EarlierCuts::default());
            assert!(text_bytes(&e) <= max, "{max}: {}", text_bytes(&e));
            assert!(e.message.contains("… [truncated "), "{}", e.message);
            let last = e.details.last().unwrap();
            assert!(last.starts_with("… [truncated "), "{last}");
            assert!(serde_json::to_string(&e.message).unwrap().len() - 2 <= max);
        }
        // The cut count is exact when nothing was cut earlier.
        let mut e = err(&"x".repeat(5000), &[]);
        fit(&mut e, 1000, EarlierCuts::default());
        let kept = e.message.find('…').unwrap();
        assert!(
            e.message
                .ends_with(&format!("[truncated {} bytes]", 5000 - kept))
        );
    }

    #[test]
    fn earlier_cuts_are_marked_even_when_the_rest_fits() {
        let mut e = err("Error: short", &["at f (1:1)"]);
        fit(
            &mut e,
            4096,
            EarlierCuts {
                message_units: 7,
                frames: 3,
                stack_units: 9,
            },
        );
        assert_eq!(e.message, "Error: short… [truncated at least 7 bytes]");
        assert_eq!(
            e.details,
            [
                "at f (1:1)",
                "… [truncated 3 frame(s) and at least 9 bytes of stack not read]"
            ]
        );
    }
}
