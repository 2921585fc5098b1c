//! The command line given to `CreateProcessW`: arguments quoted so that
//! the usual C runtime parser (`CommandLineToArgvW` rules) gives the
//! program back exactly the argv it was asked to run.

use super::plan_error::WindowsPlanError;

/// Quote one argument (not the program name): wrapped in quotes when empty
/// or holding a space, tab, newline or quote; backslashes doubled only
/// where they precede a quote.
pub(crate) fn quote_arg(arg: &str, out: &mut String) {
    let needs = arg.is_empty() || arg.contains([' ', '\t', '\n', '\u{b}', '"']);
    if !needs {
        out.push_str(arg);
        return;
    }
    out.push('"');
    let mut backslashes = 0usize;
    for c in arg.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                // Each backslash before a quote is doubled, then the quote escaped.
                out.extend(std::iter::repeat_n('\\', backslashes * 2 + 1));
                out.push('"');
                backslashes = 0;
            }
            _ => {
                out.extend(std::iter::repeat_n('\\', backslashes));
                out.push(c);
                backslashes = 0;
            }
        }
    }
    // Backslashes before the closing quote are doubled.
    out.extend(std::iter::repeat_n('\\', backslashes * 2));
    out.push('"');
}

/// The whole command line. The program name is parsed without escapes, so
/// a quote in it is refused; batch files are refused (cmd.exe re-parses
/// their arguments with other rules: run them as `cmd /c NAME ...`).
pub fn command_line(argv: &[String]) -> Result<String, WindowsPlanError> {
    let Some(program) = argv.first() else {
        return Err(WindowsPlanError::EmptyCommand);
    };
    if program.is_empty() || program.contains(['"', '\0']) {
        return Err(WindowsPlanError::BadProgram(program.clone()));
    }
    let lower = program.to_ascii_lowercase();
    if lower.ends_with(".bat") || lower.ends_with(".cmd") {
        return Err(WindowsPlanError::BatchFile(program.clone()));
    }
    if argv.iter().any(|a| a.contains('\0')) {
        return Err(WindowsPlanError::NulInArgument);
    }
    let mut s = String::new();
    if program.contains([' ', '\t']) {
        s.push('"');
        s.push_str(program);
        s.push('"');
    } else {
        s.push_str(program);
    }
    for a in &argv[1..] {
        s.push(' ');
        quote_arg(a, &mut s);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(v: &[&str]) -> String {
        command_line(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn quoting_follows_the_c_runtime_rules() {
        assert_eq!(line(&["git", "status"]), "git status");
        assert_eq!(line(&["cmd", "/c", "dir"]), "cmd /c dir");
        assert_eq!(line(&["a", ""]), "a \"\"");
        assert_eq!(line(&["a", "x y"]), "a \"x y\"");
        assert_eq!(line(&["a", "say \"hi\""]), "a \"say \\\"hi\\\"\"");
        assert_eq!(line(&["a", "C:\\dir\\"]), "a C:\\dir\\");
        assert_eq!(line(&["a", "C:\\my dir\\"]), "a \"C:\\my dir\\\\\"");
        assert_eq!(line(&["a", "\\\\\"x"]), "a \"\\\\\\\\\\\"x\"");
        assert_eq!(
            line(&["C:\\Program Files\\Git\\cmd\\git.exe", "log"]),
            "\"C:\\Program Files\\Git\\cmd\\git.exe\" log"
        );
    }

    #[test]
    fn refuses_what_cannot_be_passed_exactly() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(matches!(
            command_line(&[]),
            Err(WindowsPlanError::EmptyCommand)
        ));
        assert!(matches!(
            command_line(&v(&["build.BAT"])),
            Err(WindowsPlanError::BatchFile(_))
        ));
        assert!(matches!(
            command_line(&v(&["a\"b"])),
            Err(WindowsPlanError::BadProgram(_))
        ));
        assert!(matches!(
            command_line(&v(&["a", "x\0"])),
            Err(WindowsPlanError::NulInArgument)
        ));
    }
}
