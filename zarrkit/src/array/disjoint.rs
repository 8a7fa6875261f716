//! An output buffer that parallel tasks write at disjoint offsets: the
//! one place selection reads need `unsafe`.
//!
//! A selection read groups its output elements by chunk, and every output
//! element belongs to exactly one entry of each factor, so to exactly one
//! chunk and one cell: the tasks decoding different chunks write disjoint
//! parts of the output, which they do straight from their decoded chunk,
//! in parallel, instead of handing the chunk to one thread that copies it.

use std::marker::PhantomData;

/// A `&mut [T]` shared by tasks that write disjoint ranges of it.
pub(super) struct DisjointOut<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: a `DisjointOut` is a `&'a mut [T]` handed to several threads.
// Sending it is sending the slice (`T: Send`), and sharing it is sound
// because every access goes through `with_range`, whose callers promise
// that no two accesses overlap in time and place.
unsafe impl<T: Send> Send for DisjointOut<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for DisjointOut<'_, T> {}

impl<'a, T> DisjointOut<'a, T> {
    /// Shares `out` until the writer is dropped.
    pub(super) fn new(out: &'a mut [T]) -> Self {
        Self {
            ptr: out.as_mut_ptr(),
            len: out.len(),
            _borrow: PhantomData,
        }
    }

    /// Calls `f` with the `len` elements at `start`.
    ///
    /// # Panics
    /// If the range is not inside the buffer.
    ///
    /// # Safety
    /// No other call may access any of these elements at the same time
    /// (from another thread, or from inside `f`).
    pub(super) unsafe fn with_range<R>(
        &self,
        start: usize,
        len: usize,
        f: impl FnOnce(&mut [T]) -> R,
    ) -> R {
        assert!(
            start <= self.len && len <= self.len - start,
            "range {start}+{len} outside a buffer of {}",
            self.len
        );
        // SAFETY: the range is inside the slice borrowed for 'a (checked
        // above), and the caller promises nothing else accesses it meanwhile.
        let range = unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), len) };
        f(range)
    }
}
