//! How many threads one codec call may use on its own: the array code
//! decodes and encodes chunks in parallel on the caller's rayon pool, so a
//! codec that can split one chunk over threads (blosc's internal threads)
//! may use the threads left over when a read or write has fewer chunks
//! than the pool has threads, and no more.
//!
//! The count travels with the thread that runs the codec
//! ([`with_chunk_threads`]), not as an argument of every codec method: it
//! is 1 unless the array code (or a caller of [`CodecChain`](super::CodecChain)
//! that knows its thread budget) says otherwise around the call.

use std::cell::Cell;

thread_local! {
    static CHUNK_THREADS: Cell<usize> = const { Cell::new(1) };
}

/// Runs `f` with codec calls on this thread allowed `threads` threads each
/// (at least 1), restoring the count before after.
pub fn with_chunk_threads<R>(threads: usize, f: impl FnOnce() -> R) -> R {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            CHUNK_THREADS.with(|t| t.set(self.0));
        }
    }
    let _restore = Restore(CHUNK_THREADS.with(|t| t.replace(threads.max(1))));
    f()
}

/// The threads a codec call on this thread may use (1 unless set by
/// [`with_chunk_threads`]).
#[must_use]
pub fn chunk_threads() -> usize {
    CHUNK_THREADS.with(Cell::get)
}

/// The threads each of `chunks` chunks coded at once on the current rayon
/// pool may use: the pool's threads shared out, at least 1, so that all of
/// them together never use more threads than the pool has.
#[must_use]
pub fn per_chunk_threads(chunks: usize) -> usize {
    (rayon::current_num_threads() / chunks.max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_is_scoped_and_restored() {
        assert_eq!(chunk_threads(), 1);
        let inner = with_chunk_threads(3, || {
            let nested = with_chunk_threads(0, chunk_threads);
            (chunk_threads(), nested)
        });
        assert_eq!(inner, (3, 1));
        assert_eq!(chunk_threads(), 1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        assert_eq!(
            pool.install(|| (
                per_chunk_threads(1),
                per_chunk_threads(3),
                per_chunk_threads(9)
            )),
            (4, 1, 1)
        );
    }
}
