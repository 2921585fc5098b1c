//! Workspace files that make host tools run code later (persistence), as
//! data: each entry says when a missing path is reserved and why it is
//! listed. The planner turns every entry into an
//! [`crate::linux::plan::FsOp::Protect`] step: a path that exists is bound
//! read-only; a missing one is reserved (a placeholder, ADR 0004) per
//! [`Reserve`]. The git directory is handled apart (ADR 0044): its
//! effective layout is read on the host before the run ([`crate::protect::git::git_vet`]).
//!
//! Deliberately not listed: `AGENTS.md` and similar instruction files
//! (text, not code), `.github/workflows` (runs remotely, not on this host),
//! `Makefile`, `package.json` scripts and other sources (run only when the
//! user invokes them, like any source), `.gitattributes` and
//! `.git/info/attributes` (they only select filter and diff drivers, whose
//! commands must be configured in a git config file, which is protected).

pub use crate::protect::persistence_entries::{Entry, GIT_DIR_ENTRIES, Reserve};
use crate::protect::persistence_entries::{LINT_STAGED, MISE, e};

/// The parts of [`ENTRIES`], in order, each kept with the tools it is about.
const PARTS: &[&[Entry]] = &[
    crate::protect::persistence_editors::PART,
    crate::protect::persistence_tools::PART,
    crate::protect::persistence_hooks::PART,
    crate::protect::persistence_lint::PART,
    crate::protect::persistence_hook_rcs::PART,
];

const fn total(parts: &[&[Entry]]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < parts.len() {
        n += parts[i].len();
        i += 1;
    }
    n
}

/// The parts joined at compile time (one table for every reader).
const fn joined<const N: usize>(parts: &[&[Entry]]) -> [Entry; N] {
    let mut out = [e("", Reserve::Never, ""); N];
    let (mut i, mut k) = (0, 0);
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            out[k] = parts[i][j];
            k += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

// A static: the table is past the size a `const` is copied at.
static ALL: [Entry; total(PARTS)] = joined(PARTS);

/// Every workspace persistence path, with its rule and reason.
pub const ENTRIES: &[Entry] = &ALL;

/// Entries read only at the top of a repository or build (git, hook
/// managers' configuration, the VCS directories themselves), as opposed to
/// the other [`Reserve::Always`] entries, which their program reads in
/// whichever directory it starts in, is opened on or a shell enters.
const TOP_ONLY: &[&str] = &[
    "HEAD",
    ".gitmodules",
    ".husky",
    ".lfsconfig",
    ".pre-commit-config.yaml",
    ".hg/hgrc",
    ".sl/config",
    ".jj/repo/config.toml",
];

/// [`Reserve::Never`] entries read in any directory (cargo reads
/// `.cargo/config.toml` of the current directory and every parent; the
/// interactive interpreters read their start-up files in whatever
/// directory they start in, atk22e): protected wherever they lie, never
/// reserved (a placeholder there stops cargo, and would sit in every
/// directory); new ones are set aside after the run.
const ANY_DEPTH_PRESENT: &[&str] = &[
    ".cargo/config.toml",
    ".cargo/config",
    ".Rprofile",
    ".Renviron",
    ".irbrc",
    "irb.rc",
    "_irbrc",
    ".pryrc",
    ".ghci",
    ".octaverc",
    ".iex.exs",
    ".ocamlinit",
    ".perldb",
    "ansible.cfg",
    // The package managers' project files: npm, pnpm and yarn read those of
    // the package they run in (the nearest `package.json`'s directory, a
    // mono-repository's `frontend/`), yarn berry every `.yarnrc.yml` from
    // there up (atk24k F2).
    ".npmrc",
    ".pnpmfile.cjs",
    ".pnpmfile.mjs",
    ".yarnrc",
    ".yarnrc.yml",
    ".yarn/releases",
    ".yarn/plugins",
    // A nested Gradle build opened on its own (an included build).
    "gradle/wrapper/gradle-wrapper.properties",
];

/// [`Reserve::IfAny`] entries read below the top too: mise's files (a
/// shell entering the directory), lint-staged's (the closest configuration
/// to each staged file, run by the top's hook at the next host commit),
/// husky 4's, nano-staged's and simple-git-hooks' (atk22k F9),
/// nix-direnv's caches beside a nested `.envrc`, bazel's wrapper of a
/// nested bazel workspace (atk24k F2).
fn any_depth_if_any(en: &Entry, fam: &[&str]) -> bool {
    fam == MISE
        || fam == LINT_STAGED
        || crate::protect::persistence_hook_rcs::is_family(fam)
        || matches!(en.path, ".direnv" | "tools/bazel")
}

/// Whether `en` is read in any directory, not only at the workspace's top:
/// agents' and editors' folder settings (an agent started, an editor
/// opened, in `packages/api` reads `packages/api/.claude/settings.json`),
/// direnv's `.envrc` and mise's files (a shell entering the directory),
/// rustup's toolchain file (cargo run there), `skarn.toml`. Such a name is
/// protected at any depth: by `skarn hook`'s file guard, and by `skarn run`
/// (existing ones read-only, new ones set aside after the run).
pub fn any_depth(en: &Entry) -> bool {
    match en.reserve {
        Reserve::Always => !TOP_ONLY.contains(&en.path),
        Reserve::IfAny(fam) => any_depth_if_any(en, fam),
        // The linters' and tools' configuration: read from the file's
        // directory up, or in a package the tool starts in (atk22l F1).
        Reserve::Never => {
            ANY_DEPTH_PRESENT.contains(&en.path)
                || crate::protect::persistence_lint::NAMES.contains(&en.path)
        }
        Reserve::IfHome => false,
    }
}

/// Whether an entry named `name` below the top of a writable grant is one
/// of the [`any_depth`] entries.
pub(crate) fn any_depth_name(name: &std::ffi::OsStr) -> bool {
    ENTRIES.iter().any(|en| any_depth(en) && name == en.path)
}

/// The [`AFTER_RUN_TOP`] names of interactive interpreters' start-up
/// files (atk22d F4) and of tools' files read whether or not the project
/// set the tool up (atk22g F4, F5).
const AFTER_RUN_BASE: &[&str] = &[
    ".Rprofile",
    ".Renviron",
    ".irbrc",
    "irb.rc",
    "_irbrc",
    ".pryrc",
    ".ghci",
    ".octaverc",
    ".iex.exs",
    ".ocamlinit",
    ".perldb",
    "ansible.cfg",
    // Read by tools set up outside the project (a global yarn or asdf, a
    // shell's `mise activate`), so a new one counts even where none was
    // (atk22g F5).
    ".yarnrc",
    ".yarnrc.yml",
    "mise.toml",
    ".mise.toml",
    "mise.local.toml",
    ".mise.local.toml",
    ".tool-versions",
    ".github/hooks",
    ".github/agents",
    ".npmrc",
    ".pnpmfile.cjs",
    ".pnpmfile.mjs",
    // lint-staged reads these whether or not one was there: its setup may
    // be a `package.json` key, and a new file wins over it (atk24k F2).
    ".lintstagedrc",
    ".lintstagedrc.json",
    ".lintstagedrc.yaml",
    ".lintstagedrc.yml",
    ".lintstagedrc.js",
    ".lintstagedrc.cjs",
    ".lintstagedrc.mjs",
    "lint-staged.config.js",
    "lint-staged.config.cjs",
    "lint-staged.config.mjs",
];

/// The lists [`AFTER_RUN_TOP`] joins.
const AFTER_RUN_PARTS: &[&[&str]] = &[
    AFTER_RUN_BASE,
    crate::protect::persistence_lint::NAMES,
    crate::protect::persistence_hook_rcs::NAMES,
];

const fn after_run_len() -> usize {
    let (mut n, mut i) = (0, 0);
    while i < AFTER_RUN_PARTS.len() {
        n += AFTER_RUN_PARTS[i].len();
        i += 1;
    }
    n
}

const fn after_run() -> [&'static str; after_run_len()] {
    let mut out = [""; after_run_len()];
    let (mut i, mut k) = (0, 0);
    while i < AFTER_RUN_PARTS.len() {
        let mut j = 0;
        while j < AFTER_RUN_PARTS[i].len() {
            out[k] = AFTER_RUN_PARTS[i][j];
            k += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

const AFTER_RUN_ARR: [&str; after_run_len()] = after_run();

/// Top-level names (or paths) not reserved but set aside when a run
/// creates or changes them: [`AFTER_RUN_BASE`], the editor-run
/// linter, formatter and commit checker configuration of
/// [`crate::protect::persistence_lint`] and the hook managers' files of
/// [`crate::protect::persistence_hook_rcs`].
pub const AFTER_RUN_TOP: &[&str] = &AFTER_RUN_ARR;

/// Files found by this suffix at the workspace's top level are kept
/// read-only like [`ENTRIES`] (VS Code's `*.code-workspace`: tasks,
/// settings and extension recommendations applied on open).
pub const WORKSPACE_FILE_SUFFIX: &str = ".code-workspace";

#[cfg(test)]
#[path = "persistence_tests.rs"]
mod tests;
