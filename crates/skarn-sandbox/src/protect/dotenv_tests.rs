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

#[test]
fn a_hash_inside_quotes_hides_nothing() {
    // atk22k F1, F1b: a `#` inside a quoted value, or at the start of a
    // line of a multi-line quoted value, is the value's to every loader.
    for text in [
        "APP_NAME=\"demo #$(touch /tmp/p1)\"\n",
        "APP_TITLE=\"x\n#$(touch /tmp/p2)\"\n",
        "APP_TITLE='x\n#`id`'\n",
        "A=\"x\\\" #$(id)\"\n",
        "SSL_CERT_FILE=\" #/ca.pem\"\n",
        "NODE_EXTRA_CA_CERTS=' #/ca.pem'\n",
    ] {
        assert!(code_variable(text.as_bytes()).is_some(), "{text:?}");
    }
    // A comment after a closed quote, and comment lines, stay comments.
    for text in [
        "APP_NAME=\"demo\" # see https://docs.example/x\n",
        "# $(not run)\nPORT=3000 # the port\n",
        "MULTI=\"a\nb\"\n# https://x.example\n",
    ] {
        assert_eq!(code_variable(text.as_bytes()), None, "{text:?}");
    }
}

#[test]
fn a_bare_word_naming_a_file_beside_it_is_a_path() {
    // atk22k F2: `GOOGLE_APPLICATION_CREDENTIALS=gcloud-creds` is a path
    // relative to the loader's directory.
    let d = std::env::temp_dir().join(format!("skarn-dotenv-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("gcloud-creds"), "{}").unwrap();
    let judged = |t: &str| code_variable_in(t.as_bytes(), Some(&d)).map(|(_, n)| n);
    assert!(judged("SETTINGS=gcloud-creds\n").is_some());
    assert!(judged("A=1 B=gcloud-creds\n").is_some());
    assert_eq!(judged("MODE=production\nPORT=3000\n"), None);
    for t in [
        "GOOGLE_APPLICATION_CREDENTIALS=creds\n",
        "VIRTUAL_ENV=evil\n",
        "HGEDITOR=vi\n",
        "FCEDIT=vi\n",
        "JVM_ARGS=x\n",
    ] {
        assert!(code_variable(t.as_bytes()).is_some(), "{t:?}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}
