//! Secret files git's own configuration names: TLS client keys and
//! certificates (`http.sslKey`, `http.sslCert`, also per URL and for the
//! proxy), the cookie file (`http.cookieFile`), a signing key given as a
//! file (`user.signingKey` with ssh signing), and the key of
//! `core.sshCommand`. Read as git reads its configuration: the system,
//! XDG and global files, every file they include, the environment's
//! `GIT_CONFIG_*` items, and the workspace repository's own file. Each
//! place is hidden like `~/.ssh` wherever it lies inside a grant.

use std::path::{Path, PathBuf};

use crate::protect::git::gitconfig::{self, Item};

/// `http` keys naming a secret file (any URL subsection too).
const HTTP_FILES: &[&str] = &[
    "cookiefile",
    "sslkey",
    "sslcert",
    "proxysslkey",
    "proxysslcert",
];

/// Places kept at most.
const MAX_PLACES: usize = 256;

/// The secret files git's configuration names: (place, why). `repo` is
/// the workspace's git directory (its `config` is read too); relative
/// values are relative to `cwd`, where git runs.
pub fn places(home: &Path, repo: Option<&Path>, cwd: &Path) -> Vec<(PathBuf, String)> {
    let mut files = crate::protect::host_programs::global_git_files(home);
    files.extend(
        crate::protect::host_programs::global_git_includes(home)
            .into_iter()
            .map(|(p, _)| p),
    );
    if let Some(r) = repo {
        files.push(r.join("config"));
        // With its includes (any condition), as git reads them.
        let mut inc = Vec::new();
        crate::protect::host_programs::includes_of(&r.join("config"), home, &mut inc);
        files.extend(inc.into_iter().map(|(p, _)| p));
    }
    let mut items: Vec<(Item, String)> = Vec::new();
    for f in files {
        let Ok(Some(text)) = gitconfig::read_file(&f) else {
            continue;
        };
        let via = f.display().to_string();
        items.extend(
            gitconfig::parse(&text)
                .items
                .into_iter()
                .map(|it| (it, via.clone())),
        );
    }
    items.extend(crate::protect::host_programs::env_config_items());
    let mut out = Vec::new();
    for (it, via) in &items {
        for p in named(it, home, cwd) {
            if out.len() < MAX_PLACES {
                out.push((p, format!("{} of {via} (a secret git reads)", it.key())));
            }
        }
    }
    out
}

/// The secret files one item names.
fn named(it: &Item, home: &Path, cwd: &Path) -> Vec<PathBuf> {
    let Some(v) = it.value.as_deref().map(str::trim).filter(|v| !v.is_empty()) else {
        return Vec::new();
    };
    match (it.section.as_str(), it.name.as_str()) {
        ("http", n) if HTTP_FILES.contains(&n) => vec![path(v, home, cwd)],
        ("user", "signingkey") => signing_key(v, home, cwd),
        ("core", "sshcommand") => crate::secrets::ssh_keys::named_deep(v, home, cwd),
        _ => Vec::new(),
    }
}

/// `user.signingKey`: a file when it is a path (ssh signing), not a key
/// id or a literal key (`key::...`, `ssh-ed25519 ...`); for a public key
/// file, the private key beside it too.
fn signing_key(v: &str, home: &Path, cwd: &Path) -> Vec<PathBuf> {
    let is_path = v.starts_with(['/', '~', '.']) || (v.contains('/') && !v.contains(' '));
    if !is_path || v.starts_with("key::") {
        return Vec::new();
    }
    let p = path(v, home, cwd);
    let mut out = vec![p.clone()];
    if let Some(s) = p.to_str().and_then(|s| s.strip_suffix(".pub")) {
        out.push(PathBuf::from(s));
    }
    out
}

/// A path value as git takes it: `~/` is the home, relative is from `cwd`.
fn path(v: &str, home: &Path, cwd: &Path) -> PathBuf {
    let v = v.trim_matches('"');
    let p = match v.strip_prefix("~/") {
        Some(r) => home.join(gitconfig::value_path(r)),
        None => cwd.join(gitconfig::value_path(v)),
    };
    crate::policy::config::normalize(&p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_keys_of_the_global_configuration_and_its_includes_are_named() {
        let t = skarn_test_support::TempDir::new("git-secret-files");
        let home = t.dir("home");
        t.file(
            "home/.gitconfig",
            "[http]\n\tcookieFile = ~/cookies\n[http \"https://x.test/\"]\n\tsslKey = rel/key\n\
             [user]\n\tsigningKey = ~/.ssh/sign.pub\n[include]\n\tpath = inc\n",
        );
        t.file(
            "home/inc",
            "[core]\n\tsshCommand = ssh -i /k/id -v\n[user]\n\tsigningKey = ABCDEF12\n",
        );
        let repo = t.dir("ws/.git");
        t.file("ws/.git/config", "[http]\n\tsslCert = /k/cert\n");
        let got: Vec<PathBuf> = places(&home, Some(&repo), Path::new("/ws"))
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        for want in [
            home.join("cookies"),
            PathBuf::from("/ws/rel/key"),
            home.join(".ssh/sign.pub"),
            home.join(".ssh/sign"),
            PathBuf::from("/k/id"),
            PathBuf::from("/k/cert"),
        ] {
            assert!(got.contains(&want), "{want:?} not in {got:?}");
        }
        // A key id is no file.
        assert!(!got.iter().any(|p| p.ends_with("ABCDEF12")), "{got:?}");
    }
}
