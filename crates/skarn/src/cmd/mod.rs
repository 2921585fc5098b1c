//! One module per subcommand. Each exposes `Args` (clap) and
//! `run(Args) -> anyhow::Result<ExitCode>`; an `Err` prints one line and
//! exits 2.

pub mod completions;
pub mod compress;
#[cfg(not(windows))]
pub mod doctor;
// Windows: its own doctor, same command-line surface.
#[cfg(windows)]
#[path = "doctor_windows.rs"]
pub mod doctor;
pub mod exec;
pub mod hidden;
pub mod hook;
pub mod init;
pub mod init_clients;
pub mod recall;
pub mod run;
pub mod run_net;
pub mod sandbox_helper;
pub mod serve;
pub mod worker;
