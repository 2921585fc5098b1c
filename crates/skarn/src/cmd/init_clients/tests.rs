use super::*;

fn stdio() -> Transport {
    Transport::Stdio {
        config: "/p/skarn.toml".into(),
    }
}

fn http() -> Transport {
    Transport::Http {
        url: "http://127.0.0.1:8931/mcp".into(),
        token_env: "TOK".into(),
    }
}

fn run(client: Client, user: bool, existing: &[(&str, &str)]) -> Vec<(PathBuf, String)> {
    run_with(client, user, existing, &stdio())
}

fn run_with(
    client: Client,
    user: bool,
    existing: &[(&str, &str)],
    t: &Transport,
) -> Vec<(PathBuf, String)> {
    let home = Path::new("/h");
    let cwd = Path::new("/p");
    let mut out: Vec<(PathBuf, String)> = Vec::new();
    for (path, edit) in plan(client, user, home, cwd, "/bin/skarn", t) {
        let old = out
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, t)| t.clone())
            .or_else(|| {
                existing
                    .iter()
                    .find(|(p, _)| Path::new(p) == path)
                    .map(|(_, t)| t.to_string())
            });
        let new = apply(&path, old.as_deref(), &edit).unwrap();
        out.retain(|(p, _)| *p != path);
        out.push((path, new));
    }
    out
}

const USER_JSON: &str = r#"{
  "zeta": 1,
  "mcpServers": { "other": { "command": "x" }, "skarn": { "command": "old" } },
  "alpha": [1, 2]
}"#;

#[test]
fn json_clients_keep_what_is_there() {
    for (client, file, key) in [
        (Client::Cursor, "/p/.cursor/mcp.json", "mcpServers"),
        (Client::GeminiCli, "/p/.gemini/settings.json", "mcpServers"),
        (
            Client::Windsurf,
            "/h/.codeium/windsurf/mcp_config.json",
            "mcpServers",
        ),
        (Client::ClaudeCode, "/p/.mcp.json", "mcpServers"),
    ] {
        let out = run(client, false, &[(file, USER_JSON)]);
        let (_, text) = out.iter().find(|(p, _)| p == Path::new(file)).unwrap();
        let v: Value = serde_json::from_str(text).unwrap();
        assert_eq!(v["zeta"], 1, "{client:?}");
        assert_eq!(v["alpha"], json!([1, 2]));
        assert_eq!(v[key]["other"]["command"], "x");
        assert_eq!(v[key]["skarn"]["command"], "/bin/skarn");
        assert_eq!(
            v[key]["skarn"]["args"],
            json!(["serve", "--config", "/p/skarn.toml"])
        );
        // Key order is the user's.
        assert!(
            text.find("zeta").unwrap() < text.find("alpha").unwrap(),
            "{text}"
        );
    }
}

#[test]
fn vscode_uses_servers_with_type() {
    let old = r#"{"inputs": [], "servers": {"a": {"type": "http", "url": "u"}}}"#;
    let out = run(Client::Vscode, false, &[("/p/.vscode/mcp.json", old)]);
    let v: Value = serde_json::from_str(&out[0].1).unwrap();
    assert_eq!(v["servers"]["a"]["url"], "u");
    assert_eq!(v["servers"]["skarn"]["type"], "stdio");
    assert_eq!(v["inputs"], json!([]));
    let out = run(Client::Vscode, true, &[]);
    assert_eq!(out[0].0, Path::new("/h/.config/Code/User/mcp.json"));
}

#[test]
fn codex_toml_keeps_comments() {
    let old =
        "# my settings\nmodel = \"o3\" # pinned\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n";
    let out = run(Client::Codex, false, &[("/h/.codex/config.toml", old)]);
    let t = &out[0].1;
    assert!(
        t.starts_with("# my settings\nmodel = \"o3\" # pinned\n"),
        "{t}"
    );
    assert!(
        t.contains("[mcp_servers.docs]\ncommand = \"docs-mcp\""),
        "{t}"
    );
    let v: toml::Value = toml::from_str(t).unwrap();
    assert_eq!(
        v["mcp_servers"]["skarn"]["command"].as_str(),
        Some("/bin/skarn")
    );
    assert_eq!(
        v["mcp_servers"]["skarn"]["args"][2].as_str(),
        Some("/p/skarn.toml")
    );
    let again = apply(
        Path::new("c"),
        Some(t),
        &plan(
            Client::Codex,
            false,
            Path::new("/h"),
            Path::new("/p"),
            "/bin/skarn",
            &stdio(),
        )[0]
        .1,
    )
    .unwrap();
    assert_eq!(&again, t, "idempotent");
}

#[test]
fn claude_hook_merges_once() {
    let old = r#"{"permissions": {"allow": ["Bash(ls)"]}, "hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]}]}}"#;
    let out = run(
        Client::ClaudeCode,
        false,
        &[("/p/.claude/settings.json", old)],
    );
    let (_, text) = out
        .iter()
        .find(|(p, _)| p.ends_with(".claude/settings.json"))
        .unwrap();
    let v: Value = serde_json::from_str(text).unwrap();
    assert_eq!(v["permissions"]["allow"][0], "Bash(ls)");
    let list = v["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["matcher"], "Edit");
    assert_eq!(list[1]["matcher"], crate::cmd::hook::CLAUDE_MATCHER);
    assert_eq!(
        list[1]["hooks"][0]["command"],
        crate::cmd::hook::installed_command("/bin/skarn", "claude-code")
    );
    let out2 = run(
        Client::ClaudeCode,
        false,
        &[("/p/.claude/settings.json", text)],
    );
    let (_, text2) = out2
        .iter()
        .find(|(p, _)| p.ends_with(".claude/settings.json"))
        .unwrap();
    assert_eq!(text2, text, "idempotent");
    let user = run(Client::ClaudeCode, true, &[]);
    assert_eq!(user[0].0, Path::new("/h/.claude.json"));
    assert_eq!(user[1].0, Path::new("/h/.claude/settings.json"));
}

#[test]
fn refuses_what_it_cannot_keep() {
    let e = apply(
        Path::new("f.json"),
        Some("// c\n{}"),
        &Edit::McpJson {
            key: "servers",
            entry: json!({}),
            input: None,
        },
    );
    assert!(format!("{:#}", e.unwrap_err()).contains("not plain JSON"));
    let e = apply(
        Path::new("f.json"),
        Some("[]"),
        &Edit::McpJson {
            key: "servers",
            entry: json!({}),
            input: None,
        },
    );
    assert!(e.is_err());
    let e = apply(
        Path::new("f.json"),
        Some("{\"servers\": 1}"),
        &Edit::McpJson {
            key: "servers",
            entry: json!({}),
            input: None,
        },
    );
    assert!(e.is_err());
}

#[test]
fn http_entries_name_the_token_variable_never_the_token() {
    let url = "http://127.0.0.1:8931/mcp";
    for (client, file, key, entry) in [
        (
            Client::ClaudeCode,
            "/p/.mcp.json",
            "mcpServers",
            json!({"type": "http", "url": url, "headers": {"Authorization": "Bearer ${TOK}"}}),
        ),
        (
            Client::Cursor,
            "/p/.cursor/mcp.json",
            "mcpServers",
            json!({"url": url, "headers": {"Authorization": "Bearer ${env:TOK}"}}),
        ),
        (
            Client::Windsurf,
            "/h/.codeium/windsurf/mcp_config.json",
            "mcpServers",
            json!({"serverUrl": url, "headers": {"Authorization": "Bearer ${env:TOK}"}}),
        ),
        (
            Client::GeminiCli,
            "/p/.gemini/settings.json",
            "mcpServers",
            json!({"httpUrl": url, "headers": {"Authorization": "Bearer ${TOK}"}}),
        ),
        (
            Client::Vscode,
            "/p/.vscode/mcp.json",
            "servers",
            json!({"type": "http", "url": url, "headers": {"Authorization": "Bearer ${input:skarn-http-token}"}}),
        ),
    ] {
        let out = run_with(client, false, &[], &http());
        let (_, text) = out.iter().find(|(p, _)| p == Path::new(file)).unwrap();
        let v: Value = serde_json::from_str(text).unwrap();
        assert_eq!(v[key]["skarn"], entry, "{client:?}");
    }
    // VS Code: one password prompt, added once, next to the user's inputs.
    let old = r#"{"inputs": [{"id": "mine", "type": "promptString"}], "servers": {}}"#;
    let out = run_with(
        Client::Vscode,
        false,
        &[("/p/.vscode/mcp.json", old)],
        &http(),
    );
    let v: Value = serde_json::from_str(&out[0].1).unwrap();
    assert_eq!(v["inputs"][0]["id"], "mine");
    assert_eq!(v["inputs"][1]["password"], true);
    let again = run_with(
        Client::Vscode,
        false,
        &[("/p/.vscode/mcp.json", &out[0].1)],
        &http(),
    );
    assert_eq!(again[0].1, out[0].1, "idempotent");
    // Codex: url + bearer_token_env_var; switching transports drops stale keys.
    let out = run(Client::Codex, false, &[]);
    let out = run_with(
        Client::Codex,
        false,
        &[("/h/.codex/config.toml", &out[0].1)],
        &http(),
    );
    let v: toml::Value = toml::from_str(&out[0].1).unwrap();
    let s = &v["mcp_servers"]["skarn"];
    assert_eq!(s["url"].as_str(), Some(url));
    assert_eq!(s["bearer_token_env_var"].as_str(), Some("TOK"));
    assert!(s.get("command").is_none() && s.get("args").is_none(), "{s}");
}

#[test]
fn http_urls() {
    assert_eq!(http_url("8931").unwrap(), "http://127.0.0.1:8931/mcp");
    assert_eq!(http_url("0.0.0.0:80").unwrap(), "http://0.0.0.0:80/mcp");
    assert_eq!(http_url("https://h/mcp").unwrap(), "https://h/mcp");
    assert!(http_url("nope").is_err());
}
