//! `skarn trust [FILE]`: the user's say-so that a workspace `skarn.toml`
//! may widen the sandbox (ADR 0065).
//!
//! Until its exact content is trusted, a `skarn.toml` that is not the
//! user's own `~/.config/skarn/config.toml` only narrows: `skarn run` (and
//! so `skarn hook`) ignores its grants, network, kept variables and the
//! like, and `skarn serve` runs its servers under the default server
//! sandbox. This command shows what the file would widen and records the
//! SHA-256 of its bytes in `~/.local/state/skarn/trusted` (a path no
//! sandbox is granted). Any later change makes it untrusted again.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use skarn_sandbox::policy::trust::{TrustStore, store_path};

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Shows on stderr what FILE widens ([run] settings beyond your own config, \
[servers] and how they would run) and records the SHA-256 of its exact \
content, with its resolved path, in ~/.local/state/skarn/trusted. Until \
then skarn run and skarn hook apply only its narrowing [run] settings, and \
skarn serve runs its servers confined by the default server sandbox. \
Editing the file (by you, the agent or a git pull) makes it untrusted \
again: review it and run skarn trust again. Exit status: 0 done, 2 error \
(unreadable or invalid file, no HOME).")]
pub struct Args {
    /// The configuration file to trust.
    #[arg(default_value = "skarn.toml")]
    pub file: PathBuf,
    /// Forget the trust in FILE instead.
    #[arg(long, conflicts_with = "list")]
    pub revoke: bool,
    /// List the trusted files.
    #[arg(long)]
    pub list: bool,
}

pub use skarn_sandbox::protect::terminal_filter::one_line;

/// A path from a configuration (or naming one) as printed: on one line,
/// every control character spelled out (a file name or a value may hold
/// terminal escapes that would rewrite what the user reads).
pub fn shown(p: &Path) -> String {
    one_line(&p.display().to_string())
}

/// The text of a configuration file, read as `skarn run` reads it: never
/// blocking (a FIFO or a device is refused with the reason), at most 1 MiB.
pub fn read_config(p: &Path) -> anyhow::Result<String> {
    match skarn_sandbox::policy::config::read_text(p) {
        Ok(Some(t)) => Ok(t),
        Ok(None) => anyhow::bail!("{}: no such file", shown(p)),
        Err(e) => anyhow::bail!("{}", one_line(&e.to_string())),
    }
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
}

/// Whether the user trusts `text`, read from `path`.
pub fn trusted(path: &Path, text: &str) -> bool {
    TrustStore::for_home(home().as_deref()).trusts(path, text.as_bytes())
}

/// Record `text` (read from `path`) as trusted.
pub fn record(path: &Path, text: &str) -> anyhow::Result<PathBuf> {
    let store = store_path(home().as_deref()).context("HOME is not set to an absolute path")?;
    TrustStore::record(&store, path, text.as_bytes())
        .with_context(|| format!("cannot write {}", store.display()))?;
    Ok(store)
}

/// What `text` (the file `path`) widens, one line each (empty: nothing).
pub fn widening(path: &Path, text: &str) -> anyhow::Result<Vec<String>> {
    use skarn_sandbox::policy::config::RunConfig;
    use skarn_sandbox::policy::layers::Layer;
    let home = home();
    let mut lines = Vec::new();
    let base = path.parent().unwrap_or(Path::new("."));
    {
        let c = RunConfig::parse(text.to_owned(), path, base)?;
        let mut before = Vec::new();
        if let Some(h) = &home
            && let Some(u) = RunConfig::load(&h.join(".config/skarn/config.toml"), h)?
        {
            before.push(Layer::from_config(&u, home.as_deref())?);
        }
        let l = Layer::from_config(&c, home.as_deref())?;
        let (_, dropped) = skarn_sandbox::policy::untrusted::narrow(l, &before);
        if !dropped.is_empty() {
            let shown: Vec<String> = dropped.iter().map(|k| with_value(text, "run", k)).collect();
            lines.push(format!("[run] widens: {}", shown.join(", ")));
        }
    }
    let mut cfg = skarn_gateway::Config::parse(text, &path.display().to_string())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    for s in cfg.servers.iter().filter(|s| s.enabled) {
        lines.push(format!("[servers.{}] {}", s.alias, describe(s)));
    }
    cfg.path = Some(path.to_path_buf());
    // Even trusted, an unconfined server whose code a sandboxed command
    // may change runs confined (ADR 0237): said before the user trusts.
    for (alias, why) in cfg.unconfined_from_writable() {
        lines.push(format!(
            "[servers.{alias}] will run CONFINED even once trusted (sandbox.enabled = false is \
             ignored): {why}"
        ));
    }
    for n in cfg.narrow_untrusted() {
        lines.push(format!(
            "{}: applied only once trusted",
            note_with_value(text, &n)
        ));
    }
    Ok(lines)
}

/// `key = VALUE` as the file `text` sets it under `[section]` (the value
/// in TOML's inline form, escaped as the server lines are: the user
/// trusts what they were shown, attack atk24i F6); the key alone when the
/// file does not set it by that name. `net limits` shows the `net_max_*`
/// keys.
fn with_value(text: &str, section: &str, key: &str) -> String {
    let Ok(doc) = text.parse::<toml::Table>() else {
        return key.to_owned();
    };
    let mut table = Some(&doc);
    for part in section.split('.') {
        table = table
            .and_then(|t| t.get(part))
            .and_then(toml::Value::as_table);
    }
    let Some(table) = table else {
        return key.to_owned();
    };
    let shown = |k: &str, v: &toml::Value| {
        skarn_sandbox::protect::terminal_filter::one_line(&format!("{k} = {v}"))
    };
    if let Some(v) = table.get(key) {
        return shown(key, v);
    }
    let limits: Vec<String> = table
        .iter()
        .filter(|(k, _)| key == "net limits" && k.starts_with("net_max"))
        .map(|(k, v)| shown(k, v))
        .collect();
    if limits.is_empty() {
        key.to_owned()
    } else {
        limits.join(", ")
    }
}

/// A `[gateway] KEY (...)` or `[gateway.limits] KEY` line of
/// `narrow_untrusted` with the value the file gives KEY.
fn note_with_value(text: &str, note: &str) -> String {
    let Some(rest) = note.strip_prefix('[') else {
        return note.to_owned();
    };
    let Some((section, rest)) = rest.split_once("] ") else {
        return note.to_owned();
    };
    if section != "gateway" && section != "gateway.limits" {
        return note.to_owned();
    }
    let key: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let tail = &rest[key.len()..];
    // `isolation = "in_process" (...)` already says its value.
    if key.is_empty() || tail.starts_with(" =") {
        return note.to_owned();
    }
    format!("[{section}] {}{tail}", with_value(text, section, &key))
}

/// A server as the user should see it before trusting it.
pub fn describe(s: &skarn_gateway::config::ServerConfig) -> String {
    use skarn_gateway::config::ServerTransport;
    match &s.transport {
        ServerTransport::Stdio {
            command,
            args,
            sandbox,
            env,
            ..
        } => {
            let mut argv = vec![command.clone()];
            argv.extend(args.iter().cloned());
            let argv: Vec<String> = argv.iter().map(|a| super::hook::quote(a)).collect();
            let sb = match sandbox.enabled {
                Some(false) => "UNCONFINED (sandbox.enabled = false)".to_string(),
                _ => format!(
                    "sandboxed (net {}, {} read, {} write, {} exec grants)",
                    net_shown(&sandbox.net),
                    sandbox.read.len(),
                    sandbox.write.len(),
                    sandbox.exec.len()
                ),
            };
            // Every variable (a loader variable such as LD_PRELOAD runs
            // code in the server): literal values as the file has them.
            use skarn_gateway::config::EnvValue;
            let vars: Vec<String> = env
                .iter()
                .map(|(k, v)| match v {
                    // Whole: the user trusts exactly what they were shown
                    // (atk24h F13: values were cut at 80 characters).
                    EnvValue::Literal(x) => super::hook::quote(&format!("{k}={x}")),
                    // Which variable, which secret and where it goes
                    // (atk27j F9): the user approves what is asked for.
                    EnvValue::FromEnv(f) => {
                        format!("{k} <- ${} (from skarn's environment)", word(&f.from_env))
                    }
                    EnvValue::StateFile(_) => format!("{k} (a state file)"),
                    EnvValue::Secret(r) => secret_shown(k, &r.secret),
                })
                .collect();
            let vars = if vars.is_empty() {
                String::new()
            } else {
                format!(" with {}", vars.join(" "))
            };
            format!("runs {}{vars}; {sb}", argv.join(" "))
        }
        ServerTransport::Http { url, auth, .. } => match auth {
            Some(a) => format!(
                "connects to {url}, sending it skarn's ${} as `Authorization: Bearer`",
                word(&a.bearer_env)
            ),
            None => format!("connects to {url}"),
        },
    }
}

/// A server's network as the user should see it: the hosts of `allow:`.
fn net_shown(net: &skarn_sandbox::policy::NetPolicy) -> String {
    use skarn_sandbox::policy::NetPolicy;
    match net {
        NetPolicy::AllowHosts(h) if !h.allow.is_empty() => {
            let mut s = format!("allow:{}", h.allow.join(","));
            if !h.deny.is_empty() {
                s.push_str(&format!(" except {}", h.deny.join(",")));
            }
            word(&s)
        }
        n => n.as_str().to_string(),
    }
}

/// `NAME <- secret S (...)`: the secret by name, with the hosts, methods
/// and paths the user's configuration binds it to (what the server may
/// use it for), or that the user's configuration has no such secret.
fn secret_shown(var: &str, secret: &str) -> String {
    let cfg = home()
        .map(|h| h.join(".config/skarn/config.toml"))
        .and_then(|p| read_config(&p).ok())
        .and_then(|t| skarn_egress::secrets::config::SecretsConfig::parse(&t, "config").ok());
    let name = word(secret);
    let Some(c) = cfg.as_ref().and_then(|c| c.secrets.get(secret)) else {
        return format!("{var} <- secret {name} (not defined in your configuration)");
    };
    let mut to = format!("sent only to {}", c.hosts.join(", "));
    if !c.methods.is_empty() {
        to.push_str(&format!("; methods {}", c.methods.join(", ")));
    }
    if !c.paths.is_empty() {
        to.push_str(&format!("; paths {}", c.paths.join(", ")));
    }
    format!("{var} <- secret {name} ({})", word(&to))
}

/// `s` as it is when it is made of plain characters, else shell-quoted
/// (nothing in it can pass for another line or word of the listing).
fn word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.:/,*@[]; ".contains(c));
    if plain {
        s.to_string()
    } else {
        super::hook::quote(s)
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = store_path(home().as_deref()).context("HOME is not set to an absolute path")?;
    if args.list {
        let s = TrustStore::load(&store);
        let mut out = std::io::stdout().lock();
        for p in s.paths() {
            writeln!(out, "{}", p.display())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.revoke {
        let was = TrustStore::revoke(&store, &args.file)
            .with_context(|| format!("cannot write {}", store.display()))?;
        eprintln!(
            "skarn: {} {}",
            args.file.display(),
            if was {
                "is no longer trusted"
            } else {
                "was not trusted"
            }
        );
        return Ok(ExitCode::SUCCESS);
    }
    // Never blocks (a FIFO or device is refused), at most 1 MiB.
    let text = read_config(&args.file)?;
    let lines = widening(&args.file, &text)?;
    let shown = shown(&skarn_sandbox::policy::trust::identity(&args.file));
    if lines.is_empty() {
        eprintln!("skarn: {shown} widens nothing");
    } else {
        eprintln!("skarn: trusting {shown}, which:");
        for l in &lines {
            eprintln!("  {}", one_line(l));
        }
    }
    record(&args.file, &text)?;
    eprintln!(
        "skarn: trusted this exact content of {shown} (recorded in {}); any change to it needs \
         `skarn trust` again",
        store.display()
    );
    Ok(ExitCode::SUCCESS)
}
