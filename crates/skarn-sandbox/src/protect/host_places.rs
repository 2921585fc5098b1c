//! The places host programs run or trust, found from the host's side (the
//! home's links and start-up files, git's global configuration, cloud
//! tools' configuration, ssh includes, the files the caller's runtime
//! variables name, `PATH`, the skarn program, editor workspace files, the
//! yarn program a `.yarnrc.yml` names): one list, read by `skarn run`
//! ([`crate::HostFacts`]: those inside a grant are kept read-only or
//! hidden) and by `skarn hook`'s file guard (the agent's own file tools
//! may not write them), so the two cannot differ (attack atk24i F9).

use std::path::{Path, PathBuf};

use crate::protect::home_links::Found;
use crate::protect::trusted::Trusted;

/// Every place host programs run or trust for a command in `workspace`
/// started from `cwd`, with `home` and the caller's environment;
/// `host_places`: what the user's configuration makes skarn itself run
/// or read on the host. Not yet narrowed to any grant.
pub fn collect(
    home: Option<&Path>,
    workspace: &Path,
    cwd: &Path,
    host_places: &[(PathBuf, String, bool)],
) -> Found {
    let mut out = Found::default();
    let mut cache = crate::policy::canonical::CanonicalCache::following_dangling_links();
    let found = &mut out.trusted;
    if let Some(h) = home {
        let f = crate::protect::home_links::scan(h);
        found.extend(f.trusted);
        out.unfinished = f.unfinished;
        out.unresolved = f.unresolved;
        out.relative = f.relative;
        for (p, via, secret) in crate::protect::host_programs::global_git_programs(h) {
            if let Some(target) = cache.resolve(&p) {
                found.push(Trusted::new(&p, target, via, secret));
            }
        }
        for (p, via, secret) in crate::protect::host_cloud_configs::cloud_config_places(h) {
            if let Some(target) = cache.resolve(&p) {
                found.push(Trusted::new(&p, target, via, secret));
            }
        }
        for (p, via) in crate::protect::host_ssh_config::ssh_includes(h) {
            if let Some(target) = cache.resolve(&p) {
                found.push(Trusted::new(&p, target, via, true));
            }
        }
    }
    // The homes and caches of the host's build tools (cargo, rustup, go)
    // where the caller's variables and the tools' settings put them: a
    // build there runs what lies in them (issue 22, C).
    let var = |k: &str| std::env::var(k).ok();
    let (homes, empty) = crate::protect::tool_homes::trusted(home, &var, &mut cache);
    found.extend(homes);
    out.empty_when_missing = empty;
    let found = &mut out.trusted;
    let listed: Vec<&str> = crate::protect::host_programs::ENV_PLACES
        .iter()
        .map(|(k, _)| *k)
        .collect();
    let named = crate::protect::env_named::places(std::env::vars_os(), home, &listed);
    for (p, via, secret) in crate::protect::host_programs::env_places(home)
        .into_iter()
        .chain(named)
    {
        if let Some(target) = cache.resolve(&p) {
            found.push(Trusted::new(&p, target, via, secret));
        }
    }
    // What the agent's client was told on its command line to load
    // (`--plugin-dir`, `--settings`, `--mcp-config`, `--add-dir`), and a
    // relative `$CLAUDE_CONFIG_DIR` / `$CODEX_HOME` (ADR 0287).
    let var = |k: &str| std::env::var(k).ok();
    for (p, tree, via) in crate::protect::client_args::from_parents().places(&var) {
        if let Some(target) = cache.resolve(&p) {
            found.push(if tree {
                Trusted::tree(&p, target, via, crate::protect::trusted::Tree::Dir)
            } else {
                Trusted::new(&p, target, via, false)
            });
        }
    }
    // What the user's configuration makes skarn run or read on the host
    // (a secret's command and script, a missing file source).
    for (p, via, secret) in host_places {
        if let Some(target) = cache.resolve(p) {
            found.push(Trusted::new(p, target, via.clone(), *secret));
        }
    }
    let mut listed: Vec<PathBuf> = Vec::new();
    for d in crate::protect::host_programs::path_dirs(cwd, home) {
        if let Some(target) = cache.resolve(&d) {
            let via = format!("PATH entry {}", d.display());
            // `/bin` and `/usr/bin` are one directory: read once.
            if !listed.contains(&target) {
                listed.push(target.clone());
                found.extend(crate::protect::host_programs::path_dir_places(
                    &d, &target, &mut cache,
                ));
            }
            found.push(Trusted::new(&d, target, via, false));
        }
    }
    // The skarn program itself: the agent hook and MCP clients run it
    // unconfined by its path (when it lies in a writable grant, e.g. a
    // source checkout's target/debug/skarn).
    if let Ok(exe) = std::env::current_exe()
        && let Some(target) = cache.resolve(&exe)
    {
        let via = "the skarn program (agent hooks and MCP clients run it)";
        found.push(Trusted::new(&exe, target, via.into(), false));
    }
    // Editor workspace files (`*.code-workspace`: tasks, settings and
    // extensions run on open) are found by pattern, not by name.
    if let Ok(rd) = std::fs::read_dir(workspace) {
        for e in rd.flatten().take(100_000) {
            if e.file_name()
                .to_string_lossy()
                .ends_with(crate::protect::persistence::WORKSPACE_FILE_SUFFIX)
            {
                let via = "an editor workspace file (tasks and settings run on open)";
                found.push(Trusted::new(&e.path(), e.path(), via.into(), false));
            }
        }
    }
    // What the upward-searched configuration of the workspace's parents
    // (and the enclosing repository, `$CARGO_HOME`) names inside it
    // (attack atk22g F16-F18).
    if let Some(ws) = cache.resolve(workspace) {
        found.extend(crate::protect::ancestor_config::places(&ws, home));
    }
    // The program a workspace `.yarnrc.yml` names (`yarnPath`): yarn runs
    // it on the host.
    for p in crate::protect::yarn_path::named(workspace) {
        if let Some(target) = cache.resolve(&p) {
            let via = "the yarn program the workspace's .yarnrc.yml (yarnPath) or .yarnrc \
                       (yarn-path) names (yarn runs it)";
            found.push(Trusted::new(&p, target, via.into(), false));
        }
    }
    // The pnpmfile a workspace `pnpm-workspace.yaml` or `.npmrc` names
    // (`pnpmfile`): pnpm loads it as code at every install (atk22k F18).
    for p in crate::protect::pnpm_file::named(workspace) {
        if let Some(target) = cache.resolve(&p) {
            let via = "the pnpmfile the workspace's pnpm-workspace.yaml or .npmrc names \
                       (pnpm loads it as code at every install)";
            found.push(Trusted::new(&p, target, via.into(), false));
        }
    }
    // The local modules and files those and the workspace's other
    // code-running configurations load (atk22m F9).
    let loaded = crate::protect::config_refs::loaded(workspace);
    for f in loaded.files {
        if let Some(target) = cache.resolve(&f.path) {
            let via = format!(
                "a file {} loads (the host tool that runs it loads this too)",
                f.via.display()
            );
            found.push(Trusted::new(&f.path, target, via, false));
        }
    }
    // A package or module directory those load that is not followed file
    // by file (a bound, an entry not found statically): whole.
    for f in loaded.trees {
        if let Some(target) = cache.resolve(&f.path) {
            let via = format!(
                "a directory {} loads modules from (not followed file by file)",
                f.via.display()
            );
            found.push(Trusted::tree(
                &f.path,
                target,
                via,
                crate::protect::trusted::Tree::Dir,
            ));
        }
    }
    out.config_notes = loaded.notes;
    // The start-up files the caller's variables name, read like the
    // home's: what they source, and their directory trees (atk22o F6).
    let (startup, unresolved, stopped) = crate::protect::env_named_startup::places(home);
    out.trusted.extend(startup);
    out.unresolved.extend(unresolved);
    out.unfinished.extend(stopped);
    // The installations the host's launchers start programs from (PATH
    // links, desktop entries, units, D-Bus services, cron): whole
    // (atk22o F3, F12).
    for i in crate::policy::workspace_kind::launchers::installations() {
        let via = format!("the installation of {}", i.via);
        out.trusted.push(Trusted::tree(
            &i.dir,
            i.dir.clone(),
            via,
            crate::protect::trusted::Tree::Dir,
        ));
    }
    // Each place's other names through other mounts of its filesystem
    // (a `PATH` entry that is a bind-mount alias of the workspace's `bin`:
    // a run writes it under the workspace's name; atk27k F18b).
    #[cfg(target_os = "linux")]
    crate::protect::mount_aliases::add_other_names(&mut out.trusted);
    out
}
