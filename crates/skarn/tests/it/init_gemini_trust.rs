//! Issue 24 item 3: Gemini CLI ignores a project's `.gemini/settings.json`
//! (and so the skarn hook `init` writes there) in a folder it does not
//! trust, when `security.folderTrust.enabled` is on in the user's settings.
//! `skarn init --client gemini-cli` says so on stderr, with what to do
//! (trust the folder, or `--user`, which Gemini always loads).

use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;
use skarn_test_support::TempDir;

fn init(proj: &Path, home: &Path, user: bool) -> Output {
    let mut c = Command::new(exe());
    c.args(["init", "--client", "gemini-cli"]);
    if user {
        c.arg("--user");
    }
    c.current_dir(proj)
        .env("HOME", home)
        .env_remove("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .output()
        .unwrap()
}

#[test]
fn init_says_when_gemini_will_not_run_the_project_hook() {
    let t = TempDir::new("init_gemini_trust");
    let (proj, home) = (t.dir("proj"), t.dir("home"));
    let proj = std::fs::canonicalize(proj).unwrap();
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::write(
        home.join(".gemini/settings.json"),
        r#"{"security": {"folderTrust": {"enabled": true}}}"#,
    )
    .unwrap();
    let o = init(&proj, &home, false);
    assert_eq!(code(&o), 0, "{o:?}");
    let e = err(&o);
    assert!(
        e.contains("WARNING") && e.contains("does NOT run") && e.contains("--user"),
        "{e}"
    );
    assert!(e.contains("/permissions"), "{e}");
    // Trusted (as Gemini records it): no warning.
    std::fs::write(
        home.join(".gemini/trustedFolders.json"),
        format!(r#"{{"{}": "TRUST_FOLDER"}}"#, proj.display()),
    )
    .unwrap();
    let o = init(&proj, &home, false);
    assert_eq!(code(&o), 0, "{o:?}");
    assert!(!err(&o).contains("WARNING"), "{}", err(&o));
    // The user settings, which Gemini always loads, get the hook with --user.
    let o = init(&proj, &home, true);
    assert_eq!(code(&o), 0, "{o:?}");
    let s = std::fs::read_to_string(home.join(".gemini/settings.json")).unwrap();
    assert!(s.contains("BeforeTool") && s.contains("hook"), "{s}");
}
