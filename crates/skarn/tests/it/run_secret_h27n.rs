//! Attack atk27l F1, F2, F4, F5, F6, what helper h27n fixed (ADR 0283):
//! a `command` source whose text hides what it loads (`#!` words, a
//! shell's `cd`, quoting, `PATH` lookups inside a shell string) runs with
//! every place a sandboxed run may write hidden, so code an earlier run
//! planted there is never run by the host. Each test plants, through a
//! real `skarn run` in a project (recorded in `granted-dirs`), a helper
//! that makes a marker outside every grant; a later run (and a gateway
//! server) granted the secret must not make it, and an honest source in
//! `~/bin` still gives its value.

use serde_json::json;

use crate::common::{code, err, host_has, out, run_command, sibling};
use crate::serve_sandbox::Session;

use crate::support_secret_sources::{
    PATH, VALUE, check, claude_write, config, granted, mark, plant, script, setup,
};

/// F4: `sh -c "cd ~/code && ./proj/bin/get-token"`: the helper lies in a
/// project an earlier run rewrote.
#[test]
fn a_cd_then_relative_helper_in_a_project_is_not_run() {
    let s = setup("h27n_f4");
    let proj = s.home.join("code/proj");
    script(
        &proj.join("bin/get-token"),
        &format!("#!/bin/sh\ncat {}\n", s.safe.join("val").display()),
    );
    // Planted before the secret is configured (once configured, the
    // text's reading keeps the helper read-only: ADR 0211).
    plant(
        &s,
        &proj,
        &format!("echo '{}' >> bin/get-token", mark(&s)),
        PATH,
    );
    config(
        &s.home,
        "cdtok",
        &["sh", "-c", "cd ~/code && ./proj/bin/get-token"],
    );
    assert!(
        std::fs::read_to_string(proj.join("bin/get-token"))
            .unwrap()
            .contains("ran-as")
    );
    let o = granted(&s, "cdtok", PATH);
    check(&s, &o, PATH);
}

/// F5: a quoted path with a space in a shell string.
#[test]
fn a_quoted_path_with_a_space_in_a_project_is_not_run() {
    let s = setup("h27n_f5");
    let proj = s.root.join("my ws");
    let tok = proj.join("tools/tok.sh");
    script(&tok, &format!("cat {}\n", s.safe.join("val").display()));
    let line = format!("sh '{}'", tok.display());
    // Planted before the secret is configured (once configured, the
    // text's reading keeps the helper read-only: ADR 0211).
    plant(
        &s,
        &proj,
        &format!("echo '{}' >> tools/tok.sh", mark(&s)),
        PATH,
    );
    config(&s.home, "sptok", &["sh", "-c", &line]);
    let o = granted(&s, "sptok", PATH);
    check(&s, &o, PATH);
}

/// F6: `sh -c "op read ..."` with `op` planted by an earlier run in a
/// project's `bin` that is first on the caller's `PATH`: the shell finds
/// the real `op` (the project's `bin` is hidden), and the value works.
#[test]
fn a_bare_name_in_a_shell_string_does_not_find_a_planted_program() {
    let s = setup("h27n_f6");
    let tools = s.root.join("tools");
    std::fs::create_dir_all(tools.join("bin")).unwrap();
    script(
        &s.safe.join("bin/op"),
        &format!("#!/bin/sh\ncat {}\n", s.safe.join("val").display()),
    );
    config(
        &s.home,
        "opsh",
        &["/bin/sh", "-c", "op read op://vault/gh/token"],
    );
    plant(
        &s,
        &tools,
        &format!(
            "printf '#!/bin/sh\\n{}\\ncat {}\\n' > bin/op; chmod 755 bin/op",
            mark(&s),
            s.safe.join("val").display()
        ),
        PATH,
    );
    assert!(tools.join("bin/op").exists());
    let path = format!(
        "{}:{}:{PATH}",
        tools.join("bin").display(),
        s.safe.join("bin").display()
    );
    let o = granted(&s, "opsh", &path);
    check(&s, &o, &path);
    assert_eq!(
        code(&o),
        0,
        "the real op was not found: {}{}",
        out(&o),
        err(&o)
    );
}

/// F2: the `#!` interpreter of a helper a shell string names lies in a
/// project's virtual environment, which an earlier run replaced.
#[test]
fn a_replaced_interpreter_of_a_named_script_is_not_run() {
    let s = setup("h27n_f2");
    let ws = s.root.join("ws");
    std::fs::create_dir_all(ws.join(".venv/bin")).unwrap();
    std::os::unix::fs::symlink("/bin/sh", ws.join(".venv/bin/interp")).unwrap();
    let tok2 = s.safe.join("tok2");
    script(
        &tok2,
        &format!(
            "#!{}\ncat {}\n",
            ws.join(".venv/bin/interp").display(),
            s.safe.join("val").display()
        ),
    );
    config(&s.home, "tok2", &["sh", "-c", &tok2.display().to_string()]);
    plant(
        &s,
        &ws,
        &format!(
            "rm -f .venv/bin/interp; printf '#!/bin/sh\\n{}\\nexec /bin/sh \"$@\"\\n' > .venv/bin/interp; chmod 755 .venv/bin/interp",
            mark(&s)
        ),
        PATH,
    );
    let o = granted(&s, "tok2", PATH);
    check(&s, &o, PATH);
}

/// F1: `#!/usr/bin/env -S PYTHONPATH=<ws>/lib python3`: a `json` module
/// an earlier run planted in the project's `lib` is not imported (the
/// project is hidden: Python's own `json` is), and the value works.
#[test]
fn a_search_path_on_the_hashbang_line_does_not_load_a_planted_module() {
    if !host_has("python3", "--version") {
        skarn_test_support::skip!("python3 is not installed");
    }
    let s = setup("h27n_f1");
    let ws = s.root.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let tok = s.safe.join("tok");
    script(
        &tok,
        &format!(
            "#!/usr/bin/env -S PYTHONPATH={}/lib python3\nimport json\n\
             print(json.dumps(open({:?}).read().strip()).strip('\"'))\n",
            ws.display(),
            s.safe.join("val").display().to_string()
        ),
    );
    config(&s.home, "pytok", &[&tok.display().to_string()]);
    plant(
        &s,
        &ws,
        &format!(
            "mkdir -p lib && printf 'import os\\nos.system(\"{}\")\\n' > lib/json.py",
            mark(&s)
        ),
        PATH,
    );
    // The run's module named like the standard library's is set aside
    // since atk22k F14: put back from outside, so that the source's own
    // protection is what is tried.
    if !ws.join("lib/json.py").exists() {
        std::fs::write(
            ws.join("lib/json.py"),
            format!("import os\nos.system(\"{}\")\n", mark(&s)),
        )
        .unwrap();
    }
    let o = granted(&s, "pytok", PATH);
    check(&s, &o, PATH);
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
}

/// A gateway server granted a secret whose source is F4's: starting it
/// does not run the planted helper; a server granted the honest source
/// gets its placeholder.
#[test]
fn a_gateway_servers_command_source_does_not_run_planted_code() {
    let s = setup("h27n_gw");
    let proj = s.home.join("code/proj");
    script(
        &proj.join("bin/get-token"),
        &format!("#!/bin/sh\ncat {}\n", s.safe.join("val").display()),
    );
    // Planted before the secret is configured (once configured, the
    // text's reading keeps the helper read-only: ADR 0211).
    plant(
        &s,
        &proj,
        &format!("echo '{}' >> bin/get-token", mark(&s)),
        PATH,
    );
    config(
        &s.home,
        "cdtok",
        &["sh", "-c", "cd ~/code && ./proj/bin/get-token"],
    );
    let cfg = s.root.join("skarn.toml");
    let server = sibling("skarn-hostile-server").display().to_string();
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n\
             [servers.bad]\ncommand = {server:?}\nargs = [\"--name\", \"bad\"]\n\
             env = {{ TOKEN = {{ secret = \"cdtok\" }} }}\n\n\
             [servers.good]\ncommand = {server:?}\nargs = [\"--name\", \"good\"]\n\
             env = {{ TOKEN = {{ secret = \"ok\" }} }}\n"
        ),
    )
    .unwrap();
    let log = s.root.join("serve.log");
    let mut g = Session::start_logging(&cfg, &s.home, &log, &[], "info");
    g.settle();
    let said = g.call(
        2,
        "good__attack",
        json!({ "sh": "echo TOKEN=$TOKEN; echo done" }),
    );
    g.finish();
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !s.marker.exists(),
        "the gateway ran the planted code: {}\n{log}",
        std::fs::read_to_string(&s.marker).unwrap_or_default()
    );
    assert!(!said.contains(VALUE) && !log.contains(VALUE));
    assert!(
        said.contains("TOKEN=tok") || (said.contains("TOKEN=") && said.contains("done")),
        "the honest server did not run:\n{said}\n{log}"
    );
}

/// F6b: `["git", "mytoken"]`: git looks `git-mytoken` up on the whole
/// `PATH`, where an earlier run planted one in a project's `bin` listed
/// before the real one.
#[test]
fn a_launchers_sub_command_on_path_is_not_a_planted_program() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    let s = setup("h27n_f6b");
    let tools = s.root.join("tools");
    std::fs::create_dir_all(tools.join("bin")).unwrap();
    script(
        &s.safe.join("bin/git-mytoken"),
        &format!("#!/bin/sh\ncat {}\n", s.safe.join("val").display()),
    );
    config(&s.home, "gt", &["git", "mytoken"]);
    plant(
        &s,
        &tools,
        &format!(
            "printf '#!/bin/sh\\n{}\\ncat {}\\n' > bin/git-mytoken; chmod 755 bin/git-mytoken",
            mark(&s),
            s.safe.join("val").display()
        ),
        PATH,
    );
    assert!(tools.join("bin/git-mytoken").exists());
    let path = format!(
        "{PATH}:{}:{}",
        tools.join("bin").display(),
        s.safe.join("bin").display()
    );
    let o = granted(&s, "gt", &path);
    check(&s, &o, &path);
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
}

/// F3: the caller's `PYTHONPATH` names a project where an earlier run
/// planted `json.py`: the source (`python3 <safe>/tok.py`) imports
/// Python's own `json`, and the value works.
#[test]
fn a_search_path_variable_of_the_caller_does_not_load_a_planted_module() {
    if !host_has("python3", "--version") {
        skarn_test_support::skip!("python3 is not installed");
    }
    let s = setup("h27n_f3");
    let ws = s.root.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let tok = s.safe.join("tok.py");
    std::fs::write(
        &tok,
        format!(
            "import json\nprint(json.dumps(open({:?}).read().strip()).strip('\"'))\n",
            s.safe.join("val").display().to_string()
        ),
    )
    .unwrap();
    config(&s.home, "pp", &["python3", &tok.display().to_string()]);
    plant(
        &s,
        &ws,
        &format!(
            "printf 'import os\\nos.system(\"{}\")\\n' > json.py",
            mark(&s)
        ),
        PATH,
    );
    // Set aside since atk22k F14: put back from outside (see above).
    if !ws.join("json.py").exists() {
        std::fs::write(
            ws.join("json.py"),
            format!("import os\nos.system(\"{}\")\n", mark(&s)),
        )
        .unwrap();
    }
    let o = run_command(
        &s.ws2,
        &s.home,
        &["--secret", "pp"],
        &["sh", "-c", "echo PP=$PP"],
    )
    .env("PATH", PATH)
    .env("PYTHONPATH", &ws)
    .output()
    .unwrap();
    check(&s, &o, PATH);
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
}

/// F4b: the file a source reads after a `cd` (`cd <sec> && cat tok`) is
/// hidden from a run whose read grant covers it, like a file named
/// absolutely.
#[test]
fn a_value_file_read_after_a_cd_is_hidden_from_runs() {
    let s = setup("h27n_f4b");
    let sec = s.root.join("sec");
    std::fs::create_dir_all(&sec).unwrap();
    std::fs::write(sec.join("tok"), format!("{VALUE}\n")).unwrap();
    let line = format!("cd {} && cat tok", sec.display());
    config(&s.home, "cdval", &["sh", "-c", &line]);
    let o = run_command(
        &s.ws2,
        &s.home,
        &["--read", &sec.display().to_string()],
        &["sh", "-c", &format!("cat {}/tok; echo done", sec.display())],
    )
    .env("PATH", PATH)
    .output()
    .unwrap();
    assert!(
        !out(&o).contains(VALUE),
        "a run read the value file: {}",
        out(&o)
    );
    assert!(out(&o).contains("done"), "{}{}", out(&o), err(&o));
}

/// F4c (and F5's spelling): the agent's Write tool may not rewrite a
/// helper a source reaches after a `cd`, or through a quoted path with a
/// space.
#[test]
fn the_agents_write_tool_cannot_rewrite_a_helper_reached_after_a_cd_or_quoted() {
    let s = setup("h27n_f4c");
    let proj = s.home.join("code/proj");
    let helper = proj.join("bin/get-token");
    script(&helper, "#!/bin/sh\necho x\n");
    let spaced = s.home.join("my ws/tools/tok.sh");
    script(&spaced, "echo x\n");
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&proj)
        .status();
    if !ok.is_ok_and(|s| s.success()) {
        skarn_test_support::skip!("git init failed");
    }
    std::fs::create_dir_all(s.home.join(".config/skarn")).unwrap();
    std::fs::write(
        s.home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.cdtok]\ncommand = [\"sh\", \"-c\", \"cd ~/code && ./proj/bin/get-token\"]\n\
             hosts = [\"example.test\"]\n\
             [secrets.sptok]\ncommand = [\"sh\", \"-c\", \"sh '{}'\"]\nhosts = [\"example.test\"]\n",
            spaced.display()
        ),
    )
    .unwrap();
    for f in [&helper, &spaced] {
        assert!(
            claude_write(f, &proj, &s.home, "#!/bin/sh\necho pwned\n").is_some(),
            "the hook let the agent rewrite {}",
            f.display()
        );
    }
}
