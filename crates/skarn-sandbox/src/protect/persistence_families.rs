//! Families of file names that tell a tool is set up in the workspace
//! (the [`crate::protect::persistence_entries::Reserve::IfAny`] rules of
//! the persistence table; data only).

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
/// husky 4's configuration files: cosmiconfig 7's places for the name
/// `husky` (as husky 4.3's `getConf` asks for them), read by the hook
/// scripts husky 4 installs at every hook (atk22k F9).
pub(crate) const HUSKY4: &[&str] = &[
    ".huskyrc",
    ".huskyrc.json",
    ".huskyrc.yaml",
    ".huskyrc.yml",
    ".huskyrc.js",
    ".huskyrc.cjs",
    ".config/huskyrc",
    ".config/huskyrc.json",
    ".config/huskyrc.yaml",
    ".config/huskyrc.yml",
    ".config/huskyrc.js",
    ".config/huskyrc.cjs",
    "husky.config.js",
    "husky.config.cjs",
];
/// nano-staged's configuration files (its `config.js` list of places).
pub(crate) const NANO_STAGED: &[&str] = &[
    ".nano-staged.js",
    "nano-staged.js",
    ".nano-staged.cjs",
    "nano-staged.cjs",
    ".nano-staged.mjs",
    "nano-staged.mjs",
    ".nano-staged.json",
    "nano-staged.json",
    ".nanostagedrc",
];
/// simple-git-hooks' configuration files (the places its installer
/// reads, in its order); the hooks it writes run their commands.
pub(crate) const SIMPLE_GIT_HOOKS: &[&str] = &[
    ".simple-git-hooks.cjs",
    ".simple-git-hooks.js",
    ".simple-git-hooks.mjs",
    "simple-git-hooks.cjs",
    "simple-git-hooks.js",
    "simple-git-hooks.mjs",
    ".simple-git-hooks.json",
    "simple-git-hooks.json",
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
