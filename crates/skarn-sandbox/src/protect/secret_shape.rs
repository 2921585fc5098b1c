//! Home files that hold credentials by their shape, beyond the listed
//! secret paths (attack atk22g F12: `~/.dbt/profiles.yml`,
//! `~/.sentryclirc`, `~/.config/composer/auth.json`, ngrok's
//! `authtoken`, `~/.ollama/id_ed25519`, REPL histories, ...).
//!
//! A link in the home that leads into a grant is followed by
//! [`crate::protect::home_links`]; when its name has one of these shapes,
//! what it reaches is hidden (not only kept read-only). The rule reads
//! the link's own name in the home (what the tool opens), never the
//! target's, which the confined side may choose.

use std::path::Path;

/// Words in a file name that mark a credential store.
const WORDS: &[&str] = &[
    "credential",
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "api_key",
    "api-key",
    "authtoken",
    "private",
    "keychain",
    "keyring",
];

/// Whole file names of credential stores.
const NAMES: &[&str] = &[
    "auth.json",
    "auth.toml",
    "auth.yml",
    "auth.yaml",
    "key",
    "key.pem",
    "client.key",
    "profiles.yml",
    "connections.toml",
    "ngrok.yml",
    ".sentryclirc",
    ".wakatime.cfg",
    ".modal.toml",
    ".ovh.conf",
    ".vultr-cli.yaml",
    ".netrc",
    ".pgpass",
    ".my.cnf",
    "history.db",
    "linode-cli",
];

/// (directory, file) pairs whose file is a credential store only there.
const PLACES: &[(&str, &str)] = &[
    (".bundle", "config"),
    (".talos", "config"),
    (".snowsql", "config"),
    (".circleci", "cli.yml"),
    (".aliyun", "config.json"),
    (".scw", "config.yaml"),
    ("scw", "config.yaml"),
    ("netlify", "config.json"),
    ("com.vercel.cli", "auth.json"),
    (".railway", "config.json"),
    (".expo", "state.json"),
    (".codeium", "config.json"),
    ("jira", ".config.yml"),
    (".bluemix", "config.json"),
    ("openai", "config.json"),
];

/// Whether the home-side name `rel` (relative to the home or a
/// configuration root) has a credential store's shape.
pub fn looks_secret(rel: &Path) -> bool {
    let Some(file) = rel.file_name().map(|f| f.to_string_lossy().to_lowercase()) else {
        return false;
    };
    let parent = rel
        .parent()
        .and_then(|p| p.file_name())
        .map(|p| p.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if file.ends_with(".pub") {
        return false;
    }
    WORDS.iter().any(|w| file.contains(w))
        || NAMES.contains(&file.as_str())
        || file.starts_with("id_")
        || file.ends_with("_history")
        || file.ends_with(".key")
        || file.starts_with("jfrog-cli.conf")
        || PLACES.iter().any(|(d, f)| parent == *d && file == *f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_stores_are_told_by_shape() {
        for p in [
            ".dbt/profiles.yml",
            ".sentryclirc",
            ".config/composer/auth.json",
            ".bundle/config",
            ".local/share/atuin/key",
            ".ngrok2/ngrok.yml",
            ".minikube/profiles/x/client.key",
            ".ollama/id_ed25519",
            ".python_history",
            ".config/anthropic/api_key",
            ".openai/api_key",
            ".jfrog/jfrog-cli.conf.v6",
            ".config/linode-cli",
            ".config/gh/hosts_token",
        ] {
            assert!(looks_secret(Path::new(p)), "{p}");
        }
        for p in [
            ".bashrc",
            ".config/nvim/init.lua",
            ".ssh/id_ed25519.pub",
            ".ghc/ghci.conf",
            ".config/fish/config.fish",
            ".gitconfig",
        ] {
            assert!(!looks_secret(Path::new(p)), "{p}");
        }
    }
}
