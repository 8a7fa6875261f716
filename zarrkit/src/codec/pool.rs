//! Decoded-chunk buffers that reads reuse, from one chunk to the next and
//! from one read to the next, shared by every array of the process.
//!
//! A buffer freed by a rayon worker goes back to that thread's malloc
//! arena, which hands the pages back to the kernel as soon as its free
//! top grows past glibc's trim threshold (128 KiB): the next chunk's
//! buffer then faulted in fresh pages again. A 256³ `uint16` read of 64³
//! zstd chunks made 4,096 such faults of 12,000 (about 7 ms of a 22 ms
//! read on one thread), and 64 reads of 32³ regions of 32³-chunk shards
//! about 60 faults a region, most of their system time.

use std::sync::{Mutex, PoisonError};

/// The most memory [`DECODE_POOL`] keeps between reads.
const POOL_BYTES: usize = 32 << 20;

/// Kept buffers (see the module documentation).
pub(crate) struct DecodePool {
    buffers: Mutex<Vec<Vec<u8>>>,
}

/// The pool every read takes its decode buffers from.
pub(crate) static DECODE_POOL: DecodePool = DecodePool {
    buffers: Mutex::new(Vec::new()),
};

impl DecodePool {
    /// A buffer of exactly `size` bytes for a decoder to overwrite
    /// entirely: a kept one that holds `size` without growing (the
    /// smallest such), or a fresh one from the allocator's zeroed pages
    /// (calloc: resizing an empty vector would write its zeros, a sixth of
    /// the instructions of a 256³ read of 64³ chunks). `None` when the
    /// allocation fails.
    pub(crate) fn buffer(&self, size: usize) -> Option<Vec<u8>> {
        let kept = {
            let mut buffers = self.buffers.lock().unwrap_or_else(PoisonError::into_inner);
            buffers
                .iter()
                .enumerate()
                .filter(|(_, b)| b.capacity() >= size)
                .min_by_key(|(_, b)| b.capacity())
                .map(|(i, _)| i)
                .map(|i| buffers.swap_remove(i))
        };
        match kept {
            // Every byte is written by the decoder: only growth zeroes.
            Some(mut data) => {
                data.resize(size, 0);
                Some(data)
            }
            None => bytemuck::allocation::try_zeroed_vec(size).ok(),
        }
    }

    /// Keeps `returned` buffers, as long as the pool stays within
    /// [`POOL_BYTES`]; the others are freed.
    pub(crate) fn give(&self, returned: impl IntoIterator<Item = Vec<u8>>) {
        let mut buffers = self.buffers.lock().unwrap_or_else(PoisonError::into_inner);
        let mut kept: usize = buffers.iter().map(Vec::capacity).sum();
        for buffer in returned {
            if buffer.capacity() > 0 && kept + buffer.capacity() <= POOL_BYTES {
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
        let pool = DecodePool {
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
        // More than POOL_BYTES is not kept.
        pool.give((0..40).map(|_| vec![0u8; 1 << 20]));
        let kept: usize = pool.buffers.lock().unwrap().iter().map(Vec::capacity).sum();
        assert!(
            (POOL_BYTES - (1 << 20)..=POOL_BYTES).contains(&kept),
            "{kept}"
        );
    }
}
