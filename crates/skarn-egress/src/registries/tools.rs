//! npm and pip: asked for their configuration by running them through a
//! [`Probe`] (neutral directory, sanitized PATH and environment), so
//! neither reads a workspace `.npmrc` nor imports a workspace `pip`.

use super::Found;
use super::probe::{Probe, output};

pub(super) fn npm(probe: &Probe, f: &mut Found) {
    // npm reads the project .npmrc (none: it starts in the neutral
    // directory), the user's and the global one, and the npm_config_*
    // environment; the full list includes its default. npm starts node
    // by PATH, so node is checked too. No update check: asking for the
    // configuration must not contact it.
    let user_cfg = probe
        .var("npm_config_userconfig")
        .or_else(|| probe.var("NPM_CONFIG_USERCONFIG"))
        .map(std::path::PathBuf::from)
        .or_else(|| {
            probe
                .var("HOME")
                .map(|h| std::path::Path::new(h).join(".npmrc"))
        });
    if let Some(p) = user_cfg.filter(|p| p.exists() && probe.untrusted(p)) {
        f.notes.push(format!(
            "npm: {} is writable from the sandbox: npm registries not added (name them with \
             --net allow:HOST)",
            p.display()
        ));
        return;
    }
    let mut cmd = match probe.command("npm", &["node"]) {
        Ok(c) => c,
        Err(why) => {
            f.notes
                .push(format!("npm: {why}; npm registries not added"));
            return;
        }
    };
    cmd.args(["config", "list", "--json"])
        .env("npm_config_update_notifier", "false");
    let Some(out) = output(&mut cmd) else {
        f.notes
            .push("npm: `npm config list` failed; npm registries not added".into());
        return;
    };
    let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(&out) else {
        f.notes
            .push("npm: unreadable `npm config list --json` output".into());
        return;
    };
    for (k, v) in m {
        if (k == "registry" || k.ends_with(":registry"))
            && let Some(u) = v.as_str()
        {
            f.add_url(u, &format!("npm config {k}"));
        }
    }
}

pub(super) fn pip(probe: &Probe, f: &mut Found) {
    for var in ["PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"] {
        if let Some(v) = probe.var(var).and_then(|v| v.to_str()) {
            for u in v.split_whitespace() {
                f.add_url(u, var);
            }
        }
    }
    // `-I`: no script or current directory on sys.path, no PYTHON*
    // variables, no user site-packages.
    let mut why = Vec::new();
    let py = ["python3", "python"].into_iter().find_map(|p| {
        let mut c = probe.command(p, &[]).map_err(|e| why.push(e)).ok()?;
        output(c.args(["-I", "--version"]))?;
        Some(p)
    });
    let Some(py) = py else {
        why.push("no python found".into());
        f.notes
            .push(format!("pip: {}; pip registries not added", why.join("; ")));
        return;
    };
    let run = |args: &[&str]| {
        let mut c = probe.command(py, &[]).ok()?;
        output(c.arg("-I").args(args))
    };
    // A configuration file pip would read that lies (or links) inside a
    // writable root could name any host: pip's configuration is then not
    // read at all.
    let writable_cfg = pip_config_files(probe)
        .into_iter()
        .find(|p| p.exists() && probe.untrusted(p));
    let cfg = match &writable_cfg {
        Some(p) => {
            f.notes.push(format!(
                "pip: {} is writable from the sandbox: pip's configuration is not read (name \
                 such an index with --net allow:HOST)",
                p.display()
            ));
            None
        }
        None => run(&["-m", "pip", "config", "list"]),
    };
    let mut configured = false;
    for line in cfg.as_deref().unwrap_or("").lines() {
        let Some((key, val)) = line.split_once('=') else {
            continue;
        };
        if key.ends_with(".index-url") || key.ends_with(".extra-index-url") {
            configured |= key.ends_with(".index-url");
            for u in val.trim_matches(['\'', '"']).split_whitespace() {
                f.add_url(u, &format!("pip config {key}"));
            }
        }
    }
    if configured || probe.var("PIP_INDEX_URL").is_some() {
        return;
    }
    // pip's own default index and the host it serves files from.
    let code = "from pip._internal.models.index import PyPI as P; print(P.url); \
                print('https://' + P.file_storage_domain + '/')";
    match run(&["-c", code]) {
        Some(out) => out
            .lines()
            .for_each(|u| f.add_url(u, "pip's default index")),
        None => f
            .notes
            .push("pip: could not ask pip for its default index".into()),
    }
}

/// The configuration files pip reads (global, user), as its documentation
/// lists them for Unix.
fn pip_config_files(probe: &Probe) -> Vec<std::path::PathBuf> {
    use std::path::PathBuf;
    let var = |k: &str| probe.var(k).map(PathBuf::from);
    let mut files = vec![PathBuf::from("/etc/pip.conf")];
    let dirs = probe
        .var("XDG_CONFIG_DIRS")
        .and_then(|v| v.to_str())
        .unwrap_or("/etc/xdg")
        .to_owned();
    files.extend(
        dirs.split(':')
            .map(|d| PathBuf::from(d).join("pip/pip.conf")),
    );
    if let Some(h) = var("HOME") {
        files.push(h.join(".pip/pip.conf"));
        files.push(
            var("XDG_CONFIG_HOME")
                .unwrap_or_else(|| h.join(".config"))
                .join("pip/pip.conf"),
        );
    }
    files.extend(var("PIP_CONFIG_FILE"));
    files
}
