//! `skarn run --secret NAME` and `[run] secrets`: which secrets a run is
//! granted, read from the user's configuration only (issue 27).

use std::path::Path;

use skarn_egress::secrets::SecretSpec;
use skarn_egress::secrets::config::SecretsConfig;

/// The user's configuration file.
fn user_file(home: &Path) -> std::path::PathBuf {
    home.join(".config/skarn/config.toml")
}

/// Resolve the secrets granted to this run: `[run] secrets` of the user's
/// file (unless `no_config`) and `flags`, each read from its source. A
/// workspace `skarn.toml` cannot grant or define secrets (a cloned
/// repository could write it): its `[secrets]` and `[run] secrets` are
/// ignored with a warning.
pub fn resolve(
    flags: &[String],
    no_config: bool,
    workspace: &Path,
    writable: &[std::path::PathBuf],
    home: Option<&Path>,
) -> anyhow::Result<Vec<SecretSpec>> {
    let ws = load_secrets(&workspace.join("skarn.toml")).unwrap_or_default();
    if !no_config && (!ws.secrets.is_empty() || !ws.run_secrets.is_empty()) {
        eprintln!(
            "skarn: warning: {}: [secrets] and [run] secrets are ignored in a workspace file; \
             secrets are defined and granted in ~/.config/skarn/config.toml or with --secret",
            workspace.join("skarn.toml").display()
        );
    }
    // The user's file is read even with --no-config and no --secret: the
    // hiding of every configured source depends on it, so one that does
    // not parse stops the run (atk27l F13c). --no-config drops only
    // [run] secrets; --secret still names secrets defined there.
    let mut cfg = user_config(home)?;
    if no_config {
        cfg.run_secrets.clear();
    }
    if flags.is_empty() && cfg.run_secrets.is_empty() {
        return Ok(Vec::new());
    }
    #[cfg(not(target_os = "linux"))]
    let _ = writable;
    #[cfg(not(target_os = "linux"))]
    let view = skarn_egress::secrets::source_view::SourceView::direct();
    // Whether the run can carry secrets at all, before any source runs
    // (atk27o F4: a source ran on the host, then the run was refused).
    #[cfg(target_os = "linux")]
    skarn_sandbox::secrets::run_needs::check().map_err(|e| anyhow::anyhow!(e))?;
    // A `command` source runs on the host: refused before it runs when
    // what its text names lies where a sandboxed run may write (atk27j
    // F10, F11: the early, clear error), and run with every such place
    // hidden (ADR 0283: what the text does not show, atk27l F1-F6).
    #[cfg(target_os = "linux")]
    let mut view = skarn_egress::secrets::source_view::SourceView::direct();
    #[cfg(target_os = "linux")]
    for n in cfg.run_secrets.iter().chain(flags) {
        if let Some(c) = cfg.secrets.get(n) {
            skarn_sandbox::secrets::command_places::check(n, c, writable, home)
                .map_err(|e| anyhow::anyhow!(e))?;
            if (c.command.is_some() || c.keyring.is_some()) && view.hidden().is_empty() {
                view = skarn_sandbox::secrets::source_places::view(writable, home)
                    .map_err(|e| anyhow::anyhow!("secret {n}: {e}"))?;
            }
        }
    }
    let specs = cfg.resolve_granted(flags, home, &view)?;
    // Where each value was really read from, for every later run (ADR 0319).
    #[cfg(target_os = "linux")]
    skarn_sandbox::secrets::source_reads::settle(&cfg, &specs, home)
        .map_err(|e| anyhow::anyhow!(e))?;
    for s in &specs {
        if let Some(n) = cfg
            .secrets
            .get(&s.name)
            .and_then(|c| skarn_egress::secrets::derived::derived_credential_note(&s.name, c))
        {
            eprintln!("skarn: warning: {n}");
        }
    }
    Ok(specs)
}

/// The user's secrets configuration (empty without a home or a file).
/// One that cannot be read or parsed is an error for every consumer:
/// the hiding of sources and values never falls back to "no secrets"
/// (atk27l F13c); `skarn run` stops with exit code 2.
pub fn user_config(home: Option<&Path>) -> anyhow::Result<SecretsConfig> {
    match home {
        Some(h) => load_secrets(&user_file(h)).map_err(|e| {
            anyhow::anyhow!("{e:#}: the secrets configuration must parse before a run starts")
        }),
        None => Ok(SecretsConfig::default()),
    }
}

/// The `file` sources of every secret the user configured, granted or
/// not: never readable inside a run, whatever grant covers them (atk27
/// F9), with the name each is reached by and its target.
pub fn source_files(home: Option<&Path>) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let files: Vec<std::path::PathBuf> = user_config(home)?
        .secrets
        .values()
        .filter_map(|s| s.source_file(home))
        .collect();
    let mut out = Vec::new();
    for f in files {
        if std::fs::symlink_metadata(&f).is_err() {
            continue;
        }
        if let Ok(real) = std::fs::canonicalize(&f)
            && real != f
        {
            out.push(real);
        }
        out.push(f);
    }
    Ok(out)
}

/// What the user's secrets make skarn run or read on the host, for every
/// secret configured, granted or not (`Policy::host_places`): each
/// `command` source's program and scripts (kept read-only inside writable
/// grants: a rewritten one would run on the host at the next resolution,
/// atk27d F5) and each `file` source that does not exist yet (reserved:
/// a link planted there would make another file the secret, atk27d F6).
#[cfg(target_os = "linux")]
pub fn host_places(home: Option<&Path>) -> anyhow::Result<Vec<(std::path::PathBuf, String, bool)>> {
    let cfg = user_config(home)?;
    let mut out = cfg.host_places(home);
    // Where each secret's value was really read from (ADR 0319).
    out.extend(skarn_sandbox::secrets::source_reads::host_places(
        &cfg, home,
    ));
    Ok(out)
}

/// Where the user's configured secrets' values are read from on the host
/// (`SecretsConfig::value_places`).
#[cfg(target_os = "linux")]
pub fn value_places(home: Option<&Path>) -> anyhow::Result<Vec<std::path::PathBuf>> {
    Ok(user_config(home)?.value_places(home))
}

/// The `from_env` variables of every secret the user configured, granted
/// or not: a declared secret's source variable never reaches a command.
pub fn source_variables(home: Option<&Path>) -> anyhow::Result<Vec<String>> {
    Ok(user_config(home)?
        .secrets
        .values()
        .filter_map(|s| s.from_env.clone())
        .collect())
}

/// The values of every configured secret that can be read without
/// running anything (`file`, `from_env`): no variable holding one reaches
/// a command, whatever its name (atk27j F2).
pub fn known_values(
    home: Option<&Path>,
) -> anyhow::Result<skarn_egress::secrets::known::KnownValues> {
    Ok(user_config(home)?.known_values(home))
}

/// [`SecretsConfig::load`], read without ever blocking (a `skarn.toml`
/// that is a FIFO or a device is refused, not waited on).
fn load_secrets(p: &Path) -> anyhow::Result<SecretsConfig> {
    match skarn_sandbox::policy::config::read_text(p)? {
        Some(t) => Ok(SecretsConfig::parse(&t, &p.display().to_string())?),
        None => Ok(SecretsConfig::default()),
    }
}
