//! Set-up shared by the tests of what a run leaves in git repositories
//! (`run_git_*`, `run_atk22*`, `run_h22o`): repositories, commits planted
//! by the run, the after-run check's clock margin, the run that must
//! reach its `RAN`, the host entering a directory (direnv).

use std::path::Path;

use crate::common::{err, git, out, run_command};

/// Past the after-run check's clock margin (what is here is the user's).
pub(crate) fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(200));
}

/// Shell lines (in the workspace, inside the run) making a commit whose
/// tree holds `.envrc` (running `touch marker`) on branch `agent`.
pub(crate) fn planted_commit(marker: &Path) -> String {
    format!(
        "G='git -c user.name=a -c user.email=a@a'; \
         b=$(printf 'touch {m}\\n' | git hash-object -w --stdin); \
         GIT_INDEX_FILE=.git/agent-index git read-tree HEAD; \
         GIT_INDEX_FILE=.git/agent-index git update-index --add --cacheinfo 100644,$b,.envrc; \
         tr=$(GIT_INDEX_FILE=.git/agent-index git write-tree); \
         c=$($G commit-tree $tr -p HEAD -m planted); git update-ref refs/heads/agent $c; \
         rm -f .git/agent-index; ",
        m = marker.display()
    )
}

/// A repository on branch `master` with one commit of `file` at `dir`.
pub(crate) fn repo(dir: &Path, file: &str, text: &str) {
    git(dir, &["init", "-q", "-b", "master"]);
    std::fs::write(dir.join(file), text).unwrap();
    git(dir, &["add", file]);
    git(dir, &["commit", "-qm", "init"]);
}

/// What a `skarn run` (`c`) said, out and err; the command must have run
/// to its `RAN`.
pub(crate) fn ran(layer: &str, c: &mut std::process::Command) -> String {
    let o = c.output().unwrap();
    let said = format!("{}{}", out(&o), err(&o));
    assert!(
        said.contains("RAN"),
        "{layer}: the command did not run: {said}"
    );
    said
}

/// `sh -c script` in `skarn run --report --workspace-layer LAYER`
/// started in `ws`, with HOME = `home`: what it said, out and err.
pub(crate) fn report_script(ws: &Path, home: &Path, layer: &str, script: &str) -> String {
    let o = run_command(
        ws,
        home,
        &["--report", "--workspace-layer", layer],
        &["sh", "-c", script],
    )
    .current_dir(ws)
    .output()
    .unwrap();
    format!("{}{}", out(&o), err(&o))
}

/// [`report_script`]; the command must have run to its `RAN`.
pub(crate) fn report_ran(ws: &Path, home: &Path, layer: &str, script: &str) -> String {
    let said = report_script(ws, home, layer, script);
    assert!(
        said.contains("RAN"),
        "{layer}: the command did not run: {said}"
    );
    said
}

/// On the host, a shell enters `dir`: direnv sources its `.envrc`, when
/// there is one.
pub(crate) fn enter(dir: &Path) {
    if dir.join(".envrc").exists() {
        let _ = std::process::Command::new("sh")
            .arg(dir.join(".envrc"))
            .current_dir(dir)
            .output();
    }
}
