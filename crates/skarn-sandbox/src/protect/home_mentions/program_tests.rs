//! Mentions found through the words a shell or a program reads: shebang
//! interpreters, tool configurations, plugin checkouts, Python
//! environments, dotenv allow lists.

use super::tests::{put, tempdir};
use super::*;

/// The disk-free word reading (the fuzz target's function).
#[test]
fn line_reaches_reads_words_as_bash_expands_them() {
    let (h, f, g) = (
        Path::new("/h"),
        Path::new("/h/.bashrc"),
        Path::new("/h/proj"),
    );
    for l in [
        ". ~/pro[j]/env.sh",
        ". ~/{x,proj}/env.sh",
        ". ~/p\\roj/env.sh",
        ". ~/@(proj)/env.sh",
        ". \"${BASH_SOURCE%/*}/proj/env.sh\"",
        "x=\"$(dirname \"$0\")/proj\"",
        "eval \"$(~/proj/bin/init)\"",
    ] {
        assert!(line_reaches(l, h, f, g), "{l}");
    }
    for l in [
        ". ~/other/env.sh",
        "eval \"$(starship init bash)\"",
        ". \"$NVM_DIR/nvm.sh\"",
    ] {
        assert!(!line_reaches(l, h, f, g), "{l}");
    }
}

/// atk22d F10: a home script's `#!` interpreter inside the project is a
/// mention (the kernel runs it), also behind `env -S`.
#[test]
fn a_shebang_interpreter_in_the_project_is_a_mention() {
    let t = tempdir("shebang");
    let (home, ws) = (t.join("home"), t.join("proj"));
    std::fs::create_dir_all(ws.join(".venv/bin")).unwrap();
    for (i, first) in [
        format!("#!{}/.venv/bin/python3", ws.display()),
        format!("#!/usr/bin/env -S {}/.venv/bin/python3 -u", ws.display()),
        format!("#! {}/run.sh", ws.display()),
    ]
    .iter()
    .enumerate()
    {
        put(
            &home.join(".local/bin/tool"),
            &format!("{first}\nimport sys\n"),
        );
        let m = scan(&home, std::slice::from_ref(&ws));
        assert_eq!(m.found.len(), 1, "{i}: {m:?}");
        assert_eq!(m.found[0].line, 1, "{i}: {m:?}");
    }
    // An interpreter elsewhere names nothing.
    put(
        &home.join(".local/bin/tool"),
        "#!/usr/bin/python3\nimport sys\n",
    );
    let m = scan(&home, std::slice::from_ref(&ws));
    assert!(m.found.is_empty(), "{m:?}");
    std::fs::remove_dir_all(&t).unwrap();
}

/// atk22d F6: past the budget of paths resolved the scan fails closed
/// and says so (it stopped silently).
#[test]
fn too_many_paths_to_resolve_is_over_budget() {
    let t = tempdir("resolve-budget");
    let (home, ws) = (t.join("home"), t.join("proj"));
    std::fs::create_dir_all(&ws).unwrap();
    let mut text = String::new();
    for i in 0..(super::MAX_RESOLVE / 10 + 10) {
        text.push_str(&format!(
            "alias a{i}='x /p{i}/a /p{i}/b /p{i}/c /p{i}/d /p{i}/e /p{i}/f /p{i}/g /p{i}/h /p{i}/i /p{i}/j /p{i}/k'\n"
        ));
    }
    put(&home.join(".bashrc"), &text);
    let m = scan(&home, std::slice::from_ref(&ws));
    assert!(
        m.over_budget
            .as_deref()
            .is_some_and(|w| w.contains("more than")),
        "{:?}",
        m.over_budget
    );
    std::fs::remove_dir_all(&t).unwrap();
}

/// atk22d F11: tool configurations that name a folder of programs or a
/// program in the project (docker, terraform, kubectl, the AWS CLI) are
/// mentions of it.
#[test]
fn tool_configurations_naming_program_folders_are_mentions() {
    let t = tempdir("tool-configs");
    let (home, ws) = (t.join("home"), t.join("proj"));
    std::fs::create_dir_all(ws.join("plugins")).unwrap();
    let p = ws.display();
    for (rel, text) in [
        (
            ".docker/config.json",
            format!("{{\"auths\": {{}}, \"cliPluginsExtraDirs\": [\"{p}/plugins\"]}}"),
        ),
        (
            ".terraformrc",
            format!(
                "provider_installation {{\n  dev_overrides {{\n    \"hashicorp/x\" = \"{p}/bin\"\n  }}\n  direct {{}}\n}}\n"
            ),
        ),
        (
            ".kube/config",
            format!(
                "users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {p}/auth.sh\n"
            ),
        ),
        (
            ".aws/config",
            format!("[default]\ncredential_process = {p}/cred.sh --profile x\n"),
        ),
    ] {
        let _ = std::fs::remove_dir_all(&home);
        put(&home.join(rel), &text);
        let m = scan(&home, std::slice::from_ref(&ws));
        assert_eq!(m.found.len(), 1, "{rel}: {m:?}");
    }
    std::fs::remove_dir_all(&t).unwrap();
}

/// atk22d F12: the user's own plugin kept in git (a checkout without a
/// remote, or one they committed in) is read, a cloned one is not (links only, ADR 0206); a folder
/// named like state deeper in the configuration (`lua/plugins/db`) is
/// read, right below the place (`~/.vim/view`) it is not.
#[test]
fn own_plugin_checkouts_and_deep_state_names_are_read() {
    let t = tempdir("own-plugins");
    let (home, ws) = (t.join("home"), t.join("proj"));
    std::fs::create_dir_all(&ws).unwrap();
    let line = format!("source {}/.vimlocal\n", ws.display());
    let own = home.join(".vim/pack/mine/start/work");
    put(&own.join("plugin/work.vim"), &line);
    put(&own.join(".git/HEAD"), "ref: refs/heads/main\n");
    let m = scan(&home, std::slice::from_ref(&ws));
    assert_eq!(m.found.len(), 1, "own checkout: {m:?}");
    put(
        &own.join(".git/config"),
        "[remote \"origin\"]\n\turl = https://example.test/x.git\n",
    );
    put(
        &own.join(".git/logs/HEAD"),
        "0000 1111 A <a@x> 1 +0000\tclone: from https://example.test/x.git\n",
    );
    let m = scan(&home, std::slice::from_ref(&ws));
    assert!(m.found.is_empty(), "a clone is links only: {m:?}");
    // The user committed in it: their own plugin, pushed somewhere.
    put(
        &own.join(".git/logs/HEAD"),
        "0000 1111 A <a@x> 1 +0000\tclone: from https://example.test/x.git\n\
         1111 2222 A <a@x> 2 +0000\tcommit: load the project's settings\n",
    );
    let m = scan(&home, std::slice::from_ref(&ws));
    assert_eq!(m.found.len(), 1, "own plugin with a remote: {m:?}");
    std::fs::remove_dir_all(home.join(".vim")).unwrap();
    put(
        &home.join(".config/nvim/lua/plugins/db/init.lua"),
        &format!("vim.opt.rtp:append(\"{}/nvim\")\n", ws.display()),
    );
    let m = scan(&home, std::slice::from_ref(&ws));
    assert_eq!(m.found.len(), 1, "deep db folder: {m:?}");
    std::fs::remove_dir_all(home.join(".config")).unwrap();
    put(&home.join(".vim/view/x.vim"), &line);
    let m = scan(&home, std::slice::from_ref(&ws));
    assert!(m.found.is_empty(), "vim's view folder is state: {m:?}");
    std::fs::remove_dir_all(&t).unwrap();
}

/// atk22d F2: editable installs and module links in the home's Python
/// environments (pyenv, pipx, virtualenvs, conda) name the project.
#[test]
fn editable_installs_in_the_homes_environments_are_mentions() {
    let t = tempdir("editables");
    let (home, ws) = (t.join("home"), t.join("proj"));
    std::fs::create_dir_all(ws.join("src/mytool")).unwrap();
    let src = format!("{}/src\n", ws.display());
    for (rel, text) in [
        (
            ".pyenv/versions/3.11.9/lib/python3.11/site-packages/__editable__.mytool-0.1.pth",
            src.clone(),
        ),
        (
            ".local/share/pipx/venvs/mytool/lib/python3.12/site-packages/__editable__.mytool-0.1.pth",
            src.clone(),
        ),
        (
            ".virtualenvs/main/lib/python3.11/site-packages/mytool.egg-link",
            format!("{src}.\n"),
        ),
        (
            "miniconda3/envs/x/lib/python3.10/site-packages/__editable___mytool_finder.py",
            format!("MAPPING = {{'mytool': '{}/src/mytool'}}\n", ws.display()),
        ),
    ] {
        let _ = std::fs::remove_dir_all(&home);
        put(&home.join(rel), &text);
        let m = scan(&home, std::slice::from_ref(&ws));
        assert_eq!(m.found.len(), 1, "{rel}: {m:?}");
    }
    let _ = std::fs::remove_dir_all(&home);
    let site = home.join(".pyenv/versions/3.11.9/lib/python3.11/site-packages");
    std::fs::create_dir_all(&site).unwrap();
    std::os::unix::fs::symlink(ws.join("src/mytool"), site.join("mytool")).unwrap();
    let m = scan(&home, std::slice::from_ref(&ws));
    assert_eq!(m.found.len(), 1, "a linked module: {m:?}");
    std::fs::remove_dir_all(&t).unwrap();
}

/// atk22d F8: oh-my-zsh's dotenv allow list naming the project is a
/// mention (its plugin sources the project's `.env` on `cd`).
#[test]
fn a_dotenv_allow_list_naming_the_project_is_a_mention() {
    let t = tempdir("dotenv-allow");
    let (home, ws) = (t.join("home"), t.join("proj"));
    std::fs::create_dir_all(&ws).unwrap();
    put(
        &home.join(".oh-my-zsh/cache/dotenv-allowed.list"),
        &format!("{}\n", ws.display()),
    );
    let m = scan(&home, std::slice::from_ref(&ws));
    assert_eq!(m.found.len(), 1, "{m:?}");
    std::fs::remove_dir_all(&t).unwrap();
}
