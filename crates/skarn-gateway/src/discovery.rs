//! Discovery tools of the constant surface: `search` and `read_tool_docs`.
//! Both wait for servers that are still starting, so that the first answer
//! covers the whole catalogue, and name the servers that are unavailable.

use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};

use crate::results::{arg_str, text_result};
use crate::server::GatewayServer;
use crate::text_safe::visible;
use crate::tsig;

impl GatewayServer {
    pub(crate) async fn search(&self, args: &Option<Map<String, Value>>) -> CallToolResult {
        let Some(query) = arg_str(args, "query") else {
            return text_result("search needs a string argument `query`", None, true);
        };
        self.gw.wait_for_starts().await;
        let limit = args
            .as_ref()
            .and_then(|a| a.get("limit"))
            .and_then(Value::as_u64)
            .unwrap_or(8)
            .clamp(1, 50) as usize;
        let cat = self.gw.catalog();
        let hits = self.ranked(&cat, query.to_owned(), limit).await;
        let mut lines = Vec::new();
        let mut results = Vec::new();
        for h in &hits {
            let t = &cat.tools[h.doc];
            let desc = one_line(t.tool.description.as_deref().unwrap_or(""));
            // One line per result, whatever the server named or wrote.
            lines.push(format!("{} - {}", visible(&t.qualified), visible(&desc)));
            results.push(json!({
                "name": t.qualified,
                "server": self.gw.servers[t.server].alias(),
                "description": desc,
                "score": (h.score * 1000.0).round() / 1000.0,
            }));
        }
        if lines.is_empty() {
            lines.push(format!("no tool matches {query:?}"));
        }
        let (starting, unavailable, health) = self.gw.not_ready();
        if !health.is_empty() {
            lines.push(String::new());
            // Causes quote servers' own stderr lines.
            lines.extend(health.split('\n').map(visible));
        }
        text_result(
            lines.join("\n"),
            Some(json!({
                "results": results,
                "servers_starting": starting,
                "servers_unavailable": unavailable,
            })),
            false,
        )
    }

    pub(crate) async fn read_tool_docs(&self, args: &Option<Map<String, Value>>) -> CallToolResult {
        let Some(name) = arg_str(args, "name") else {
            return text_result("read_tool_docs needs a string argument `name`", None, true);
        };
        self.gw.wait_for_starts().await;
        let cat = self.gw.catalog();
        let Some(&i) = cat.by_name.get(name) else {
            let mut msg = format!("no tool named {name:?}.");
            if let Some((server, _)) = self.gw.split_name(name)
                && let Some(s) = self.gw.server(server)
            {
                let h = s.health();
                if let Some(cause) = h.cause() {
                    msg.push_str(&format!(" Server {server} is {}: {cause}.", h.status()));
                } else if h.status() != "ready" {
                    msg.push_str(&format!(" Server {server} is {}.", h.status()));
                }
            }
            let query = name.replace(&self.gw.config.gateway.namespace_separator, " ");
            let near: Vec<String> = self
                .ranked(&cat, query, 3)
                .await
                .iter()
                .map(|h| cat.tools[h.doc].qualified.clone())
                .collect();
            if !near.is_empty() {
                msg.push_str(&format!(" Did you mean: {}?", near.join(", ")));
            }
            return text_result(msg, None, true);
        };
        let server = self.gw.servers[cat.tools[i].server].alias().to_owned();
        // Off the runtime's threads, a few at a time: a hostile schema
        // costs this one call its budget, never other requests their turn.
        let Ok(_permit) = HEAVY.acquire().await else {
            return text_result("the gateway is shutting down", None, true);
        };
        tokio::task::spawn_blocking(move || tool_docs(&cat, i, &server))
            .await
            .unwrap_or_else(|e| text_result(format!("read_tool_docs failed: {e}"), None, true))
    }
}

impl GatewayServer {
    /// `query` ranked over the catalogue, off the runtime's threads (one
    /// of the [`HEAVY`] turns); nothing when the gateway is shutting down.
    async fn ranked(
        &self,
        cat: &std::sync::Arc<crate::gateway::Catalog>,
        query: String,
        limit: usize,
    ) -> Vec<crate::search::Hit> {
        let Ok(_permit) = HEAVY.acquire().await else {
            return Vec::new();
        };
        let c = cat.clone();
        tokio::task::spawn_blocking(move || c.index.search(&query, limit))
            .await
            .unwrap_or_default()
    }
}

/// How many `search` and `read_tool_docs` computations run at once, each
/// on a blocking thread: every one is bounded by a work budget, and
/// requests past this many wait for a turn instead of taking CPU and memory
/// from everything else.
pub(crate) static HEAVY: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// The text and structured answer of `read_tool_docs` for tool `i`.
fn tool_docs(cat: &crate::gateway::Catalog, i: usize, server: &str) -> CallToolResult {
    let t = &cat.tools[i];
    let input = &*t.tool.input_schema;
    let output = t.tool.output_schema.as_deref();
    let sig = match tsig::signature(server, &t.tool.name, input, output) {
        Ok(sig) => sig,
        // This tool's docs fail, with the cause; nothing else does.
        Err(e) => {
            return text_result(
                format!("no documentation for {}: {e}", visible(&t.qualified)),
                None,
                true,
            );
        }
    };
    // The description keeps its lines, each quoted ("| ") and escaped, so
    // that no line of it reads as one of the gateway's own (a signature,
    // "input schema:"). What the server sent is echoed only within budgets
    // (a description was cut when listed, a schema over `DOC_SCHEMA_BYTES`
    // is left out), with a note.
    let raw_description = t.tool.description.as_deref().map(str::to_owned);
    let description = match raw_description.as_deref() {
        Some(d) => quoted(d),
        None => "(no description)".to_owned(),
    };
    let (input_text, input_shown) = schema_echo(input, "input");
    let mut text = format!(
        "{}\n{description}\n\n{}\n\ninput schema: {input_text}",
        visible(&t.qualified),
        sig.lines().map(visible).collect::<Vec<_>>().join("\n"),
    );
    let mut output_shown = None;
    if let Some(o) = output {
        let (output_text, shown) = schema_echo(o, "output");
        text.push_str(&format!("\noutput schema: {output_text}"));
        output_shown = shown;
    }
    // MCP Apps: the tool's page, a `ui://` resource of its server.
    let ui = t.tool.meta.as_ref().and_then(|m| {
        m.get("ui")
            .and_then(|u| u.get("resourceUri"))
            .or_else(|| m.get("ui/resourceUri"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    if let Some(uri) = &ui {
        text.push_str(&format!(
            "\nui: {} (an MCP Apps page; a script reads it with skarn.readResource({server:?}, uri))",
            visible(uri)
        ));
    }
    text_result(
        text,
        Some(json!({
            "name": t.qualified,
            "server": server,
            "tool": t.tool.name,
            "description": raw_description,
            "inputSchema": input_shown,
            "outputSchema": output_shown,
            "signature": sig,
            "ui": ui,
        })),
        false,
    )
}

/// A server's multi-line text as the gateway shows it: every line (blank
/// ones too) starts with `| ` and is escaped ([`visible`]), so the text
/// cannot add a line of the gateway's own.
pub(crate) fn quoted(text: &str) -> String {
    text.split('\n')
        .map(|l| {
            let l = l.strip_suffix('\r').unwrap_or(l);
            format!("| {}", visible(l))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Most bytes of a schema echoed by `read_tool_docs` (each of input and
/// output). Descriptions were cut when listed
/// (`listing::MAX_DESCRIPTION_BYTES`).
pub(crate) const DOC_SCHEMA_BYTES: usize = 64 << 10;

/// A schema as echoed: its JSON text (or a note when it is over
/// [`DOC_SCHEMA_BYTES`]) and the value for `structuredContent` (`None`
/// when left out).
fn schema_echo(schema: &Map<String, Value>, which: &str) -> (String, Option<Value>) {
    // Written only up to the budget: a 16 MiB schema is not serialized on
    // every call to find out it is too large.
    match tsig::json_capped(schema, DOC_SCHEMA_BYTES) {
        Some(text) => (text, Some(Value::Object(schema.clone()))),
        None => (
            format!(
                "(not shown: the {which} schema is over the {DOC_SCHEMA_BYTES} bytes shown; the signature above is what a call needs)"
            ),
            None,
        ),
    }
}

fn one_line(s: &str) -> String {
    let line = s
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let first = match line.find(". ") {
        Some(i) => &line[..=i],
        None => line,
    };
    if first.chars().count() > 160 {
        let cut: String = first.chars().take(157).collect();
        format!("{cut}...")
    } else {
        first.to_owned()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_line_of_server_text_is_quoted_and_escaped() {
        assert_eq!(
            super::quoted("Sends.\r\n\n## x__y\nawait skarn.callTool()\u{2028}ui: z\u{1b}[2J"),
            "| Sends.\n| \n| ## x__y\n| await skarn.callTool()\\u{2028}ui: z\\u{1b}[2J"
        );
    }
}
