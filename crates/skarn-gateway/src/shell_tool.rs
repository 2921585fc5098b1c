//! The optional `run` tool (`[gateway] shell = true`): a shell command run
//! under `skarn run` with the workspace's policy, its output compressed
//! (every cut recoverable with `skarn recall`), so any MCP client gets a
//! confined, token-lean shell without hooks.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolResult, Tool};
use serde_json::{Map, Value, json};
use tokio::io::AsyncReadExt;

use crate::server::text_result;

/// Largest output read back from one command (the compressed text).
const MAX_OUTPUT: u64 = 1 << 20;

/// Tool name.
pub const NAME: &str = "run";

/// The tool's definition.
pub fn tool() -> Tool {
    serde_json::from_value(json!({
        "name": NAME,
        "description": "Run a shell command (sh -c) confined by the skarn sandbox: it writes only \
            inside the workspace (the enclosing git work tree of cwd), reads only system \
            directories, toolchains and the workspace (never ~/.ssh, ~/.aws or other secrets), \
            has no network, and its home is private and discarded. Output comes back compressed; \
            a recall id in it recovers every cut line (`skarn recall ID`). If the command needs \
            more (e.g. network to a registry), say so to the user: they can allow it in skarn.toml \
            [run] (net = \"allow:registries\").",
        "inputSchema": {"type":"object","properties":{
            "command":{"type":"string","description":"The shell command"},
            "cwd":{"type":"string","description":"Absolute working directory (default: the gateway's)"},
            "timeout":{"type":"string","description":"Wall-clock limit, e.g. \"90s\", \"10m\" (default 10m)"}
        },"required":["command"]},
    }))
    .expect("static tool definition")
}

fn arg<'a>(args: &'a Option<Map<String, Value>>, k: &str) -> Option<&'a Value> {
    args.as_ref().and_then(|a| a.get(k))
}

/// Run one command; the result text starts with `exit N`.
pub async fn call(args: &Option<Map<String, Value>>) -> CallToolResult {
    let Some(cmd) = arg(args, "command").and_then(Value::as_str) else {
        return text_result("run needs a string argument `command`", None, true);
    };
    let cwd = match arg(args, "cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if Path::new(s).is_absolute() && Path::new(s).is_dir() => {
            Some(PathBuf::from(s))
        }
        Some(v) => {
            return text_result(
                format!("cwd must be an absolute path to a directory, not {v}"),
                None,
                true,
            );
        }
    };
    let timeout = match arg(args, "timeout") {
        None | Some(Value::Null) => Duration::from_secs(600),
        Some(v) => {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => String::new(),
            };
            match skarn_units::parse_duration(&s, skarn_units::DurationUnit::Secs) {
                Ok(d) if d >= Duration::from_secs(1) => d,
                _ => {
                    return text_result(
                        format!("timeout must be a duration such as \"90s\" or \"10m\", not {v}"),
                        None,
                        true,
                    );
                }
            }
        }
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return text_result(format!("cannot find the skarn binary: {e}"), None, true),
    };
    let mut c = tokio::process::Command::new(exe);
    c.args(["run", "--compress", "--timeout"])
        .arg(format!("{}s", timeout.as_secs().max(1)))
        .args(["--", "sh", "-c", cmd])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(d) = &cwd {
        c.current_dir(d);
    }
    let mut child = match c.spawn() {
        Ok(ch) => ch,
        Err(e) => return text_result(format!("cannot start skarn run: {e}"), None, true),
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let so = child.stdout.take();
    let se = child.stderr.take();
    let read = async {
        if let Some(s) = so {
            let _ = s.take(MAX_OUTPUT).read_to_end(&mut out).await;
        }
    };
    let read_err = async {
        if let Some(s) = se {
            let _ = s.take(MAX_OUTPUT).read_to_end(&mut err).await;
        }
    };
    // The sandbox enforces the timeout itself; this bound only guards the
    // gateway against a helper that never exits.
    let waited = tokio::time::timeout(timeout + Duration::from_secs(30), async {
        tokio::join!(read, read_err);
        child.wait().await
    })
    .await;
    let code = match waited {
        Ok(Ok(st)) => st.code().unwrap_or(128),
        Ok(Err(e)) => return text_result(format!("skarn run failed: {e}"), None, true),
        Err(_) => return text_result("skarn run did not end; it was killed", None, true),
    };
    let mut text = format!("exit {code}\n");
    text.push_str(&String::from_utf8_lossy(&out));
    if !err.is_empty() {
        text.push_str(&String::from_utf8_lossy(&err));
    }
    text_result(text, Some(json!({"exit_code": code})), code != 0)
}
