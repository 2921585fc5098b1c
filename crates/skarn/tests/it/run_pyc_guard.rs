//! Compiled Python files a run leaves (attacks atk24e F9, atk24h F11): a
//! run that writes `__pycache__/NAME.TAG.pyc` whose header matches the
//! unchanged `NAME.py` (git shows nothing: `__pycache__` is ignored),
//! then moves the source's change time with a no-op `chmod`, or leaves a
//! sourceless `json.pyc` next to the user's script, does not get host
//! python to run its code (in either workspace mode). Judged from
//! outside: host python runs the script and the sources' code only.

use std::path::Path;
use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

/// Python run in the sandbox: writes a compiled `app` (whose code leaves
/// `marker`) with the header of the untouched `app.py` and chmods
/// `app.py` to its own mode (its change time moves, no byte does);
/// leaves a sourceless `json.pyc` beside the script; changes `lib.py` and
/// compiles it.
fn planter(marker: &Path) -> String {
    format!(
        "import importlib.util, marshal, os, py_compile, struct
st = os.stat('app.py')
code = compile(\"open('{m}', 'a').write('PLANT\\\\n'); print('plant')\", 'app.py', 'exec')
os.makedirs('__pycache__', exist_ok=True)
open(importlib.util.cache_from_source('app.py'), 'wb').write(
    importlib.util.MAGIC_NUMBER + struct.pack('<III', 0, int(st.st_mtime), st.st_size)
    + marshal.dumps(code))
os.chmod('app.py', st.st_mode)
js = compile(\"open('{m}', 'a').write('JSON\\\\n'); dumps = repr\", 'json.py', 'exec')
open('json.pyc', 'wb').write(
    importlib.util.MAGIC_NUMBER + struct.pack('<III', 0, 0, 0) + marshal.dumps(js))
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
    std::fs::write(
        ws.join("main.py"),
        "import app, lib, json\nprint(json.dumps([1]))\n",
    )
    .unwrap();
    std::fs::write(ws.join(".gitignore"), "__pycache__/\n").unwrap();
    // Past the after-run check's clock margin (what is here is the user's).
    std::thread::sleep(std::time::Duration::from_millis(200));
    let marker = t.path().join("ran");
    let o = run_in(&ws, &home, mode, &["python3", "-c", &planter(&marker)]);
    assert_eq!(code(&o), 0, "{mode:?}: {}", err(&o));
    assert_eq!(out(&o).trim(), "ok", "{mode:?}: {}", err(&o));
    let run_err = err(&o);
    // Host python runs the user's script (bytecode on).
    let o = Command::new("python3")
        .args(["main.py"])
        .current_dir(&ws)
        .env_remove("PYTHONDONTWRITEBYTECODE")
        .env_remove("PYTHONPATH")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "host python: {}", err(&o));
    assert_eq!(out(&o).trim(), "source\nlib changed\n[1]");
    assert!(
        !marker.exists(),
        "{mode:?}: host python ran the planted compiled code: {:?}",
        std::fs::read_to_string(&marker)
    );
    // Said on stderr (the layer names the file it did not apply).
    let said = run_err.contains("compiled Python file") || run_err.contains("__pycache__/app.");
    assert!(said, "{mode:?}: {run_err}");
}
