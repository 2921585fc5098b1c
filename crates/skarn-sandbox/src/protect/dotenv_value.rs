//! What an environment file's assignments are, judged deny by default
//! (attack atk22i F2, ADR 0285). A name list of the variables host
//! programs run code by is never complete (`PYENV_HOOK_PATH`,
//! `RSYNC_RSH`, `ASDF_DATA_DIR`, `HTTPS_PROXY`, `OPENAI_BASE_URL`, ...:
//! every tool reads its own), so every assignment the loaders could see
//! is judged by what it is: an assignment reaches the host only when it
//! is plainly data for whoever reads it.
//!
//! Not plainly data:
//! - a name whose shape says it names a place, a program or a channel
//!   ([`name_steers`]: `*_PATH`, `*_DIR`, `*_FILE`, `*_ROOT`, `*_RSH`,
//!   `*_BUNDLE`, `*_CERTS`, names with `PROXY`, `HOOK`, `PLUGIN`,
//!   `ENDPOINT`, `BASE_URL`, `VERIFY`, ...), whatever non-empty value it
//!   has;
//! - a value, for any name ([`value_steers`]), holding shell syntax
//!   (`` ` ``, `$(`, `;`, `|`, `&`, `<`, `>`, `\`: a shell that sources
//!   the file runs it), an option (`-x`), a path (`/x`, `~/x`, `./x`,
//!   `a/b`), a file or host name (`x.py`, `evil.example`), an address
//!   (`host.example:8080`, a URL) — except a database or queue URL
//!   (`postgres://...`, `redis://...`, the application's own
//!   connection), an address on the loopback host, an e-mail address, a
//!   PEM armour line and a long token (base64 may hold `/`).
//!
//! What stays data: numbers, words, sentences of words, tokens, keys,
//! e-mail addresses, `${OTHER}` references (their value is judged where it
//! is set), loopback and database URLs.

/// Suffixes of names that name a place or a program (the variable's
/// value is a path a program reads or runs from).
const PLACE_SUFFIXES: &[&str] = &[
    "PATH",
    "PATHS",
    "DIR",
    "DIRS",
    "FILE",
    "FILES",
    "ROOT",
    "HOME",
    "PREFIX",
    "BUNDLE",
    "CERT",
    "CERTS",
    "RSH",
    "EXE",
    "BIN",
    "PROG",
    "PROGRAM",
    "PACKAGES",
    "MODULE",
    "MODULES",
    "LIB",
    "LIBS",
    "SCRIPT",
    "SCRIPTS",
    "RUNNER",
    "LAUNCHER",
    "INTERPRETER",
    "EXECUTABLE",
    "FOLDER",
    "LOCATION",
    "SOCKET",
    "SOCK",
    // Files a library reads and may run a program from (google-auth's
    // external account `executable`: atk22k F2), interpreters, editors
    // and a program's arguments.
    "CREDENTIALS",
    "CREDENTIAL",
    "CREDS",
    "KEYFILE",
    "PYTHON",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "FCEDIT",
    "ARGS",
];

/// Parts of names that name a channel for the caller's traffic (proxies,
/// API endpoints of the agents, certificate checks) or a program hook:
/// anywhere in the name.
const STEERING_PARTS: &[&str] = &[
    "PROXY",
    "ENDPOINT",
    "BASEURL",
    "HOOK",
    "PLUGIN",
    "VERIFY",
    "INSECURE",
    "REJECT_UNAUTHORIZED",
    "CAINFO",
    "CAPATH",
    "KEYLOG",
];

/// The same, as whole `_`-separated words of the name (`DATABASE_URL` is
/// not `BASE_URL`).
const STEERING_WORDS: &[&str] = &[
    "BASE_URL",
    "API_BASE",
    "API_HOST",
    "CA",
    // uv, poetry and pipenv run its `bin/python`.
    "VIRTUAL_ENV",
];

/// URL schemes of an application's own connections: databases, caches
/// and queues. No agent or host tool sends the caller's traffic or
/// credentials through one of these.
const DATA_SCHEMES: &[&str] = &[
    "postgres",
    "postgresql",
    "mysql",
    "mariadb",
    "mssql",
    "sqlserver",
    "sqlite",
    "redis",
    "rediss",
    "mongodb",
    "mongodb+srv",
    "amqp",
    "amqps",
    "nats",
    "memcached",
    "clickhouse",
    "cockroachdb",
    "libsql",
];

/// Host names of the loopback host (and a container's name for it).
const LOOPBACK: &[&str] = &[
    "localhost",
    "127.0.0.1",
    "[::1]",
    "0.0.0.0",
    "host.docker.internal",
];

/// Why the name `name`, given a non-empty value, is not plainly data.
pub(crate) fn name_steers(name: &str) -> Option<&'static str> {
    let up = name.to_ascii_uppercase();
    let up = up.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_');
    if PLACE_SUFFIXES.iter().any(|s| up.ends_with(s)) {
        return Some("its name says it names a place or a program");
    }
    let words = format!("_{up}_");
    if STEERING_PARTS.iter().any(|s| up.contains(s))
        || STEERING_WORDS
            .iter()
            .any(|w| words.contains(&format!("_{w}_")))
    {
        return Some("its name says it steers a program or the caller's traffic");
    }
    None
}

/// Names whose value is the name of a module an interpreter imports, or
/// of an application object it loads (atk22k F2b): a bare word is a module
/// name to them (`FLASK_APP=app`, `_PYTHON_SYSCONFIGDATA_NAME=x`: `x.py`
/// beside the script is imported by every `sysconfig` use, pip's
/// included). `*_MODULE(S)`, `*STARTUP`, `*_OPTIONS` and `PYTHONBREAKPOINT`
/// are judged by the other lists.
const MODULE_NAMES: &[&str] = &[
    "FLASK_APP",
    "QUART_APP",
    "UVICORN_APP",
    "CELERY_LOADER",
    "DJANGO_CONFIGURATION",
    "SCRAPY_PROJECT",
    "PYTEST_ADDOPTS",
    "COVERAGE_PROCESS_START",
];
/// Prefixes of the same: CPython's build variables (the sysconfig data
/// module, its path, the project base).
const MODULE_PREFIXES: &[&str] = &["_PYTHON_"];
/// Suffixes of the same: an application (`WSGI_APPLICATION`, `*_APP`),
/// a settings file Flask's `from_envvar` runs as Python (`*_SETTINGS`).
const MODULE_SUFFIXES: &[&str] = &["_APP", "_APPLICATION", "_SETTINGS"];
/// `PYTHON*` names whose value is data (an encoding, an allocator's
/// name); every other `PYTHON*` name with a value that is not a number
/// or a switch (`true`, `off`, `random`) names a file, a module or a
/// place to Python.
const PYTHON_DATA: &[&str] = &["PYTHONIOENCODING", "PYTHONMALLOC", "PYTHONCOERCECLOCALE"];

/// Why the name `name` with the value `value` steers an interpreter to a
/// module (atk22k F2b): one of [`MODULE_NAMES`] (and its prefixes and
/// suffixes) with a value, or a `PYTHON*` name with a value that is not a
/// number or a switch.
pub(crate) fn module_name_steers(name: &str, value: &str) -> Option<&'static str> {
    let up = name.to_ascii_uppercase();
    let up = up.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_');
    let v = value
        .trim_matches(|c: char| c.is_whitespace() || c.is_control() || matches!(c, '"' | '\''));
    if v.is_empty() {
        return None;
    }
    let listed = MODULE_NAMES.contains(&up)
        || MODULE_PREFIXES.iter().any(|p| up.starts_with(p))
        || MODULE_SUFFIXES
            .iter()
            .any(|s| up.ends_with(s) && up.len() > s.len());
    // A switch's value: a number or a word of yes and no.
    let switch = v.chars().all(|c| c.is_ascii_digit())
        || ["true", "false", "yes", "no", "on", "off", "random"]
            .iter()
            .any(|w| v.eq_ignore_ascii_case(w));
    let python = up.starts_with("PYTHON") && !PYTHON_DATA.contains(&up) && !switch;
    (listed || python).then_some("its name says its value is a module an interpreter imports")
}

/// Why the value `value` (the rest of an assignment's line, quotes
/// included) is not plainly data, whatever the name.
pub(crate) fn value_steers(value: &str) -> Option<&'static str> {
    let v: String = without_references(value)
        .chars()
        .filter(|c| !matches!(c, '"' | '\''))
        .collect();
    if v.chars()
        .any(|c| matches!(c, '`' | '$' | ';' | '|' | '&' | '<' | '>' | '\\'))
    {
        return Some("its value holds shell syntax");
    }
    v.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .find_map(word_steers)
}

/// Why `value` names an entry of `dir` (the environment file's
/// directory) by a bare word: a relative path to every loader started
/// there, which a variable naming a file reads (atk22k F2:
/// `GOOGLE_APPLICATION_CREDENTIALS=gcloud-creds`), whatever the name.
pub(crate) fn names_an_entry(value: &str, dir: &std::path::Path) -> Option<&'static str> {
    let words: Vec<&str> = value
        .split(|c: char| c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '='))
        .filter(|w| !w.is_empty() && !w.contains(['/', '\0']))
        .collect();
    if words
        .iter()
        .any(|w| std::fs::symlink_metadata(dir.join(w)).is_ok())
    {
        return Some("its value names a file or directory beside the environment file");
    }
    words.iter().any(|w| names_a_module(w, dir)).then_some(
        "its value names a module beside the environment file (an interpreter imports it)",
    )
}

/// Suffixes of the files Python imports a module `NAME` from by its bare
/// name (the script's directory and the current one are on its path;
/// Node, Ruby and Perl look bare names up in their package directories,
/// and take a relative file only by a path or an option, judged apart);
/// the compiled ones (`NAME.cpython-312-x86_64-linux-gnu.so`) are found
/// by their ends.
const MODULE_FILES: &[&str] = &[".py", ".pyc", ".pyw", ".so", ".pyd"];

/// Whether the word `w` names, as a module (`app`, `app:create_app`,
/// `pkg.mod`), a module file or package beside the environment file in
/// `dir` (atk22k F2b: a bare word naming a module in the workspace steers
/// the interpreter that imports it).
fn names_a_module(w: &str, dir: &std::path::Path) -> bool {
    let head = w.split([':', '.']).next().unwrap_or("");
    if head.is_empty()
        || !head
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-'))
    {
        return false;
    }
    if std::fs::symlink_metadata(dir.join(head)).is_ok()
        || MODULE_FILES
            .iter()
            .any(|x| std::fs::symlink_metadata(dir.join(format!("{head}{x}"))).is_ok())
    {
        return true;
    }
    // Extension modules with a platform tag: `NAME.<tag>.so` / `.pyd`.
    let Ok(rd) = std::fs::read_dir(dir) else {
        return false;
    };
    rd.flatten().take(10_000).any(|e| {
        let n = e.file_name();
        let n = n.to_string_lossy();
        n.strip_prefix(head)
            .is_some_and(|r| r.starts_with('.') && (r.ends_with(".so") || r.ends_with(".pyd")))
    })
}

/// Why one word of a value is not plainly data.
fn word_steers(w: &str) -> Option<&'static str> {
    // `A=1 B=x` (a shell sourcing the file sets both): the inner
    // assignment is judged as one.
    if let Some((n, v)) = w.split_once('=')
        && !n.is_empty()
        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !v.is_empty()
    {
        return name_steers(n).or_else(|| word_steers(v));
    }
    if w.starts_with("-----") {
        return None; // PEM armour.
    }
    if w.starts_with(['-', '+']) {
        return Some("its value is a program's option");
    }
    if w.starts_with(['/', '~', '.']) {
        return Some("its value is a path");
    }
    if let Some((scheme, rest)) = w.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        if DATA_SCHEMES.contains(&scheme.as_str()) || loopback(host_of(rest)) {
            return None;
        }
        return Some("its value is an address (a URL) of the run's choice");
    }
    if w.contains('/') {
        // Laravel's `APP_KEY=base64:...`.
        let t = w.strip_prefix("base64:").unwrap_or(w);
        return (!token(t)).then_some("its value is a path");
    }
    if let Some((host, port)) = w.rsplit_once(':')
        && !port.is_empty()
        && port.len() <= 5
        && port.chars().all(|c| c.is_ascii_digit())
        && host.contains('.')
        && !loopback(host)
    {
        return Some("its value is a network address of the run's choice");
    }
    let after_at = w.rsplit_once('@').map_or(w, |(_, d)| d);
    if !w.contains('@')
        && let Some((stem, ext)) = w.rsplit_once('.')
        && !stem.is_empty()
        && !ext.is_empty()
        && ext.chars().all(|c| c.is_ascii_alphabetic())
        && !loopback(after_at)
    {
        return Some("its value is a file or host name");
    }
    None
}

/// The host of a URL's part after `scheme://` (user info and port off).
fn host_of(rest: &str) -> &str {
    let auth = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
    if host.starts_with('[') {
        return host.split_inclusive(']').next().unwrap_or(host);
    }
    host.split(':').next().unwrap_or(host)
}

fn loopback(host: &str) -> bool {
    LOOPBACK.iter().any(|l| host.eq_ignore_ascii_case(l))
}

/// A long random token (base64 of a key, a secret): at least 32
/// characters of base64's alphabets, with capitals, small letters and
/// digits.
fn token(w: &str) -> bool {
    w.len() >= 32
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-'))
        && w.chars().any(|c| c.is_ascii_uppercase())
        && w.chars().any(|c| c.is_ascii_lowercase())
        && w.chars().any(|c| c.is_ascii_digit())
        && !w.contains("//")
}

/// `value` with each `${NAME}` / `$NAME` reference replaced by a word and
/// each `${NAME:-` / `${NAME-` ... head dropped (its default stays, and is
/// judged). A `$` left over (`$(`, `$'`) is shell syntax.
fn without_references(value: &str) -> String {
    let b: Vec<char> = value.chars().collect();
    let mut out = String::with_capacity(value.len());
    let mut i = 0;
    let mut open = 0usize;
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    while i < b.len() {
        let c = b[i];
        if c == '$' && i + 1 < b.len() {
            let braced = b[i + 1] == '{';
            let mut j = i + 1 + usize::from(braced);
            let start = j;
            while j < b.len() && is_name(b[j]) {
                j += 1;
            }
            if j > start && !b[start].is_ascii_digit() {
                if !braced {
                    out.push('x');
                    i = j;
                    continue;
                }
                if j < b.len() && b[j] == '}' {
                    out.push('x');
                    i = j + 1;
                    continue;
                }
                // An operator and a default: keep the default.
                let ops = [":-", ":=", ":?", ":+", "-", "=", "?", "+"];
                let rest: String = b[j..b.len().min(j + 2)].iter().collect();
                if let Some(op) = ops.iter().find(|o| rest.starts_with(**o)) {
                    open += 1;
                    i = j + op.len();
                    continue;
                }
            }
        }
        if c == '}' && open > 0 {
            open -= 1;
            i += 1;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

#[cfg(test)]
#[path = "dotenv_value_tests.rs"]
mod tests;
