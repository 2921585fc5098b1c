//! Secrets kept out of the sandbox: the private home's dotfiles without
//! credentials ([`dotfiles`]), credential-looking text
//! ([`credential_text`]), and a run's granted secrets: placeholders and the
//! egress proxy's CA ([`egress_secrets`], Linux), placeholder copies of
//! cargo's and git's own credential settings ([`tool_credentials`]), the
//! home's copies every sandboxed command gets ([`home_copies`]), and the files of the
//! grants that already hold a granted value ([`stored_values`], walking
//! them with [`value_scan`], one file judged by `value_file`; the tools' own configuration files found by
//! [`tool_configs`]); secret files named elsewhere: by the caller's
//! environment ([`env_files`]), by git's configuration ([`git_files`]),
//! by an ssh command line ([`ssh_keys`]).

pub mod argv_values;
pub mod cargo_config;
#[cfg(target_os = "linux")]
pub mod command_places;
pub mod credential_text;
pub mod dotfiles;
#[cfg(target_os = "linux")]
pub mod egress_secrets;
#[cfg(target_os = "linux")]
pub mod encoded_copies;
#[cfg(target_os = "linux")]
pub mod env_files;
#[cfg(target_os = "linux")]
pub mod exposed;
#[cfg(target_os = "linux")]
pub mod git_files;
#[cfg(target_os = "linux")]
pub mod home_copies;
#[cfg(target_os = "linux")]
pub mod netrc_copy;
#[cfg(target_os = "linux")]
pub mod no_core;
#[cfg(target_os = "linux")]
pub mod root_files;
#[cfg(target_os = "linux")]
pub mod run_needs;
#[cfg(target_os = "linux")]
pub mod source_helper;
#[cfg(target_os = "linux")]
pub mod source_kind;
#[cfg(target_os = "linux")]
pub mod source_places;
#[cfg(target_os = "linux")]
pub mod source_reads;
#[cfg(target_os = "linux")]
pub mod source_trace;
#[cfg(target_os = "linux")]
pub mod ssh_keys;
#[cfg(target_os = "linux")]
pub mod stdin_relay;
#[cfg(target_os = "linux")]
pub mod stored_values;
pub mod tool_configs;
#[cfg(target_os = "linux")]
pub mod tool_credentials;
#[cfg(target_os = "linux")]
pub mod toolchain_files;
#[cfg(target_os = "linux")]
pub mod upstream_roots;
#[cfg(target_os = "linux")]
pub mod value_cache;
#[cfg(target_os = "linux")]
pub(crate) mod value_file;
#[cfg(target_os = "linux")]
pub mod value_scan;
#[cfg(target_os = "linux")]
pub mod value_scope;
#[cfg(target_os = "linux")]
pub mod value_swap;
