//! The parent side against fake workers (shell scripts) that misbehave in
//! every way the protocol allows: garbage, oversized lines, early exit,
//! silence past the deadline, too many host calls, refusing to confine.
//! After each failure the same pool must keep serving.
#![cfg(unix)] // the fakes are sh scripts; the worker process is unix-only
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skarn_codemode::{ErrorKind, Limits};
use skarn_test_support::FakeBridge;
use skarn_worker::{PoolConfig, WorkerCommand, WorkerPool};

/// One fake worker whose behaviour is chosen by the job's code.
const FAKE: &str = r#"
printf '%s\n' '{"type":"ready","pid":1,"confinement":{"namespaces":"fake","uid":0,"landlock_abi":0,"landlock":"fake","seccomp_allowed":0,"address_space_limit":0,"nofile_limit":0}}'
IFS= read -r job
case "$job" in
  *GARBAGE*) printf 'this is not json\n'; sleep 30 ;;
  *WRONGTYPE*) printf '%s\n' '{"type":"ready","pid":2,"confinement":{}}'; sleep 30 ;;
  *UNKNOWNFIELD*) printf '%s\n' '{"type":"done","outcome":{"result":{"Ok":1},"logs":[],"tool_calls":0,"elapsed_ms":0},"extra":1}'; sleep 30 ;;
  *OVERSIZED*) head -c 12000000 /dev/zero | tr '\0' 'x'; sleep 30 ;;
  *HUGELINE*) printf '{"type":"done","outcome":{"result":{"Ok":"'; head -c 12000000 /dev/zero | tr '\0' 'x'; printf '"},"logs":[],"tool_calls":0,"elapsed_ms":0}}\n'; sleep 30 ;;
  *HUGEERROR*) printf '{"type":"done","outcome":{"result":{"Err":{"kind":"runtime","message":"'; head -c 5000000 /dev/zero | tr '\0' 'x'; printf '","details":['; i=0; while [ $i -lt 2000 ]; do printf '"at f (1:1)",'; i=$((i+1)); done; printf '"at f (1:1)"]}},"logs":[],"tool_calls":0,"elapsed_ms":0}}\n'; sleep 30 ;;
  *EXIT7*) exit 7 ;;
  *SILENT*) sleep 30 ;;
  *SPAM*) i=1; while [ $i -le 10 ]; do printf '{"type":"call","id":%d,"call":{"op":"list_tools"}}\n' $i; i=$((i+1)); done; sleep 30 ;;
  *ECHOREPLY*)
    printf '%s\n' '{"type":"call","id":7,"call":{"op":"call_tool","server":"big","tool":"t","args":{}}}'
    IFS= read -r reply
    printf '{"type":"done","outcome":{"result":{"Ok":%s},"logs":[],"tool_calls":1,"elapsed_ms":0}}\n' "$reply" ;;
  *CALL*)
    printf '%s\n' '{"type":"call","id":1,"call":{"op":"call_tool","server":"s","tool":"t","args":{"x":1}}}'
    IFS= read -r reply
    v=$(printf '%s' "$reply" | sed 's/.*"Ok":\(.*\)}}$/\1/')
    printf '{"type":"done","outcome":{"result":{"Ok":%s},"logs":[],"tool_calls":1,"elapsed_ms":0}}\n' "$v" ;;
  *LINGER*) trap '' TERM HUP INT PIPE; sleep 1000 & printf '{"type":"done","outcome":{"result":{"Ok":[%d,%d]},"logs":[],"tool_calls":0,"elapsed_ms":0}}\n' $$ $!; while :; do sleep 1; done ;;
  *) printf '%s\n' '{"type":"done","outcome":{"result":{"Ok":1},"logs":["hi"],"tool_calls":0,"elapsed_ms":0}}' ;;
esac
"#;

const FATAL: &str =
    r#"printf '%s\n' '{"type":"fatal","message":"confinement failed at landlock: nope"}'; exit 3"#;

fn fake(script: &str) -> WorkerCommand {
    WorkerCommand {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), script.into(), "fake-worker".into()],
        inherit_stderr: false,
        engine_warmup: false,
    }
}

fn pool(script: &str, warm: usize) -> WorkerPool {
    let mut cfg = PoolConfig::new(fake(script));
    cfg.warm = warm;
    WorkerPool::new(cfg)
}

/// Echoes every call, except that server `big` answers a 2 MiB string.
fn echo() -> FakeBridge {
    FakeBridge::echo().on_call(|server, tool, args| {
        Ok(if server == "big" {
            Value::String("z".repeat(2 << 20))
        } else {
            json!({"server": server, "tool": tool, "args": args})
        })
    })
}

fn limits(deadline_ms: u64) -> Limits {
    Limits {
        deadline: Duration::from_millis(deadline_ms),
        ..Limits::default()
    }
}

fn assert_ok(p: &WorkerPool) {
    let o = p.execute("fine", Arc::new(echo()), &limits(5000));
    assert_eq!(o.result, Ok(json!(1)), "the pool must keep serving");
    assert_eq!(o.logs, vec!["hi".to_string()]);
}

fn fail_kind(p: &WorkerPool, code: &str, deadline_ms: u64) -> (ErrorKind, String, Duration) {
    let t = Instant::now();
    let o = p.execute(code, Arc::new(echo()), &limits(deadline_ms));
    let e = o.result.expect_err("must fail");
    (e.kind, e.message, t.elapsed())
}

/// The state letter of process `pid` ('Z' for a zombie), `None` once it
/// is gone.
fn proc_state(pid: u64) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

#[test]
fn a_used_worker_that_lingers_after_its_outcome_is_killed_with_its_group_and_reaped() {
    // The outcome is answered before the kill; the worker (ignoring
    // SIGTERM and EOF, with a child of its own) must still end, reaped.
    for warm in [1, 0] {
        let p = pool(FAKE, warm);
        let o = p.execute("LINGER", Arc::new(echo()), &limits(5000));
        let pids: Vec<u64> = serde_json::from_value(o.result.unwrap()).unwrap();
        let (worker, grandchild) = (pids[0], pids[1]);
        let t = Instant::now();
        // The worker is our child: gone means killed and reaped. Its child
        // (same process group) went to another reaper: dead is enough.
        while proc_state(worker).is_some() || proc_state(grandchild).is_some_and(|s| s != 'Z') {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "used worker {worker} ({:?}) or its child {grandchild} ({:?}) still there",
                proc_state(worker),
                proc_state(grandchild)
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_ok(&p);
    }
}

#[test]
fn normal_job_and_host_call_round_trip() {
    let p = pool(FAKE, 1);
    assert_ok(&p);
    let bridge = Arc::new(echo());
    let o = p.execute("CALL", bridge.clone(), &limits(5000));
    assert_eq!(
        o.result,
        Ok(json!({"server": "s", "tool": "t", "args": {"x": 1}}))
    );
    assert_eq!((bridge.tool_calls(), bridge.listings()), (1, 0));
}

#[test]
fn garbage_kills_the_worker_quickly_and_the_pool_keeps_serving() {
    let p = pool(FAKE, 1);
    for code in ["GARBAGE", "WRONGTYPE", "UNKNOWNFIELD"] {
        let (kind, msg, took) = fail_kind(&p, code, 20_000);
        assert_eq!(kind, ErrorKind::Internal, "{code}: {msg}");
        assert!(
            msg.contains("malformed") || msg.contains("not allowed"),
            "{code}: {msg}"
        );
        assert!(
            took < Duration::from_secs(15),
            "{code}: must not wait for the deadline"
        );
        assert_ok(&p);
    }
}

#[test]
fn oversized_lines_are_refused() {
    let p = pool(FAKE, 0);
    for code in ["OVERSIZED", "HUGELINE"] {
        let (kind, msg, _) = fail_kind(&p, code, 20_000);
        assert_eq!(kind, ErrorKind::Internal, "{code}");
        assert!(msg.contains("oversized"), "{code}: {msg}");
        assert_ok(&p);
    }
}

#[test]
fn a_worker_error_past_the_error_cap_is_cut_by_the_parent() {
    let p = pool(FAKE, 0);
    let limits = limits(20_000);
    let out = p.execute("HUGEERROR", Arc::new(echo()), &limits);
    let e = out.result.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Runtime);
    assert!(e.text_bytes() <= limits.error_bytes(), "{}", e.text_bytes());
    assert!(e.message.starts_with("xxxx"));
    assert!(e.message.contains("… [truncated "), "no marker");
    assert!(e.details.last().unwrap().starts_with("… [truncated "));
    assert_ok(&p);
}

#[test]
fn early_exit_is_reported_with_its_status() {
    let p = pool(FAKE, 1);
    let (kind, msg, _) = fail_kind(&p, "EXIT7", 5000);
    assert_eq!(kind, ErrorKind::Internal);
    assert!(msg.contains("exit status 7"), "{msg}");
    assert_ok(&p);
}

#[test]
fn silent_worker_is_killed_at_the_deadline() {
    let p = pool(FAKE, 0);
    let (kind, msg, _) = fail_kind(&p, "SILENT", 100);
    assert_eq!(kind, ErrorKind::Deadline, "{msg}");
    assert!(msg.contains("killed"), "{msg}");
    assert_ok(&p);
}

#[test]
fn host_call_budget_is_enforced_by_the_parent_too() {
    let p = pool(FAKE, 0);
    let mut l = limits(5000);
    l.max_tool_calls = 3;
    let o = p.execute("SPAM", Arc::new(echo()), &l);
    let e = o.result.expect_err("must fail");
    assert_eq!(e.kind, ErrorKind::ToolCalls, "{}", e.message);
    assert_ok(&p);
}

#[test]
fn a_worker_that_cannot_confine_itself_never_gets_the_job() {
    let p = pool(FATAL, 0);
    let (kind, msg, _) = fail_kind(&p, "return 1", 5000);
    assert_eq!(kind, ErrorKind::Internal);
    assert!(msg.contains("confinement failed at landlock"), "{msg}");
}

#[test]
fn probe_reports_an_unusable_worker_and_worker_isolation_is_refused() {
    let a = skarn_worker::probe(&fake(FATAL));
    assert!(!a.available);
    assert!(a.reason.contains("landlock"), "{}", a.reason);
    assert_eq!(
        skarn_worker::resolve(skarn_worker::Isolation::Auto, &a).unwrap(),
        skarn_worker::IsolationUsed::InProcess
    );
    let err = skarn_worker::resolve(skarn_worker::Isolation::Worker, &a).unwrap_err();
    assert!(err.to_string().contains("unavailable"), "{err}");
    let mut cfg = PoolConfig::new(fake(FATAL));
    cfg.warm = 0;
    assert!(skarn_worker::Executor::new(skarn_worker::Isolation::Worker, cfg).is_err());
}

#[test]
fn isolation_parses_and_prints() {
    use skarn_worker::Isolation;
    for s in Isolation::VARIANTS {
        assert_eq!(s.parse::<Isolation>().unwrap().to_string(), s);
    }
    assert_eq!(
        "in-process".parse::<Isolation>().unwrap(),
        Isolation::InProcess
    );
    assert!("sandbox".parse::<Isolation>().is_err());
    assert_eq!(Isolation::default(), Isolation::Auto);
}

#[test]
fn a_tool_result_too_large_for_the_script_becomes_a_catchable_error() {
    let p = pool(FAKE, 0);
    let small = Limits {
        memory_bytes: 8 << 20,
        ..Limits::default()
    };
    let o = p.execute("ECHOREPLY", Arc::new(echo()), &small);
    let reply = o.result.expect("the fake echoes the reply it got");
    assert_eq!(reply["id"], 7);
    let err = &reply["result"]["Err"];
    assert_eq!(err["kind"], "other", "{reply}");
    assert!(
        err["message"].as_str().unwrap().contains("big.t"),
        "{reply}"
    );
    // With room for it, the same result goes through.
    let o = p.execute("ECHOREPLY", Arc::new(echo()), &Limits::default());
    let reply = o.result.unwrap();
    assert_eq!(reply["result"]["Ok"].as_str().map(str::len), Some(2 << 20));
}

#[test]
fn a_script_too_large_for_the_job_line_is_rejected_without_running() {
    let p = pool(FAKE, 0);
    let code = "x".repeat(skarn_worker::worker::JOB_LINE_CAP + 1);
    let o = p.execute(&code, Arc::new(echo()), &limits(5000));
    let e = o.result.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Rejected);
    assert!(e.message.contains("too large"), "{}", e.message);
    assert_ok(&p);
}

#[test]
fn an_enormous_deadline_does_not_overflow() {
    let p = pool(FAKE, 0);
    let l = Limits {
        deadline: Duration::from_millis(u64::MAX),
        ..Limits::default()
    };
    let o = p.execute("fine", Arc::new(echo()), &l);
    assert_eq!(o.result, Ok(json!(1)));
}
