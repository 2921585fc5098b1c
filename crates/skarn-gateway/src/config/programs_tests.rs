//! Tests of [`super`]: where an unconfined server's code comes from.

use super::*;

fn cfg(text: &str, dir: &Path) -> Config {
    let mut c = Config::parse(text, "t.toml").unwrap();
    c.path = Some(dir.join("skarn.toml"));
    c
}

#[test]
fn a_program_in_a_project_is_writable_code() {
    let t = skarn_test_support::TempDir::new("programs");
    let proj = t.dir("proj");
    std::fs::write(proj.join("srv.py"), "").unwrap();
    let c = cfg(
        "[servers.a]\ncommand = \"/usr/bin/env\"\nargs = [\"python3\", \"srv.py\"]\n\
         [servers.a.sandbox]\nenabled = false\n\
         [servers.b]\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"cat\"]\n\
         [servers.b.sandbox]\nenabled = false\n\
         [servers.c]\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"cat\"]\n\
         env = { PYTHONPATH = \"./lib\" }\n[servers.c.sandbox]\nenabled = false\n",
        &proj,
    );
    let found = c.unconfined_from_writable();
    let aliases: Vec<&str> = found.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(aliases, ["a", "c"], "{found:?}");
    let npx = format!(
        "[servers.n]\ncommand = \"npx\"\nargs = [\"-y\", \"@scope/pkg\"]\ncwd = {:?}\n\
         [servers.n.sandbox]\nenabled = false\n\
         [servers.p]\ncommand = \"python3\"\nargs = [\"-m\", \"srv\"]\ncwd = {:?}\n\
         [servers.p.sandbox]\nenabled = false\n",
        proj.display().to_string(),
        proj.display().to_string()
    );
    let found = cfg(&npx, &proj).unconfined_from_writable();
    let aliases: Vec<&str> = found.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(aliases, ["n", "p"], "{found:?}");
    // Any variable naming a program or a search path there (F8).
    let p = proj.display().to_string();
    let vars = format!(
        "[servers.a]\ncommand = \"/bin/sh\"\nenv = {{ PATH = \"/usr/bin:{p}/bin\" }}\n\
         [servers.a.sandbox]\nenabled = false\n\
         [servers.b]\ncommand = \"/bin/sh\"\nenv = {{ GIT_SSH_COMMAND = \"{p}/x -v\" }}\n\
         [servers.b.sandbox]\nenabled = false\n\
         [servers.c]\ncommand = \"/bin/sh\"\nenv = {{ JAVA_TOOL_OPTIONS = \"-javaagent:{p}/a.jar\" }}\n\
         [servers.c.sandbox]\nenabled = false\n\
         [servers.d]\ncommand = \"/bin/sh\"\ncwd = \"{p}\"\nenv = {{ PAGER = \"bin/pager\" }}\n\
         [servers.d.sandbox]\nenabled = false\n\
         [servers.e]\ncommand = \"/bin/sh\"\nenv = {{ TOKEN = \"abc\", PATH = \"/usr/bin:/bin\" }}\n\
         [servers.e.sandbox]\nenabled = false\n"
    );
    let found = cfg(&vars, &proj).unconfined_from_writable();
    let aliases: Vec<&str> = found.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(aliases, ["a", "b", "c", "d"], "{found:?}");
}

#[test]
fn an_interpreter_script_is_judged_as_it_resolves_it() {
    let t = skarn_test_support::TempDir::new("programs-script");
    let proj = t.dir("proj");
    std::fs::write(proj.join("srv.js"), "").unwrap();
    std::fs::create_dir(proj.join("tool")).unwrap();
    std::fs::write(proj.join("tool/__main__.py"), "").unwrap();
    let p = proj.display().to_string();
    // `node srv` runs `srv.js`; `python3 -W ignore gen` a missing `gen`
    // the agent may create; `env node app`; an absolute script outside
    // the project stays unconfined.
    let text = format!(
        "[servers.a]\ncommand = \"node\"\nargs = [\"srv\"]\ncwd = \"{p}\"\n\
         [servers.a.sandbox]\nenabled = false\n\
         [servers.b]\ncommand = \"python3\"\nargs = [\"-W\", \"ignore\", \"gen\"]\ncwd = \"{p}\"\n\
         [servers.b.sandbox]\nenabled = false\n\
         [servers.c]\ncommand = \"/usr/bin/env\"\nargs = [\"FOO=1\", \"node\", \"app\"]\ncwd = \"{p}\"\n\
         [servers.c.sandbox]\nenabled = false\n\
         [servers.d]\ncommand = \"node\"\nargs = [\"/usr/lib/x/srv.js\", \"8080\"]\n\
         [servers.d.sandbox]\nenabled = false\n"
    );
    let found = cfg(&text, &proj).unconfined_from_writable();
    let aliases: Vec<&str> = found.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(aliases, ["a", "b", "c"], "{found:?}");
    assert!(found[0].1.contains("the script node runs"), "{found:?}");
}
