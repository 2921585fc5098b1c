//! VS Code's agent tools that run code some other way than
//! `run_in_terminal` (attack atk24d F8). VS Code sends every tool call to
//! the hook (its matchers are ignored), and a call without an answer runs
//! as the model asked: these would run on the host, unconfined, with VS
//! Code's own confirmation as the only barrier. Each is denied, and the
//! reason names the way that is confined: `run_in_terminal`, which the
//! hook rewrites to `skarn run`.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The tool ids (core and Copilot's, as VS Code names them in its hook
/// input) and why each is refused.
const REFUSED: &[(&str, &str)] = &[
    (
        "send_to_terminal",
        "it types text into a terminal that is already open, whose shell is not confined (only \
         the one command run_in_terminal started in it was)",
    ),
    (
        "create_and_run_task",
        "it writes a task into .vscode/tasks.json and runs it as a VS Code task, on the host, \
         unconfined",
    ),
    (
        "run_task",
        "it runs a VS Code task (.vscode/tasks.json, package.json scripts, ...) on the host, \
         unconfined",
    ),
    (
        "run_vscode_command",
        "it runs an editor command, and editor commands can run programs or type into \
         terminals (e.g. workbench.action.terminal.sendSequence, \
         workbench.action.tasks.runTask) unconfined; no command id is allowed",
    ),
    (
        "run_notebook_cell",
        "it runs the cell in the notebook's kernel, a host process that is not confined",
    ),
    (
        "runTests",
        "it runs the tests through VS Code's test extensions, on the host, unconfined",
    ),
    (
        "copilot_runTests1",
        "it runs the tests through VS Code's test extensions, on the host, unconfined",
    ),
    (
        "install_python_packages",
        "pip runs the packages' build code on the host, unconfined (run pip install through \
         run_in_terminal)",
    ),
    (
        "configure_python_environment",
        "it makes or changes a Python environment on the host, unconfined (use run_in_terminal)",
    ),
    (
        "notebook_install_packages",
        "it installs packages into the notebook's kernel on the host, unconfined",
    ),
    (
        "configure_notebook",
        "it starts or changes the notebook's kernel, a host process that is not confined",
    ),
    (
        "run_vs_code_task",
        "it runs a VS Code task (.vscode/tasks.json, package.json scripts, ...) on the host, \
         unconfined",
    ),
    (
        "install_extension",
        "an extension's code runs in VS Code's extension host, unconfined (install extensions \
         yourself)",
    ),
];

/// VS Code tools that neither write files nor run code (core and the
/// Copilot extension's ids, as its tool list names them): answered
/// nothing. `run_in_terminal` (confined) and the file tools (guarded) are
/// handled apart; every other tool is refused (issue 24: CMake, Python
/// environment, notebook and extension tools, and any new one, write files
/// or run code the hook cannot judge).
const KNOWN_SAFE: &[&str] = &[
    "semantic_search",
    "get_vscode_api",
    "test_failure",
    "file_search",
    "grep_search",
    "read_file",
    "list_dir",
    "get_errors",
    "get_changed_files",
    "read_project_structure",
    "search_workspace_symbols",
    "list_code_usages",
    "copilot_getNotebookSummary",
    "read_notebook_cell_output",
    "fetch_webpage",
    "test_search",
    "get_project_setup_info",
    "get_search_view_results",
    "get_doc_info",
    "github_repo",
    "manage_todo_list",
    "get_terminal_output",
    "terminal_selection",
    "terminal_last_command",
    "get_task_output",
    "kill_terminal",
    "vscode_get_confirmation",
    "vscode_get_terminal_confirmation",
    "copilot_searchCodebase",
    "copilot_searchWorkspaceSymbols",
    "copilot_listCodeUsages",
    "copilot_getVSCodeAPI",
    "copilot_testFailure",
    "copilot_findFiles",
    "copilot_findTextInFiles",
    "copilot_readFile",
    "copilot_listDirectory",
    "copilot_getErrors",
    "copilot_getDocInfo",
    "copilot_getChangedFiles",
    "copilot_readProjectStructure",
    "copilot_readNotebookCellOutput",
    "copilot_fetchWebPage",
    "copilot_findTestFiles",
    "copilot_getProjectSetupInfo",
    "copilot_getSearchResults",
    "copilot_githubRepo",
];

/// Why a VS Code tool the hook does not know must not run (`None`: known
/// to be harmless, or allowed by `[hook] allow_tools`).
pub fn unknown(tool: &str, settings: &super::settings::Settings) -> Option<String> {
    if KNOWN_SAFE.contains(&tool)
        || tool == "run_in_terminal"
        || super::file_targets::FILE_TOOLS.contains(&tool)
        || super::unknown_tools::gateway_tool(tool)
        || settings.allows_tool(tool)
    {
        return None;
    }
    Some(format!(
        "skarn: {tool} refused: skarn does not know this tool, and a tool may write files or run \
         code on the host, unconfined. Run commands with run_in_terminal (skarn runs them \
         confined) and edit files with the file tools{} if it neither writes files nor runs \
         code: allow_tools = [\"{tool}\"] under [hook] in ~/.config/skarn/config.toml",
        super::unknown_tools::ALLOW_ADVICE
    ))
}

/// Why the VS Code tool `tool` must not run (`None`: not one of these).
/// `guard_files`: whether the file guard is on (`create_and_run_task`'s
/// write of `.vscode/tasks.json` is judged by it, and named).
/// `ws`: the workspace, when known.
pub fn refusal(
    tool: &str,
    input: &Value,
    ws: Option<&str>,
    guard_files: bool,
    home: Option<&Path>,
) -> Option<String> {
    let (_, why) = REFUSED.iter().find(|(t, _)| *t == tool)?;
    let mut why = (*why).to_string();
    if let Some(ws) = ws
        && tool == "create_and_run_task"
        && guard_files
    {
        let folder = input
            .get("tool_input")
            .and_then(|i| i.get("workspaceFolder"))
            .and_then(Value::as_str)
            .filter(|f| f.starts_with('/'))
            .map_or_else(|| PathBuf::from(ws), PathBuf::from);
        let tasks = folder.join(".vscode/tasks.json");
        if let Some(g) =
            super::files::refusal(&tasks.to_string_lossy(), Path::new(ws), Path::new(ws), home)
        {
            why.push_str(&format!(
                "; and the file guard refuses its write of {}: {g}",
                tasks.display()
            ));
        }
    }
    Some(format!(
        "skarn: {tool} refused: {why}. Run the command with run_in_terminal instead: skarn runs \
         it confined (skarn run, the workspace's [run] policy)."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_running_tool_is_refused_and_others_are_not() {
        for (t, _) in REFUSED {
            let r = refusal(t, &Value::Null, Some("/w"), false, None).unwrap();
            assert!(r.contains("run_in_terminal"), "{r}");
        }
        let s = super::super::settings::Settings::load(None, None, &[]).unwrap();
        for t in [
            "Build_CMakeTools",
            "create_virtual_environment",
            "memory",
            "mcp_x_y",
        ] {
            assert!(unknown(t, &s).is_some(), "{t}");
        }
        for t in REFUSED.iter().map(|(t, _)| *t) {
            assert!(unknown(t, &s).is_some(), "{t}");
        }
        for t in [
            "read_file",
            "get_terminal_output",
            "kill_terminal",
            "run_in_terminal",
        ] {
            assert!(unknown(t, &s).is_none(), "{t}");
            assert!(
                refusal(t, &Value::Null, Some("/w"), true, None).is_none(),
                "{t}"
            );
        }
    }
}
