//! `skarn run`, issue 22 (h22p): files host programs run on their own.
//! atk22j H3: JavaScript and CSS tool configuration that editor
//! extensions load as code when the folder or a file is opened
//! (`eslint.config.js`, `tailwind.config.js`, `.prettierrc`, ...): a run
//! may neither change one the project has nor leave a new one at the
//! workspace's top, in both workspace layers. Judged from outside, after
//! the run: the host's file is the user's, no planted one is where the
//! editor looks.

use crate::common::*;
use crate::support_h22p::{LAYERS, failures};
use skarn_test_support::TempDir;

#[test]
fn editor_run_javascript_configuration_stays_the_users() {
    let planted = "module.exports = require('child_process').execSync('id > /tmp/x');\n";
    let mut failed = Vec::new();
    for layer in LAYERS {
        let t = TempDir::new("h22p-js");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        std::fs::write(ws.join("package.json"), "{\"name\":\"p\"}\n").unwrap();
        let user = "module.exports = { content: ['./src/**/*.js'] };\n";
        std::fs::write(ws.join("tailwind.config.js"), user).unwrap();
        let script = format!(
            "for f in eslint.config.mjs .prettierrc svelte.config.js babel.config.js; do \
             printf %s \"$P\" > $f; done; printf %s \"$P\" >> tailwind.config.js; \
             echo ok > index.js; true"
        );
        let o = run_command(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &["sh", "-c", &script],
        )
        .env("P", planted)
        .output()
        .unwrap();
        let ctx = format!("[{layer}] {}", err(&o));
        if std::fs::read_to_string(ws.join("index.js")).ok().as_deref() != Some("ok\n") {
            failed.push(format!("{ctx}: an ordinary file was not written"));
        }
        if std::fs::read_to_string(ws.join("tailwind.config.js")).unwrap() != user {
            failed.push(format!("{ctx}: tailwind.config.js was changed"));
        }
        for f in [
            "eslint.config.mjs",
            ".prettierrc",
            "svelte.config.js",
            "babel.config.js",
        ] {
            if std::fs::read_to_string(ws.join(f)).is_ok_and(|s| s.contains("execSync")) {
                failed.push(format!("{ctx}: a planted {f} is at the workspace's top"));
            }
        }
    }
    failures(failed);
}
