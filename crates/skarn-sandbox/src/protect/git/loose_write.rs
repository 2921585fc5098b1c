//! Objects written loose, as git writes them (`<type> <size>\0<body>`,
//! zlib), for the packs a run wrote in place that are set aside
//! ([`super::packs_in_place`]): their other objects stay readable.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use super::object_store::Store;
use super::pack_read::{hash_ok, type_name, unhex};

/// Write every entry of `store`'s new packs but those of `except` as a
/// loose object of `store`'s objects directory (one already there is
/// left as is); how many were written.
pub(super) fn unpack_except(store: &mut Store, except: &HashSet<String>) -> std::io::Result<usize> {
    let mut packs = std::mem::take(&mut store.packs);
    let mut n = 0usize;
    for p in &mut packs {
        for i in p.by_offset() {
            let id = p.id_hex(i);
            if except.contains(&id) {
                continue;
            }
            let (t, body) = p.read(i, &mut |b| store.read_raw(b))?;
            // (Checked against its id when judged; checked again here, as
            // what is written is what host git will read.)
            if !unhex(&id).is_some_and(|raw| hash_ok(&raw, type_name(t), &body)) {
                return Err(std::io::Error::other(format!("{id} does not match its id")));
            }
            if write_loose(&store.upper, &id, type_name(t), &body)? {
                n += 1;
            }
        }
    }
    store.packs = packs;
    Ok(n)
}

/// Write the object `hex` into the objects directory `dir`; `false` when
/// its file was there already.
fn write_loose(dir: &Path, hex: &str, kind: &str, body: &[u8]) -> std::io::Result<bool> {
    let sub = dir.join(&hex[..2]);
    let file = sub.join(&hex[2..]);
    if std::fs::symlink_metadata(&file).is_ok() {
        return Ok(false);
    }
    std::fs::create_dir_all(&sub)?;
    let tmp = sub.join(format!("tmp_obj_skarn_{}", &hex[2..]));
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(format!("{kind} {}\0", body.len()).as_bytes())?;
    z.write_all(body)?;
    std::fs::write(&tmp, z.finish()?)?;
    std::fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o444))?;
    std::fs::rename(&tmp, &file)?;
    Ok(true)
}
