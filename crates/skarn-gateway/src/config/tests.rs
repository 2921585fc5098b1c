//! Parsing and checking `skarn.toml` end to end: values, locations of errors.

use std::time::Duration;

use super::*;

#[test]
fn limits_table_without_a_gateway_table() {
    let c = Config::parse("[gateway.limits]\ndeadline = \"1500ms\"\n", "f").unwrap();
    assert_eq!(c.gateway.limits.deadline, Duration::from_millis(1500));
    assert_eq!(c.gateway.worker_pool, GatewayConfig::default().worker_pool);
    let e = Config::parse("x = 1\n[gateway.limits]\nnope = 1\n", "f").unwrap_err();
    assert!(e.message.contains("nope"), "{e}");
    let e = Config::parse(
        "\n[gateway.limits]\n[gateway]\nnamespace_separator = \" \"\n",
        "f",
    )
    .unwrap_err();
    assert_eq!(e.line, 2, "{e}");
}

#[test]
fn parses_full_file_and_ignores_foreign_sections() {
    let text = r#"
[run]
whatever = 1

[gateway]
passthrough = true
limits = { deadline = "5000ms" }

[servers.files]
command = "mcp-files"
args = ["--root", "."]

[servers.remote]
url = "https://example.invalid/mcp"
auth = { bearer_env = "TOKEN" }
headers = { "X-Team" = "a" }
timeout = 5
"#;
    let c = Config::parse(text, "skarn.toml").unwrap();
    assert!(c.gateway.passthrough);
    assert_eq!(c.gateway.limits.deadline, Duration::from_secs(5));
    assert_eq!(c.servers.len(), 2);
    assert_eq!(c.servers[1].call_timeout, Duration::from_secs(5));
    assert!(matches!(
        c.servers[0].transport,
        ServerTransport::Stdio { .. }
    ));
}

#[test]
fn unknown_key_in_server_has_location() {
    let text = "[servers.a]\ncommand = \"x\"\ncomand = \"y\"\n";
    let e = Config::parse(text, "skarn.toml").unwrap_err();
    assert_eq!((e.line, e.column), (3, 1), "{e}");
    assert!(e.to_string().starts_with("skarn.toml:3:1: "), "{e}");
    assert!(e.message.contains("comand"), "{e}");
}

#[test]
fn unknown_key_in_gateway_and_bad_types() {
    let e = Config::parse("[gateway]\npassthru = true\n", "f").unwrap_err();
    assert_eq!(e.line, 2, "{e}");
    let e = Config::parse("[gateway]\npassthrough = \"yes\"\n", "f").unwrap_err();
    assert_eq!((e.line, e.column), (2, 15), "{e}");
    let e = Config::parse("[gateway]\nlimits = { heap = 1 }\n", "f").unwrap_err();
    assert_eq!(e.line, 2, "{e}");
}

#[test]
fn semantic_errors_point_at_the_table() {
    let e = Config::parse("\n\n[servers.a]\nargs = []\n", "f").unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    assert!(e.message.contains("command"), "{e}");
    let e = Config::parse("[servers.\"a b\"]\ncommand = \"x\"\n", "f").unwrap_err();
    assert!(e.message.contains("alias"), "{e}");
    let e = Config::parse("[servers.a__b]\ncommand = \"x\"\n", "f").unwrap_err();
    assert!(e.message.contains("separator"), "{e}");
    let e = Config::parse("[servers.a]\nurl = \"ftp://x\"\n", "f").unwrap_err();
    assert!(e.message.contains("http://"), "{e}");
    let e = Config::parse("[servers.a]\ncommand = \"x\"\ntimeout = -1\n", "f").unwrap_err();
    assert!(e.message.contains("-1"), "{e}");
    let e = Config::parse("[servers.a]\ncommand = \"x\"\ntimeout = \"soon\"\n", "f").unwrap_err();
    assert_eq!((e.line, e.column), (3, 11), "{e}");
    let c = Config::parse(
        "[gateway]\ncall_timeout = \"2m\"\nstart_timeout = 5\n[servers.a]\ncommand = \"x\"\nstart_timeout = \"500ms\"\n",
        "f",
    )
    .unwrap();
    assert_eq!(c.gateway.call_timeout, 120.0);
    assert_eq!(c.servers[0].call_timeout, Duration::from_secs(120));
    assert_eq!(c.servers[0].start_timeout, Duration::from_millis(500));
    let e = Config::parse("[gateway]\nisolation = \"sandboxed\"\n", "f").unwrap_err();
    assert_eq!(e.line, 2, "{e}");
    let e = Config::parse("[gateway]\nmax_concurrent_executes = 0\n", "f").unwrap_err();
    assert!(e.message.contains("max_concurrent_executes"), "{e}");
    let c = Config::parse("[gateway]\nmax_concurrent_executes = 3\n", "f").unwrap();
    assert_eq!(c.gateway.max_concurrent_executes, 3);
    let e = Config::parse("[gateway]\nworker_pool = 1000\n", "f").unwrap_err();
    assert!(e.message.contains("worker_pool"), "{e}");
    let c = Config::parse("[gateway]\nisolation = \"worker\"\nworker_pool = 0\n", "f").unwrap();
    assert_eq!(c.gateway.isolation, Isolation::Worker);
}

#[test]
fn env_literal_and_from_env() {
    let text = "[servers.a]\ncommand = \"x\"\nenv = { A = \"lit\", B = { from_env = \"GH\" } }\n";
    let c = Config::parse(text, "f").unwrap();
    let ServerTransport::Stdio { env, .. } = &c.servers[0].transport else {
        panic!("stdio expected")
    };
    assert_eq!(env["A"], EnvValue::Literal("lit".into()));
    assert_eq!(
        env["B"],
        EnvValue::FromEnv(FromEnv {
            from_env: "GH".into()
        })
    );
    let e = Config::parse(
        "[servers.a]\ncommand = \"x\"\nenv = { B = { from = \"GH\" } }\n",
        "f",
    )
    .unwrap_err();
    assert_eq!(e.line, 3, "{e}");
}

#[test]
fn limits_table_without_gateway_header() {
    let c = Config::parse("[gateway.limits]\nmax_tool_calls = 5\n", "f").unwrap();
    assert_eq!(c.gateway.limits.max_tool_calls, 5);
    let e = Config::parse("# x\n\n[gateway]\nnamespace_separator = \"\"\n", "f").unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    // An unknown top-level key is refused where it is written.
    let e = Config::parse("[gateway]\n\n[sevrers.a]\ncommand = \"x\"\n", "f").unwrap_err();
    assert_eq!((e.line, e.column), (3, 1), "{e}");
    assert!(
        e.to_string().contains("unknown top-level key `sevrers`"),
        "{e}"
    );
}

#[test]
fn sandbox_table_and_its_errors() {
    let text = "[servers.a]\ncommand = \"x\"\n\n[servers.a.sandbox]\nnet = \"allow:a.test\"\nwrite = [\"out\"]\nmemory = \"512M\"\n";
    let c = Config::parse(text, "skarn.toml").unwrap();
    let ServerTransport::Stdio { sandbox, .. } = &c.servers[0].transport else {
        panic!("stdio expected")
    };
    assert_eq!(sandbox.at, "skarn.toml:4");
    assert_eq!(sandbox.memory_mb, Some(512));
    let e = Config::parse(
        "[servers.a]\ncommand = \"x\"\n[servers.a.sandbox]\nnet = \"maybe\"\n",
        "f",
    )
    .unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    assert!(
        e.message.contains("[servers.a.sandbox]: sandbox.net"),
        "{e}"
    );
    let e = Config::parse(
        "[servers.a]\ncommand = \"x\"\n[servers.a.sandbox]\nreed = []\n",
        "f",
    )
    .unwrap_err();
    assert_eq!(e.line, 4, "{e}");
    let e = Config::parse(
        "[servers.a]\nurl = \"http://h/mcp\"\n[servers.a.sandbox]\n",
        "f",
    )
    .unwrap_err();
    assert!(e.message.contains("sandbox"), "{e}");
    let e = Config::parse("[servers.a]\ncommand = \"x\"\nallow_private = true\n", "f").unwrap_err();
    assert!(e.message.contains("allow_private"), "{e}");
    let e = Config::parse(
        "[servers.a]\ncommand = \"x\"\nenv = { F = { state_file = \"../x\" } }\n",
        "f",
    )
    .unwrap_err();
    assert!(e.message.contains("state_file"), "{e}");
}

#[test]
fn syntax_error_has_location() {
    let e = Config::parse("[gateway\n", "f").unwrap_err();
    assert_eq!(e.line, 1, "{e}");
}
