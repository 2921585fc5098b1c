//! The other languages' editor-run linters whose configuration names code
//! they load (atk22l F13), a part of
//! [`crate::protect::persistence_lint`]'s table (same rules: any depth,
//! new or changed ones refused). Data only.

use crate::protect::persistence_entries::Groups;

const RUBY: &[&str] = &[
    ".rubocop.yml",
    ".standard.yml",
    ".erb_lint.yml",
    ".erb-lint.yml",
];
const PHP: &[&str] = &[
    ".php-cs-fixer.php",
    ".php-cs-fixer.dist.php",
    ".php_cs",
    ".php_cs.dist",
    "phpstan.neon",
    "phpstan.neon.dist",
    "phpstan.dist.neon",
    "phpcs.xml",
    "phpcs.xml.dist",
    ".phpcs.xml",
    ".phpcs.xml.dist",
    "psalm.xml",
    "psalm.xml.dist",
];
const GO: &[&str] = &[
    ".golangci.yml",
    ".golangci.yaml",
    ".golangci.toml",
    ".golangci.json",
];
const LUA: &[&str] = &[".luacheckrc"];
const MARKDOWN: &[&str] = &[
    ".markdownlint-cli2.cjs",
    ".markdownlint-cli2.mjs",
    ".markdownlint-cli2.jsonc",
    ".markdownlint-cli2.yaml",
    ".markdownlint.cjs",
    ".markdownlint.mjs",
];

/// Each family with why an editor runs it.
pub(crate) const GROUPS: Groups = &[
    (
        RUBY,
        "the Ruby LSP and RuboCop extensions run RuboCop (standardrb, erb_lint) on open and \
         save: it requires the Ruby files and plugins its require and plugins keys name",
    ),
    (
        &[".solargraph.yml"],
        "the Solargraph language server requires the plugins and paths it names at open",
    ),
    (
        PHP,
        "the PHP CS Fixer, PHPStan, PHP_CodeSniffer and Psalm extensions run it on save: \
         PHP code, or the bootstrap files, sniffs and plugins it names",
    ),
    (
        GO,
        "golangci-lint (the Go extension's lint on save) loads the custom plugins it names \
         by path",
    ),
    (
        LUA,
        "luacheck (the editors' Lua lint on save) runs its configuration as Lua",
    ),
    (
        MARKDOWN,
        "the markdownlint extension loads it and the custom rules it names as code on open",
    ),
    (
        &[".flake8"],
        "the Flake8 extension runs flake8 on open: it imports the local plugins its \
         flake8:local-plugins paths name",
    ),
    (
        &[".sqlfluff"],
        "the SQLFluff extension lints on save: its templater imports the Python macros of \
         its library_path",
    ),
];
