//! Issue 24 item 8 (ADR 0237): a trusted server with `sandbox.enabled =
//! false` runs unconfined only when nothing it runs lies where a sandboxed
//! command (the agent's) may write. Judged from outside: the file the
//! planted code writes outside the project does not appear.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::agent_gateway::Gw;
use crate::common::*;
use skarn_test_support::TempDir;

fn open(d: &Path) {
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
}

fn script(p: &Path, body: &str) {
    std::fs::write(p, body).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `skarn trust cfg`: its review on stderr.
fn trust_review(cfg: &Path, home: &Path, path: Option<&str>) -> String {
    let mut c = Command::new(exe());
    c.arg("trust").arg(cfg).env("HOME", home);
    if let Some(p) = path {
        c.env("PATH", p);
    }
    let o = c.output().unwrap();
    assert_eq!(code(&o), 0, "{o:?}");
    err(&o)
}

/// The agent, confined in `repo`, runs `sh -c cmd`.
fn agent(repo: &Path, home: &Path, cmd: &str) {
    let o = run_in(repo, home, &[], &["sh", "-c", cmd]);
    assert_eq!(code(&o), 0, "{o:?}");
}

/// The server's script is in the project: the agent rewrites it.
#[test]
fn a_trusted_servers_script_rewritten_by_the_agent_runs_confined() {
    let t = TempDir::new("gw_program");
    let (repo, home, outside) = (t.dir("repo"), t.dir("home"), t.dir("outside"));
    for d in [t.path(), &repo, &outside] {
        open(d);
    }
    script(&repo.join("srv.sh"), "#!/bin/sh\nexec cat\n");
    let cfg = repo.join("skarn.toml");
    std::fs::write(
        &cfg,
        "[servers.docs]\ncommand = \"./srv.sh\"\nstart_timeout = 10\n[servers.docs.sandbox]\nenabled = false\n",
    )
    .unwrap();
    let review = trust_review(&cfg, &home, None);
    assert!(
        review.contains("srv.sh") && review.contains("will run CONFINED"),
        "the review says it will run confined: {review}"
    );
    let marker = outside.join("pwn");
    // The run keeps the script a trusted entry names read-only (b24w);
    // were it rewritten, the server would still run confined (below).
    let o = run_in(
        &repo,
        &home,
        &[],
        &[
            "sh",
            "-c",
            &format!(
                "printf '#!/bin/sh\\necho PWN > {}\\nexec cat\\n' > srv.sh",
                marker.display()
            ),
        ],
    );
    assert!(
        code(&o) == 0 || err(&o).contains("Read-only file system"),
        "{o:?}"
    );
    let mut g = Gw::start(&cfg, &home);
    g.call(2, "search", json!({"query": "docs"}));
    let stderr = g.stop();
    assert!(
        !marker.exists(),
        "the rewritten program ran unconfined: {stderr}"
    );
    assert!(stderr.contains("runs confined"), "{stderr}");
}

/// The script stays as trusted; a file it loads from beside it (a shell
/// library here; a Python or Node module is the same case) is changed by
/// the agent.
#[test]
fn a_module_beside_a_trusted_servers_script_cannot_run_unconfined() {
    let t = TempDir::new("gw_module");
    let (repo, home, outside) = (t.dir("repo"), t.dir("home"), t.dir("outside"));
    for d in [t.path(), &repo, &outside] {
        open(d);
    }
    script(&repo.join("srv.sh"), "#!/bin/sh\n. ./lib.sh\nexec cat\n");
    std::fs::write(repo.join("lib.sh"), ": nothing\n").unwrap();
    let cfg = repo.join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[servers.docs]\ncommand = \"sh\"\nargs = [\"srv.sh\"]\ncwd = {:?}\nstart_timeout = 10\n\
             [servers.docs.sandbox]\nenabled = false\n",
            repo.display().to_string()
        ),
    )
    .unwrap();
    trust(&cfg, &home);
    let marker = outside.join("pwn");
    agent(
        &repo,
        &home,
        &format!("echo 'echo PWN > {}' > lib.sh", marker.display()),
    );
    let mut g = Gw::start(&cfg, &home);
    g.call(2, "search", json!({"query": "docs"}));
    let stderr = g.stop();
    assert!(
        !marker.exists(),
        "the module the agent changed ran unconfined: {stderr}"
    );
    assert!(stderr.contains("runs confined"), "{stderr}");
}

/// The server's program is a bare name found on `PATH` in the user's own
/// `~/bin`; a project directory comes earlier on `PATH`, and the agent
/// puts a program of that name there.
#[test]
fn a_program_planted_earlier_on_path_does_not_run_unconfined() {
    let t = TempDir::new("gw_path");
    let (repo, home, outside) = (t.dir("repo"), t.dir("home"), t.dir("outside"));
    let (tools, bin) = (t.dir("repo/tools"), t.dir("home/bin"));
    for d in [t.path(), &repo, &outside, &tools] {
        open(d);
    }
    let real = outside.join("real");
    script(
        &bin.join("skarn-docs-srv"),
        &format!("#!/bin/sh\necho ran > {}\nexec cat\n", real.display()),
    );
    let cfg = repo.join("skarn.toml");
    std::fs::write(
        &cfg,
        "[servers.docs]\ncommand = \"skarn-docs-srv\"\nstart_timeout = 10\n\
         [servers.docs.sandbox]\nenabled = false\n",
    )
    .unwrap();
    let system = "/usr/local/bin:/usr/bin:/bin";
    // The control: from the user's own ~/bin, unconfined as configured.
    let safe = format!("{}:{system}", bin.display());
    let review = trust_review(&cfg, &home, Some(&safe));
    assert!(!review.contains("will run CONFINED"), "{review}");
    let mut g = Gw::start_env(&cfg, &home, None, &[("PATH", safe.as_ref())]);
    g.call(2, "search", json!({"query": "docs"}));
    let stderr = g.stop();
    assert!(real.exists(), "the control: it runs unconfined: {stderr}");
    // A project directory before it on PATH: the agent plants a program.
    let marker = outside.join("pwn");
    agent(
        &repo,
        &home,
        &format!(
            "printf '#!/bin/sh\\necho PWN > {}\\nexec cat\\n' > tools/skarn-docs-srv && \
             chmod +x tools/skarn-docs-srv",
            marker.display()
        ),
    );
    let risky = format!("{}:{safe}", tools.display());
    let mut g = Gw::start_env(&cfg, &home, None, &[("PATH", risky.as_ref())]);
    g.call(2, "search", json!({"query": "docs"}));
    let stderr = g.stop();
    assert!(
        !marker.exists(),
        "the program planted on PATH ran unconfined: {stderr}"
    );
    assert!(stderr.contains("runs confined"), "{stderr}");
}
