use super::*;

#[test]
fn an_applications_own_settings_run_nothing() {
    let text = b"# app\nDATABASE_URL=postgres://localhost/db\nexport SECRET_KEY='x'\n\
                 NODE_ENV=development\nPORT=3000\nPYTHONUNBUFFERED=1\n\
                 APP_KEY=base64:abc\n\nMULTI=\"a\nb\"\n";
    assert_eq!(code_variable(text), None);
}

#[test]
fn variables_that_start_programs_are_found_in_every_spelling() {
    for (text, name) in [
        (&b"A=1\nBASH_ENV=/w/x.sh\n"[..], "BASH_ENV"),
        (b"export NODE_OPTIONS=--require ./x.js", "NODE_OPTIONS"),
        (b"\xef\xbb\xbfLD_PRELOAD=/w/x.so", "LD_PRELOAD"),
        (b"A=1\r  AIDER_LINT_CMD = python: touch x", "AIDER_LINT_CMD"),
        (b"'GIT_CONFIG_COUNT'=1", "GIT_CONFIG_COUNT"),
        (b"PATH: /w/bin", "PATH"),
        (b"BASH_FUNC_ls%%=() { id; }", "BASH_FUNC_ls%%"),
        (b"X=\"a\nPYTHONPATH=/w\"", "PYTHONPATH"),
        (b"export\tkubeconfig=/w/k", "kubeconfig"),
        (b"FOO_COMMAND=x", "FOO_COMMAND"),
    ] {
        assert_eq!(
            code_variable(text).map(|(_, n)| n),
            Some(name.to_string()),
            "{:?}",
            String::from_utf8_lossy(text)
        );
    }
}

#[test]
fn the_names_are_the_listed_files() {
    assert!(is_env_file(OsStr::new(".env")));
    assert!(is_env_file(OsStr::new(".env.local")));
    assert!(!is_env_file(OsStr::new(".env.example")));
    assert!(!is_env_file(OsStr::new("env")));
}

#[test]
fn no_line_break_or_blank_of_any_loader_hides_a_name() {
    // atk22h F4: a byte-order mark inside the file, U+2028 after a quoted
    // value (a line break to JavaScript), U+001C before the name (a blank
    // to Python), a zero-width space.
    for (text, name) in [
        ("APP=demo\n\u{feff}BASH_ENV=/w/t.sh\n", "BASH_ENV"),
        (
            "PORT='8080'\u{2028}NODE_OPTIONS=--require=/w/t.js\n",
            "NODE_OPTIONS",
        ),
        ("\u{1c}BASH_ENV=/w/t.sh\n", "BASH_ENV"),
        ("A=1\u{200b}LD_PRELOAD=/w/x.so", "LD_PRELOAD"),
        ("A=\"x\" # NODE_OPTIONS=--require=/w/t.js", "NODE_OPTIONS"),
    ] {
        assert_eq!(
            code_variable(text.as_bytes()).map(|(_, n)| n),
            Some(name.to_string()),
            "{text:?}"
        );
    }
}

#[test]
fn build_tools_variables_are_found() {
    // atk22h F5: make reads MAKEFILES first; flags name linkers, wrappers
    // and plugins; .NET, Tcl, ccache, less and Python's warnings load or
    // run code.
    for name in [
        "MAKEFILES",
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "CFLAGS",
        "CGO_LDFLAGS",
        "GOENV",
        "DOTNET_STARTUP_HOOKS",
        "TCL_LIBRARY",
        "CCACHE_PREFIX",
        "LESS",
        "PYTHONWARNINGS",
        "LUA_PATH",
        "PERL5OPT",
        "RUBYOPT",
        "GTK_MODULES",
    ] {
        let text = format!("{name}=/w/x\n");
        assert_eq!(
            code_variable(text.as_bytes()).map(|(_, n)| n),
            Some(name.to_string())
        );
    }
}
