use super::*;
use std::os::unix::fs::symlink;

#[test]
fn links_at_every_level_are_followed() {
    let t = tempdir();
    let (home, ws) = (t.join("home"), t.join("ws"));
    std::fs::create_dir_all(home.join(".config/nvim/lua")).unwrap();
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    symlink(ws.join("bashrc"), home.join(".bashrc")).unwrap();
    symlink(ws.join("init.lua"), home.join(".config/nvim/lua/init.lua")).unwrap();
    symlink(ws.join("creds"), home.join(".aws/credentials")).unwrap();
    std::fs::write(home.join(".gitconfig"), "[include]\npath = ../ws/git.inc\n").unwrap();
    let f = scan(&home);
    let has = |p: &str, secret: bool| {
        f.trusted
            .iter()
            .any(|t| t.target == ws.join(p) && t.secret == secret)
    };
    assert!(has("bashrc", false), "{f:?}");
    assert!(has("init.lua", false), "{f:?}");
    assert!(has("creds", true), "{f:?}");
    assert!(has("git.inc", false), "{f:?}");
    assert!(f.unfinished.is_empty());
    std::fs::remove_dir_all(&t).unwrap();
}

/// A secret directory kept elsewhere (`~/.aws -> elsewhere`), and a
/// secret directory's entry linking to a directory elsewhere: the links
/// inside them are followed too, to the files they reach.
#[test]
fn links_inside_linked_secret_directories_are_followed() {
    let t = tempdir();
    let (home, ws, other) = (t.join("home"), t.join("ws"), t.join("other"));
    for d in [
        &home.join(".ssh"),
        &ws,
        &other.join("aws"),
        &other.join("keys/deep"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    symlink(other.join("aws"), home.join(".aws")).unwrap();
    symlink(ws.join("creds"), other.join("aws/credentials")).unwrap();
    symlink(other.join("keys"), home.join(".ssh/keys")).unwrap();
    symlink(ws.join("id"), other.join("keys/deep/id")).unwrap();
    // A loop back to the secret directory ends.
    symlink(other.join("keys"), other.join("keys/deep/again")).unwrap();
    let f = scan(&home);
    let secret = |p: &Path| f.trusted.iter().any(|t| t.target == p && t.secret);
    assert!(secret(&ws.join("creds")), "{f:?}");
    assert!(secret(&ws.join("id")), "{f:?}");
    assert!(secret(&other.join("aws")), "{f:?}");
    std::fs::remove_dir_all(&t).unwrap();
}

#[test]
fn skarn_state_and_server_states_are_walked_one_level_from_dot_local_too() {
    let t = tempdir();
    let (home, ws) = (t.join("home"), t.join("ws"));
    let deep = home.join(".local/state/skarn/store/k/c/l");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::create_dir_all(home.join(".local/share/app/plugins")).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    symlink(ws.join("deep"), deep.join("link")).unwrap();
    symlink(ws.join("top"), home.join(".local/state/skarn/top")).unwrap();
    let server = home.join(".local/state/skarn-servers/a-1/w");
    std::fs::create_dir_all(&server).unwrap();
    symlink(ws.join("server"), server.join("link")).unwrap();
    symlink(ws.join("plugin"), home.join(".local/share/app/plugins/p")).unwrap();
    let f = scan(&home);
    let has = |p: &str| f.trusted.iter().any(|t| t.target == ws.join(p));
    // Another program's data under `.local` is walked deep; skarn's
    // own stores only one level, from whichever root reaches them.
    assert!(has("plugin"), "{f:?}");
    assert!(has("top"), "{f:?}");
    assert!(!has("deep"), "{f:?}");
    assert!(!has("server"), "{f:?}");
    std::fs::remove_dir_all(&t).unwrap();
}

fn tempdir() -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "skarn-home-links-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::canonicalize(d).unwrap()
}
