//! The `skarn` binary's integration tests: one test binary with a module
//! per area, each module named after the area it checks (`run_escapes`,
//! `serve_stdio`, ...). Run one area with a filter:
//! `cargo test -p skarn --test it run_escapes::`.
//!
//! Two tests stay in binaries of their own, because they look at every
//! child or descriptor of the test process, which the tests here would
//! change while they run: `worker_soak.rs` (no leaked descriptor or zombie
//! after 200 runs) and `worker_killed.rs` (kills every child of the
//! process).
//!
//! Nothing here changes process-wide state (environment, signal
//! dispositions, limits of the test process): what a test sets, it sets on
//! the child `Command` it starts.

// Tests may unwrap: a panic is how a test fails.
#![allow(clippy::unwrap_used)]

mod common;
// Set-up shared by the agent tests of issue 24.
#[cfg(target_os = "linux")]
mod support_agent;
#[cfg(target_os = "linux")]
mod support_attempt;
#[cfg(target_os = "linux")]
mod support_hook;
#[cfg(target_os = "linux")]
mod support_planted;
#[cfg(target_os = "linux")]
mod support_secret_server;
#[cfg(target_os = "linux")]
mod support_secret_sources;
#[cfg(target_os = "linux")]
mod support_traced;
// Issue 24: hooks, init, serve and run against the agent widening its own
// sandbox.
#[cfg(target_os = "linux")]
mod agent_atk24;
// Issue 24, the findings of the attack pass left open by the first fixes.
#[cfg(target_os = "linux")]
mod agent_atk24b;
#[cfg(target_os = "linux")]
mod agent_atk24c;
// Issue 24, attack pass atk24i: the file guard asks `skarn run`'s sources.
#[cfg(target_os = "linux")]
mod agent_atk24i;
// Issue 24, attack pass atk24g/h.
#[cfg(target_os = "linux")]
mod agent_atk24g;
// Issue 24, attack pass atk24i.
#[cfg(target_os = "linux")]
mod agent_atk24i_b;
// Issue 24 after atk24i (h24e): every client's output model-facing, the
// gateway's own tools, a writable server named.
#[cfg(target_os = "linux")]
mod agent_atk24i_c;
// Issue 24, attack pass atk24j: what a path is (h24f).
#[cfg(target_os = "linux")]
mod agent_atk24j_f;
// Issue 24, attack pass atk24j: more of skarn run's sources in the guard.
#[cfg(target_os = "linux")]
mod agent_atk24j;
// Issue 24, attack pass atk24l: other write grants get the workspace's
// protections (h24j).
#[cfg(target_os = "linux")]
mod run_atk24l;
// Issue 24, attack pass atk24k: nested packages, accepted configs (h24h).
#[cfg(target_os = "linux")]
mod agent_atk24k;
// Issue 24, attack pass atk24m: what a wrapped hook answers (h24l).
#[cfg(target_os = "linux")]
mod agent_atk24m;
#[cfg(target_os = "linux")]
mod agent_boundary;
#[cfg(target_os = "linux")]
mod agent_h24i;
// Issue 24, attack pass atk24n: what counts as this skarn, hook types (h24o).
#[cfg(target_os = "linux")]
mod agent_atk24n;
// Issue 24, what the attack passes of 6 December left open (h24k).
#[cfg(target_os = "linux")]
mod agent_h24k;
// Issue 24, attack atk24o F8-F12: subagent MCP servers, skill shell lines (h24q).
#[cfg(target_os = "linux")]
mod agent_h24q;
// Issue 24, what attack atk24m left open: client command lines, YAML (h24n).
#[cfg(target_os = "linux")]
mod agent_h24n;
// Issue 24, what attacks atk24m and atk24n left open: wrapped hooks fail
// closed, worktrees, Codex's other hook sources (h24p).
#[cfg(target_os = "linux")]
mod agent_h24p;
#[cfg(target_os = "linux")]
mod agent_h24p_b;
// Issue 24, what attack atk24o left open: searches from above a deep
// nested skill, Claude Code's worktrees, the reading tools' latency (b24s).
#[cfg(target_os = "linux")]
mod run_b24s;
// Attack atk24j F7: a run started after the guard allowed a write (h24g).
#[cfg(target_os = "linux")]
mod agent_edit_lease;
// Issue 24: the file-tool guard and `skarn run` decide from one list.
#[cfg(target_os = "linux")]
mod agent_files;
#[cfg(target_os = "linux")]
mod agent_gateway;
// Attack atk24i F10: Gemini CLI's hooks system.
#[cfg(target_os = "linux")]
mod agent_gemini_hooks;
#[cfg(target_os = "linux")]
mod agent_trust_code;
// Issue 24, third attack pass.
#[cfg(target_os = "linux")]
mod agent_round3;
// Used by the Linux egress modules only.
#[cfg(target_os = "linux")]
mod static_http;
// Used by the h22p modules only.
#[cfg(target_os = "linux")]
mod support_h22p;

// `skarn compress` / `skarn recall` (file modes and sh-driven commands).
#[cfg(unix)]
mod compress_cli;
// The Linux sandbox or worker: `skarn run`, Code Mode workers, hooks.
#[cfg(target_os = "linux")]
mod compress_run;
#[cfg(target_os = "linux")]
mod doctor_cli;
mod doctor_servers;
mod exec_cli;
#[cfg(target_os = "linux")]
mod exec_self_confined;
mod exec_wiring;
#[cfg(target_os = "linux")]
mod hook_cli;
mod hook_unknown_tools;
mod init_gemini_trust;
#[cfg(target_os = "macos")]
mod macos_run;
#[cfg(target_os = "linux")]
mod run_after_check;
#[cfg(target_os = "linux")]
mod run_atk22c;
#[cfg(target_os = "linux")]
mod run_atk22h;
#[cfg(target_os = "linux")]
mod run_atk22h_b;
#[cfg(target_os = "linux")]
mod run_atk22h_git;
#[cfg(target_os = "linux")]
mod run_atk22h_paths;
#[cfg(target_os = "linux")]
mod run_atk22i_git;
#[cfg(target_os = "linux")]
mod run_atk22i_paths;
#[cfg(target_os = "linux")]
mod run_atk22j;
#[cfg(target_os = "linux")]
mod run_atk22j_b;
#[cfg(target_os = "linux")]
mod run_atk22k_lead;
// Issue 22, fourth attack pass (b22b): .env lines, hook managers' files, pnpmfiles.
#[cfg(target_os = "linux")]
mod run_b22a;
#[cfg(target_os = "linux")]
mod run_b22b;
#[cfg(target_os = "linux")]
mod run_b22d;
#[cfg(target_os = "linux")]
mod run_b22e;
#[cfg(target_os = "linux")]
mod run_b22f;
#[cfg(target_os = "linux")]
mod run_b24u;
// Attack atk24s F4, F6, F1, F3, H1: Claude Code's parent .claude, link bound, path forms, matcher (b24v).
#[cfg(target_os = "linux")]
mod run_b24v;
// Attack atk24t F1, F8, F5, F2, F6: IDE code, client tools, durable crons, worktree agents, VS Code hook files (fx24a).
#[cfg(target_os = "linux")]
mod run_fx24a;
// Attack atk22n F1, F7: host sockets under read grants by any name, planted build outputs (f22j).
#[cfg(target_os = "linux")]
mod run_f22j;
// Attack atk24t F3: implicit inputs of trusted lines (make, npm, pytest) (f24x).
#[cfg(target_os = "linux")]
mod run_f24x;
// Attack atk24u F1, F2: trusted lines read as the shell and interpreter read them (fy24b).
#[cfg(target_os = "linux")]
mod run_fy24b;
// Attack atk24r F5, F7, F8, F6 and atk24s F5: worktree peer hooks, named scripts, VS Code agents, Gemini .env (b24w).
#[cfg(target_os = "linux")]
mod run_b24w;
// Attack atk24u F7, F3, F5, F4, F6: hook entries judged whole, HOME into the workspace, host MCP servers, node srv (fy24a).
#[cfg(target_os = "linux")]
mod run_fy24a;
// Issue 24 open gaps: skarn's entry altered by project settings (prompt guard), plugin and SDK MCP servers (g24).
#[cfg(target_os = "linux")]
mod run_g24;
// Issue 27, b27q: toolchain credential files, sources without user namespaces, in-text variables.
#[cfg(target_os = "linux")]
mod run_b27q;
// Issue 27, b27s: system and installation credential files, URL-path credentials.
#[cfg(target_os = "linux")]
mod run_b27s;
// Issue 27, b27r: what a command source really reads (traced), no source where namespaces are refused.
#[cfg(target_os = "linux")]
mod run_b27r;
// Issue 27, fx27a: b27r's record of a traced source's reads fails closed (atk27q F1-F3, F5, F8).
#[cfg(target_os = "linux")]
mod run_config_trust;
#[cfg(target_os = "linux")]
mod run_fx27a;
// Issue 27, fx27c: Bundler/RubyGems files, /usr/src projects, store-named dirs, a granted value around a workspace under /opt.
#[cfg(target_os = "linux")]
mod run_fx27c;
// Issue 27, fy27a: a traced source's files by what they are, one trace cap, argv values, home stores under /opt, walks cut short, escaped URLs (atk27r F3-F7, F9).
#[cfg(target_os = "linux")]
mod run_fy27a;
#[cfg(target_os = "linux")]
mod run_fy27a_b;
#[cfg(target_os = "linux")]
mod run_git_paths_atk22j;
#[cfg(target_os = "linux")]
mod run_h22l;
#[cfg(target_os = "linux")]
mod run_h22o;
#[cfg(target_os = "linux")]
mod run_h22p;
#[cfg(target_os = "linux")]
mod run_linked_home;
#[cfg(target_os = "linux")]
mod run_toolchain_env;
#[cfg(target_os = "linux")]
mod support_git;
// Issue 24, atk24d F3/F4: what an `.envrc` exports and names statically.
#[cfg(target_os = "linux")]
mod run_degradation;
#[cfg(target_os = "linux")]
mod run_egress;
#[cfg(target_os = "linux")]
mod run_egress_denials;
#[cfg(target_os = "linux")]
mod run_egress_limits;
#[cfg(target_os = "linux")]
mod run_egress_registries;
#[cfg(target_os = "linux")]
mod run_egress_secrets;
#[cfg(target_os = "linux")]
mod run_env_named_22g;
#[cfg(target_os = "linux")]
mod run_env_round4;
mod run_env_round4b;
#[cfg(target_os = "linux")]
mod run_envrc_exports;
#[cfg(target_os = "linux")]
mod run_escapes;
#[cfg(target_os = "linux")]
mod run_failure_line;
#[cfg(target_os = "linux")]
mod run_git_config;
#[cfg(target_os = "linux")]
mod run_git_index;
#[cfg(target_os = "linux")]
mod run_git_links;
#[cfg(target_os = "linux")]
mod run_git_protections;
#[cfg(target_os = "linux")]
mod run_go_preset;
#[cfg(target_os = "linux")]
mod run_grant_tops_24k;
#[cfg(target_os = "linux")]
mod run_hardening;
#[cfg(target_os = "linux")]
mod run_home_links_22g;
#[cfg(target_os = "linux")]
mod run_home_mentions;
#[cfg(target_os = "linux")]
mod run_home_mentions_22c;
#[cfg(target_os = "linux")]
mod run_home_scan_size;
#[cfg(target_os = "linux")]
mod run_host_runs;
#[cfg(target_os = "linux")]
mod run_upward_config_22g;
// Issue 22, attack pass h22b: PATH links, programs git runs by
// configuration, agents' home configuration.
#[cfg(target_os = "linux")]
mod run_git_packs_22g;
#[cfg(target_os = "linux")]
mod run_host_loads_22f;
#[cfg(target_os = "linux")]
mod run_host_runs_22b;
#[cfg(target_os = "linux")]
mod run_index_differential;
#[cfg(target_os = "linux")]
mod run_lifecycle;
#[cfg(target_os = "linux")]
mod run_limits;
#[cfg(target_os = "linux")]
mod run_links_out;
#[cfg(target_os = "linux")]
mod run_links_round3b;
#[cfg(target_os = "linux")]
mod run_links_round3c;
#[cfg(target_os = "linux")]
mod run_links_round4;
#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
mod run_no_backend;
#[cfg(target_os = "linux")]
mod run_offline;
#[cfg(target_os = "linux")]
mod run_outside_grants;
#[cfg(target_os = "linux")]
mod run_overlap;
#[cfg(target_os = "linux")]
mod run_round3_22d;
#[cfg(target_os = "linux")]
mod run_secret_links_atk22i;
#[cfg(target_os = "linux")]
mod run_tool_homes_22;
#[cfg(target_os = "linux")]
mod run_toolchains_22;
#[cfg(target_os = "linux")]
mod run_venv_22;
// Attack atk24d F5: doctor, serve and init while a run lives.
#[cfg(target_os = "linux")]
mod run_b22c;
#[cfg(target_os = "linux")]
mod run_b22g;
// Issue 22, b22i: workspaces that are not projects (VCS metadata, cargo build directories, PATH trees), sockets in read grants.
#[cfg(target_os = "linux")]
mod run_b22h;
#[cfg(target_os = "linux")]
mod run_b22i;
#[cfg(target_os = "linux")]
mod run_b27p;
#[cfg(target_os = "linux")]
mod run_f22k;
#[cfg(target_os = "linux")]
mod run_fx22a;
#[cfg(target_os = "linux")]
mod run_fx27b;
#[cfg(target_os = "linux")]
mod run_fy22a;
// Issue 27, f27t: coded request bodies decoded for the probe lock-out.
#[cfg(target_os = "linux")]
mod run_f27t;
// Issue 27, fy27b: the probe search as wide as the echo scrub; PHP
// spellings of `_method`; WebSocket handshakes in absolute form.
#[cfg(target_os = "linux")]
mod run_fy22b;
#[cfg(target_os = "linux")]
mod run_fy22c;
#[cfg(target_os = "linux")]
mod run_fy27b;
#[cfg(target_os = "linux")]
mod run_overlap_readers;
#[cfg(target_os = "linux")]
mod run_protections;
#[cfg(target_os = "linux")]
mod run_pyc_guard;
#[cfg(target_os = "linux")]
mod run_registries_detect;
#[cfg(target_os = "linux")] // the Linux backend's report
mod run_report;
// Issue 27, s27b: `_method` in request bodies; zstd request bodies.
#[cfg(target_os = "linux")]
mod run_s27b;
// Issue 27, f27s: RFC 2231 part names, wide bodies, the held-body budget.
#[cfg(target_os = "linux")]
mod run_f27s;
// Issue 27, f27u: Rack/qs/PHP spellings of `_method`, raw coded bodies, idle leases.
#[cfg(target_os = "linux")]
mod run_f27u;
// Issue 27, f27v: wide-charset forms under a method bound; `+` for a space.
#[cfg(target_os = "linux")]
mod run_f27v;
#[cfg(target_os = "linux")]
mod run_secret_aliases;
#[cfg(target_os = "linux")]
mod run_secret_atk27j;
#[cfg(target_os = "linux")]
mod run_secret_atk27k;
#[cfg(target_os = "linux")]
mod run_secret_atk27k_h;
#[cfg(target_os = "linux")]
mod run_secret_atk27l;
#[cfg(target_os = "linux")]
mod run_secret_atk27m;
#[cfg(target_os = "linux")]
mod run_secret_encoded;
#[cfg(target_os = "linux")]
mod run_secret_forms;
#[cfg(target_os = "linux")]
mod run_secret_h27l;
#[cfg(target_os = "linux")]
mod run_secret_h27n;
#[cfg(target_os = "linux")]
mod run_secret_h27p;
#[cfg(target_os = "linux")]
mod run_secret_h27q;
#[cfg(target_os = "linux")]
mod run_secret_js_forms;
#[cfg(target_os = "linux")]
mod run_secret_named;
#[cfg(target_os = "linux")]
mod run_secret_netrc;
#[cfg(target_os = "linux")]
mod run_secret_npm_env;
#[cfg(target_os = "linux")]
mod run_secret_other_names;
#[cfg(target_os = "linux")]
mod run_secret_plan;
#[cfg(target_os = "linux")]
mod run_secret_roots;
#[cfg(target_os = "linux")]
mod run_secret_sources;
mod run_secret_stored;
#[cfg(target_os = "linux")]
mod run_secret_stored_anywhere;
#[cfg(target_os = "linux")]
mod run_secret_stream;
#[cfg(target_os = "linux")]
mod run_secret_tools;
#[cfg(target_os = "linux")]
mod run_socket_race;
#[cfg(target_os = "linux")]
mod run_stdin_secret;
#[cfg(target_os = "linux")]
mod run_store;
#[cfg(target_os = "linux")]
mod run_store_pip;
#[cfg(target_os = "linux")]
mod run_usability;
mod run_venv_guard;
#[cfg(target_os = "linux")]
mod run_walk_bound;
#[cfg(target_os = "linux")]
mod run_workspace_kind;
#[cfg(target_os = "linux")]
mod support_strace;
// ADR 0130: the workspace as a copy-on-write layer.
#[cfg(target_os = "linux")]
mod run_default_layer;
#[cfg(target_os = "linux")]
mod run_layer_flat;
#[cfg(target_os = "linux")]
mod run_layer_overlap;
#[cfg(target_os = "linux")]
mod run_p30;
#[cfg(target_os = "linux")]
mod run_p30e;
#[cfg(target_os = "linux")]
mod run_p30f;
#[cfg(target_os = "linux")]
mod run_p30h;
#[cfg(target_os = "linux")]
mod run_p30i;
#[cfg(target_os = "linux")]
mod run_p30j;
#[cfg(target_os = "linux")]
mod run_p30k;
#[cfg(target_os = "linux")]
mod run_r1;
#[cfg(target_os = "linux")]
mod run_scan_cache;
#[cfg(target_os = "linux")]
mod run_state_flat;
#[cfg(target_os = "linux")]
mod run_workspace_kind_22g;
#[cfg(target_os = "linux")]
mod run_workspace_layer;
#[cfg(target_os = "linux")]
mod run_workspace_owner;
mod serve_conformance;
mod serve_execute;
// Sets RLIMIT_NOFILE on a child.
#[cfg(target_os = "linux")]
mod serve_hostile_budget;
#[cfg(target_os = "linux")]
mod serve_hostile_down;
// invtmp: stdio servers outlive the thread that forked them.
#[cfg(target_os = "linux")]
mod run_invtmp;
#[cfg(target_os = "linux")]
mod serve_hostile_http;
#[cfg(target_os = "linux")]
mod serve_hostile_peers;
#[cfg(unix)]
mod serve_http;
#[cfg(unix)]
mod serve_http_lockout;
mod serve_python;
mod serve_relay;
#[cfg(target_os = "linux")]
mod serve_sandbox;
#[cfg(target_os = "linux")]
mod serve_secret_audit;
#[cfg(target_os = "linux")]
mod serve_secret_dotfiles;
#[cfg(target_os = "linux")]
mod serve_secret_wire;
#[cfg(target_os = "linux")]
mod serve_stdio;
#[cfg(target_os = "linux")]
mod trust_secret_listing;
#[cfg(target_os = "linux")]
mod units_init_cli;
#[cfg(windows)]
mod windows_run;
#[cfg(target_os = "linux")]
mod worker_bench;
#[cfg(target_os = "linux")]
mod worker_confinement;
#[cfg(target_os = "linux")]
mod worker_limits;
#[cfg(target_os = "linux")]
mod worker_parent_death;
#[cfg(target_os = "linux")]
mod worker_parity;
#[cfg(target_os = "linux")]
mod worker_userns;
// Issue 22, g22: eighth-round open gaps (LD_PRELOAD, udev rules, build
// outputs outside git and in the direct mode, node_modules links).
#[cfg(target_os = "linux")]
mod run_g22;
#[cfg(target_os = "linux")]
mod run_g22_node;
#[cfg(target_os = "linux")]
mod run_g22_sockets;
