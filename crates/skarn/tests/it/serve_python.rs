//! Runs the Python MCP SDK client tests in tests/python against this build
//! of `skarn serve` (so `cargo test --workspace` covers them). Fails when
//! pytest fails or cannot run; .ci/install.d/40-gateway.sh installs the
//! Python SDK, pytest and the reference server.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::sibling;

#[test]
fn python_sdk_client_against_skarn_serve() {
    let skarn = PathBuf::from(env!("CARGO_BIN_EXE_skarn"));
    let example = sibling("skarn-example-server");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&python)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-rs",
            "tests/python",
        ])
        .current_dir(&root)
        .env("SKARN_BIN", &skarn)
        .env("SKARN_EXAMPLE_BIN", &example)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python} -m pytest: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(
        out.status.success(),
        "pytest failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    // pytest's summary line names skipped tests ("N skipped"): each is a
    // test that checked nothing, said like any other skip.
    if let Some(line) = stdout.lines().rev().find(|l| l.contains(" skipped")) {
        skarn_test_support::skip::report_skip(module_path!(), &format!("pytest: {line}"));
    }
}
