//! What one script run produced. Serializable: the worker process sends it
//! back to the gateway as JSON.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which class of failure ended a run. Distinct kinds map to distinct exit
/// codes in `skarn exec` and to distinct error texts in the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The static validator rejected the script before it ran.
    Rejected,
    /// The script does not parse.
    Syntax,
    /// The script threw (or returned a rejected promise, or a value that is
    /// not JSON-serializable).
    Runtime,
    /// Memory limit hit.
    Memory,
    /// Native stack limit hit.
    Stack,
    /// Wall-clock deadline passed (or the script waits on nothing).
    Deadline,
    /// Tool-call budget exhausted.
    ToolCalls,
    /// Returned value larger than the output cap.
    Output,
    /// A failure of the engine or its host process, not of the script.
    Internal,
}

impl ErrorKind {
    /// True for the resource limits (memory, stack, deadline, tool calls, output).
    pub fn is_limit(self) -> bool {
        matches!(
            self,
            ErrorKind::Memory
                | ErrorKind::Stack
                | ErrorKind::Deadline
                | ErrorKind::ToolCalls
                | ErrorKind::Output
        )
    }
}

/// One failure, located in the user's own script when it has a location.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecError {
    pub kind: ErrorKind,
    /// Human-readable message, e.g. "ReferenceError: x is not defined".
    pub message: String,
    /// 1-based line in the user's script, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based column in the user's script, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// Every violation, for `Rejected` (each "line:col: what").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
}

impl ExecError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ExecError {
            kind,
            message: message.into(),
            line: None,
            column: None,
            details: Vec::new(),
        }
    }
}

impl std::fmt::Display for ExecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{} (line {l}, column {c})", self.message)?,
            (Some(l), None) => write!(f, "{} (line {l})", self.message)?,
            _ => write!(f, "{}", self.message)?,
        }
        for d in &self.details {
            write!(f, "\n  {d}")?;
        }
        Ok(())
    }
}

/// The full result of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecOutcome {
    /// The returned value (JSON; `null` for `undefined`) or the failure.
    pub result: Result<Value, ExecError>,
    /// `skarn.log` lines, already capped (a final marker line says how much was dropped).
    pub logs: Vec<String>,
    /// Host calls made.
    pub tool_calls: u32,
    /// Wall time of the run in milliseconds.
    pub elapsed_ms: u64,
}

impl ExecOutcome {
    /// An outcome that failed before anything ran.
    pub fn failed(err: ExecError) -> Self {
        ExecOutcome {
            result: Err(err),
            logs: Vec::new(),
            tool_calls: 0,
            elapsed_ms: 0,
        }
    }
}
