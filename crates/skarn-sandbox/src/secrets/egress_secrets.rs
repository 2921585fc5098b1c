//! Secrets for a run (issue 27), sandbox side: the bound hosts join the
//! proxy's allow list, the run's CA goes into the private home (the
//! certificate only: its key, like the values, goes to the proxy process
//! alone), and the command's environment gets the placeholders and the
//! variables that make the usual tools trust the run's CA.

use std::path::{Path, PathBuf};

use skarn_egress::secrets::SecretSpec;
use skarn_egress::{CaMaterial, make_run_ca};

use crate::linux::plan::Plan;
use crate::policy::{HostList, NetPolicy};

/// Where the run CA's certificate and the bundle (system roots + run CA)
/// are put in the private home.
pub const CA_DIR: &str = ".cache/skarn-run";

/// The other places tried, in order, when a grant covers [`CA_DIR`].
const CA_DIR_OTHERS: &[&str] = &[".local/share/skarn-run", ".skarn-run"];

/// Where init writes the run CA files in the private home `home`:
/// [`CA_DIR`], unless one of `granted` (the run's grants) covers it — a
/// `--write ~/.cache` binds the host's directory there, read-only or
/// shared with the host (attack atk27d L3) — then the first other place
/// no grant covers; `None` when every one is covered.
pub fn ca_dir(home: &Path, granted: &[&Path]) -> Option<PathBuf> {
    std::iter::once(CA_DIR)
        .chain(CA_DIR_OTHERS.iter().copied())
        .map(|rel| home.join(rel))
        .find(|d| !granted.iter().any(|g| d.starts_with(g)))
}

/// Before a gateway server's start, remove what is not ours on the way to
/// its run CA files: its state directory ([`CA_DIR`] below its HOME) is
/// writable by the server and kept between starts, and a link left at
/// `.cache`, `.cache/skarn-run` or a CA file's name (attack atk27 F11)
/// would otherwise be protected read-only by the plan and make set-up
/// fail (init never writes through it: see `mounts::beneath`). Called
/// while the server is not running; links are removed, never followed.
pub fn tidy_ca_dir(home: &Path) {
    let mut p = home.to_path_buf();
    for part in [".cache", "skarn-run"] {
        p.push(part);
        match std::fs::symlink_metadata(&p) {
            Ok(md) if md.is_dir() => {}
            Ok(_) => {
                let _ = std::fs::remove_file(&p);
                return;
            }
            Err(_) => return,
        }
    }
    for f in ["run-ca.pem", "ca-bundle.pem"] {
        let f = p.join(f);
        if let Ok(md) = std::fs::symlink_metadata(&f)
            && !md.is_file()
        {
            if md.is_dir() {
                let _ = std::fs::remove_dir_all(&f);
            } else {
                let _ = std::fs::remove_file(&f);
            }
        }
    }
}

/// A variable: (name, value).
pub(crate) type EnvVar = (String, String);

/// Variables pointing tools at a CA bundle (system roots and the run CA),
/// set in every run granted a secret: a tool that reads one uses that
/// file instead of its own roots, so a caller's value (a bundle without
/// the run CA) would fail every bound host (atk27n F5), and a tool with
/// roots of its own (gcloud's, httplib2's, gRPC's) needs the variable to
/// trust the run CA at all.
const BUNDLE_VARS: &[&str] = &[
    "SSL_CERT_FILE",
    "CURL_CA_BUNDLE",
    "REQUESTS_CA_BUNDLE",
    "GIT_SSL_CAINFO",
    "CARGO_HTTP_CAINFO",
    "PIP_CERT",
    "npm_config_cafile",
    "NPM_CONFIG_CAFILE",
    "YARN_HTTPS_CA_FILE_PATH",
    "AWS_CA_BUNDLE",
    "DENO_CERT",
    // gcloud, httplib2 (older Google clients), gRPC core (every language
    // but Go and Java), nix.
    "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
    "HTTPLIB2_CA_CERTS",
    "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
    "NIX_SSL_CERT_FILE",
    // Bundler, Composer, Hex (mix), Yarn 1, websocket-client, HashiCorp Vault.
    "BUNDLE_SSL_CA_CERT",
    "COMPOSER_CAFILE",
    "HEX_CACERTS_PATH",
    "YARN_CA_FILE_PATH",
    "WEBSOCKET_CLIENT_CA_BUNDLE",
    "VAULT_CACERT",
];

/// The caller's variables of Poetry's per-source setting
/// `certificates.<source>.cert` (`POETRY_CERTIFICATES_<SOURCE>_CERT`)
/// naming a file (not `true`/`false`): each, like [`BUNDLE_VARS`].
fn poetry_cert_vars() -> Vec<String> {
    std::env::vars_os()
        .filter_map(|(k, v)| {
            let k = k.into_string().ok()?;
            let named = k.len() > "POETRY_CERTIFICATES__CERT".len()
                && k.starts_with("POETRY_CERTIFICATES_")
                && k.ends_with("_CERT");
            let file = !matches!(v.to_str(), Some("true" | "false" | ""));
            (named && file).then_some(k)
        })
        .collect()
}

/// Variables naming extra CAs only (added to the tool's own roots).
const EXTRA_VARS: &[&str] = &["NODE_EXTRA_CA_CERTS"];

/// The secrets granted to one run, with its CA.
pub struct RunSecrets {
    /// The bound secrets (values included).
    pub specs: Vec<SecretSpec>,
    /// The run's CA.
    pub ca: CaMaterial,
    /// The values in every form the proxy's scrubber knows.
    finder: skarn_egress::ValueFinder,
    /// Each secret's exposure record ([`super::exposed`]), set by the
    /// start-up check, handed to the proxy.
    pub(crate) marks: std::sync::OnceLock<Vec<Option<PathBuf>>>,
}

impl RunSecrets {
    /// Make the run's CA for `specs`; `None` without secrets.
    pub fn new(specs: Vec<SecretSpec>) -> Result<Option<RunSecrets>, String> {
        if specs.is_empty() {
            return Ok(None);
        }
        let hosts: Vec<String> = specs.iter().flat_map(|s| s.hosts.clone()).collect();
        let ca = make_run_ca(&hosts).map_err(|e| e.to_string())?;
        let finder = skarn_egress::ValueFinder::new(&specs);
        Ok(Some(RunSecrets {
            specs,
            ca,
            finder,
            marks: std::sync::OnceLock::new(),
        }))
    }

    /// Whether `text` holds one of the values: verbatim, or a run of its
    /// secret part in any form the proxy's scrubber knows (reversed, hex,
    /// base64 as in `Basic user:value`, JSON or `%XX` escapes; atk27 F6).
    pub fn holds_value(&self, text: &[u8]) -> bool {
        self.finder.found_in(text)
            || self.specs.iter().any(|s| {
                let v = s.value.as_bytes();
                !v.is_empty() && memchr::memmem::find(text, v).is_some()
            })
    }

    /// The granted values, as bytes (for [`super::value_cache`]'s key).
    pub(crate) fn values(&self) -> impl Iterator<Item = &[u8]> {
        self.specs.iter().map(|s| s.value.as_bytes())
    }

    fn hosts(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for h in self.specs.iter().flat_map(|s| &s.hosts) {
            if !v.contains(h) {
                v.push(h.clone());
            }
        }
        v
    }

    /// Route the bound hosts through the proxy: `deny` becomes
    /// `allow:<bound hosts>`, an allow list gains them; a direct network
    /// policy is refused (the command would reach the hosts around the
    /// proxy, with placeholders that do not work).
    pub fn widen_net(&self, net: &mut NetPolicy) -> Result<(), String> {
        let hosts = self.hosts();
        match net {
            NetPolicy::DenyAll => {
                *net = NetPolicy::AllowHosts(HostList {
                    allow: hosts,
                    ..HostList::default()
                });
                Ok(())
            }
            NetPolicy::AllowHosts(list) => {
                for h in hosts {
                    if !list.allow.contains(&h) {
                        list.allow.push(h);
                    }
                }
                Ok(())
            }
            _ => Err(
                "secrets need --net deny (the default) or --net allow:...: with a direct \
                 network the command would bypass the proxy that puts them in"
                    .into(),
            ),
        }
    }

    /// Name secret `name`'s placeholder variable `var` instead (a gateway
    /// server's `env = { VAR = { secret = "name" } }`).
    pub fn rename_env(specs: &mut [SecretSpec], name: &str, var: &str) {
        for s in specs.iter_mut().filter(|s| s.name == name) {
            s.env = var.to_string();
        }
    }

    /// Hand the secrets to the planned proxy and set the command's
    /// variables: each secret's placeholder, and the CA variables naming
    /// the run CA's certificate and the bundle, which init writes into
    /// `dir` (a directory the command sees at the same path: the private
    /// home's [`CA_DIR`], a gateway server's state directory). The proxy
    /// verifies bound hosts against the caller's roots, any inside
    /// `writable` (the grants the command can write) left out
    /// ([`super::upstream_roots`]). Returns warnings to show the user.
    pub fn attach(
        self,
        plan: &mut Plan,
        dir: &Path,
        writable: &[PathBuf],
    ) -> Result<Vec<String>, String> {
        let Some(e) = plan.egress.as_mut() else {
            return Err(
                "secrets need the egress proxy, which needs a network namespace (not \
                 available here)"
                    .into(),
            );
        };
        let bundle = dir.join("ca-bundle.pem").display().to_string();
        let ca = dir.join("run-ca.pem").display().to_string();
        // Written at every start (a state directory keeps an older run's).
        plan.fs.push(crate::linux::plan::FsOp::Bundle {
            path: dir.join("run-ca.pem"),
            roots: false,
            extra: self.ca.cert_pem.clone(),
        });
        // The system part is the proxy's roots (set below): the user's CA
        // files read by this process, certificates only (atk27i F7).
        plan.fs.push(crate::linux::plan::FsOp::Bundle {
            path: dir.join("ca-bundle.pem"),
            roots: true,
            extra: self.ca.cert_pem.clone(),
        });
        let env = &mut plan.set_env;
        for s in &self.specs {
            env.push((s.env.clone(), s.placeholder.clone()));
        }
        env.extend(BUNDLE_VARS.iter().map(|v| (v.to_string(), bundle.clone())));
        env.extend(poetry_cert_vars().into_iter().map(|v| (v, bundle.clone())));
        env.extend(EXTRA_VARS.iter().map(|v| (v.to_string(), ca.clone())));
        plan.report.notes.push(format!(
            "secrets: {} hold placeholders; the proxy terminates TLS for {} with this run's CA \
             (trusted inside only) and puts the values in requests allowed to carry them",
            self.specs
                .iter()
                .map(|s| format!("{} (${})", s.name, s.env))
                .collect::<Vec<_>>()
                .join(", "),
            self.hosts().join(", ")
        ));
        let mut warnings = Vec::new();
        e.upstream_roots = Some(super::upstream_roots::from_caller(writable, &mut warnings));
        plan.report.notes.extend(warnings.iter().cloned());
        e.exposure_marks = self.marks.get().cloned().unwrap_or_default();
        e.secrets = self.specs;
        e.ca = Some(self.ca);
        Ok(warnings)
    }
}

#[cfg(test)]
impl RunSecrets {
    /// The tests' fixture: one secret `tok` (variable `TOKEN`) of `value`,
    /// its placeholder `placeholder` (`None`: `p` repeated), bound to `host`.
    pub(crate) fn for_tests(value: &str, placeholder: Option<&str>, host: &str) -> RunSecrets {
        let spec = skarn_egress::secrets::SecretSpec {
            name: "tok".into(),
            env: "TOKEN".into(),
            placeholder: placeholder.map_or_else(|| "p".repeat(value.len()), str::to_string),
            value: zeroize::Zeroizing::new(value.into()),
            hosts: vec![host.into()],
            methods: Vec::new(),
            paths: Vec::new(),
            header: None,
        };
        RunSecrets::new(vec![spec])
            .expect("a valid fixture")
            .expect("one secret")
    }
}

impl super::value_swap::ValueSwap for RunSecrets {
    fn placeholder_of(&self, v: &str) -> Option<&str> {
        RunSecrets::placeholder_of(self, v)
    }
    fn holds_value(&self, text: &[u8]) -> bool {
        RunSecrets::holds_value(self, text)
    }
}

mod dotfile_swap;
