//! Skill, subagent and command frontmatter read as Claude Code reads it
//! (attack atk24m F3; ADR 0288): the text between a `---` at the very
//! start of the file and the first `---` after it (its pattern
//! `^---\s*\n([\s\S]*?)---\s*\n?`), parsed as YAML by a full parser
//! (`saphyr-parser`: quoted and flow keys, plain scalars continued on the
//! next lines, anchors, aliases and `<<` merge keys all read as YAML reads
//! them), within bounds. The hook commands are the `command` values
//! anywhere under a top-level `hooks` key.
//!
//! A frontmatter the parser refuses is read by Claude Code after it quotes
//! the values again: if such a text names `hooks` (or holds an escape that
//! could spell it), it counts as holding a command that runs unconfined.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle};

/// Most parser events read from one frontmatter.
const MAX_EVENTS: usize = 20_000;

/// Most nodes visited when walking (aliases and merges repeat nodes).
const MAX_VISITS: usize = 50_000;

/// Deepest nesting walked.
const MAX_NESTING: usize = 64;

/// One hook command found.
#[derive(Debug, PartialEq, Eq)]
pub struct Command {
    /// The command line (`None`: a value that is not a plain string).
    pub value: Option<String>,
    /// The byte range of its scalar in the file's text, when it can be
    /// rewritten in place (written there, not reached through an alias or
    /// a merge, no `args` beside it, no tag, not a block scalar).
    pub span: Option<(usize, usize)>,
    /// The key of an OS command (`linux`, `osx`, `windows`) VS Code runs
    /// in place of `command`.
    pub os: Option<&'static str>,
}

/// What a file's frontmatter says about hooks.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    /// No frontmatter, or none naming hooks.
    None,
    /// The hook commands under `hooks` (perhaps none).
    Commands(Vec<Command>),
    /// Not read within skarn's parser and bounds while it may name hooks.
    Unreadable(String),
}

/// Whether `c` is a JavaScript `\s` character.
fn js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// The frontmatter of `text` and the byte offset where it starts, as
/// Claude Code's pattern finds it. A leading byte-order mark is skipped
/// (judging more than the client reads is safe).
pub fn frontmatter(text: &str) -> Option<(usize, &str)> {
    let skip = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let rest = text[skip..].strip_prefix("---")?;
    let after = skip + 3;
    // `\s*\n`: the run of spaces after `---`, up to its last newline.
    let run: usize = rest
        .char_indices()
        .find(|(_, c)| !js_space(*c))
        .map_or(rest.len(), |(i, _)| i);
    let nl = rest[..run].rfind('\n')?;
    let start = after + nl + 1;
    let end = start + text[start..].find("---")?;
    Some((start, &text[start..end]))
}

#[derive(Debug)]
enum Node {
    Scalar {
        value: String,
        style: ScalarStyle,
        tagged: bool,
        span: (usize, usize),
    },
    Seq(Vec<usize>),
    /// Keys and values, alternating.
    Map(Vec<usize>),
    Alias(usize),
}

/// The parsed frontmatter: nodes, anchors, roots.
struct Doc {
    nodes: Vec<Node>,
    anchors: HashMap<usize, usize>,
    roots: Vec<usize>,
}

/// Character offsets of `s` to byte offsets.
fn byte_at(s: &str, chars: usize) -> usize {
    s.char_indices().nth(chars).map_or(s.len(), |(i, _)| i)
}

fn parse(body: &str, base: usize) -> Result<Doc, String> {
    let mut doc = Doc {
        nodes: Vec::new(),
        anchors: HashMap::new(),
        roots: Vec::new(),
    };
    let mut stack: Vec<usize> = Vec::new();
    let mut parser = Parser::new_from_str(body);
    let mut n = 0;
    // Character offsets grow: convert them walking forward.
    let mut conv = (0usize, 0usize);
    let mut to_byte = |c: usize| -> usize {
        if c < conv.0 {
            conv = (0, 0);
        }
        let b = conv.1 + byte_at(&body[conv.1..], c - conv.0);
        conv = (c, b);
        b
    };
    while let Some(r) = parser.next_event() {
        let (ev, span) = r.map_err(|e| e.to_string())?;
        n += 1;
        if n > MAX_EVENTS {
            return Err("too many YAML events".into());
        }
        let (anchor, node) = match ev {
            Event::StreamEnd => break,
            Event::Scalar(v, style, anchor, tag) => {
                let s = to_byte(span.start.index());
                let e = to_byte(span.end.index());
                (
                    anchor,
                    Node::Scalar {
                        value: v.into_owned(),
                        style,
                        tagged: tag.is_some(),
                        span: (base + s, base + e),
                    },
                )
            }
            Event::SequenceStart(anchor, _) => (anchor, Node::Seq(Vec::new())),
            Event::MappingStart(anchor, _) => (anchor, Node::Map(Vec::new())),
            Event::Alias(id) => (0, Node::Alias(id)),
            Event::SequenceEnd | Event::MappingEnd => {
                stack.pop();
                continue;
            }
            _ => continue,
        };
        let open = matches!(node, Node::Seq(_) | Node::Map(_));
        let idx = doc.nodes.len();
        doc.nodes.push(node);
        if anchor > 0 {
            doc.anchors.insert(anchor, idx);
        }
        match stack.last().map(|p| &mut doc.nodes[*p]) {
            Some(Node::Seq(v) | Node::Map(v)) => v.push(idx),
            _ => doc.roots.push(idx),
        }
        if open {
            stack.push(idx);
        }
    }
    Ok(doc)
}

/// A walk over the document within [`MAX_VISITS`].
struct Walk<'a> {
    doc: &'a Doc,
    visits: usize,
}

impl Walk<'_> {
    /// `idx` with aliases followed; whether one was.
    fn resolve(&mut self, mut idx: usize) -> Result<(usize, bool), String> {
        let mut via = false;
        for _ in 0..MAX_NESTING {
            self.visits += 1;
            if self.visits > MAX_VISITS {
                return Err("too many YAML nodes (aliases)".into());
            }
            match self.doc.nodes.get(idx) {
                Some(Node::Alias(id)) => {
                    idx = *self.doc.anchors.get(id).ok_or("an unknown alias")?;
                    via = true;
                }
                Some(_) => return Ok((idx, via)),
                None => return Err("a bad node".into()),
            }
        }
        Err("aliases nested too deep".into())
    }

    /// The entries of the mapping `idx`, with `<<` merges taken in (all
    /// of them: more than YAML keeps is safe); each with whether it came
    /// through an alias or a merge.
    fn entries(
        &mut self,
        idx: usize,
        via: bool,
        depth: usize,
    ) -> Result<Vec<(usize, usize, bool)>, String> {
        if depth > MAX_NESTING {
            return Err("merges nested too deep".into());
        }
        let Some(Node::Map(kv)) = self.doc.nodes.get(idx) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for pair in kv.chunks(2) {
            let [k, v] = pair else { continue };
            let (kr, _) = self.resolve(*k)?;
            let merge = matches!(&self.doc.nodes[kr], Node::Scalar { value, style: ScalarStyle::Plain, .. } if value == "<<");
            if !merge {
                out.push((*k, *v, via));
                continue;
            }
            let (vr, _) = self.resolve(*v)?;
            let from: Vec<usize> = match &self.doc.nodes[vr] {
                Node::Seq(items) => items.clone(),
                _ => vec![vr],
            };
            for m in from {
                let (mr, _) = self.resolve(m)?;
                out.extend(self.entries(mr, true, depth + 1)?);
            }
        }
        Ok(out)
    }

    /// The string a key node reads as (`None`: not a scalar).
    fn key(&mut self, idx: usize) -> Result<Option<String>, String> {
        let (r, _) = self.resolve(idx)?;
        Ok(match &self.doc.nodes[r] {
            Node::Scalar { value, .. } => Some(value.clone()),
            _ => None,
        })
    }

    /// Every `command` under `idx`.
    fn commands(
        &mut self,
        idx: usize,
        via: bool,
        depth: usize,
        out: &mut Vec<Command>,
    ) -> Result<(), String> {
        if depth > MAX_NESTING {
            return Err("nested too deep".into());
        }
        let (r, aliased) = self.resolve(idx)?;
        let via = via || aliased;
        match &self.doc.nodes[r] {
            Node::Seq(items) => {
                for i in items.clone() {
                    self.commands(i, via, depth + 1, out)?;
                }
            }
            Node::Map(_) => {
                let entries = self.entries(r, via, 0)?;
                let mut args = None;
                let (mut ty, mut to) = (None, Vec::new());
                for (k, v, _) in &entries {
                    match self.key(*k)?.as_deref() {
                        Some("args") => args = Some(*v),
                        Some("type") => ty = Some(self.key(*v)?.unwrap_or_default()),
                        Some("url" | "server" | "tool") => {
                            to.push(self.key(*v)?.unwrap_or_default())
                        }
                        _ => {}
                    }
                }
                // A handler that is not a command (`http`, `mcp_tool`, a
                // later type): skarn can neither wrap nor judge it, so it
                // counts as an unconfined command that cannot be rewritten
                // (atk24n F11), named as the settings' are.
                if let Some(t) = ty
                    .clone()
                    .filter(|t| !["command", "prompt", "agent"].contains(&t.as_str()))
                {
                    let what = if to.is_empty() {
                        format!("{t} hook {{}}")
                    } else {
                        format!("{t} hook to {}", to.join("/"))
                    };
                    out.push(Command {
                        value: Some(what),
                        span: None,
                        os: None,
                    });
                }
                // A hook entry's other commands and the values that change
                // how it runs (atk24u F7, F3): VS Code runs `linux`/`osx`/
                // `windows` in place of `command` (judged and wrapped
                // alike); `env`, `cwd` or another `shell` cannot be kept
                // beside a wrapped command (not rewritable: init stops).
                let entry = ty.is_some() || self.has_key(&entries, "command")?;
                for (k, v, evia) in entries {
                    match self.key(k)?.as_deref() {
                        Some("command") => out.push(self.command(v, evia, args)?),
                        Some(os @ ("linux" | "osx" | "windows")) if entry => {
                            let mut c = self.command(v, evia, None)?;
                            c.os = ["linux", "osx", "windows"].into_iter().find(|o| *o == os);
                            out.push(c);
                        }
                        Some(how @ ("env" | "cwd" | "shell")) if entry => {
                            let x = self.json(v, 0)?;
                            if !(how == "shell" && x.as_str() == Some("bash")) {
                                out.push(Command {
                                    value: Some(format!(
                                        "{how}: {x} (a hook entry's {how} changes how its command \
                                         runs, on the host: skarn cannot confine it; remove it)"
                                    )),
                                    span: None,
                                    os: None,
                                });
                            }
                        }
                        _ => self.commands(v, evia, depth + 1, out)?,
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Whether one of `entries` has the key `name`.
    fn has_key(&mut self, entries: &[(usize, usize, bool)], name: &str) -> Result<bool, String> {
        for (k, _, _) in entries {
            if self.key(*k)?.as_deref() == Some(name) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The command of a `command` value `v` (with `args` beside it).
    fn command(&mut self, v: usize, via: bool, args: Option<usize>) -> Result<Command, String> {
        let (r, aliased) = self.resolve(v)?;
        let Node::Scalar {
            value,
            style,
            tagged,
            span,
        } = &self.doc.nodes[r]
        else {
            return Ok(Command {
                value: None,
                span: None,
                os: None,
            });
        };
        let (value, style, tagged, span) = (value.clone(), *style, *tagged, *span);
        let mut line = value.clone();
        if let Some(a) = args {
            let (ar, _) = self.resolve(a)?;
            let items = match &self.doc.nodes[ar] {
                Node::Seq(items) => items.clone(),
                _ => {
                    return Ok(Command {
                        value: None,
                        span: None,
                        os: None,
                    });
                }
            };
            let mut words = vec![super::shell::quote(&value)];
            for i in items {
                let (ir, _) = self.resolve(i)?;
                match &self.doc.nodes[ir] {
                    Node::Scalar { value, .. } => words.push(super::shell::quote(value)),
                    _ => {
                        return Ok(Command {
                            value: None,
                            span: None,
                            os: None,
                        });
                    }
                }
            }
            line = words.join(" ");
        }
        let in_place = !via
            && !aliased
            && args.is_none()
            && !tagged
            && matches!(
                style,
                ScalarStyle::Plain | ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted
            );
        Ok(Command {
            value: Some(line),
            span: in_place.then_some(span),
            os: None,
        })
    }
}

/// Whether a frontmatter the parser refused may name hooks for the client.
fn may_name_hooks(fm: &str) -> bool {
    fm.to_lowercase().contains("hooks") || fm.contains('\\')
}

/// Read the hook commands of a skill's, subagent's or command's `text`.
pub fn read(text: &str) -> Read {
    let Some((base, fm)) = frontmatter(text) else {
        return Read::None;
    };
    let unreadable = |why: String| {
        if may_name_hooks(fm) {
            Read::Unreadable(why)
        } else {
            Read::None
        }
    };
    let doc = match parse(fm, base) {
        Ok(d) => d,
        Err(e) => return unreadable(e),
    };
    let mut w = Walk {
        doc: &doc,
        visits: 0,
    };
    let mut out = Vec::new();
    let mut named = false;
    for root in doc.roots.clone() {
        let found = (|| -> Result<(), String> {
            let (r, via) = w.resolve(root)?;
            for (k, v, evia) in w.entries(r, via, 0)? {
                if w.key(k)?.as_deref() == Some("hooks") {
                    named = true;
                    w.commands(v, evia, 0, &mut out)?;
                }
            }
            Ok(())
        })();
        if let Err(e) = found {
            return unreadable(e);
        }
    }
    if named {
        Read::Commands(out)
    } else {
        Read::None
    }
}

mod value;
pub use value::top_value;

#[cfg(test)]
#[path = "frontmatter_yaml_tests.rs"]
mod tests;
