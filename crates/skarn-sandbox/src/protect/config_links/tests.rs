#![cfg(unix)]

use super::*;

#[test]
fn every_hop_of_a_link_is_kept() {
    let t = skarn_test_support::TempDir::new("config_links");
    let b = std::fs::canonicalize(t.path()).unwrap();
    std::fs::create_dir_all(b.join("tools")).unwrap();
    std::fs::create_dir_all(b.join("scripts")).unwrap();
    std::fs::write(b.join("tools/real.sh"), "echo\n").unwrap();
    std::os::unix::fs::symlink("../tools/mid.sh", b.join("scripts/ctx.sh")).unwrap();
    std::os::unix::fs::symlink("real.sh", b.join("tools/mid.sh")).unwrap();
    std::os::unix::fs::symlink("tools", b.join("bin")).unwrap();
    let h = hops(&b.join("scripts/ctx.sh"), &b);
    assert!(h.contains(&b.join("tools/mid.sh")), "{h:?}");
    assert!(h.contains(&b.join("tools/real.sh")), "{h:?}");
    let h = hops(&b.join("bin/real.sh"), &b);
    assert_eq!(h, [b.join("tools/real.sh")]);
    assert!(hops(&b.join("tools/real.sh"), &b).is_empty());
}
