//! cargo: its configuration files read directly, except those a sandboxed
//! command could have written (inside a writable root).

use std::path::PathBuf;

use super::Found;
use super::probe::Probe;

fn cargo_home(probe: &Probe) -> Option<PathBuf> {
    probe
        .var("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| probe.var("HOME").map(|h| PathBuf::from(h).join(".cargo")))
}

pub(super) fn cargo(ws: &std::path::Path, probe: &Probe, f: &mut Found) {
    let mut files: Vec<PathBuf> = ws
        .ancestors()
        .map(|d| d.join(".cargo/config.toml"))
        .collect();
    files.extend(ws.ancestors().map(|d| d.join(".cargo/config")));
    let home = cargo_home(probe).filter(|h| {
        let bad = probe.untrusted(h);
        if bad {
            f.notes.push(format!(
                "cargo: {} is writable from the sandbox: its configuration and registry cache \
                 are not read",
                h.display()
            ));
        }
        !bad
    });
    if let Some(h) = &home {
        files.push(h.join("config.toml"));
        files.push(h.join("config"));
    }
    let mut replaced = false;
    for file in files {
        if !file.exists() {
            continue;
        }
        if probe.untrusted(&file) {
            f.notes.push(format!(
                "cargo: skipped {}: writable from the sandbox; name a registry it configures \
                 with --net allow:HOST",
                file.display()
            ));
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(v) = text.parse::<toml::Table>() else {
            f.notes
                .push(format!("cargo: cannot parse {}", file.display()));
            continue;
        };
        let from = file.display().to_string();
        for (sect, key) in [("registries", "index"), ("source", "registry")] {
            if let Some(t) = v.get(sect).and_then(|s| s.as_table()) {
                for (name, entry) in t {
                    if let Some(u) = entry.get(key).and_then(|u| u.as_str()) {
                        f.add_url(u, &format!("{from} {sect}.{name}"));
                    }
                    replaced |= sect == "source"
                        && name == "crates-io"
                        && entry.get("replace-with").is_some();
                }
            }
        }
    }
    for (k, v) in probe.vars() {
        if k.starts_with("CARGO_REGISTRIES_") && k.ends_with("_INDEX") {
            f.add_url(v, k);
        }
    }
    if replaced {
        return;
    }
    // The default registry: what cargo itself recorded in its cache
    // (`registry/index/<host>-<hash>`, with the download and API URLs the
    // index announces in its config.json).
    let Some(idx) = home.map(|h| h.join("registry/index")) else {
        return;
    };
    let mut any = false;
    for e in std::fs::read_dir(&idx).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some((host, _hash)) = name.rsplit_once('-') else {
            continue;
        };
        f.add_url(&format!("https://{host}/"), "cargo's registry cache");
        any = true;
        if let Ok(c) = std::fs::read_to_string(e.path().join("config.json"))
            && let Ok(serde_json::Value::Object(m)) = serde_json::from_str(&c)
        {
            for k in ["dl", "api"] {
                if let Some(u) = m.get(k).and_then(|u| u.as_str()) {
                    f.add_url(u, &format!("cargo index config.json {k}"));
                }
            }
        }
    }
    if !any && !super::cargo_default::ask(probe, f) {
        f.notes.push(format!(
            "cargo: no registry configured and none cached in {}; run cargo once with \
             network, or configure [registries]/[source]",
            idx.display()
        ));
    }
}
