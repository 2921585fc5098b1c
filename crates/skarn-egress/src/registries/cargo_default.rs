//! cargo's default registry when nothing names it (no configuration, no
//! cache: a first `cargo build` on this machine), as cargo itself reports
//! it: cargo resolves a throw-away project with one dependency, in a
//! scratch directory with an empty `CARGO_HOME`, through a proxy address
//! that refuses at once, and names the index it could not reach. Nothing
//! leaves the machine; the host's cargo home is not touched.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::Found;
use super::probe::Probe;

/// A fresh scratch directory only this process uses, in none of the
/// writable roots: cargo reads `.cargo/config.toml` and rustup
/// `rust-toolchain.toml` in every ancestor of the directory it starts in.
fn scratch(probe: &Probe) -> Option<PathBuf> {
    let base = std::env::temp_dir();
    if probe.untrusted(&base) {
        return None;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .subsec_nanos();
    let d = base.join(format!(
        "skarn-cargo-registry-{}-{nanos}",
        std::process::id()
    ));
    #[cfg(unix)]
    let b = {
        let mut b = std::fs::DirBuilder::new();
        std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
        b
    };
    #[cfg(not(unix))]
    let b = std::fs::DirBuilder::new();
    b.create(&d).ok()?;
    Some(d)
}

/// The first backquoted URL in cargo's message.
fn reported_url(text: &str) -> Option<&str> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .find(|s| s.starts_with("https://") || s.starts_with("http://"))
}

fn ask_in(dir: &Path, probe: &Probe) -> Result<String, String> {
    let p = dir.join("p");
    std::fs::create_dir_all(p.join("src")).map_err(|e| e.to_string())?;
    std::fs::write(
        p.join("Cargo.toml"),
        "[package]\nname = \"registry-probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         [dependencies]\nregistry-probe-dependency = \"1\"\n",
    )
    .map_err(|e| e.to_string())?;
    std::fs::write(p.join("src/lib.rs"), "").map_err(|e| e.to_string())?;
    // An address that refuses: a port just given back by this process.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let log = dir.join("stderr");
    let file = std::fs::File::create(&log).map_err(|e| e.to_string())?;
    let mut cmd = probe.command("cargo", &[])?;
    cmd.current_dir(&p)
        .env("CARGO_HOME", dir.join("home"))
        .env("CARGO_HTTP_PROXY", format!("127.0.0.1:{port}"))
        .env("CARGO_NET_RETRY", "0")
        .env("CARGO_HTTP_TIMEOUT", "5")
        .env("CARGO_TERM_COLOR", "never")
        .args(["generate-lockfile", "--quiet"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(file);
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    let start = Instant::now();
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if start.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            return Err("cargo did not answer in 10 s".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let text = std::fs::read(&log).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&text[..text.len().min(64 * 1024)]).into_owned();
    reported_url(&text)
        .map(str::to_owned)
        .ok_or_else(|| "cargo named no registry".into())
}

/// Ask cargo for its default registry; false when it could not say.
pub(super) fn ask(probe: &Probe, f: &mut Found) -> bool {
    let Some(dir) = scratch(probe) else {
        f.notes.push(
            "cargo: no scratch directory outside the sandbox's writable places to ask cargo \
             for its default registry"
                .into(),
        );
        return false;
    };
    let r = ask_in(&dir, probe);
    let _ = std::fs::remove_dir_all(&dir);
    match r {
        Ok(url) => {
            f.add_url(&url, "cargo's default registry, as cargo reports it");
            true
        }
        Err(why) => {
            f.notes.push(format!(
                "cargo: could not ask cargo for its default registry: {why}"
            ));
            false
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_url_cargo_names() {
        let t = "error: failed\n\nCaused by:\n  failed to download from `https://idx.test/config.json`\n";
        assert_eq!(super::reported_url(t), Some("https://idx.test/config.json"));
        assert_eq!(super::reported_url("package `p v0` failed"), None);
    }
}
