//! The wire protocol between the parent (gateway, `skarn exec`) and a worker.
//!
//! # Framing
//!
//! Newline-delimited JSON over the worker's stdin (parent → worker) and
//! stdout (worker → parent). Each message is exactly one JSON object
//! serialized compactly (serde_json never emits a raw newline inside a
//! value: newlines in strings are escaped), followed by one `\n` byte.
//! UTF-8 only. A line longer than the reader's cap is a protocol violation
//! (see [`LineReader`]); so is anything that is not one of the messages
//! below. stderr carries nothing the parent parses.
//!
//! # Conversation
//!
//! ```text
//! worker → {"type":"ready","pid":N,"confinement":{...}}      once confined
//! parent → {"type":"job","code":"...","limits":{...}}        exactly one job
//! worker → {"type":"call","id":1,"call":{"op":"call_tool","server":"s","tool":"t","args":{}}}
//! parent → {"type":"reply","id":1,"result":{"Ok":<value>}}  (or {"Err":<BridgeError>})
//!   ... any number of calls, several may be outstanding, replies in any order ...
//! worker → {"type":"done","outcome":<ExecOutcome>}
//! ```
//!
//! A job may instead carry `"selftest":{...}` (the confinement self-test):
//! the worker then runs no code and answers `{"type":"selftest",...}`. A
//! worker that cannot confine itself says `{"type":"fatal","message":...}`
//! and exits. Ids are chosen by the worker, unique within a job.

use std::io::{self, Read};
#[cfg(unix)]
use std::os::fd::AsFd;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use skarn_codemode::{BridgeError, ExecOutcome, Limits};

use crate::confine::ConfinementReport;

/// Parent → worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToWorker {
    /// The one job this worker runs.
    Job {
        code: String,
        limits: Limits,
        /// Run the confinement self-test instead of the code.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        selftest: Option<SelftestSpec>,
    },
    /// The answer to host call `id`.
    Reply {
        id: u64,
        result: Result<Value, BridgeError>,
    },
}

/// Worker → parent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum FromWorker {
    Ready {
        pid: u32,
        confinement: ConfinementReport,
    },
    Call {
        id: u64,
        call: HostCall,
    },
    Done {
        outcome: ExecOutcome,
    },
    Selftest {
        attempts: Vec<Attempt>,
    },
    Fatal {
        message: String,
    },
}

/// One host call a script made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum HostCall {
    CallTool {
        server: String,
        tool: String,
        args: Value,
    },
    ListTools,
    ReadResource {
        server: String,
        uri: String,
    },
}

/// What the self-test should try after confinement (paths and port are
/// chosen by the test so it can check from outside that nothing happened).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelftestSpec {
    /// An existing file to open for reading.
    pub read_path: String,
    /// A path to create and write.
    pub write_path: String,
    /// A loopback TCP port (in the parent's namespace) to connect to.
    pub connect_port: u16,
    /// A program to spawn.
    pub spawn_program: String,
    /// An abstract unix socket name (without the leading NUL) a listener
    /// of the test's holds, to connect to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abstract_name: Option<String>,
}

/// The result of one escape attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    pub what: String,
    /// True when the attempt failed (what we want).
    pub blocked: bool,
    /// The error, or what unexpectedly succeeded.
    pub detail: String,
}

/// Largest reply (one tool result as a JSON line) a worker accepts for a job
/// with these limits: an eighth of its heap, at least 1 MiB. The result is
/// parsed outside QuickJS's accounting before the script sees it, and the
/// worker's address-space limit leaves room for about that much. The parent
/// replaces a larger result with an error the script can catch.
pub fn reply_cap(limits: &Limits) -> usize {
    (limits.memory_bytes / 8).max(1 << 20)
}

/// Deepest line accepted: a tool result at `MAX_RESULT_DEPTH` (or a value
/// at the engine's conversion depth) plus the envelope around it.
pub const MAX_LINE_DEPTH: usize = skarn_codemode::MAX_RESULT_DEPTH + 16;

/// Lines at most this deep parse with serde_json's own recursion guard.
const SHALLOW: usize = 100;

/// Native stack per nesting level when parsing a deep line (measured with
/// room to spare in debug builds).
const STACK_PER_LEVEL: usize = 16 << 10;

/// Nesting depth of one JSON line, counted on the raw bytes.
pub fn line_depth(line: &[u8]) -> usize {
    let (mut depth, mut max, mut in_str, mut escaped) = (0usize, 0usize, false, false);
    for &b in line {
        if in_str {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Parse one line. Lines up to [`MAX_LINE_DEPTH`] levels deep parse
/// (past serde_json's default limit of 128, on a thread whose stack fits
/// the depth); deeper ones are an error.
pub fn decode<T: serde::de::DeserializeOwned + Send>(line: &[u8]) -> Result<T, String> {
    let depth = line_depth(line);
    if depth <= SHALLOW {
        return serde_json::from_slice(line).map_err(|e| e.to_string());
    }
    if depth > MAX_LINE_DEPTH {
        return Err(format!(
            "nested {depth} levels deep, more than {MAX_LINE_DEPTH}"
        ));
    }
    let parse = || -> Result<T, String> {
        let mut de = serde_json::Deserializer::from_slice(line);
        de.disable_recursion_limit();
        let v = T::deserialize(&mut de).map_err(|e| e.to_string())?;
        de.end().map_err(|e| e.to_string())?;
        Ok(v)
    };
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("skarn-decode".into())
            .stack_size((1 << 20) + depth * STACK_PER_LEVEL)
            .spawn_scoped(s, parse)
            .map_err(|e| format!("cannot start a decoding thread: {e}"))?
            .join()
            .map_err(|_| "the decoder failed".to_string())?
    })
}

/// Serialize one message as a line (with its trailing `\n`).
pub fn encode<T: Serialize>(msg: &T) -> Vec<u8> {
    // Serializing these types cannot fail: every map key is a string.
    let mut v = serde_json::to_vec(msg).unwrap_or_else(|e| {
        format!("{{\"type\":\"fatal\",\"message\":\"encode: {e}\"}}").into_bytes()
    });
    v.push(b'\n');
    v
}

/// Why no line could be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("the deadline passed")]
    Timeout,
    #[error("the pipe closed")]
    Eof,
    #[error("a message exceeded {cap} bytes")]
    Oversized { cap: usize },
    #[error("pipe: {0}")]
    Io(#[from] io::Error),
}

/// What a [`LineReader`] reads from: on unix, something `poll` can wait on
/// (a pipe), for the deadline.
#[cfg(unix)]
pub trait LineSource: Read + AsFd {}
#[cfg(unix)]
impl<T: Read + AsFd> LineSource for T {}

/// What a [`LineReader`] reads from. Off unix a deadline cannot be waited
/// for, and a read with one fails (the worker process is unix-only).
#[cfg(not(unix))]
pub trait LineSource: Read {}
#[cfg(not(unix))]
impl<T: Read> LineSource for T {}

/// Reads `\n`-terminated lines of at most `cap` bytes, with an optional
/// deadline (enforced with `poll`, so a silent peer cannot block us).
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Bytes of `buf` already scanned for a newline.
    scanned: usize,
    cap: usize,
}

impl<R: LineSource> LineReader<R> {
    pub fn new(inner: R, cap: usize) -> Self {
        LineReader {
            inner,
            buf: Vec::new(),
            scanned: 0,
            cap,
        }
    }

    pub fn set_cap(&mut self, cap: usize) {
        self.cap = cap;
    }

    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The next line without its `\n`. `deadline: None` blocks.
    pub fn read_line(&mut self, deadline: Option<Instant>) -> Result<Vec<u8>, ReadError> {
        loop {
            if let Some(pos) = self.buf[self.scanned..].iter().position(|&b| b == b'\n') {
                let end = self.scanned + pos;
                let mut line: Vec<u8> = self.buf.drain(..=end).collect();
                line.pop();
                self.scanned = 0;
                return Ok(line);
            }
            self.scanned = self.buf.len();
            if self.buf.len() > self.cap {
                return Err(ReadError::Oversized { cap: self.cap });
            }
            if let Some(d) = deadline {
                wait_readable(&self.inner, d)?;
            }
            let mut chunk = [0u8; 64 * 1024];
            let n = match self.inner.read(&mut chunk) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if n == 0 {
                return Err(ReadError::Eof);
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

#[cfg(not(unix))]
fn wait_readable<R>(_: &R, _: Instant) -> Result<(), ReadError> {
    Err(ReadError::Io(io::Error::new(
        io::ErrorKind::Unsupported,
        "waiting for a line with a deadline needs unix poll",
    )))
}

#[cfg(unix)]
fn wait_readable<R: AsFd>(r: &R, deadline: Instant) -> Result<(), ReadError> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let fd = r.as_fd();
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Err(ReadError::Timeout);
        }
        let left = deadline - now;
        let ts = Timespec {
            tv_sec: left.as_secs() as i64,
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match poll(&mut fds, Some(&ts)) {
            Ok(0) => continue,
            Ok(_) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(ReadError::Io(e.into())),
        }
    }
}

#[cfg(all(test, unix))] // pipes made the unix way
#[allow(clippy::unwrap_used)] // test code
mod tests {
    use super::*;

    fn reader(data: &[u8], cap: usize) -> LineReader<std::fs::File> {
        let (r, w) = rustix::pipe::pipe().unwrap();
        let mut w = std::fs::File::from(w);
        std::io::Write::write_all(&mut w, data).unwrap();
        drop(w);
        LineReader::new(std::fs::File::from(r), cap)
    }

    #[test]
    fn splits_lines_and_reports_eof() {
        let mut r = reader(b"{\"a\":1}\n{\"b\":2}\npartial", 100);
        assert_eq!(r.read_line(None).unwrap(), b"{\"a\":1}");
        assert_eq!(r.read_line(None).unwrap(), b"{\"b\":2}");
        assert!(matches!(r.read_line(None), Err(ReadError::Eof)));
    }

    #[test]
    fn oversized_line_is_refused() {
        let mut r = reader(&[b'x'; 300], 100);
        assert!(matches!(
            r.read_line(None),
            Err(ReadError::Oversized { cap: 100 })
        ));
    }

    #[test]
    fn deadline_on_silent_peer() {
        let (r, _w) = rustix::pipe::pipe().unwrap();
        let mut r = LineReader::new(std::fs::File::from(r), 100);
        let d = Instant::now() + std::time::Duration::from_millis(20);
        assert!(matches!(r.read_line(Some(d)), Err(ReadError::Timeout)));
    }

    #[test]
    fn messages_round_trip_and_unknown_fields_are_refused() {
        let m = FromWorker::Call {
            id: 3,
            call: HostCall::CallTool {
                server: "s".into(),
                tool: "t".into(),
                args: serde_json::json!({"x": "a\nb"}),
            },
        };
        let line = encode(&m);
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        let back: FromWorker = serde_json::from_slice(&line).unwrap();
        assert!(matches!(back, FromWorker::Call { id: 3, .. }));
        assert!(
            serde_json::from_str::<FromWorker>(r#"{"type":"done","outcome":{},"x":1}"#).is_err()
        );
        assert!(serde_json::from_str::<FromWorker>(r#"{"type":"nope"}"#).is_err());
    }
}
