use super::*;

#[test]
fn an_applications_own_settings_run_nothing() {
    let text = b"# app\nDATABASE_URL=postgres://localhost/db\nexport SECRET_KEY='x'\n\
                 NODE_ENV=development\nPORT=3000\nUPLOAD_PATH=/tmp/u\nPYTHONUNBUFFERED=1\n\
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
