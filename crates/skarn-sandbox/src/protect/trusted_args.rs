//! Which argument of an interpreter is its script, read as that
//! interpreter reads its options (attack atk24u F1): `sh -e x` (errexit,
//! not code), `bash -o pipefail x`, `python3 -W ignore x`, `node -r ./y
//! x`. One table per interpreter of the options that take a value and
//! those that give code inline; an option an interpreter's table does
//! not know makes the reading unsure (the line is then not trusted).

/// The interpreters whose options are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Shell,
    Python,
    Node,
    Ruby,
    Perl,
    Php,
    Lua,
    Awk,
    /// `source x`, `. x`.
    Source,
    /// Any other interpreter: no option is known.
    Other,
}

/// The kind of the program `name` (a basename), if an interpreter.
pub fn kind(name: &str) -> Option<Kind> {
    let num = |s: &str| s.chars().all(|c| c.is_ascii_digit() || c == '.');
    Some(match name {
        "sh" | "bash" | "dash" | "ksh" | "mksh" | "ash" | "zsh" | "busybox-sh" => Kind::Shell,
        n if n.strip_prefix("python").is_some_and(num)
            || n.strip_prefix("pypy").is_some_and(num) =>
        {
            Kind::Python
        }
        "node" | "nodejs" => Kind::Node,
        "ruby" => Kind::Ruby,
        "perl" => Kind::Perl,
        n if n.strip_prefix("php").is_some_and(num) => Kind::Php,
        "lua" | "luajit" => Kind::Lua,
        n if n.strip_prefix("lua").is_some_and(num) => Kind::Lua,
        "awk" | "gawk" | "mawk" | "nawk" => Kind::Awk,
        "source" | "." => Kind::Source,
        "fish" | "tclsh" | "wish" | "expect" | "Rscript" | "julia" | "elixir" | "groovy"
        | "java" | "tsx" | "ts-node" | "pwsh" | "nu" | "osascript" => Kind::Other,
        _ => return None,
    })
}

/// How an interpreter's arguments read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Read {
    /// The script (a path word), if one.
    pub script: Option<String>,
    /// Code given inline (`sh -c CODE`: judged as a line in turn).
    pub inline: Option<String>,
    /// A module run by name (`python3 -m M`).
    pub module: Option<String>,
    /// It reads its script from standard input (no script, `-`, `-s`).
    pub stdin: bool,
    /// Other files it loads and runs (`--rcfile f`, `node -r ./f`,
    /// `awk -f f`, `lua -l m`).
    pub loads: Vec<String>,
    /// Why the reading is unsure.
    pub unsure: Option<String>,
}

/// Read `args` as the interpreter of kind `k` (named `name`) does.
pub fn read(k: Kind, name: &str, args: &[&str]) -> Read {
    let mut r = Read::default();
    let mut i = 0;
    let mut code = false;
    let unknown = |a: &str| Some(format!("skarn does not know the option `{a}` of `{name}`"));
    while i < args.len() {
        let a = args[i];
        if a == "--" {
            i += 1;
            break;
        }
        if a == "-" || !(a.starts_with('-') || k == Kind::Shell && a.starts_with('+')) {
            break;
        }
        i += 1;
        if let Some(long) = a.strip_prefix("--") {
            let (n, v) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            match long_option(k, n) {
                Some(Long::Flag) => {}
                Some(Long::Code) => code = true,
                Some(Long::NoScript) => return r,
                Some(long @ (Long::Value | Long::Loads)) => {
                    let v = match v {
                        Some(v) => Some(v.to_string()),
                        None => {
                            i += 1;
                            args.get(i - 1).map(|s| s.to_string())
                        }
                    };
                    if long == Long::Loads {
                        r.loads.extend(v);
                    }
                }
                Some(Long::Unsure(why)) => {
                    r.unsure = Some(why.to_string());
                    return r;
                }
                None => {
                    r.unsure = unknown(a);
                    return r;
                }
            }
            continue;
        }
        // A cluster of one-letter options (`-eu`, `-uW ignore`, `-ec`).
        let letters: Vec<char> = a[1..].chars().collect();
        for (n, ch) in letters.iter().enumerate() {
            let rest: String = letters[n + 1..].iter().collect();
            let mut value = || {
                if rest.is_empty() {
                    i += 1;
                    args.get(i - 1).map(|s| s.to_string())
                } else {
                    Some(rest.clone())
                }
            };
            match short_option(k, *ch) {
                Short::Flag => continue,
                Short::Code => code = true,
                Short::CodeValue => {
                    r.inline = value();
                    return r;
                }
                Short::Module => {
                    r.module = value();
                    return r;
                }
                Short::Stdin => r.stdin = true,
                Short::Value => {
                    value();
                }
                Short::Loads => r.loads.extend(value()),
                Short::Script => {
                    r.script = value();
                    return r;
                }
                Short::Attached => {}
                Short::Unknown => {
                    r.unsure = unknown(a);
                    return r;
                }
            }
            if !matches!(short_option(k, *ch), Short::Code | Short::Stdin) {
                break;
            }
        }
    }
    let operand = args.get(i).map(|s| s.to_string());
    if k == Kind::Awk {
        // Its first operand is program text unless `-f` named a file;
        // standard input is data.
        return r;
    }
    if code {
        r.inline = operand;
    } else if r.stdin || operand.as_deref() == Some("-") || operand.is_none() {
        r.stdin = k != Kind::Awk;
    } else {
        r.script = operand;
    }
    r
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Long {
    Flag,
    Code,
    Value,
    Loads,
    NoScript,
    Unsure(&'static str),
}

fn long_option(k: Kind, n: &str) -> Option<Long> {
    Some(match (k, n) {
        (_, "version" | "help") => Long::NoScript,
        (
            Kind::Shell,
            "norc" | "noprofile" | "posix" | "login" | "verbose" | "noediting" | "restricted"
            | "debugger" | "dump-strings" | "dump-po-strings" | "pretty-print",
        ) => Long::Flag,
        (Kind::Shell, "rcfile" | "init-file") => Long::Loads,
        (Kind::Python, "check-hash-based-pycs") => Long::Value,
        (Kind::Python, "help-env" | "help-xoptions" | "help-all") => Long::NoScript,
        (Kind::Node, "eval" | "print") => Long::Code,
        (Kind::Node, "require" | "import" | "loader" | "experimental-loader" | "env-file") => {
            Long::Loads
        }
        (
            Kind::Node,
            "conditions"
            | "input-type"
            | "title"
            | "inspect-port"
            | "debug-port"
            | "redirect-warnings"
            | "disable-warning"
            | "stack-size"
            | "max-old-space-size"
            | "unhandled-rejections"
            | "experimental-default-type"
            | "watch-path",
        ) => Long::Value,
        (Kind::Node, "test") => Long::Unsure("`node --test` runs the project's test files"),
        (Kind::Node, n)
            if matches!(
                n,
                "no-warnings"
                    | "enable-source-maps"
                    | "trace-warnings"
                    | "trace-uncaught"
                    | "trace-deprecation"
                    | "no-deprecation"
                    | "throw-deprecation"
                    | "pending-deprecation"
                    | "preserve-symlinks"
                    | "preserve-symlinks-main"
                    | "expose-gc"
                    | "inspect"
                    | "inspect-brk"
                    | "watch"
                    | "check"
                    | "interactive"
                    | "abort-on-uncaught-exception"
                    | "frozen-intrinsics"
                    | "zero-fill-buffers"
                    | "harmony"
            ) || n.starts_with("experimental-") && !n.contains("loader") =>
        {
            Long::Flag
        }
        (Kind::Ruby, "disable-gems" | "verbose" | "jit" | "yjit" | "disable" | "enable") => {
            Long::Flag
        }
        _ => return None,
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Short {
    Flag,
    /// Its operand (or the first operand) is code.
    Code,
    /// Code follows, attached or as the next word.
    CodeValue,
    Module,
    Stdin,
    Value,
    Loads,
    Script,
    /// The rest of the cluster is its value.
    Attached,
    Unknown,
}

fn short_option(k: Kind, ch: char) -> Short {
    match k {
        Kind::Shell => match ch {
            'c' => Short::Code,
            's' | 'i' => Short::Stdin,
            'o' | 'O' => Short::Value,
            c if c.is_ascii_alphabetic() => Short::Flag,
            _ => Short::Unknown,
        },
        Kind::Python => match ch {
            'c' => Short::CodeValue,
            'm' => Short::Module,
            'W' | 'X' => Short::Value,
            'b' | 'B' | 'd' | 'E' | 'i' | 'I' | 'O' | 'P' | 'q' | 's' | 'S' | 'u' | 'v' | 'x'
            | 'R' => Short::Flag,
            _ => Short::Unknown,
        },
        Kind::Node => match ch {
            'e' | 'p' => Short::CodeValue,
            'r' => Short::Loads,
            'C' => Short::Value,
            'c' | 'i' => Short::Flag,
            _ => Short::Unknown,
        },
        Kind::Ruby => match ch {
            'e' => Short::CodeValue,
            'I' | 'E' | 'F' => Short::Value,
            'r' => Short::Loads,
            'W' | '0' | 'K' | 'T' => Short::Attached,
            'a' | 'c' | 'd' | 'l' | 'n' | 'p' | 's' | 'v' | 'w' | 'y' | 'U' => Short::Flag,
            _ => Short::Unknown,
        },
        Kind::Perl => match ch {
            'e' | 'E' => Short::CodeValue,
            'I' | 'M' | 'm' => Short::Value,
            'i' | '0' | 'l' | 'C' | 'D' | 'F' | 'd' => Short::Attached,
            'a' | 'c' | 'n' | 'p' | 's' | 'S' | 't' | 'T' | 'u' | 'U' | 'v' | 'w' | 'W' | 'X' => {
                Short::Flag
            }
            _ => Short::Unknown,
        },
        Kind::Php => match ch {
            'r' => Short::CodeValue,
            'f' => Short::Script,
            'c' | 'd' | 'z' => Short::Value,
            'n' | 'q' | 'H' | 'e' | 'l' | 's' | 'w' | 'a' | 'i' | 'v' | 'h' => Short::Flag,
            _ => Short::Unknown,
        },
        Kind::Lua => match ch {
            'e' => Short::CodeValue,
            'l' => Short::Loads,
            'i' | 'v' | 'E' | 'W' => Short::Flag,
            _ => Short::Unknown,
        },
        Kind::Awk => match ch {
            'f' | 'i' => Short::Loads,
            'v' | 'F' => Short::Value,
            _ => Short::Unknown,
        },
        Kind::Source | Kind::Other => Short::Unknown,
    }
}

#[cfg(test)]
#[path = "trusted_args_tests.rs"]
mod tests;
