//! Positions in the user's own script.
//!
//! The engine never runs the user's text verbatim: TypeScript is stripped by
//! oxc's code generator and the result is wrapped in a module. Every
//! position the engine reports (validation, syntax, runtime stack frames) is
//! translated back to a 1-based line and column of the text the user wrote.

/// The module name under which the user's script is compiled (it appears
/// in raw engine stack frames, which are translated before reporting).
pub(crate) const SCRIPT_NAME: &str = "script";

/// Line starts of a text, to turn byte offsets into 1-based line/column.
#[derive(Debug, Clone)]
pub(crate) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Lines end at LF, CRLF, a lone CR, U+2028 and U+2029, as in JavaScript.
    pub(crate) fn new(text: &str) -> Self {
        let mut starts = vec![0];
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '\r' if matches!(chars.peek(), Some((_, '\n'))) => {}
                '\n' | '\r' | '\u{2028}' | '\u{2029}' => starts.push(i + c.len_utf8()),
                _ => {}
            }
        }
        LineIndex { starts }
    }

    /// 1-based (line, column) of byte `offset`; the column counts UTF-16
    /// code units like every JavaScript tool does.
    pub(crate) fn line_col(&self, text: &str, offset: u32) -> (u32, u32) {
        let offset = (offset as usize).min(text.len());
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.starts[line];
        let col = text
            .get(start..offset)
            .map(|s| s.encode_utf16().count())
            .unwrap_or(offset - start);
        (line as u32 + 1, col as u32 + 1)
    }
}

/// One mapping from the generated JavaScript to the user's text, all 0-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Mapping {
    gen_line: u32,
    gen_col: u32,
    src_line: u32,
    src_col: u32,
}

/// Maps positions in the generated JavaScript back to the user's script.
#[derive(Debug, Clone, Default)]
pub(crate) struct SourceMap {
    mappings: Vec<Mapping>,
}

impl SourceMap {
    pub(crate) fn from_oxc(map: &oxc_sourcemap::SourceMap<'_>) -> Self {
        let mut mappings: Vec<Mapping> = map
            .get_tokens()
            .filter(|t| t.get_source_id().is_some())
            .map(|t| Mapping {
                gen_line: t.get_dst_line(),
                gen_col: t.get_dst_col(),
                src_line: t.get_src_line(),
                src_col: t.get_src_col(),
            })
            .collect();
        mappings.sort_unstable();
        SourceMap { mappings }
    }

    /// Translate a 1-based (line, column) of the generated code to a 1-based
    /// (line, column) of the user's script: the nearest mapping at or before
    /// the position on the same generated line, else the first one after it
    /// on that line, else the last mapping of an earlier line.
    pub(crate) fn original(&self, line: u32, col: u32) -> Option<(u32, u32)> {
        let key = (line.checked_sub(1)?, col.saturating_sub(1));
        let idx = self
            .mappings
            .partition_point(|m| (m.gen_line, m.gen_col) <= key);
        let before = idx.checked_sub(1).map(|i| self.mappings[i]);
        let after = self.mappings.get(idx).copied();
        let pick = match (before, after) {
            (Some(b), _) if b.gen_line == key.0 => b,
            (_, Some(a)) if a.gen_line == key.0 => a,
            (Some(b), _) => b,
            (None, Some(a)) => a,
            (None, None) => return None,
        };
        Some((pick.src_line + 1, pick.src_col + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::LineIndex;

    #[test]
    fn line_terminators_match_javascript() {
        let text = "a\r\nb\rc\u{2028}d\ne";
        let idx = LineIndex::new(text);
        let at = |needle: char| idx.line_col(text, text.find(needle).unwrap() as u32);
        assert_eq!(at('a'), (1, 1));
        assert_eq!(at('b'), (2, 1));
        assert_eq!(at('c'), (3, 1));
        assert_eq!(at('d'), (4, 1));
        assert_eq!(at('e'), (5, 1));
    }
}
