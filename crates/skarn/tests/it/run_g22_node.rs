//! `skarn run`, issue 22's eighth round: `node_modules` links made in the
//! direct mode, and any package replaced by a link under the layer.
//! Judged from outside (the host's shell and node), as root and as uid
//! 65534.

use std::path::Path;
use std::process::Command;

use super::run_g22::{LAYERS, SYS_PATH, attempt, repo, users};
use crate::common::*;
use skarn_test_support::TempDir;

// ---- node_modules links ----

#[test]
fn node_modules_links_of_a_direct_run_are_judged() {
    for nobody in users() {
        for (dir, target) in [
            ("node_modules/.bin", ".cache/t"),
            ("node_modules/.bin/git", ""),
        ] {
            let t = TempDir::new("g22-nbin");
            let mark = t.path().join("PWNED");
            let ws = repo(
                &t,
                "nj",
                &[
                    ("package.json", r#"{"name":"nj","version":"1.0.0"}"#),
                    (".gitignore", "node_modules\n.cache\n"),
                ],
            );
            t.dir("nj/node_modules/.bin");
            let s = if target.is_empty() {
                format!(
                    "mkdir -p .cache && printf '#!/bin/sh\\ntouch {m}\\n' > .cache/git && \
                     chmod +x .cache/git && ln -s ../../.cache/git {dir} && echo PLANTED",
                    m = mark.display()
                )
            } else {
                format!(
                    "rm -rf {dir} && mkdir -p {target} && printf '#!/bin/sh\\ntouch {m}\\n' > \
                     {target}/git && chmod +x {target}/git && ln -s ../{target} {dir} && echo \
                     PLANTED",
                    m = mark.display()
                )
            };
            let who = nobody.then(|| t.path());
            let o = attempt(&t, &ws, LAYERS[1], &[], who, &s);
            assert!(out(&o).contains("PLANTED"), "{}{}", out(&o), err(&o));
            let path = format!("{}:{SYS_PATH}", ws.join("node_modules/.bin").display());
            let _ = Command::new("sh")
                .args(["-c", "git --version"])
                .env("PATH", &path)
                .current_dir(&ws)
                .output();
            assert!(
                !mark.exists(),
                "{dir}, uid 65534: {nobody}: the host ran a planted program: {}",
                err(&o)
            );
        }
    }
}

#[test]
fn a_package_replaced_by_a_link_is_judged_for_every_package() {
    if !Path::new("/usr/bin/node").exists() {
        skarn_test_support::skip!("no node");
    }
    for nobody in users() {
        let t = TempDir::new("g22-pkglink");
        let mark = t.path().join("PWNED");
        let ws = repo(
            &t,
            "nj",
            &[
                ("package.json", r#"{"name":"nj","version":"1.0.0"}"#),
                (".gitignore", "node_modules\n.x\n"),
            ],
        );
        t.file(
            "nj/node_modules/espree/package.json",
            r#"{"name":"espree","version":"9.6.1","main":"index.js"}"#,
        );
        t.file("nj/node_modules/espree/index.js", "module.exports = 1;\n");
        let s = format!(
            "mkdir -p .x && cp -r node_modules/espree .x/ && echo 'require(\"fs\").writeFileSync(\"{}\",\"x\")' >> .x/espree/index.js && rm -rf node_modules/espree && ln -s ../.x/espree node_modules/espree && echo PLANTED",
            mark.display()
        );
        let who = nobody.then(|| t.path());
        let o = attempt(&t, &ws, &[], &[], who, &s);
        assert!(out(&o).contains("PLANTED"), "{}{}", out(&o), err(&o));
        let _ = Command::new("/usr/bin/node")
            .args(["-e", "require('espree')"])
            .current_dir(&ws)
            .output();
        assert!(
            !mark.exists(),
            "uid 65534: {nobody}: host node loaded the planted package: {}",
            err(&o)
        );
    }
}
