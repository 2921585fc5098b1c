//! Compiled Python files under untouched sources (attack atk24e F9): a
//! run that writes `__pycache__/NAME.TAG.pyc` whose header matches the
//! unchanged `NAME.py` (git shows nothing: `__pycache__` is ignored)
//! does not get host python to run its code (in either workspace mode);
//! a file compiled for a source the run changed stays. Judged from outside: host python
//! imports the module and runs the source's code.

use std::path::Path;
use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

/// Python run in the sandbox: writes a compiled `app` (whose code leaves
/// `marker`) with the header of the untouched `app.py`, and changes
/// `lib.py` and compiles it.
fn planter(marker: &Path) -> String {
    format!(
        "import importlib.util, marshal, os, py_compile, struct
st = os.stat('app.py')
code = compile(\"open('{m}', 'a').write('PLANT\\\\n'); print('plant')\", 'app.py', 'exec')
os.makedirs('__pycache__', exist_ok=True)
open(importlib.util.cache_from_source('app.py'), 'wb').write(
    importlib.util.MAGIC_NUMBER + struct.pack('<III', 0, int(st.st_mtime), st.st_size)
    + marshal.dumps(code))
open('lib.py', 'w').write('print(\"lib changed\")\\n')
py_compile.compile('lib.py')
print('ok')",
        m = marker.display()
    )
}

#[test]
fn a_compiled_file_under_an_untouched_source_is_not_kept() {
    if !host_has("python3", "--version") {
        skarn_test_support::skip!("python3 is not installed");
    }
    for mode in [&[][..], &["--workspace-layer", "cow"][..]] {
        attempt(mode);
    }
}

/// One attempt in the workspace mode `mode`.
fn attempt(mode: &[&str]) {
    let t = TempDir::new("pyc-guard");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    std::fs::write(ws.join("app.py"), "print('source')\n").unwrap();
    std::fs::write(ws.join("lib.py"), "print('lib')\n").unwrap();
    std::fs::write(ws.join(".gitignore"), "__pycache__/\n").unwrap();
    // Past the after-run check's clock margin (what is here is the user's).
    std::thread::sleep(std::time::Duration::from_millis(200));
    let marker = t.path().join("ran");
    let o = run_in(&ws, &home, mode, &["python3", "-c", &planter(&marker)]);
    assert_eq!(code(&o), 0, "{mode:?}: {}", err(&o));
    assert_eq!(out(&o).trim(), "ok", "{mode:?}: {}", err(&o));
    // Said on stderr (the layer names the file it did not apply).
    let said = err(&o).contains("compiled Python file") || err(&o).contains("__pycache__/app.");
    assert!(said, "{mode:?}: {}", err(&o));
    // Host python imports both modules (bytecode on).
    let o = Command::new("python3")
        .args(["-c", "import app, lib"])
        .current_dir(&ws)
        .env_remove("PYTHONDONTWRITEBYTECODE")
        .env_remove("PYTHONPATH")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "host python: {}", err(&o));
    assert_eq!(out(&o).trim(), "source\nlib changed");
    assert!(
        !marker.exists(),
        "host python ran the planted compiled file"
    );
    // The file compiled for the changed source was kept.
    let kept = std::fs::read_dir(ws.join("__pycache__"))
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("lib."));
    assert!(kept);
}
