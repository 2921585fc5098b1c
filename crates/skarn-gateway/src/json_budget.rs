//! One budget for a JSON message from a downstream, checked as its bytes
//! arrive and before anything decodes it: JSON values (see
//! [`MAX_VALUES`]), nesting depth ([`MAX_DEPTH`]), the length of one
//! string ([`MAX_STRING_BYTES`]) and content blocks
//! ([`MAX_CONTENT_BLOCKS`]). The byte total is the caller's (16 MiB for a
//! stdio line, an SSE event or an HTTP JSON body). Used for stdio lines
//! ([`crate::oversize`]), SSE events and plain JSON bodies of HTTP servers
//! ([`crate::http_budget`]).

use crate::content_blocks::{BlockCounter, MAX_CONTENT_BLOCKS};
/// Most JSON values (counted by `[`, `{` and `,` outside strings) one line
/// from a downstream may hold.
pub(crate) const MAX_VALUES: usize = 1_000_000;

/// Deepest nesting of arrays and objects one message may have (below
/// serde_json's own recursion limit of 128, so that the cause is named).
pub const MAX_DEPTH: usize = 100;

/// Longest single JSON string (raw bytes between its quotes) of a message.
pub const MAX_STRING_BYTES: usize = 8 << 20;

/// The budget of one message fed in pieces; a few bytes of state.
#[derive(Debug, Default)]
pub(crate) struct JsonBudget {
    in_str: bool,
    esc: bool,
    values: usize,
    depth: usize,
    string: usize,
    blocks: BlockCounter,
    /// A listing page's items, and the most allowed (`None`: not counted).
    items: Option<(BlockCounter, usize)>,
    over: Option<String>,
}

impl JsonBudget {
    /// A budget that also refuses a listing page of more than `max`
    /// items (`gateway.max_list_items`), counted before anything decodes
    /// it (atk25d F3: 240 000 minimal tools took the gateway to 667 MB
    /// when the cap was checked after decoding).
    pub(crate) fn with_items(max: usize) -> JsonBudget {
        JsonBudget {
            items: Some((BlockCounter::for_lists(), max)),
            ..JsonBudget::default()
        }
    }

    /// The same budget for the next message.
    pub(crate) fn fresh(&self) -> JsonBudget {
        match &self.items {
            Some((_, max)) => JsonBudget::with_items(*max),
            None => JsonBudget::default(),
        }
    }

    /// Feed the next bytes; stops looking once over.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        if self.over.is_some() {
            return;
        }
        self.blocks.feed(bytes);
        if let Some((c, max)) = &mut self.items {
            c.feed(bytes);
            if c.blocks() > *max {
                self.over = Some(format!(
                    "lists more than {max} items (gateway.max_list_items; counted before parsing)"
                ));
                return;
            }
        }
        for &b in bytes {
            if let Some(why) = self.step(b) {
                self.over = Some(why);
                return;
            }
        }
        if self.blocks.over() {
            self.over = Some(format!("has more than {MAX_CONTENT_BLOCKS} content blocks"));
        }
    }

    /// What is over the budget, if anything (e.g. `has more than 100
    /// levels of nesting`), to follow "the answer of server X".
    pub(crate) fn over(&self) -> Option<&str> {
        self.over.as_deref()
    }

    fn step(&mut self, b: u8) -> Option<String> {
        if self.in_str {
            if self.esc {
                self.esc = false;
            } else if b == b'\\' {
                self.esc = true;
            } else if b == b'"' {
                self.in_str = false;
                return None;
            }
            self.string += 1;
            return (self.string > MAX_STRING_BYTES)
                .then(|| format!("has a string longer than {MAX_STRING_BYTES} bytes"));
        }
        match b {
            b'"' => {
                self.in_str = true;
                self.string = 0;
            }
            b'[' | b'{' => {
                self.values += 1;
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Some(format!("has more than {MAX_DEPTH} levels of nesting"));
                }
            }
            b']' | b'}' => self.depth = self.depth.saturating_sub(1),
            b',' => self.values += 1,
            _ => {}
        }
        (self.values > MAX_VALUES).then(|| format!("has more than {MAX_VALUES} JSON values"))
    }
}

/// The budget's verdict on a whole message whose listing pages hold at
/// most `max_items` items.
pub(crate) fn over_budget_items(data: &[u8], max_items: usize) -> Option<String> {
    let mut b = JsonBudget::with_items(max_items);
    b.feed(data);
    b.over().map(str::to_owned)
}

/// The budget's verdict on a whole message.
#[cfg(test)]
pub(crate) fn over_budget(data: &[u8]) -> Option<String> {
    let mut b = JsonBudget::default();
    b.feed(data);
    b.over().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn over_in_pieces(s: &str) -> Option<String> {
        let mut b = JsonBudget::default();
        for c in s.as_bytes().chunks(7) {
            b.feed(c);
        }
        b.over().map(str::to_owned)
    }

    #[test]
    fn deep_nesting_is_over() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        let msg = over_in_pieces(&deep).unwrap();
        assert!(msg.contains("levels of nesting"), "{msg}");
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(over_in_pieces(&ok), None);
        // Brackets inside strings do not nest.
        let s = format!("{{\"a\":\"{}\"}}", "[".repeat(500));
        assert_eq!(over_in_pieces(&s), None);
    }

    #[test]
    fn long_strings_are_over_and_escapes_do_not_end_them() {
        let long = format!("{{\"a\":\"\\\"{}\"}}", "x".repeat(MAX_STRING_BYTES));
        let msg = over_in_pieces(&long).unwrap();
        assert!(msg.contains("string longer than"), "{msg}");
        let many_short = format!("[{}]", vec!["\"xxxx\""; 1000].join(","));
        assert_eq!(over_in_pieces(&many_short), None);
    }

    #[test]
    fn values_and_blocks_are_counted() {
        let many = format!("[{}1]", "1,".repeat(MAX_VALUES));
        assert!(over_in_pieces(&many).unwrap().contains("JSON values"));
        let blocks = vec![r#"{"type":"text","text":"x"}"#; MAX_CONTENT_BLOCKS + 1].join(",");
        let data = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{blocks}]}}}}"#);
        assert!(
            over_budget(data.as_bytes())
                .unwrap()
                .contains("content blocks")
        );
    }
}
