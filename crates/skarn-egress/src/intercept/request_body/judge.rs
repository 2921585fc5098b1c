//! The whole judgement of a held body (f27u, atk27t F3, F8): decoded when
//! coded, then judged raw AND decoded (frameworks parse a request's raw
//! bytes; they do not undo its `Content-Encoding`), and each wide reading
//! built one at a time with its size taken from the proxy's budget first.
//! Run off the proxy's async threads ([`judged`]), so a large body being
//! judged does not stall other connections.

use super::super::decode::Coding;
use super::budget::{Lease, busy};
use super::{decoded, names_method_in, wide};

/// A refusal: the status line and why.
pub(crate) type Refusal = (&'static str, String);

/// Judge `raw` (in `coding`) on the blocking pool; gives the body and its
/// lease back with the verdict.
pub(crate) async fn judged(
    coding: Option<Coding>,
    raw: Vec<u8>,
    mut lease: Lease,
) -> (Vec<u8>, Lease, Result<(), Refusal>) {
    let work = tokio::task::spawn_blocking(move || {
        let v = judge(coding, &raw, &mut lease);
        (raw, lease, v)
    });
    match work.await {
        Ok(done) => done,
        Err(e) => (
            Vec::new(),
            Lease::default(),
            Err((
                "500 Internal Server Error",
                format!("the request body could not be checked ({e}): refused"),
            )),
        ),
    }
}

/// The verdict on `raw` (in `coding`): `Err` when refused.
pub(crate) fn judge(coding: Option<Coding>, raw: &[u8], lease: &mut Lease) -> Result<(), Refusal> {
    let base = lease.taken().max(raw.len());
    let forbid = |why: &'static str| ("403 Forbidden", why.to_string());
    let over = || ("503 Service Unavailable", busy());
    if let Some(why) = leased(raw, lease, base).map_err(|()| over())? {
        return Err(forbid(why));
    }
    let Some(c) = coding else {
        return Ok(());
    };
    let plain = decoded(c, raw, lease).map_err(|(over_budget, why)| {
        let status = if over_budget {
            "503 Service Unavailable"
        } else {
            "413 Content Too Large"
        };
        (status, why)
    })?;
    let base = lease.taken().max(base + plain.len());
    match leased(&plain, lease, base).map_err(|()| over())? {
        Some(why) => Err(forbid(why)),
        None => Ok(()),
    }
}

/// [`super::names_method`] with each wide copy's size (at most 3 bytes
/// per 2 read) taken from `lease` on top of `base` before it is built;
/// `Err` past the budget.
pub(super) fn leased(
    body: &[u8],
    lease: &mut Lease,
    base: usize,
) -> Result<Option<&'static str>, ()> {
    if let Some(why) = names_method_in(body) {
        return Ok(Some(why));
    }
    if !wide::may_be_wide(body) {
        return Ok(None);
    }
    let bound = body.len() / 2 * 3 + 8;
    if !lease.cover(base + bound) {
        return Err(());
    }
    for le in [true, false] {
        for unit in [2, 4] {
            let t = wide::transcoding(body, le, unit, bound);
            if let Some(why) = names_method_in(&t) {
                return Ok(Some(why));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::{Coding, Lease, judge};

    /// atk27t F3: a zstd skippable frame decodes to nothing; its raw bytes
    /// name `_method`, which a framework reads (it does not decode).
    #[test]
    fn a_coded_body_is_judged_raw_too() {
        let p = b"&_method=DELETE&";
        let mut z = vec![0x50, 0x2a, 0x4d, 0x18, p.len() as u8, 0, 0, 0];
        z.extend_from_slice(p);
        let v = judge(Some(Coding::Zstd), &z, &mut Lease::default());
        assert_eq!(v.map_err(|e| e.0), Err("403 Forbidden"));
    }

    /// atk27t F8: the wide copies are taken from the lease before built.
    #[test]
    fn wide_copies_are_counted() {
        let body = [0u8, 0xd8].repeat(1 << 16);
        let mut lease = Lease::default();
        assert!(judge(None, &body, &mut lease).is_ok());
        assert!(lease.taken() >= body.len() + body.len() / 2 * 3);
    }
}
