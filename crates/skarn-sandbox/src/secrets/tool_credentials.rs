//! Placeholder copies of the credentials cargo and git keep in their own
//! files (issue 27): where the user's `credentials.toml` holds a granted
//! value as a registry token, or the global git configuration sends it in
//! an `http.extraHeader` or a `url.<base>.insteadOf` base, the private
//! home gets the same setting with the placeholder, so `cargo publish`
//! and `git push` work inside unchanged and the proxy puts the value on
//! the wire toward the secret's hosts only.
//!
//! Each file is read by the parser of its format (cargo's TOML, git's
//! configuration syntax); only the entries that held a granted value are
//! copied, nothing else of the file (the rest may hold credentials the run
//! was not granted).

use std::path::Path;

use base64::Engine;

use super::egress_secrets::{EnvVar, RunSecrets};
use crate::protect::git::gitconfig::{self, Item};

/// Largest credentials or configuration file read.
const MAX_FILE: u64 = 1 << 20;

/// Shortest run of base64 characters decoded when looking for a value in
/// a header (`Basic <base64 of user:value>`).
const MIN_B64: usize = 8;

fn read_small(p: &Path) -> Option<String> {
    let md = std::fs::metadata(p).ok()?;
    if !md.is_file() || md.len() > MAX_FILE {
        return None;
    }
    std::fs::read_to_string(p).ok()
}

/// Cargo's registry tokens, with the placeholder where a granted value
/// was.
#[derive(Debug, Default, PartialEq)]
pub struct CargoTokens {
    /// `credentials.toml` text holding only the swapped entries (empty
    /// when none).
    pub file: String,
    /// The same tokens as cargo's variables (`CARGO_REGISTRY_TOKEN`,
    /// `CARGO_REGISTRIES_<NAME>_TOKEN`), for a cargo home the private home
    /// does not hold.
    pub vars: Vec<EnvVar>,
}

/// Cargo's variable for registry `name`'s token (`None`: crates.io's).
fn cargo_var(name: Option<&str>) -> String {
    match name {
        None => "CARGO_REGISTRY_TOKEN".into(),
        Some(n) => format!(
            "CARGO_REGISTRIES_{}_TOKEN",
            n.to_ascii_uppercase().replace('-', "_")
        ),
    }
}

impl RunSecrets {
    /// `text` with every granted value it holds replaced by its
    /// placeholder — verbatim, or inside a base64 word (HTTP basic
    /// credentials `user:value`); `None` when it held none or still holds
    /// one in a form not rewritten here.
    pub fn swap_values(&self, text: &str) -> Option<String> {
        if !self.holds_value(text.as_bytes()) {
            return None;
        }
        let mut out = text.to_string();
        for s in self.specs.iter().filter(|s| !s.value.is_empty()) {
            out = out.replace(s.value.as_str(), &s.placeholder);
        }
        let out = self.swap_in_base64(&out);
        (!self.holds_value(out.as_bytes())).then_some(out)
    }

    /// Whether `copy`, a setting with placeholders where granted values
    /// were, still carries a credential the run was not granted (a URL
    /// password, a query secret, a token next to the placeholder): such a
    /// setting is not copied at all.
    pub(crate) fn carries_other(&self, copy: &str) -> bool {
        let phs: Vec<&str> = self.specs.iter().map(|s| s.placeholder.as_str()).collect();
        super::credential_text::carries_other_credential(copy, &phs)
    }

    /// Each base64 word of `text` whose decoded text holds a value,
    /// decoded, swapped and encoded again.
    fn swap_in_base64(&self, text: &str) -> String {
        let b64 = base64::engine::general_purpose::STANDARD;
        let is_b64 = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=');
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find(is_b64) {
            out.push_str(&rest[..start]);
            let tail = &rest[start..];
            let end = tail.find(|c| !is_b64(c)).unwrap_or(tail.len());
            let word = &tail[..end];
            let swapped = (word.len() >= MIN_B64)
                .then(|| b64.decode(word).ok())
                .flatten()
                .and_then(|b| String::from_utf8(b).ok())
                .filter(|d| self.holds_value(d.as_bytes()))
                .map(|mut d| {
                    for s in self.specs.iter().filter(|s| !s.value.is_empty()) {
                        d = d.replace(s.value.as_str(), &s.placeholder);
                    }
                    b64.encode(d)
                });
            out.push_str(swapped.as_deref().unwrap_or(word));
            rest = &tail[end..];
        }
        out.push_str(rest);
        out
    }

    /// The registry tokens of cargo home `cargo_home` that are exactly a
    /// granted value, with its placeholder: from its credentials
    /// (`credentials.toml`, else the older `credentials`) and from its
    /// configuration (`config.toml`, `config`), which cargo also reads
    /// tokens from; the first file naming a registry wins, as in cargo.
    pub fn cargo_tokens(&self, cargo_home: &Path) -> CargoTokens {
        let creds = ["credentials.toml", "credentials"]
            .iter()
            .find_map(|f| read_small(&cargo_home.join(f)));
        let config = ["config.toml", "config"]
            .iter()
            .find_map(|f| read_small(&cargo_home.join(f)));
        let docs: Vec<toml::Table> = [creds, config]
            .into_iter()
            .flatten()
            .filter_map(|t| t.parse::<toml::Table>().ok())
            .collect();
        let token = |t: &toml::Value| {
            let v = t.get("token")?.as_str()?;
            self.placeholder_of(v)
        };
        let mut out = toml::Table::new();
        let mut vars = Vec::new();
        let registry = docs
            .iter()
            .find_map(|d| d.get("registry").filter(|r| r.get("token").is_some()));
        if let Some(ph) = registry.and_then(token) {
            let mut t = toml::Table::new();
            t.insert("token".into(), ph.into());
            out.insert("registry".into(), t.into());
            vars.push((cargo_var(None), ph.to_string()));
        }
        let mut regs = toml::Table::new();
        let mut seen: Vec<&str> = Vec::new();
        let named = docs
            .iter()
            .filter_map(|d| d.get("registries")?.as_table())
            .flatten()
            .filter(|(_, reg)| reg.get("token").is_some());
        for (name, reg) in named {
            if seen.contains(&name.as_str()) {
                continue;
            }
            seen.push(name);
            let Some(ph) = token(reg) else { continue };
            if self.holds_value(name.as_bytes()) || name.contains(['\n', '"']) {
                continue;
            }
            let mut t = toml::Table::new();
            t.insert("token".into(), ph.into());
            regs.insert(name.clone(), t.into());
            vars.push((cargo_var(Some(name)), ph.to_string()));
        }
        if !regs.is_empty() {
            out.insert("registries".into(), regs.into());
        }
        let file = if out.is_empty() {
            String::new()
        } else {
            toml::to_string(&out).unwrap_or_default()
        };
        CargoTokens { file, vars }
    }

    /// Git configuration lines for the private home's `~/.gitconfig`: each
    /// `http[.<url>].extraHeader` and credential-bearing
    /// `url.<base>.insteadOf`/`pushInsteadOf` of the user's global git
    /// configuration (`~/.gitconfig`, `~/.config/git/config`) that held a
    /// granted value, with the placeholder; empty when none did.
    pub fn git_settings(&self, home: &Path) -> String {
        let mut items: Vec<Item> = Vec::new();
        for rel in [".gitconfig", ".config/git/config"] {
            let Some(text) = read_small(&home.join(rel)) else {
                continue;
            };
            for it in gitconfig::parse(&text).items {
                let swapped = match (it.section.as_str(), it.name.as_str()) {
                    ("http", "extraheader") => self.swapped_header(&it),
                    ("url", "insteadof" | "pushinsteadof") => self.swapped_base(&it),
                    _ => None,
                };
                if let Some(s) = swapped
                    && !items.contains(&s)
                {
                    items.push(s);
                }
            }
        }
        if items.is_empty() {
            String::new()
        } else {
            gitconfig::write(&items)
        }
    }

    /// An `extraHeader` holding a value, with the placeholder; its URL
    /// subsection must hold none.
    fn swapped_header(&self, it: &Item) -> Option<Item> {
        let v = self.swap_values(it.value.as_deref()?)?;
        let sub = it.sub.as_deref();
        if sub.is_some_and(|s| self.holds_value(s.as_bytes()) || self.carries_other(s))
            || v.contains(['\n', '\r'])
            || self.carries_other(&v)
        {
            return None;
        }
        Some(Item {
            value: Some(v),
            ..it.clone()
        })
    }

    /// A `url.<base>` rewrite whose base holds a value, with the
    /// placeholder; the URL it replaces must hold none.
    fn swapped_base(&self, it: &Item) -> Option<Item> {
        let base = self.swap_values(it.sub.as_deref()?)?;
        let v = it.value.as_deref()?;
        if self.holds_value(v.as_bytes())
            || base.contains(['\n', '\r', '"'])
            || self.carries_other(&base)
            || self.carries_other(v)
        {
            return None;
        }
        Some(Item {
            sub: Some(base),
            ..it.clone()
        })
    }
}

pub use super::cargo_config::cargo_home;

#[cfg(test)]
#[path = "tool_credentials_tests.rs"]
mod tests;
