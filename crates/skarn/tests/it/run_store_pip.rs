//! `pip install --user` in a Python project (issue 23 item 1): the user
//! site (`~/.local/lib`) and its scripts (`~/.local/bin`) are kept in the
//! workspace's store for the next run of the same workspace; the host's
//! `~/.local` never changes and another workspace does not see them.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::*;
use skarn_test_support::TempDir;

const NAME: &str = "skarn_user_fixture";

/// A wheel laid out by hand (a zip with the module, its metadata and
/// record), so that no build backend or index is needed.
fn wheel(dir: &Path) {
    let script = format!(
        "import zipfile,sys\n\
         n='{NAME}'; d=n+'-1.0.dist-info/'\n\
         z=zipfile.ZipFile(sys.argv[1]+'/'+n+'-1.0-py3-none-any.whl','w')\n\
         z.writestr(n+'.py','VALUE = \"kept-in-the-store\"\\n')\n\
         z.writestr(d+'METADATA','Metadata-Version: 2.1\\nName: '+n+'\\nVersion: 1.0\\n')\n\
         z.writestr(d+'WHEEL','Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n\
         z.writestr(d+'RECORD',n+'.py,,\\n'+d+'METADATA,,\\n'+d+'WHEEL,,\\n'+d+'RECORD,,\\n')\n\
         z.close()\n"
    );
    let o = Command::new("python3")
        .args(["-c", &script])
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
}

#[test]
fn pip_user_installs_are_kept_for_this_workspaces_next_runs() {
    if !python_has_pip() {
        skarn_test_support::skip!("python3 -m pip is not usable by this user");
    }
    let t = TempDir::new("store-pip-user");
    let home = t.dir("home");
    let _stores = Stores(home.clone());
    let wheels = t.dir("wheels");
    wheel(&wheels);
    let (ws1, ws2) = (t.dir("ws1"), t.dir("ws2"));
    t.file("ws1/requirements.txt", "");
    t.file("ws2/requirements.txt", "");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let install = format!(
        "python3 -m pip install -q --user --no-index --find-links {} --break-system-packages {NAME}",
        wheels.display()
    );
    let import = format!("import {NAME}; print({NAME}.VALUE)");

    let o = run_in(
        &ws1,
        &home,
        &["--read", wheels.to_str().unwrap()],
        &["sh", "-c", &install],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        !err(&o).contains("private home and discarded"),
        "the install was said to be discarded: {}",
        err(&o)
    );
    assert!(
        !home.join(".local/lib").exists() && !home.join(".local/bin").exists(),
        "the host's ~/.local was written"
    );

    // The next run of this workspace imports it, offline.
    let o = run_in(&ws1, &home, &["--net", "deny"], &["python3", "-c", &import]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o).trim(), "kept-in-the-store");

    // Another workspace's run does not.
    let o = run_in(&ws2, &home, &["--net", "deny"], &["python3", "-c", &import]);
    assert_ne!(code(&o), 0, "ws2 imported ws1's user install: {}", out(&o));
}

fn python_has_pip() -> bool {
    Command::new("python3")
        .args(["-m", "pip", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
