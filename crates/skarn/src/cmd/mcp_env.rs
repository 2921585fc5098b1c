//! An MCP entry's `env` when `init` wraps the server in `skarn run`
//! (attack atk24n F6). The client sets `env` on the process it starts,
//! which is then skarn on the host: the dynamic loader reads `LD_PRELOAD`
//! and its kin before skarn's first line, and skarn itself reads its own
//! and the home's variables. Those names are taken off the entry and
//! given to the server inside the sandbox instead (`env NAME=VALUE`
//! before its command); every other name stays on the entry and is
//! passed through with `--allow-env`.

/// Whether the variable `name` changes how the host skarn process loads
/// or what it enforces.
pub fn host_relevant(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "LD_", "GLIBC_", "MALLOC_", "SKARN_", "XDG_", "DYLD_", "RUST_",
    ];
    const NAMES: &[&str] = &[
        "GCONV_PATH",
        "LOCPATH",
        "NLSPATH",
        "HOSTALIASES",
        "RES_OPTIONS",
        "LOCALDOMAIN",
        "TZDIR",
        "HOME",
        "PATH",
        "TMPDIR",
        "SHELL",
        "USER",
        "LOGNAME",
    ];
    let up = name.to_ascii_uppercase();
    PREFIXES.iter().any(|p| up.starts_with(p)) || NAMES.contains(&up.as_str()) || name.is_empty()
}

/// The words that set `moved` (name, value) for the server inside the
/// sandbox, put before its command (nothing when none).
pub fn prefix(moved: &[(String, String)]) -> Vec<String> {
    if moved.is_empty() {
        return Vec::new();
    }
    let mut out = vec!["env".to_string()];
    out.extend(moved.iter().map(|(k, v)| format!("{k}={v}")));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_and_skarn_names_are_host_relevant() {
        for n in [
            "LD_PRELOAD",
            "ld_audit",
            "GLIBC_TUNABLES",
            "SKARN_CONFIG",
            "HOME",
            "PATH",
        ] {
            assert!(host_relevant(n), "{n}");
        }
        for n in ["API_KEY", "NODE_ENV", "GITHUB_TOKEN"] {
            assert!(!host_relevant(n), "{n}");
        }
        assert_eq!(
            prefix(&[("LD_PRELOAD".into(), "./x.so".into())]),
            ["env", "LD_PRELOAD=./x.so"]
        );
    }
}
