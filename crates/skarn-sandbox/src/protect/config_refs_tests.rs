#![cfg(unix)]

use super::*;

#[test]
fn modules_protected_configurations_load_are_found() {
    let t = skarn_test_support::TempDir::new("config-refs");
    let ws = t.dir("p");
    t.file(
        "p/.pnpmfile.cjs",
        "module.exports = require('./scripts/pnpm-hooks')\n",
    );
    t.file(
        "p/scripts/pnpm-hooks.js",
        "const u = require('./util.js'); module.exports = {}\n",
    );
    t.file("p/scripts/util.js", "module.exports = 1\n");
    t.file(
        "p/eslint.config.js",
        "import rules from './rules/index.js'\nexport default [rules]\n",
    );
    t.file("p/rules/index.js", "export default {}\n");
    t.file(
        "p/package.json",
        "{\"main\": \"./main.js\", \"prettier\": \"./fmt.cjs\"}\n",
    );
    t.file("p/fmt.cjs", "module.exports = {}\n");
    t.file("p/main.js", "require('./other.js')\n");
    t.file("p/other.js", "\n");
    t.file("p/.rubocop.yml", "inherit_from: .rubocop_todo.yml\n");
    t.file("p/.rubocop_todo.yml", "\n");
    t.file("p/.pylintrc", "[MASTER]\nload-plugins=checker\n");
    t.file("p/checker.py", "\n");
    t.file("p/pytest.ini", "[pytest]\naddopts = -p plug\n");
    t.file("p/plug/__init__.py", "\n");
    t.file(
        "p/.prettierrc.js",
        "module.exports = require(process.env.X)\n",
    );
    let l = loaded(&ws);
    let paths: Vec<PathBuf> = l.files.iter().map(|f| f.path.clone()).collect();
    for f in [
        "scripts/pnpm-hooks.js",
        "scripts/pnpm-hooks",
        "scripts/util.js",
        "rules/index.js",
        "fmt.cjs",
        ".rubocop_todo.yml",
        "checker.py",
        "checker",
        "plug/__init__.py",
    ] {
        assert!(paths.contains(&ws.join(f)), "{f}: {paths:?}");
    }
    for f in ["main.js", "other.js"] {
        assert!(!paths.contains(&ws.join(f)), "{f}: {paths:?}");
    }
    assert_eq!(l.dynamic, vec![ws.join(".prettierrc.js")]);
}
