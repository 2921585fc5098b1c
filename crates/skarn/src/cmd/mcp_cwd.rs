//! The `cwd` of an MCP entry `init` wraps (attack atk24o F12; ADR 0306).
//! The client starts the wrapped `skarn run` in that directory, which
//! becomes the server's writable workspace: a cloned repository's
//! `.vscode/mcp.json` naming `${userHome}/work/other` (or `~/Documents`)
//! would let its server write another of the user's projects. A `cwd`
//! inside the project (the directory `init` or `doctor` runs in, with
//! VS Code's `${workspaceFolder}` standing for it) is kept and shown; any
//! other one (outside, a variable skarn does not expand) is dropped from
//! the wrapped entry, which the client then starts in the project.

use std::path::{Component, Path, PathBuf};

/// Why the entry's `cwd` value `cwd` may not stay (`None`: inside the
/// project `project`, whose real path is taken; `home` for `~` and
/// `${userHome}`).
pub fn outside(cwd: &str, project: &Path, home: Option<&Path>) -> Option<String> {
    let Ok(project) = std::fs::canonicalize(project) else {
        return Some("the project's directory cannot be resolved".into());
    };
    let mut v = cwd.to_string();
    for var in ["${workspaceFolder}", "${workspaceRoot}", "${cwd}"] {
        v = v.replace(var, &project.display().to_string());
    }
    if let Some(h) = home {
        v = v.replace("${userHome}", &h.display().to_string());
        if v == "~" || v.starts_with("~/") {
            v = format!("{}{}", h.display(), &v[1..]);
        }
    }
    if v.contains("${") || v.starts_with('~') {
        return Some(format!("{cwd}: a variable skarn does not expand"));
    }
    let p = project.join(&v);
    // `..` taken lexically, then links resolved as far as the path exists.
    let mut lex = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                lex.pop();
            }
            Component::CurDir => {}
            c => lex.push(c),
        }
    }
    let mut real = lex.clone();
    let mut rest = Vec::new();
    let resolved = loop {
        if let Ok(r) = std::fs::canonicalize(&real) {
            break r;
        }
        match (real.file_name().map(ToOwned::to_owned), real.pop()) {
            (Some(n), true) => rest.push(n),
            _ => return Some(format!("{cwd}: cannot be resolved")),
        }
    };
    let full = rest.iter().rev().fold(resolved, |a, n| a.join(n));
    if full.starts_with(&project) {
        None
    } else {
        Some(format!(
            "{cwd} lies outside the project {}",
            project.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_cwd_inside_the_project_stays() {
        let t = skarn_test_support::TempDir::new("mcp_cwd");
        let (p, home) = (t.dir("home/p"), t.dir("home"));
        std::fs::create_dir_all(p.join("srv")).unwrap();
        let h = Some(home.as_path());
        for ok in [
            "srv",
            "./srv/new",
            "${workspaceFolder}/srv",
            ".",
            "srv/../srv",
        ] {
            assert_eq!(outside(ok, &p, h), None, "{ok}");
        }
        for bad in [
            "..",
            "/tmp",
            "${userHome}/Documents",
            "~/other",
            "${env:HOME}",
            "srv/../../x",
        ] {
            assert!(outside(bad, &p, h).is_some(), "{bad}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&home, p.join("up")).unwrap();
            assert!(outside("up/x", &p, h).is_some());
        }
    }
}
