//! Configuration of linters, formatters and commit checkers that host
//! programs load as code with no command of the user's: editor
//! extensions when the folder is opened, a file of the language is
//! opened, or a file is saved (JavaScript, CSS and Python tools: atk22j
//! H3, atk22k F6), and the checkers the usual commit hooks run at every
//! commit (commitlint, commitizen, detect-secrets: atk22k F10). Part of
//! [`crate::protect::persistence::ENTRIES`] (never reserved) and of
//! [`crate::protect::persistence::AFTER_RUN_TOP`]. The tools look for them
//! from the linted file's directory upward, or in the directory they are
//! started in (a package of a mono-repository), so they are protected at
//! any depth (atk22l F1): an existing one read-only, a new or changed one
//! refused by the copy-on-write layer, set aside after a direct run;
//! except inside installed packages ([`exempt_below`]).
//!
//! Left out on purpose, as the project's code the user runs: the
//! configuration of builds and test runners (`vite.config.*`,
//! `vitest.config.*`, `jest.config.*`, `webpack.config.*`,
//! `postcss.config.*`, `next.config.*`, `astro.config.*`, ...). Their
//! programs run them only from a command (`npm test`, `npm run dev`); a
//! test explorer that runs the tests at open runs the project's test
//! files too, which no file name protects (SECURITY.md).

use crate::protect::persistence_entries::Reserve::Never;
use crate::protect::persistence_entries::{Entry, Groups, e};

const ESLINT: &[&str] = &[
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    "eslint.config.mts",
    "eslint.config.cts",
    ".eslintrc.js",
    ".eslintrc.cjs",
    // The data forms name a parser or plugins by path (code, loaded too).
    ".eslintrc",
    ".eslintrc.json",
    ".eslintrc.yaml",
    ".eslintrc.yml",
];
const STYLELINT: &[&str] = &[
    "stylelint.config.js",
    "stylelint.config.mjs",
    "stylelint.config.cjs",
    "stylelint.config.ts",
    "stylelint.config.mts",
    "stylelint.config.cts",
    ".stylelintrc.js",
    ".stylelintrc.mjs",
    ".stylelintrc.cjs",
    ".stylelintrc",
    ".stylelintrc.json",
    ".stylelintrc.yaml",
    ".stylelintrc.yml",
];
const PRETTIER: &[&str] = &[
    "prettier.config.js",
    "prettier.config.mjs",
    "prettier.config.cjs",
    "prettier.config.ts",
    "prettier.config.mts",
    "prettier.config.cts",
    ".prettierrc.js",
    ".prettierrc.mjs",
    ".prettierrc.cjs",
    ".prettierrc.ts",
    ".prettierrc.mts",
    ".prettierrc.cts",
    ".prettierrc",
    ".prettierrc.json",
    ".prettierrc.json5",
    ".prettierrc.yaml",
    ".prettierrc.yml",
    ".prettierrc.toml",
];
const TAILWIND: &[&str] = &[
    "tailwind.config.js",
    "tailwind.config.mjs",
    "tailwind.config.cjs",
    "tailwind.config.ts",
    "tailwind.config.mts",
    "tailwind.config.cts",
];
const UNOCSS: &[&str] = &[
    "uno.config.js",
    "uno.config.mjs",
    "uno.config.ts",
    "uno.config.mts",
    "unocss.config.js",
    "unocss.config.mjs",
    "unocss.config.ts",
    "unocss.config.mts",
];
const SVELTE: &[&str] = &["svelte.config.js", "svelte.config.mjs", "svelte.config.cjs"];
/// pylint's `init-hook` is Python it runs, `load-plugins` modules it
/// imports; mypy imports its `plugins`.
/// (pylint 2.17+ reads the TOML forms too: atk22l F4.)
const PYTHON_LINT: &[&str] = &[
    "pylintrc",
    ".pylintrc",
    "pylintrc.toml",
    ".pylintrc.toml",
    "mypy.ini",
    ".mypy.ini",
];
const COMMITLINT: &[&str] = &[
    "commitlint.config.js",
    "commitlint.config.mjs",
    "commitlint.config.cjs",
    "commitlint.config.ts",
    "commitlint.config.mts",
    "commitlint.config.cts",
    ".commitlintrc",
    ".commitlintrc.json",
    ".commitlintrc.yaml",
    ".commitlintrc.yml",
    ".commitlintrc.js",
    ".commitlintrc.mjs",
    ".commitlintrc.cjs",
    ".commitlintrc.ts",
    ".commitlintrc.mts",
    ".commitlintrc.cts",
];
const COMMITIZEN: &[&str] = &[".czrc", ".cz-config.js", ".cz-config.cjs"];
const BABEL: &[&str] = &[
    "babel.config.js",
    "babel.config.mjs",
    "babel.config.cjs",
    "babel.config.cts",
    "babel.config.json",
    ".babelrc",
    ".babelrc.js",
    ".babelrc.mjs",
    ".babelrc.cjs",
    ".babelrc.cts",
    ".babelrc.json",
];

/// Each family with why an editor runs it.
const LINT_GROUPS: Groups = &[
    (
        ESLINT,
        "the ESLint extension loads it (and the parser and plugins it names) to lint a \
         JavaScript or TypeScript file as soon as one is opened",
    ),
    (
        STYLELINT,
        "the Stylelint extension loads it (and its plugins and custom syntax) when a \
         style sheet is opened",
    ),
    (
        PRETTIER,
        "the Prettier extension loads it and its plugins to format on save",
    ),
    (
        TAILWIND,
        "Tailwind CSS IntelliSense runs it when the folder is opened",
    ),
    (
        UNOCSS,
        "the UnoCSS extension runs it when the folder is opened",
    ),
    (
        SVELTE,
        "the Svelte language server runs it (preprocessors) when a .svelte file is opened",
    ),
    (
        PYTHON_LINT,
        "the Pylint and Mypy extensions run pylint or mypy on every opened Python file: \
         pylint runs its init-hook and imports its load-plugins, mypy imports its plugins",
    ),
    (
        COMMITLINT,
        "commitlint (the usual commit-msg hook) loads it, and the modules its extends, \
         plugins and parserPreset name, at every commit",
    ),
    (
        COMMITIZEN,
        "commitizen (git cz, a prepare-commit-msg hook) loads the adapter or questions it \
         names as code",
    ),
    (
        &[".secrets.baseline"],
        "detect-secrets' commit hook imports the plugin files its plugins_used name",
    ),
    (
        &[".bazelrc"],
        "bazel runs the programs its startup and run options name (--server_javabase, \
         --run_under) for every command here",
    ),
    (
        BABEL,
        "Babel's ESLint parser loads it and the plugins it names when a file is linted \
         on open",
    ),
];

/// The tables joined into [`PART`]: these linters, the other languages'
/// (`persistence_lint_more`) and the project files that choose what a
/// host tool installs, runs or sends the user's key to
/// (`persistence_loaded`).
const SOURCES: &[Groups] = &[
    LINT_GROUPS,
    crate::protect::persistence_lint_more::GROUPS,
    crate::protect::persistence_loaded::GROUPS,
];

const fn count() -> usize {
    let (mut n, mut s) = (0, 0);
    while s < SOURCES.len() {
        let mut i = 0;
        while i < SOURCES[s].len() {
            n += SOURCES[s][i].0.len();
            i += 1;
        }
        s += 1;
    }
    n
}

const N: usize = count();

const fn entries() -> [Entry; N] {
    let mut out = [e("", Never, ""); N];
    let (mut s, mut k) = (0, 0);
    while s < SOURCES.len() {
        let groups = SOURCES[s];
        let mut i = 0;
        while i < groups.len() {
            let mut j = 0;
            while j < groups[i].0.len() {
                out[k] = e(groups[i].0[j], Never, groups[i].1);
                k += 1;
                j += 1;
            }
            i += 1;
        }
        s += 1;
    }
    out
}

const fn names() -> [&'static str; N] {
    let mut out = [""; N];
    let mut k = 0;
    while k < N {
        out[k] = ENTRIES_ARR[k].path;
        k += 1;
    }
    out
}

const ENTRIES_ARR: [Entry; N] = entries();
const NAMES_ARR: [&str; N] = names();

/// The entries of [`crate::protect::persistence::ENTRIES`] for these files
/// (read in any directory: [`crate::protect::persistence::any_depth`]).
pub(crate) const PART: &[Entry] = &ENTRIES_ARR;
/// Their names, for [`crate::protect::persistence::AFTER_RUN_TOP`].
pub(crate) const NAMES: &[&str] = &NAMES_ARR;

/// Directories of installed packages: the tools do not look for their
/// configuration there (ESLint, Prettier and Stylelint skip
/// `node_modules`; the Python tools are not run on an environment's
/// packages), and packages ship these files by the thousand, so
/// [`NAMES`] below one are not protected.
#[cfg(unix)]
const DEPENDENCY_TREES: &[&str] = &["node_modules", "site-packages", "dist-packages"];

/// Whether `name` is one of [`NAMES`] and `dirs` (the names of the
/// directories it lies in) pass through a [`DEPENDENCY_TREES`] directory.
#[cfg(unix)]
pub(crate) fn exempt_below<'a>(
    name: &std::ffi::OsStr,
    mut dirs: impl Iterator<Item = &'a std::ffi::OsStr>,
) -> bool {
    NAMES.iter().any(|n| name == *n) && dirs.any(|d| DEPENDENCY_TREES.iter().any(|t| d == *t))
}
