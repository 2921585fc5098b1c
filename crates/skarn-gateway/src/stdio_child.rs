//! Starting one stdio downstream server: a minimal environment
//! ([`crate::child_env`]), its sandbox ([`crate::sandbox_spawn`]), its own
//! process group, a parent-death signal, and its stdout read through the
//! oversize guard ([`crate::oversize`]).

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use process_wrap::tokio::ChildWrapper;
use rmcp::RoleClient;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncBufReadExt, DuplexStream};
use tokio::process::ChildStdin;

use crate::config::EnvValue;

/// Longest line accepted from a downstream (rmcp's own default).
pub const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The transport rmcp speaks over.
pub type ChildTransport = AsyncRwTransport<RoleClient, DuplexStream, ChildStdin>;

/// A running child. Dropping it kills the child (kill-on-drop); the caller
/// kills its group and descendants through the registry.
pub struct StdioChild {
    _child: Box<dyn ChildWrapper>,
    /// Its pid, which is also its process group id.
    pub pid: Option<i32>,
    /// The task reading its stderr into the tail (ends at end of file).
    pub stderr_reader: Option<tokio::task::JoinHandle<()>>,
}

/// What to start.
pub struct Spec<'a> {
    pub alias: &'a str,
    /// The configuration file declaring the server (keys its state).
    pub config_file: Option<&'a std::path::Path>,
    pub command: &'a str,
    pub args: &'a [String],
    pub env: &'a BTreeMap<String, EnvValue>,
    pub cwd: Option<&'a PathBuf>,
    pub sandbox: &'a crate::sandbox_config::SandboxConfig,
    /// Where the sandbox's mode and refused hosts are recorded.
    pub state: Arc<crate::sandbox_state::SandboxState>,
    /// Most items of one listing page (`gateway.max_list_items`), counted
    /// before the page is decoded.
    pub max_items: usize,
}

/// Start the child; its last stderr lines go to `tail`.
pub fn spawn(
    spec: &Spec<'_>,
    tail: Arc<Mutex<VecDeque<String>>>,
) -> Result<(ChildTransport, StdioChild), String> {
    let parent: Vec<_> = std::env::vars_os().collect();
    let known = crate::secret_vars::known()?;
    if let Some(k) = &known {
        crate::secret_vars::refuse_sources(k, spec.env)?;
        // A configured secret's value among its `args` (atk27r F6).
        let argv: Vec<&str> = std::iter::once(spec.command)
            .chain(spec.args.iter().map(String::as_str))
            .collect();
        if let Some(why) = skarn_sandbox::secrets::argv_values::refusal(&argv, Some(k), &[]) {
            return Err(format!("server {}: {why}", spec.alias));
        }
    }
    let name = crate::state_dirs::dir_name(spec.config_file, spec.alias, spec.command);
    let state = crate::sandbox_spawn::ensure_state_dir(&name, &parent)
        .map_err(|e| format!("sandbox: {e}"))?;
    let mut env = crate::child_env::build_with_state(parent, spec.env, state.as_deref())
        .map_err(|e| e.to_string())?;
    if let Some(k) = &known {
        crate::secret_vars::drop_inherited(k, &mut env, spec.env, spec.alias);
    }
    let secrets: Vec<(String, String)> = spec
        .env
        .iter()
        .filter_map(|(k, v)| match v {
            EnvValue::Secret(r) => Some((k.clone(), r.secret.clone())),
            _ => None,
        })
        .collect();
    let (prepared, env) = crate::sandbox_spawn::prepare(
        state.as_deref(),
        spec.alias,
        spec.command,
        spec.args,
        spec.cwd,
        spec.sandbox,
        env,
        &secrets,
    )
    .map_err(|e| format!("sandbox: {e}"))?;
    if !secrets.is_empty() && matches!(prepared, crate::sandbox_spawn::Prepared::Unconfined { .. })
    {
        return Err(format!(
            "sandbox: env {} = {{ secret = ... }} needs the sandbox, which is off for this server",
            secrets[0].0
        ));
    }
    #[cfg(target_os = "linux")]
    let mut audit = None;
    let mut cmd = match prepared {
        #[cfg(target_os = "linux")]
        crate::sandbox_spawn::Prepared::Confined {
            cmd,
            mode,
            audit: a,
        } => {
            spec.state.set_mode(mode);
            audit = a;
            tokio::process::Command::from(cmd)
        }
        #[cfg(not(target_os = "linux"))]
        crate::sandbox_spawn::Prepared::Confined { cmd, mode } => {
            spec.state.set_mode(mode);
            tokio::process::Command::from(cmd)
        }
        crate::sandbox_spawn::Prepared::Unconfined { reason } => {
            tracing::warn!(server = %spec.alias, "not sandboxed: {reason}");
            spec.state.set_mode(format!("not sandboxed: {reason}"));
            let mut c = tokio::process::Command::new(spec.command);
            c.args(spec.args).env_clear().envs(env);
            if let Some(cwd) = spec.cwd {
                c.current_dir(cwd);
            }
            c
        }
    };
    cmd.kill_on_drop(true)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SAFETY: the closure runs in the forked child before exec and only
    // calls async-signal-safe prctl.
    #[cfg(target_os = "linux")]
    unsafe {
        cmd.pre_exec(|| {
            // Die with the gateway even if it is killed outright.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            Ok(())
        });
    }
    let mut wrap = process_wrap::tokio::CommandWrap::from(cmd);
    #[cfg(unix)]
    wrap.wrap(process_wrap::tokio::ProcessGroup::leader());
    // Windows: a job object holds the child's whole tree; dropping the
    // child closes it, which ends every process in it.
    #[cfg(windows)]
    wrap.wrap(process_wrap::tokio::JobObject)
        .wrap(process_wrap::tokio::KillOnDrop);
    // Forked from a thread that lasts as long as the gateway: the child's
    // death signal follows the thread that forked it (crate::spawner).
    let mut child = crate::spawner::on_spawner(move || wrap.spawn())
        .map_err(|e| format!("cannot run {:?}: {e}", spec.command))?;
    let pid = child.id().map(|p| p as i32);
    let (Some(stdin), Some(stdout)) = (child.stdin().take(), child.stdout().take()) else {
        return Err("the child's pipes are missing".into());
    };
    // The proxy's records (atk27h F4); its write end closes with `wrap`.
    #[cfg(target_os = "linux")]
    if let Some(pipe) = audit {
        let watch = crate::proxy_audit::Watch {
            alias: spec.alias.to_owned(),
            cfg: spec.sandbox.clone(),
            state: spec.state.clone(),
            tail: tail.clone(),
        };
        crate::proxy_audit::spawn_reader(pipe, watch);
    }
    let mut stderr_reader = None;
    if let Some(stderr) = child.stderr().take() {
        stderr_reader = Some(tokio::spawn(stderr_tail(
            stderr,
            spec.alias.to_owned(),
            tail,
        )));
    }
    let (guarded, to_rmcp) = tokio::io::duplex(1 << 16);
    tokio::spawn(crate::oversize::pump(
        stdout,
        to_rmcp,
        MAX_LINE,
        spec.max_items,
        spec.alias.to_owned(),
    ));
    let transport = AsyncRwTransport::new_client(guarded, stdin).with_max_line_length(MAX_LINE + 1);
    Ok((
        transport,
        StdioChild {
            _child: child,
            pid,
            stderr_reader,
        },
    ))
}

/// Longest stderr line kept (the rest of a longer line is skipped unread
/// into memory).
const MAX_STDERR_LINE: usize = 4096;

/// What a server that failed to start said: the last lines of its own
/// stderr (at most [`STARTUP_LINES`]), then the sandbox's last `skarn:`
/// line (what it denied), joined with ` | `, advice to widen removed.
/// `None`: nothing was said.
pub fn own_error(tail: &VecDeque<String>) -> Option<String> {
    let mut own: Vec<String> = tail
        .iter()
        .filter(|l| !l.starts_with("skarn:"))
        .map(|l| crate::sandbox_hint::fact_only(l))
        .collect();
    own.drain(..own.len().saturating_sub(STARTUP_LINES));
    own.extend(
        tail.iter()
            .rev()
            .find(|l| l.starts_with("skarn:"))
            .map(|l| crate::sandbox_hint::fact_only(l)),
    );
    let shown = own.join(" | ");
    (!shown.is_empty()).then_some(shown)
}

/// Lines of a failed start's stderr shown in its cause.
pub const STARTUP_LINES: usize = 8;

/// Keep the child's last 20 stderr lines (each cut at
/// [`MAX_STDERR_LINE`]) for failure causes; log them at debug level, as
/// the server's own words: the proxy's refusals and secret uses come on
/// their own pipe ([`crate::proxy_audit`]), never from here (a server can
/// print anything).
async fn stderr_tail(
    stderr: tokio::process::ChildStderr,
    alias: String,
    tail: Arc<Mutex<VecDeque<String>>>,
) {
    let mut r = tokio::io::BufReader::new(stderr);
    let mut line: Vec<u8> = Vec::new();
    loop {
        let (n, done, eof) = match r.fill_buf().await {
            Ok([]) | Err(_) => (0, true, true),
            Ok(b) => {
                let nl = b.iter().position(|&c| c == b'\n');
                let take = nl.map_or(b.len(), |i| i + 1);
                let room = MAX_STDERR_LINE.saturating_sub(line.len());
                line.extend_from_slice(&b[..take.min(room)]);
                (take, nl.is_some(), false)
            }
        };
        r.consume(n);
        if done {
            // Escaped as it comes (atk25d F5): the tail ends up in the
            // gateway's own log, in failure causes and in answers to the
            // client, none of which may carry a server's terminal escapes.
            let text = crate::text_safe::visible(String::from_utf8_lossy(&line).trim());
            line.clear();
            if !text.is_empty() {
                tracing::debug!(server = %alias, "stderr: {text}");
                let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                if t.len() >= 20 {
                    t.pop_front();
                }
                t.push_back(crate::sync_util::short(text));
            }
        }
        if eof {
            return;
        }
    }
}
