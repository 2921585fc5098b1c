use super::*;

#[test]
fn state_dir_prefers_xdg() {
    let e = |v: &[(&str, &str)]| -> Vec<(OsString, OsString)> {
        v.iter().map(|(a, b)| (a.into(), b.into())).collect()
    };
    assert_eq!(
        state_dir("a", &e(&[("HOME", "/h")])),
        Some(PathBuf::from("/h/.local/state/skarn-servers/a"))
    );
    assert_eq!(
        state_dir("a", &e(&[("HOME", "/h"), ("XDG_STATE_HOME", "/x")])),
        Some(PathBuf::from("/x/skarn-servers/a"))
    );
    assert_eq!(state_dir("a", &e(&[("HOME", "rel")])), None);
}
