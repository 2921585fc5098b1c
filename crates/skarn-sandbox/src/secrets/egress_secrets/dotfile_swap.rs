//! The placeholder forms of a run's secrets for the user's dotfiles:
//! `~/.npmrc` lines, git's stored credentials, pip index URLs.

use std::path::{Path, PathBuf};

use skarn_egress::secrets::config::SecretsConfig;

use super::{EnvVar, RunSecrets};

impl RunSecrets {
    /// Where the user's dotfiles held a granted value, the same setting
    /// with the placeholder: lines to add to the sanitised copies
    /// (`~/.npmrc`: `//host/:_authToken=...` and the like; git's stored
    /// credentials, `https://user:<placeholder>@host`) and variables
    /// (`PIP_INDEX_URL`/`PIP_EXTRA_INDEX_URL` for a pip index URL with the
    /// value as its password; an INI section cannot be appended to).
    pub fn dotfile_placeholders(&self, home: &Path) -> (Vec<(PathBuf, String)>, Vec<EnvVar>) {
        let read = |rel: &str| {
            let p = home.join(rel);
            std::fs::metadata(&p)
                .ok()
                .filter(|m| m.is_file() && m.len() < 1 << 20)
                .and_then(|_| std::fs::read_to_string(&p).ok())
                .map(|t| (p, t))
        };
        let mut lines = Vec::new();
        let mut vars = Vec::new();
        if let Some((p, text)) = read(".npmrc") {
            for l in text.lines() {
                if let Some(r) = self.npmrc_line(l.trim()) {
                    lines.push((p.clone(), r));
                }
            }
            // Basic auth, base64-encoded (atk27i F6).
            for r in crate::secrets::encoded_copies::npmrc_basic_lines(self, &text) {
                lines.push((p.clone(), r));
            }
        }
        // Git's stored credentials (`credential.helper = store`): each URL
        // whose user or password is a granted value, with the placeholder
        // there, in the private home's `~/.git-credentials`, and the
        // sanitised `~/.gitconfig` told to use that store (attack atk27d
        // L1: `git push` with the credentials the user already keeps).
        let mut stored = false;
        for rel in [".git-credentials", ".config/git/credentials"] {
            let Some((_, text)) = read(rel) else { continue };
            for l in text.lines() {
                if let Some(r) = self.pip_urls(l.trim())
                    && !r.contains(char::is_whitespace)
                {
                    lines.push((home.join(".git-credentials"), r));
                    stored = true;
                }
            }
        }
        if stored {
            lines.push((
                home.join(".gitconfig"),
                "[credential]\n\thelper = store".to_string(),
            ));
        }
        // `~/.netrc` (curl, git over HTTPS, pip/requests, wget): the
        // entries holding a granted value, with the placeholder (atk27i F5).
        if let Some((p, text)) = read(".netrc") {
            let copy = crate::secrets::netrc_copy::placeholder_copy(self, &text);
            if !copy.is_empty() {
                lines.push((p, copy.trim_end().to_string()));
            }
        }
        for rel in [".config/pip/pip.conf", ".pip/pip.conf"] {
            let Some((_, text)) = read(rel) else { continue };
            for l in text.lines() {
                let Some((k, v)) = l.split_once(['=', ':']) else {
                    continue;
                };
                let var = match k.trim() {
                    "index-url" | "index_url" => "PIP_INDEX_URL",
                    "extra-index-url" | "extra_index_url" => "PIP_EXTRA_INDEX_URL",
                    _ => continue,
                };
                if let Some(r) = self.pip_urls(v.trim())
                    && !vars.iter().any(|(n, _): &(String, String)| n == var)
                {
                    vars.push((var.to_string(), r));
                }
            }
        }
        // A line keeps the user's key or URL around the placeholder: one
        // holding any configured secret's real value (a token in a
        // registry path next to another's `_authToken`) is not copied
        // (atk27k F7). A configuration that cannot be read now names
        // values unknown here: nothing is copied (atk27m H3).
        match SecretsConfig::load(&home.join(".config/skarn/config.toml")) {
            Ok(c) => {
                let known = c.known_values(Some(home));
                lines.retain(|(_, l)| known.holding(l.as_bytes()).is_none());
                vars.retain(|(_, v)| known.holding(v.as_bytes()).is_none());
            }
            Err(_) => {
                lines.clear();
                vars.clear();
            }
        }
        (lines, vars)
    }

    /// The placeholder of the granted value `v` is exactly (quotes and
    /// blanks aside), if it is one.
    pub(crate) fn placeholder_of(&self, v: &str) -> Option<&str> {
        let v = v.trim().trim_matches(['"', '\'']);
        self.specs
            .iter()
            .find(|s| !s.value.is_empty() && s.value.as_str() == v)
            .map(|s| s.placeholder.as_str())
    }

    /// An `~/.npmrc` line `key=<granted value>` as `key=<placeholder>`;
    /// nothing else of the line is kept (atk27 F7: the rest of a line
    /// could hold another, ungranted credential).
    ///
    /// A value that is only npm's reference to a variable, `${NAME}` or
    /// `${NAME?}`, is kept as it is when `NAME` is the variable a granted
    /// secret is given in: inside it holds the placeholder, so npm reads
    /// that (atk27j F3: npm's documented form of a token). A reference
    /// to any other variable is not kept (inside it is unset or not the
    /// user's, and npm refuses a file naming an unset one).
    fn npmrc_line(&self, l: &str) -> Option<String> {
        let (k, v) = l.split_once('=')?;
        let k = k.trim();
        let v = match self.placeholder_of(v) {
            Some(ph) => ph.to_string(),
            None => self.granted_reference(v)?,
        };
        let ok = !k.is_empty()
            && !k.contains(char::is_whitespace)
            && !k.contains('$')
            && !self.holds_value(k.as_bytes());
        ok.then(|| format!("{k}={v}"))
    }

    /// `v` (quotes and blanks aside) as `${NAME}` when it is exactly
    /// npm's reference to the variable of a granted secret (`${NAME?}`
    /// too, npm's optional form).
    fn granted_reference(&self, v: &str) -> Option<String> {
        let v = v.trim();
        let v = [('"', '"'), ('\'', '\'')]
            .iter()
            .find_map(|(a, b)| v.strip_prefix(*a)?.strip_suffix(*b))
            .unwrap_or(v);
        let inner = v.strip_prefix("${")?.strip_suffix('}')?;
        let name = inner.strip_suffix('?').unwrap_or(inner);
        let plain = name
            .bytes()
            .enumerate()
            .all(|(i, b)| b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit()));
        let granted = !name.is_empty() && plain && self.specs.iter().any(|s| s.env == name);
        granted.then(|| format!("${{{name}}}"))
    }

    /// A pip index URL list holding a granted value: each URL whose user
    /// or password is exactly a granted value gets its placeholder there,
    /// every other URL loses its userinfo (as in the sanitised pip.conf).
    fn pip_urls(&self, v: &str) -> Option<String> {
        if !self.holds_value(v.as_bytes()) {
            return None;
        }
        let mut out = Vec::new();
        let mut any = false;
        for url in v.split_whitespace() {
            let stripped = crate::secrets::dotfiles::strip_userinfo(url);
            let with_ph = url.split_once("://").and_then(|(scheme, rest)| {
                let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
                let (userinfo, host) = rest[..end].rsplit_once('@')?;
                let (user, pass) = userinfo.split_once(':').unwrap_or((userinfo, ""));
                // Userinfo is percent-encoded (atk27i F6).
                let enc = |v| crate::secrets::encoded_copies::placeholder_of_encoded(self, v);
                let (user, pass) = match (enc(user), enc(pass)) {
                    (Some(u), None) if pass.is_empty() => (u.to_string(), None),
                    (None, Some(p)) if !self.holds_value(user.as_bytes()) => {
                        (user.to_string(), Some(p.to_string()))
                    }
                    _ => return None,
                };
                let userinfo = match pass {
                    Some(p) => format!("{user}:{p}"),
                    None => user,
                };
                Some(format!("{scheme}://{userinfo}@{host}{}", &rest[end..]))
            });
            match with_ph {
                Some(u) if !self.holds_value(u.as_bytes()) && !self.carries_other(&u) => {
                    any = true;
                    out.push(u);
                }
                _ if !self.holds_value(stripped.as_bytes())
                    && !crate::secrets::credential_text::carries_credential(&stripped) =>
                {
                    out.push(stripped)
                }
                _ => {}
            }
        }
        any.then(|| out.join(" "))
    }
}
