//! The environment of a stdio downstream server: a minimal base taken from
//! the gateway's own environment (where programs are, who and where the
//! user is, locale, terminal, temporary and XDG directories) plus exactly
//! what the server's `env` table names. Nothing else is inherited, so a
//! secret in the gateway's environment (another server's token,
//! `SKARN_HTTP_TOKEN`, anything in the user's shell) reaches only the
//! server whose configuration asks for it with `{ from_env = "VAR" }`.

use std::collections::BTreeMap;
use std::ffi::OsString;

use crate::config::EnvValue;

/// Variables passed through by name.
const BASE: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR",
];

/// Variables passed through by prefix.
const BASE_PREFIXES: &[&str] = &["LC_", "XDG_"];

/// Whether `name` belongs to the base environment.
pub fn is_base(name: &str) -> bool {
    BASE.contains(&name) || BASE_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// A `from_env` variable that is not set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("environment variable {var} (env.{name} = {{ from_env = \"{var}\" }}) is not set")]
pub struct MissingVar {
    pub name: String,
    pub var: String,
}

/// The whole environment of a child: the base part of `parent` plus
/// `configured`, resolved against `parent`, with `{ state_file = "F" }`
/// values resolved to `state/F` (left out when `state` is `None`).
pub fn build_with_state(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    configured: &BTreeMap<String, EnvValue>,
    state: Option<&std::path::Path>,
) -> Result<Vec<(OsString, OsString)>, MissingVar> {
    let parent: BTreeMap<OsString, OsString> = parent.into_iter().collect();
    let mut out: BTreeMap<OsString, OsString> = parent
        .iter()
        .filter(|(k, _)| k.to_str().is_some_and(is_base))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (name, value) in configured {
        let v = match value {
            EnvValue::Literal(s) => OsString::from(s),
            EnvValue::FromEnv(f) => parent
                .get(&OsString::from(&f.from_env))
                .cloned()
                .ok_or_else(|| MissingVar {
                    name: name.clone(),
                    var: f.from_env.clone(),
                })?,
            // Set by the sandbox (a placeholder), never from here.
            EnvValue::Secret(_) => continue,
            EnvValue::StateFile(f) => match state {
                Some(dir) => dir.join(&f.state_file).into_os_string(),
                None => continue,
            },
        };
        out.insert(OsString::from(name), v);
    }
    Ok(out.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FromEnv;

    fn os(a: &str, b: &str) -> (OsString, OsString) {
        (a.into(), b.into())
    }

    #[test]
    fn only_base_and_configured() {
        let parent = vec![
            os("PATH", "/bin"),
            os("LC_ALL", "C"),
            os("XDG_CONFIG_HOME", "/c"),
            os("SKARN_HTTP_TOKEN", "s1"),
            os("GITHUB_TOKEN", "s2"),
            os("OTHER_SECRET", "s3"),
        ];
        let mut cfg = BTreeMap::new();
        cfg.insert("MODE".to_owned(), EnvValue::Literal("x".into()));
        cfg.insert(
            "GH".to_owned(),
            EnvValue::FromEnv(FromEnv {
                from_env: "GITHUB_TOKEN".into(),
            }),
        );
        let env = build_with_state(parent.clone(), &cfg, None).unwrap();
        let names: Vec<&str> = env.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert_eq!(names, ["GH", "LC_ALL", "MODE", "PATH", "XDG_CONFIG_HOME"]);
        assert!(env.contains(&os("GH", "s2")));
        cfg.insert(
            "X".to_owned(),
            EnvValue::FromEnv(FromEnv {
                from_env: "NOPE".into(),
            }),
        );
        let e = build_with_state(parent, &cfg, None).unwrap_err();
        assert_eq!(e.var, "NOPE");
        assert!(!e.to_string().contains("s2"));
    }
}
