//! Byte buffers that reads reuse, from one chunk to the next and from one
//! read to the next, shared by every store and array of the process: the
//! buffers a store reads values into (the filesystem store), and those
//! chunks decode into. A reader gives each back once it has copied the
//! bytes out.
//!
//! A buffer freed by a rayon worker goes back to that thread's malloc
//! arena, which hands the pages back to the kernel as soon as its free
//! top grows past glibc's trim threshold (128 KiB): the next chunk's
//! buffer then faulted in fresh pages again. A 256³ `uint16` read of 64³
//! zstd chunks made 4,096 such faults of 12,000 (about 7 ms of a 22 ms
//! read on one thread), and 64 reads of 32³ regions of 32³-chunk shards
//! about 60 faults a region, most of their system time. A 256³ read of
//! uncompressed 64³ chunks read each 512 KiB file into a fresh buffer on
//! the store's I/O threads: about 3,500 faults a read, a third of its
//! time.

use std::sync::{Mutex, PoisonError};

/// The most memory [`BUFFERS`] keeps between reads.
const POOL_BYTES: usize = 32 << 20;

/// The most buffers [`BUFFERS`] keeps: each take looks through them all,
/// and compressed chunks of a smooth field are a few hundred bytes each
/// (32 MiB of those would be tens of thousands).
const POOL_BUFFERS: usize = 1024;

/// Kept buffers (see the module documentation).
pub(crate) struct BufferPool {
    buffers: Mutex<Vec<Vec<u8>>>,
}

/// The pool every read takes its buffers from.
pub(crate) static BUFFERS: BufferPool = BufferPool {
    buffers: Mutex::new(Vec::new()),
};

impl BufferPool {
    /// A buffer of exactly `size` bytes for a decoder to overwrite
    /// entirely: a kept one that holds `size` without growing (the
    /// smallest such), or a fresh one from the allocator's zeroed pages
    /// (calloc: resizing an empty vector would write its zeros, a sixth of
    /// the instructions of a 256³ read of 64³ chunks). `None` when the
    /// allocation fails.
    pub(crate) fn buffer(&self, size: usize) -> Option<Vec<u8>> {
        match self.take(size, usize::MAX) {
            // Every byte is written by the decoder: only growth zeroes.
            Some(mut data) => {
                data.resize(size, 0);
                Some(data)
            }
            None => bytemuck::allocation::try_zeroed_vec(size).ok(),
        }
    }

    /// An empty buffer with room for `size` bytes, for a store to read a
    /// value into: a kept one whose capacity is `size` to twice that (a
    /// value the caller keeps, such as a document, holds no much larger
    /// buffer), or a fresh one, not zeroed. `None` when the allocation
    /// fails.
    pub(crate) fn empty(&self, size: usize) -> Option<Vec<u8>> {
        match self.take(size, size.saturating_mul(2)) {
            Some(mut kept) => {
                kept.clear();
                Some(kept)
            }
            None => {
                let mut fresh = Vec::new();
                fresh.try_reserve_exact(size).ok()?;
                Some(fresh)
            }
        }
    }

    /// The smallest kept buffer whose capacity is `min` to `max`, taken
    /// out of the pool.
    fn take(&self, min: usize, max: usize) -> Option<Vec<u8>> {
        if min == 0 {
            return None;
        }
        let mut buffers = self.buffers.lock().unwrap_or_else(PoisonError::into_inner);
        buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| (min..=max).contains(&b.capacity()))
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i)
            .map(|i| buffers.swap_remove(i))
    }

    /// Keeps `returned` buffers, as long as the pool stays within
    /// [`POOL_BYTES`]; the others are freed.
    pub(crate) fn give(&self, returned: impl IntoIterator<Item = Vec<u8>>) {
        let mut buffers = self.buffers.lock().unwrap_or_else(PoisonError::into_inner);
        let mut kept: usize = buffers.iter().map(Vec::capacity).sum();
        for buffer in returned {
            if buffer.capacity() > 0
                && kept + buffer.capacity() <= POOL_BYTES
                && buffers.len() < POOL_BUFFERS
            {
                kept += buffer.capacity();
                buffers.push(buffer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_reused_smallest_first_and_the_pool_stays_bounded() {
        let pool = BufferPool {
            buffers: Mutex::new(Vec::new()),
        };
        let mut big = pool.buffer(1 << 20).unwrap();
        big[5] = 7;
        let small = pool.buffer(1 << 10).unwrap();
        assert_eq!((big.len(), small.len()), (1 << 20, 1 << 10));
        assert!(small.iter().all(|&b| b == 0), "fresh buffers are zeroed");
        let (big_ptr, small_ptr) = (big.as_ptr(), small.as_ptr());
        pool.give([big, small]);
        // A request that fits the small one gets it, not the big one.
        let again = pool.buffer(512).unwrap();
        assert_eq!((again.as_ptr(), again.len()), (small_ptr, 512));
        let again_big = pool.buffer(4096).unwrap();
        assert_eq!((again_big.as_ptr(), again_big.len()), (big_ptr, 4096));
        // A value read into the pool takes a kept buffer of its size to
        // twice that only, emptied.
        let four_k = vec![1u8; 4096];
        let four_k_ptr = four_k.as_ptr();
        pool.give([again_big, four_k]);
        let tiny = pool.empty(100).unwrap();
        assert_ne!(
            tiny.as_ptr(),
            four_k_ptr,
            "too large a buffer for 100 bytes"
        );
        let read = pool.empty(3000).unwrap();
        assert_eq!((read.as_ptr(), read.len()), (four_k_ptr, 0));
        let other = pool.empty(3000).unwrap();
        assert_ne!(other.as_ptr(), big_ptr, "too large a buffer for 3000 bytes");
        // More than POOL_BYTES is not kept.
        pool.give((0..40).map(|_| vec![0u8; 1 << 20]));
        let kept: usize = pool.buffers.lock().unwrap().iter().map(Vec::capacity).sum();
        assert!(
            (POOL_BYTES - (1 << 20)..=POOL_BYTES).contains(&kept),
            "{kept}"
        );
        // Nor more than POOL_BUFFERS buffers, however small.
        pool.buffers.lock().unwrap().clear();
        pool.give((0..POOL_BUFFERS + 500).map(|_| vec![0u8; 300]));
        assert_eq!(pool.buffers.lock().unwrap().len(), POOL_BUFFERS);
    }
}
