//! The value of a top-level frontmatter key as JSON (a subagent's
//! `mcpServers`), and a hook entry's other values (`env`).

use super::{MAX_NESTING, Node, Walk, frontmatter, parse};

/// The value of the top-level key `key` of `text`'s frontmatter as JSON
/// (aliases followed, merges taken in, scalars as strings), for the
/// other keys the client acts on (a subagent's `mcpServers`, atk24o
/// F11). `Ok(None)`: no frontmatter or no such key; `Err`: not read
/// within the parser's bounds.
pub fn top_value(text: &str, key: &str) -> Result<Option<serde_json::Value>, String> {
    let Some((base, fm)) = frontmatter(text) else {
        return Ok(None);
    };
    let doc = parse(fm, base)?;
    let mut w = Walk {
        doc: &doc,
        visits: 0,
    };
    for root in doc.roots.clone() {
        let (r, via) = w.resolve(root)?;
        for (k, v, _) in w.entries(r, via, 0)? {
            if w.key(k)?.as_deref() == Some(key) {
                return w.json(v, 0).map(Some);
            }
        }
    }
    Ok(None)
}

impl Walk<'_> {
    /// The node `idx` as JSON.
    pub(super) fn json(&mut self, idx: usize, depth: usize) -> Result<serde_json::Value, String> {
        use serde_json::Value;
        if depth > MAX_NESTING {
            return Err("nested too deep".into());
        }
        let (r, _) = self.resolve(idx)?;
        Ok(match &self.doc.nodes[r] {
            Node::Scalar { value, .. } => Value::String(value.clone()),
            Node::Seq(items) => Value::Array(
                items
                    .clone()
                    .into_iter()
                    .map(|i| self.json(i, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Node::Map(_) => {
                let mut m = serde_json::Map::new();
                for (k, v, _) in self.entries(r, false, 0)? {
                    let Some(name) = self.key(k)? else {
                        return Err("a key that is not a scalar".into());
                    };
                    m.insert(name, self.json(v, depth + 1)?);
                }
                Value::Object(m)
            }
            Node::Alias(_) => return Err("a bad alias".into()),
        })
    }
}
