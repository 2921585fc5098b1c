use super::*;

#[test]
fn static_relative_specifiers_are_read() {
    let r = js(
        "const a = require('./hooks/pnpm.js');\nimport b from \"../rules\";\n\
                import './side.mjs';\nexport { x } from './x';\nconst c = await import('./d');\n\
                const e = require('lodash');\nconst f = require.resolve(`./g.cjs`);\n",
    );
    assert_eq!(
        r.js,
        vec![
            "./hooks/pnpm.js",
            "../rules",
            "./side.mjs",
            "./x",
            "./d",
            "./g.cjs"
        ]
    );
    assert!(!r.dynamic);
    assert!(js("const m = require(name);").dynamic);
    assert!(js("import(`./${x}.js`)").dynamic);
    assert!(!js("const required = 1; // imports").dynamic);
}

#[test]
fn data_ruby_python_deno_and_package_json_are_read() {
    assert_eq!(
        data("{\"plugins\": [\"./p.cjs\", \"x\"]}").js,
        vec!["./p.cjs"]
    );
    let r = ruby(
        "inherit_from:\n  - .rubocop_todo.yml\n  - ./shared/base.yml\nrequire:\n  - ./lib/cop\n  - rubocop-rails\n",
    );
    assert_eq!(
        r.paths,
        vec![".rubocop_todo.yml", "./shared/base.yml", "./lib/cop.rb"]
    );
    let p = python(
        "[MASTER]\nload-plugins=local_checker,pylint.extensions.docparams\n[pytest]\naddopts = -q -p myplug -pother\n",
    );
    assert_eq!(
        p.modules,
        vec![
            "local_checker",
            "pylint.extensions.docparams",
            "myplug",
            "other"
        ]
    );
    let t = python("[tool.pylint.main]\nload-plugins = [\n  \"a_plug\",\n]\ndisable = [\"x\"]\n");
    assert_eq!(t.modules, vec!["a_plug"]);
    assert_eq!(
        deno("{\"lint\": {\"plugins\": [\"./lint/p.ts\", \"jsr:@x/y\"]}}").js,
        vec!["./lint/p.ts"]
    );
    let pj = package_json(
        "{\"main\": \"./index.js\", \"prettier\": \"./fmt.cjs\"}",
        &["prettier"],
    );
    assert_eq!(pj.js, vec!["./fmt.cjs"]);
}

#[test]
fn package_names_and_subpath_imports_are_read() {
    let r = js(
        "import a from '@acme/eslint-config';\nimport r from '#rules';\n\
                const l = require('lodash/fp');\nimport fs from 'node:fs';\n\
                import u from 'https://x/y.js';\nconst p = require('/abs/p.js');\n",
    );
    assert_eq!(r.bare, vec!["@acme/eslint-config", "#rules", "lodash/fp"]);
    assert!(r.js.is_empty());
    assert!(!bare("") && !bare("./x") && !bare("a b") && !bare(".hidden"));
    let d = data(
        "{\"extends\": [\"@acme\", \"plugin:local/recommended\"], \"rules\": {\"x\": \"off\"}}",
    );
    assert!(d.names.contains(&"@acme".to_string()), "{d:?}");
    assert!(
        d.names.contains(&"plugin:local/recommended".to_string()),
        "{d:?}"
    );
    let p = package_json("{\"prettier\": \"@acme/prettier-config\"}", &["prettier"]);
    assert_eq!(p.bare, vec!["@acme/prettier-config"]);
}
