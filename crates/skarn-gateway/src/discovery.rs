//! Discovery tools of the constant surface: `search` and `read_tool_docs`.
//! Both wait for servers that are still starting, so that the first answer
//! covers the whole catalogue, and name the servers that are unavailable.

use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};

use crate::server::{GatewayServer, arg_str, text_result};
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
        let hits = cat.index.search(query, limit);
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
            let near: Vec<String> = cat
                .index
                .search(
                    &name.replace(&self.gw.config.gateway.namespace_separator, " "),
                    3,
                )
                .iter()
                .map(|h| cat.tools[h.doc].qualified.clone())
                .collect();
            if !near.is_empty() {
                msg.push_str(&format!(" Did you mean: {}?", near.join(", ")));
            }
            return text_result(msg, None, true);
        };
        let t = &cat.tools[i];
        let server = self.gw.servers[t.server].alias();
        let input = Value::Object((*t.tool.input_schema).clone());
        let output = t
            .tool
            .output_schema
            .as_ref()
            .map(|o| Value::Object((**o).clone()));
        let sig = match tsig::signature(server, &t.tool.name, &input, output.as_ref()) {
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
        // The description keeps its lines; each is shown escaped.
        let description = t
            .tool
            .description
            .as_deref()
            .unwrap_or("(no description)")
            .lines()
            .map(visible)
            .collect::<Vec<_>>()
            .join("\n");
        let mut text = format!(
            "{}\n{description}\n\n{}\n\ninput schema: {}",
            visible(&t.qualified),
            sig.lines().map(visible).collect::<Vec<_>>().join("\n"),
            serde_json::to_string(&input).unwrap_or_default()
        );
        if let Some(o) = &output {
            text.push_str(&format!(
                "\noutput schema: {}",
                serde_json::to_string(o).unwrap_or_default()
            ));
        }
        text_result(
            text,
            Some(json!({
                "name": t.qualified,
                "server": server,
                "tool": t.tool.name,
                "description": t.tool.description,
                "inputSchema": input,
                "outputSchema": output,
                "signature": sig,
            })),
            false,
        )
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
