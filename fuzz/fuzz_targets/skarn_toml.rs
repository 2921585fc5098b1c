//! `skarn.toml` loading and policy assembly on any file: a typed error
//! or a policy, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_sandbox::policy::config::RunConfig;
use skarn_sandbox::{Layer, LayerHost, Policy, Workspace};
use std::sync::OnceLock;

fuzz_target!(|data: &[u8]| {
    static T: OnceLock<tempfile::TempDir> = OnceLock::new();
    let Some(dir) = T
        .get_or_init(|| tempfile::tempdir().expect("tempdir"))
        .path()
        .canonicalize()
        .ok()
    else {
        return;
    };
    let f = dir.join("skarn.toml");
    if std::fs::write(&f, data).is_err() {
        return;
    }
    let Ok(Some(c)) = RunConfig::load(&f, &dir) else {
        return;
    };
    let Ok(layer) = Layer::from_config(&c, None) else {
        return;
    };
    let host = LayerHost {
        home: None,
        cwd: dir.clone(),
        resolv_target: None,
        dns_source: "fuzz".into(),
        expand_registries: false,
        command: Vec::new(),
    };
    let ws = Workspace::fixed(&dir, "fuzz");
    let _ = Policy::from_layers(&ws, &[layer], &host);
});
