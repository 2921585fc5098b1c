//! `skarn.log` lines, capped by count and by bytes.
//!
//! Logging never costs the returned value: lines past either cap are
//! dropped (a line that crosses the byte cap is cut), and one final marker
//! line says how many lines and bytes were dropped.

/// Collected log lines with their caps.
#[derive(Debug)]
pub(crate) struct LogSink {
    lines: Vec<String>,
    bytes: usize,
    max_lines: usize,
    max_bytes: usize,
    dropped_lines: u64,
    dropped_bytes: u64,
}

impl LogSink {
    pub(crate) fn new(max_lines: usize, max_bytes: usize) -> Self {
        LogSink {
            lines: Vec::new(),
            bytes: 0,
            max_lines,
            max_bytes,
            dropped_lines: 0,
            dropped_bytes: 0,
        }
    }

    /// Bytes a new line may still use (callers cap their formatting with it).
    pub(crate) fn remaining_bytes(&self) -> usize {
        if self.lines.len() >= self.max_lines {
            0
        } else {
            self.max_bytes.saturating_sub(self.bytes)
        }
    }

    /// Record that a line of `bytes` bytes was dropped without being built.
    pub(crate) fn drop_line(&mut self, bytes: usize) {
        self.dropped_lines += 1;
        self.dropped_bytes += bytes as u64;
    }

    pub(crate) fn push(&mut self, mut line: String) {
        if self.lines.len() >= self.max_lines || self.bytes >= self.max_bytes {
            self.drop_line(line.len());
            return;
        }
        let room = self.max_bytes - self.bytes;
        if line.len() > room {
            let mut cut = room;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            self.dropped_bytes += (line.len() - cut) as u64;
            line.truncate(cut);
        }
        self.bytes += line.len();
        self.lines.push(line);
    }

    /// The kept lines plus, when anything was cut, a marker line.
    pub(crate) fn snapshot(&self) -> Vec<String> {
        let mut out = self.lines.clone();
        if self.dropped_lines > 0 || self.dropped_bytes > 0 {
            let bytes = if self.dropped_bytes > 0 {
                format!(", at least {} byte(s)", self.dropped_bytes)
            } else {
                String::new()
            };
            out.push(format!(
                "[skarn: log capped at {} lines / {} bytes: {} more line(s) dropped{bytes}]",
                self.max_lines, self.max_bytes, self.dropped_lines
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_lines_and_bytes_with_marker() {
        let mut s = LogSink::new(2, 1000);
        s.push("a".into());
        s.push("b".into());
        s.push("c".into());
        let out = s.snapshot();
        assert_eq!(out.len(), 3);
        assert!(out[2].contains("1 more line(s)"), "{out:?}");

        let mut s = LogSink::new(100, 10);
        s.push("12345678".into());
        s.push("abcdef".into());
        s.push("zzz".into());
        let out = s.snapshot();
        assert_eq!(out[0], "12345678");
        assert_eq!(out[1], "ab");
        assert!(
            out[2].contains("1 more line(s) dropped, at least 7 byte(s)"),
            "{out:?}"
        );
    }
}
