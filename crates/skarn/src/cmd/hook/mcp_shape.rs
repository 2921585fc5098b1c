//! The two shapes of an MCP entry that this skarn runs as `init` writes
//! it (ADR 0273, 0293), shared by the MCP files' wrapping
//! (`cmd::mcp_wrap`) and a subagent's frontmatter servers
//! ([`super::frontmatter_mcp`]).

/// The argv as one shell line (what `trusted_hooks` lists).
pub fn line(command: &str, args: &[String]) -> String {
    std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .map(super::quote)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `command args` is run by this skarn (`skarn serve`, `skarn
/// run`) exactly as `init` writes it, or trusted. `env` is the names the
/// entry sets. Only the two shapes `init` writes count (atk24n F3):
/// `serve --config FILE`, and `mcp_wrap::wrapped_args` passing no name the entry
/// does not set; `run --no-sandbox`, `--write /`, `--net all`, `serve
/// --http ...` are any other server.
pub fn confined(
    command: &str,
    args: &[String],
    env: &[String],
    exe: &str,
    trusted: &[String],
) -> bool {
    // A loader or skarn variable on the entry applies to skarn itself (F6).
    let ours = super::confine_hooks::is_this_skarn(command, exe)
        && init_shape(args, env)
        && !env.iter().any(|n| crate::cmd::mcp_env::host_relevant(n));
    ours || trusted.iter().any(|t| *t == line(command, args))
}

/// Whether `args` is one of the argument lists `init` writes for skarn.
fn init_shape(args: &[String], env: &[String]) -> bool {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    match a.as_slice() {
        ["serve", "--config", _] => true,
        ["run", "--timeout", "0", rest @ ..] => {
            let mut rest = rest;
            while let ["--allow-env", name, tail @ ..] = rest {
                if !env.iter().any(|e| e == name) {
                    return false;
                }
                rest = tail;
            }
            matches!(rest, ["--", cmd, ..] if !cmd.is_empty())
        }
        _ => false,
    }
}
