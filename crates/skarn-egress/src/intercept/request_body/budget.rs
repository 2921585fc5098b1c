//! One byte budget for every request body the proxy holds (f27s): each
//! held body may take [`super::MAX_HELD`] (and its decoded copy as much
//! again), and the proxy serves many connections at once, so past
//! [`BUDGET`] in all a further held request is refused (503, recorded)
//! instead of growing the proxy's memory (fail closed).

use std::sync::atomic::{AtomicUsize, Ordering};

/// The most held-body bytes (raw and decoded) across the whole proxy.
pub(crate) const BUDGET: usize = 64 << 20;

static HELD: AtomicUsize = AtomicUsize::new(0);

/// The refusal past the budget.
pub(crate) fn busy() -> String {
    format!(
        "the proxy already holds {} MiB of request bodies being checked for _method \
         (many large requests at once): refused, try again",
        BUDGET >> 20
    )
}

/// Bytes of the budget taken by one request, given back when dropped.
#[derive(Default)]
pub(crate) struct Lease(usize);

impl Lease {
    /// The bytes this lease holds.
    pub(crate) fn taken(&self) -> usize {
        self.0
    }

    /// Take enough for `total` bytes in all; `false` past the budget.
    pub(crate) fn cover(&mut self, total: usize) -> bool {
        if total <= self.0 {
            return true;
        }
        let more = total - self.0;
        let mut cur = HELD.load(Ordering::Relaxed);
        loop {
            if cur.saturating_add(more) > BUDGET {
                return false;
            }
            match HELD.compare_exchange_weak(cur, cur + more, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => {
                    self.0 = total;
                    return true;
                }
                Err(c) => cur = c,
            }
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        HELD.fetch_sub(self.0, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::{BUDGET, Lease};

    #[test]
    fn the_budget_is_shared_and_given_back() {
        let mut a = Lease::default();
        assert!(a.cover(BUDGET / 2));
        let mut b = Lease::default();
        assert!(!b.cover(BUDGET / 2 + 4096), "past the budget in all");
        drop(a);
        assert!(b.cover(BUDGET / 2 + 4096), "given back on drop");
    }
}
