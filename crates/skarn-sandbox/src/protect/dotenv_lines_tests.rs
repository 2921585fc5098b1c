use super::*;

#[test]
fn a_shell_runs_every_line_that_is_not_an_assignment() {
    // atk22k F1c: bare command lines, commands after assignments, words a
    // shell splits at a blank, and lines only `\n` ends.
    for text in [
        "A=1\ntouch pwned\n",
        "touch /tmp/pwned",
        "curl x|sh\n",
        "PORT=3000 make evil\n",
        "GREETING=hello world\n",
        "A=1\rtouch x\n",
        "KEY = value\n",
        "\u{feff}A=1\n",
        "export A=1; id\n",
        "A='x\n' id\n",
        "A=1 >out\n",
        "make\n",
        "\"A\"=1\n",
    ] {
        assert!(shell_command(text).is_some(), "{text:?}");
    }
}

#[test]
fn assignments_comments_and_quoted_values_are_data_to_a_shell() {
    for text in [
        "# app\nA=1\n\nexport B='two words'\nC=\"multi\nline # not a comment\ntouch x\"\n",
        "A=1 B=2 # both set\r\n\r\nexport C D=3\r\n",
        "KEY=\"-----BEGIN KEY-----\nMIIEabc+/==\n-----END KEY-----\"\n",
        "URL=postgres://u@localhost/db\n  \t\n",
        "A=x#y\n",
    ] {
        assert_eq!(shell_command(text), None, "{text:?}");
    }
    assert_eq!(shell_command("A=1\n\ntouch x\n").map(|(l, _)| l), Some(3));
}

#[test]
fn make_runs_shell_assignments_functions_rules_and_directives() {
    // atk22k F16: what `include .env` makes make run at parse time (or at
    // the next build), also inside what a shell reads as a quoted value.
    for text in [
        "X != touch pwned\n",
        "X:=$(shell touch pwned)\n",
        "X = ${shell id}\n",
        "$(shell id)\n",
        "A='\nall:\n\ttouch pwned\n#'\n",
        "t: ; touch pwned\n",
        "A='\ninclude evil.mk\n#'\n",
        "load evil.so\n",
        "-include x\n",
        "X \\\n!= id\n",
        "X :!= id\n",
        "export X != id\n",
    ] {
        assert!(make_line(text).is_some(), "{text:?}");
    }
    for text in [
        "A=1\nexport B = two words\nC := $(A)\nD ::= ${B} $$\nE ?= 1\nF += x\n",
        "URL=postgres://h:5432/db # x: y\n",
        "KEY=\"-----BEGIN KEY-----\nMIIEabc+/==\n-----END KEY-----\"\n",
        "# x: $(shell id)\n\n",
        "A=x\\#$(shell id)\n",
    ] {
        let r = make_line(text);
        // The escaped `#` is no comment: the function is read.
        if text.contains("\\#") {
            assert!(r.is_some(), "{text:?}");
        } else {
            assert_eq!(r, None, "{text:?}");
        }
    }
}

#[test]
fn the_env_judge_counts_command_lines() {
    let t = skarn_test_support::TempDir::new("dotenv-lines");
    let p = t.file(".env", "APP=demo\ntouch pwned\n");
    assert!(crate::protect::dotenv::judge(&p).is_some());
    assert!(crate::protect::dotenv::code_variable(b"X != touch pwned\n").is_some());
}
