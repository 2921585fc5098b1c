//! Secret files and directories the caller's environment names
//! (`PGPASSFILE`, `KUBECONFIG`, `KRB5CCNAME=FILE:...`, the key of
//! `GIT_SSH_COMMAND`): the host's tools read their credentials there, so
//! each place is hidden like the home's own secret paths wherever it lies
//! inside a grant (links resolved by the caller). Kept as data, one reason
//! per entry.

use std::path::{Path, PathBuf};

/// How a variable's value names its places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// One file or directory.
    Path,
    /// A `:`-separated list of them.
    List,
    /// One file after one of these type prefixes (or a bare path); other
    /// types (`KEYRING:`, `KCM:`, `MEMORY:`) name no file.
    Typed(&'static [&'static str]),
    /// An ssh command line: its `-i`, `IdentityFile` and `-F` files.
    SshCommand,
    /// A directory: these entries of it.
    Inside(&'static [&'static str]),
}

use Form::*;

/// (variable, how it names places, why the place is secret).
pub const ENV_SECRET_FILES: &[(&str, Form, &str)] = &[
    ("PGPASSFILE", Path, "libpq's password file"),
    (
        "PGSERVICEFILE",
        Path,
        "libpq's service file (may hold passwords)",
    ),
    ("PGSSLKEY", Path, "libpq's client key"),
    (
        "MYSQL_TEST_LOGIN_FILE",
        Path,
        "mysql's login file (passwords)",
    ),
    ("SOPS_AGE_KEY_FILE", Path, "sops' age private keys"),
    (
        "SOPS_AGE_SSH_PRIVATE_KEY_FILE",
        Path,
        "sops' ssh private key",
    ),
    (
        "KRB5CCNAME",
        Typed(&["FILE:", "DIR:"]),
        "Kerberos tickets (credential cache)",
    ),
    (
        "KRB5_KTNAME",
        Typed(&["FILE:", "WRFILE:"]),
        "a Kerberos keytab",
    ),
    (
        "KRB5_CLIENT_KTNAME",
        Typed(&["FILE:", "WRFILE:"]),
        "a Kerberos client keytab",
    ),
    (
        "GOOGLE_APPLICATION_CREDENTIALS",
        Path,
        "a Google service account key",
    ),
    ("CLOUDSDK_CONFIG", Path, "gcloud's configuration and tokens"),
    (
        "CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE",
        Path,
        "gcloud's credential file",
    ),
    ("AWS_SHARED_CREDENTIALS_FILE", Path, "AWS access keys"),
    (
        "AWS_CONFIG_FILE",
        Path,
        "AWS configuration (keys, SSO sessions)",
    ),
    (
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        Path,
        "an AWS web identity token",
    ),
    ("AZURE_CONFIG_DIR", Path, "the Azure CLI's tokens"),
    (
        "AZURE_CLIENT_CERTIFICATE_PATH",
        Path,
        "an Azure client certificate and key",
    ),
    (
        "AZURE_FEDERATED_TOKEN_FILE",
        Path,
        "an Azure federated token",
    ),
    (
        "KUBECONFIG",
        List,
        "kubectl's configurations (tokens, client keys)",
    ),
    (
        "DOCKER_CONFIG",
        Path,
        "docker's registry logins (config.json)",
    ),
    ("DOCKER_CERT_PATH", Path, "docker's TLS client key"),
    (
        "REGISTRY_AUTH_FILE",
        Path,
        "podman's and skopeo's registry logins",
    ),
    ("NETRC", Path, "curl's and git's .netrc passwords"),
    ("GNUPGHOME", Path, "GnuPG's private keys"),
    ("PASSWORD_STORE_DIR", Path, "pass' password store"),
    ("GH_CONFIG_DIR", Path, "gh's tokens"),
    ("TF_CLI_CONFIG_FILE", Path, "terraform's credentials blocks"),
    ("VAULT_CLIENT_KEY", Path, "Vault's TLS client key"),
    ("OCI_CLI_CONFIG_FILE", Path, "the OCI CLI's configuration"),
    ("OCI_CLI_KEY_FILE", Path, "an OCI API signing key"),
    ("BOTO_CONFIG", Path, "boto's and gsutil's credentials"),
    ("S3CMD_CONFIG", Path, "s3cmd's access keys"),
    (
        "RCLONE_CONFIG",
        Path,
        "rclone's remotes (tokens, passwords)",
    ),
    (
        "NPM_CONFIG_USERCONFIG",
        Path,
        "npm's user configuration (auth tokens)",
    ),
    ("HF_TOKEN_PATH", Path, "the Hugging Face token"),
    ("HF_HOME", Inside(&["token"]), "the Hugging Face token"),
    (
        "CARGO_HOME",
        Inside(&["credentials.toml", "credentials"]),
        "cargo's registry tokens",
    ),
    (
        "PULUMI_HOME",
        Inside(&["credentials.json"]),
        "Pulumi's access tokens",
    ),
    (
        "KAGGLE_CONFIG_DIR",
        Inside(&["kaggle.json"]),
        "Kaggle's API key",
    ),
    ("GIT_SSL_KEY", Path, "git's TLS client key (http.sslKey)"),
    (
        "GIT_SSL_CERT",
        Path,
        "git's TLS client certificate (http.sslCert)",
    ),
    ("GIT_SSH_COMMAND", SshCommand, "the ssh key git's ssh uses"),
    ("SKARN_CONFIG", Path, "skarn's own configuration"),
    ("SKARN_COMPRESS_RULES", Path, "skarn's own output rules"),
    (
        "SKARN_RECALL_DIR",
        Path,
        "skarn's store of raw command output",
    ),
];

/// Values longer than this are not read (a hostile environment must not
/// make the scan costly).
const MAX_VALUE: usize = 64 * 1024;
/// Places kept at most from one variable.
const MAX_PER_VAR: usize = 64;

/// The secret places this process's environment names: (place, why).
/// `~/` is `home`; a relative place is relative to `cwd` (where the
/// caller's tools run).
pub fn places(home: Option<&Path>, cwd: &Path) -> Vec<(PathBuf, String)> {
    let mut out = places_with(|n| std::env::var(n).ok(), home, cwd);
    out.extend(shaped_with(std::env::vars(), home, cwd));
    out
}

/// Name endings of variables that hold the path of a credential file
/// (`ANSIBLE_VAULT_PASSWORD_FILE`, `RESTIC_PASSWORD_FILE`,
/// `CONSUL_HTTP_TOKEN_FILE`, `PIP_CLIENT_CERT`, `NOMAD_CLIENT_KEY`, ...):
/// no list of tools is complete, so any variable of this shape that is
/// not in [`ENV_SECRET_FILES`] is read as one (attack atk22g F3).
const SECRET_SHAPES: &[&str] = &[
    "_PASSWORD_FILE",
    "_PASSWD_FILE",
    "_PASS_FILE",
    "_PASSFILE",
    "_PASSPHRASE_FILE",
    "_TOKEN_FILE",
    "_TOKEN_PATH",
    "_SECRET_FILE",
    "_SECRETS_FILE",
    "_KEY_FILE",
    "_KEYFILE",
    "_KEY_PATH",
    "_PRIVATE_KEY",
    "_CLIENT_KEY",
    "_CLIENT_CERT",
    "_CLIENT_CERTIFICATE",
    "_CERTIFICATE_PATH",
    "_CREDENTIALS",
    "_CREDENTIALS_FILE",
    "_CREDENTIALS_PATH",
    "_CREDS_FILE",
    "_CREDS_PATH",
    "_AUTH_FILE",
    "_REGISTRY_CONFIG",
    "_KUBECONFIG",
];

/// Further variables of other shapes that name credential files.
const SECRET_NAMED: &[&str] = &[
    "KUBE_CONFIG_PATH",
    "OS_CLIENT_CONFIG_FILE",
    "ETCDCTL_KEY",
    "ETCDCTL_CERT",
    "VAULT_CLIENT_CERT",
    "BORG_KEY_FILE",
    "GOOGLE_GHA_CREDS_PATH",
];

/// The places the variables of `vars` that have a credential file's
/// shape name (those [`ENV_SECRET_FILES`] lists are read by
/// [`places_with`]).
pub fn shaped_with(
    vars: impl IntoIterator<Item = (String, String)>,
    home: Option<&Path>,
    cwd: &Path,
) -> Vec<(PathBuf, String)> {
    let h = home.unwrap_or(Path::new("/nonexistent"));
    let mut out = Vec::new();
    for (k, v) in vars.into_iter().take(1024) {
        let up = k.to_ascii_uppercase();
        if ENV_SECRET_FILES.iter().any(|(n, _, _)| *n == k)
            || v.trim().is_empty()
            || v.len() > MAX_VALUE
            || !(SECRET_NAMED.contains(&up.as_str())
                || SECRET_SHAPES.iter().any(|s| up.ends_with(s)))
        {
            continue;
        }
        // A value that is not a path (a URL, a literal key) names nothing.
        if v.contains("://") || !(v.contains('/') || v.starts_with('.')) {
            continue;
        }
        for w in v.split(':').take(MAX_PER_VAR) {
            if let Some(p) = one(w, h, cwd) {
                out.push((
                    p,
                    format!("${k}: a credential file (by the variable's name)"),
                ));
            }
        }
        if out.len() >= 256 {
            break;
        }
    }
    out
}

/// [`places`] with the environment looked up by `get`.
pub fn places_with(
    get: impl Fn(&str) -> Option<String>,
    home: Option<&Path>,
    cwd: &Path,
) -> Vec<(PathBuf, String)> {
    let h = home.unwrap_or(Path::new("/nonexistent"));
    let mut out = Vec::new();
    for (var, form, why) in ENV_SECRET_FILES {
        let Some(v) = get(var).filter(|v| !v.trim().is_empty() && v.len() <= MAX_VALUE) else {
            continue;
        };
        let via = |p: &Path| (p.to_path_buf(), format!("${var}: {why}"));
        let named: Vec<PathBuf> = match form {
            Path => one(&v, h, cwd).into_iter().collect(),
            List => v.split(':').filter_map(|w| one(w, h, cwd)).collect(),
            Typed(kinds) => match v.split_once(':') {
                Some((k, rest)) if kinds.iter().any(|t| t[..t.len() - 1] == *k) => {
                    one(rest, h, cwd).into_iter().collect()
                }
                // Another type (`KEYRING:...`): no file.
                Some((k, _)) if !k.contains('/') => Vec::new(),
                _ => one(&v, h, cwd).into_iter().collect(),
            },
            SshCommand => crate::secrets::ssh_keys::named_deep(&v, h, cwd),
            Inside(entries) => match one(&v, h, cwd) {
                Some(d) => entries.iter().map(|e| d.join(e)).collect(),
                None => Vec::new(),
            },
        };
        out.extend(named.iter().take(MAX_PER_VAR).map(|p| via(p)));
    }
    out
}

/// One place: `~/` and `$VAR` expanded, relative to `cwd`.
fn one(w: &str, home: &Path, cwd: &Path) -> Option<PathBuf> {
    let w = crate::secrets::ssh_keys::expand(w.trim(), home);
    if w.is_empty() {
        return None;
    }
    let p = match w.strip_prefix("~/") {
        Some(r) => home.join(r),
        None if w == "~" => return None,
        None => cwd.join(&w),
    };
    Some(crate::policy::config::normalize(&p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_shaped_like_credential_files_are_read() {
        let vars = [
            ("ANSIBLE_VAULT_PASSWORD_FILE", "/ws/.vault_pass"),
            ("RESTIC_PASSWORD_FILE", "~/restic"),
            ("pip_client_cert", "rel/client.pem"),
            ("KUBE_CONFIG_PATH", "/k/a:/k/b"),
            ("PGPASSFILE", "/listed/elsewhere"),
            ("SERVICE_TOKEN_FILE", "https://example.invalid/x"),
            ("MY_PRIVATE_KEY", "-----BEGIN"),
            ("EDITOR", "/usr/bin/vi"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let got: Vec<PathBuf> = shaped_with(vars, Some(Path::new("/h")), Path::new("/ws"))
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        let want: Vec<PathBuf> = [
            "/ws/.vault_pass",
            "/h/restic",
            "/ws/rel/client.pem",
            "/k/a",
            "/k/b",
        ]
        .map(PathBuf::from)
        .to_vec();
        assert_eq!(got, want);
    }

    #[test]
    fn each_form_names_its_places() {
        let env = |n: &str| {
            Some(
                match n {
                    "PGPASSFILE" => "~/pg",
                    "KUBECONFIG" => "/k/a::rel/b",
                    "KRB5CCNAME" => "FILE:/tmp/krb",
                    "KRB5_KTNAME" => "MEMORY:x",
                    "KRB5_CLIENT_KTNAME" => "/k/keytab",
                    "GIT_SSH_COMMAND" => "ssh -i '/k/my key' -o User=x",
                    "CARGO_HOME" => "/c",
                    "HF_HOME" => "",
                    _ => return None,
                }
                .to_string(),
            )
        };
        let got: Vec<PathBuf> = places_with(env, Some(Path::new("/h")), Path::new("/ws"))
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        let want: Vec<PathBuf> = [
            "/h/pg",
            "/tmp/krb",
            "/k/keytab",
            "/k/a",
            "/ws/rel/b",
            "/c/credentials.toml",
            "/c/credentials",
            "/k/my key",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let mut g = got.clone();
        g.sort();
        let mut w = want.clone();
        w.sort();
        assert_eq!(g, w, "{got:?}");
    }
}
