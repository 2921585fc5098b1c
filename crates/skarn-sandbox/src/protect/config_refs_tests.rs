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

#[test]
fn workspace_packages_and_subpath_imports_are_followed() {
    let t = skarn_test_support::TempDir::new("config-refs-node");
    let ws = t.dir("p");
    t.file(
        "p/package.json",
        "{\"imports\": {\"#rules\": {\"node\": \"./eslint/rules.js\"}, \"#none\": null}}\n",
    );
    t.file(
        "p/eslint.config.js",
        "import a from '@acme/cfg';\nimport b from '@acme/exp/sub';\nimport r from '#rules';\n\
         import n from '#missing';\nimport i from 'installed';\nimport w from '@acme/wild';\n",
    );
    t.file("p/eslint/rules.js", "require('./more.js')\n");
    t.file("p/eslint/more.js", "\n");
    t.file("p/packages/cfg/package.json", "{\"main\": \"lib/main\"}\n");
    t.file("p/packages/cfg/lib/main.js", "\n");
    t.file(
        "p/packages/exp/package.json",
        "{\"exports\": {\".\": \"./i.js\", \"./sub\": {\"import\": \"./s.mjs\", \"types\": \"./t.d.ts\"}}}\n",
    );
    t.file("p/packages/exp/s.mjs", "\n");
    t.file(
        "p/packages/wild/package.json",
        "{\"exports\": {\"./x/*\": \"./x/*.js\"}}\n",
    );
    t.file("p/node_modules/installed/index.js", "\n");
    std::fs::create_dir_all(ws.join("node_modules/@acme")).unwrap();
    for n in ["cfg", "exp", "wild"] {
        std::os::unix::fs::symlink(
            format!("../../packages/{n}"),
            ws.join("node_modules/@acme").join(n),
        )
        .unwrap();
    }
    let l = loaded(&ws);
    let paths: Vec<PathBuf> = l.files.iter().map(|f| f.path.clone()).collect();
    for f in [
        "packages/cfg/lib/main.js",
        "packages/exp/s.mjs",
        "eslint/rules.js",
        "eslint/more.js",
    ] {
        assert!(paths.contains(&ws.join(f)), "{f}: {paths:?}");
    }
    assert!(
        !paths.iter().any(|p| p.starts_with(ws.join("node_modules"))),
        "{paths:?}"
    );
    let trees: Vec<PathBuf> = l.trees.iter().map(|f| f.path.clone()).collect();
    assert_eq!(trees, vec![ws.join("packages/wild")]);
    assert!(
        l.notes.iter().any(|n| n.contains("#missing")),
        "{:?}",
        l.notes
    );
}

#[test]
fn a_bound_protects_directories_whole_and_is_said() {
    let t = skarn_test_support::TempDir::new("config-refs-bound");
    let ws = t.dir("p");
    let mut index = String::new();
    for i in 0..MAX_FILES + 10 {
        index.push_str(&format!("require('./r{i}.js')\n"));
        t.file(format!("p/rules/r{i}.js"), "\n");
    }
    t.file("p/rules/index.js", &index);
    t.file(
        "p/eslint.config.js",
        "module.exports = require('./rules/index.js')\n",
    );
    let l = loaded(&ws);
    assert!(l.files.len() <= MAX_FILES);
    assert_eq!(l.trees.len(), 1, "{:?}", l.trees);
    assert_eq!(l.trees[0].path, ws.join("rules"));
    assert!(l.notes[0].contains("eslint.config.js"), "{:?}", l.notes);
}
