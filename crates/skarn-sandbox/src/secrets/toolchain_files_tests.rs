#![cfg(unix)]

use super::judge::holds_credential;
use super::*;

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn credentials_in_toolchain_configs_are_found_by_what_they_hold() {
    assert!(holds_credential(
        "//registry.example/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123\n"
    ));
    assert!(holds_credential("_auth = dXNlcjpwYXNz\n"));
    assert!(holds_credential(
        "channels:\n  - https://u:CONDASECRET@conda.example/c\n"
    ));
    assert!(holds_credential(
        "[global]\nindex-url = https://u:pw123@idx.example/simple\n"
    ));
    assert!(holds_credential("npmAuthToken: \"abc\"\n"));
    assert!(!holds_credential(
        "[global]\nindex-url = https://mirror.example/simple\ntimeout = 5\n"
    ));
    assert!(!holds_credential(
        "channels:\n  - conda-forge\n  - defaults\n"
    ));
    assert!(!holds_credential(
        "fund=false\nregistry=https://mirror.example/\n"
    ));
}

#[test]
fn the_tools_places_in_each_tree_are_found_and_clean_files_kept() {
    let t = skarn_test_support::TempDir::new("toolchain_files");
    let h = t.path().to_path_buf();
    let nvm = h.join(".nvm");
    let npmrc = nvm.join("versions/node/v20.0.0/etc/npmrc");
    write(&npmrc, "//r.example/:_authToken=SECRETTOKEN\n");
    let volta = h.join(".volta");
    let vnpmrc = volta.join("tools/image/node/20.1.0/etc/npmrc");
    write(&vnpmrc, "//r.example/:_authToken=SECRETTOKEN\n");
    let conda = h.join("miniconda3");
    let condarc = conda.join(".condarc");
    write(
        &condarc,
        "channels: [https://u:CONDASECRET@conda.example/c]\n",
    );
    let clean_env = conda.join("envs/e1/.condarc");
    write(&clean_env, "channels: [conda-forge]\n");
    let pyenv = h.join(".pyenv");
    let pipconf = pyenv.join("versions/3.12.0/pip.conf");
    write(
        &pipconf,
        "[global]\nindex-url = https://u:PW@idx.example/simple\n",
    );
    let pypirc = pyenv.join("versions/3.12.0/.pypirc");
    write(&pypirc, "[pypi]\n");
    // Installed code is not looked into.
    let deep = pyenv.join("versions/3.12.0/lib/python3.12/pip.conf");
    write(
        &deep,
        "[global]\nindex-url = https://u:PW@idx.example/simple\n",
    );
    let ws = h.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut p = Policy::new(ws);
    for r in [&nvm, &volta, &conda, &pyenv] {
        p.exec
            .push(crate::policy::Grant::new(r, "default (toolchains)"));
    }
    let f = find(&p, Some(&h));
    for want in [&npmrc, &vnpmrc, &condarc, &pipconf, &pypirc] {
        assert!(f.files.contains(want), "{want:?} not in {:?}", f.files);
    }
    assert!(!f.files.contains(&clean_env), "{:?}", f.files);
    assert!(!f.files.contains(&deep), "{:?}", f.files);
    assert!(!f.truncated);
}

#[test]
fn system_formats_are_judged_by_what_tools_read() {
    use super::judge::holds_credential as holds;
    // Maven's shipped settings hold commented examples only.
    assert!(!holds(
        "<settings>\n<!--\n<server><password>repopwd</password></server>\n-->\n</settings>\n"
    ));
    assert!(holds(
        "<settings><servers><server><password>S3CRET</password></server></servers></settings>\n"
    ));
    // git: a section header alone is no credential; a header setting is.
    assert!(!holds(
        "[credential]\n\thelper = cache\n[safe]\n\tdirectory = *\n"
    ));
    assert!(holds("[http]\n\textraHeader = Authorization: Bearer abc\n"));
    assert!(holds(
        "[url \"https://u:pw@git.example/\"]\n\tinsteadOf = x\n"
    ));
    assert!(holds("machine a.example login u password p\n"));
    assert!(holds(
        "channels:\n  - https://conda.example/t/ab-12345678-1234-1234-1234-123456789abc/acme\n"
    ));
}

#[test]
fn a_big_tree_neither_starves_the_others_nor_leaves_its_places_unlooked() {
    let t = skarn_test_support::TempDir::new("toolchain_files_budget");
    let h = t.path().to_path_buf();
    // A content store (skipped) and a tree past its budget.
    let store = h.join("pnpm/store/v3/files/0a");
    std::fs::create_dir_all(&store).unwrap();
    for i in 0..300 {
        std::fs::write(store.join(format!("f{i}")), "").unwrap();
    }
    let nvm = h.join("nvm");
    let junk = nvm.join("alias-junk");
    std::fs::create_dir_all(&junk).unwrap();
    for i in 0..(PER_ROOT + 10) {
        std::fs::write(junk.join(format!("j{i}")), "").unwrap();
    }
    let npmrc = nvm.join("versions/node/v20.0.0/etc/npmrc");
    write(&npmrc, "//r.example/:_authToken=SECRETTOKEN\n");
    let pyenv = h.join("pyenv");
    let pipconf = pyenv.join("versions/3.12.0/pip.conf");
    write(
        &pipconf,
        "[global]\nindex-url = https://u:PW@idx.example/simple\n",
    );
    let ws = h.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut p = Policy::new(ws);
    for r in [h.join("pnpm"), nvm, pyenv] {
        p.exec
            .push(crate::policy::Grant::new(r, "default (toolchains)"));
    }
    let f = find_with(&p, Some(&h), &|_| None);
    assert!(f.truncated);
    for want in [&npmrc, &pipconf] {
        assert!(f.files.contains(want), "{want:?} not in {:?}", f.files);
    }
}

#[test]
fn stores_are_skipped_by_their_layout_not_their_name() {
    let t = skarn_test_support::TempDir::new("toolchain_files_skip");
    let h = t.path().to_path_buf();
    // Named like a store, but none: walked (atk27q F9).
    for d in [
        "app/git",
        "app/share",
        "app/src",
        "app/test",
        "conda/envs/db",
    ] {
        std::fs::create_dir_all(h.join(d)).unwrap();
        assert!(!skipped(&h.join(d), 1), "{d}");
    }
    // Stores by their layout: cargo's, git's, a prefix's code, buckets.
    for d in [
        "cargo/git/db",
        "cargo/registry/index",
        "repo/objects/pack",
        "pfx/bin",
        "pfx/share",
    ] {
        std::fs::create_dir_all(h.join(d)).unwrap();
    }
    for d in [
        "cargo/git",
        "cargo/registry",
        "repo/objects",
        "pfx/share",
        "app/node_modules",
    ] {
        assert!(skipped(&h.join(d), 0), "{d}");
    }
    assert!(skipped(&h.join("store/ab"), MIN_BUCKETS));
    // A Bundler file and RubyGems' are judged (atk27q F6).
    assert_eq!(kind(&h.join("bundle/config")), Some(false));
    assert_eq!(kind(&h.join("app/.bundle/config")), Some(false));
    assert_eq!(kind(&h.join("etc/gemrc")), Some(false));
    assert_eq!(kind(&h.join("app/config")), None);
    assert!(holds_credential(
        "---\nBUNDLE_GEMS__EXAMPLE__COM: \"u:p\"\n"
    ));
    assert!(holds_credential("BUNDLE_PKGS__EXAMPLE__COM: tok\n"));
    assert!(!holds_credential(
        "---\nBUNDLE_PATH: \"vendor/bundle\"\nBUNDLE_BUILD__NOKOGIRI: \"--use-system-libraries\"\n"
    ));
}

#[test]
fn a_walk_cut_short_hides_its_unlisted_directories_gathered() {
    // atk27r F9: past the budget or the depth, what was not listed is
    // hidden whole; past MAX_MASKS directories they are gathered into
    // their parents, never into one holding a writable place.
    let root = Path::new("/r");
    let many: Vec<PathBuf> = (0..100).map(|i| root.join(format!("a/b{i}"))).collect();
    let (hide, open) = masks(root, many.clone(), &[]);
    assert_eq!(hide, vec![root.join("a")]);
    assert!(open.is_empty());
    // Beside a writable place: each stays hidden itself; one holding it
    // is not hidden.
    let (hide, open) = masks(root, many.clone(), &[root.join("a/ws")]);
    assert_eq!(hide.len(), many.len(), "{hide:?}");
    assert!(!hide.iter().any(|h| root.join("a/ws").starts_with(h)));
    assert!(open.is_empty());
    let (hide, open) = masks(root, vec![root.join("a")], &[root.join("a/ws")]);
    assert!(hide.is_empty() && open == vec![root.join("a")]);
    let (hide, _) = masks(root, vec![root.join("x"), root.join("x/y")], &[]);
    assert_eq!(hide, vec![root.join("x")]);
}

#[test]
fn home_stores_are_found_by_the_entries_a_walk_meets() {
    // atk27r F4: a runner's directory holds the home's stores.
    let t = skarn_test_support::TempDir::new("toolchain_stores");
    let d = t.path().join("runner");
    for f in [
        ".ssh/id_ed25519",
        ".docker/config.json",
        ".credentials_rsaparams",
    ] {
        write(&d.join(f), "x");
    }
    assert_eq!(stores(&d, ".ssh"), vec![d.join(".ssh")]);
    assert_eq!(stores(&d, ".docker"), vec![d.join(".docker")]);
    assert_eq!(
        stores(&d, ".credentials_rsaparams"),
        vec![d.join(".credentials_rsaparams")]
    );
    assert!(stores(&d, "bin").is_empty() && stores(&d, ".kube").is_empty());
}
