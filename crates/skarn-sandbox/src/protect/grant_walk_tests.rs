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

/// Below a protected (not secret) directory, entries recorded by their
/// directory entries' inodes find the same other names as a `stat` of
/// each (issue 30), a link followed as before; `secret_only` leaves the
/// protected directories out and keeps the secret ones.
#[test]
fn entries_below_protected_dirs_recorded_by_inode_find_the_same_other_names() {
    let tmp = skarn_test_support::TempDir::new("grant-walk-below");
    let d = tmp.path().to_path_buf();
    let (prot, sec, grant) = (d.join("prot"), d.join("sec"), d.join("grant"));
    for p in [prot.join("a/b"), sec.clone(), grant.clone()] {
        std::fs::create_dir_all(p).unwrap();
    }
    std::fs::write(prot.join("a/b/tool.cfg"), "x").unwrap();
    std::fs::write(prot.join("lonely"), "x").unwrap();
    std::fs::write(d.join("target"), "x").unwrap();
    std::os::unix::fs::symlink(d.join("target"), prot.join("link")).unwrap();
    std::fs::write(sec.join("token"), "x").unwrap();
    std::fs::hard_link(prot.join("a/b/tool.cfg"), grant.join("cfg-alias")).unwrap();
    std::fs::hard_link(d.join("target"), grant.join("target-alias")).unwrap();
    std::fs::hard_link(sec.join("token"), grant.join("token-alias")).unwrap();
    let b = Bounds {
        dirs: 1000,
        time: Duration::from_secs(60),
    };
    let found = |by_entry: bool| {
        let mut places = vec![(prot.clone(), false), (sec.clone(), true)];
        let mut how = Below {
            secret_only: false,
            by_entry: by_entry.then(Default::default),
        };
        assert!(add_files_below_with(&mut places, 0, &mut how));
        let ids = how.by_entry.unwrap_or_default();
        let mut ino = Inodes::default();
        for (i, (p, _)) in places.iter().enumerate() {
            match ids.get(&i) {
                Some(id) => ino.add_id(*id, i),
                None => ino.add(p, i, true),
            }
        }
        let w = walk(std::slice::from_ref(&grant), b, true, &ino);
        let mut al: Vec<(PathBuf, PathBuf)> = w
            .aliases
            .iter()
            .map(|(p, i)| (p.clone(), places[*i].0.clone()))
            .collect();
        al.sort();
        al
    };
    let by_stat = found(false);
    assert_eq!(
        by_stat,
        vec![
            (grant.join("cfg-alias"), prot.join("a/b/tool.cfg")),
            (grant.join("target-alias"), prot.join("link")),
            (grant.join("token-alias"), sec.join("token")),
        ]
    );
    assert_eq!(found(true), by_stat);
    let mut places = vec![(prot.clone(), false), (sec.clone(), true)];
    let mut how = Below {
        secret_only: true,
        by_entry: None,
    };
    assert!(add_files_below_with(&mut places, 0, &mut how));
    assert_eq!(places[2..], [(sec.join("token"), true)]);
}
