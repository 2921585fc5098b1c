//! skarn-conformance-server: a stdio MCP server (on rmcp) that offers what
//! the server scenarios of the MCP conformance suite ask for (tools named
//! `test_*`, `test://` resources and templates, `test_*` prompts,
//! completions, subscriptions, logging, progress, sampling and
//! elicitation requests). `skarn serve --http` relays it with `prefix =
//! false`, so that the suite can test the gateway as if it were the server
//! (crates/skarn/tests/it/serve_conformance.rs).
// Logging and sampling are deprecated in rmcp (SEP-2577) but still part of
// the protocol revisions the suite tests.
#![allow(deprecated)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Set by `test_trigger_tool_change` / `test_trigger_prompt_change`.
static TOOL_ADDED: AtomicBool = AtomicBool::new(false);
static PROMPT_ADDED: AtomicBool = AtomicBool::new(false);

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    CreateMessageRequestParams, ElicitRequestParams, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, LoggingLevel, LoggingMessageNotificationParam, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

fn from<T: DeserializeOwned>(v: Value) -> Result<T, ErrorData> {
    serde_json::from_value(v).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

fn tools() -> Value {
    let s = |name: &str, description: &str, schema: Value| json!({"name": name, "description": description, "inputSchema": schema});
    let text_arg = |arg: &str| json!({"type": "object", "properties": {arg: {"type": "string"}}, "required": [arg]});
    json!([
        s(
            "test_simple_text",
            "Returns a simple text response",
            no_args()
        ),
        s("test_image_content", "Returns an image", no_args()),
        s(
            "test_trigger_tool_change",
            "Adds a tool (list_changed)",
            no_args()
        ),
        s(
            "test_trigger_prompt_change",
            "Adds a prompt (list_changed)",
            no_args()
        ),
        s(
            "test_missing_capability",
            "Needs the client's sampling capability",
            no_args()
        ),
        s(
            "test_input_required_result_capabilities",
            "Asks only what the client declared",
            no_args()
        ),
        s(
            "test_input_required_result_elicitation",
            "Asks the user's name in an input_required round",
            no_args()
        ),
        s(
            "test_streaming_elicitation",
            "Asks the user's name (2026-07-28: in a round)",
            no_args()
        ),
        s("test_logging_tool", "Logs three messages", no_args()),
        s(
            "test_input_required_result_sampling",
            "Asks an LLM in an input_required round",
            no_args()
        ),
        s(
            "test_input_required_result_list_roots",
            "Asks for roots in an input_required round",
            no_args()
        ),
        s(
            "test_input_required_result_request_state",
            "Round-trips requestState",
            no_args()
        ),
        s(
            "test_input_required_result_tampered_state",
            "Rejects a tampered requestState",
            no_args()
        ),
        s(
            "test_input_required_result_multiple_inputs",
            "Asks three questions in one round",
            no_args()
        ),
        s(
            "test_input_required_result_multi_round",
            "Asks in two rounds",
            no_args()
        ),
        s("test_audio_content", "Returns an audio clip", no_args()),
        s(
            "test_embedded_resource",
            "Returns an embedded resource",
            no_args()
        ),
        s(
            "test_multiple_content_types",
            "Returns text, an image and a resource",
            no_args()
        ),
        s(
            "test_tool_with_logging",
            "Sends three log messages while it runs",
            no_args()
        ),
        s(
            "test_tool_with_progress",
            "Reports progress 0, 50 and 100 of 100",
            no_args()
        ),
        s(
            "test_error_handling",
            "Always fails with isError",
            no_args()
        ),
        s(
            "test_sampling",
            "Asks the client's model to answer a prompt",
            text_arg("prompt")
        ),
        s(
            "test_elicitation",
            "Asks the user for a username and an email",
            text_arg("message")
        ),
        s(
            "test_elicitation_sep1034_defaults",
            "Elicitation with default values",
            no_args()
        ),
        s(
            "test_elicitation_sep1330_enums",
            "Elicitation with every kind of enum",
            no_args()
        ),
        s(
            "test_reconnection",
            "Answers after a short pause",
            no_args()
        ),
        s(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"type": "object", "properties": {
                    "street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
                "additionalProperties": false
            })
        ),
    ])
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

mod modern;
use modern::{elicitation_params, elicited, modern, mrtr_tool, round, sampled, sampling_params};

#[derive(Clone, Default)]
struct Conformance;

impl Conformance {
    async fn log(peer: &Peer<RoleServer>, message: &str) {
        let p = LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(message));
        let _ = peer.notify_logging_message(p).await;
    }

    async fn elicit(peer: &Peer<RoleServer>, params: Value) -> Result<Value, ErrorData> {
        let params: ElicitRequestParams = from(params)?;
        match peer.create_elicitation(params).await {
            Ok(r) => Ok(elicited(&r)),
            Err(e) => {
                Ok(json!({"isError": true, "content": [text(&format!("elicitation failed: {e}"))]}))
            }
        }
    }

    async fn call(
        &self,
        name: &str,
        args: Map<String, Value>,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        let peer = &ctx.peer;
        let arg = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        let pause = || tokio::time::sleep(Duration::from_millis(50));
        Ok(match name {
            "test_simple_text" => {
                json!({"content": [text("This is a simple text response for testing.")]})
            }
            "test_image_content" => {
                json!({"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]})
            }
            "test_audio_content" => {
                json!({"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]})
            }
            "test_embedded_resource" => json!({"content": [{"type": "resource", "resource": {
                "uri": "test://embedded-resource", "mimeType": "text/plain",
                "text": "This is an embedded resource content."}}]}),
            "test_multiple_content_types" => json!({"content": [
                text("Multiple content types test:"),
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "test://mixed-content-resource",
                    "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"}}
            ]}),
            "test_tool_with_logging" | "test_logging_tool" => {
                Self::log(peer, "Tool execution started").await;
                pause().await;
                Self::log(peer, "Tool processing data").await;
                pause().await;
                Self::log(peer, "Tool execution completed").await;
                json!({"content": [text("Tool with logging executed successfully")]})
            }
            "test_tool_with_progress" => {
                let token = ctx.meta.get_progress_token();
                for (i, p) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 {
                        pause().await;
                    }
                    if let Some(t) = &token {
                        let mut n = ProgressNotificationParam::new(t.clone(), p);
                        n.total = Some(100.0);
                        let _ = peer.notify_progress(n).await;
                    }
                }
                json!({"content": [text("Tool with progress executed successfully")]})
            }
            "test_error_handling" => json!({"isError": true, "content": [
                text("This tool intentionally returns an error for testing")]}),
            "test_sampling" => {
                let params: CreateMessageRequestParams = from(sampling_params(&arg("prompt")))?;
                match peer.create_message(params).await {
                    Ok(r) => sampled(&r),
                    Err(e) => {
                        json!({"isError": true, "content": [text(&format!("sampling failed: {e}"))]})
                    }
                }
            }
            "test_elicitation"
            | "test_elicitation_sep1034_defaults"
            | "test_elicitation_sep1330_enums" => {
                Self::elicit(peer, elicitation_params(name, &args).unwrap_or_default()).await?
            }
            // 2026-07-28 listen: the tool or prompt list changes.
            "test_trigger_tool_change" => {
                TOOL_ADDED.store(true, Ordering::Relaxed);
                let _ = peer.notify_tool_list_changed().await;
                json!({"content": [text("tool list changed")]})
            }
            "test_trigger_prompt_change" => {
                PROMPT_ADDED.store(true, Ordering::Relaxed);
                let _ = peer.notify_prompt_list_changed().await;
                json!({"content": [text("prompt list changed")]})
            }
            "test_reconnection" => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                json!({"content": [text("Reconnection test completed successfully")]})
            }
            "json_schema_2020_12_tool" => json!({"content": [text(&format!(
                "received {}", Value::Object(args.clone())))]}),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool {other}"),
                    None,
                ));
            }
        })
    }
}

impl ServerHandler for Conformance {
    /// 2026-07-28 subscriptions: resource updates of the URIs asked for
    /// (the resources never change, so none is ever sent).
    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        let mut f = rmcp::model::SubscriptionFilter::new();
        f.resource_subscriptions = requested.resource_subscriptions.clone();
        Some(f)
    }

    fn get_info(&self) -> ServerConfig {
        let caps: ServerCapabilities = serde_json::from_value(json!({
            "tools": {"listChanged": true}, "prompts": {"listChanged": true},
            "logging": {}, "completions": {},
            "resources": {"subscribe": true},
        }))
        .expect("static capabilities");
        let mut info = ServerConfig::new(caps);
        info.server_info = rmcp::model::Implementation::new("skarn-conformance-server", "0.1.0");
        info
    }

    async fn list_tools(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut all = tools();
        if TOOL_ADDED.load(Ordering::Relaxed)
            && let Some(a) = all.as_array_mut()
        {
            a.push(json!({"name": "test_dynamic_tool", "description": "Added by test_trigger_tool_change",
                "inputSchema": no_args()}));
        }
        Ok(ListToolsResult::with_all_items(from(all)?))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let answers = request.input_responses.clone().unwrap_or_default();
        let caps = context.client_capabilities().unwrap_or_default();
        if let Some(r) = mrtr_tool(
            &request.name,
            &answers,
            request.request_state.as_deref(),
            &caps,
        )? {
            return Ok(r);
        }
        if modern(&context)
            && let Some(r) = round(&request.name, &args, request.input_responses.as_ref())?
        {
            return Ok(r);
        }
        let v = self.call(&request.name, args, &context).await?;
        Ok(CallToolResponse::Complete(from::<CallToolResult>(v)?))
    }

    async fn list_resources(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(from(json!([
            {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png"},
            {"uri": "test://watched-resource", "name": "watched-resource", "mimeType": "text/plain"},
            {"uri": "test://input-required-resource", "name": "input-required-resource",
             "mimeType": "text/plain", "description": "Asks for context in an input_required round (2026-07-28)"},
        ]))?))
    }

    async fn list_resource_templates(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(from(json!([
            {"uriTemplate": "test://template/{id}/data", "name": "template",
             "mimeType": "application/json"}
        ]))?))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        if uri == "test://input-required-resource" {
            let context = request
                .input_responses
                .as_ref()
                .and_then(|a| a.get("context_request"))
                .and_then(|a| a.get("content"))
                .and_then(|c| c.get("context"))
                .and_then(Value::as_str);
            return Ok(match context {
                Some(c) => ReadResourceResponse::Complete(from::<ReadResourceResult>(
                    json!({"contents": [{"uri": uri, "mimeType": "text/plain",
                        "text": format!("Resource with context: {c}")}]}),
                )?),
                None => ReadResourceResponse::InputRequired(from(json!({
                    "resultType": "input_required",
                    "inputRequests": {"context_request": {"method": "elicitation/create", "params": {
                        "message": "Please provide context",
                        "requestedSchema": {"type": "object",
                            "properties": {"context": {"type": "string"}}, "required": ["context"]}}}}
                }))?),
            });
        }
        let content = match uri {
            "test://static-text" => json!({"uri": uri, "mimeType": "text/plain",
                "text": "This is the content of the static text resource."}),
            "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
            "test://watched-resource" => json!({"uri": uri, "mimeType": "text/plain",
                "text": "Watched resource content"}),
            _ => match uri
                .strip_prefix("test://template/")
                .and_then(|r| r.strip_suffix("/data"))
            {
                Some(id) if !id.is_empty() && !id.contains('/') => json!({"uri": uri,
                    "mimeType": "application/json",
                    "text": json!({"id": id, "templateTest": true,
                        "data": format!("Data for ID: {id}")}).to_string()}),
                _ => {
                    return Err(ErrorData::resource_not_found(
                        format!("no resource {uri}"),
                        None,
                    ));
                }
            },
        };
        Ok(ReadResourceResponse::Complete(from::<ReadResourceResult>(
            json!({"contents": [content]}),
        )?))
    }

    async fn subscribe(
        &self,
        _r: SubscribeRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _r: UnsubscribeRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn set_level(
        &self,
        _r: SetLevelRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let prefix = request.argument.value.clone();
        let values: Vec<String> = ["test1", "test2", "testing"]
            .iter()
            .filter(|v| v.starts_with(&prefix))
            .map(|v| v.to_string())
            .collect();
        from(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
    }

    async fn list_prompts(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let arg = |n: &str| json!({"name": n, "required": true});
        let mut all = json!([
            {"name": "test_simple_prompt", "description": "A simple prompt"},
            {"name": "test_prompt_with_arguments", "description": "A prompt with arguments",
             "arguments": [arg("arg1"), arg("arg2")]},
            {"name": "test_prompt_with_embedded_resource", "description": "A prompt with a resource",
             "arguments": [arg("resourceUri")]},
            {"name": "test_prompt_with_image", "description": "A prompt with an image"},
            {"name": "test_dynamic_prompt", "description": "Added by test_trigger_prompt_change"},
            {"name": "test_input_required_result_prompt", "description": "Asks for context in an input_required round (2026-07-28)"},
        ]);
        if !PROMPT_ADDED.load(Ordering::Relaxed)
            && let Some(a) = all.as_array_mut()
        {
            a.retain(|p| p["name"] != "test_dynamic_prompt");
        }
        Ok(ListPromptsResult::with_all_items(from(all)?))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name == "test_input_required_result_prompt" {
            let context = request
                .input_responses
                .as_ref()
                .and_then(|a| a.get("context_request"))
                .and_then(|a| a.get("content"))
                .and_then(|c| c.get("context"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            return Ok(match context {
                Some(c) => {
                    GetPromptResponse::Complete(from::<GetPromptResult>(json!({"messages": [
                    {"role": "user", "content": text(&format!("Prompt with context: {c}"))}]}))?)
                }
                None => GetPromptResponse::InputRequired(from(json!({
                    "resultType": "input_required",
                    "inputRequests": {"context_request": {"method": "elicitation/create", "params": {
                        "message": "Please provide context",
                        "requestedSchema": {"type": "object",
                            "properties": {"context": {"type": "string"}}, "required": ["context"]}}}}
                }))?),
            });
        }
        let args = request.arguments.unwrap_or_default();
        let arg = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        let user = |content: Value| json!({"role": "user", "content": content});
        let messages = match request.name.as_str() {
            "test_simple_prompt" => json!([user(text("This is a simple prompt for testing."))]),
            "test_prompt_with_arguments" => json!([user(text(&format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                arg("arg1"),
                arg("arg2")
            )))]),
            "test_prompt_with_embedded_resource" => json!([
                user(
                    json!({"type": "resource", "resource": {"uri": arg("resourceUri"),
                    "mimeType": "text/plain", "text": "Embedded resource content for testing."}})
                ),
                user(text("Please process the embedded resource above.")),
            ]),
            "test_prompt_with_image" => json!([
                user(json!({"type": "image", "data": PNG, "mimeType": "image/png"})),
                user(text("Please analyze the image above.")),
            ]),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown prompt {other}"),
                    None,
                ));
            }
        };
        Ok(GetPromptResponse::Complete(from::<GetPromptResult>(
            json!({"messages": messages}),
        )?))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let transport = rmcp::transport::io::stdio();
    match Conformance.serve(transport).await {
        Ok(service) => {
            let _ = service.waiting().await;
        }
        Err(e) => eprintln!("skarn-conformance-server: {e}"),
    }
}
