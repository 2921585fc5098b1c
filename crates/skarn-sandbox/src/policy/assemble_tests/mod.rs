//! Precedence of [`Policy::from_layers`], without spawning anything.
//!
//! `precedence`: how layers combine; `input_checks`: what bad flags, files
//! and workspaces are told.

mod input_checks;
mod precedence;

use std::path::{Path, PathBuf};

use super::*;
use crate::policy::config::RunConfig;
use crate::policy::layer_flags::{FlagContext, GrantFlag};
use crate::policy::workspace::WorkspaceRoot;

/// A temporary directory (canonical path), removed with its `TempDir`.
struct Tmp(PathBuf, #[allow(dead_code)] skarn_test_support::TempDir);

impl Tmp {
    fn new() -> Tmp {
        let d = skarn_test_support::TempDir::new("layers");
        // The paths the test files grant to read or run (a grant of a
        // missing path is an error).
        for g in ["ra", "rb", "xa", "xb"] {
            std::fs::create_dir_all(d.path().join(g)).unwrap();
        }
        Tmp(std::fs::canonicalize(d.path()).unwrap(), d)
    }
}

fn host(cwd: &Path) -> LayerHost {
    LayerHost {
        home: None,
        cwd: cwd.to_path_buf(),
        resolv_target: Some("/run/resolv/resolv.conf".into()),
        dns_source: "default (DNS for --net)".into(),
        expand_registries: true,
    }
}

/// Write `text` as `name` in `dir` and load it as a layer.
fn layer(dir: &Path, name: &str, text: &str) -> Layer {
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    let c = RunConfig::load(&f, dir).unwrap().unwrap();
    Layer::from_config(&c, None).unwrap()
}

fn config_error(dir: &Path, text: &str) -> String {
    let f = dir.join("bad.toml");
    std::fs::write(&f, text).unwrap();
    match RunConfig::load(&f, dir) {
        Err(e) => e.to_string(),
        Ok(c) => Layer::from_config(&c.unwrap(), None)
            .unwrap_err()
            .to_string(),
    }
}

const A: &str = "[run]
net = \"outbound\"
timeout = \"10m\"
memory = \"1G\"
max_procs = 10
max_file_size = 10
protect_persistence = false
fail_closed = false
allow_home_workspace = true
private_home = false
preset = \"none\"
read = [\"ra\"]
write = [\"wa\"]
exec = [\"xa\"]
deny_read = [\"da\"]
allow_env = [\"A_TOKEN\"]
";

const B: &str = "[run]
net = \"loopback\"
timeout = 30
memory = 2048
max_procs = 20
max_file_size = \"2G\"
protect_persistence = true
fail_closed = true
allow_home_workspace = false
private_home = true
preset = [\"rust\", \"node\"]
read = [\"rb\"]
write = [\"wb\"]
exec = [\"xb\"]
deny_read = [\"db\"]
allow_env = [\"B_TOKEN\"]
";

type Scalars = (
    NetPolicy,
    crate::Limits,
    bool,
    bool,
    bool,
    bool,
    Vec<String>,
);

fn scalars(p: &Policy) -> Scalars {
    (
        p.net.clone(),
        p.limits.clone(),
        p.protect_persistence,
        p.fail_closed,
        p.allow_home_workspace,
        p.private_home,
        Vec::new(),
    )
}
