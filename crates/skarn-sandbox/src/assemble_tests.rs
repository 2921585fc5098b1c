//! Precedence of [`Policy::from_layers`], without spawning anything.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use super::*;
use crate::config::RunConfig;
use crate::layer_flags::{FlagContext, GrantFlag};
use crate::workspace::WorkspaceRoot;

/// A temporary directory removed on drop.
struct Tmp(PathBuf);

impl Tmp {
    fn new() -> Tmp {
        static N: AtomicU32 = AtomicU32::new(0);
        let d = std::env::temp_dir().join(format!(
            "skarn-layers-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&d).unwrap();
        Tmp(std::fs::canonicalize(&d).unwrap())
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn host(cwd: &Path) -> LayerHost {
    LayerHost {
        home: None,
        cwd: cwd.to_path_buf(),
        resolv_target: Some("/run/resolv/resolv.conf".into()),
        dns_source: "default (DNS for --net)".into(),
        expand_registries: true,
    }
}

/// Write `text` as `name` in `dir` and load it as a layer.
fn layer(dir: &Path, name: &str, text: &str) -> Layer {
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    let c = RunConfig::load(&f, dir).unwrap().unwrap();
    Layer::from_config(&c, None).unwrap()
}

fn config_error(dir: &Path, text: &str) -> String {
    let f = dir.join("bad.toml");
    std::fs::write(&f, text).unwrap();
    match RunConfig::load(&f, dir) {
        Err(e) => e.to_string(),
        Ok(c) => Layer::from_config(&c.unwrap(), None)
            .unwrap_err()
            .to_string(),
    }
}

const A: &str = "[run]
net = \"outbound\"
timeout = \"10m\"
memory = \"1G\"
max_procs = 10
max_file_size = 10
protect_persistence = false
fail_closed = false
allow_home_workspace = true
private_home = false
preset = \"none\"
read = [\"ra\"]
write = [\"wa\"]
exec = [\"xa\"]
deny_read = [\"da\"]
allow_env = [\"A_TOKEN\"]
";

const B: &str = "[run]
net = \"loopback\"
timeout = 30
memory = 2048
max_procs = 20
max_file_size = \"2G\"
protect_persistence = true
fail_closed = true
allow_home_workspace = false
private_home = true
preset = [\"rust\", \"node\"]
read = [\"rb\"]
write = [\"wb\"]
exec = [\"xb\"]
deny_read = [\"db\"]
allow_env = [\"B_TOKEN\"]
";

type Scalars = (
    NetPolicy,
    crate::Limits,
    bool,
    bool,
    bool,
    bool,
    Vec<String>,
);

fn scalars(p: &Policy) -> Scalars {
    (
        p.net.clone(),
        p.limits.clone(),
        p.protect_persistence,
        p.fail_closed,
        p.allow_home_workspace,
        p.private_home,
        Vec::new(),
    )
}

#[test]
fn every_scalar_takes_the_last_layer_in_either_order() {
    let t = Tmp::new();
    let ws = Workspace::fixed(&t.0, "test");
    let a = layer(&t.0, "a.toml", A);
    let b = layer(&t.0, "b.toml", B);
    let a_at = |line: u32| format!("{}:{line}:", t.0.join("a.toml").display());
    let b_at = |line: u32| format!("{}:{line}:", t.0.join("b.toml").display());

    let (p, prov) = Policy::from_layers(&ws, &[a.clone(), b.clone()], &host(&t.0)).unwrap();
    assert_eq!(p.net, NetPolicy::AllowLoopback);
    assert_eq!(p.limits.timeout_secs, Some(30));
    assert_eq!(p.limits.memory_mb, Some(2048));
    assert_eq!(p.limits.max_procs, Some(20));
    assert_eq!(p.limits.max_file_size_mb, Some(2048));
    assert!(p.protect_persistence && p.fail_closed && p.private_home);
    assert!(!p.allow_home_workspace);
    for (key, line) in [
        ("net", 2),
        ("timeout", 3),
        ("memory", 4),
        ("max_procs", 5),
        ("max_file_size", 6),
    ] {
        assert!(
            prov.get(key).starts_with(&b_at(line)),
            "{key}: {}",
            prov.get(key)
        );
        assert_eq!(p.sources[key], prov.get(key));
    }
    let b_file = t.0.join("b.toml").display().to_string();
    for key in [
        "protect_persistence",
        "fail_closed",
        "allow_home_workspace",
        "private_home",
    ] {
        assert_eq!(prov.get(key), b_file, "{key}");
    }
    assert!(
        prov.get("preset").starts_with(&b_at(11)),
        "{}",
        prov.get("preset")
    );

    let (q, prov) = Policy::from_layers(&ws, &[b, a], &host(&t.0)).unwrap();
    assert_eq!(q.net, NetPolicy::AllowOutbound);
    assert_eq!(q.limits.timeout_secs, Some(600));
    assert_eq!(q.limits.memory_mb, Some(1024));
    assert_eq!(q.limits.max_procs, Some(10));
    assert_eq!(q.limits.max_file_size_mb, Some(10));
    assert!(!q.protect_persistence && !q.fail_closed && !q.private_home);
    assert!(q.allow_home_workspace);
    assert!(prov.get("net").starts_with(&a_at(2)));
    assert!(prov.get("preset").starts_with(&a_at(11)));
    assert_ne!(scalars(&p), scalars(&q));
}

#[test]
fn flags_override_every_file_and_defaults_say_default() {
    let t = Tmp::new();
    let ws = Workspace::fixed(&t.0, "test");
    let (d, prov) = Policy::from_layers(&ws, &[], &host(&t.0)).unwrap();
    let def = Policy::new(&t.0);
    assert_eq!(scalars(&d), scalars(&def));
    for key in ["net", "timeout", "memory", "preset", "private_home"] {
        assert_eq!(prov.get(key), "default", "{key}");
    }
    assert!(!d.sources.contains_key("net"));

    let a = layer(&t.0, "a.toml", A);
    let mut f = Layer::flags();
    f.net_flags(&["all".into()], &[], None, None).unwrap();
    for k in LimitKey::ALL {
        f.limit_flag(k, Some(0));
    }
    Layer::bool_flag(&mut f.protect_persistence, true, true, "--x");
    Layer::bool_flag(&mut f.fail_closed, true, true, "--y");
    Layer::bool_flag(&mut f.private_home, false, true, "--not-given");
    f.preset_flags(&["python".into()]).unwrap();
    let (p, prov) = Policy::from_layers(&ws, &[a, f], &host(&t.0)).unwrap();
    assert_eq!(p.net, NetPolicy::AllowAll);
    assert_eq!(prov.get("net"), "--net");
    // 0 = no limit, with the flag as provenance.
    assert_eq!(p.limits.timeout_secs, None);
    assert_eq!(p.limits.memory_mb, None);
    assert_eq!(prov.get("max_procs"), "--max-procs");
    assert_eq!(p.sources["max_file_size"], "--max-file-size");
    assert!(p.protect_persistence && p.fail_closed);
    // A flag not given leaves the file's value.
    assert!(!p.private_home);
    assert_eq!(prov.get("preset"), "--preset");
}

#[test]
fn lists_add_up_in_layer_order() {
    let t = Tmp::new();
    let ws = Workspace::fixed(&t.0, "test");
    let a = layer(&t.0, "a.toml", A);
    let b = layer(&t.0, "b.toml", B);
    let mut f = Layer::flags();
    let at = FlagContext {
        cwd: &t.0,
        workspace: &t.0,
        home: None,
    };
    f.grant_flag(GrantFlag::Read, Path::new("."), at).unwrap();
    f.grant_flag(GrantFlag::DenyRead, Path::new("x"), at)
        .unwrap();
    f.allow_env
        .push(Sourced::new("F_TOKEN".into(), "--allow-env"));
    let (p, prov) = Policy::from_layers(&ws, &[a, b, f], &host(&t.0)).unwrap();
    let paths = |g: &[Grant]| g.iter().map(|g| g.path.clone()).collect::<Vec<_>>();
    assert_eq!(
        paths(&p.read),
        [t.0.join("ra"), t.0.join("rb"), t.0.clone()]
    );
    assert_eq!(paths(&p.write), [t.0.join("wa"), t.0.join("wb")]);
    assert_eq!(paths(&p.exec), [t.0.join("xa"), t.0.join("xb")]);
    assert_eq!(
        paths(&p.deny_read),
        [t.0.join("da"), t.0.join("db"), t.0.join("x")]
    );
    assert_eq!(p.read[2].source, "--read");
    assert!(p.read[0].source.contains("a.toml:12:"));
    assert_eq!(p.allow_env, ["A_TOKEN", "B_TOKEN", "F_TOKEN"]);
    assert_eq!(prov.get("allow_env.F_TOKEN"), "--allow-env");
    assert!(prov.get("allow_env.A_TOKEN").ends_with("a.toml"));
}

#[test]
fn host_lists_add_up_and_allow_hosts_implies_allow() {
    let t = Tmp::new();
    let ws = Workspace::fixed(&t.0, "test");
    let u = layer(&t.0, "u.toml", "[run]\nallow_hosts = [\"a.test\"]\n");
    let w = layer(
        &t.0,
        "w.toml",
        "[run]\nnet = \"allow:b.test\"\ndeny_hosts = [\"x.a.test\"]\n",
    );
    let mut f = Layer::flags();
    f.net_flags(
        &["allow:c.test".into(), "allow:d.test".into()],
        &["y.c.test".into()],
        Some(5),
        Some(0),
    )
    .unwrap();
    let (p, prov) = Policy::from_layers(&ws, &[u.clone(), w, f], &host(&t.0)).unwrap();
    let NetPolicy::AllowHosts(l) = &p.net else {
        panic!("{:?}", p.net)
    };
    assert_eq!(l.allow, ["a.test", "b.test", "c.test", "d.test"]);
    assert_eq!(l.deny, ["x.a.test", "y.c.test"]);
    assert_eq!(l.max_total_bytes, Some(5 << 20));
    assert_eq!(l.max_connections, None);
    assert_eq!(prov.get("net"), "--net");
    assert_eq!(prov.get("deny_hosts.y.c.test"), "--deny-host");
    assert!(prov.get("allow_hosts.a.test").contains("u.toml:2:"));
    // `allow_hosts` alone selects allow:..., located at the key.
    let (p, prov) = Policy::from_layers(&ws, std::slice::from_ref(&u), &host(&t.0)).unwrap();
    assert!(matches!(p.net, NetPolicy::AllowHosts(_)));
    assert!(
        prov.get("net").contains("u.toml:2:16"),
        "{}",
        prov.get("net")
    );
    // A later file's deny wins over an earlier allow; its lists go unused.
    let d = layer(&t.0, "d.toml", "[run]\nnet = \"deny\"\n");
    let (p, _) = Policy::from_layers(&ws, &[u, d], &host(&t.0)).unwrap();
    assert_eq!(p.net, NetPolicy::DenyAll);
    assert!(p.read.is_empty(), "no DNS grant without host networking");
}

#[test]
fn dns_grant_only_with_host_networking() {
    let t = Tmp::new();
    let ws = Workspace::fixed(&t.0, "test");
    for (net, granted) in [
        ("deny", false),
        ("loopback", false),
        ("outbound", true),
        ("all", true),
        ("allow:a.test", false),
    ] {
        let mut f = Layer::flags();
        f.net_flags(&[net.into()], &[], None, None).unwrap();
        let (p, _) = Policy::from_layers(&ws, &[f], &host(&t.0)).unwrap();
        let dns = p
            .read
            .iter()
            .any(|g| g.path == Path::new("/run/resolv/resolv.conf") && g.source.contains("DNS"));
        assert_eq!(dns, granted, "{net}");
    }
}

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
fn presets_replace_and_empty_means_auto() {
    let t = Tmp::new();
    let home = Tmp::new();
    std::fs::create_dir_all(home.0.join(".npm/_cacache")).unwrap();
    std::fs::create_dir_all(home.0.join(".cache/pip")).unwrap();
    std::fs::write(t.0.join("package.json"), "{}").unwrap();
    let ws = Workspace::fixed(&t.0, "test");
    let mut h = host(&t.0);
    h.home = Some(home.0.clone());
    let overlays = |layers: &[Layer]| {
        let (p, _) = Policy::from_layers(&ws, layers, &h).unwrap();
        p.overlay
            .iter()
            .map(|g| g.source.clone())
            .collect::<Vec<_>>()
    };
    // Default: auto detects node from package.json.
    assert_eq!(overlays(&[]), ["preset node (detected, default)"]);
    let py = layer(&t.0, "p.toml", "[run]\npreset = \"python\"\n");
    let none = layer(&t.0, "n.toml", "[run]\npreset = \"none\"\n");
    let empty = layer(&t.0, "e.toml", "[run]\npreset = []\n");
    let o = overlays(&[none.clone(), py.clone()]);
    assert_eq!(o.len(), 1);
    assert!(
        o[0].starts_with("preset python (") && o[0].contains("p.toml:2:10"),
        "{o:?}"
    );
    assert!(overlays(&[py.clone(), none]).is_empty());
    assert_eq!(overlays(&[py, empty]), ["preset node (detected, default)"]);
}

#[test]
fn registries_expand_from_presets_and_empty_allow_is_an_error() {
    let t = Tmp::new();
    let ws = Workspace::fixed(&t.0, "test");
    let mut f = Layer::flags();
    f.net_flags(&["allow:registries".into()], &[], None, None)
        .unwrap();
    f.preset_flags(&["none".into()]).unwrap();
    let e = Policy::from_layers(&ws, &[f.clone()], &host(&t.0)).unwrap_err();
    assert!(e.to_string().contains("no host to allow"), "{e}");
    // The gateway expands `registries` itself.
    let mut h = host(&t.0);
    h.expand_registries = false;
    let (p, _) = Policy::from_layers(&ws, &[f], &h).unwrap();
    let NetPolicy::AllowHosts(l) = &p.net else {
        panic!()
    };
    assert_eq!(l.allow, ["registries"]);
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
