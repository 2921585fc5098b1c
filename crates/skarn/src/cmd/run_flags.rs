//! `skarn run`'s command line as the last policy layer.

use skarn_sandbox::policy::layer_flags::{FlagContext, GrantFlag};
use skarn_sandbox::{Layer, LimitKey, PolicyError, Sourced};

use crate::cmd::run_args::Args;

/// The command line as the last policy layer.
pub(crate) fn flags_layer(args: &Args, at: FlagContext<'_>) -> Result<Layer, PolicyError> {
    let g = &args.grants.0;
    let mut l = Layer::flags();
    for (flag, list) in [
        (GrantFlag::Read, &g.read),
        (GrantFlag::Write, &g.write),
        (GrantFlag::Exec, &g.exec),
        (GrantFlag::DenyRead, &g.deny_read),
    ] {
        for p in list {
            l.grant_flag(flag, p, at)?;
        }
    }
    // A configured secret's own source file is hidden like a --deny-read
    // path, whatever grant (the workspace, --read) covers it (atk27 F9).
    let files = crate::cmd::run_secrets::source_files(at.home)
        .map_err(|e| PolicyError::Flag(format!("{e:#}")))?;
    for f in files {
        l.grant_flag(GrantFlag::DenyRead, &f, at)?;
    }
    l.net_flags(
        &args.net,
        &args.deny_host,
        args.net_max_bytes,
        args.net_max_connections,
    )?;
    l.limit_flag(LimitKey::Timeout, args.timeout);
    l.limit_flag(LimitKey::Memory, args.memory);
    l.limit_flag(LimitKey::MaxProcs, args.max_procs);
    l.limit_flag(LimitKey::MaxFileSize, args.max_file_size);
    l.allow_env = g
        .allow_env
        .iter()
        .map(|n| Sourced::new(n.clone(), "--allow-env"))
        .collect();
    for (slot, given, value, name) in [
        (
            &mut l.protect_persistence,
            args.no_protect_persistence,
            false,
            "--no-protect-persistence",
        ),
        (&mut l.fail_closed, args.fail_open, false, "--fail-open"),
        (
            &mut l.allow_home_workspace,
            args.allow_home_workspace,
            true,
            "--allow-home-workspace",
        ),
        (
            &mut l.trust_home_config_workspace,
            args.trust_home_config_workspace,
            true,
            "--trust-home-config-workspace",
        ),
        (
            &mut l.private_home,
            args.no_private_home,
            false,
            "--no-private-home",
        ),
    ] {
        Layer::bool_flag(slot, given, value, name);
    }
    l.workspace_layer = args
        .workspace_layer
        .as_deref()
        .and_then(skarn_sandbox::policy::WorkspaceLayerMode::parse)
        .map(|m| Sourced::new(m, "--workspace-layer"));
    l.walk_flag(args.walk_max_dirs)?;
    l.preset_flags(&g.preset)?;
    Ok(l)
}
