//! The isolate's allocator: the memory limit is enforced here rather than by
//! QuickJS's own counter so that the host knows, after the fact, that a
//! failure came from the limit (QuickJS sometimes reports it as a bare
//! `null` exception when it cannot even allocate the error object).

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
}

impl LimitedAllocator {
    pub(crate) fn new(limit: Arc<AtomicUsize>, hit: Arc<AtomicBool>) -> Self {
        LimitedAllocator {
            inner: RustAllocator,
            used: 0,
            limit,
            hit,
        }
    }

    fn over(&self, want: usize) -> bool {
        want > self.limit.load(Ordering::Relaxed)
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
