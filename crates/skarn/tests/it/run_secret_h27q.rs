//! Attack atk27n F4, F4b, F5, what helper h27q fixed. The agent's own
//! file tools write outside any sandbox: what the hook lets them write
//! counts as a place a run may write (ADR 0307), so a secret's `command`
//! source never runs a module or script the agent wrote (F4b: a module
//! beside the source's script; F4: a script the source reaches after a
//! bare `cd`). And every CA-bundle variable tools read names the run's
//! bundle in a run granted a secret, whatever the caller set (F5).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use skarn_test_support::TempDir;

use crate::common::{code, err, out, run_command};
use crate::support_hook::claude_write;

const VALUE: &str = "tokREALh27qValue0123456789abcdef";

fn script(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `[secrets.tok]` with `command` (TOML array text), and `[secrets.ok]`,
/// an honest helper in `~/bin` reading `val`.
fn config(home: &Path, command: &str, val: &Path) {
    script(
        &home.join("bin/tok"),
        &format!("#!/bin/sh\ncat {}\n", val.display()),
    );
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.tok]\ncommand = {command}\nhosts = [\"example.test\"]\n\n\
             [secrets.ok]\ncommand = [{:?}]\nhosts = [\"example.test\"]\n",
            home.join("bin/tok").display().to_string()
        ),
    )
    .unwrap();
}

/// The agent writes `file` (the hook asked first, as Claude Code does),
/// then a run in `other` is granted `tok`: the planted code (making
/// `marker`) must not run on the host; the honest source still works.
fn agent_plants_then_granted(file: &Path, ws: &Path, home: &Path, other: &Path, marker: &Path) {
    let planted = format!(
        "#!/bin/sh\ntouch {}\nV={VALUE}\necho {VALUE}\n",
        marker.display()
    );
    if let Some(why) = claude_write(file, ws, home, &planted) {
        // Refused: the tool never writes it.
        eprintln!("the hook refused the write: {why}");
    } else {
        // The agent's tool writes on the host, unconfined.
        script(file, &planted);
    }
    let o = run_command(
        other,
        home,
        &["--secret", "tok"],
        &["sh", "-c", "echo \"TOK=$TOK\""],
    )
    .output()
    .unwrap();
    assert!(
        !marker.exists(),
        "the host ran what the agent's Write tool planted in {}: {}{}",
        file.display(),
        out(&o),
        err(&o)
    );
    assert!(!out(&o).contains(VALUE) && !err(&o).contains(VALUE));
    let ok = run_command(
        other,
        home,
        &["--secret", "ok"],
        &["sh", "-c", "echo \"OK=$OK\""],
    )
    .output()
    .unwrap();
    assert_eq!(code(&ok), 0, "{}{}", out(&ok), err(&ok));
    assert!(out(&ok).starts_with("OK=") && out(&ok).trim().len() > 10);
}

/// F4b: `sh ~/tools/tok.sh`, which sources `helper.sh` beside it; the
/// agent, working in `~/tools`, rewrites `helper.sh` (its text names no
/// such file, so the hook's text reading cannot refuse it).
#[test]
fn a_module_the_agent_writes_beside_a_sources_script_never_runs_on_the_host() {
    let t = TempDir::new("h27q-f4b");
    let home = t.dir("home");
    let val = t.dir("safe").join("val");
    std::fs::write(&val, format!("{VALUE}\n")).unwrap();
    let tools = home.join("tools");
    script(
        &tools.join("tok.sh"),
        "#!/bin/sh\n. \"$(dirname \"$0\")/helper.sh\"\necho \"$V\"\n",
    );
    script(&tools.join("helper.sh"), &format!("V={VALUE}\n"));
    let tok = tools.join("tok.sh").display().to_string();
    config(&home, &format!("[\"/bin/sh\", {tok:?}]"), &val);
    let other = t.dir("other");
    let marker = t.dir("out").join("planted-ran");
    agent_plants_then_granted(&tools.join("helper.sh"), &tools, &home, &other, &marker);
}

/// F4: `sh -c "cd && ./proj/tools/get-token"`; the agent, working in
/// `~/proj`, rewrites the script.
#[test]
fn a_script_the_agent_writes_where_a_source_cds_never_runs_on_the_host() {
    let t = TempDir::new("h27q-f4");
    let home = t.dir("home");
    let val = t.dir("safe").join("val");
    std::fs::write(&val, format!("{VALUE}\n")).unwrap();
    let proj = home.join("proj");
    let helper = proj.join("tools/get-token");
    script(&helper, &format!("#!/bin/sh\necho {VALUE}\n"));
    config(
        &home,
        "[\"/bin/sh\", \"-c\", \"cd && ./proj/tools/get-token\"]",
        &val,
    );
    let other = t.dir("other");
    let marker = t.dir("out").join("planted-ran");
    agent_plants_then_granted(&helper, &proj, &home, &other, &marker);
}

/// F5: CA-bundle variables the caller set to a bundle without the run CA
/// name the run's bundle inside (the one `SSL_CERT_FILE` names there).
#[test]
fn every_ca_bundle_variable_names_the_runs_bundle() {
    let t = TempDir::new("h27q-f5");
    let home = t.dir("home");
    let ws = t.dir("ws");
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        "[secrets.tok]\nfrom_env = \"MYTOK\"\nhosts = [\"localhost:1\"]\nenv = \"TOK\"\n",
    )
    .unwrap();
    let callers = t.dir("ca").join("callers.pem");
    std::fs::write(&callers, "").unwrap();
    let vars = [
        "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
        "HTTPLIB2_CA_CERTS",
        "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
        "NIX_SSL_CERT_FILE",
        "BUNDLE_SSL_CA_CERT",
        "COMPOSER_CAFILE",
        "HEX_CACERTS_PATH",
        "YARN_HTTPS_CA_FILE_PATH",
        "NPM_CONFIG_CAFILE",
        "WEBSOCKET_CLIENT_CA_BUNDLE",
        "VAULT_CACERT",
        "POETRY_CERTIFICATES_PRIVATE_CERT",
    ];
    let probe = format!(
        "for v in {}; do if [ \"$(printenv $v)\" = \"$SSL_CERT_FILE\" ]; then echo \"$v run\"; \
         else echo \"$v other: $(printenv $v)\"; fi; done; grep -c 'BEGIN CERT' \"$SSL_CERT_FILE\"",
        vars.join(" ")
    );
    let mut c = run_command(&ws, &home, &["--secret", "tok"], &["sh", "-c", &probe]);
    c.env("MYTOK", VALUE);
    for v in vars {
        c.env(v, &callers);
    }
    let o = c.output().unwrap();
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    for v in vars {
        assert!(
            out(&o).lines().any(|l| l == format!("{v} run")),
            "{v} does not name the run's bundle: {}{}",
            out(&o),
            err(&o)
        );
    }
    // The bundle holds the run CA at least.
    let n: usize = out(&o)
        .lines()
        .last()
        .unwrap_or("0")
        .trim()
        .parse()
        .unwrap_or(0);
    assert!(n >= 1, "{}", out(&o));
}
