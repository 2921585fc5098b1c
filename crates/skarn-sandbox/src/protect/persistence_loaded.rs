//! Project files that choose which package a host tool installs, which
//! interpreter it runs, or where it sends the user's key (atk22l F9, F12,
//! F15, F16): a part of [`crate::protect::persistence_lint`]'s table (same
//! rules: any depth, new or changed ones refused; a package manager's
//! index and preload are the `.npmrc` class, an interpreter path the
//! `.python-version` class). Data only.

use crate::protect::persistence_entries::Groups;

/// Each family with what the host tool does with it.
pub(crate) const GROUPS: Groups = &[
    (
        &["uv.toml"],
        "uv reads it from the project's directory up: its index-url, find-links, no-index \
         and mirrors choose the packages the host's uv installs (their .pth runs at every \
         start of the environment's python)",
    ),
    (
        &["bunfig.toml"],
        "bun imports its preload modules before any script it runs in this directory, and \
         installs from its registry",
    ),
    (
        &[".pdm-python"],
        "pdm runs the interpreter it names for pdm run and pdm install",
    ),
    (
        &["pdm.toml", ".pdm.toml"],
        "pdm takes the environment (venv.location, so its python) and the index it names",
    ),
    (
        &["poetry.toml"],
        "poetry takes the environment (virtualenvs.path, in-project, so its python) and the \
         repositories it names",
    ),
    (
        &[".aider.model.settings.yml", ".aider.model.metadata.json"],
        "aider reads it at start: a model's api_base sends the user's API key to the host \
         it names",
    ),
];
