//! The names the walk looks for below the grants' roots.

/// Directory names walked only for sockets and other names of protected
/// files (dependency and build trees, large and rebuilt by tools).
pub const SKIPPED: &[&str] = &["node_modules", "target", ".venv", "venv", "__pycache__"];

/// Names that host tools look for in the current directory and its
/// parents, so in any subdirectory (a shell prompt runs them on `cd`),
/// with the file inside that matters for a directory. The workspace root's
/// are [`crate::protect::persistence::ENTRIES`].
pub const UPWARD: &[(&str, &[&str], &str)] = &[
    (
        "rust-toolchain.toml",
        &[],
        "rustup runs the toolchain it names",
    ),
    ("rust-toolchain", &[], "rustup runs the toolchain it names"),
    (".bazeliskrc", &[], "bazelisk runs the bazel it names"),
    (".lfsconfig", &[], "git-lfs transfer agents (programs)"),
    ("mise.toml", &[], "mise hooks, tasks and env scripts"),
    (".mise.toml", &[], "mise hooks, tasks and env scripts"),
    ("mise.local.toml", &[], "mise hooks, tasks and env scripts"),
    (".mise.local.toml", &[], "mise hooks, tasks and env scripts"),
    (".tool-versions", &[], "mise/asdf tools (path: versions)"),
    (
        ".python-version",
        &[],
        "uv runs the interpreter it names (a path too), pyenv and rye the version",
    ),
    (
        ".python-versions",
        &[],
        "uv runs the interpreters it names (a path too)",
    ),
    (
        ".config",
        &["mise", "mise.toml"],
        "mise reads .config/mise.toml and .config/mise/ (hooks, tasks, env scripts)",
    ),
    (
        "mise",
        &["config.toml", "config.local.toml", "conf.d"],
        "mise reads mise/config.toml (hooks, tasks, env scripts)",
    ),
    (
        ".hg",
        &["hgrc", "hgrc-not-shared", "sharedpath"],
        "Mercurial hooks of any hg command there",
    ),
    (
        ".sl",
        &["config", "hgrc", "sharedpath"],
        "Sapling hooks of any sl command there",
    ),
    (
        ".jj",
        &["repo", "repo/config.toml"],
        "Jujutsu settings that run programs",
    ),
    (
        ".cargo",
        &["config.toml", "config"],
        "cargo runs the wrappers, runners and aliases it names (`cargo metadata` on open)",
    ),
    // A nested package's or build's (atk24k F2).
    (
        ".yarn",
        &["releases", "plugins"],
        "yarn runs the yarnPath release and plugins of the package it runs in",
    ),
    (
        "tools",
        &["bazel"],
        "bazel and bazelisk run a bazel workspace's tools/bazel for every command",
    ),
    (
        "gradle",
        &["wrapper"],
        "the Gradle distribution an IDE import of the build downloads and runs",
    ),
];

/// [`UPWARD`] directories that are configuration only as directories (a
/// file named `mise` or `tools` is none).
pub fn upward_dir_only(name: &str) -> bool {
    matches!(name, ".config" | "mise" | ".yarn" | "tools" | "gradle")
}

/// [`UPWARD`] names found at the roots too: the root's own are protected
/// by [`crate::protect::persistence::ENTRIES`] before the run, but files inside
/// them the run creates (`.hg/hgrc-not-shared`, `.cargo/config.toml`) are
/// set aside after it like the subdirectories'.
pub(crate) const UPWARD_AT_ROOT: &[&str] = &[".hg", ".sl", ".cargo", ".config", "mise"];

/// The entry of mise's per-environment files (`mise.<env>.toml`,
/// `.mise.<env>.local.toml`: read when `MISE_ENV` names `<env>`, which the
/// host's shell may set to anything later), matched by pattern.
const MISE_ENV_FILE: (&str, &[&str], &str) = (
    "mise.<env>.toml",
    &[],
    "mise reads mise.<env>.toml when MISE_ENV names it (hooks, tasks, env scripts)",
);

/// Whether `name` is one of mise's per-environment configuration files.
pub fn mise_env_file(name: &str) -> bool {
    let rest = name.strip_prefix('.').unwrap_or(name);
    rest.strip_prefix("mise.")
        .and_then(|r| r.strip_suffix(".toml"))
        .is_some_and(|mid| !mid.is_empty() && !mid.contains('/'))
}

/// The [`UPWARD`] entry for a directory entry named `name` (by pattern
/// for mise's per-environment files), if any.
pub fn upward_entry(
    name: &std::ffi::OsStr,
) -> Option<&'static (&'static str, &'static [&'static str], &'static str)> {
    let n = name.to_str()?;
    UPWARD
        .iter()
        .find(|(u, _, _)| *u == n)
        .or_else(|| mise_env_file(n).then_some(&MISE_ENV_FILE))
}

/// Whether an entry named `name` at a grant's root is an [`UPWARD`] one
/// to look at there too ([`UPWARD_AT_ROOT`], mise's per-environment
/// files).
pub fn upward_at_root(name: &std::ffi::OsStr) -> bool {
    UPWARD_AT_ROOT.iter().any(|n| name == *n) || name.to_str().is_some_and(mise_env_file)
}

/// Whether a missing `inner` file of an [`UPWARD`] directory is reserved
/// (a placeholder) before the run. Not hg's `sharedpath` (a placeholder
/// stops hg there) nor cargo's files (cargo fails on a placeholder
/// config): those are set aside after the run when made.
pub fn reserve_inner(dir: &str, inner: &str) -> bool {
    inner != "sharedpath"
        && !matches!(
            dir,
            ".cargo" | ".config" | "mise" | ".yarn" | "tools" | "gradle"
        )
}
