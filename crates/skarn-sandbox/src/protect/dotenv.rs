//! Environment files that agents and runtimes load into their own
//! process at start, on the host (issue 22, ADR 0246): Gemini CLI and
//! Qwen Code read `.env` of the directory they start in and of each
//! parent, aider reads `.env` of the repository's top and of the current
//! directory, and Bun (`bun run`, programs built with it) loads `.env`,
//! `.env.local` and `.env.<mode>[.local]`. What such a file sets becomes
//! the environment of the agent and of every command it starts: a
//! `BASH_ENV` is run by each of its shell commands, `NODE_OPTIONS` loads
//! code into each node it starts, `LD_PRELOAD` into every program, and an
//! `AIDER_LINT_CMD` is run by aider itself.
//!
//! A project's `.env` is also its application's own settings file, which
//! its code writes (`cp .env.example .env`, a framework's key
//! generator). So the file stays writable; what is judged is what it sets
//! ([`code_variable`]): a variable a host program runs or loads code by
//! ([`runs_code`]), and, deny by default, every assignment that is not
//! plainly data ([`crate::protect::dotenv_value`], ADR 0285: a name that
//! says a place, a program or a channel, a value that is a path, a
//! command, an option or an address). One such file that exists before a run is kept
//! read-only for it (the run must not change what the host already runs);
//! one made or changed during the run that sets such a variable is set
//! aside after it (refused in the copy-on-write layer), with the variable
//! and its line named. `.gemini/.env` and `.qwen/.env` lie in directories
//! protected whole ([`crate::protect::persistence::ENTRIES`]).

use std::ffi::OsStr;
use std::path::Path;

/// One environment file name, with who loads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvFile {
    /// The file's name (in any directory of the workspace).
    pub name: &'static str,
    /// Which host programs load it at their start.
    pub reason: &'static str,
}

const fn f(name: &'static str, reason: &'static str) -> EnvFile {
    EnvFile { name, reason }
}

/// Who loads the Bun names.
const BUN: &str = "Bun loads it into every program it runs here (bun run, agents built with Bun)";

/// The environment files loaded on their own by agents and runtimes
/// started in their directory (or below it).
pub const FILES: &[EnvFile] = &[
    f(
        ".env",
        "Gemini CLI and Qwen Code load it from the directory they start in and its parents, \
         aider from the repository's top and the current directory, Bun from the current \
         directory",
    ),
    f(".env.local", BUN),
    f(".env.development", BUN),
    f(".env.development.local", BUN),
    f(".env.production", BUN),
    f(".env.production.local", BUN),
    f(".env.test", BUN),
    f(".env.test.local", BUN),
];

/// Whether `name` is one of [`FILES`].
pub fn is_env_file(name: &OsStr) -> bool {
    FILES.iter().any(|f| name == f.name)
}

/// Variables a host program runs or loads code by, besides the callers'
/// start-up list ([`crate::protect::env_places::ENV_PLACES`]), which
/// is consulted too: the search path of programs, the home and its
/// relocations (whose start-up files the shells and git then read), and
/// configuration files that name commands (cloud and cluster credential
/// programs, OpenSSL engines).
const EXACT: &[&str] = &[
    // Gemini CLI reads the project's `.env`: these turn its own sandbox
    // off or swap its profile or system prompt (atk22l F7); its API key
    // stays an ordinary value.
    "GEMINI_SANDBOX",
    "GEMINI_SANDBOX_IMAGE",
    "SANDBOX_FLAGS",
    "SEATBELT_PROFILE",
    "GEMINI_SYSTEM_MD",
    "PATH",
    "HOME",
    "ENV",
    "PS1",
    "PS4",
    "KUBECONFIG",
    "AWS_CONFIG_FILE",
    "DOCKER_CONFIG",
    "OPENSSL_CONF",
    "OPENSSL_ENGINES",
    "GCONV_PATH",
    "PERL5DB",
    "PERLDB_OPTS",
    "NODE_REPL_EXTERNAL_MODULE",
    "PYTHONEXECUTABLE",
    "PYTHONPYCACHEPREFIX",
    "GOFLAGS",
    "GOTOOLCHAIN",
    "RUSTC",
    "RUSTDOC",
    "MAKEFLAGS",
    "CC",
    "CXX",
    "MAKEFILES",
    "GOENV",
    "GOROOT",
    "LESS",
    "PYTHONWARNINGS",
    "PYTHONBREAKPOINT",
    "PYTHONHOME",
    "PYTHONPLATLIBDIR",
    "PERL5OPT",
    "RUBYOPT",
    "EMACSLOADPATH",
    "CPATH",
];

/// Prefixes of variables that steer the loader, git, bash's exported
/// functions, the agents that load these files (every aider option is an
/// `AIDER_` variable: its lint and test commands), the package managers
/// and toolchains (programs and indexes they run or build from), and the
/// XDG homes (where every program's configuration is read).
const PREFIXES: &[&str] = &[
    "LD_",
    "DYLD_",
    "GIT_",
    "BASH_FUNC_",
    "AIDER_",
    "GEMINI_CLI_",
    "QWEN_",
    "NPM_CONFIG_",
    "YARN_",
    "PNPM_",
    "BUN_",
    "PIP_",
    "UV_",
    "CARGO_",
    "RUSTUP_",
    "XDG_",
    "CONDA_",
    "PIXI_",
    "MISE_",
    "DIRENV_",
    "JAVA_TOOL",
    "_JAVA",
    "JDK_JAVA",
    "DOTNET_",
    "COMPLUS_",
    "CORECLR_",
    "CCACHE_",
    "LUA_",
    "TCL",
    "TK_",
    "GTK_",
    "GIO_",
    "PERL5",
];

/// Shapes of the names of variables that name a program, its options or
/// its configuration (`FOO_COMMAND`, `FOO_OPTS`, `FOO_CONFIG_FILE`,
/// `FOO_HOME`). A project's own settings rarely take these shapes; its
/// paths (`UPLOAD_PATH`) and addresses (`DATABASE_URL`) do not.
const SUFFIXES: &[&str] = &[
    "_OPTIONS",
    "_OPTS",
    "_COMMAND",
    "_CMD",
    "_EDITOR",
    "_PAGER",
    "_ASKPASS",
    "_WRAPPER",
    "_PRELOAD",
    "_SHELL",
    "CONFIG",
    "_CONFIG_FILE",
    "_CONFIG_PATH",
    "_CONFIG_DIR",
    "_CONFIG_DIRS",
    "_CONFIG_HOME",
    "_HOME",
    "_LIBRARY_PATH",
    "_LOAD_PATH",
    "_EXEC_PATH",
    "_PLUGIN_PATH",
    "STARTUP",
    "FLAGS",
    "_PREFIX",
    "_LIBRARY",
    "_HOOKS",
    "_MODULES",
    "_MODULE_DIR",
];

/// Whether a host program runs or loads code by the variable `name`
/// (compared without case: Windows has none, and a variant spelling is
/// cheap to refuse).
pub fn runs_code(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    #[cfg(unix)]
    let listed = crate::protect::env_places::ENV_PLACES
        .iter()
        .any(|(n, secret)| !*secret && n.eq_ignore_ascii_case(&up));
    #[cfg(not(unix))]
    let listed = false;
    listed
        || EXACT.contains(&up.as_str())
        || crate::protect::make_include::make_program(&up)
        || PREFIXES.iter().any(|p| up.starts_with(p))
        || SUFFIXES
            .iter()
            .any(|s| up.ends_with(s) && up.len() > s.len())
}

/// The first assignment of `text` (an environment file's bytes) to a
/// variable [`runs_code`] names: (1-based line, name). No loader's reading
/// is copied (they differ: what ends a line, what blank may start one;
/// attack atk22h F4): every word followed by `=` or `:` (blanks and
/// quotes between allowed) anywhere in the file is taken as a name, a
/// word ending at any blank, control or format character (a byte-order
/// mark, U+2028, U+001C ...), `=`, `:`, `#` or quote. So a line inside a
/// quoted value, a comment or a value's tail is judged too: no quoting or
/// spacing trick hides an assignment from this reading.
pub fn code_variable(text: &[u8]) -> Option<(usize, String)> {
    code_variable_in(text, None)
}

/// [`code_variable`] of a file in the directory `dir` (when known): a
/// value's word naming an entry there counts as a path too.
pub fn code_variable_in(text: &[u8], dir: Option<&Path>) -> Option<(usize, String)> {
    let text = String::from_utf8_lossy(text);
    listed_variable(&text)
        .or_else(|| steering_assignment(&text, dir))
        .or_else(|| crate::protect::dotenv_lines::shell_command(&text))
        .or_else(|| crate::protect::dotenv_lines::make_line(&text))
}

/// The first word of `text` followed by `=` or `:` that [`runs_code`]
/// names (see [`code_variable`]).
fn listed_variable(text: &str) -> Option<(usize, String)> {
    let ends = |c: char| {
        c.is_whitespace()
            || c.is_control()
            || matches!(c, '\u{feff}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}')
            || matches!(c, '=' | ':' | '#' | '"' | '\'' | '`')
    };
    let mut line = 1usize;
    let mut word_start: Option<usize> = None;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        if !ends(c) {
            word_start.get_or_insert(i);
            continue;
        }
        if let Some(start) = word_start.take() {
            let name = &text[start..i];
            // Blanks and quotes, then `=` or `:`.
            let assigned = chars[k..]
                .iter()
                .map(|&(_, c)| c)
                .find(|c| !matches!(c, ' ' | '\t' | '"' | '\'' | '`'))
                .is_some_and(|c| c == '=' || c == ':');
            if assigned && runs_code(name) {
                return Some((line, name.to_string()));
            }
        }
        if c == '\n' {
            line += 1;
        }
    }
    None
}

/// Characters any loader (or a shell sourcing the file) may take as the
/// end of a line: more line starts are judged than any one loader sees.
fn line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{1c}'..='\u{1e}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// Where a quote a loader may read is open after `s`, read from the state
/// `open`: with backslash escapes (a shell, python-dotenv) or without.
fn quote_after(s: &str, mut open: Option<char>, escapes: bool) -> Option<char> {
    let mut it = s.chars();
    while let Some(c) = it.next() {
        match (open, c) {
            (Some('\''), '\'') => open = None,
            (Some('\''), _) => {}
            (_, '\\') if escapes => {
                it.next();
            }
            (Some('"'), '"') => open = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => open = Some(c),
            (None, _) => {}
        }
    }
    open
}

/// The first assignment of `text` that is not plainly data (ADR 0285,
/// [`crate::protect::dotenv_value`]): each line (split at every
/// character any loader ends a line at) that is not a comment is read
/// as `[export] NAME=VALUE` (or `NAME: VALUE`), the name judged by its
/// shape and the value word by word; a line with no such head (the
/// continuation of a quoted value) has its words judged as a value. A
/// `#` is taken to start a comment only where no reading of the quotes
/// (with backslash escapes or without) has one open: a quoted value
/// keeps its `#` for the loaders, and a line of a multi-line quoted value
/// that starts with `#` is judged too (attack atk22k F1, F1b). With
/// `dir` (the file's directory), a word of a value that names an entry
/// there is a relative path to whoever reads it (atk22k F2). (1-based
/// line, what is set and why).
fn steering_assignment(text: &str, dir: Option<&Path>) -> Option<(usize, String)> {
    use crate::protect::dotenv_value::{
        module_name_steers, name_steers, names_an_entry, value_steers,
    };
    let blank = |c: char| {
        c.is_whitespace()
            || c.is_control()
            || matches!(c, '\u{feff}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}')
    };
    let mut line_no = 1usize;
    // A quote open at the segment's start, by each reading.
    let mut open: [Option<char>; 2] = [None, None];
    for seg in text.split(line_break) {
        let this_line = line_no;
        // `split` drops the break: count the `\n` that ends this segment.
        let end = seg.as_ptr() as usize - text.as_ptr() as usize + seg.len();
        if text[end..].starts_with('\n') {
            line_no += 1;
        }
        let inside = open.iter().any(Option::is_some);
        let line = seg.trim_start_matches(blank);
        if line.starts_with('#') && !inside {
            continue;
        }
        // An inline comment (a `#` after a blank, outside quotes by every
        // reading) ends the value.
        let cut = line.char_indices().find(|&(i, c)| {
            c == '#'
                && line[..i]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_whitespace)
                && quote_after(&line[..i], open[0], true).is_none()
                && quote_after(&line[..i], open[1], false).is_none()
        });
        let line = match cut {
            Some((i, _)) => {
                open = [None, None];
                &line[..i]
            }
            None => {
                open = [
                    quote_after(line, open[0], true),
                    quote_after(line, open[1], false),
                ];
                line
            }
        };
        let line = ["export", "set", "setenv"]
            .iter()
            .find_map(|k| {
                line.strip_prefix(k)
                    .filter(|r| r.starts_with(blank))
                    .map(|r| r.trim_start_matches(blank))
            })
            .unwrap_or(line);
        let head = line.trim_start_matches(['"', '\'', '`']);
        let name_end = head
            .find(|c: char| blank(c) || matches!(c, '=' | ':' | '#' | '"' | '\'' | '`'))
            .unwrap_or(head.len());
        let name = &head[..name_end];
        let after = head[name_end..].trim_start_matches([' ', '\t', '"', '\'', '`']);
        let (name, value) = match after.strip_prefix(['=', ':']) {
            Some(v) if !name.is_empty() && !inside => (Some(name), v),
            _ => (None, line),
        };
        let has_value = value.chars().any(|c| !blank(c) && c != '"' && c != '\'');
        let why = name
            .filter(|_| has_value)
            .and_then(name_steers)
            .or_else(|| name.and_then(|n| module_name_steers(n, value)))
            .or_else(|| value_steers(value))
            .or_else(|| dir.and_then(|d| names_an_entry(value, d)));
        if let Some(why) = why {
            let what = name.unwrap_or("a value");
            return Some((this_line, format!("{what} ({why})")));
        }
    }
    None
}

/// Why the environment file at `p` must not reach the host as it is:
/// `Some` when it sets a variable [`runs_code`] names, or cannot be read
/// as a small file (a loader may still read it); `None` when it sets none
/// (or is gone, or is a directory, which no loader reads).
#[cfg(unix)]
pub fn judge(p: &Path) -> Option<String> {
    judge_in(p, p.parent())
}

/// [`judge`], with the directory whose makefiles may read the file
/// (`makefiles`: where it lies on the host, when the file judged is a
/// copy): an assignment to a variable their recipes run as a command is
/// code too (attack atk22m F10).
#[cfg(unix)]
pub fn judge_in(p: &Path, makefiles: Option<&Path>) -> Option<String> {
    match std::fs::metadata(p) {
        Err(_) => return None,
        Ok(m) if m.is_dir() => return None,
        Ok(_) => {}
    }
    match crate::protect::small_file::read_bytes(p) {
        Ok(Some(b)) => code_variable_in(&b, p.parent())
            .or_else(|| {
                let text = String::from_utf8_lossy(&b);
                makefiles.and_then(|d| crate::protect::make_include::assigns_command(&text, d))
            })
            .map(|(line, name)| {
                format!(
                    "line {line} sets {name}: not plainly data, by which host programs may run \
                 code or send the caller's traffic elsewhere (the agents \
                 that load this file at start pass it to every command they run)"
                )
            }),
        _ => Some("it cannot be read as a small text file".into()),
    }
}

#[cfg(test)]
#[path = "dotenv_tests.rs"]
mod tests;
