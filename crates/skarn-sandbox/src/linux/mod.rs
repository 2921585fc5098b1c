//! The Linux backend: the pure planner ([`plan`]) from a [`crate::Policy`]
//! and the host's facts ([`host`], probed by [`host_probe`]), and the
//! mechanisms that carry out a plan: the helper process ([`helper`],
//! started by [`launch`]), mounts ([`mounts`], [`idmap`]), the copy-on-write
//! workspace layer ([`cow`]), namespaces ([`ns`]), Landlock
//! ([`landlock_rules`]), the seccomp deny-list ([`seccomp`]), privileges
//! ([`privs`]), memory limits ([`memory`]), the egress proxy's process
//! ([`egress`]), the terminal relay ([`tty_relay`]), and the escape probes of
//! `skarn doctor` ([`probe`]); the testing aid [`simulate`].

pub mod cow;
pub mod egress;
pub mod egress_fd;
pub mod fdmount;
pub mod helper;
pub mod host;
pub mod host_probe;
pub mod idmap;
pub mod idmap_workspace;
pub mod landlock_rules;
pub mod lapse;
pub mod launch;
pub mod memory;
pub mod mounts;
pub mod ns;
pub mod plan;
pub mod privs;
pub mod probe;
pub mod required_layers;
pub mod seccomp;
pub mod simulate;
pub mod staging;
pub mod store;
pub mod store_vet;
pub mod sys;
pub mod terminal;
pub mod tty_relay;
