//! The isolate's allocator: the memory limit is enforced here rather than by
//! QuickJS's own counter so that the host knows, after the fact, that a
//! failure came from the limit (QuickJS sometimes reports it as a bare
//! `null` exception when it cannot even allocate the error object).
//!
//! It also refuses everything once the run has expired (`expired`, set by
//! the caller of `execute` at the deadline): QuickJS checks its interrupt
//! only every ten thousand calls or backward jumps, and a single step may
//! be seconds of native work (converting a 1 Mbit BigInt to text is
//! quadratic), so without this a script could run on for hours past its
//! deadline. Such steps allocate before they work; refused, they fail at
//! once and the next interrupt check ends the run.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rquickjs::allocator::{Allocator, RustAllocator};

/// Rust's global allocator with a byte limit; records whether the limit
/// ever refused an allocation.
pub(crate) struct LimitedAllocator {
    inner: RustAllocator,
    used: usize,
    /// Shared so the engine can lift it while it sets the runtime up (QuickJS
    /// does not survive running out of memory inside `JS_NewRuntime`).
    limit: Arc<AtomicUsize>,
    hit: Arc<AtomicBool>,
    expired: Arc<AtomicBool>,
    /// Whether `expired` applies: only while the script's context is in use
    /// (not while QuickJS sets the runtime up or tears it down, where it
    /// asserts that allocations succeed).
    armed: Arc<AtomicBool>,
}

impl LimitedAllocator {
    pub(crate) fn new(
        limit: Arc<AtomicUsize>,
        hit: Arc<AtomicBool>,
        expired: Arc<AtomicBool>,
        armed: Arc<AtomicBool>,
    ) -> Self {
        LimitedAllocator {
            inner: RustAllocator,
            used: 0,
            limit,
            hit,
            expired,
            armed,
        }
    }

    fn over(&self, want: usize) -> bool {
        want > self.limit.load(Ordering::Relaxed)
    }

    /// The run is over: refuse without blaming the memory limit.
    fn expired(&self) -> bool {
        self.expired.load(Ordering::Relaxed) && self.armed.load(Ordering::Relaxed)
    }

    fn refuse(&self) -> *mut u8 {
        self.hit.store(true, Ordering::Relaxed);
        std::ptr::null_mut()
    }
}

// SAFETY: every method delegates to `RustAllocator`, which upholds the
// trait's contract; this wrapper only refuses requests (returning null, which
// QuickJS handles as out-of-memory) and keeps a byte count from the
// allocator's own `usable_size`.
unsafe impl Allocator for LimitedAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if self.expired() {
            return std::ptr::null_mut();
        }
        if self.over(self.used.saturating_add(size)) {
            return self.refuse();
        }
        let p = self.inner.alloc(size);
        if !p.is_null() {
            // SAFETY: `p` was just returned by `RustAllocator::alloc`.
            self.used += unsafe { RustAllocator::usable_size(p) };
        }
        p
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        let Some(total) = count.checked_mul(size) else {
            return self.refuse();
        };
        if self.expired() {
            return std::ptr::null_mut();
        }
        if self.over(self.used.saturating_add(total)) {
            return self.refuse();
        }
        let p = self.inner.calloc(count, size);
        if !p.is_null() {
            // SAFETY: `p` was just returned by `RustAllocator::calloc`.
            self.used += unsafe { RustAllocator::usable_size(p) };
        }
        p
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        // SAFETY: QuickJS only frees pointers this allocator returned.
        let n = unsafe { RustAllocator::usable_size(ptr) };
        self.used = self.used.saturating_sub(n);
        // SAFETY: as above.
        unsafe { self.inner.dealloc(ptr) }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        // SAFETY: QuickJS only reallocates pointers this allocator returned.
        let old = unsafe { RustAllocator::usable_size(ptr) };
        if new_size > old && self.expired() {
            return std::ptr::null_mut();
        }
        if new_size > old && self.over(self.used.saturating_sub(old).saturating_add(new_size)) {
            return self.refuse();
        }
        // SAFETY: as above; on failure the old block stays valid and counted.
        let p = unsafe { self.inner.realloc(ptr, new_size) };
        if !p.is_null() {
            // SAFETY: `p` was just returned by `RustAllocator::realloc`.
            let new = unsafe { RustAllocator::usable_size(p) };
            self.used = self.used.saturating_sub(old) + new;
        }
        p
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: forwarded contract: `ptr` came from this allocator.
        unsafe { RustAllocator::usable_size(ptr) }
    }
}
