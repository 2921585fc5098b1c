//! The sandbox [`Policy`] of one stdio downstream server (issue 12): pure,
//! from its `[servers.<alias>.sandbox]` settings and the facts found on the
//! host ([`ServerFacts`], gathered by [`crate::sandbox_spawn`]).
//!
//! Default: the system directories read+exec (the planner's default), the
//! resolved command, its interpreter and their installation (a venv, a
//! `node_modules`) read+exec, script files named in its arguments
//! read-only, the server's private state directory read-write (it is the
//! sandbox's workspace and the server's `HOME`), the configured grants,
//! never a secret path (the planner drops and masks those), network
//! denied unless `net` says otherwise, no wall-clock limit.

use std::path::{Path, PathBuf};

use skarn_sandbox::{
    Grant, Layer, LayerHost, LimitKey, NetPolicy, Policy, PolicyError, Sourced, Workspace,
    policy::provenance,
};

use crate::sandbox_config::SandboxConfig;

/// What the host says about one server's command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerFacts {
    /// The server's private state directory (absolute, existing).
    pub state_dir: PathBuf,
    /// The command file as found on PATH, and its canonical path.
    pub command: Vec<PathBuf>,
    /// Its `#!` interpreter, as named and canonical.
    pub interpreter: Vec<PathBuf>,
    /// Installation directories found above them (venv roots,
    /// `node_modules` directories).
    pub install_roots: Vec<PathBuf>,
    /// Those of [`ServerFacts::install_roots`] holding the server's own
    /// installed files (a `PREFIX/bin/NAME` program's prefix that is no
    /// interpreter's installation): the check for a granted secret's
    /// value walks them whole (atk27k F4).
    pub own_roots: Vec<PathBuf>,
    /// Existing files named in the arguments.
    pub arg_files: Vec<PathBuf>,
    /// The configured working directory, if any.
    pub cwd: Option<PathBuf>,
    /// Where `/etc/resolv.conf` points when that is outside `/etc`.
    pub resolv_target: Option<PathBuf>,
}

/// Which toolchain a command belongs to, for caches and registries.
pub fn toolchain_of(command: &str, facts: &ServerFacts) -> Vec<&'static str> {
    let base = Path::new(command)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut v = Vec::new();
    let node = [
        "npx", "npm", "node", "nodejs", "pnpm", "pnpx", "yarn", "bun", "bunx",
    ];
    let python = ["uvx", "uv", "pipx", "python", "python3"];
    let roots = facts.install_roots.iter();
    if node.contains(&base.as_str())
        || roots.clone().any(|r| r.ends_with("node_modules"))
        || facts
            .interpreter
            .iter()
            .any(|i| i.file_name().is_some_and(|n| n == "node"))
    {
        v.push("node");
    }
    if python.contains(&base.as_str())
        || base.starts_with("python3.")
        || roots.clone().any(|r| r.join("pyvenv.cfg").is_file())
        || facts.interpreter.iter().any(|i| {
            i.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("python"))
        })
    {
        v.push("python");
    }
    v
}

/// The policy for server `alias`: the server's own files, then its
/// `[servers.<alias>.sandbox]` table, assembled as layers by
/// [`Policy::from_layers`] (the same rules as `skarn run`). With `home`,
/// toolchain installations and the presets of `tools` are granted. A
/// `registries` entry of the allow list is left for the caller to expand.
pub fn server_policy(
    alias: &str,
    cfg: &SandboxConfig,
    facts: &ServerFacts,
    home: Option<&Path>,
    tools: &[&str],
) -> Result<Policy, PolicyError> {
    let ws = Workspace {
        path: facts.state_dir.clone(),
        source: format!("the private state directory of server {alias}"),
        cwd: facts.cwd.clone(),
    };
    let mut own = Layer::default();
    for c in facts.command.iter().chain(&facts.interpreter) {
        own.exec
            .push(Grant::new(c, format!("server {alias}: its command")));
    }
    for r in &facts.install_roots {
        let what = if facts.own_roots.contains(r) {
            skarn_sandbox::secrets::value_scope::OWN_INSTALLATION
        } else {
            ": its installation"
        };
        own.exec
            .push(Grant::new(r, format!("server {alias}{what}")));
    }
    // A file named in the arguments inside a writable grant (a database
    // the server keeps in its `write` directory) is left to that grant: a
    // read-only grant of its own would make it read-only from the start
    // after the one that created it (issue 23 item 9).
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let writable: Vec<PathBuf> = cfg
        .write
        .iter()
        .chain(std::iter::once(&facts.state_dir))
        .flat_map(|w| [w.clone(), canon(w)])
        .collect();
    for f in facts.arg_files.iter().filter(|f| {
        let c = canon(f);
        !writable
            .iter()
            .any(|w| f.starts_with(w) || c.starts_with(w))
    }) {
        own.read
            .push(Grant::new(f, format!("server {alias}: named in args")));
    }
    if let Some(cwd) = &facts.cwd {
        own.read
            .push(Grant::new(cwd, format!("server {alias}: cwd")));
    }
    // A server runs as long as the gateway does.
    own.limits
        .push((LimitKey::Timeout, Sourced::new(0, provenance::DEFAULT)));
    // ...so its state directory is written directly, not through the
    // copy-on-write layer `skarn run` uses by default (ADR 0226): the
    // layer applies a run's changes when it ends, and a server is stopped
    // with the gateway (its state would wait for the next start), and it
    // would not see files the host makes there while it runs.
    own.workspace_layer = Some(Sourced::new(
        skarn_sandbox::policy::WorkspaceLayerMode::Direct,
        format!("server {alias}: runs as long as the gateway (ADR 0226)"),
    ));
    let toolchain = format!("server {alias}: its toolchain");
    own.presets = Some(if tools.is_empty() {
        vec![Sourced::new("none".to_owned(), &toolchain)]
    } else {
        tools
            .iter()
            .map(|t| Sourced::new((*t).to_owned(), &toolchain))
            .collect()
    });

    let src = |what: &str| format!("[servers.{alias}.sandbox] {what} ({})", cfg.at);
    let mut table = Layer::default();
    for (list, dst, what) in [
        (&cfg.read, &mut table.read, "read"),
        (&cfg.write, &mut table.write, "write"),
        (&cfg.exec, &mut table.exec, "exec"),
    ] {
        for g in list {
            dst.push(Grant::new(g, src(what)));
        }
    }
    if cfg.net != NetPolicy::DenyAll {
        table.net = Some(Sourced::new(cfg.net.clone(), src("net")));
    }
    if let NetPolicy::AllowHosts(l) = &cfg.net {
        table.allow_hosts = l
            .allow
            .iter()
            .map(|a| Sourced::new(a.clone(), src("net")))
            .collect();
    }
    table.deny_hosts = cfg
        .deny_hosts
        .iter()
        .map(|d| Sourced::new(d.clone(), src("deny_hosts")))
        .collect();
    for (key, v) in [
        (LimitKey::Memory, cfg.memory_mb),
        (LimitKey::MaxProcs, cfg.max_procs),
        (LimitKey::MaxFileSize, cfg.max_file_size_mb),
    ] {
        if let Some(v) = v {
            table.limits.push((key, Sourced::new(v, src(key.name()))));
        }
    }
    let host = LayerHost {
        home: home.map(Path::to_path_buf),
        cwd: facts.state_dir.clone(),
        resolv_target: facts.resolv_target.clone(),
        dns_source: "default (DNS for net)".into(),
        expand_registries: false,
        command: Vec::new(),
    };
    Policy::from_layers(&ws, &[own, table], &host).map(|(p, _)| p)
}

/// Variables set for a sandboxed server over its base environment: its
/// state directory is its home and holds its caches and configuration;
/// package managers keep using the host's caches (granted as private
/// copy-on-write layers) when `caches` names them.
pub fn env_overrides(state_dir: &Path, caches: &[(&str, PathBuf)]) -> Vec<(String, String)> {
    let s = |p: &str| state_dir.join(p).to_string_lossy().into_owned();
    let mut v = vec![
        ("HOME".to_owned(), state_dir.to_string_lossy().into_owned()),
        ("XDG_CACHE_HOME".to_owned(), s(".cache")),
        ("XDG_CONFIG_HOME".to_owned(), s(".config")),
        ("XDG_DATA_HOME".to_owned(), s(".local/share")),
        ("XDG_STATE_HOME".to_owned(), s(".local/state")),
        ("TMPDIR".to_owned(), "/tmp".to_owned()),
    ];
    for (k, p) in caches {
        v.push(((*k).to_owned(), p.to_string_lossy().into_owned()));
    }
    v
}

#[cfg(all(test, target_os = "linux"))] // checked through the Linux plan
mod tests {
    use super::*;
    use skarn_sandbox::HostFacts;

    fn facts() -> ServerFacts {
        ServerFacts {
            state_dir: "/home/u/.local/state/skarn-servers/a".into(),
            command: vec!["/opt/v/bin/srv".into()],
            interpreter: vec!["/opt/v/bin/python".into()],
            install_roots: vec!["/opt/v".into()],
            own_roots: Vec::new(),
            arg_files: vec!["/home/u/.ssh/id".into(), "/home/u/s.py".into()],
            cwd: None,
            resolv_target: None,
        }
    }

    fn host() -> HostFacts {
        let mut h = HostFacts::probe();
        h.uid = 1000;
        h.gid = 1000;
        h.home = Some("/home/u".into());
        h.home_real = None;
        h.passwd_home = None;
        h.secret_aliases = Vec::new();
        h.landlock_abi = 6;
        h.namespaces = true;
        h.needs_userns = true;
        h
    }

    #[test]
    fn an_argument_file_inside_a_write_grant_stays_writable() {
        let cfg = SandboxConfig {
            write: vec!["/srv/data".into()],
            at: "skarn.toml:4".into(),
            ..Default::default()
        };
        let mut f = facts();
        f.arg_files = vec!["/srv/data/notes.db".into(), "/home/u/s.py".into()];
        let p = server_policy("a", &cfg, &f, None, &[]).unwrap();
        assert!(
            !p.read
                .iter()
                .any(|g| g.path == Path::new("/srv/data/notes.db"))
        );
        assert!(p.read.iter().any(|g| g.path == Path::new("/home/u/s.py")));
        let plan = skarn_sandbox::plan(&p, &host(), &["srv".into()]).unwrap();
        assert!(
            !plan
                .report
                .grants
                .iter()
                .any(|g| g.path == "/srv/data/notes.db"),
            "{:?}",
            plan.report.grants
        );
    }

    #[test]
    fn defaults_and_plan() {
        let cfg = SandboxConfig {
            write: vec!["/srv/out".into()],
            memory_mb: Some(512),
            at: "skarn.toml:4".into(),
            ..Default::default()
        };
        let p = server_policy("a", &cfg, &facts(), None, &[]).unwrap();
        assert_eq!(
            p.workspace,
            Path::new("/home/u/.local/state/skarn-servers/a")
        );
        assert_eq!(p.net, NetPolicy::DenyAll);
        assert_eq!(p.limits.timeout_secs, None);
        assert_eq!(p.limits.memory_mb, Some(512));
        assert!(p.exec.iter().any(|g| g.path == Path::new("/opt/v")));
        assert!(p.write.iter().any(|g| g.path == Path::new("/srv/out")));
        let plan = skarn_sandbox::plan(&p, &host(), &["srv".into()]).unwrap();
        let g = |path: &str| {
            plan.report
                .grants
                .iter()
                .find(|g| g.path == path)
                .map(|g| g.access.clone())
        };
        // The state directory is kept, writable (not a secret path).
        assert_eq!(
            g("/home/u/.local/state/skarn-servers/a").as_deref(),
            Some("read-write")
        );
        // A secret named in the arguments is dropped and denied.
        assert_eq!(g("/home/u/.ssh").as_deref(), Some("deny"));
        assert!(
            plan.report
                .notes
                .iter()
                .any(|n| n.contains("/home/u/.ssh/id") && n.contains("dropped"))
        );
        assert!(g("/home/u/s.py").is_some());
    }

    #[test]
    fn toolchains_and_env() {
        let f = ServerFacts::default();
        assert_eq!(toolchain_of("npx", &f), ["node"]);
        assert_eq!(toolchain_of("/usr/bin/uvx", &f), ["python"]);
        assert!(toolchain_of("srv", &f).is_empty());
        let e = env_overrides(Path::new("/s"), &[("npm_config_cache", "/h/.npm".into())]);
        assert!(e.contains(&("HOME".into(), "/s".into())));
        assert!(e.contains(&("XDG_CACHE_HOME".into(), "/s/.cache".into())));
        assert!(e.contains(&("npm_config_cache".into(), "/h/.npm".into())));
    }

    #[test]
    fn net_and_hint_source() {
        let cfg = SandboxConfig {
            net: NetPolicy::parse("allow:a.test").unwrap(),
            deny_hosts: vec!["b.a.test".into()],
            at: "f:2".into(),
            ..Default::default()
        };
        let p = server_policy("x", &cfg, &facts(), None, &[]).unwrap();
        let NetPolicy::AllowHosts(l) = &p.net else {
            panic!()
        };
        assert_eq!(l.deny, ["b.a.test"]);
        assert!(p.sources["net"].contains("[servers.x.sandbox]"));
    }
}
