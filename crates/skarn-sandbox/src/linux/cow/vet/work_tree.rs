//! The changes outside git directories: the workspace's tree (Python's
//! start-up files, names tools read at any depth, upward configuration,
//! editor and environment files, `PATH` directories).

use std::ffi::OsStr;
use std::path::Path;

use super::{Change, Rules};

/// The rest of [`super::check`] for a change at `rel` (names `n`, `abs` in
/// the workspace) that lies in no git directory.
pub(super) fn check(
    rules: &Rules,
    rel: &Path,
    n: &[&OsStr],
    what: Change,
    upper: &Path,
    host: bool,
    abs: &Path,
) -> Result<(), String> {
    // (The dependency and build trees, `target/`, `.venv/`,
    // `node_modules/`, are vetted like any other directory, as the direct
    // mode's check after the run does: attack atk24d F9.)
    // A link where host tools search a directory by name (atk22o F1, F5).
    if what == Change::Special {
        let top = upper.ancestors().nth(rel.components().count());
        crate::protect::searched_dirs::check_layer_link(&rules.ws, n, upper, top)?;
    }
    if what != Change::Dir {
        // By the whole path: a workspace that is itself a site-packages
        // directory, or lies in one, is judged by where it is (atk22g F2).
        let whole = super::names(abs);
        crate::protect::venv_guard::check_layer_change(
            &whole,
            what == Change::File,
            upper,
            host,
            abs,
        )?;
        crate::protect::venv_programs::check_layer_change(&rules.ws, n, what == Change::Delete)?;
        // The tools editors load from the project's node_modules (atk22l F11).
        crate::protect::node_tools::check_layer_change(n, upper, abs, what == Change::Delete)?;
        if what != Change::Delete {
            crate::protect::pyc_guard::check_layer_change(
                &rules.ws,
                rel,
                what == Change::Special,
                upper.ancestors().nth(rel.components().count()),
            )?;
            // A compiled twin of a source module (atk22o F9).
            crate::protect::py_ext_twin::check_layer_change(
                &rules.ws,
                rel,
                upper.ancestors().nth(rel.components().count()),
            )?;
            // A new environment's interpreter, activation and standard
            // library place; distribution metadata outside packages
            // (atk22l F10, F17).
            crate::protect::venv_new::check_interpreter(
                &rules.ws,
                n,
                upper,
                what == Change::Special,
            )?;
            if what == Change::File {
                crate::protect::venv_new::check_cfg(&rules.ws, n, upper)?;
            }
        }
        crate::protect::dist_metadata::check_layer_change(n, what == Change::Delete)?;
    }
    if let Some(c) = n
        .iter()
        .find(|c| crate::protect::py_startup::customize_module(c))
    {
        return Err(format!(
            "{}: python imports it at start from any directory on its path (a plain .pth \
             line names the directory, PYTHONPATH)",
            c.to_string_lossy()
        ));
    }
    // (Not the linters' configuration inside installed packages.)
    if let Some((_, c)) = n.iter().enumerate().find(|(k, c)| {
        crate::protect::persistence::any_depth_name(c)
            && !crate::protect::persistence_lint::exempt_below(c, n[..*k].iter().copied())
    }) {
        return Err(format!(
            "{}: agents, editors and shells read it in any directory",
            c.to_string_lossy()
        ));
    }
    for (k, c) in n.iter().enumerate() {
        if let Some((u, inner, why)) = crate::protect::grant_walk::upward_entry(c) {
            let leaf = k + 1 == n.len();
            let inside = n.get(k + 1).is_some_and(|x| inner.iter().any(|f| x == f));
            // (A file named `mise` or `.config` is no configuration: mise
            // reads only the directories. A link by that name is one:
            // the tools follow it to a directory whose files carry no
            // protected name, atk22i F8.)
            let dir_only = crate::protect::grant_walk::upward_dir_only(u);
            let as_dir = !dir_only || what == Change::Special;
            if inner.is_empty() || inside || (leaf && what != Change::Dir && as_dir) {
                return Err((*why).to_string());
            }
        }
    }
    if n.len() == 1
        && n[0]
            .to_string_lossy()
            .to_lowercase()
            .ends_with(crate::protect::persistence::WORKSPACE_FILE_SUFFIX)
    {
        return Err("an editor workspace file (tasks and settings applied on open)".into());
    }
    // Anything but a regular file in a judged file's place: a link the
    // hook managers follow and read whole (to a workspace file whose name
    // nobody judges), a FIFO, a new directory (atk22k F12, as the direct
    // mode sets it aside).
    if n.last()
        .is_some_and(|l| crate::protect::package_json::is_config_name(&l.to_string_lossy()))
        && (what == Change::Special || (what == Change::Dir && !host))
    {
        return Err(
            "a link or special file in place of a package.json or package.yaml (git-hook \
             managers such as lint-staged and husky follow it and run the commands of what \
             it leads to on the next commit)"
                .into(),
        );
    }
    // Git-hook managers' configuration in any `package.json` (or
    // lint-staged's `package.yaml`): host git hooks run what it names; the
    // rest of the file may change, those keys not.
    if what == Change::File
        && n.last()
            .is_some_and(|l| crate::protect::package_json::is_config_name(&l.to_string_lossy()))
        && crate::protect::package_json::changes_hook_config(upper, abs)
    {
        return Err(
            "a package.json, package.yaml or pnpm-workspace.yaml with another git-hook or \
             pnpm hook configuration (lint-staged, husky, a pnpmfile, ...: host git hooks run \
             the commands it names on the next commit, pnpm the code at the next install)"
                .into(),
        );
    }
    // Linters' and package tools' settings kept as keys of ordinary
    // project files (package.json, pyproject.toml, setup.cfg, tox.ini):
    // judged by those keys (atk22l F3, F4, F9); a link in their place is
    // followed by the tools.
    if let Some(name) = crate::protect::tool_keys::judged_at(n) {
        if what == Change::Special {
            return Err(format!(
                "a link or special file in place of {name} (host tools follow it and load \
                 the code its settings name)"
            ));
        }
        if what == Change::File
            && let Some(why) = crate::protect::tool_keys::layer_change(n, upper, abs)
        {
            return Err(why);
        }
    }
    // Environment files agents load at start (ADR 0246): judged by what
    // they set.
    // A file a makefile includes is read as makefile text by host make
    // (atk22m F10): judged the same way.
    let upper_top = upper.ancestors().nth(rel.components().count());
    if let Some(last) = n.last()
        && (crate::protect::dotenv::is_env_file(last)
            || crate::protect::make_include::included(abs, Some(&rules.ws))
            || crate::protect::make_include::included(upper, upper_top))
    {
        match what {
            Change::File => {
                if let Some(why) = crate::protect::dotenv::judge_in(upper, abs.parent()) {
                    return Err(format!(
                        "an environment file agents and runtimes load at their start on the \
                         host, or a file a makefile includes: {why}"
                    ));
                }
            }
            Change::Special => {
                return Err(
                    "a link or special file in place of an environment file agents load at \
                     their start"
                        .into(),
                );
            }
            _ => {}
        }
    }
    if crate::protect::persistence::AFTER_RUN_TOP
        .iter()
        .any(|p| rel.starts_with(p))
    {
        return Err(
            "a file a tool started here reads and runs what it names (interpreters' start-up \
             files, yarn, mise, Copilot's hooks)"
                .into(),
        );
    }
    if let (Some(ex), Some(first)) = (&rules.home_dots, n.first()) {
        let f = first.to_string_lossy();
        if f.starts_with('.') && !ex.iter().any(|e| *e == f) {
            return Err("a new dot entry of the home (host programs read them by name)".into());
        }
    }
    // A link made at a PATH directory the host lacks, or above one, makes
    // the host's shell run what it leads to (attack atk22i F7).
    if what == Change::Special {
        if let Some((dir, _)) = rules.path_dirs.iter().find(|(d, _)| d.starts_with(abs)) {
            return Err(format!(
                "{} is on PATH: a link there or above it would make the host's shell run the \
                 programs it leads to",
                dir.display()
            ));
        }
        if crate::protect::path_shadow_walk::link_on_the_way(abs, &rules.relative_path.0) {
            return Err(
                "a relative entry of your PATH names this place or one below it: a link here \
                 would make the host's shell run the programs it leads to"
                    .into(),
            );
        }
    }
    if what != Change::Dir
        && let Some(name) = abs.file_name()
    {
        for (dir, later) in &rules.path_dirs {
            if abs.parent() == Some(dir.as_path())
                && crate::protect::path_shadow::shadows(name, later, &rules.configured)
            {
                return Err(format!(
                    "{} is on PATH: this program would shadow the later one",
                    dir.display()
                ));
            }
        }
        let (rels, later) = &rules.relative_path;
        if let Some(dir) = abs.parent()
            && crate::protect::path_shadow_walk::named_by(dir, rels)
            && crate::protect::path_shadow::shadows(name, later, &rules.configured)
        {
            return Err(format!(
                "{} is on PATH in a shell there (a relative entry of your PATH): this \
                 program would shadow the later one",
                dir.display()
            ));
        }
    }
    Ok(())
}
