//! What a run or a sandboxed server granted a secret can read, as the
//! check for the value stored in a file sees it (ADR 0217): which grants
//! are walked whole, which are toolchains looked at in their credential
//! places only, which files are looked at wherever they lie.

use std::path::{Path, PathBuf};

use super::stored_values::Scope;
use crate::policy::{Grant, Policy, SYSTEM_EXEC_DIRS, default_secret_paths};

/// Whether a grant is one skarn makes for an installed toolchain (its
/// defaults, a preset, a server's own installation): tens of thousands
/// of installed files, looked at in their credential places only.
fn is_toolchain(g: &Grant) -> bool {
    let s = g.source.as_str();
    s.starts_with("default") || s.starts_with("preset ") || s.contains(": its ")
}

/// A system directory or one holding them (`/`): granted to every run,
/// too large to walk; their tools' configuration files are looked at
/// instead ([`super::tool_configs`]).
fn is_system(p: &Path) -> bool {
    SYSTEM_EXEC_DIRS.iter().any(|d| Path::new(d).starts_with(p))
}

/// The scope of `policy`: a file holding a value inside `refuse_under`
/// refuses the run; `value_places` are where the secrets are read from
/// ([`skarn_egress::secrets::config::SecretsConfig::value_places`]): the
/// files beside them are looked at too.
pub fn scope(
    policy: &Policy,
    refuse_under: Vec<PathBuf>,
    value_places: &[PathBuf],
    home: Option<&Path>,
) -> Scope {
    let mut s = Scope {
        refuse_under,
        ..Scope::default()
    };
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    for w in std::iter::once(&policy.workspace).chain(policy.write.iter().map(|g| &g.path)) {
        s.walked.push(canon(w));
    }
    for g in policy
        .read
        .iter()
        .chain(&policy.exec)
        .chain(&policy.overlay)
    {
        let p = canon(&g.path);
        if is_system(&p) {
            continue;
        }
        if is_toolchain(g) {
            s.toolchains.push(p);
        } else {
            s.walked.push(p);
        }
    }
    s.toolchains
        .extend(policy.cache_dirs.iter().map(|p| canon(p)));
    for list in [&mut s.walked, &mut s.toolchains] {
        list.sort();
        list.dedup();
    }
    let env = |k: &str| std::env::var_os(k);
    s.files = super::tool_configs::config_files(&env, home, &policy.workspace);
    for f in value_places {
        s.files.push(f.clone());
        if let Some(dir) = f.parent()
            && let Ok(rd) = std::fs::read_dir(dir)
        {
            s.files.extend(rd.flatten().take(1024).map(|e| e.path()));
        }
    }
    s.hidden = policy.deny_read.iter().map(|g| g.path.clone()).collect();
    s.hidden.extend(default_secret_paths(home));
    s
}
