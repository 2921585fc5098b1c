#![cfg(unix)]

use super::*;
use std::fs;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("skarn-tcenv-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_variable_naming_the_home_or_an_ancestor_is_never_taken() {
    let t = scratch("home");
    let home = t.join("h");
    fs::create_dir_all(home.join("notes")).unwrap();
    fs::write(home.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    assert_eq!(vetted(&home, Shape::Venv, &home), None);
    assert_eq!(vetted(&t, Shape::CargoHome, &home), None);
    assert_eq!(vetted(Path::new("/"), Shape::CargoTarget, &home), None);
    // Through a link too.
    std::os::unix::fs::symlink(&home, t.join("l")).unwrap();
    assert_eq!(vetted(&t.join("l"), Shape::Venv, &home), None);
    fs::remove_dir_all(&t).unwrap();
}

#[test]
fn a_directory_is_taken_only_with_the_shape_its_variable_claims() {
    let t = scratch("shape");
    let home = t.join("h");
    fs::create_dir_all(&home).unwrap();
    let d = t.join("x");
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("secret.txt"), "TOPSECRET").unwrap();
    for s in [
        Shape::Venv,
        Shape::Rustup,
        Shape::Nvm,
        Shape::Pyenv,
        Shape::GoRoot,
        Shape::Bin,
    ] {
        assert_eq!(vetted(&d, s, &home), None, "{s:?}");
    }
    assert_eq!(vetted(&d, Shape::CargoTarget, &home), None);
    assert_eq!(vetted(&d, Shape::GoModCache, &home), None);
    fs::write(d.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    assert_eq!(
        vetted(&d, Shape::Venv, &home),
        Some(fs::canonicalize(&d).unwrap())
    );
    let g = t.join("go");
    fs::create_dir_all(g.join("bin")).unwrap();
    fs::write(g.join("bin/go"), "").unwrap();
    assert_eq!(vetted(&g, Shape::GoRoot, &home), None);
    fs::write(g.join("VERSION"), "go1.23").unwrap();
    assert!(vetted(&g, Shape::GoRoot, &home).is_some());
    // A program directory holds programs only.
    use std::os::unix::fs::PermissionsExt;
    let b = t.join("bin");
    fs::create_dir_all(&b).unwrap();
    fs::write(b.join("tool"), "#!/bin/sh\n").unwrap();
    fs::set_permissions(b.join("tool"), fs::Permissions::from_mode(0o755)).unwrap();
    assert!(vetted(&b, Shape::Bin, &home).is_some());
    fs::write(b.join("notes.txt"), "x").unwrap();
    assert_eq!(vetted(&b, Shape::Bin, &home), None);
    fs::remove_dir_all(&t).unwrap();
}

#[test]
fn a_directory_holding_a_secret_place_is_never_taken() {
    let t = scratch("secret");
    let home = t.join("h");
    fs::create_dir_all(home.join(".ssh")).unwrap();
    // `/etc` holds the system's secret places.
    assert_eq!(vetted(Path::new("/etc"), Shape::CargoHome, &home), None);
    fs::remove_dir_all(&t).unwrap();
}

#[test]
fn a_missing_place_is_kept_as_given() {
    let t = scratch("missing");
    let home = t.join("h");
    fs::create_dir_all(&home).unwrap();
    let m = t.join("not-yet");
    assert_eq!(vetted(&m, Shape::GoModCache, &home), Some(m.clone()));
    assert_eq!(
        vetted(Path::new("relative"), Shape::GoModCache, &home),
        None
    );
    fs::remove_dir_all(&t).unwrap();
}
