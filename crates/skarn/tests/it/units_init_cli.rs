//! One size/duration syntax in every subcommand, and `skarn init --client`
//! merging into existing client files.

use std::process::{Command, Output};

use skarn_test_support::TempDir;

const SKARN: &str = env!("CARGO_BIN_EXE_skarn");

fn skarn(args: &[&str], cwd: &std::path::Path, home: &std::path::Path) -> Output {
    Command::new(SKARN)
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .output()
        .unwrap()
}

#[test]
fn units_in_every_subcommand() {
    let d = TempDir::new("units_init_cli");
    let home = d.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let p = &d.path().join("ws");
    std::fs::create_dir_all(p).unwrap();
    let skarn = |args: &[&str], cwd: &std::path::Path, _: &std::path::Path| skarn(args, cwd, &home);
    // run: durations and sizes with suffixes; a fraction of a unit it keeps whole is refused.
    let o = skarn(
        &[
            "run",
            "--timeout",
            "1m",
            "--memory",
            "1G",
            "--max-file-size",
            "64M",
            "--",
            "echo",
            "ok",
        ],
        p,
        p,
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "ok\n", "{o:?}");
    for bad in [
        ["--timeout", "500ms"],
        ["--memory", "100K"],
        ["--memory", "lots"],
    ] {
        let o = skarn(&["run", bad[0], bad[1], "--", "true"], p, p);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
    // [run] keys: strings or numbers.
    std::fs::write(
        p.join("skarn.toml"),
        "[run]\ntimeout = \"2m\"\nmemory = 512\n",
    )
    .unwrap();
    let o = skarn(&["run", "--json", "--", "true"], p, p);
    let report = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(report.contains("120") && report.contains("512"), "{report}");
    std::fs::write(p.join("skarn.toml"), "[run]\nmemory = \"1.5K\"\n").unwrap();
    let o = skarn(&["run", "--", "true"], p, p);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("skarn.toml:2:10: memory"),
        "{o:?}"
    );
    std::fs::remove_file(p.join("skarn.toml")).unwrap();
    // exec: a bare --memory is MiB now.
    let o = skarn(
        &[
            "exec",
            "--memory",
            "512",
            "--timeout",
            "10s",
            "--code",
            "return 1",
        ],
        p,
        p,
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "1\n", "{o:?}");
    let o = skarn(&["exec", "--memory", "512K", "--code", "return 1"], p, p);
    assert_eq!(o.status.code(), Some(2));
    let o = skarn(&["exec"], p, p);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--file"),
        "{o:?}"
    );
    // compress: sizes and ages.
    let o = skarn(
        &[
            "compress",
            "--max-capture",
            "1",
            "--max-age",
            "1h",
            "--state-dir",
            &p.join("st").display().to_string(),
        ],
        p,
        p,
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let o = skarn(&["compress", "--max-capture", "1Q"], p, p);
    assert_eq!(o.status.code(), Some(2));
    // serve: a bare deadline is refused with how to write it.
    let cfg = p.join("gw.toml");
    std::fs::write(
        &cfg,
        "[gateway]\ncall_timeout = \"2m\"\n[gateway.limits]\ndeadline = 30000\n",
    )
    .unwrap();
    let o = skarn(&["serve", "--config", &cfg.display().to_string()], p, p);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("gw.toml:4:12") && err.contains("\"30000ms\""),
        "{err}"
    );
    std::fs::write(&cfg, "[gateway]\ncall_timeout = \"soon\"\n").unwrap();
    let o = skarn(
        &[
            "exec",
            "--config",
            &cfg.display().to_string(),
            "--code",
            "1",
        ],
        p,
        p,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("invalid duration"),
        "{o:?}"
    );
}

#[test]
fn init_client_merges_keeps_and_backs_up() {
    let d = TempDir::new("units_init_cli");
    let (proj, home) = (d.path().join("p"), d.path().join("h"));
    std::fs::create_dir_all(proj.join(".cursor")).unwrap();
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    let cursor = proj.join(".cursor/mcp.json");
    std::fs::write(
        &cursor,
        "{\"mcpServers\": {\"mine\": {\"command\": \"m\"}}, \"z\": 1}",
    )
    .unwrap();
    let codex = home.join(".codex/config.toml");
    std::fs::write(&codex, "# keep me\nmodel = \"x\"\n").unwrap();
    // --print writes nothing and prints the merged file.
    let o = skarn(&["init", "--client", "cursor", "--print"], &proj, &home);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // The project's other server is kept, wrapped in `skarn run` (ADR 0273).
    assert_eq!(
        v["mcpServers"]["mine"]["args"],
        serde_json::json!(["run", "--timeout", "0", "--", "m"])
    );
    assert_eq!(v["mcpServers"]["skarn"]["args"][0], "serve");
    assert!(!proj.join("skarn.toml").exists());
    assert!(
        std::fs::read_to_string(&cursor)
            .unwrap()
            .contains("\"z\": 1}")
    );
    for client in [
        "cursor",
        "codex",
        "claude-code",
        "vscode",
        "gemini-cli",
        "windsurf",
    ] {
        // The project's own server `mine` is shown; the user accepts it.
        let o = skarn(
            &["init", "--client", client, "--accept-project-settings"],
            &proj,
            &home,
        );
        assert_eq!(o.status.code(), Some(0), "{client}: {o:?}");
        let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(
            !summary["files"].as_array().unwrap().is_empty(),
            "{summary}"
        );
        // The summary names the client as the user typed it.
        assert_eq!(summary["client"], *client, "{summary}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cursor).unwrap()).unwrap();
    assert_eq!(
        (v["z"].as_i64(), v["mcpServers"]["mine"]["args"][4].as_str()),
        (Some(1), Some("m"))
    );
    let args = &v["mcpServers"]["skarn"]["args"];
    assert_eq!(
        args[2],
        proj.join("skarn.toml")
            .canonicalize()
            .unwrap()
            .display()
            .to_string()
    );
    let backups: Vec<_> = std::fs::read_dir(proj.join(".cursor"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".skarn-backup-"))
        .collect();
    assert_eq!(backups.len(), 1);
    let t = std::fs::read_to_string(&codex).unwrap();
    assert!(
        t.starts_with("# keep me\nmodel = \"x\"\n") && t.contains("[mcp_servers.skarn]"),
        "{t}"
    );
    let hook = std::fs::read_to_string(proj.join(".claude/settings.json")).unwrap();
    assert!(
        hook.contains("skarn-hook")
            && hook.contains("'claude-code'")
            && hook.contains("\"matcher\": \"*\""),
        "{hook}"
    );
    assert!(proj.join(".mcp.json").exists() && proj.join(".vscode/mcp.json").exists());
    assert!(home.join(".codeium/windsurf/mcp_config.json").exists());
    // A second run changes nothing and makes no new backup.
    let o = skarn(
        &["init", "--client", "cursor", "--accept-project-settings"],
        &proj,
        &home,
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("already set up"),
        "{o:?}"
    );
    // Over HTTP: the client reads the token from the environment.
    let o = skarn(
        &["init", "--client", "codex", "--http", "8931", "--print"],
        &proj,
        &home,
    );
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.contains("url = \"http://127.0.0.1:8931/mcp\"")
            && t.contains("bearer_token_env_var = \"SKARN_HTTP_TOKEN\""),
        "{t}"
    );
    let v: toml::Value = toml::from_str(&t).unwrap();
    assert!(v["mcp_servers"]["skarn"].get("command").is_none(), "{t}");
    let o = skarn(
        &[
            "init",
            "--client",
            "cursor",
            "--http",
            "http://127.0.0.1:9/mcp",
            "--token-env",
            "T",
            "--accept-project-settings",
        ],
        &proj,
        &home,
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cursor).unwrap()).unwrap();
    assert_eq!(
        v["mcpServers"]["skarn"]["headers"]["Authorization"],
        "Bearer ${env:T}"
    );
    assert_eq!(v["mcpServers"]["mine"]["args"][4], "m");
    let o = skarn(
        &["init", "--client", "cursor", "--http", "nope"],
        &proj,
        &home,
    );
    assert_eq!(o.status.code(), Some(2));
    // A file it cannot merge is left alone: exit 2.
    std::fs::write(proj.join(".gemini/settings.json"), "{ // comment\n}").unwrap();
    let o = skarn(&["init", "--client", "gemini-cli"], &proj, &home);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
}

fn read(p: &std::path::Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// Names in `dir` containing `part`.
fn names_with(dir: &std::path::Path, part: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(part))
        .collect()
}

/// A cloned project's links cannot make `skarn init` write outside it, a
/// file that cannot be merged leaves everything untouched, and links that
/// stay inside (the project, or the home for user-level files) are
/// followed, with the backup next to the file changed.
#[test]
fn init_never_writes_through_links_that_leave_the_project() {
    use std::os::unix::fs::symlink;
    let d = TempDir::new("units_init_cli");
    let (proj, home, out) = (d.path().join("p"), d.path().join("h"), d.path().join("out"));
    for dir in [proj.join(".claude"), home.clone(), out.clone()] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let refused = |args: &[&str], link: &str, target: &str| {
        let o = skarn(args, &proj, &home);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        assert!(
            err.contains(link) && err.contains(target),
            "{args:?}: {err}"
        );
    };
    // A project settings file linked outside: nothing written anywhere.
    let victim = out.join("victim.json");
    std::fs::write(&victim, "{\"mine\": 1}").unwrap();
    symlink(&victim, proj.join(".claude/settings.json")).unwrap();
    refused(
        &["init", "--client", "claude-code"],
        "settings.json",
        "victim.json",
    );
    assert_eq!(read(&victim), "{\"mine\": 1}");
    assert!(names_with(&out, "skarn-backup").is_empty());
    assert!(!proj.join("skarn.toml").exists() && !proj.join(".mcp.json").exists());
    std::fs::remove_file(proj.join(".claude/settings.json")).unwrap();
    // .mcp.json -> ~/.claude.json would turn a project entry into a user one.
    let user = home.join(".claude.json");
    std::fs::write(&user, "{\"projects\": {}}").unwrap();
    symlink(&user, proj.join(".mcp.json")).unwrap();
    refused(
        &["init", "--client", "claude-code", "--no-hook"],
        ".mcp.json",
        ".claude.json",
    );
    refused(
        &["init", "--client", "claude-code", "--print"],
        ".mcp.json",
        ".claude.json",
    );
    assert_eq!(read(&user), "{\"projects\": {}}");
    std::fs::remove_file(proj.join(".mcp.json")).unwrap();
    // A directory link counts too.
    std::fs::remove_dir(proj.join(".claude")).unwrap();
    symlink(&out, proj.join(".claude")).unwrap();
    refused(
        &["init", "--client", "claude-code", "--hook-only"],
        ".claude",
        "out",
    );
    assert!(!out.join("settings.json").exists());
    std::fs::remove_file(proj.join(".claude")).unwrap();
    // A dangling skarn.toml link is not followed to create its target.
    symlink(out.join("x.toml"), proj.join("skarn.toml")).unwrap();
    refused(&["init"], "skarn.toml", "x.toml");
    refused(&["init", "--client", "cursor"], "skarn.toml", "x.toml");
    assert!(!out.join("x.toml").exists() && !proj.join(".cursor").exists());
    std::fs::remove_file(proj.join("skarn.toml")).unwrap();
    // --force does not overwrite a file outside through a link.
    std::fs::write(out.join("precious.txt"), "precious").unwrap();
    symlink(out.join("precious.txt"), proj.join("skarn.toml")).unwrap();
    refused(&["init", "--force"], "skarn.toml", "precious.txt");
    assert_eq!(read(&out.join("precious.txt")), "precious");
    std::fs::remove_file(proj.join("skarn.toml")).unwrap();
    // All or nothing: an invalid .mcp.json means no skarn.toml either.
    std::fs::write(proj.join(".mcp.json"), "{ nope").unwrap();
    let o = skarn(&["init", "--client", "claude-code"], &proj, &home);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(!proj.join("skarn.toml").exists() && !proj.join(".claude").exists());
    std::fs::remove_file(proj.join(".mcp.json")).unwrap();
    // A link inside the project is followed; the backup is next to the
    // real file and the link stays a link.
    std::fs::create_dir_all(proj.join("conf")).unwrap();
    std::fs::create_dir_all(proj.join(".cursor")).unwrap();
    std::fs::write(proj.join("conf/cursor.json"), "{\"z\": 1}").unwrap();
    symlink("../conf/cursor.json", proj.join(".cursor/mcp.json")).unwrap();
    let o = skarn(&["init", "--client", "cursor"], &proj, &home);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let v: serde_json::Value = serde_json::from_str(&read(&proj.join("conf/cursor.json"))).unwrap();
    assert_eq!(
        (
            v["z"].as_i64(),
            v["mcpServers"]["skarn"]["args"][0].as_str()
        ),
        (Some(1), Some("serve"))
    );
    assert_eq!(names_with(&proj.join("conf"), "skarn-backup").len(), 1);
    assert!(names_with(&proj.join(".cursor"), "skarn-backup").is_empty());
    assert!(
        std::fs::symlink_metadata(proj.join(".cursor/mcp.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // User-level files may link into the home (a dotfiles checkout), not out of it.
    std::fs::create_dir_all(home.join("dotfiles")).unwrap();
    std::fs::create_dir_all(home.join(".cursor")).unwrap();
    std::fs::write(home.join("dotfiles/cursor.json"), "{}").unwrap();
    symlink(
        home.join("dotfiles/cursor.json"),
        home.join(".cursor/mcp.json"),
    )
    .unwrap();
    let o = skarn(&["init", "--client", "cursor", "--user"], &proj, &home);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(read(&home.join("dotfiles/cursor.json")).contains("\"skarn\""));
    symlink(&out, home.join(".gemini")).unwrap();
    refused(
        &["init", "--client", "gemini-cli", "--user"],
        ".gemini",
        "out",
    );
    assert!(!out.join("settings.json").exists());
    // --force on a plain skarn.toml keeps the old one as a backup.
    std::fs::write(proj.join("skarn.toml"), "# mine\n").unwrap();
    let o = skarn(&["init", "--force"], &proj, &home);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let backups = names_with(&proj, "skarn.toml.skarn-backup-");
    assert_eq!(backups.len(), 1);
    assert_eq!(read(&proj.join(&backups[0])), "# mine\n");
}
