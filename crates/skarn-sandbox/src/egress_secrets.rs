//! Secrets for a run (issue 27), sandbox side: the bound hosts join the
//! proxy's allow list, the run's CA goes into the private home (the
//! certificate only: its key, like the values, goes to the proxy process
//! alone), and the command's environment gets the placeholders and the
//! variables that make the usual tools trust the run's CA.

use std::path::{Path, PathBuf};

use skarn_egress::secrets::SecretSpec;
use skarn_egress::{CaMaterial, make_run_ca};

use crate::plan::Plan;
use crate::policy::{HostList, NetPolicy};

/// Where the run CA's certificate and the bundle (system roots + run CA)
/// are put in the private home.
pub const CA_DIR: &str = ".cache/skarn-run";

/// Variables pointing tools at a CA bundle (system roots and the run CA).
const BUNDLE_VARS: &[&str] = &[
    "SSL_CERT_FILE",
    "CURL_CA_BUNDLE",
    "REQUESTS_CA_BUNDLE",
    "GIT_SSL_CAINFO",
    "CARGO_HTTP_CAINFO",
    "PIP_CERT",
    "npm_config_cafile",
    "AWS_CA_BUNDLE",
    "DENO_CERT",
];

/// Variables naming extra CAs only (added to the tool's own roots).
const EXTRA_VARS: &[&str] = &["NODE_EXTRA_CA_CERTS"];

/// The secrets granted to one run, with its CA.
pub struct RunSecrets {
    /// The bound secrets (values included).
    pub specs: Vec<SecretSpec>,
    /// The run's CA.
    pub ca: CaMaterial,
}

impl RunSecrets {
    /// Make the run's CA for `specs`; `None` without secrets.
    pub fn new(specs: Vec<SecretSpec>) -> Result<Option<RunSecrets>, String> {
        if specs.is_empty() {
            return Ok(None);
        }
        let hosts: Vec<String> = specs.iter().flat_map(|s| s.hosts.clone()).collect();
        let ca = make_run_ca(&hosts).map_err(|e| e.to_string())?;
        Ok(Some(RunSecrets { specs, ca }))
    }

    /// Whether `text` holds one of the values.
    pub fn holds_value(&self, text: &[u8]) -> bool {
        self.specs.iter().any(|s| {
            let v = s.value.as_bytes();
            !v.is_empty() && text.windows(v.len()).any(|w| w == v)
        })
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

    /// The CA files for the private home `home`: `(path, contents)`.
    pub fn home_files(&self, home: &Path) -> Vec<(PathBuf, String)> {
        let dir = home.join(CA_DIR);
        let mut bundle = system_bundle().unwrap_or_default();
        if !bundle.is_empty() && !bundle.ends_with('\n') {
            bundle.push('\n');
        }
        bundle.push_str(&self.ca.cert_pem);
        vec![
            (dir.join("run-ca.pem"), self.ca.cert_pem.clone()),
            (dir.join("ca-bundle.pem"), bundle),
        ]
    }

    /// Hand the secrets to the planned proxy and set the command's
    /// variables: each secret's placeholder, and the CA variables.
    pub fn attach(self, plan: &mut Plan, home: &Path) -> Result<(), String> {
        let Some(e) = plan.egress.as_mut() else {
            return Err(
                "secrets need the egress proxy, which needs a network namespace (not \
                 available here)"
                    .into(),
            );
        };
        let dir = home.join(CA_DIR);
        let bundle = dir.join("ca-bundle.pem").display().to_string();
        let ca = dir.join("run-ca.pem").display().to_string();
        let env = &mut plan.set_env;
        for s in &self.specs {
            env.push((s.env.clone(), s.placeholder.clone()));
        }
        env.extend(BUNDLE_VARS.iter().map(|v| (v.to_string(), bundle.clone())));
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
        e.secrets = self.specs;
        e.ca = Some(self.ca);
        Ok(())
    }
}

/// The system's CA bundle: the caller's `SSL_CERT_FILE`, else the first
/// usual location that exists.
fn system_bundle() -> Option<String> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(f) = std::env::var_os("SSL_CERT_FILE") {
        candidates.push(f.into());
    }
    for p in [
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/ssl/ca-bundle.pem",
        "/etc/ssl/cert.pem",
    ] {
        candidates.push(p.into());
    }
    candidates.iter().find_map(|p| {
        std::fs::read_to_string(p)
            .ok()
            .filter(|t| t.len() < 8 << 20)
    })
}
