//! Cargo's own configuration without credentials. The rust preset lets
//! commands read the user's `$CARGO_HOME/config.toml` (registry mirrors,
//! build settings), but cargo also accepts registry tokens there
//! (`registry.token`, `registries.<name>.token`) and URLs or proxies with
//! passwords: such a file is replaced, for the run, by a copy in the
//! private home without them, read with the TOML parser cargo uses.

use std::path::{Path, PathBuf};

use crate::policy::Policy;
use crate::secrets::credential_text::carries_credential;

/// Largest configuration file read; a bigger one is not granted.
const MAX_FILE: u64 = 1 << 20;

/// Keys whose value is a credential, or a command that may carry one
/// (cargo's credential providers), wherever they sit.
const SECRET_KEYS: &[&str] = &[
    "token",
    "secret-key",
    "secret-key-subject",
    "credential-provider",
    "global-credential-providers",
    "credential-alias",
];

/// Words that make any key (an `[env]` variable a build script reads, a
/// tool's own table) name a credential.
const SECRET_WORDS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "api_key",
    "api-key",
    "auth",
    "credential",
    "private_key",
    "private-key",
];

/// Whether key `k` names a credential.
fn secret_key(k: &str) -> bool {
    let k = k.to_ascii_lowercase();
    SECRET_KEYS.contains(&k.as_str()) || SECRET_WORDS.iter().any(|w| k.contains(w))
}

/// Whether string `v` holds a credential: the shapes of
/// [`carries_credential`], also for a proxy or URL written without its
/// scheme (`user:pass@host:3128`, as `http.proxy` accepts).
fn credential_value(v: &str) -> bool {
    carries_credential(v)
        || (!v.contains("://") && v.contains('@') && carries_credential(&format!("http://{v}")))
        || secret_flag_value(v.split_whitespace())
}

/// Whether a command line (an alias, a runner, a linker's arguments)
/// passes a value to a flag named like a credential (`--token X`,
/// `--password=X`, `--api-key X`) whatever the value looks like (atk27g
/// F5: `[alias] pub = "publish --token <short token>"` kept its token).
fn secret_flag_value<'a>(words: impl Iterator<Item = &'a str>) -> bool {
    let mut words = words.peekable();
    while let Some(w) = words.next() {
        let Some(flag) = w.strip_prefix('-') else {
            continue;
        };
        let flag = flag.trim_start_matches('-');
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (flag, None),
        };
        if !secret_key(name) {
            continue;
        }
        let has_value = match inline {
            Some(v) => !v.is_empty(),
            None => words.peek().is_some_and(|n| !n.starts_with('-')),
        };
        if has_value {
            return true;
        }
    }
    false
}

/// Whether an array of strings is a command line passing a credential.
fn secret_flag_array(a: &[toml::Value]) -> bool {
    secret_flag_value(a.iter().filter_map(toml::Value::as_str))
}

/// `value` without credentials: secret keys and credential-bearing
/// strings removed at any depth; whether anything was removed.
fn strip(value: &mut toml::Value) -> bool {
    match value {
        toml::Value::Table(t) => {
            let before = t.len();
            t.retain(|k, v| {
                !secret_key(k)
                    && !v.as_str().is_some_and(credential_value)
                    && !v.as_array().is_some_and(|a| secret_flag_array(a))
            });
            let mut changed = t.len() != before;
            for (_, v) in t.iter_mut() {
                changed |= strip(v);
            }
            changed
        }
        toml::Value::Array(a) => {
            let before = a.len();
            a.retain(|v| {
                !v.as_str().is_some_and(credential_value)
                    && !v.as_array().is_some_and(|a| secret_flag_array(a))
            });
            let mut changed = a.len() != before;
            for v in a.iter_mut() {
                changed |= strip(v);
            }
            changed
        }
        _ => false,
    }
}

/// The text of cargo configuration `text` without credentials, `None`
/// when it holds none. A file that does not parse gives an empty copy
/// (cargo would refuse it too).
pub fn sanitized(text: &str) -> Option<String> {
    let Ok(table) = text.parse::<toml::Table>() else {
        return Some(String::new());
    };
    let mut v = toml::Value::Table(table);
    if !strip(&mut v) {
        return None;
    }
    Some(toml::to_string(&v).unwrap_or_default())
}

/// Each read grant of `policy` that is a cargo configuration file
/// (`config.toml` or `config` in a `.cargo` directory or `$CARGO_HOME`)
/// holding a credential is taken away; under the private home `home`
/// (where the run sees the host's path) the sanitised copy takes its
/// place. Returns the files replaced.
pub fn replace_granted(policy: &mut Policy, home: &Path) -> Vec<PathBuf> {
    let cargo_home = cargo_home(home);
    let is_config = |p: &Path| {
        p.parent()
            .is_some_and(|d| d == cargo_home || d.ends_with(".cargo"))
            && p.file_name()
                .is_some_and(|n| n == "config.toml" || n == "config")
    };
    let mut replaced = Vec::new();
    let mut copies = Vec::new();
    policy.read.retain(|g| {
        if !is_config(&g.path) {
            return true;
        }
        let text = match std::fs::metadata(&g.path) {
            Ok(md) if md.is_file() && md.len() <= MAX_FILE => {
                std::fs::read_to_string(&g.path).unwrap_or_default()
            }
            Ok(md) if md.is_file() => {
                replaced.push(g.path.clone());
                return false;
            }
            _ => return true,
        };
        match sanitized(&text) {
            None => true,
            Some(copy) => {
                replaced.push(g.path.clone());
                copies.push((g.path.clone(), copy));
                false
            }
        }
    });
    for (p, copy) in copies {
        if p.starts_with(home) && !policy.home_files.iter().any(|(f, _)| *f == p) {
            policy.home_files.push((p, copy));
        }
    }
    replaced
}

/// Where cargo keeps its files for the caller: `$CARGO_HOME` when
/// absolute, else `~/.cargo`.
pub fn cargo_home(home: &Path) -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".cargo"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_urls_with_passwords_go_and_the_rest_stays() {
        let text = "[registry]\ntoken = \"cio-abc\"\ndefault = \"mine\"\n\n\
                    [registries.mine]\nindex = \"sparse+https://u:pw123456@reg.test/\"\n\
                    token = \"x\"\n\n[source.mirror]\nregistry = \"sparse+https://mirror.test/\"\n\n\
                    [http]\nproxy = \"http://u:secretpw@proxy.test:3128\"\n\n[build]\njobs = 2\n";
        let out = sanitized(text).unwrap();
        let t: toml::Table = out.parse().unwrap();
        assert!(t["registry"].get("token").is_none(), "{out}");
        assert_eq!(t["registry"]["default"].as_str(), Some("mine"));
        assert!(t["registries"]["mine"].get("index").is_none(), "{out}");
        assert!(t["http"].get("proxy").is_none(), "{out}");
        assert_eq!(
            t["source"]["mirror"]["registry"].as_str(),
            Some("sparse+https://mirror.test/")
        );
        assert_eq!(t["build"]["jobs"].as_integer(), Some(2));
        assert!(!out.contains("pw123456") && !out.contains("secretpw") && !out.contains("cio-"));
    }

    #[test]
    fn credential_providers_secret_env_keys_and_schemeless_proxies_go() {
        let text = "[registry]\nglobal-credential-providers = [\"cargo:token-from-stdout echo abc\"]\n\
                    [credential-alias]\nmine = [\"cargo:token-from-stdout\", \"echo\", \"abc\"]\n\
                    [env]\nDEPLOY_API_TOKEN = \"short1\"\nMY_PASSWORD = { value = \"pw\" }\nCC = \"clang\"\n\
                    [http]\nproxy = \"bob:hunter2@proxy.test:3128\"\n";
        let out = sanitized(text).unwrap();
        let t: toml::Table = out.parse().unwrap();
        assert!(t.get("credential-alias").is_none(), "{out}");
        assert!(
            t["registry"].get("global-credential-providers").is_none(),
            "{out}"
        );
        assert!(t["env"].get("DEPLOY_API_TOKEN").is_none(), "{out}");
        assert!(t["env"].get("MY_PASSWORD").is_none(), "{out}");
        assert_eq!(t["env"]["CC"].as_str(), Some("clang"));
        assert!(!out.contains("hunter2") && !out.contains("short1"), "{out}");
    }

    #[test]
    fn a_file_without_credentials_is_granted_as_it_is() {
        assert_eq!(
            sanitized("[build]\njobs = 2\n[net]\noffline = true\n"),
            None
        );
        assert_eq!(sanitized("not toml ["), Some(String::new()));
    }

    #[test]
    fn aliases_passing_a_token_flag_go_whatever_the_token_looks_like() {
        let text = "[alias]\npub = \"publish --token hunter2\"\npub2 = [\"publish\", \"--token\", \"hunter3\"]\n\
                    pub3 = \"publish --token=hunter4\"\nb = \"build --release\"\nt = [\"test\", \"--\", \"--nocapture\"]\n";
        let out = sanitized(text).expect("changed");
        assert!(!out.contains("hunter"), "{out}");
        assert!(
            out.contains("build --release") && out.contains("nocapture"),
            "{out}"
        );
    }
}
