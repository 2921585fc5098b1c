//! [`WindowsPlan`]: everything one AppContainer run does, computed from a
//! [`Policy`], [`WindowsHostFacts`], the command and the environment by the
//! pure function [`plan`] (same output on every OS; golden-tested on Linux).

use std::ffi::OsString;

use serde::{Deserialize, Serialize};

use super::acl_plan::{AceType, AclBuilder, AclChange, Inheritance, Placeholder, Rights};
use super::capabilities::{self, Capability};
use super::host_facts::WindowsHostFacts;
use super::profile_name::{self, ContainerProfile};
use super::{cmdline, winpath};
use crate::persistence::{ENTRIES, GIT_DIR_ENTRIES, Reserve};
use crate::policy::{HOME_PERSISTENCE_PATHS, HOME_SECRET_PATHS, Policy};
use crate::report::ReportFormat;
use crate::report::{Backend, GrantReport, LimitReport, RestrictionReport, Status};

/// Credential stores under the Windows profile, beyond [`HOME_SECRET_PATHS`]
/// (which are also looked for under the profile).
pub const WINDOWS_HOME_SECRET_PATHS: &[&str] = &[
    "AppData\\Roaming\\gcloud",
    "AppData\\Roaming\\GitHub CLI",
    "AppData\\Roaming\\npm\\etc\\npmrc",
    "AppData\\Roaming\\Microsoft\\Credentials",
    "AppData\\Local\\Microsoft\\Credentials",
    "AppData\\Roaming\\Microsoft\\Protect",
    "AppData\\Roaming\\Microsoft\\Crypto",
    "AppData\\Roaming\\Microsoft\\SystemCertificates",
    "AppData\\Local\\Google\\Chrome\\User Data",
    "AppData\\Local\\Microsoft\\Edge\\User Data",
    "AppData\\Roaming\\Mozilla\\Firefox\\Profiles",
    "AppData\\Roaming\\rclone",
    "AppData\\Roaming\\Code\\User\\globalStorage",
    "AppData\\Local\\skarn",
];

/// Directories under the system drive that every later program trusts;
/// never made writable.
pub const SYSTEM_DIRS: &[&str] = &[
    "Windows",
    "Program Files",
    "Program Files (x86)",
    "ProgramData",
];

/// Job object settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobLimits {
    /// Every process of the job dies when skarn's handle closes (skarn
    /// exits, crashes or is killed).
    pub kill_on_job_close: bool,
    /// A process that crashes ends instead of waiting on an error dialog.
    pub die_on_unhandled_exception: bool,
    /// Whether a process may leave the job (never).
    pub breakaway_allowed: bool,
    /// Committed memory per process (MiB).
    pub process_memory_mb: Option<u64>,
    /// Processes alive at once in the job.
    pub active_processes: Option<u64>,
    /// User-interface restrictions of the job.
    pub ui_restrictions: Vec<String>,
}

/// The process started in the container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessSpec {
    /// Arguments as asked.
    pub argv: Vec<String>,
    /// The command line passed to `CreateProcessW`.
    pub command_line: String,
    /// Working directory.
    pub cwd: String,
    /// Environment (scrubbed; `TEMP`/`TMP` point into the container's folder).
    pub env: Vec<(String, String)>,
    /// Created suspended, assigned to the job, then resumed.
    pub suspended_until_in_job: bool,
    /// Handles the child inherits: only its three stdio pipe ends.
    pub inherited_handles: Vec<String>,
}

/// Everything one AppContainer run does, in order: create or open the
/// profile, apply `acl` and create `placeholders` (recording them first in
/// the journal), create the job, start the process, wait (timeout), kill
/// the job, revert `revert`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowsPlan {
    /// The container profile (one per workspace).
    pub profile: ContainerProfile,
    /// Capability SIDs in the process token.
    pub capabilities: Vec<Capability>,
    /// ACEs added for the container SID during the run.
    pub acl: Vec<AclChange>,
    /// Placeholders reserving missing persistence paths.
    pub placeholders: Vec<Placeholder>,
    /// Paths whose container ACEs are removed after the run.
    pub revert: Vec<String>,
    /// Missing paths that no ACE can keep from being created (git reads
    /// them when present, and an empty placeholder would stop git): removed
    /// after the run if the command created them, as on Linux.
    pub remove_after: Vec<Placeholder>,
    /// Job object limits.
    pub job: JobLimits,
    /// The process.
    pub process: ProcessSpec,
    /// Wall-clock limit; the job is terminated and the run exits 124.
    pub timeout_secs: Option<u64>,
    /// What is and is not enforced.
    pub report: RestrictionReport,
    /// How the report is printed after the run.
    pub report_format: ReportFormat,
}

/// Why a policy cannot be planned on Windows.
#[derive(Debug, thiserror::Error)]
pub enum WindowsPlanError {
    /// No command.
    #[error("no command given")]
    EmptyCommand,
    /// A program name that cannot be passed on a Windows command line.
    #[error("program name {0:?} cannot be passed to CreateProcessW")]
    BadProgram(String),
    /// An argument holding a NUL character.
    #[error("an argument holds a NUL character")]
    NulInArgument,
    /// A batch file given directly.
    #[error(
        "{0}: batch files re-parse their arguments with cmd.exe's rules; run it as `cmd /c {0} ...`"
    )]
    BatchFile(String),
    /// A path is not absolute.
    #[error("path must be absolute: {0}")]
    RelativePath(String),
    /// A grant would rewrite the ACL of a whole drive or share.
    #[error("refusing to grant {0}: it is a drive or share root (every file's ACL would change)")]
    RootGrant(String),
    /// The workspace holds the profile directory.
    #[error(
        "workspace {0} holds the profile directory: a command could then change what the host \
         runs or trusts; run from a project directory, or pass --allow-home-workspace"
    )]
    HomeWorkspace(String),
    /// A writable grant in a system directory.
    #[error("refusing to make {0} writable: it is, holds or lies in a system directory")]
    SystemWrite(String),
    /// The working directory lies outside the workspace.
    #[error("working directory {0} lies outside the workspace")]
    CwdOutside(String),
}

fn s(p: &std::path::Path) -> String {
    winpath::normalize(&p.to_string_lossy())
}

/// Secret paths for a profile directory (Unix-style names converted).
pub fn secret_paths(home: &str) -> Vec<String> {
    HOME_SECRET_PATHS
        .iter()
        .chain(WINDOWS_HOME_SECRET_PATHS)
        .map(|r| winpath::join(home, r))
        .collect()
}

/// Paths whose existence the plan depends on ([`WindowsHostFacts::probe`]
/// stats exactly these).
pub fn candidates(policy: &Policy, home: Option<&str>) -> Vec<String> {
    let ws = s(&policy.workspace);
    let mut v: Vec<String> = ENTRIES
        .iter()
        .chain(GIT_DIR_ENTRIES)
        .map(|e| winpath::join(&ws, e.path))
        .collect();
    for e in ENTRIES {
        if let Reserve::IfAny(fam) = e.reserve {
            v.extend(fam.iter().map(|f| winpath::join(&ws, f)));
        }
    }
    v.push(winpath::join(&ws, ".git"));
    if let Some(h) = home {
        v.extend(secret_paths(h));
        v.extend(HOME_PERSISTENCE_PATHS.iter().map(|r| winpath::join(h, r)));
    }
    v.extend(policy.deny_read.iter().map(|g| s(&g.path)));
    v.sort();
    v.dedup();
    v
}

/// A container grant (path, rights label, source, writable).
pub(super) struct Root {
    pub(super) path: String,
    pub(super) access: &'static str,
    pub(super) source: String,
    pub(super) writable: bool,
}

fn roots(policy: &Policy, notes: &mut Vec<String>) -> Vec<Root> {
    let mut out = vec![Root {
        path: s(&policy.workspace),
        access: "read-write",
        source: policy
            .sources
            .get("workspace")
            .cloned()
            .unwrap_or_else(|| "workspace".into()),
        writable: true,
    }];
    let mut push = |list: &[crate::policy::Grant], access, writable| {
        for g in list {
            out.push(Root {
                path: s(&g.path),
                access,
                source: g.source.clone(),
                writable,
            });
        }
    };
    push(&policy.write, "read-write", true);
    push(&policy.read, "read", false);
    push(&policy.exec, "read+exec", false);
    if !policy.overlay.is_empty() {
        notes.push(
            "private copy-on-write layers are Linux-only: toolchain caches are readable, \
             not writable, on Windows"
                .into(),
        );
    }
    push(&policy.overlay, "read", false);
    out
}

fn check_paths(
    policy: &Policy,
    facts: &WindowsHostFacts,
    rs: &[Root],
) -> Result<(), WindowsPlanError> {
    for r in rs {
        if !winpath::is_absolute(&r.path) {
            return Err(WindowsPlanError::RelativePath(r.path.clone()));
        }
        if winpath::is_root(&r.path) {
            return Err(WindowsPlanError::RootGrant(r.path.clone()));
        }
        if r.writable
            && let Some(d) = &facts.system_drive
        {
            for sys in SYSTEM_DIRS {
                let sd = winpath::join(d, sys);
                if winpath::is_under(&r.path, &sd) || winpath::is_under(&sd, &r.path) {
                    return Err(WindowsPlanError::SystemWrite(r.path.clone()));
                }
            }
        }
    }
    let ws = &rs[0].path;
    if let Some(h) = &facts.home
        && winpath::is_under(h, ws)
        && !policy.allow_home_workspace
    {
        return Err(WindowsPlanError::HomeWorkspace(ws.clone()));
    }
    Ok(())
}

/// Plan one run. Pure: the same inputs give the same plan on every OS.
pub fn plan(
    policy: &Policy,
    facts: &WindowsHostFacts,
    argv: &[OsString],
    env: &[(OsString, OsString)],
    report_format: ReportFormat,
) -> Result<WindowsPlan, WindowsPlanError> {
    let argv: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let command_line = cmdline::command_line(&argv)?;
    let mut notes = Vec::new();
    let mut gaps = Vec::new();
    let mut rs = roots(policy, &mut notes);
    check_paths(policy, facts, &rs)?;
    let ws = rs[0].path.clone();
    let cwd = policy.cwd.as_deref().map(s).unwrap_or_else(|| ws.clone());
    if !winpath::is_under(&cwd, &ws) {
        return Err(WindowsPlanError::CwdOutside(cwd));
    }
    let profile = profile_name::for_workspace(&ws);
    let (caps, net_notes) = capabilities::for_net(&policy.net);
    notes.extend(net_notes);

    let mut b = AclBuilder::default();
    let mut grants = Vec::new();
    let secrets: Vec<(String, String)> = facts
        .home
        .as_deref()
        .map(secret_paths)
        .unwrap_or_default()
        .into_iter()
        .map(|p| (p, "default (secret)".to_string()))
        .chain(
            policy
                .deny_read
                .iter()
                .map(|g| (s(&g.path), g.source.clone())),
        )
        .collect();
    // A grant inside a secret is dropped (the secret wins).
    rs.retain(|r| {
        let inside = secrets.iter().find(|(p, _)| winpath::is_under(&r.path, p));
        if let Some((p, _)) = inside {
            notes.push(format!(
                "grant {} ({}) lies inside secret path {p}: not granted",
                r.path, r.source
            ));
        }
        inside.is_none()
    });
    for r in &rs {
        if r.writable {
            b.writable_root(&r.path, &r.source);
        } else {
            let rights = if r.access == "read" {
                Rights::Read
            } else {
                Rights::ReadExecute
            };
            b.add(
                &r.path,
                AceType::Allow,
                rights,
                Inheritance::ThisAndChildren,
                &r.source,
            );
        }
        grants.push(GrantReport {
            path: r.path.clone(),
            access: r.access.into(),
            source: r.source.clone(),
        });
    }
    let granted = |p: &str| rs.iter().any(|r| winpath::is_under(p, &r.path));
    let writable = |p: &str| {
        rs.iter()
            .any(|r| r.writable && winpath::is_under(p, &r.path))
    };

    // Persistence paths.
    if policy.protect_persistence {
        super::protect::persistence(facts, &ws, &rs, &mut b, &mut grants, &mut notes, &mut gaps);
    } else {
        notes.push("persistence paths are writable (--no-protect-persistence)".into());
    }

    // Secrets: denied where a grant would reach them; elsewhere unreadable
    // because no ACE names the container.
    let mut outside = 0usize;
    for (p, source) in &secrets {
        match facts.kind(p) {
            Some(k) if granted(p) => {
                b.add(p, AceType::Deny, Rights::All, k.whole(), source);
                grants.push(GrantReport {
                    path: p.clone(),
                    access: "deny".into(),
                    source: source.clone(),
                });
            }
            None if writable(p) && source != "default (secret)" => {
                notes.push(format!(
                    "deny-read {p} ({source}) does not exist and lies in a writable grant: \
                     the command may create it"
                ));
            }
            _ => outside += 1,
        }
    }
    if outside > 0 {
        notes.push(format!(
            "{outside} secret path(s) lie outside every grant or do not exist: no ACE is added; \
             they are unreadable as long as their ACLs name neither the container nor ALL \
             APPLICATION PACKAGES (profile folders grant only the user, SYSTEM and \
             Administrators by default)"
        ));
    }
    notes.push(
        "reads outside the grants: whatever grants ALL APPLICATION PACKAGES (by default system \
         directories such as Windows and Program Files; user profile folders do not, unless an \
         ACE added there says otherwise)"
            .into(),
    );
    if policy.private_home {
        notes.push(
            "no private home on Windows: the profile directory is unreadable rather than replaced"
                .into(),
        );
    }

    // Environment.
    let (kept, removed) = crate::env::scrub(env.iter().cloned(), &policy.allow_env);
    let mut env: Vec<(String, String)> = kept
        .into_iter()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .filter(|(k, _)| !k.eq_ignore_ascii_case("TEMP") && !k.eq_ignore_ascii_case("TMP"))
        .collect();
    match &facts.local_app_data {
        Some(l) => {
            let t = container_temp(l, &profile.name);
            env.push(("TEMP".into(), t.clone()));
            env.push(("TMP".into(), t));
            notes.push(
                "TEMP and TMP point into the container's own folder, kept between runs of this \
                 workspace"
                    .into(),
            );
        }
        None => notes.push("LOCALAPPDATA unknown: TEMP and TMP are not set".into()),
    }

    // Limits.
    let l = &policy.limits;
    let src = |k: &str| {
        policy
            .sources
            .get(k)
            .cloned()
            .unwrap_or_else(|| "default".into())
    };
    let val = |v: Option<u64>, unit: &str| v.map_or("none".to_string(), |n| format!("{n} {unit}"));
    let mut limits = vec![
        LimitReport {
            name: "timeout".into(),
            value: val(l.timeout_secs, "s"),
            mechanism: "job terminated, exit 124".into(),
            source: src("timeout"),
        },
        LimitReport {
            name: "memory".into(),
            value: val(l.memory_mb, "MiB"),
            mechanism: "job: committed memory per process".into(),
            source: src("memory"),
        },
        LimitReport {
            name: "max_procs".into(),
            value: val(l.max_procs, ""),
            mechanism: "job: active processes".into(),
            source: src("max_procs"),
        },
    ];
    for x in &mut limits {
        x.value = x.value.trim_end().to_string();
    }
    if let Some(n) = l.max_file_size_mb {
        limits.push(LimitReport {
            name: "max_file_size".into(),
            value: format!("{n} MiB"),
            mechanism: "not enforced".into(),
            source: src("max_file_size"),
        });
        gaps.push("max_file_size is not enforced on Windows (no per-file size limit)".into());
    }
    if l.max_procs.is_some() {
        notes.push("max_procs counts processes, not threads, on Windows".into());
    }

    let mut report = RestrictionReport {
        backend: Backend::AppContainer,
        status: Status::FullyEnforced,
        notes,
        net: policy.net.as_str().into(),
        grants,
        limits,
        removed_env: removed,
        landlock_abi: 0,
        egress: None,
        provenance: Default::default(),
        layers: Vec::new(),
    };
    for g in gaps {
        report.degrade(g);
    }
    let revert = b.touched_paths();
    Ok(WindowsPlan {
        profile,
        capabilities: caps,
        acl: b.changes,
        placeholders: b.placeholders,
        remove_after: b.remove_after,
        revert,
        job: JobLimits {
            kill_on_job_close: true,
            die_on_unhandled_exception: true,
            breakaway_allowed: false,
            process_memory_mb: l.memory_mb,
            active_processes: l.max_procs,
            ui_restrictions: UI_RESTRICTIONS.iter().map(|x| x.to_string()).collect(),
        },
        process: ProcessSpec {
            argv,
            command_line,
            cwd,
            env,
            suspended_until_in_job: true,
            inherited_handles: vec![
                "stdin pipe".into(),
                "stdout pipe".into(),
                "stderr pipe".into(),
            ],
        },
        timeout_secs: l.timeout_secs,
        report,
        report_format,
    })
}

/// User-interface restrictions of the job (names of the
/// `JOB_OBJECT_UILIMIT_*` flags the launcher sets).
pub const UI_RESTRICTIONS: &[&str] = &[
    "desktop",
    "display_settings",
    "exit_windows",
    "global_atoms",
    "handles",
    "read_clipboard",
    "system_parameters",
    "write_clipboard",
];

/// The container's temporary directory under `%LOCALAPPDATA%`.
pub fn container_temp(local_app_data: &str, profile: &str) -> String {
    winpath::join(local_app_data, &format!("Packages\\{profile}\\AC\\Temp"))
}
