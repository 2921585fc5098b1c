//! Protection of what the host runs or trusts later, read on the host and
//! used by every backend: the workspace's persistence paths
//! ([`persistence`]), the home's start-up files and what they name
//! ([`home_links`], [`shell_sources`], [`shell_words`], [`host_programs`]),
//! `.envrc` ([`envrc`]), virtual environments ([`venv_guard`]), links out of
//! grants ([`grant_links`], [`grant_walk`]), what is set aside after a run
//! ([`set_aside`], [`run_record`]), the terminal output filter
//! ([`terminal_filter`]), and git's files ([`git`]).

pub mod agent_md;
#[cfg(unix)]
pub mod ancestor_config;
#[cfg(unix)]
pub mod build_output_kind;
#[cfg(unix)]
pub mod cargo_libs;
#[cfg(unix)]
pub mod cargo_target;
pub mod claude_links;
#[cfg(unix)]
pub mod client_args;
pub mod config_links;
pub mod config_named;
#[cfg(unix)]
pub mod config_refs;
#[cfg(unix)]
pub(crate) mod config_refs_node;
#[cfg(unix)]
#[doc(hidden)]
pub mod config_refs_read;
pub mod config_words;
#[cfg(unix)]
pub mod configured_programs;
#[cfg(unix)]
pub mod dir_entries;
#[cfg(unix)]
pub mod dir_listings;
#[cfg(target_os = "linux")]
pub mod direct_outputs;
#[cfg(unix)]
pub mod dist_metadata;
#[cfg(unix)]
pub mod dotenv;
#[cfg(unix)]
pub(crate) mod dotenv_lines;
#[cfg(unix)]
pub(crate) mod dotenv_value;
#[cfg(target_os = "linux")]
pub mod edit_lease;
#[cfg(unix)]
pub mod env_named;
#[cfg(unix)]
pub mod env_named_files;
#[cfg(unix)]
pub mod env_named_startup;
#[cfg(unix)]
pub mod env_places;
pub mod envrc;
mod envrc_exports;
mod envrc_mentions;
pub mod envrc_static;
pub mod git;
pub mod grant_links;
#[cfg(unix)]
pub mod grant_tops;
#[cfg(unix)]
pub mod grant_walk;
#[cfg(target_os = "linux")]
pub(crate) mod home_dot_quarantine;
#[cfg(unix)]
pub mod home_links;
#[cfg(unix)]
pub mod home_mention_places;
#[cfg(unix)]
pub mod home_mentions;
#[cfg(unix)]
pub mod host_cloud_configs;
#[cfg(unix)]
pub mod host_places;
#[cfg(unix)]
pub mod host_programs;
#[cfg(unix)]
pub mod host_ssh_config;
#[cfg(unix)]
pub(crate) mod ignore_match;
pub(crate) mod jsonc;
pub mod linked_targets;
#[cfg(unix)]
pub mod links_out;
pub mod make_include;
#[cfg(unix)]
pub mod mise_env;
#[cfg(target_os = "linux")]
pub mod mount_aliases;
#[cfg(target_os = "linux")]
pub mod mountinfo;
pub mod name_listing;
#[cfg(unix)]
pub mod node_bin_names;
#[cfg(unix)]
pub mod node_tools;
#[cfg(unix)]
pub mod own_files;
#[cfg(unix)]
pub mod owner_only;
#[cfg(unix)]
pub mod package_json;
#[cfg(unix)]
pub mod path_forms;
#[cfg(unix)]
pub mod path_shadow;
#[cfg(unix)]
pub mod path_shadow_walk;
pub mod path_words;
pub mod persistence;
pub(crate) mod persistence_editors;
pub(crate) mod persistence_entries;
pub(crate) mod persistence_families;
pub(crate) mod persistence_hook_rcs;
pub(crate) mod persistence_hooks;
pub(crate) mod persistence_lint;
pub(crate) mod persistence_lint_more;
pub(crate) mod persistence_loaded;
pub(crate) mod persistence_tools;
#[cfg(target_os = "linux")]
pub mod placeholder;
#[cfg(unix)]
pub mod pnpm_file;
#[cfg(unix)]
pub mod pth_imports;
#[cfg(unix)]
pub mod py_ext_twin;
#[cfg(unix)]
pub mod py_startup;
#[cfg(unix)]
pub mod pyc_guard;
#[cfg(unix)]
pub mod rebase_todo;
#[cfg(unix)]
pub mod repo_top;
#[cfg(target_os = "linux")]
pub mod run_record;
#[cfg(unix)]
pub mod searched_dirs;
#[cfg(target_os = "linux")]
pub mod secret_names;
#[cfg(unix)]
pub mod secret_shape;
pub mod set_aside;
#[cfg(unix)]
pub(crate) mod shadow_visible;
mod shell_ansi;
#[cfg(unix)]
pub mod shell_sources;
pub mod shell_words;
#[cfg(unix)]
pub mod small_file;
#[cfg(unix)]
pub(crate) mod stdlib_host;
#[cfg(unix)]
pub(crate) mod stdlib_names;
#[cfg(unix)]
pub mod stdlib_shadow;
pub mod terminal_filter;
#[cfg(unix)]
pub mod tool_homes;
#[cfg(unix)]
pub mod tool_keys;
#[cfg(unix)]
pub mod tool_keys_direct;
#[cfg(unix)]
pub mod toolchain_links;
#[cfg(unix)]
pub mod trusted;
pub mod trusted_args;
pub mod trusted_inputs;
pub mod trusted_lines;
pub mod trusted_scripts;
pub mod trusted_shell;
pub mod trusted_wrappers;
#[cfg(unix)]
pub mod venv_guard;
#[cfg(unix)]
pub mod venv_new;
#[cfg(unix)]
pub mod venv_programs;
#[cfg(unix)]
pub mod yarn_path;
