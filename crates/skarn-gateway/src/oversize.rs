//! A guard between a stdio downstream's stdout and the SDK's line
//! transport. rmcp drops a line longer than its limit without a word, so a
//! request whose answer is too large would wait for its timeout (and a Code
//! Mode script until its deadline). This pump passes lines up to `max_line`
//! bytes through unchanged; for a longer line it keeps no more than
//! `max_line` bytes, skips the rest as it arrives, picks the top-level `"id"`
//! out of the skipped bytes with a small streaming scanner, and hands the
//! transport a JSON-RPC error for that id instead, so the caller gets a
//! clear error at once. A line of more than [`MAX_VALUES`](crate::json_budget::MAX_VALUES) JSON values is
//! treated the same way: parsing costs the gateway about a hundred bytes
//! per value, so 16 MiB of `[1,1,1,…]` would otherwise take over 800 MiB.
//! So is an answer with more content blocks than
//! [`crate::content_blocks::MAX_CONTENT_BLOCKS`] (counted as it streams in,
//! before anything decodes it: attack F13), deeper nesting or a longer
//! string than [`crate::json_budget`] allows.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::json_budget::JsonBudget;

/// JSON-RPC "internal error" code used for the substituted answer.
pub const TOO_LARGE_CODE: i64 = -32603;

/// Finds the value of the top-level `"id"` member in a JSON object fed in
/// pieces, keeping only a few bytes of state.
#[derive(Debug, Default)]
pub struct IdScanner {
    depth: i32,
    in_str: bool,
    esc: bool,
    expect_key: bool,
    key: Option<Vec<u8>>,
    last_key_is_id: bool,
    value: Option<Vec<u8>>,
    found: Option<Vec<u8>>,
}

const MAX_ID: usize = 256;

impl IdScanner {
    /// Feed the next bytes of the line.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.found.is_some() {
                return;
            }
            self.step(b);
        }
    }

    fn step(&mut self, b: u8) {
        if let Some(v) = &mut self.value {
            let ends = !self.in_str && self.depth == 1 && (b == b',' || b == b'}');
            if ends {
                self.found = self.value.take();
                return;
            }
            if v.len() < MAX_ID {
                v.push(b);
            } else {
                self.value = None;
            }
        }
        if self.in_str {
            if self.esc {
                self.esc = false;
            } else if b == b'\\' {
                self.esc = true;
            } else if b == b'"' {
                self.in_str = false;
                if let Some(k) = self.key.take() {
                    self.last_key_is_id = k == b"id";
                }
                return;
            }
            if let Some(k) = &mut self.key {
                if k.len() < 8 {
                    k.push(b);
                } else {
                    k.clear();
                    k.extend_from_slice(b"-long-");
                }
            }
            return;
        }
        match b {
            b'"' => {
                self.in_str = true;
                if self.depth == 1 && self.expect_key {
                    self.key = Some(Vec::new());
                    self.expect_key = false;
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                if self.depth == 1 && b == b'{' {
                    self.expect_key = true;
                }
            }
            b'}' | b']' => self.depth -= 1,
            b',' if self.depth == 1 => self.expect_key = true,
            b':' if self.depth == 1 => {
                if self.last_key_is_id && self.value.is_none() {
                    self.value = Some(Vec::new());
                }
                self.last_key_is_id = false;
            }
            _ => {}
        }
    }

    /// The id, once seen.
    pub fn id(&self) -> Option<Value> {
        let raw = self.found.as_ref()?;
        serde_json::from_slice(raw.trim_ascii()).ok()
    }
}

pub(crate) fn too_large(id: Value, server: &str, why: &str) -> Vec<u8> {
    let msg = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": TOO_LARGE_CODE,
            "message": format!(
                "the answer of server {server} {why} and was discarded"
            ),
        },
    });
    let mut line = serde_json::to_vec(&msg).unwrap_or_default();
    line.push(b'\n');
    line
}

/// Copy `input` to `output` line by line until either side closes,
/// replacing each line longer than `max_line` by an error answer for its id
/// (or dropping it when it has none).
pub async fn pump<R, W>(input: R, mut output: W, max_line: usize, max_items: usize, server: String)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut input = BufReader::new(input);
    let mut line: Vec<u8> = Vec::new();
    let mut skipping: Option<(IdScanner, String)> = None;
    let mut budget = JsonBudget::with_items(max_items);
    loop {
        let (used, done) = {
            let Ok(avail) = input.fill_buf().await else {
                return;
            };
            if avail.is_empty() {
                return;
            }
            let nl = avail.iter().position(|&b| b == b'\n');
            let take = nl.map_or(avail.len(), |i| i + 1);
            let chunk = &avail[..take];
            if let Some((scan, _)) = &mut skipping {
                scan.feed(chunk);
            } else {
                budget.feed(chunk);
                let over = if line.len() + take > max_line {
                    Some(format!("is larger than {max_line} bytes"))
                } else {
                    budget.over().map(str::to_owned)
                };
                if let Some(over) = over {
                    let mut scan = IdScanner::default();
                    scan.feed(&line);
                    scan.feed(chunk);
                    line = Vec::new();
                    skipping = Some((scan, over));
                } else {
                    line.extend_from_slice(chunk);
                }
            }
            (take, nl.is_some())
        };
        input.consume(used);
        if !done {
            continue;
        }
        budget = budget.fresh();
        let out = match skipping.take() {
            Some((scan, over)) => match scan.id() {
                Some(id) => {
                    tracing::warn!(server = %server, "an answer that {over} discarded");
                    too_large(id, &server, &over)
                }
                None => {
                    tracing::warn!(server = %server, "a message that {over} discarded");
                    continue;
                }
            },
            None => std::mem::take(&mut line),
        };
        if output.write_all(&out).await.is_err() || output.flush().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content_blocks::MAX_CONTENT_BLOCKS;

    fn id_of(s: &str) -> Option<Value> {
        let mut sc = IdScanner::default();
        for c in s.as_bytes().chunks(3) {
            sc.feed(c);
        }
        sc.id()
    }

    #[test]
    fn finds_the_top_level_id_anywhere() {
        assert_eq!(
            id_of(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
            Some(json!(7))
        );
        assert_eq!(
            id_of(r#"{"result":{"id":1,"x":"\"id\":2"},"jsonrpc":"2.0","id":"a,}b"}"#),
            Some(json!("a,}b"))
        );
        assert_eq!(id_of(r#"{"result":{"id":1}}"#), None);
        assert_eq!(id_of(r#"{"method":"x","params":[{"id":3}]}"#), None);
    }

    #[tokio::test]
    async fn long_lines_become_errors() {
        let big = format!(
            "{{\"result\":\"{}\",\"jsonrpc\":\"2.0\",\"id\":9}}\n",
            "x".repeat(5000)
        );
        let input = format!("{{\"id\":1}}\n{big}{{\"id\":2}}\n");
        let mut out = Vec::new();
        pump(input.as_bytes(), &mut out, 1000, 10_000, "s".into()).await;
        let lines: Vec<Value> = out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[1]["id"], json!(9));
        assert_eq!(lines[1]["error"]["code"], json!(TOO_LARGE_CODE));
        assert_eq!(lines[2]["id"], json!(2));
    }

    #[tokio::test]
    async fn lines_of_too_many_values_become_errors() {
        // 1.2 million values in 2.4 MB: under the byte limit, over the
        // value limit. Commas inside strings are not values.
        let many = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{\"a\":[{}1]}}}}\n",
            "1,".repeat(1_200_000)
        );
        let strings = format!("{{\"id\":8,\"result\":\"{}\"}}\n", ",".repeat(1_200_000));
        let input = format!("{many}{strings}");
        let mut out = Vec::new();
        pump(input.as_bytes(), &mut out, 16 << 20, 10_000, "s".into()).await;
        let lines: Vec<Value> = out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["id"], json!(7));
        let msg = lines[0]["error"]["message"].as_str().unwrap();
        assert!(msg.contains("more than 1000000 JSON values"), "{msg}");
        assert_eq!(lines[1]["id"], json!(8));
        assert!(lines[1].get("result").is_some());
    }

    #[tokio::test]
    async fn answers_with_too_many_blocks_become_errors() {
        let blocks = vec![r#"{"type":"text","text":"x"}"#; MAX_CONTENT_BLOCKS + 1].join(",");
        let many =
            format!("{{\"jsonrpc\":\"2.0\",\"result\":{{\"content\":[{blocks}]}},\"id\":9}}\n");
        let input = format!("{{\"id\":1}}\n{many}{{\"id\":2}}\n");
        let mut out = Vec::new();
        pump(input.as_bytes(), &mut out, 1 << 20, 10_000, "s".into()).await;
        let lines: Vec<Value> = out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[1]["id"], json!(9));
        let msg = lines[1]["error"]["message"].as_str().unwrap();
        assert!(msg.contains("content blocks"), "{msg}");
        assert_eq!(lines[2]["id"], json!(2));
    }
}
