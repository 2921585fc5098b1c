use super::*;
use std::os::unix::fs::symlink;

fn pem() -> String {
    skarn_egress::make_run_ca(&["localhost".to_string()])
        .unwrap()
        .cert_pem
}

#[test]
fn a_file_in_or_through_a_writable_place_is_refused() {
    let t = skarn_test_support::TempDir::new("root_files");
    let ws = t.dir("ws");
    let home = t.dir("home");
    let secret = t.dir("vals").join("tok");
    std::fs::write(&secret, "tokREALvalue").unwrap();
    let ca = home.join("ca.pem");
    std::fs::write(&ca, pem()).unwrap();
    std::fs::write(ws.join("ca.pem"), pem()).unwrap();
    let places = Places::new(std::slice::from_ref(&ws), None);
    // In the workspace.
    assert!(read_file(&ws.join("ca.pem"), &places).is_err());
    // Through a link the workspace holds, to a file outside it.
    symlink(&ca, ws.join("l.pem")).unwrap();
    symlink(ws.join("l.pem"), home.join("via.pem")).unwrap();
    assert!(read_file(&home.join("via.pem"), &places).is_err());
    // Through a directory link there.
    symlink(&home, ws.join("d")).unwrap();
    symlink(ws.join("d"), home.join("dl")).unwrap();
    assert!(read_file(&home.join("dl/ca.pem"), &places).is_err());
    // Outside: taken, certificates only.
    let got = read_file(&ca, &places).unwrap();
    assert_eq!(got.matches("BEGIN CERTIFICATE").count(), 1);
    // A secret named directly yields no certificate.
    assert_eq!(read_file(&secret, &places).unwrap(), "");
}

#[test]
fn earlier_runs_writable_directories_are_refused() {
    let t = skarn_test_support::TempDir::new("root_files_log");
    let home = t.dir("home");
    let other = t.dir("projA");
    std::fs::write(other.join("cacert.pem"), pem()).unwrap();
    let log = crate::policy::granted::log_path(Some(&home)).unwrap();
    crate::policy::granted::GrantLog::record(
        &log,
        &[(crate::policy::granted::Kind::Workspace, other.clone())],
    )
    .unwrap();
    let places = Places::new(&[], Some(&home));
    let e = read_file(&other.join("cacert.pem"), &places).unwrap_err();
    assert!(e.contains("earlier run"), "{e}");
    // Skarn's own stores too.
    let store = home.join(".local/state/skarn/store");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("ca.pem"), pem()).unwrap();
    assert!(read_file(&store.join("ca.pem"), &places).is_err());
}

#[test]
fn a_directory_of_links_outside_writable_places_is_read() {
    let t = skarn_test_support::TempDir::new("root_files_dir");
    let share = t.dir("share");
    let certs = t.dir("certs");
    std::fs::write(share.join("a.crt"), pem()).unwrap();
    std::fs::write(share.join("b.crt"), pem()).unwrap();
    symlink(share.join("a.crt"), certs.join("1.0")).unwrap();
    symlink(share.join("b.crt"), certs.join("2.0")).unwrap();
    std::fs::write(certs.join("notes.txt"), "tokREALvalue").unwrap();
    let got = read_dir(&certs, &Places::default()).unwrap();
    assert_eq!(got.matches("BEGIN CERTIFICATE").count(), 2);
    assert!(!got.contains("tokREAL"));
    // The same directory through a writable place: nothing.
    let places = Places::new(std::slice::from_ref(&share), None);
    assert_eq!(read_dir(&certs, &places).unwrap(), "");
}

/// atk27m H2: a single file bound elsewhere is called a file in the
/// refusal, not a directory.
#[test]
fn a_bound_file_is_called_a_file() {
    let d = skarn_test_support::TempDir::new("root_files_kind");
    let f = d.path().join("tok");
    std::fs::write(&f, "x").unwrap();
    assert_eq!(super::kind(&f), "file");
    assert_eq!(super::kind(d.path()), "directory");
}
