//! Git's files, read as git reads them: configuration syntax
//! ([`gitconfig`]), finding a repository's git directory and what its
//! configuration makes git run ([`git_vet`]), repositories nested in the
//! workspace ([`nested_git`]), and the after-run sweep of what a run left
//! in git's places ([`git_sweep`]).

#[cfg(target_os = "linux")]
pub(crate) mod commit_parents;
#[cfg(target_os = "linux")]
pub(crate) mod commit_walk;
#[cfg(unix)]
pub mod config_names;
pub mod config_parameters;
#[cfg(target_os = "linux")]
pub mod cut_aside;
#[cfg(target_os = "linux")]
pub(crate) mod fetch_maps;
#[cfg(unix)]
pub mod git_sweep;
#[cfg(unix)]
pub mod git_vet;
pub mod gitconfig;
#[cfg(target_os = "linux")]
pub(crate) mod head_guard;
#[cfg(target_os = "linux")]
pub mod history_refs;
#[cfg(target_os = "linux")]
pub(crate) mod index_after;
#[cfg(unix)]
pub mod index_vet;
#[cfg(target_os = "linux")]
mod loose_write;
#[cfg(target_os = "linux")]
pub mod nested_git;
#[cfg(target_os = "linux")]
mod nested_set_aside;
#[cfg(target_os = "linux")]
pub mod new_commits;
#[cfg(target_os = "linux")]
pub mod new_packs;
#[cfg(unix)]
pub mod object_format;
#[cfg(target_os = "linux")]
mod object_store;
#[cfg(target_os = "linux")]
pub(crate) mod pack_read;
#[cfg(target_os = "linux")]
pub mod packs_in_place;
#[cfg(unix)]
pub(crate) mod path_check;
pub mod program_keys;
#[cfg(target_os = "linux")]
pub mod ref_repair;
#[cfg(target_os = "linux")]
pub(crate) mod reftable_read;
#[cfg(target_os = "linux")]
pub(crate) mod remote_redirect;
#[cfg(target_os = "linux")]
pub mod repo_vet;
#[cfg(target_os = "linux")]
pub mod rerere;
#[cfg(target_os = "linux")]
pub mod safe_keys;
#[cfg(target_os = "linux")]
pub(crate) mod submodule_url;
#[cfg(target_os = "linux")]
pub mod submodules;
#[cfg(target_os = "linux")]
pub(crate) mod tree_refs;
