use super::*;

fn layer(t: &skarn_test_support::TempDir, path: &str) -> (Layer, PathBuf) {
    let upper = t.path().join("u");
    std::fs::create_dir_all(&upper).unwrap();
    (
        Layer {
            path: PathBuf::from(path),
            upper: upper.clone(),
        },
        upper,
    )
}

#[test]
fn start_up_files_of_a_kept_user_site_are_removed() {
    let t = skarn_test_support::TempDir::new("store-vet");
    let (l, u) = layer(&t, "/nonexistent-home/.local/lib");
    let sp = u.join("python3.11/site-packages");
    std::fs::create_dir_all(sp.join("usercustomize")).unwrap();
    std::fs::create_dir_all(sp.join("__pycache__")).unwrap();
    std::fs::create_dir_all(sp.join("pkg")).unwrap();
    let w = |n: &str, b: &str| std::fs::write(sp.join(n), b).unwrap();
    w("evil.pth", "/x\nimport os; os.system('id')\n");
    w("crlf.pth", "/x\u{0c}import os\n");
    w(
        "store.pth",
        "../../../../../nonexistent-home/.local/lib/other\n",
    );
    w("plain.pth", "/work/project/src\n");
    w("sitecustomize.py", "x = 1\n");
    w("usercustomize/__init__.py", "x = 1\n");
    w("__pycache__/sitecustomize.cpython-311.pyc", "");
    w("__pycache__/pkg.cpython-311.pyc", "");
    w("pkg/__init__.py", "");
    std::os::unix::fs::symlink("/work/project/x", u.join("python3.12")).unwrap();
    // The run took the owner's write bit.
    std::fs::set_permissions(&sp, std::fs::Permissions::from_mode(0o500)).unwrap();
    let removed = vet(std::slice::from_ref(&l)).unwrap();
    assert_eq!(removed.len(), 7, "{removed:#?}");
    for gone in [
        "evil.pth",
        "crlf.pth",
        "store.pth",
        "sitecustomize.py",
        "usercustomize",
        "__pycache__/sitecustomize.cpython-311.pyc",
    ] {
        assert!(std::fs::symlink_metadata(sp.join(gone)).is_err(), "{gone}");
    }
    for kept in [
        "plain.pth",
        "pkg/__init__.py",
        "__pycache__/pkg.cpython-311.pyc",
    ] {
        assert!(sp.join(kept).exists(), "{kept}");
    }
    assert!(std::fs::symlink_metadata(u.join("python3.12")).is_err());
    // Nothing left: a second look removes nothing.
    assert!(vet(&[l]).unwrap().is_empty());
}
