//! What bad input is told: conflicting flags, configuration errors located
//! at file:line:column, grant paths that are missing or secret, and
//! workspaces that cannot be.

use super::*;

#[test]
fn flag_conflicts_are_errors() {
    let t = Tmp::new();
    let ws = Workspace::fixed(&t.0, "test");
    let net = |nets: &[&str], deny: &[&str]| {
        let mut f = Layer::flags();
        let nets: Vec<String> = nets.iter().map(|s| s.to_string()).collect();
        let deny: Vec<String> = deny.iter().map(|s| s.to_string()).collect();
        f.net_flags(&nets, &deny, None, None)
            .and_then(|()| Policy::from_layers(&ws, &[f], &host(&t.0)).map(|_| ()))
            .map_err(|e| e.to_string())
    };
    assert!(
        net(&["deny", "all"], &[])
            .unwrap_err()
            .contains("conflicts with --net deny")
    );
    assert!(
        net(&["allow:a.test", "deny"], &[])
            .unwrap_err()
            .contains("conflicts")
    );
    assert!(net(&["deny", "deny"], &[]).is_ok());
    assert!(
        net(&["maybe"], &[])
            .unwrap_err()
            .starts_with("--net must be")
    );
    assert!(
        net(&["allow:"], &[])
            .unwrap_err()
            .contains("allow list is empty")
    );
    assert!(net(&["allow:a b"], &[]).unwrap_err().starts_with("--net: "));
    assert!(
        net(&[], &["x.test"])
            .unwrap_err()
            .contains("need --net allow")
    );
    assert!(
        net(&["allow:a.test"], &["bad host"])
            .unwrap_err()
            .starts_with("--deny-host: ")
    );
    // A file's allow satisfies the flags' --deny-host.
    let w = layer(&t.0, "w.toml", "[run]\nnet = \"allow:a.test\"\n");
    let mut f = Layer::flags();
    f.net_flags(&[], &["b.a.test".into()], None, None).unwrap();
    assert!(Policy::from_layers(&ws, &[w, f], &host(&t.0)).is_ok());
    let mut f = Layer::flags();
    assert!(
        f.preset_flags(&["cobol".into()])
            .unwrap_err()
            .to_string()
            .contains("unknown preset")
    );
}

#[test]
fn config_errors_name_file_line_and_column() {
    let t = Tmp::new();
    let f = t.0.join("bad.toml").display().to_string();
    for (text, at, what) in [
        ("[run]\nnet = \"maybe\"\n", ":2:7:", "net must be"),
        (
            "[run]\n\npreset = [\"rust\", \"cobol\"]\n",
            ":3:10:",
            "unknown preset",
        ),
        ("[run]\ntimeout = \"soon\"\n", ":2:11:", "timeout"),
        ("[run]\nallow_hosts = [\"a b\"]\n", ":2:16:", ""),
        (
            "[run]\ndeny_hosts = [\"ok.test\", \"*x\"]\n",
            ":2:26:",
            "bad host pattern",
        ),
        ("[run]\nbogus = 1\n", ":2:1:", "bogus"),
    ] {
        let e = config_error(&t.0, text);
        assert!(e.starts_with(&format!("{f}{at}")), "{text}: {e}");
        assert!(e.contains(what), "{e}");
    }
}

#[test]
fn grant_flags_check_paths_and_make_write_dirs() {
    let t = Tmp::new();
    let at = FlagContext {
        cwd: &t.0,
        workspace: &t.0,
        home: Some(&t.0),
    };
    let mut f = Layer::flags();
    let e = f
        .grant_flag(GrantFlag::Read, Path::new("missing"), at)
        .unwrap_err();
    assert_eq!(e.to_string(), "--read missing: no such file or directory");
    f.grant_flag(GrantFlag::Write, Path::new("out/dir"), at)
        .unwrap();
    assert!(t.0.join("out/dir").is_dir());
    // Never made under a secret path.
    let e = f
        .grant_flag(GrantFlag::Write, Path::new(".ssh/x"), at)
        .unwrap_err();
    assert!(e.to_string().contains("no such file"), "{e}");
    assert!(!t.0.join(".ssh").exists());
    assert_eq!(f.write[0].path, t.0.join("out/dir"));
}

#[test]
fn workspace_resolution() {
    let t = Tmp::new();
    let repo = t.0.join("home/u/repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    let home = t.0.join("home/u");
    let w = Workspace::resolve(None, WorkspaceRoot::Repo, &repo.join("sub"), Some(&home)).unwrap();
    assert_eq!(w.path, repo);
    assert!(w.source.contains("git work tree"), "{}", w.source);
    assert_eq!(w.cwd.as_deref(), Some(repo.join("sub").as_path()));
    let w = Workspace::resolve(None, WorkspaceRoot::Cwd, &repo.join("sub"), Some(&home)).unwrap();
    assert_eq!(w.path, repo.join("sub"));
    // The home directory itself is no project.
    std::fs::create_dir_all(home.join(".git")).unwrap();
    let w = Workspace::resolve(None, WorkspaceRoot::Repo, &home, Some(&home)).unwrap();
    assert_eq!(w.source, "the current directory");
    let w = Workspace::resolve(Some(Path::new("sub")), WorkspaceRoot::Repo, &repo, None).unwrap();
    assert_eq!(
        (w.path, w.source.as_str()),
        (repo.join("sub"), "--workspace")
    );
    let e = Workspace::resolve(Some(Path::new("nope")), WorkspaceRoot::Repo, &repo, None);
    assert!(
        e.unwrap_err()
            .to_string()
            .starts_with("workspace nope does not exist")
    );
    std::fs::write(repo.join("f"), "").unwrap();
    let e = Workspace::resolve(Some(Path::new("f")), WorkspaceRoot::Repo, &repo, None);
    assert!(e.unwrap_err().to_string().contains("is not a directory"));
}

#[test]
fn a_config_grant_of_a_missing_path_is_an_error_like_the_flag() {
    let t = Tmp::new();
    for key in ["read", "exec"] {
        let e = config_error(&t.0, &format!("[run]\n{key} = [\"./missing\"]\n"));
        assert!(
            e.contains(":2:") && e.contains("no such file or directory"),
            "{e}"
        );
    }
    // What exists is granted; deny_read of a missing path stays allowed
    // (it only narrows).
    std::fs::create_dir_all(t.0.join("here")).unwrap();
    let l = layer(
        &t.0,
        "ok.toml",
        "[run]\nread = [\"here\"]\ndeny_read = [\"gone\"]\n",
    );
    assert_eq!(l.read.len(), 1);
    assert_eq!(l.deny_read.len(), 1);
}

#[test]
fn state_keep_takes_one_duration_syntax() {
    let t = Tmp::new();
    let l = layer(&t.0, "keep.toml", "[run]\nstate_keep = \"2h\"\n");
    assert_eq!(
        l.state_keep.map(|k| k.value),
        Some(std::time::Duration::from_secs(7200))
    );
    let l = layer(&t.0, "keep2.toml", "[run]\nstate_keep = 90\n");
    assert_eq!(
        l.state_keep.map(|k| k.value),
        Some(std::time::Duration::from_secs(90)),
        "a bare number is seconds"
    );
    let e = config_error(&t.0, "[run]\nstate_keep = \"soon\"\n");
    assert!(e.contains("state_keep"), "{e}");
}

#[test]
fn scan_cache_max_takes_one_size_syntax() {
    let t = Tmp::new();
    let l = layer(&t.0, "scan.toml", "[run]\nscan_cache_max = \"2MiB\"\n");
    assert_eq!(l.scan_cache_max.map(|k| k.value), Some(2 << 20));
    let l = layer(&t.0, "scan2.toml", "[run]\nscan_cache_max = 4096\n");
    assert_eq!(
        l.scan_cache_max.map(|k| k.value),
        Some(4096),
        "a bare number is bytes"
    );
    let e = config_error(&t.0, "[run]\nscan_cache_max = \"big\"\n");
    assert!(e.contains("scan_cache_max"), "{e}");
}
