use super::*;

#[test]
fn finds_sockets_aliases_and_upward_names_level_by_level() {
    let tmp = skarn_test_support::TempDir::new("grant-walk");
    let d = tmp.path().to_path_buf();
    std::fs::create_dir_all(d.join("a/b/c")).unwrap();
    std::fs::create_dir_all(d.join("node_modules/x/.cache")).unwrap();
    std::fs::create_dir_all(d.join("sub/.hg")).unwrap();
    std::fs::write(d.join("sub/rust-toolchain.toml"), "").unwrap();
    std::fs::write(d.join("rust-toolchain.toml"), "").unwrap();
    let outside = d.join("outside");
    std::fs::write(&outside, "x").unwrap();
    std::fs::hard_link(&outside, d.join("node_modules/x/alias")).unwrap();
    std::fs::hard_link(&outside, d.join("a/b/c/alias")).unwrap();
    let s1 = std::os::unix::net::UnixListener::bind(d.join("node_modules/x/.cache/s.sock"));
    let s2 = std::os::unix::net::UnixListener::bind(d.join("a/s.sock"));
    let (_s1, _s2) = (s1.unwrap(), s2.unwrap());
    let mut ino = Inodes::default();
    ino.add(&outside, 7, false);
    let b = Bounds {
        dirs: 1000,
        time: Duration::from_secs(60),
    };
    let w = walk(std::slice::from_ref(&d), b, true, &ino);
    assert!(!w.truncated && !w.truncated_late);
    assert_eq!(w.sockets.len(), 2, "{w:?}");
    let mut al: Vec<_> = w.aliases.iter().map(|(p, i)| (p.clone(), *i)).collect();
    al.sort();
    // (The original, at the root, is an alias of itself: the caller
    // drops a hit on the recorded path.)
    assert!(al.contains(&(d.join("a/b/c/alias"), 7)), "{al:?}");
    assert!(al.contains(&(d.join("node_modules/x/alias"), 7)), "{al:?}");
    assert_eq!(
        w.upward,
        vec![d.join("sub/.hg"), d.join("sub/rust-toolchain.toml")]
            .into_iter()
            .filter(|p| w.upward.contains(p))
            .collect::<Vec<_>>()
    );
    assert_eq!(w.upward.len(), 2);
    // Without `late`, node_modules is not walked.
    let w = walk(std::slice::from_ref(&d), b, false, &ino);
    assert_eq!(w.sockets.len(), 1);
    // A bound of 2 directories cuts the deeper ones, not `a`'s socket.
    let b2 = Bounds {
        dirs: 5,
        time: Duration::from_secs(60),
    };
    let w = walk(std::slice::from_ref(&d), b2, true, &ino);
    assert!(w.truncated || w.truncated_late);
    assert!(w.sockets.contains(&d.join("a/s.sock")), "{w:?}");
}

#[test]
fn a_directory_that_vanished_leaves_sockets_uncovered() {
    let mut w = Walk::default();
    unreadable(
        &mut w,
        PathBuf::from("/x/denied"),
        &std::io::Error::from_raw_os_error(libc::EACCES),
    );
    assert!(!w.sockets_uncovered() && w.unlisted.len() == 1);
    unreadable(
        &mut w,
        PathBuf::from("/x/moved"),
        &std::io::Error::from_raw_os_error(libc::ENOENT),
    );
    assert!(w.sockets_uncovered() && w.unlisted.len() == 1);
}
