//! `skarn doctor`: what this host enforces, and (`--self-test`) real escape
//! attempts through the sandbox against listeners started on the host.
//!
//! The escape attempts themselves are in `doctor_self_test`, the way one
//! attempt runs through the sandbox in `doctor_probe`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::Serialize;
use skarn_sandbox::{HostFacts, NetPolicy, Policy};

use super::doctor_probe::Attempt;
use super::doctor_self_test::self_test;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the findings as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Really attempt escapes through the sandbox and report blocked/ESCAPED
    /// for each; exits 1 if anything escaped.
    #[arg(long)]
    pub self_test: bool,
    /// Gateway configuration whose MCP servers to start and report on
    /// (skipped when the default file does not exist).
    #[arg(long, short = 'c', env = "SKARN_CONFIG", default_value = "skarn.toml")]
    pub config: PathBuf,
}

#[derive(Debug, Serialize)]
struct Findings {
    backend: &'static str,
    arch: String,
    uid: u32,
    landlock_abi: u32,
    seccomp: bool,
    user_namespaces: bool,
    namespaces: Vec<(String, bool)>,
    pids_cgroup: Option<String>,
    /// Where `--memory` gets a per-run memory cgroup (`None`: RLIMIT_AS).
    memory_cgroup: Option<String>,
    status: skarn_sandbox::Status,
    net_policies: Vec<(String, Vec<String>)>,
    degraded: Vec<String>,
    seccomp_denied: Vec<String>,
    /// What `isolation = auto` picks for Code Mode, and the worker self-test.
    code_mode: skarn_worker::DoctorSummary,
    /// Each configured MCP server with its health and tool count (`None`:
    /// no configuration file).
    servers: Option<Vec<skarn_gateway::ServerHealth>>,
    /// What the current project's Claude Code settings do beside skarn's
    /// hook (`disableAllHooks` turns it off; other hooks, env overrides).
    agent_settings: Vec<String>,
    /// Why Codex does not run skarn's hook of `~/.codex/config.toml` (no
    /// approval on record, or disabled; `None`: fine or not installed).
    codex_hook: Option<String>,
    /// Gemini CLI and skarn's hook for this project: where it is, whether
    /// Gemini's hooks system is on, what keeps it from running (attack
    /// atk24i F10; empty: no Gemini settings file holds the hook).
    gemini_hook: Vec<String>,
    /// MCP servers Claude Code or Codex starts for this project that skarn
    /// does not run (ADR 0273).
    unwrapped_servers: Vec<String>,
}

/// skarn's Claude Code hook entries of `path` (holding `text`) without
/// `onFailure: "block"`: a hook that cannot start or is killed at the
/// client's time limit then lets the call run (attack atk24i F5).
fn fails_open(path: &std::path::Path, text: &str) -> Vec<String> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let groups = v
        .pointer("/hooks/PreToolUse")
        .and_then(serde_json::Value::as_array);
    let missing = groups
        .into_iter()
        .flatten()
        .filter_map(|g| g.get("hooks").and_then(serde_json::Value::as_array))
        .flatten()
        .filter(|h| {
            h.get("command")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|c| crate::cmd::hook::is_installed_hook(c, "claude-code"))
        })
        .any(|h| h.get("onFailure").and_then(serde_json::Value::as_str) != Some("block"));
    if !missing {
        return Vec::new();
    }
    vec![format!(
        "{}: skarn's hook has no onFailure: \"block\", so a hook that cannot start or times \
         out lets the command run unconfined: run `skarn init --client claude-code` again",
        skarn_sandbox::protect::terminal_filter::one_line(&path.display().to_string())
    )]
}

/// See [`Findings::codex_hook`].
fn codex_hook() -> Option<String> {
    let home = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .filter(|h| h.is_absolute())?;
    let path = super::init_clients::client_dir("CODEX_HOME")
        .unwrap_or_else(|| home.join(".codex"))
        .join("config.toml");
    let text = skarn_sandbox::policy::config::read_text(&path).ok()??;
    super::codex_trust::not_approved(&path, &text)
        .map(|l| skarn_sandbox::protect::terminal_filter::one_line(&l))
}

/// See [`Findings::gemini_hook`].
fn gemini_hook() -> Vec<String> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    match (std::env::current_dir(), home) {
        (Ok(cwd), Some(home)) => super::gemini_hooks::doctor_lines(&cwd, &home),
        _ => Vec::new(),
    }
}

/// The current project's `.claude/settings(.local).json` entries that can
/// switch the skarn hook off or run beside it (see `init_project`).
fn agent_settings() -> Vec<String> {
    let Ok(cwd) = std::env::current_dir() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for f in [".claude/settings.json", ".claude/settings.local.json"] {
        let p = cwd.join(f);
        match skarn_sandbox::policy::config::read_text(&p) {
            Ok(Some(t)) => {
                out.extend(super::init_project::findings(&p, &t, "claude-code"));
                out.extend(fails_open(&p, &t));
            }
            Ok(None) => {}
            Err(e) => out.push(skarn_sandbox::protect::terminal_filter::one_line(
                &e.to_string(),
            )),
        }
    }
    // A narrow matcher, worktrees without the hook (atk24s F3, H1);
    // skarn's own entry in another shape, env on a wrapped one (atk24u F5).
    out.extend(super::doctor_claude::here(&cwd));
    out.extend(super::hook::entry_shape::doctor(&cwd));
    // What the client loads from its command line is found in the
    // ancestors' `/proc` entries (ADR 0287); where they cannot be read,
    // skarn does not know those places.
    let parent = std::os::unix::process::parent_id();
    if std::fs::read(format!("/proc/{parent}/cmdline")).is_err() {
        out.push(
            "the agent client's command line cannot be read here (/proc): places it loads from \
             --plugin-dir, --settings, --mcp-config or --add-dir, and a relative \
             $CLAUDE_CONFIG_DIR, are not kept from the agent: keep them outside the project"
                .into(),
        );
    }
    out
}

fn findings(servers: Option<Vec<skarn_gateway::ServerHealth>>) -> Findings {
    let host = HostFacts::probe();
    let kinds = skarn_sandbox::linux::ns::probe_kinds(host.needs_userns);
    let userns = kinds.iter().any(|(n, ok)| *n == "user" && *ok);
    let namespaces = kinds
        .into_iter()
        .map(|(n, ok)| (n.to_string(), ok))
        .collect();
    // A typical project directory (planning is pure: it need not exist);
    // the host's temporary directory itself would be reported as broad.
    let ws = std::env::temp_dir().join("skarn-doctor-project");
    let argv = vec!["true".into()];
    let mut net_policies = Vec::new();
    let mut degraded = Vec::new();
    let mut status = skarn_sandbox::Status::NotEnforced;
    for net in [
        NetPolicy::DenyAll,
        NetPolicy::AllowLoopback,
        NetPolicy::AllowOutbound,
        NetPolicy::AllowAll,
        NetPolicy::AllowHosts(skarn_sandbox::HostList {
            allow: vec!["example.com".into()],
            ..Default::default()
        }),
    ] {
        let mut p = Policy::new(&ws);
        p.net = net.clone();
        match skarn_sandbox::plan(&p, &host, &argv) {
            Ok(plan) => {
                let notes: Vec<String> = plan
                    .report
                    .notes
                    .iter()
                    .filter(|n| n.starts_with("net ") || n.contains("net "))
                    .cloned()
                    .collect();
                if net == NetPolicy::DenyAll {
                    status = plan.report.status;
                    degraded = plan
                        .report
                        .notes
                        .iter()
                        .filter(|n| !n.starts_with("net deny: empty"))
                        .cloned()
                        .collect();
                }
                net_policies.push((net.as_str().to_string(), notes));
            }
            Err(e) => net_policies.push((net.as_str().to_string(), vec![e.to_string()])),
        }
    }
    Findings {
        backend: "linux",
        arch: host.arch.clone(),
        uid: host.uid,
        landlock_abi: host.landlock_abi,
        seccomp: host.seccomp,
        user_namespaces: userns,
        namespaces,
        pids_cgroup: host.cgroup_pids.as_ref().map(|p| p.display().to_string()),
        memory_cgroup: host.cgroup_memory.as_ref().map(|p| p.display().to_string()),
        status,
        net_policies,
        degraded,
        seccomp_denied: skarn_sandbox::linux::seccomp::DENY_LIST
            .iter()
            .map(|r| r.name.to_string())
            .collect(),
        code_mode: skarn_worker::doctor_summary(),
        servers,
        agent_settings: agent_settings(),
        codex_hook: codex_hook(),
        gemini_hook: gemini_hook(),
        unwrapped_servers: match (
            std::env::current_dir(),
            std::env::var_os("HOME").map(PathBuf::from),
        ) {
            (Ok(cwd), Some(home)) if home.is_absolute() => {
                super::mcp_wrap::doctor_lines(&cwd, &home)
            }
            _ => Vec::new(),
        },
    }
}

/// Start the configured servers and report each one's health. A missing
/// default file means "no servers configured"; a missing file the user
/// named, or a bad one, is an error.
fn server_health(args: &Args) -> anyhow::Result<Option<Vec<skarn_gateway::ServerHealth>>> {
    let explicit = args.config != Path::new("skarn.toml");
    if !explicit && skarn_sandbox::policy::config_read::is_absent(&args.config) {
        return Ok(None);
    }
    if skarn_sandbox::policy::config_read::is_absent(&args.config) {
        anyhow::bail!("{}: no such configuration file", args.config.display());
    }
    Ok(Some(skarn_gateway::health_report_checked(&args.config)?))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let f = findings(server_health(&args)?);
    if args.json && !args.self_test {
        println!("{}", serde_json::to_string_pretty(&f)?);
        return Ok(ExitCode::SUCCESS);
    }
    if !args.json {
        println!("backend: {} ({})", f.backend, f.arch);
        println!("status of the default policy: {:?}", f.status);
        println!(
            "landlock: {}",
            if f.landlock_abi > 0 {
                format!("ABI {}", f.landlock_abi)
            } else {
                "unavailable".into()
            }
        );
        println!(
            "seccomp-bpf: {}",
            if f.seccomp {
                "available"
            } else {
                "unavailable"
            }
        );
        println!(
            "user namespaces: {}",
            if f.user_namespaces {
                "work"
            } else {
                "unavailable"
            }
        );
        for (n, ok) in &f.namespaces {
            println!("  {n} namespace: {}", if *ok { "works" } else { "FAILS" });
        }
        println!(
            "pids cgroup: {}",
            f.pids_cgroup
                .as_deref()
                .unwrap_or("none (max_procs via RLIMIT_NPROC)")
        );
        println!(
            "memory cgroup: {}",
            f.memory_cgroup
                .as_deref()
                .unwrap_or("none (--memory via RLIMIT_AS + RLIMIT_DATA per process)")
        );
        println!("net policies on this host:");
        for (n, notes) in &f.net_policies {
            println!("  {n}: {}", notes.join("; "));
        }
        // Notes of a fully enforced policy are facts about how a
        // protection is carried out, not gaps: said as notes.
        let label = if f.status == skarn_sandbox::Status::FullyEnforced {
            println!("degraded: nothing");
            "note"
        } else {
            "degraded"
        };
        for d in &f.degraded {
            println!("{label}: {d}");
        }
        println!("seccomp denies: {}", f.seccomp_denied.join(" "));
        print!("{}", f.code_mode.to_text());
        super::doctor_servers::print(&args.config, f.servers.as_deref());
        if !f.agent_settings.is_empty() {
            println!(
                "agent settings of this project (Claude Code runs these beside or instead of \
                 the skarn hook; \"disableAllHooks\" switches the hook off, so commands run \
                 unconfined):"
            );
            for l in &f.agent_settings {
                println!("  warning: {l}");
            }
            // The hook refuses tool calls only (atk24m F5).
            println!(
                "  note: a status line, fileSuggestion or hook on a non-tool event (SessionStart, \
                 UserPromptSubmit, Stop, ...) that is not wrapped runs unconfined when Claude Code \
                 starts or the event fires, before the skarn hook can refuse anything: re-run \
                 `skarn init --client claude-code` after every pull that changes .claude/"
            );
        }
        if let Some(l) = &f.codex_hook {
            println!("codex hook: warning: {l}");
        }
        for l in &f.gemini_hook {
            println!("gemini hook: {l}");
        }
        for l in &f.unwrapped_servers {
            println!(
                "mcp server outside skarn: warning: {l}: it runs unconfined; `skarn init` \
                 wraps it in skarn run (ADR 0273)"
            );
        }
    }
    if !args.self_test {
        return Ok(ExitCode::SUCCESS);
    }
    let mut results = self_test()?;
    // The Code Mode worker's own escape attempts count too.
    results.extend(f.code_mode.selftest.iter().map(|a| Attempt {
        attempt: format!("code mode worker: {}", a.what),
        escaped: !a.blocked,
        detail: a.detail.clone(),
        works_check: false,
    }));
    let escaped = results
        .iter()
        .filter(|r| r.escaped && !r.works_check)
        .count();
    let broken = results
        .iter()
        .filter(|r| r.escaped && r.works_check)
        .count();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({ "findings": f, "self_test": results })
            )?
        );
    } else {
        println!("self-test:");
        for r in &results {
            println!("  {:<8} {:<58} {}", r.verdict(), r.attempt, r.detail);
        }
        let checks = results.iter().filter(|r| r.works_check).count();
        println!(
            "self-test: {} attempts, {} escaped; {} usability checks, {} broken",
            results.len() - checks,
            escaped,
            checks,
            broken
        );
    }
    Ok(if escaped == 0 && broken == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
