#![cfg(unix)]
use super::*;

const INFO: &str = "\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
30 22 0:40 / /tmp rw shared:2 - tmpfs tmpfs rw\n\
31 22 0:40 /a/bsrc /opt/with\\040space/bdst rw shared:2 - tmpfs tmpfs rw\n\
32 22 8:1 /srv/x /opt/y rw shared:1 - ext4 /dev/sda1 rw\n";

#[test]
fn a_file_under_a_bind_mounted_directory_has_its_other_name() {
    let ms = mounts(INFO);
    assert_eq!(
        other_names(Path::new("/tmp/a/bsrc/b.sock"), &ms),
        vec![PathBuf::from("/opt/with space/bdst/b.sock")]
    );
    assert_eq!(
        other_names(Path::new("/srv/x/s.sock"), &ms),
        vec![PathBuf::from("/opt/y/s.sock")]
    );
    assert!(other_names(Path::new("/tmp/other/s.sock"), &ms).is_empty());
}

#[test]
fn the_owner_of_a_socket_gives_its_working_directory() {
    let l = std::os::unix::net::UnixListener::bind_addr(
        &std::os::unix::net::SocketAddr::from_pathname(
            std::env::temp_dir().join(format!("sp-{}.sock", std::process::id())),
        )
        .unwrap(),
    )
    .unwrap();
    let path = l.local_addr().unwrap().as_pathname().unwrap().to_path_buf();
    let text = std::fs::read_to_string("/proc/net/unix").unwrap();
    let ino = super::super::host_sockets::bound_names(&text)
        .into_iter()
        .find(|b| b.name == path)
        .unwrap()
        .ino;
    let got = owner_dirs(&[ino]);
    assert_eq!(got.get(&ino), Some(&std::env::current_dir().unwrap()));
    let _ = std::fs::remove_file(&path);
}
