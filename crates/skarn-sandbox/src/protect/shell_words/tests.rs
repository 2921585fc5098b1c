use super::*;

#[test]
fn words_expand_as_far_as_they_can() {
    let home = Path::new("/h");
    let mut vars = Vars::default();
    vars.learn(&words("DF=~/dotfiles; export Z=\"$HOME/z\""));
    vars.learn(&words("for f in ~/d/*.sh /x/y; do . \"$f\"; done"));
    let one = |w: &str| expand(w, home, &vars).map(|v| v[0].clone());
    assert_eq!(one("~/a").unwrap().path, PathBuf::from("/h/a"));
    assert!(!one("${HOME}/a").unwrap().approx);
    let df = one("$DF/b4.sh").unwrap();
    assert_eq!(df.path, PathBuf::from("/h/dotfiles/b4.sh"));
    assert!(df.approx);
    assert_eq!(one("$Z/q").unwrap().path, PathBuf::from("/h/z/q"));
    let f = expand("\"$f\"", home, &vars).unwrap();
    assert_eq!(f.len(), 2, "{f:?}");
    assert_eq!(f[0].path, PathBuf::from("/h/d/*.sh"));
    assert_eq!(
        one("${NOPE_SKARN_X:-$HOME/dflt}/a").unwrap().path,
        PathBuf::from("/h/dflt/a")
    );
    assert_eq!(one("$NOPE_SKARN_X/a"), None);
    assert_eq!(one("$(dirname x)/a"), None);
    assert_eq!(
        pattern_base(Path::new("/h/d/*/x.sh")),
        (PathBuf::from("/h/d"), 2)
    );
    assert_eq!(
        path_pieces("export PATH=\"$HOME/bin:${X:-/y}:$PATH\""),
        ["export", "PATH", "$HOME/bin", "${X:-/y}", "$PATH"]
    );
}
