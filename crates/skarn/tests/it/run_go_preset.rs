//! The go preset (issue 23 item 1): what `go` fetches into its module
//! cache and builds into its build cache is kept in the workspace's store,
//! so the next run of the same workspace builds offline; another
//! workspace's runs and the host's `go` never see it. A module proxy laid
//! out on disk (`GOPROXY=file://...`, go's own proxy protocol) serves the
//! dependency, so no network is needed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::*;
use skarn_test_support::TempDir;

const DEP: &str = "example.test/dep";

/// A module proxy directory holding `example.test/dep@v1.0.0`.
fn proxy(t: &TempDir) -> PathBuf {
    let root = t.dir("proxy");
    let v = t.dir(format!("proxy/{DEP}/@v"));
    std::fs::write(v.join("list"), "v1.0.0\n").unwrap();
    std::fs::write(
        v.join("v1.0.0.info"),
        "{\"Version\":\"v1.0.0\",\"Time\":\"2026-01-01T00:00:00Z\"}\n",
    )
    .unwrap();
    std::fs::write(v.join("v1.0.0.mod"), format!("module {DEP}\n\ngo 1.19\n")).unwrap();
    // go's module zip: every file under `MODULE@VERSION/`.
    let script = format!(
        "import zipfile,sys\nz=zipfile.ZipFile(sys.argv[1],'w')\n\
         z.writestr('{DEP}@v1.0.0/go.mod','module {DEP}\\n\\ngo 1.19\\n')\n\
         z.writestr('{DEP}@v1.0.0/dep.go','package dep\\n\\nconst Value = \"from-the-store\"\\n')\n\
         z.close()\n"
    );
    let o = Command::new("python3")
        .args(["-c", &script])
        .arg(v.join("v1.0.0.zip"))
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    root
}

fn project(t: &TempDir, name: &str) -> PathBuf {
    let ws = t.dir(name);
    t.file(
        format!("{name}/go.mod"),
        format!("module example.test/{name}\n\ngo 1.19\n\nrequire {DEP} v1.0.0\n"),
    );
    t.file(
        format!("{name}/main.go"),
        format!(
            "package main\n\nimport (\n\t\"fmt\"\n\t\"{DEP}\"\n)\n\nfunc main() {{ fmt.Println(dep.Value) }}\n"
        ),
    );
    ws
}

fn go_available() -> bool {
    host_has("go", "version")
}

#[test]
fn go_fetches_once_then_builds_offline_from_this_workspaces_store_only() {
    if !go_available() {
        skarn_test_support::skip!("go is not installed (.ci/install.d installs golang-go)");
    }
    let t = TempDir::new("go-preset");
    let home = t.dir("home");
    let _stores = Stores(home.clone());
    let proxy = proxy(&t);
    let (ws1, ws2) = (project(&t, "ws1"), project(&t, "ws2"));
    // Files made just before a run count as the run's (a 50 ms margin).
    std::thread::sleep(std::time::Duration::from_millis(300));
    let fetch = format!(
        "GOPROXY=file://{} GOSUMDB=off GOFLAGS=-mod=mod go run .",
        proxy.display()
    );

    // Run 1: the go preset is detected from go.mod; the dependency comes
    // from the proxy directory (granted for this run only).
    let o = run_in(
        &ws1,
        &home,
        &["--read", proxy.to_str().unwrap(), "--report"],
        &["sh", "-c", &fetch],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o).trim(), "from-the-store", "{}", err(&o));
    assert!(
        err(&o).contains("store: ") && err(&o).contains(".cache/go-build"),
        "the go caches are kept in the store: {}",
        err(&o)
    );
    assert!(
        !home.join("go").exists() && !home.join(".cache/go-build").exists(),
        "the host's go caches were written"
    );

    // Run 2: no network, no proxy (GOPROXY=off is set by skarn under
    // `--net deny`): builds from this workspace's store.
    let o = run_in(&ws1, &home, &["--net", "deny"], &["go", "run", "."]);
    assert_eq!(code(&o), 0, "offline build from the store: {}", err(&o));
    assert_eq!(out(&o).trim(), "from-the-store");

    // Another workspace's runs do not see it.
    let o = run_in(&ws2, &home, &["--net", "deny"], &["go", "run", "."]);
    assert_ne!(code(&o), 0, "ws2 built from ws1's store: {}", out(&o));

    // The host's go (same HOME) has nothing.
    let h = Command::new("go")
        .args(["run", "."])
        .current_dir(&ws1)
        .env("HOME", &home)
        .env("GOPROXY", "off")
        .env("GOTOOLCHAIN", "local")
        .env_remove("GOPATH")
        .env_remove("GOMODCACHE")
        .env_remove("GOCACHE")
        .env_remove("XDG_CACHE_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(code(&h), 0, "the host's go built from the store");
    assert!(
        !is_host_cache(&home),
        "the dependency reached the host's cache"
    );
}

/// Whether the host's module cache holds the dependency.
fn is_host_cache(home: &Path) -> bool {
    home.join("go/pkg/mod/example.test").exists()
}
