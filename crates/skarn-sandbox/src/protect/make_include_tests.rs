#![cfg(unix)]

use super::*;

#[test]
fn make_program_variables_are_code() {
    for n in [
        "RM",
        "rm",
        "AR",
        "LD",
        "MAKE",
        "SHELL",
        ".SHELLFLAGS",
        "COMPILE.c",
        "LINK.o",
    ] {
        assert!(make_program(n), "{n}");
    }
    for n in ["APP_ENV", "DEBUG", "RMX", "PORT"] {
        assert!(!make_program(n), "{n}");
    }
    assert!(crate::protect::dotenv::code_variable(b"RM=sh\n").is_some());
    assert!(crate::protect::dotenv::code_variable(b"export AR=python3\n").is_some());
    assert!(crate::protect::dotenv::code_variable(b"APP_ENV=production\n").is_none());
}

#[test]
fn include_words_are_read_as_make_reads_them() {
    let t = "-include .env\ninclude config/local.mk other.mk # c\nsinclude \\\n  $(wildcard \
             conf/*.mk)\ninclude $(X).mk\nall:\n\tinclude not-this\n";
    assert_eq!(
        include_words(t),
        vec![".env", "config/local.mk", "other.mk", "conf/*.mk"]
    );
}

#[test]
fn recipes_command_variables_are_found() {
    let t = "GO ?= go\nall:\n\t$(GO) build\n\t@$(Q)$(NODE) x.js\n\tcd d && ${PY} -m x; \
             echo $(NOT)\nclean:\n\t-$(RM) *.o\n";
    let v = command_variables(t);
    for n in ["GO", "Q", "NODE", "PY", "RM"] {
        assert!(v.iter().any(|x| x == n), "{n}: {v:?}");
    }
    assert!(!v.iter().any(|x| x == "NOT"), "{v:?}");
}

#[test]
fn included_files_and_assignments_are_found() {
    let t = skarn_test_support::TempDir::new("make-include");
    let d = t.dir("p");
    t.file(
        "p/Makefile",
        "-include .env\ninclude mk/*.mk\nrun:\n\t$(GO) run .\n",
    );
    t.file("p/.env", "GO=node\n");
    t.file("p/mk/a.mk", "X=1\n");
    t.file("p/mk/b.txt", "X=1\n");
    assert!(included(&d.join(".env"), Some(&d)));
    assert!(included(&d.join("mk/a.mk"), Some(&d)));
    assert!(included(&d.join("mk/../mk/a.mk"), None));
    assert!(!included(&d.join("mk/b.txt"), Some(&d)));
    assert!(!included(&d.join("main.c"), Some(&d)));
    let mut f = included_files(&d);
    f.sort();
    assert_eq!(f, vec![d.join(".env"), d.join("mk/a.mk")]);
    assert_eq!(
        assigns_command("A=1\nGO=node\n", &d),
        Some((2, "GO".into()))
    );
    assert_eq!(
        assigns_command("export GO := node\n", &d),
        Some((1, "GO".into()))
    );
    assert_eq!(assigns_command("GOPATH=x\nA=1\n", &d), None);
    assert_eq!(
        assigns_command("GO=sh\n", &d.join("mk")),
        Some((1, "GO".into()))
    );
    let why = crate::protect::dotenv::judge(&d.join(".env")).unwrap_or_default();
    assert!(why.contains("GO"), "{why}");
}
