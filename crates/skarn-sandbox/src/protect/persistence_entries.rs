//! The table of persistence paths of [`crate::protect::persistence`]:
//! each workspace path host tools run code from, when a missing one is
//! reserved, and why it is listed (data only).

/// When a missing persistence path is reserved (kept from being created).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserve {
    /// Always: the tool reads the path whenever the folder is opened.
    Always,
    /// Only when the workspace is the home directory (shell start-up files).
    IfHome,
    /// Only when one of these workspace paths exists (the tool is set up
    /// in this project; without it, a new file is never read on its own).
    IfAny(&'static [&'static str]),
    /// Never: any inode there changes how tools behave; write-protected
    /// only when present.
    Never,
}

/// One persistence path, relative to the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Path relative to the workspace root.
    pub path: &'static str,
    /// Reservation rule when it is missing.
    pub reserve: Reserve,
    /// Why a host tool runs code from it.
    pub reason: &'static str,
}

const fn e(path: &'static str, reserve: Reserve, reason: &'static str) -> Entry {
    Entry {
        path,
        reserve,
        reason,
    }
}

use Reserve::{Always, IfAny, IfHome, Never};

pub(crate) const LEFTHOOK: &[&str] = &[
    "lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yml",
    ".lefthook.yaml",
    "lefthook-local.yml",
    "lefthook-local.yaml",
    ".lefthook-local.yml",
    ".lefthook-local.yaml",
    ".lefthook",
    ".lefthook-local",
    // lefthook 1.x reads every format, and the `.config/` forms (attack
    // atk22h F19).
    "lefthook.toml",
    "lefthook.json",
    "lefthook.jsonc",
    ".lefthook.toml",
    ".lefthook.json",
    ".lefthook.jsonc",
    "lefthook-local.toml",
    "lefthook-local.json",
    "lefthook-local.jsonc",
    ".lefthook-local.toml",
    ".lefthook-local.json",
    ".lefthook-local.jsonc",
    ".config/lefthook.yml",
    ".config/lefthook.yaml",
    ".config/lefthook.toml",
    ".config/lefthook.json",
    ".config/lefthook.jsonc",
    ".config/lefthook-local.yml",
    ".config/lefthook-local.yaml",
    ".config/lefthook-local.toml",
    ".config/lefthook-local.json",
    ".config/lefthook-local.jsonc",
];
pub(crate) const LINT_STAGED: &[&str] = &[
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
    // lint-staged 15.3+ loads TypeScript configuration too (atk22h F22).
    ".lintstagedrc.ts",
    ".lintstagedrc.mts",
    ".lintstagedrc.cts",
    "lint-staged.config.ts",
    "lint-staged.config.mts",
    "lint-staged.config.cts",
];
/// sbt is set up in the folder (its launcher then reads `.sbtopts` and
/// `.jvmopts` there).
pub(crate) const SBT: &[&str] = &["build.sbt", "project/build.properties"];
pub(crate) const MISE: &[&str] = &[
    "mise.toml",
    ".mise.toml",
    "mise.local.toml",
    ".mise.local.toml",
    ".mise",
    ".tool-versions",
];
pub(crate) const DIRENV: &[&str] = &[".envrc"];
pub(crate) const BAZEL: &[&str] = &[
    ".bazeliskrc",
    ".bazelversion",
    "WORKSPACE",
    "WORKSPACE.bazel",
    "MODULE.bazel",
    "REPO.bazel",
];

/// Every workspace persistence path, with its rule and reason.
pub const ENTRIES: &[Entry] = &[
    e(
        "HEAD",
        Always,
        "with objects/ and refs/ beside it, git takes the workspace itself for a bare \
         repository (and runs its config) when .git is missing or spoiled",
    ),
    e(
        ".gitmodules",
        Always,
        "submodule URLs and update commands used by later git commands",
    ),
    // Agents and editors that run commands configured in the folder.
    e(".claude", Always, "agent hooks and MCP servers run on open"),
    e(".cursor", Always, "editor rules, hooks and MCP servers"),
    e(
        ".gemini",
        Always,
        "agent settings start MCP servers and hooks",
    ),
    e(".codex", Always, "agent configuration with commands"),
    e(".opencode", Always, "agent plugins and commands"),
    e("opencode.json", Always, "agent MCP servers and commands"),
    e(
        "opencode.jsonc",
        Always,
        "agent MCP servers and commands (opencode.json's JSONC form)",
    ),
    e(".zed", Always, "editor tasks and language-server commands"),
    e(
        ".vscode",
        Always,
        "editor tasks, launch configs and settings",
    ),
    e(".idea", Always, "IDE run configurations and tool paths"),
    e(
        ".devcontainer",
        Always,
        "container definitions with host-side commands",
    ),
    e(
        ".devcontainer.json",
        Always,
        "container definition at the top (initializeCommand runs on the host)",
    ),
    e(".mcp.json", Always, "MCP servers started by agents on open"),
    e(".kiro", Always, "agent hooks, steering and MCP servers"),
    e(".qwen", Always, "agent settings start MCP servers"),
    e(".kilocode", Always, "agent MCP servers and rules"),
    e(".clinerules", Always, "agent hooks and rules"),
    e(
        ".windsurf",
        Always,
        "agent rules, workflows and MCP servers",
    ),
    e(".factory", Always, "agent MCP servers and hooks"),
    e(".junie", Always, "agent MCP servers"),
    e(".amp", Always, "agent settings and MCP servers"),
    e(".goose", Always, "agent extensions (commands)"),
    e(".trae", Always, "agent rules and MCP servers"),
    e(".augment", Always, "agent settings and MCP servers"),
    e(".openhands", Always, "agent setup scripts"),
    e(
        ".mvn",
        Always,
        "Maven JVM options, extensions and wrapper run by IDE import",
    ),
    e(
        "tools/bazel",
        IfAny(BAZEL),
        "bazel and bazelisk run this wrapper for every command",
    ),
    e(
        "gradle/wrapper/gradle-wrapper.properties",
        Never,
        "the Gradle distribution IDE import downloads and runs",
    ),
    e(".roo", Always, "agent rules, modes and MCP servers"),
    e(".amazonq", Always, "agent MCP servers and rules"),
    e(".continue", Always, "agent MCP servers and commands"),
    e(
        "crush.json",
        Always,
        "agent MCP servers and language servers",
    ),
    e(
        ".crush.json",
        Always,
        "agent MCP servers and language servers",
    ),
    e(
        ".aider.conf.yml",
        Always,
        "agent settings: lint and test commands it runs",
    ),
    e(".helix", Always, "editor language servers and formatters"),
    e(".nvim.lua", Always, "run by Neovim on open with 'exrc'"),
    e(".nvimrc", Always, "run by Neovim on open with 'exrc'"),
    e(".exrc", Always, "run by Vim and Neovim on open with 'exrc'"),
    e(
        ".pdbrc",
        Always,
        "run by Python's debugger (pdb, breakpoint()) started in this directory",
    ),
    e(
        ".vimrc",
        Always,
        "run by Vim on open with 'exrc' (before .exrc)",
    ),
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
        ".github/hooks",
        Never,
        "GitHub Copilot CLI runs the commands of .github/hooks/*.json when started here",
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
    // Hook managers: hooks they install run their configuration.
    e(
        ".pre-commit-config.yaml",
        Always,
        "commands run by installed pre-commit hooks",
    ),
    e(
        ".husky",
        Always,
        "hook scripts when core.hooksPath names it",
    ),
    e("lefthook.yml", IfAny(LEFTHOOK), "lefthook hook commands"),
    e("lefthook.yaml", IfAny(LEFTHOOK), "lefthook hook commands"),
    e(".lefthook.yml", IfAny(LEFTHOOK), "lefthook hook commands"),
    e(".lefthook.yaml", IfAny(LEFTHOOK), "lefthook hook commands"),
    e(
        "lefthook-local.yml",
        IfAny(LEFTHOOK),
        "local lefthook overrides",
    ),
    e(
        "lefthook-local.yaml",
        IfAny(LEFTHOOK),
        "local lefthook overrides",
    ),
    e(
        ".lefthook-local.yml",
        IfAny(LEFTHOOK),
        "local lefthook overrides",
    ),
    e(
        ".lefthook-local.yaml",
        IfAny(LEFTHOOK),
        "local lefthook overrides",
    ),
    e("lefthook.toml", IfAny(LEFTHOOK), "lefthook hook commands"),
    e("lefthook.json", IfAny(LEFTHOOK), "lefthook hook commands"),
    e("lefthook.jsonc", IfAny(LEFTHOOK), "lefthook hook commands"),
    e(".lefthook.toml", IfAny(LEFTHOOK), "lefthook hook commands"),
    e(".lefthook.json", IfAny(LEFTHOOK), "lefthook hook commands"),
    e(".lefthook.jsonc", IfAny(LEFTHOOK), "lefthook hook commands"),
    e(
        "lefthook-local.toml",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(
        "lefthook-local.json",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(
        "lefthook-local.jsonc",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(
        ".lefthook-local.toml",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(
        ".lefthook-local.json",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(
        ".lefthook-local.jsonc",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(
        ".config/lefthook.yml",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(
        ".config/lefthook.yaml",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(
        ".config/lefthook.toml",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(
        ".config/lefthook.json",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(
        ".config/lefthook.jsonc",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(
        ".config/lefthook-local.yml",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(
        ".config/lefthook-local.yaml",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(
        ".config/lefthook-local.toml",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(
        ".config/lefthook-local.json",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(
        ".config/lefthook-local.jsonc",
        IfAny(LEFTHOOK),
        "lefthook hook commands",
    ),
    e(".lefthook", IfAny(LEFTHOOK), "lefthook hook scripts"),
    e(
        ".lefthook-local",
        IfAny(LEFTHOOK),
        "local lefthook hook scripts",
    ),
    e(".lintstagedrc", IfAny(LINT_STAGED), "lint-staged commands"),
    e(
        ".lintstagedrc.json",
        IfAny(LINT_STAGED),
        "lint-staged commands",
    ),
    e(
        ".lintstagedrc.yaml",
        IfAny(LINT_STAGED),
        "lint-staged commands",
    ),
    e(
        ".lintstagedrc.yml",
        IfAny(LINT_STAGED),
        "lint-staged commands",
    ),
    e(".lintstagedrc.js", IfAny(LINT_STAGED), "lint-staged code"),
    e(".lintstagedrc.cjs", IfAny(LINT_STAGED), "lint-staged code"),
    e(".lintstagedrc.mjs", IfAny(LINT_STAGED), "lint-staged code"),
    e(
        "lint-staged.config.js",
        IfAny(LINT_STAGED),
        "lint-staged code",
    ),
    e(
        "lint-staged.config.cjs",
        IfAny(LINT_STAGED),
        "lint-staged code",
    ),
    e(
        "lint-staged.config.mjs",
        IfAny(LINT_STAGED),
        "lint-staged code",
    ),
    // Environment managers that run code when a shell enters the folder.
    e(
        ".envrc",
        Always,
        "direnv runs it when a shell enters the folder",
    ),
    e(
        "mise.toml",
        IfAny(MISE),
        "mise hooks, tasks and env scripts (trust is kept per path)",
    ),
    e(
        ".mise.toml",
        IfAny(MISE),
        "mise hooks, tasks and env scripts",
    ),
    e("mise.local.toml", IfAny(MISE), "mise local overrides"),
    e(".mise.local.toml", IfAny(MISE), "mise local overrides"),
    e(".mise", IfAny(MISE), "mise configuration and task scripts"),
    e(
        ".tool-versions",
        IfAny(MISE),
        "mise/asdf tool selection (mise path: versions put workspace binaries on PATH)",
    ),
    e(
        ".python-version",
        Never,
        "uv runs the interpreter it names (a path too; attack atk22h F20)",
    ),
    e(
        ".python-versions",
        Never,
        "uv runs the interpreters it names (a path too)",
    ),
    // Build tools and editors that run what a folder file names (attack
    // atk22h F22, F27).
    e(".lintstagedrc.ts", IfAny(LINT_STAGED), "lint-staged code"),
    e(".lintstagedrc.mts", IfAny(LINT_STAGED), "lint-staged code"),
    e(".lintstagedrc.cts", IfAny(LINT_STAGED), "lint-staged code"),
    e(
        "lint-staged.config.ts",
        IfAny(LINT_STAGED),
        "lint-staged code",
    ),
    e(
        "lint-staged.config.mts",
        IfAny(LINT_STAGED),
        "lint-staged code",
    ),
    e(
        "lint-staged.config.cts",
        IfAny(LINT_STAGED),
        "lint-staged code",
    ),
    e(
        ".sbtopts",
        IfAny(SBT),
        "sbt's launcher options (-J-javaagent, --sbt-jar); Metals starts sbt on open",
    ),
    e(
        ".jvmopts",
        IfAny(SBT),
        "the JVM options sbt's launcher passes (-javaagent)",
    ),
    e(
        "global.json",
        Never,
        "the .NET SDK runs the SDK its sdk.paths name",
    ),
    e(
        ".node-version",
        Never,
        "Node version managers run the interpreter it names (a path with some)",
    ),
    e(
        ".nvmrc",
        Never,
        "nvm and other version managers run the Node it names",
    ),
    e(
        ".ruby-version",
        Never,
        "Ruby version managers run the interpreter it names (a path with some)",
    ),
    e(
        ".bundle",
        Never,
        "Bundler's project configuration (gem paths, build flags)",
    ),
    e(
        ".bsp",
        Always,
        "Build Server Protocol connection files: IDEs start their argv on open",
    ),
    e(
        "rust-analyzer.toml",
        Always,
        "rust-analyzer runs the commands it names (overrideCommand, proc-macro server) on open",
    ),
    e(
        ".luarc.json",
        Never,
        "lua-language-server runs the plugin it names",
    ),
    e(
        ".luarc.jsonc",
        Never,
        "lua-language-server runs the plugin it names",
    ),
    e(
        ".bloop",
        Never,
        "Bloop build server project files (commands, classpaths)",
    ),
    e(
        "flake.nix",
        IfAny(DIRENV),
        "evaluated (shellHook) by `use flake` in .envrc",
    ),
    e(
        "flake.lock",
        IfAny(DIRENV),
        "pins the inputs `use flake` evaluates",
    ),
    e(
        "shell.nix",
        IfAny(DIRENV),
        "evaluated (shellHook) by `use nix`",
    ),
    e(
        "default.nix",
        IfAny(DIRENV),
        "evaluated by `use nix` without shell.nix",
    ),
    e(
        "devenv.nix",
        IfAny(DIRENV),
        "evaluated (enterShell runs) by `use devenv` in .envrc",
    ),
    e(
        "devenv.yaml",
        IfAny(DIRENV),
        "the inputs and imports `use devenv` evaluates",
    ),
    e(
        ".direnv",
        IfAny(DIRENV),
        "direnv layouts and nix-direnv caches sourced on entry",
    ),
    // Shell start-up files (read only from the home directory).
    e(".bashrc", IfHome, "shell start-up file"),
    e(".bash_profile", IfHome, "shell start-up file"),
    e(".bash_login", IfHome, "shell start-up file"),
    e(".bash_logout", IfHome, "shell start-up file"),
    e(".profile", IfHome, "shell start-up file"),
    e(".zshrc", IfHome, "shell start-up file"),
    e(".zshenv", IfHome, "shell start-up file"),
    e(".zprofile", IfHome, "shell start-up file"),
    e(".zlogin", IfHome, "shell start-up file"),
    e(".zlogout", IfHome, "shell start-up file"),
    e(".kshrc", IfHome, "shell start-up file"),
    e(".cshrc", IfHome, "shell start-up file"),
    e(".tcshrc", IfHome, "shell start-up file"),
];

/// Paths inside the workspace's `.git` directory planned statically (when
/// `.git` is a directory at the workspace root). The helper adds what the
/// effective configuration names ([`crate::protect::git::git_vet`]) before the run.
pub const GIT_DIR_ENTRIES: &[Entry] = &[
    e(".git/hooks", Always, "hooks run by git on the host"),
    e(
        ".git/config",
        Always,
        "core.hooksPath, fsmonitor, filters, aliases",
    ),
    e(
        ".git/modules",
        Always,
        "submodules' git directories (hooks, config)",
    ),
    e(
        ".git/objects/info/alternates",
        Always,
        "makes git read objects from anywhere (a place the command chose)",
    ),
    e(
        ".git/commondir",
        Never,
        "redirects the common directory (hooks, config); an unreadable one stops git",
    ),
    e(
        ".git/config.worktree",
        Never,
        "per-worktree config when extensions.worktreeConfig is set",
    ),
];
