//! The start-up files the caller's environment names (attack atk22o F6):
//! which variables, and the existing files they name. A leaf (the
//! workspace rule and the planner both read it): what is made of them is
//! [`crate::protect::env_named_startup`]'s.

use std::path::{Path, PathBuf};

/// Variables naming a start-up file a host program reads as code.
pub const STARTUP_VARS: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "INPUTRC",
    "PYTHONSTARTUP",
    "MYVIMRC",
    "VIMINIT",
    "EXINIT",
    "GVIMINIT",
    "PSQLRC",
    "LUA_INIT",
    "IRBRC",
    "PRYRC",
    "R_PROFILE",
    "R_PROFILE_USER",
    "SCREENRC",
    "LESSKEYIN",
    "STARSHIP_CONFIG",
    "NPM_CONFIG_USERCONFIG",
    "npm_config_userconfig",
];

/// The existing start-up files (canonical) the caller's environment
/// names, with the variable naming each.
pub fn files(home: Option<&Path>) -> Vec<(PathBuf, &'static str)> {
    let h = home.unwrap_or(Path::new("/nonexistent"));
    let mut out: Vec<(PathBuf, &'static str)> = Vec::new();
    for var in STARTUP_VARS {
        let Some(v) = std::env::var_os(var) else {
            continue;
        };
        let v = v.to_string_lossy();
        if v.len() > 16 * 1024 {
            continue;
        }
        // `LUA_INIT=@/path`: the file; vim's `source /path`: its words.
        let v = v.strip_prefix('@').unwrap_or(&v);
        for p in crate::protect::host_programs::command_paths(v, h)
            .into_iter()
            .take(16)
        {
            if let Ok(real) = std::fs::canonicalize(&p)
                && real.is_file()
                && !out.iter().any(|(q, _)| *q == real)
            {
                out.push((real, var));
            }
        }
    }
    out
}
