//! Persistence paths of interpreters, package managers, toolchains and
//! version control: files those tools run code from when started in the
//! folder (part of [`crate::protect::persistence::ENTRIES`]; data
//! only).

use crate::protect::persistence_entries::Reserve::{Always, Never};
use crate::protect::persistence_entries::{Entry, e};

pub(crate) const PART: &[Entry] = &[
    // Interactive interpreters started in the directory (atk22d F4): kept
    // read-only when present, not reserved (a placeholder in every
    // workspace for each); a new one is set aside after the run
    // ([`AFTER_RUN_TOP`]).
    e(
        ".Rprofile",
        Never,
        "run by R and Rscript started in this directory",
    ),
    e(".irbrc", Never, "run by irb started in this directory"),
    e(".pryrc", Never, "run by pry started in this directory"),
    e(".ghci", Never, "run by ghci started in this directory"),
    e(
        ".octaverc",
        Never,
        "run by Octave started in this directory",
    ),
    e(".iex.exs", Never, "run by iex started in this directory"),
    e(
        ".ocamlinit",
        Never,
        "run by the OCaml toplevel started in this directory",
    ),
    // More of the same kind (atk22e): other names irb reads, Perl's
    // debugger, R's environment file (it can name a profile to run), and
    // Ansible's configuration (plugin paths, vault password scripts).
    e("irb.rc", Never, "run by irb started in this directory"),
    e("_irbrc", Never, "run by irb started in this directory"),
    e(".perldb", Never, "run by perl -d started in this directory"),
    e(
        ".Renviron",
        Never,
        "read by R started in this directory (R_PROFILE_USER names code to run)",
    ),
    e(
        "ansible.cfg",
        Never,
        "read by ansible run in this directory (plugin paths, vault password scripts)",
    ),
    e("_vimrc", Always, "run by Vim on open with 'exrc'"),
    e(".gvimrc", Always, "run by gVim on open with 'exrc'"),
    e("_gvimrc", Always, "run by gVim on open with 'exrc'"),
    e(".yarnrc.yml", Never, "yarn runs its yarnPath and plugins"),
    e(".yarnrc", Never, "yarn 1 runs its yarn-path"),
    e(".yarn/releases", Never, "the yarn program a yarnPath names"),
    e(".yarn/plugins", Never, "yarn plugins yarn loads"),
    e(
        ".npmrc",
        Never,
        "npm, pnpm and yarn 1 run the programs it names (git, script-shell, node-options), \
         --ignore-scripts or not",
    ),
    e(
        ".pnpmfile.cjs",
        Never,
        "pnpm loads it as code on every install, --ignore-scripts or not",
    ),
    e(
        ".pnpmfile.mjs",
        Never,
        "pnpm loads it as code on every install (its ES module default, beside \
         .pnpmfile.cjs), --ignore-scripts or not",
    ),
    e(
        ".github/hooks",
        Never,
        "GitHub Copilot CLI runs the commands of .github/hooks/*.json when started here",
    ),
    e(
        ".github/agents",
        Never,
        "VS Code runs the hooks of the custom agents of .github/agents/*.agent.md",
    ),
    e(
        ".lfsconfig",
        Always,
        "git-lfs custom transfer agents (programs) and endpoints",
    ),
    e(
        "rust-toolchain.toml",
        Always,
        "rustup runs the toolchain it names (`path =`: any directory) for every cargo or \
         rustc run here, prompts included",
    ),
    e(
        "rust-toolchain",
        Always,
        "rustup's older toolchain file, same as rust-toolchain.toml",
    ),
    e(
        ".bazeliskrc",
        Always,
        "bazelisk downloads and runs the bazel it names (kept from being made in any \
         workspace: the run could make the directory a bazel workspace too)",
    ),
    e(
        ".hg/hgrc",
        Always,
        "Mercurial hooks run by any hg command here (reserving it keeps a new .hg from \
         being made)",
    ),
    e(
        ".hg/hgrc-not-shared",
        Never,
        "Mercurial hooks of a share-safe repository (the default since 6.1), read like \
         .hg/hgrc (a missing one is reserved when .hg exists: the walk's upward names)",
    ),
    e(
        ".hg/sharedpath",
        Never,
        "sends hg to another repository's .hg (its hgrc and hooks)",
    ),
    e(
        ".hg/requires",
        Never,
        "with `shared`, makes hg follow .hg/sharedpath",
    ),
    e(
        ".sl/config",
        Always,
        "Sapling's repository settings: hooks run by any sl command here, like \
         Mercurial's (reserving it keeps a new .sl from being made)",
    ),
    e(
        ".sl/hgrc",
        Never,
        "Sapling's older name of .sl/config (same hooks; a missing one is reserved when .sl \
         exists: the walk's upward names)",
    ),
    e(
        ".sl/sharedpath",
        Never,
        "sends sl to another repository's .sl (its configuration and hooks)",
    ),
    e(
        ".sl/requires",
        Never,
        "with `shared`, makes sl follow .sl/sharedpath",
    ),
    e(
        ".cargo/config.toml",
        Never,
        "cargo runs the programs it names (build.rustc-wrapper, rustc, target runners, \
         aliases) for every cargo command here and below, `cargo metadata` on open included",
    ),
    e(
        ".cargo/config",
        Never,
        "cargo's older name of .cargo/config.toml (preferred when both exist)",
    ),
    e(
        ".jj/repo/config.toml",
        Always,
        "Jujutsu repository settings (fsmonitor, signing and diff programs)",
    ),
    e(
        "skarn.toml",
        Always,
        "our own configuration, trusted by later runs",
    ),
];
