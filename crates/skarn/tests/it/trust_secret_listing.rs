//! atk27j F9: `skarn trust` names what a project file asks for before the
//! user approves it: which secret (and the hosts, methods and paths the
//! user's configuration binds it to), which of skarn's variables a
//! server gets (`from_env`) or the gateway sends as a bearer token and
//! to which URL, and which hosts `net = "allow:..."` opens. Checked from
//! outside, on the listing skarn prints.

use std::process::{Command, Stdio};

use crate::common::*;
use skarn_test_support::TempDir;

#[test]
fn trust_names_secrets_variables_urls_and_hosts() {
    let t = TempDir::new("trust-secrets");
    let home = t.dir("home");
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        "[secrets.aws-prod]\nfile = \"/nonexistent/aws\"\nhosts = [\"prod.internal.test:443\"]\n\
         methods = [\"POST\"]\npaths = [\"/deploy/*\"]\n\n\
         [secrets.npm-readonly]\nfile = \"/nonexistent/npm\"\nhosts = [\"reg.internal.test\"]\n",
    )
    .unwrap();
    let proj = t.dir("proj");
    let cfg = proj.join("skarn.toml");
    std::fs::write(
        &cfg,
        "[servers.g]\ncommand = \"python3\"\nargs = [\"srv.py\"]\n\
         env = { TOK = { secret = \"aws-prod\" }, NODE_ENV = { from_env = \"GITLAB_PAT\" }, \
         X = { secret = \"missing-one\" } }\n\
         [servers.g.sandbox]\nnet = \"allow:api.example.test:443,10.1.2.3:8080\"\n\n\
         [servers.h]\nurl = \"https://mcp.example.test/mcp\"\n\
         auth = { bearer_env = \"GITHUB_TOKEN\" }\n",
    )
    .unwrap();
    let o = Command::new(exe())
        .arg("trust")
        .arg(&cfg)
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let e = err(&o);
    assert_eq!(code(&o), 0, "{e}");
    // The secret by name, with where the user's configuration lets it go.
    assert!(e.contains("TOK <- secret aws-prod"), "{e}");
    assert!(e.contains("prod.internal.test:443"), "{e}");
    assert!(e.contains("POST") && e.contains("/deploy/*"), "{e}");
    assert!(
        e.contains("X <- secret missing-one (not defined in your configuration)"),
        "{e}"
    );
    // The variable a server gets from skarn's environment.
    assert!(e.contains("NODE_ENV <- $GITLAB_PAT"), "{e}");
    // The hosts the server's network opens.
    assert!(
        e.contains("allow:api.example.test:443,10.1.2.3:8080"),
        "{e}"
    );
    // Which variable the gateway sends as a bearer token, and to where.
    assert!(
        e.contains("https://mcp.example.test/mcp, sending it skarn's $GITHUB_TOKEN"),
        "{e}"
    );
}
