//! `skarn exec` as a whole process: output channels, --json, exit codes.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use skarn_test_support::TempDir;

fn skarn() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_skarn"));
    c.env("XDG_STATE_HOME", crate::common::state_home());
    c
}

fn exec(args: &[&str]) -> Output {
    skarn().arg("exec").args(args).output().expect("run skarn")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn value_on_stdout_logs_on_stderr() {
    let o = exec(&["--code", "skarn.log('working', 1); return { ok: [1, 2] }"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "{\"ok\":[1,2]}\n");
    assert_eq!(stderr(&o), "working 1\n");
}

#[test]
fn undefined_prints_null() {
    let o = exec(&["--code", "const x = 1"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "null\n");
}

#[test]
fn json_mode_prints_one_object() {
    let o = exec(&["--json", "--code", "skarn.log('l'); return 5"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["value"], 5);
    assert_eq!(v["error"], serde_json::Value::Null);
    assert_eq!(v["logs"], serde_json::json!(["l"]));
    assert_eq!(v["tool_calls"], 0);
    assert!(v["elapsed_ms"].is_u64());
    assert!(o.stderr.is_empty());

    let o = exec(&["--json", "--code", "\n  eval('1')"]);
    assert_eq!(o.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["error"]["kind"], "rejected");
    assert_eq!(v["error"]["line"], 2);
    assert_eq!(v["error"]["column"], 3);
}

#[test]
fn exit_codes_are_distinct() {
    let cases: &[(&[&str], i32)] = &[
        (&["--code", "return 1"], 0),
        (&["--code", "throw new Error('x')"], 1),
        (&["--code", "return 1n"], 1),
        (&["--code", "return eval('1')"], 3),
        (&["--code", "return )"], 3),
        (&["--timeout", "200ms", "--code", "for (;;) {}"], 4),
        (
            &[
                "--memory",
                "4M",
                "--code",
                "return 'x'.repeat(8 << 20).length",
            ],
            4,
        ),
        (
            &[
                "--max-tool-calls",
                "1",
                "--code",
                "await skarn.listTools(); await skarn.listTools()",
            ],
            4,
        ),
        (
            &["--max-output", "10B", "--code", "return 'x'.repeat(100)"],
            4,
        ),
        (&["--code", "function f() { f() } f()"], 4),
        (&["--code", "return 1", "--file", "x.js"], 2),
        (&[], 2),
        (&["--timeout", "soon", "--code", "1"], 2),
        (&["--memory", "1K", "--code", "1"], 2),
        (&["--file", "/nonexistent/script.js"], 2),
    ];
    for (args, want) in cases {
        let o = exec(args);
        assert_eq!(o.status.code(), Some(*want), "{args:?}: {}", stderr(&o));
        if *want != 0 {
            assert!(
                o.stdout.is_empty() || *want == 2,
                "{args:?}: {}",
                stdout(&o)
            );
            assert!(!stderr(&o).is_empty(), "{args:?}");
            assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
        }
    }
}

#[test]
fn errors_name_the_users_line() {
    let o = exec(&["--code", "const a = 1;\nconst b: number = 2;\nnull.x"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("line 3, column 1"), "{err}");
    let o = exec(&["--code", "const a = eval;\nconst b = x.constructor"]);
    assert_eq!(o.status.code(), Some(3));
    let err = stderr(&o);
    assert!(err.contains("1:11:"), "{err}");
    assert!(err.contains("2:13:"), "{err}");
}

#[test]
fn file_and_stdin() {
    let tmp = TempDir::new("exec-test");
    let dir = tmp.path();
    let file = dir.join("s.ts");
    std::fs::write(&file, "const n: number = 41;\nreturn n + 1\n").unwrap();
    let o = exec(&["--file", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "42\n");

    let mut child = skarn()
        .args(["exec", "--file", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"return [1, 2].map((x: number) => x * 3)")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "[3,6]\n");
}

#[test]
fn tool_calls_without_a_gateway_fail_catchably() {
    let o = exec(&[
        "--json",
        "--code",
        "try { await skarn.server('github').search({}) } catch (e) { return e.message }",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["value"], "no server named \"github\"");
    assert_eq!(v["tool_calls"], 1);
}

#[test]
fn help_lists_every_limit_and_exit_code() {
    let o = skarn().args(["exec", "--help"]).output().unwrap();
    let help = stdout(&o);
    for flag in [
        "--code",
        "--file",
        "--timeout",
        "--memory",
        "--stack",
        "--max-tool-calls",
        "--max-output",
        "--max-log-lines",
        "--max-log-bytes",
        "--json",
        "Exit codes",
    ] {
        assert!(help.contains(flag), "missing {flag}");
    }
}

#[test]
fn huge_errors_are_cut_and_never_abort() {
    // Every isolation mode; stdout is a pipe (self-confined when possible).
    let scripts = [
        r#"throw new Error("x".repeat(3e7))"#,
        r#"const e = new Error("m"); e.name = "N".repeat(3e7); throw e"#,
        "const e = new Error('m'); Object.defineProperty(e, 'stack', { value: 'at x (script:2:1)\\n'.repeat(2e6) }); throw e",
    ];
    for mode in ["auto", "worker", "in_process"] {
        for code in scripts {
            let o = exec(&["--json", "--isolation", mode, "--code", code]);
            if mode == "worker" && stderr(&o).contains("--isolation worker:") {
                continue; // no confined worker on this machine
            }
            assert_eq!(o.status.code(), Some(1), "{mode} {code}: {}", stderr(&o));
            assert!(
                o.stdout.len() < (64 << 10) + 1024,
                "{mode}: {} bytes",
                o.stdout.len()
            );
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(v["error"]["kind"], "runtime", "{v}");
            assert!(
                v["error"].to_string().contains("… [truncated "),
                "{mode} {code}: {v}"
            );
        }
    }
}
