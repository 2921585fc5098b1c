//! A private, temporary copy-on-write "upper" holding one file as a file
//! tool will leave it, so the layer's own judgement
//! ([`skarn_sandbox::linux::cow::vet::check`]) reads the new content where
//! it reads a run's (atk22o F10): a fresh directory only this process can
//! enter, the file at the same names below it as in the workspace, removed
//! when judged.

use std::path::{Component, Path};

/// Run `f` with the path of a file holding `bytes` at `rel` below a fresh
/// private directory; an upper that cannot be made is a refusal (the
/// guard fails closed).
pub fn with_upper(
    rel: &Path,
    bytes: &[u8],
    f: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err("a path with `.` or `..` names".into());
    }
    let base = std::env::temp_dir();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let mut made = None;
    for k in 0..16u32 {
        let d = base.join(format!(
            "skarn-hook-upper-{}-{stamp}-{k}",
            std::process::id()
        ));
        if std::fs::DirBuilder::new().mode(0o700).create(&d).is_ok() {
            made = Some(d);
            break;
        }
    }
    let Some(top) = made else {
        return Err("skarn could not make a private directory to judge the new content in".into());
    };
    let file = top.join(rel);
    let written = file
        .parent()
        .map_or(Ok(()), |p| {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(p)
        })
        .and_then(|()| std::fs::write(&file, bytes));
    let out = match written {
        Ok(()) => f(&file),
        Err(e) => Err(format!(
            "skarn could not hold the new content to judge it: {e}"
        )),
    };
    let _ = std::fs::remove_dir_all(&top);
    out
}
