//! A budget on the content blocks of a downstream answer, counted while
//! its line streams in, before rmcp decodes it (attack F13). Each block
//! of a result (`result.content`, `result.contents`, `result.messages`)
//! becomes a typed value many times the size of its JSON: 650 000 empty
//! text blocks (16 MiB) took the gateway to 746 MiB. An answer with more
//! than [`MAX_CONTENT_BLOCKS`] blocks is replaced by an error for its id
//! (see [`crate::oversize`]).

/// Most content blocks one downstream answer may hold.
pub const MAX_CONTENT_BLOCKS: usize = 4096;

/// Keys of `result` whose array elements are content blocks.
const BLOCK_KEYS: &[&[u8]] = &[b"content", b"contents", b"messages"];

/// Keys of `result` whose array elements are listed items (a listing's
/// page), counted by [`BlockCounter::for_lists`].
const LIST_KEYS: &[&[u8]] = &[b"tools", b"resources", b"resourceTemplates", b"prompts"];

/// Longest key kept while scanning (longer ones never match).
const KEY_CAP: usize = 16;

/// Counts the elements of the block arrays of a JSON-RPC answer fed in
/// pieces, keeping a few bytes of state.
#[derive(Debug, Default)]
pub struct BlockCounter {
    depth: usize,
    in_str: bool,
    esc: bool,
    /// Whether the containers open at depths 1..=3 are objects.
    objs: [bool; 4],
    expect_key: bool,
    key: Option<Vec<u8>>,
    /// The last key read at depths 1 and 2.
    keys: [Vec<u8>; 3],
    /// Inside a block array (depth 3).
    tracking: bool,
    blocks: usize,
    /// Counting a listing's items instead of content blocks.
    lists: bool,
}

impl BlockCounter {
    /// Feed the next bytes of the line.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.step(b);
        }
    }

    /// A counter of the items of a listing's page (`result.tools`,
    /// `resources`, `resourceTemplates`, `prompts`), counted as content
    /// blocks are (atk25d F3: the item cap applies before decoding).
    pub fn for_lists() -> BlockCounter {
        BlockCounter {
            lists: true,
            ..BlockCounter::default()
        }
    }

    /// Blocks (or items) seen so far.
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// Over [`MAX_CONTENT_BLOCKS`].
    pub fn over(&self) -> bool {
        self.blocks > MAX_CONTENT_BLOCKS
    }

    fn step(&mut self, b: u8) {
        if self.in_str {
            if self.esc {
                self.esc = false;
            } else if b == b'\\' {
                self.esc = true;
            } else if b == b'"' {
                self.in_str = false;
                if let Some(k) = self.key.take()
                    && (1..=2).contains(&self.depth)
                {
                    self.keys[self.depth] = k;
                }
            } else if let Some(k) = &mut self.key
                && k.len() <= KEY_CAP
            {
                k.push(b);
            }
            return;
        }
        match b {
            b'"' => {
                self.in_str = true;
                if self.expect_key && self.depth <= 2 {
                    self.key = Some(Vec::new());
                }
                self.expect_key = false;
            }
            b'{' | b'[' => {
                self.depth += 1;
                let obj = b == b'{';
                if self.depth <= 3 {
                    self.objs[self.depth] = obj;
                }
                if self.depth == 3
                    && !obj
                    && self.objs[1]
                    && self.objs[2]
                    && self.keys[1] == b"result"
                    && (if self.lists { LIST_KEYS } else { BLOCK_KEYS })
                        .contains(&self.keys[2].as_slice())
                {
                    self.tracking = true;
                }
                if self.depth == 4 && self.tracking {
                    self.blocks += 1;
                }
                self.expect_key = obj;
            }
            b'}' | b']' => {
                if self.depth == 3 {
                    self.tracking = false;
                }
                self.depth = self.depth.saturating_sub(1);
                self.expect_key = false;
            }
            b',' => self.expect_key = (1..=3).contains(&self.depth) && self.objs[self.depth],
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(s: &str) -> usize {
        let mut c = BlockCounter::default();
        for piece in s.as_bytes().chunks(5) {
            c.feed(piece);
        }
        c.blocks()
    }

    #[test]
    fn counts_the_blocks_of_results_only() {
        let block = r#"{"type":"text","text":"a \"content\": [{}] ]}"}"#;
        let three = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{block},{block},{block}],"isError":false}}}}"#
        );
        assert_eq!(count(&three), 3);
        assert_eq!(
            count(r#"{"id":2,"result":{"contents":[{"uri":"a"},{"uri":"b"}]}}"#),
            2
        );
        assert_eq!(
            count(r#"{"id":3,"result":{"messages":[{"role":"user","content":{}}]}}"#),
            1
        );
        // Not blocks: nested deeper, other keys, requests' params.
        assert_eq!(
            count(r#"{"id":4,"result":{"structuredContent":{"content":[{},{}]}}}"#),
            0
        );
        assert_eq!(count(r#"{"id":5,"result":{"tools":[{},{},{}]}}"#), 0);
        assert_eq!(
            count(r#"{"id":6,"method":"x","params":{"content":[{},{}]}}"#),
            0
        );
        assert_eq!(
            count(r#"{"id":7,"result":{"x":"content","content":[[1],{}]}}"#),
            2
        );
    }

    #[test]
    fn over_the_budget() {
        let blocks = vec![r#"{"type":"text","text":""}"#; MAX_CONTENT_BLOCKS + 1].join(",");
        let line = format!(r#"{{"id":1,"result":{{"content":[{blocks}]}}}}"#);
        let mut c = BlockCounter::default();
        c.feed(line.as_bytes());
        assert!(c.over());
    }
}
