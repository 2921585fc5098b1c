//! One module per subcommand. Each exposes `Args` (clap) and
//! `run(Args) -> anyhow::Result<ExitCode>`; an `Err` prints one line and
//! exits 2.

#[cfg(target_os = "linux")]
pub mod cache;
pub mod codex_trust;
pub mod completions;
pub mod compress;
#[cfg(target_os = "linux")]
pub mod doctor;
/// Windows: what the AppContainer backend enforces here.
#[cfg(windows)]
#[path = "doctor_windows.rs"]
pub mod doctor;
/// Without a sandbox backend for this OS (see `run_backend`).
#[cfg(not(any(target_os = "linux", windows)))]
#[path = "doctor_other.rs"]
pub mod doctor;
pub mod doctor_claude;
#[cfg(target_os = "linux")]
mod doctor_probe;
#[cfg(target_os = "linux")]
mod doctor_self_test;
#[cfg(target_os = "linux")]
mod doctor_self_test_boundary;
pub mod doctor_servers;
pub mod exec;
#[cfg(target_os = "linux")]
pub mod exec_confined;
pub mod gemini_hooks;
pub mod hidden;
pub mod hook;
mod hook_answer;
mod hook_confined;
pub mod init;
pub mod init_clients;
pub mod init_files;
mod init_gemini_trust;
mod init_hooks;
pub mod init_project;
pub mod mcp_cwd;
pub mod mcp_env;
pub mod mcp_keys;
pub mod mcp_wrap;
#[cfg(target_os = "linux")]
pub mod no_core_start;
pub mod recall;
pub mod run;
pub mod run_args;
#[cfg(not(target_os = "linux"))]
pub mod run_backend;
pub mod run_flags;
pub mod run_secrets;
pub mod sandbox_helper;
pub mod say;
#[cfg(target_os = "linux")]
pub mod secrets;
pub mod serve;
pub mod trust;
pub mod worker;
