//! Capture: stdout and stderr interleaved in real order, exit status kept,
//! memory capped; and the library-level guarantees of compression.
#![cfg(unix)] // the commands are sh scripts and signals are unix

use std::process::Command;

use skarn_compress::capture::{capture, exit_code, read_capped, run_and_compress};
use skarn_compress::{Compressor, Store, StoreConfig};

struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let p = std::env::temp_dir().join(format!(
            "skarn-compress-{tag}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&p).unwrap();
        Self(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn sh(script: &str) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c").arg(script);
    c
}

#[test]
fn stdout_and_stderr_interleave_in_real_order() {
    let cap = capture(
        sh("echo one; echo two >&2; echo three; echo four >&2; exit 3"),
        1 << 20,
    )
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&cap.output),
        "one\ntwo\nthree\nfour\n"
    );
    assert_eq!(exit_code(&cap.status), 3);
}

#[test]
fn killed_by_signal_reports_128_plus_signal() {
    let cap = capture(sh("echo before; kill -9 $$"), 1 << 20).unwrap();
    assert_eq!(exit_code(&cap.status), 137);
    assert_eq!(String::from_utf8_lossy(&cap.output), "before\n");
}

#[test]
fn missing_program_is_a_clear_error() {
    let err = capture(Command::new("/nonexistent/skarn-test-program"), 1024).unwrap_err();
    assert!(err.to_string().contains("cannot start"), "{err}");
}

#[test]
fn capture_is_capped_keeping_head_and_tail() {
    let data: Vec<u8> = (0..100_000u32)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect();
    let got = read_capped(&data[..], 10_000).unwrap();
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("0\n1\n2\n"));
    assert!(text.ends_with("99998\n99999\n"));
    assert!(text.contains("bytes of output dropped during capture"));
    assert!(got.len() < 10_200);
}

#[test]
fn run_and_compress_saves_raw_and_keeps_status() {
    let state = TempDir::new("state");
    let ws = TempDir::new("ws");
    let store = Store::open(StoreConfig::with_dir(state.0.join("recall")), Some(&ws.0)).unwrap();
    // 300 passing tests and one failure, the failure on stderr.
    let script = "for i in $(seq 1 300); do echo \"test t$i ... ok\"; done; \
                  echo 'test bad ... FAILED' >&2; \
                  echo 'test result: FAILED. 300 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s'; \
                  exit 101";
    let (out, code) = run_and_compress(
        sh(script),
        "cargo test",
        &Compressor::builtin(),
        Some(&store),
        1 << 20,
    )
    .unwrap();
    assert_eq!(code, 101);
    assert_eq!(out.profile, "cargo-test");
    assert!(out.text.contains("test bad ... FAILED\n"));
    assert!(
        out.text
            .contains("test result: FAILED. 300 passed; 1 failed")
    );
    assert!(!out.text.contains("test t7 ... ok"));
    let id = out.id.expect("something was cut, so it was saved");
    assert!(
        out.text
            .trim_end()
            .ends_with(&format!("skarn recall {id}]"))
    );
    let raw = store.load(&id).unwrap();
    assert!(String::from_utf8_lossy(&raw).contains("test t7 ... ok\n"));
}

#[test]
fn no_store_means_no_cut() {
    let big: String = (0..2000).map(|i| format!("test t{i} ... ok\n")).collect();
    let out =
        Compressor::builtin().compress_recoverable(big.as_bytes(), "cargo test", Some(0), None);
    assert_eq!(out.text, big);
    assert!(out.id.is_none());
    assert!(out.save_error.is_some());
}

#[test]
fn short_output_is_unchanged_and_success_never_empty() {
    let c = Compressor::builtin();
    let short = "   Compiling x v0.1.0\n    Finished `dev` profile\n";
    let out = c.compress(short.as_bytes(), "cargo build", Some(0));
    assert!(!out.changed);
    assert_eq!(out.text, short);

    // A long successful run made only of noise still says something.
    let noise: String = (0..3000)
        .map(|i| format!("   Compiling crate{i} v1.0.{i}\n"))
        .collect();
    let out = c.compress(noise.as_bytes(), "cargo build", Some(0));
    assert!(out.changed);
    assert!(!out.text.trim().is_empty());
    assert!(out.text.len() < noise.len());
}

#[test]
fn a_summary_with_the_word_passed_survives() {
    // A drop rule for passing-test lines must not take the summary.
    let mut s = String::new();
    for i in 0..400 {
        s.push_str(&format!("tests/test_x.py::test_{i} PASSED [ 50%]\n"));
    }
    s.push_str("tests/test_x.py::test_bad FAILED [ 99%]\n");
    s.push_str("==== 400 passed, 1 failed in 1.00s ====\n");
    let out = Compressor::builtin().compress(s.as_bytes(), "pytest -v", Some(1));
    assert!(
        out.text
            .contains("==== 400 passed, 1 failed in 1.00s ====\n")
    );
    assert!(
        out.text
            .contains("tests/test_x.py::test_bad FAILED [ 99%]\n")
    );
    assert!(!out.text.contains("test_7 PASSED"));
}

#[test]
fn garbage_input_never_panics() {
    let c = Compressor::builtin();
    let mut junk = Vec::new();
    for i in 0..200_000u32 {
        junk.push((i.wrapping_mul(2_654_435_761) >> 24) as u8);
    }
    for cmd in [
        "cargo test",
        "git diff",
        "find /",
        "",
        "pytest",
        "npm install",
    ] {
        let out = c.compress(&junk, cmd, Some(1));
        assert!(out.text.len() <= junk.len() * 4);
    }
    let _ = c.compress(b"", "cargo test", Some(0));
    let _ = c.compress(b"\x1b[", "ls", None);
}

#[test]
fn repeated_warnings_list_every_location_under_one_message() {
    let mut s = String::new();
    for i in 0..40 {
        s.push_str(&format!(
            "warning: unused variable: `x`\n  --> src/lib.rs:{}:9\n   |\n{} |     let x = 1;\n   |         ^ help: if this is intentional, prefix it with an underscore: `_x`\n\n",
            i + 10,
            i + 10
        ));
    }
    s.push_str("warning: `demo` (lib) generated 40 warnings\n");
    let out = Compressor::builtin().compress(s.as_bytes(), "cargo build", Some(0));
    assert_eq!(out.text.matches("warning: unused variable: `x`").count(), 1);
    for i in 0..40 {
        assert!(
            out.text
                .contains(&format!("  --> src/lib.rs:{}:9\n", i + 10)),
            "location {i} kept"
        );
    }
    assert!(
        out.text
            .contains("warning: `demo` (lib) generated 40 warnings\n")
    );
}

#[test]
fn one_message_with_many_locations_stays_linear() {
    // 50 000 locations of one warning: grouping must not be quadratic.
    let mut s = String::new();
    for i in 0..50_000 {
        s.push_str(&format!(
            "warning: unused import\n  --> src/m{i}.rs:1:5\n   |\n1 | use x;\n   |     ^\n\n"
        ));
    }
    let out = Compressor::builtin().compress(s.as_bytes(), "cargo check", Some(0));
    assert_eq!(out.text.matches("warning: unused import\n").count(), 1);
    assert!(out.text.contains("  --> src/m49999.rs:1:5\n"));
    assert!(out.text.contains("  --> src/m0.rs:1:5\n"));
}

#[test]
fn logs_of_passing_tests_go_failures_stay() {
    let c = Compressor::builtin();
    // pytest -rP: captured output of passing tests.
    let mut s = String::from(
        "============================= test session starts ==============================\n",
    );
    for i in 0..60 {
        s.push_str(&format!("tests/test_a.py::test_{i} PASSED [ 50%]\n"));
    }
    s.push_str("tests/test_a.py::test_bad FAILED [100%]\n\n");
    s.push_str(
        "=================================== FAILURES ===================================\n",
    );
    s.push_str("___________________________________ test_bad ___________________________________\n\n    def test_bad():\n>       assert 1 == 2\nE       assert 1 == 2\n\ntests/test_a.py:9: AssertionError\n");
    s.push_str(
        "==================================== PASSES ====================================\n",
    );
    for i in 0..30 {
        s.push_str(&format!("___________________________________ test_{i} ___________________________________\n----------------------------- Captured stdout call -----------------------------\nnoisy log of passing test {i}\n"));
    }
    s.push_str("=========================== short test summary info ============================\nFAILED tests/test_a.py::test_bad - assert 1 == 2\n========================= 1 failed, 60 passed in 0.12s =========================\n");
    let out = c.compress(s.as_bytes(), "pytest -v -rP", Some(1));
    assert!(
        !out.text.contains("noisy log of passing test"),
        "{}",
        out.text
    );
    for want in [
        "tests/test_a.py::test_bad FAILED [100%]",
        ">       assert 1 == 2",
        "E       assert 1 == 2",
        "tests/test_a.py:9: AssertionError",
        "FAILED tests/test_a.py::test_bad - assert 1 == 2",
        "========================= 1 failed, 60 passed in 0.12s =========================",
    ] {
        assert!(out.text.contains(&format!("{want}\n")), "lost {want:?}");
    }

    // go test -v: a passing test's t.Log lines go, a failing test's stay.
    let mut g = String::new();
    for i in 0..80 {
        g.push_str(&format!(
            "=== RUN   TestOk{i}\n    ok_test.go:{i}: chatty log {i}\n--- PASS: TestOk{i} (0.00s)\n"
        ));
    }
    g.push_str("=== RUN   TestBad\n    bad_test.go:7: got 1, want 2\n--- FAIL: TestBad (0.00s)\nFAIL\nFAIL\texample.com/x\t0.01s\n");
    let out = c.compress(g.as_bytes(), "go test -v ./...", Some(1));
    assert!(!out.text.contains("chatty log"), "{}", out.text);
    assert!(out.text.contains("    bad_test.go:7: got 1, want 2\n"));
    assert!(out.text.contains("--- FAIL: TestBad (0.00s)\n"));
    assert!(out.text.contains("FAIL\texample.com/x\t0.01s\n"));
}

#[test]
fn python_errors_survive_in_any_python_run() {
    let mut s = String::new();
    for i in 0..300 {
        s.push_str(&format!("processing item {i} of 300\n"));
    }
    s.push_str(
        "  File \"/app/job.py\", line 12\n    def f(:\n          ^\nSyntaxError: invalid syntax\n",
    );
    for cmd in ["python3 job.py", "./job.sh"] {
        let out = Compressor::builtin().compress(s.as_bytes(), cmd, Some(1));
        assert!(out.text.contains("SyntaxError: invalid syntax\n"), "{cmd}");
        assert!(
            out.text.contains("  File \"/app/job.py\", line 12\n"),
            "{cmd}"
        );
        assert!(!out.text.contains("processing item 150 of 300"), "{cmd}");
    }
}

#[test]
fn a_panic_after_a_long_log_is_kept() {
    let mut s = String::from(
        "running 2 tests\ntest a ... ok\ntest noisy ... FAILED\n\nfailures:\n\n---- noisy stdout ----\n",
    );
    for i in 0..500 {
        s.push_str(&format!("step {i}: state = {}\n", i * 7));
    }
    s.push_str("\nthread 'noisy' (77) panicked at src/lib.rs:9:5:\nassertion `left == right` failed: totals differ\n  left: 3\n right: 4\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n\nfailures:\n    noisy\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n\nerror: test failed, to rerun pass `--lib`\n");
    let out = Compressor::builtin().compress(s.as_bytes(), "cargo test", Some(101));
    for want in [
        "thread 'noisy' (77) panicked at src/lib.rs:9:5:",
        "assertion `left == right` failed: totals differ",
        "  left: 3",
        " right: 4",
        "    noisy",
        "test noisy ... FAILED",
        "error: test failed, to rerun pass `--lib`",
    ] {
        assert!(
            out.text.contains(&format!("{want}\n")),
            "lost {want:?}\n{}",
            out.text
        );
    }
    assert!(!out.text.contains("step 250:"));
}
