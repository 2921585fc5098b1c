//! Persistence paths of hook managers, environment managers, build tools
//! and shells: files they run on the next commit, on entering the folder
//! or on import (part of [`crate::protect::persistence::ENTRIES`];
//! data only).

use crate::protect::persistence_entries::Reserve::{Always, IfAny, IfHome, Never};
use crate::protect::persistence_entries::{Entry, e};
use crate::protect::persistence_families::{DIRENV, LEFTHOOK, LINT_STAGED, MISE, SBT};

pub(crate) const PART: &[Entry] = &[
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
