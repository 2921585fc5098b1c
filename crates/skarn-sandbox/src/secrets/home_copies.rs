//! The copies of the user's dotfiles a sandboxed command reads in its
//! home (issue 27): settings without credentials and, where the user's
//! file held a granted secret's value, the same setting with the
//! placeholder (`~/.npmrc`, `~/.git-credentials` and the `credential`
//! setting of `~/.gitconfig`, `~/.netrc`, cargo's `credentials.toml`),
//! plus the variables that carry the rest (pip's index URLs, cargo's
//! registry tokens). One step for every caller (ADR 0252): `skarn run`
//! (and the gateway's `run` tool, which is `skarn run`) and each
//! sandboxed gateway server.
//!
//! Where the copies go depends on what the command's home is:
//! - [`Home::Private`]: the private tmpfs at the user's home (`skarn run`);
//!   the copies join [`Policy::home_files`], written before any grant is
//!   bound, never over a granted file.
//! - [`Home::State`]: a gateway server, whose `$HOME` (and XDG
//!   directories) is its state directory, kept between starts and
//!   writable by the server. The files that hold a placeholder replace
//!   the same names there at every start ([`FsOp::StateFile`]: never
//!   through a link); the server's other files are left alone.

use std::path::{Path, PathBuf};

use super::egress_secrets::RunSecrets;
use crate::linux::plan::{FsOp, Plan};
use crate::policy::Policy;

/// What the command's home is.
#[derive(Debug, Clone, Copy)]
pub enum Home<'a> {
    /// A private tmpfs at the user's home (`skarn run`).
    Private,
    /// A directory kept between starts: a gateway server's state
    /// directory, its `$HOME`.
    State(&'a Path),
}

/// What [`place`] leaves for the plan: the variables and, for
/// [`Home::State`], the files written at start.
#[derive(Debug, Default)]
#[must_use = "the copies reach the command only through `attach`"]
pub struct HomeCopies {
    vars: Vec<(String, String)>,
    state_files: Vec<(PathBuf, String)>,
    replaced: Vec<PathBuf>,
}

impl HomeCopies {
    /// Add the copies to `plan` (after it is built: a state directory's
    /// files are written once its grant is bound).
    pub fn attach(self, plan: &mut Plan) {
        for (path, contents) in self.state_files {
            if let Some(a) = plan.after_run.as_mut() {
                a.own_files
                    .push((path.clone(), crate::protect::own_files::digest(&contents)));
            }
            plan.fs.push(FsOp::StateFile { path, contents });
        }
        plan.set_env.extend(self.vars);
    }

    /// The variables set for the command.
    pub fn vars(&self) -> &[(String, String)] {
        &self.vars
    }

    /// The granted files holding a credential the command reads a copy
    /// of, without it (cargo's configuration).
    pub fn replaced(&self) -> &[PathBuf] {
        &self.replaced
    }

    /// The files written into a state directory at start.
    pub fn state_files(&self) -> &[(PathBuf, String)] {
        &self.state_files
    }
}

/// The home copies for a command with `policy`, the user's home
/// `user_home`, granted `secrets`; call before the plan is made (and
/// before the stored-values check: cargo's configuration granted by a
/// preset is replaced by its copy here). Nothing without a private home.
pub fn place(
    policy: &mut Policy,
    secrets: Option<&RunSecrets>,
    user_home: &Path,
    home: Home<'_>,
) -> HomeCopies {
    let mut out = HomeCopies::default();
    if !policy.private_home {
        return out;
    }
    // Cargo's configuration as the rust preset grants it, without the
    // registry tokens and passwords cargo also accepts there.
    out.replaced = super::cargo_config::replace_granted(policy, user_home);
    let (files, placeholder_files, vars) = copies(secrets, user_home);
    out.vars = vars;
    match home {
        Home::Private => merge(&mut policy.home_files, files),
        Home::State(dir) => {
            out.state_files = files
                .into_iter()
                .filter(|(p, _)| placeholder_files.contains(p))
                .filter_map(|(p, text)| {
                    let rel = p.strip_prefix(user_home).ok()?;
                    Some((dir.join(rel), text))
                })
                .collect();
        }
    }
    out
}

/// Add `files` to `into`, a file already there (cargo's configuration
/// copy) extended.
fn merge(into: &mut Vec<(PathBuf, String)>, files: Vec<(PathBuf, String)>) {
    for (path, text) in files {
        match into.iter_mut().find(|(p, _)| *p == path) {
            Some((_, t)) => append(t, &text),
            None => into.push((path, text)),
        }
    }
}

fn append(text: &mut String, more: &str) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(more);
}

/// (files, the files that hold a placeholder, variables).
type Copies = (Vec<(PathBuf, String)>, Vec<PathBuf>, Vec<(String, String)>);

/// The copies under the user's home `home`: (files, the files that hold a
/// placeholder, variables). Sanitised settings first; no line carries a
/// granted value in, in any form (atk27 F6); then the placeholder lines.
fn copies(secrets: Option<&RunSecrets>, home: &Path) -> Copies {
    let mut files = super::dotfiles::home_files(home);
    let Some(s) = secrets else {
        return (files, Vec::new(), Vec::new());
    };
    for (_, text) in files.iter_mut() {
        if s.holds_value(text.as_bytes()) {
            *text = text
                .lines()
                .filter(|l| !s.holds_value(l.as_bytes()))
                .map(|l| format!("{l}\n"))
                .collect();
        }
    }
    let (mut lines, mut vars) = s.dotfile_placeholders(home);
    let git = s.git_settings(home);
    if !git.is_empty() {
        lines.push((home.join(".gitconfig"), git.trim_end().to_string()));
    }
    let cargo_home = super::tool_credentials::cargo_home(home);
    let cargo = s.cargo_tokens(&cargo_home);
    if !cargo.file.is_empty() && cargo_home.starts_with(home) {
        lines.push((
            cargo_home.join("credentials.toml"),
            cargo.file.trim_end().to_string(),
        ));
    }
    // Also as variables: cargo reads them first, wherever its home is and
    // whatever grant covers it.
    vars.extend(cargo.vars);
    let mut touched = Vec::new();
    for (path, line) in lines {
        match files.iter_mut().find(|(p, _)| *p == path) {
            Some((_, text)) => append(text, &format!("{line}\n")),
            None => files.push((path.clone(), format!("{line}\n"))),
        }
        if !touched.contains(&path) {
            touched.push(path);
        }
    }
    (files, touched, vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Policy {
        Policy::new("/w")
    }

    #[test]
    fn a_server_home_gets_only_the_files_holding_a_placeholder() {
        let t = tempfile::tempdir().unwrap();
        let h = t.path();
        std::fs::write(
            h.join(".npmrc"),
            "registry=https://r.test/\n//r.test/:_authToken=REALvalue0123456789\n",
        )
        .unwrap();
        std::fs::write(h.join(".gitconfig"), "[user]\n\tname = U\n").unwrap();
        let s = RunSecrets::for_tests(
            "REALvalue0123456789",
            Some("PLACEHOLDERxxxxxxxxx"),
            "r.test",
        );
        let mut p = policy();
        let state = Path::new("/state/srv");
        let c = place(&mut p, Some(&s), h, Home::State(state));
        assert!(p.home_files.is_empty(), "{:?}", p.home_files);
        let files = c.state_files();
        assert_eq!(files.len(), 1, "{files:?}");
        assert_eq!(files[0].0, state.join(".npmrc"));
        assert!(files[0].1.contains("registry=https://r.test/"), "{files:?}");
        assert!(files[0].1.contains("PLACEHOLDERxxxxxxxxx"), "{files:?}");
        assert!(!files[0].1.contains("REALvalue"), "{files:?}");
    }

    #[test]
    fn a_private_home_gets_every_sanitised_copy() {
        let t = tempfile::tempdir().unwrap();
        let h = t.path();
        std::fs::write(
            h.join(".npmrc"),
            "//r.test/:_authToken=REALvalue0123456789\n",
        )
        .unwrap();
        std::fs::write(h.join(".gitconfig"), "[user]\n\tname = U\n").unwrap();
        let s = RunSecrets::for_tests(
            "REALvalue0123456789",
            Some("PLACEHOLDERxxxxxxxxx"),
            "r.test",
        );
        let mut p = policy();
        let c = place(&mut p, Some(&s), h, Home::Private);
        assert!(c.state_files().is_empty());
        let npmrc = p.home_files.iter().find(|(f, _)| *f == h.join(".npmrc"));
        assert!(npmrc.is_some_and(|(_, t)| t.contains("PLACEHOLDERxxxxxxxxx")));
        assert!(p.home_files.iter().any(|(f, _)| *f == h.join(".gitconfig")));
        assert!(p.home_files.iter().all(|(_, t)| !t.contains("REALvalue")));
    }
}
