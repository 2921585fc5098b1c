//! The 2026-07-28 side of the conformance server: questions asked in
//! `input_required` rounds (SEP-2322) instead of requests to the client,
//! the test tools of the suite's `input-required-result-*` scenarios, and
//! the capability checks that read the request's `_meta`.

use rmcp::model::CallToolResponse;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Map, Value, json};

use super::{from, text};

pub(super) fn text_of(v: &Value) -> String {
    v.get("text")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

pub(super) fn sampling_params(prompt: &str) -> Value {
    json!({
        "messages": [{"role": "user", "content": text(prompt)}],
        "maxTokens": 100
    })
}

pub(super) fn sampled(r: &rmcp::model::CreateMessageResult) -> Value {
    let said = text_of(&serde_json::to_value(&r.message.content).unwrap_or_default());
    json!({"content": [text(&format!("LLM response: {said}"))]})
}

pub(super) fn elicited(r: &rmcp::model::ElicitResult) -> Value {
    json!({"content": [text(&format!(
        "Elicitation completed: action={}, content={}",
        serde_json::to_value(&r.action).unwrap_or_default().as_str().unwrap_or("?"),
        serde_json::to_string(&r.content).unwrap_or_default()
    ))]})
}

/// The elicitation request of one of the `test_elicitation*` tools.
pub(super) fn elicitation_params(name: &str, args: &Map<String, Value>) -> Option<Value> {
    Some(match name {
        "test_elicitation" => json!({
            "message": args.get("message").and_then(Value::as_str).unwrap_or(""),
            "requestedSchema": {"type": "object", "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"}
            }, "required": ["username", "email"]}
        }),
        "test_elicitation_sep1034_defaults" => json!({
            "message": "Please review and update the form fields with defaults",
            "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {"type": "string", "description": "User status",
                    "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "description": "Verification status", "default": true}
            }}
        }),
        "test_elicitation_sep1330_enums" => json!({
            "message": "Please select options from the enum fields",
            "requestedSchema": {"type": "object", "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "items": {"type": "string",
                    "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}]}}
            }}
        }),
        _ => return None,
    })
}

/// 2026-07-28: a server asks its client within the call's rounds
/// (`input_required`), never by a request of its own.
pub(super) fn modern(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str())
}

/// The question a tool asks this round, or its answer once it has one.
pub(super) fn round(
    name: &str,
    args: &Map<String, Value>,
    answers: Option<&rmcp::model::InputResponses>,
) -> Result<Option<CallToolResponse>, ErrorData> {
    use rmcp::model::{CreateMessageRequest, ElicitRequest, InputRequest, InputRequiredResult};
    let question = if name == "test_sampling" {
        let prompt = args.get("prompt").and_then(Value::as_str).unwrap_or("");
        InputRequest::CreateMessage(CreateMessageRequest::new(from(sampling_params(prompt))?))
    } else if let Some(p) = elicitation_params(name, args) {
        InputRequest::Elicitation(ElicitRequest::new(from(p)?))
    } else {
        return Ok(None);
    };
    let Some(answer) = answers.and_then(|a| a.get("q")) else {
        let asks = [("q".to_owned(), question)].into_iter().collect();
        return Ok(Some(CallToolResponse::InputRequired(
            InputRequiredResult::new(Some(asks), None),
        )));
    };
    let v = match question {
        InputRequest::CreateMessage(_) => sampled(&from(answer.clone())?),
        _ => elicited(&from(answer.clone())?),
    };
    Ok(Some(CallToolResponse::Complete(from(v)?)))
}

/// The 2026-07-28 `input_required` test tools of the suite: each round's
/// questions (by the suite's own keys) and state, else the final text.
pub(super) fn mrtr_tool(
    name: &str,
    answers: &rmcp::model::InputResponses,
    state: Option<&str>,
    caps: &rmcp::model::ClientCapabilities,
) -> Result<Option<CallToolResponse>, ErrorData> {
    let elicit = |message: &str, field: &str, kind: &str| {
        json!({"method": "elicitation/create", "params": {"message": message,
            "requestedSchema": {"type": "object", "properties": {field: {"type": kind}},
            "required": [field]}}})
    };
    let sample = json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
        "maxTokens": 100}});
    let roots = json!({"method": "roots/list", "params": {}});
    let ask =
        |questions: Value, state: Option<&str>| -> Result<Option<CallToolResponse>, ErrorData> {
            let mut v = json!({"resultType": "input_required", "inputRequests": questions});
            if let Some(s) = state {
                v["requestState"] = json!(s);
            }
            Ok(Some(CallToolResponse::InputRequired(from(v)?)))
        };
    let done = |t: String| -> Result<Option<CallToolResponse>, ErrorData> {
        Ok(Some(CallToolResponse::Complete(from(
            json!({"content": [text(&t)]}),
        )?)))
    };
    let field = |key: &str, f: &str| {
        answers
            .get(key)
            .and_then(|a| a.get("content"))
            .and_then(|c| c.get(f))
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
    };
    match name {
        "test_input_required_result_elicitation" | "test_streaming_elicitation" => {
            match field("user_name", "name") {
                Some(n) => done(format!("Hello, {n}!")),
                None => ask(
                    json!({"user_name": elicit("What is your name?", "name", "string")}),
                    None,
                ),
            }
        }
        "test_input_required_result_sampling" => match answers.get("capital_question") {
            Some(a) => done(format!(
                "Sampling response: {}",
                text_of(a.get("content").unwrap_or(&Value::Null))
            )),
            None => ask(json!({"capital_question": sample}), None),
        },
        "test_input_required_result_list_roots" => match answers.get("client_roots") {
            Some(a) => done(format!(
                "Roots: {}",
                a.get("roots").cloned().unwrap_or_default()
            )),
            None => ask(json!({"client_roots": roots}), None),
        },
        "test_input_required_result_request_state" => match (answers.get("confirm"), state) {
            (Some(_), Some("conformance-state-1")) => done("state-ok".into()),
            (Some(_), _) => Err(ErrorData::invalid_params(
                "requestState failed validation",
                None,
            )),
            (None, _) => ask(
                json!({"confirm": elicit("Please confirm", "ok", "boolean")}),
                Some("conformance-state-1"),
            ),
        },
        "test_input_required_result_tampered_state" => match state {
            Some("conformance-tamper-1") => done("state verified".into()),
            Some(_) => Err(ErrorData::invalid_params(
                "requestState failed its integrity check",
                None,
            )),
            None => ask(
                json!({"confirm": elicit("Please confirm", "ok", "boolean")}),
                Some("conformance-tamper-1"),
            ),
        },
        "test_input_required_result_multiple_inputs" => {
            if ["ask_name", "ask_llm", "ask_roots"]
                .iter()
                .all(|k| answers.contains_key(*k))
            {
                done("received all inputs".into())
            } else {
                ask(
                    json!({"ask_name": elicit("What is your name?", "name", "string"),
                    "ask_llm": sample, "ask_roots": roots}),
                    Some("conformance-multi"),
                )
            }
        }
        "test_input_required_result_multi_round" => {
            match (state, field("step1", "name"), field("step2", "color")) {
                (Some("round-2"), _, Some(c)) => done(format!("Finished: favorite color {c}")),
                (Some("round-1"), Some(_), _) => ask(
                    json!({"step2": elicit("Step 2: What is your favorite color?", "color", "string")}),
                    Some("round-2"),
                ),
                _ => ask(
                    json!({"step1": elicit("Step 1: What is your name?", "name", "string")}),
                    Some("round-1"),
                ),
            }
        }
        // Needs sampling, which the request's _meta must declare (-32021).
        "test_missing_capability" => {
            if caps.sampling.is_none() {
                let needed: rmcp::model::ClientCapabilities = from(json!({"sampling": {}}))?;
                return Err(ErrorData::missing_required_client_capability(needed));
            }
            done("sampling is declared".into())
        }
        // Asks only what the request's _meta says the client can answer.
        "test_input_required_result_capabilities" => {
            if !answers.is_empty() {
                return done("answered".into());
            }
            let mut q = serde_json::Map::new();
            if caps.elicitation.is_some() {
                q.insert(
                    "ask_name".into(),
                    elicit("What is your name?", "name", "string"),
                );
            }
            if caps.sampling.is_some() {
                q.insert("ask_llm".into(), sample);
            }
            if q.is_empty() {
                return done("nothing to ask".into());
            }
            ask(Value::Object(q), None)
        }
        _ => Ok(None),
    }
}
