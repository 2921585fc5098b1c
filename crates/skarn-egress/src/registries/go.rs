//! Go: the module proxies of `GOPROXY` and the checksum database of
//! `GOSUMDB`, as `go env` reports them (the caller's variables, the file
//! `go env -w` writes, go's defaults), asked through a [`Probe`] with
//! `GOTOOLCHAIN=local` so that no other toolchain is fetched or run.

use super::Found;
use super::probe::{Probe, output};

pub(super) fn go(probe: &Probe, f: &mut Found) {
    let settings = probe
        .var("GOENV")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            let cfg = probe
                .var("XDG_CONFIG_HOME")
                .map(std::path::PathBuf::from)
                .filter(|p| p.is_absolute())
                .or_else(|| {
                    probe
                        .var("HOME")
                        .map(|h| std::path::Path::new(h).join(".config"))
                })?;
            Some(cfg.join("go/env"))
        });
    if let Some(p) = settings.filter(|p| p.exists() && probe.untrusted(p)) {
        f.notes.push(format!(
            "go: {} is writable from the sandbox: go's proxies not added (name them with \
             --net allow:HOST)",
            p.display()
        ));
        return;
    }
    let mut cmd = match probe.command("go", &[]) {
        Ok(c) => c,
        Err(why) => {
            f.notes.push(format!("go: {why}; go's proxies not added"));
            return;
        }
    };
    cmd.args(["env", "-json", "GOPROXY", "GOSUMDB"])
        .env("GOTOOLCHAIN", "local");
    let Some(out) = output(&mut cmd) else {
        f.notes
            .push("go: `go env` failed; go's proxies not added".into());
        return;
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&out) else {
        f.notes.push("go: unreadable `go env -json` output".into());
        return;
    };
    let field = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
    add_proxies(&field("GOPROXY"), f);
    add_sumdb(&field("GOSUMDB"), f);
}

/// `GOPROXY`: a list split by `,` or `|`; `direct` and `off` name no host.
fn add_proxies(list: &str, f: &mut Found) {
    let mut direct = false;
    for entry in list
        .split([',', '|'])
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        match entry {
            "direct" => direct = true,
            "off" => {}
            u if u.starts_with("file://") => {}
            u => f.add_url(u, "go env GOPROXY"),
        }
    }
    if direct {
        f.notes.push(
            "go: GOPROXY includes `direct` (modules fetched from their version-control hosts): \
             name those hosts with --net allow:HOST"
                .into(),
        );
    }
}

/// `GOSUMDB`: `off`, `NAME`, `NAME+KEY` or `NAME+KEY URL`; the database is
/// reached at its URL, else at `https://NAME`.
fn add_sumdb(value: &str, f: &mut Found) {
    let value = value.trim();
    if value.is_empty() || value == "off" {
        return;
    }
    let mut words = value.split_whitespace();
    let name = words.next().unwrap_or("");
    match words.next() {
        Some(url) => f.add_url(url, "go env GOSUMDB"),
        None => {
            let host = name.split('+').next().unwrap_or("");
            if !host.is_empty() {
                f.add_url(&format!("https://{host}/"), "go env GOSUMDB");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxies_and_checksum_databases() {
        let mut f = Found::default();
        add_proxies("https://mirror.test/go, direct|https://second.test", &mut f);
        add_proxies("off", &mut f);
        add_sumdb("sums.test+ce6e7565+AY5qEHUk", &mut f);
        add_sumdb("other+key https://sumproxy.test:8443/db", &mut f);
        add_sumdb("off", &mut f);
        assert_eq!(
            f.patterns,
            [
                "mirror.test",
                "second.test",
                "sums.test",
                "sumproxy.test:8443"
            ]
        );
        assert!(f.notes.iter().any(|n| n.contains("direct")));
    }
}
