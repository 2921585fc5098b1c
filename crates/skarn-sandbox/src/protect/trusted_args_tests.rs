use super::*;

fn script(line: &str) -> Read {
    let w: Vec<&str> = line.split(' ').collect();
    read(kind(w[0]).unwrap(), w[0], &w[1..])
}

#[test]
fn the_script_is_read_as_each_interpreter_reads_its_options() {
    let s = |l: &str| script(l).script;
    assert_eq!(s("sh -e .c1.sh").as_deref(), Some(".c1.sh"));
    assert_eq!(s("bash -o pipefail .c2.sh").as_deref(), Some(".c2.sh"));
    assert_eq!(s("bash -eo pipefail x").as_deref(), Some("x"));
    assert_eq!(s("bash +o posix -eu x").as_deref(), Some("x"));
    assert_eq!(s("sh -- .c7.sh").as_deref(), Some(".c7.sh"));
    assert_eq!(s("python3 -W ignore tool1").as_deref(), Some("tool1"));
    assert_eq!(s("python3 -X dev -u tool2").as_deref(), Some("tool2"));
    assert_eq!(s("python3 -Wignore t").as_deref(), Some("t"));
    assert_eq!(s("node --no-warnings srv").as_deref(), Some("srv"));
    assert_eq!(s("php -f x.php").as_deref(), Some("x.php"));
    assert_eq!(s("source .c4.sh").as_deref(), Some(".c4.sh"));
    assert_eq!(s(". .c4.sh").as_deref(), Some(".c4.sh"));
    let r = script("node -r ./pre.js app");
    assert_eq!(
        (r.script.as_deref(), r.loads),
        (Some("app"), vec!["./pre.js".into()])
    );
    assert_eq!(script("bash --rcfile rc x").loads, vec!["rc".to_string()]);
    assert_eq!(script("sh -ec 'x'").inline.as_deref(), Some("'x'"));
    assert_eq!(script("python3 -c x").inline.as_deref(), Some("x"));
    assert_eq!(script("python3 -um app").module.as_deref(), Some("app"));
    assert!(script("sh").stdin && script("bash -s a").stdin && script("python3 -").stdin);
    assert_eq!(script("awk -f g.awk in").loads, vec!["g.awk".to_string()]);
    assert_eq!(script("awk {print} f"), Read::default());
    // Unknown options: unsure.
    for l in [
        "node --weird srv",
        "ruby -C d x",
        "tclsh -x y",
        "python3 --frob x",
        "node --test",
    ] {
        assert!(script(l).unsure.is_some(), "{l}");
    }
}
