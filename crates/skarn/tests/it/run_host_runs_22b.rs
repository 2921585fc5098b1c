//! `skarn run`, issue 22 (attack pass h22b): what the host runs later on
//! its own, planted through a link or a name. Links in the caller's `PATH`
//! directories (system ones included) leading into the workspace; programs
//! git's configuration runs by name that are not installed; agents' and
//! editors' own configuration in the home linked into the workspace. Each
//! planted with a real `skarn run` (default flags) and checked from
//! outside.

use std::path::Path;

use crate::common::*;
use skarn_test_support::TempDir;

fn sh(ws: &Path, home: &Path, script: &str) -> std::process::Output {
    run_in(ws, home, &[], &["sh", "-c", script])
}

/// Agents' configuration files in the home (MCP servers, hooks, tasks)
/// that are links into the workspace keep their content: the run cannot
/// add a server the agent would start on the host.
#[test]
fn agent_configuration_linked_from_the_home_cannot_be_planted() {
    let places = [
        ".codeium/windsurf/mcp_config.json",
        ".kiro/settings/mcp.json",
        ".continue/config.yaml",
        ".roo/mcp.json",
        ".qwen/settings.json",
        ".copilot/mcp-config.json",
        ".vscode-server/data/User/mcp.json",
        ".cursor-server/data/User/tasks.json",
        ".factory/mcp.json",
        ".junie/mcp/mcp.json",
        ".augment/settings.json",
        ".amp/settings.json",
        ".kilocode/mcp.json",
        ".lmstudio/mcp.json",
        ".vscode-insiders/argv.json",
    ];
    for (i, rel) in places.iter().enumerate() {
        let t = TempDir::new(&format!("h22b-agent-{i}"));
        let home = t.dir("home");
        let ws = t.dir("ws");
        t.file("ws/conf.json", "{}\n");
        let link = home.join(rel);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(ws.join("conf.json"), &link).unwrap();
        let o = sh(
            &ws,
            &home,
            r#"printf '{"mcpServers":{"x":{"command":"touch","args":["/tmp/PWNED"]}}}' > conf.json; true"#,
        );
        assert_eq!(code(&o), 0, "{rel}: {}", err(&o));
        assert_eq!(
            std::fs::read_to_string(ws.join("conf.json")).unwrap(),
            "{}\n",
            "~/{rel} (a link into the workspace) was rewritten: {}",
            err(&o)
        );
    }
}

/// Removes a link made for a test in a shared directory, passed or not.
struct RemoveOnDrop(std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn program(p: &Path, says: &str) {
    std::fs::write(p, format!("#!/bin/sh\necho {says}\n")).unwrap();
    let mut m = std::fs::metadata(p).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut m, 0o755);
    std::fs::set_permissions(p, m).unwrap();
}

/// What the host's next `name` prints, with `path` as its `PATH`.
fn host_runs(name: &str, path: &str) -> String {
    let o = std::process::Command::new(name)
        .env("PATH", path)
        .output()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A link in a `PATH` directory leading to a program in the workspace:
/// the run cannot rewrite that program. As root the link is made where
/// users make them (`/usr/local/bin`, a system directory the old code did
/// not look into); an unprivileged user cannot write there, so the same
/// link is made in the home's `~/.local/bin`.
#[test]
fn a_path_link_into_the_workspace_keeps_its_program() {
    let t = TempDir::new("h22b-syslink");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let tool = ws.join("tool.sh");
    program(&tool, "good");
    let name = format!("skarn-h22b-{}", std::process::id());
    let sys = Path::new("/usr/local/bin");
    let dir = if skarn_test_support::is_root() && sys.is_dir() {
        sys.to_path_buf()
    } else {
        t.dir("home/.local/bin")
    };
    let link = dir.join(&name);
    std::os::unix::fs::symlink(&tool, &link).unwrap();
    let _gone = RemoveOnDrop(link.clone());
    let path = format!("{}:/usr/bin:/bin", dir.display());
    // The workspace is that program's installation: refused unless the
    // flag accepts it (atk22o F3), and then kept read-only whole.
    let o = run_command(
        &ws,
        &home,
        &["--allow-non-project-workspace"],
        &[
            "sh",
            "-c",
            "printf '#!/bin/sh\\necho EVIL\\n' > tool.sh; true",
        ],
    )
    .env("PATH", &path)
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(host_runs(&name, &path), "good", "{}", err(&o));
}

/// A `PATH` link whose chain passes through a link in the workspace and
/// ends at a system program (`~/.local/bin/x -> <ws>/link ->
/// /usr/bin/true`): the run re-points the workspace link at a program of
/// its own; after the run the link is put back and the host's `x` runs
/// the system program.
#[test]
fn a_path_link_chain_through_a_workspace_link_is_put_back() {
    let t = TempDir::new("h22b-chain");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let bin = t.dir("home/.local/bin");
    std::os::unix::fs::symlink("/bin/echo", ws.join("link")).unwrap();
    std::os::unix::fs::symlink(ws.join("link"), bin.join("h22b-x")).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let o = run_command(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "printf '#!/bin/sh\\necho EVIL\\n' > evil; chmod +x evil; ln -sfn evil link; true",
        ],
    )
    .env("PATH", &path)
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(host_runs("h22b-x", &path), "", "{}", err(&o));
    assert_eq!(
        std::fs::read_link(ws.join("link")).unwrap(),
        Path::new("/bin/echo")
    );
}

/// An empty `PATH` entry (leading, trailing or doubled `:`) is the
/// directory the host shell is in: the workspace is refused, and when the
/// user allows it, a program the run leaves there named like a later one
/// is set aside (at the top and below).
#[test]
fn an_empty_path_entry_is_the_shells_directory() {
    let t = TempDir::new("h22b-emptypath");
    let home = t.dir("home");
    let ws = t.dir("ws");
    t.dir("ws/sub");
    let plant =
        "for d in . sub; do printf '#!/bin/sh\\necho EVIL\\n' > $d/ls; chmod +x $d/ls; done; true";
    for path in [":/usr/bin:/bin", "/usr/bin:/bin:", "/usr/bin::/bin"] {
        let o = run_command(&ws, &home, &[], &["sh", "-c", plant])
            .env("PATH", path)
            .current_dir(&ws)
            .output()
            .unwrap();
        assert_ne!(code(&o), 0, "{path:?}: accepted");
        assert!(err(&o).contains("relative entry"), "{path:?}: {}", err(&o));
        assert!(!ws.join("ls").exists());
        let o = run_command(
            &ws,
            &home,
            &["--allow-non-project-workspace"],
            &["sh", "-c", plant],
        )
        .env("PATH", path)
        .current_dir(&ws)
        .output()
        .unwrap();
        assert_eq!(code(&o), 0, "{path:?}: {}", err(&o));
        for d in [ws.clone(), ws.join("sub")] {
            assert!(!d.join("ls").exists(), "{path:?}: {} kept", d.display());
        }
    }
}

/// Programs git runs by configuration but that are not installed
/// (`diff.external` of the repository, `credential.helper` of the global
/// configuration): a run that creates them in a `PATH` directory it can
/// write (here `<ws>/bin`, on the caller's `PATH` and missing before the
/// run) has them set aside, and the host's next `git diff` and `git
/// credential fill` do not run them.
#[test]
fn programs_git_runs_by_configuration_cannot_be_planted_on_path() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("no git on the host");
    }
    let t = TempDir::new("h22b-gitnames");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let marker = t.path().join("PLANT-RAN");
    git(&ws, &["init", "-q"]);
    t.file("ws/a", "1\n");
    git(&ws, &["add", "a"]);
    git(&ws, &["commit", "-qm", "a"]);
    git(&ws, &["config", "diff.external", "h22b-difft"]);
    t.file("home/.gitconfig", "[credential]\n\thelper = h22b-mgr\n");
    let bin = ws.join("bin");
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
    let plant = format!(
        "mkdir bin; for n in h22b-difft git-credential-h22b-mgr; do \
         printf '#!/bin/sh\\ntouch {}\\n' > bin/$n; chmod +x bin/$n; done; echo 2 > a; true",
        marker.display()
    );
    let o = run_command(&ws, &home, &[], &["sh", "-c", &plant])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    // The host's git, as the user runs it next.
    let host_git = |args: &[&str], stdin: &str| {
        use std::io::Write;
        let mut c = std::process::Command::new("git")
            .arg("-C")
            .arg(&ws)
            .args(args)
            .env("PATH", &path)
            .env("HOME", &home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let _ = c.stdin.take().unwrap().write_all(stdin.as_bytes());
        let _ = c.wait();
    };
    host_git(&["diff"], "");
    host_git(
        &["credential", "fill"],
        "protocol=https\nhost=h22b.invalid\n\n",
    );
    assert!(
        !marker.exists(),
        "the host's git ran a program the run planted on PATH: {}",
        err(&o)
    );
    // Set aside (the direct mode) or not applied (the layer), and said.
    assert!(
        err(&o).contains("set aside") || err(&o).contains("bin/h22b-difft"),
        "{}",
        err(&o)
    );
    assert!(!ws.join("bin/h22b-difft").exists(), "{}", err(&o));
}

/// A jupyter kernel spec of the home (`kernel.json`, whose argv jupyter
/// starts for a notebook) naming a script in the workspace, and (as root,
/// who alone can write there) a system start-up file (`/etc/profile.d`)
/// sourcing one: the run cannot rewrite what they name.
#[test]
fn files_kernel_specs_and_system_startup_files_name_stay_unchanged() {
    let t = TempDir::new("h22b-kernels");
    let home = t.dir("home");
    let ws = t.dir("ws");
    t.file("ws/launch.py", "print(1)\n");
    t.file("ws/env.sh", "X=1\n");
    t.file(
        "home/.local/share/jupyter/kernels/proj/kernel.json",
        format!(
            "{{\"argv\": [\"/usr/bin/python3\", \"{}\", \"-f\", \"{{connection_file}}\"], \
             \"display_name\": \"proj\", \"language\": \"python\"}}\n",
            ws.join("launch.py").display()
        ),
    );
    let profile_d = Path::new("/etc/profile.d");
    let etc_file = (skarn_test_support::is_root() && profile_d.is_dir()).then(|| {
        let f = profile_d.join(format!("skarn-h22b-{}.sh", std::process::id()));
        std::fs::write(&f, format!(". {}\n", ws.join("env.sh").display())).unwrap();
        RemoveOnDrop(f)
    });
    let o = sh(
        &ws,
        &home,
        "echo 'import os; os.system(\"touch /tmp/PWNED\")' > launch.py; echo 'touch /tmp/PWNED' > env.sh; true",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(ws.join("launch.py")).unwrap(),
        "print(1)\n",
        "the kernel's script was rewritten: {}",
        err(&o)
    );
    if etc_file.is_some() {
        assert_eq!(
            std::fs::read_to_string(ws.join("env.sh")).unwrap(),
            "X=1\n",
            "the file /etc/profile.d sources was rewritten: {}",
            err(&o)
        );
    }
}

/// What a workspace's mise configuration makes mise run or load on `cd`
/// (`[env] _.source`, `_.file`, `_.path`, `[hooks]`) cannot be planted:
/// the named files keep their content (missing ones are not created), and
/// a program left in the `_.path` directory named like a system one is
/// set aside.
#[test]
fn files_the_mise_configuration_names_cannot_be_planted() {
    let t = TempDir::new("h22b-mise");
    let home = t.dir("home");
    let ws = t.dir("ws");
    t.file("ws/scripts/env.sh", "export A=1\n");
    t.file("ws/scripts/enter.sh", "true\n");
    t.file(
        "ws/mise.toml",
        "[env]\n_.source = \"./scripts/env.sh\"\n_.file = [\".env\", {path = \"{{config_root}}/x.json\"}]\n\
         _.path = [\"tools\"]\n[hooks]\nenter = \"./scripts/enter.sh\"\n",
    );
    let o = sh(
        &ws,
        &home,
        "echo 'touch /tmp/PWNED' > scripts/env.sh; echo 'touch /tmp/PWNED' > scripts/enter.sh; \
         echo LD_PRELOAD=/tmp/x.so > .env; echo '{}' > x.json; mkdir tools; \
         printf '#!/bin/sh\\necho EVIL\\n' > tools/ls; chmod +x tools/ls; true",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(ws.join("scripts/env.sh")).unwrap(),
        "export A=1\n",
        "{}",
        err(&o)
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("scripts/enter.sh")).unwrap(),
        "true\n"
    );
    for f in [".env", "x.json", "tools/ls"] {
        assert!(!ws.join(f).exists(), "{f} was left: {}", err(&o));
    }
}
