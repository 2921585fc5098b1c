//! skarn-example-server: a small downstream MCP server on rmcp, over stdio,
//! for Skarn's hermetic tests, benchmarks and demos.
//!
//! Tools: `echo`, `add`, `sleep`, `fail` (an isError result), `crash` (the
//! process exits in the middle of the call), `notes_list` / `notes_add`
//! (a tiny in-memory note store), and `add_tool` (registers a new tool and
//! sends `notifications/tools/list_changed`). One resource
//! (`example://readme`) and one prompt (`greet`).
//!
//! Flags:
//!   --name NAME          server name reported at initialize
//!   --tools FILE         also serve the tools in FILE (a JSON array of
//!                        {name, description, inputSchema}); each echoes
//!                        its arguments back
//!   --no-builtin         list only the --tools tools (benchmarks)
//!   --hang-on-start      never answer initialize
//!   --fail-on-start      print a reason on stderr and exit 3 at once
//!   --garbage-on-start   write a line of non-JSON on stdout first

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

#[derive(Clone)]
struct Example {
    name: String,
    builtin: bool,
    extra: Arc<Mutex<Vec<Tool>>>,
    notes: Arc<Mutex<Vec<String>>>,
    /// Speak only MCP 2026-07-28 (`server/discover`, no `initialize`).
    modern_only: bool,
}

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    serde_json::from_value(json!({
        "name": name, "description": description, "inputSchema": schema
    }))
    .expect("valid tool")
}

fn builtin_tools() -> Vec<Tool> {
    vec![
        tool(
            "echo",
            "Echo the given text back unchanged.",
            json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}),
        ),
        tool(
            "add",
            "Add two numbers and return the sum as structured content.",
            json!({"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}),
        ),
        tool(
            "sleep",
            "Wait for the given number of milliseconds, then answer.",
            json!({"type":"object","properties":{"ms":{"type":"integer"}},"required":["ms"]}),
        ),
        tool(
            "fail",
            "Always fail with the given message (an isError result).",
            json!({"type":"object","properties":{"message":{"type":"string"}}}),
        ),
        tool(
            "crash",
            "Exit the server process in the middle of this call (for crash tests).",
            json!({"type":"object","properties":{}}),
        ),
        tool(
            "notes_list",
            "List every note in the in-memory note store.",
            json!({"type":"object","properties":{}}),
        ),
        tool(
            "notes_add",
            "Add a note to the in-memory note store.",
            json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}),
        ),
        tool(
            "image",
            "Return a 1x1 PNG image as image content.",
            json!({"type":"object","properties":{}}),
        ),
        tool(
            "add_tool",
            "Register a new echo tool with the given name and announce the change.",
            json!({"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}),
        ),
    ]
}

/// A 1x1 transparent PNG, base64.
const PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

fn text(s: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s)])
}

impl Example {
    async fn call(
        &self,
        name: &str,
        args: Map<String, Value>,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let s = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        Ok(match name {
            "echo" => text(s("text")),
            "add" => {
                let a = args.get("a").and_then(Value::as_f64).unwrap_or(0.0);
                let b = args.get("b").and_then(Value::as_f64).unwrap_or(0.0);
                let mut r = text(format!("{}", a + b));
                r.structured_content = Some(json!({"sum": a + b}));
                r
            }
            "sleep" => {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                text(format!("slept {ms} ms"))
            }
            "fail" => CallToolResult::error(vec![ContentBlock::text(if s("message").is_empty() {
                "failed on purpose".to_owned()
            } else {
                s("message")
            })]),
            "crash" => {
                eprintln!("example server: crashing on purpose");
                std::process::exit(7);
            }
            "notes_list" => {
                let notes = self
                    .notes
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                let mut r = text(serde_json::to_string(&notes).unwrap_or_default());
                r.structured_content = Some(json!({"notes": notes}));
                r
            }
            "notes_add" => {
                self.notes
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(s("text"));
                text("ok")
            }
            "image" => CallToolResult::success(vec![ContentBlock::image(PIXEL_PNG, "image/png")]),
            "add_tool" => {
                let n = s("name");
                if n.is_empty() {
                    return Err(ErrorData::invalid_params("name is required", None));
                }
                self.extra
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(tool(
                        &n,
                        "A tool added at run time; echoes its arguments.",
                        json!({"type":"object","properties":{}}),
                    ));
                let peer = ctx.peer.clone();
                tokio::spawn(async move {
                    let _ = peer.notify_tool_list_changed().await;
                });
                text(format!("added {n}"))
            }
            other => {
                if self
                    .extra
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .iter()
                    .any(|t| t.name == other)
                {
                    let mut r = text(serde_json::to_string(&args).unwrap_or_default());
                    r.structured_content = Some(json!({"tool": other, "args": args}));
                    r
                } else {
                    return Err(ErrorData::invalid_params(format!("no tool {other}"), None));
                }
            }
        })
    }
}

impl ServerHandler for Example {
    fn get_info(&self) -> ServerConfig {
        let caps: ServerCapabilities = serde_json::from_value(json!({
            "tools": {"listChanged": true}, "resources": {}, "prompts": {}
        }))
        .expect("caps");
        let mut info = ServerConfig::new(caps);
        info.server_info = Implementation::new(self.name.clone(), env!("CARGO_PKG_VERSION"));
        info
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        if self.modern_only {
            std::borrow::Cow::Owned(vec![ProtocolVersion::V_2026_07_28])
        } else {
            std::borrow::Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
        }
    }

    async fn list_tools(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = if self.builtin {
            builtin_tools()
        } else {
            Vec::new()
        };
        tools.extend(
            self.extra
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .cloned(),
        );
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        self.call(&request.name, args, &context)
            .await
            .map(CallToolResponse::Complete)
    }

    async fn list_resources(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let r = serde_json::from_value(json!({
            "uri": "example://readme", "name": "readme", "mimeType": "text/plain",
            "description": "What this example server does"
        }))
        .expect("resource");
        Ok(ListResourcesResult::with_all_items(vec![r]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != "example://readme" {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        let r: ReadResourceResult = serde_json::from_value(json!({"contents": [{
            "uri": "example://readme", "mimeType": "text/plain",
            "text": "skarn-example-server: echo, add, sleep, fail, crash, notes."
        }]}))
        .expect("contents");
        Ok(ReadResourceResponse::Complete(r))
    }

    async fn list_prompts(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let p = serde_json::from_value(json!({
            "name": "greet", "description": "Greet someone by name",
            "arguments": [{"name": "name", "required": true}]
        }))
        .expect("prompt");
        Ok(ListPromptsResult::with_all_items(vec![p]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != "greet" {
            return Err(ErrorData::invalid_params("no such prompt", None));
        }
        let who = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("world")
            .to_owned();
        let r: GetPromptResult = serde_json::from_value(json!({
            "description": "A greeting",
            "messages": [{"role": "user", "content": {"type": "text", "text": format!("Say hello to {who}.")}}]
        }))
        .expect("prompt result");
        Ok(GetPromptResponse::Complete(r))
    }
}

fn usage(msg: &str) -> ! {
    eprintln!("skarn-example-server: {msg}");
    eprintln!(
        "usage: skarn-example-server [--name NAME] [--tools FILE] [--no-builtin] [--hang-on-start] [--fail-on-start] [--garbage-on-start] [--modern-only]"
    );
    std::process::exit(2);
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut name = "skarn-example-server".to_owned();
    let mut extra = Vec::new();
    let (mut hang, mut fail, mut garbage, mut builtin) = (false, false, false, true);
    let mut modern_only = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--name" => name = args.next().unwrap_or_else(|| usage("--name needs a value")),
            "--tools" => {
                let f = args.next().unwrap_or_else(|| usage("--tools needs a file"));
                let text = std::fs::read_to_string(&f)
                    .unwrap_or_else(|e| usage(&format!("cannot read {f}: {e}")));
                extra = serde_json::from_str::<Vec<Tool>>(&text)
                    .unwrap_or_else(|e| usage(&format!("{f}: not a JSON array of tools: {e}")));
            }
            "--no-builtin" => builtin = false,
            "--modern-only" => modern_only = true,
            "--hang-on-start" => hang = true,
            "--fail-on-start" => fail = true,
            "--garbage-on-start" => garbage = true,
            "-h" | "--help" => usage("a small MCP server for tests and demos"),
            other => usage(&format!("unknown argument {other:?}")),
        }
    }
    if fail {
        eprintln!("example server: refusing to start (--fail-on-start)");
        std::process::exit(3);
    }
    if hang {
        // Read nothing, answer nothing, until killed.
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        }
    }
    if garbage {
        println!("this is not JSON-RPC");
    }
    let server = Example {
        name,
        builtin,
        extra: Arc::new(Mutex::new(extra)),
        notes: Arc::default(),
        modern_only,
    };
    match server.serve(rmcp::transport::stdio()).await {
        Ok(running) => {
            let _ = running.waiting().await;
        }
        Err(e) => {
            eprintln!("skarn-example-server: {e}");
            std::process::exit(1);
        }
    }
}
