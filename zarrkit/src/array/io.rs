//! Planned, parallel reads and writes of regions.
//!
//! Every read and write is planned first: the chunks a region touches and,
//! for each, the box of the chunk it covers. Chunks are then handled in
//! batches: each batch is fetched with one batched store read
//! ([`Store::get_partial_values`](crate::store::Store::get_partial_values)),
//! decoded or encoded in parallel with rayon, and copied; a read fetches
//! the next batch on a thread of its own while one decodes. The batch size
//! bounds the memory in flight: a read holds the caller's buffer plus
//! three batches of encoded chunks and one of decoded chunks.

use super::disjoint::DisjointOut;
pub(super) use super::plan::ChunkPiece;
use super::{Array, Element, Region};
use crate::codec::copy::{self, BoxCopy};
use crate::codec::vlen::VlenChunk;
use crate::codec::{
    BoxOut, BytesRangeReader, BytesSink, ChunkBox, ChunkData, ChunkRepr, CodecError, threads,
};
use crate::error::Error;
use crate::grid::GridWalk;
use crate::store::buffers::{BUFFERS, BufferPool};
use crate::store::{
    ByteRange, PendingValue, ReadRequest, Store, StoreError, StoreKey, ValueSnapshot, ValueVersion,
};
use rayon::prelude::*;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The decoded bytes a batch of large chunks aims to stay under.
const BATCH_BYTES: usize = 64 << 20;

/// How many batches a read of a local store aims for when it fetches
/// ahead ([`Array::read_batch_size`]) chunks stored uncompressed: their
/// fetch moves as many bytes as their decoding, and small batches overlap
/// the two.
const AHEAD_BATCHES: usize = 8;

/// How many batches a read of a local store aims for when it fetches
/// ahead compressed chunks: their fetch is small reads of many files,
/// which run many at once on the I/O threads, and each batch ends with a
/// wait for its slowest read and its last decode.
const AHEAD_BATCHES_COMPRESSED: usize = 2;

/// The stored size from which a whole read of compressed chunks that wait
/// on the disk decodes each as it arrives instead of in batches. Smaller
/// files are read quickly even cold, and streaming them cost more than it
/// gained: the hand-off of each value to the decoding threads outweighed
/// the wait for a batch of them (bench-compare child, 256³ whole reads of
/// 64³ zstd chunks, cold, medians: 6 KiB chunks, smooth field, 15.3 →
/// 17.0 ms streamed; 208 KiB chunks, 4 bits of noise, 72.0 → 67.6 ms).
const STREAM_COLD_BYTES: u64 = 64 << 10;

/// The threads of [`remote_pool`].
const REMOTE_THREADS: usize = 64;

/// The pool that runs partial reads, the storing of whole written chunks
/// (and the opening of a group's children) on a store with `concurrency`
/// above 1: [`REMOTE_THREADS`] threads,
/// made on first use, which mostly wait on the network. `None` for
/// `concurrency` 1 (or if the pool cannot be made): the work stays on the
/// global pool (a local store's partial reads of element runs go to the
/// store's I/O threads instead, [`crate::store::io_pool`]).
pub(crate) fn remote_pool(concurrency: usize) -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    if concurrency <= 1 {
        return None;
    }
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(REMOTE_THREADS)
            .thread_name(|i| format!("zarrkit-remote-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// The threads a read's partial reads of chunks run on
/// ([`Array::partial_read_threads`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PartialReadThreads {
    /// The caller's (or its rayon pool's): no partial reads, or reads
    /// whose work is decoding.
    Caller,
    /// [`remote_pool`]: a remote store's round trips.
    Remote,
    /// The filesystem store's I/O threads ([`crate::store::io_pool`]):
    /// reads of element runs from a local store.
    Io,
}

/// Runs `op` on rayon's global pool when called from outside every rayon
/// pool (the caller's own thread) on a local store (`concurrency` 1):
/// `None` when already on a pool or on a remote store, and the caller goes
/// on itself.
///
/// A read or write moves into the pool once, and each parallel step inside
/// it (reading files, decoding, copying into place) then splits among the
/// workers by work stealing. Called from outside, each step would hand its
/// work to the pool and sleep until it was done: on a read of a few
/// chunks (a 32³ region of 64³ chunks) those three hand-offs and wake-ups
/// cost more than the decoding. Remote stores keep the caller's thread: it
/// waits on a pipelined fetch that may itself need the pool's threads.
pub(super) fn on_pool<R: Send>(concurrency: usize, op: impl FnOnce() -> R + Send) -> Option<R> {
    if concurrency > 1 || rayon::current_thread_index().is_some() {
        return None;
    }
    Some(rayon::scope(|_| op()))
}

/// Writes each run of `copy`'s box in `shared` with `put(offset of the
/// run in the source, the run's slice of the output)`. The caller's box
/// must be its own: no other task writes any part of it meanwhile (the
/// plan's pieces are disjoint boxes of the region).
fn place_runs(
    copy: &BoxCopy<'_>,
    shared: &DisjointOut<'_, u8>,
    put: &(impl Fn(usize, &mut [u8]) + ?Sized),
) {
    copy.for_each_run(|s, d, len| {
        // SAFETY: the runs of one box are disjoint, and the box is the
        // caller's alone (above).
        #[allow(unsafe_code)]
        unsafe {
            shared.with_range(d, len, |dst| put(s, dst));
        }
    });
}

/// The number of lock stripes shared by every array in the process.
const STRIPES: usize = 256;

/// Write generations, one per stripe of (store, key) pairs: the guard of
/// read-modify-writes for stores without conditional writes.
///
/// A read-modify-write reads a chunk through one [`ValueSnapshot`], builds
/// the new chunk without holding any lock, and stores it only if the chunk
/// is still the version it read; otherwise it starts again from a fresh
/// read. A store with conditional writes checks the version itself
/// ([`Store::set_if_unchanged`]), which also holds against writers in other
/// processes and other store objects on the same data. For other stores
/// the check is that the stripe's generation has not moved (and the store
/// moves it), which holds within this process and for one store object.
/// Either way, two writers updating different parts of one chunk or shard
/// never lose each other's elements. No lock is held while
/// decoding or encoding: those run on rayon, and a rayon thread that
/// blocked on a lock it already held (after stealing a second task for the
/// same stripe) would deadlock.
static GENERATIONS: [Mutex<u64>; STRIPES] = [const { Mutex::new(0) }; STRIPES];

/// The stripe of `key` in `store`.
fn stripe(store: &Arc<dyn Store>, key: &StoreKey) -> &'static Mutex<u64> {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    Arc::as_ptr(store).cast::<()>().addr().hash(&mut hasher);
    key.as_str().hash(&mut hasher);
    &GENERATIONS[(hasher.finish() % STRIPES as u64) as usize]
}

/// Warns, once per store name in the process, that a read-modify-write of
/// `key` (a partial chunk or shard write) on a store without conditional
/// writes is guarded against writers in this process only: a writer in
/// another process or machine may overwrite it and lose its elements.
fn warn_unguarded(store: &'static str, key: &StoreKey) {
    static WARNED: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut warned = WARNED.lock().unwrap_or_else(PoisonError::into_inner);
    if warned.contains(&store) {
        return;
    }
    warned.push(store);
    log::warn!(
        "{store} has no conditional writes: the partial write of `{key}` (and of every chunk \
         written in part there) is safe against writers in this process only; writers in \
         other processes that write parts of one chunk or shard may lose each other's updates"
    );
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every guarded value here (a counter, an error slot) is set in one
    // step and never left half-updated.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A store's pending value as the sink of a streamed encode.
struct PendingSink<'a, 'p>(&'a mut (dyn PendingValue + 'p));

impl BytesSink for PendingSink<'_, '_> {
    fn append(&mut self, parts: &[&[u8]]) -> Result<(), CodecError> {
        self.0.append(parts).map_err(CodecError::Store)
    }
}

/// Whether a read through a snapshot failed because another writer
/// replaced the value meanwhile, on a store that cannot keep the old
/// version readable (object storage): the caller reads again from a new
/// snapshot, as it does after a write of its own process lands.
pub(super) fn changed_while_read(err: &CodecError) -> bool {
    matches!(err, CodecError::Store(StoreError::Changed { .. }))
}

/// Converts an error of a partial decode or encode of the chunk at `key`.
pub(super) fn partial_error(key: &StoreKey, source: CodecError, encoding: bool) -> Error {
    match source {
        CodecError::Store(source) => Error::Store(source),
        source @ (CodecError::Corrupt { .. }
        | CodecError::ChecksumMismatch { .. }
        | CodecError::WrongSize { .. }) => Error::Decode {
            key: key.clone(),
            source,
        },
        source if encoding => Error::Encode {
            key: key.clone(),
            source,
        },
        source => Error::Decode {
            key: key.clone(),
            source,
        },
    }
}

/// The codecs' view of one [`ValueSnapshot`]: every batch of ranges reads
/// the same version of the value.
pub(super) struct SnapshotReader<'a>(pub(super) &'a dyn ValueSnapshot);

impl BytesRangeReader for SnapshotReader<'_> {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, CodecError> {
        let ranges: Vec<Option<ByteRange>> = ranges.iter().copied().map(Some).collect();
        Ok(self.0.read(&ranges)?)
    }

    fn will_read(&self, range: ByteRange) {
        self.0.will_read(range);
    }
}

/// A whole chunk that decodes straight into `range` of the output, with its
/// stored bytes (`None` when missing).
type DirectChunk<'a> = (std::ops::Range<usize>, &'a ChunkPiece, Option<Vec<u8>>);

/// Where one element of a variable-length read comes from: the decoded
/// piece it is in and its index there.
#[derive(Clone, Copy, Default)]
pub(super) struct Source {
    piece: u32,
    element: u32,
}

/// Where the read engine puts decoded elements.
pub(super) enum ReadOut<'o> {
    /// Fixed-size element bytes: the caller's buffer, written in place.
    Fixed(&'o mut [u8]),
    /// Variable-length elements, which have no layout to copy boxes of
    /// bytes into: each region element's source, and the decoded pieces,
    /// gathered by [`ReadOut::into_vlen`].
    Vlen {
        sources: Vec<Source>,
        pieces: Vec<Option<ChunkData<'static>>>,
    },
}

impl ReadOut<'_> {
    /// A variable-length read of `n` elements.
    pub(super) fn vlen(n: usize) -> Self {
        ReadOut::Vlen {
            sources: vec![Source::default(); n],
            pieces: Vec::new(),
        }
    }

    /// Puts decoded chunks (`None` when not stored: the fill value) into
    /// the output: each the piece's box when `boxes` (a partial decode of
    /// variable-length elements), else its whole chunk.
    fn put(
        &mut self,
        array: &Array,
        region: &Region,
        decoded: Vec<(&ChunkPiece, Option<ChunkData<'static>>)>,
        boxes: bool,
    ) -> Result<(), Error> {
        let kind_error = |piece: &ChunkPiece, source| Error::Decode {
            key: piece.key.clone(),
            source,
        };
        match self {
            ReadOut::Fixed(out) => {
                let decoded = decoded
                    .into_iter()
                    .map(|(piece, data)| {
                        let data = data
                            .map(|d| d.into_fixed("array"))
                            .transpose()
                            .map_err(|source| kind_error(piece, source))?;
                        Ok((piece, data))
                    })
                    .collect::<Result<Vec<_>, Error>>()?;
                // Fixed-size pieces decoded in part went straight into
                // `out` (`read_partial_into`): these are whole chunks.
                array.scatter(region, &decoded, out, array.data_type().size());
                Ok(())
            }
            ReadOut::Vlen { sources, pieces } => {
                for (piece, data) in decoded {
                    if let Some(data) = &data {
                        data.as_vlen("array")
                            .map_err(|source| kind_error(piece, source))?;
                    }
                    let index = u32::try_from(pieces.len()).map_err(|_| Error::TooLarge {
                        path: array.path.clone(),
                        shape: region.shape().to_vec(),
                    })?;
                    let zeros = vec![0; piece.shape.len()];
                    let (src_shape, src_start) = if boxes {
                        (&piece.shape, &zeros)
                    } else {
                        (&array.piece_repr(piece).shape, &piece.in_chunk)
                    };
                    BoxCopy {
                        src_shape,
                        src_start,
                        dst_shape: region.shape(),
                        dst_start: &piece.in_region,
                        shape: &piece.shape,
                        elem: 1,
                    }
                    .for_each_run(|s, d, len| {
                        for j in 0..len {
                            // The reader checked that chunk indices fit in u32.
                            sources[d + j] = Source {
                                piece: index,
                                element: (s + j) as u32,
                            };
                        }
                    });
                    pieces.push(data);
                }
                Ok(())
            }
        }
    }

    /// The elements of a variable-length read, in C order; elements of
    /// chunks not stored are `fill`.
    pub(super) fn into_vlen(self, fill: &[u8]) -> VlenChunk {
        let ReadOut::Vlen { sources, pieces } = self else {
            return VlenChunk::default();
        };
        let mut out = VlenChunk::with_capacity(sources.len());
        for source in sources {
            let value = match pieces.get(source.piece as usize) {
                Some(Some(ChunkData::Vlen(chunk))) => chunk.get(source.element as usize),
                _ => None,
            };
            out.push(value.unwrap_or(fill));
        }
        out
    }
}

impl Array {
    /// The number of chunks handled per batch: enough to keep every thread
    /// busy and to pay the threads' wake-ups and joins once per 16 chunks
    /// a thread (with 8 chunks a batch, they took a fifth of a strided
    /// read of small chunks), few enough that memory in flight stays
    /// bounded: for large chunks (whole shards), about [`BATCH_BYTES`] of
    /// decoded data (but always one chunk per thread).
    ///
    /// A remote store ([`Store::concurrency`] above 1) gets batches of at
    /// least as many chunks as it keeps requests in flight, within a third
    /// of [`Array::in_flight_bytes`]: a batch being decoded, one fetched
    /// and waiting, and one being fetched (see [`Self::read_planned`]).
    pub(super) fn batch_size(&self) -> usize {
        let threads = rayon::current_num_threads();
        let in_flight = self.store.concurrency();
        let by_count = (threads * 16).max(32).max(in_flight);
        let budget = if in_flight > 1 {
            self.in_flight_bytes / 3
        } else {
            BATCH_BYTES
        };
        // Variable-length chunks have no fixed size: the count alone bounds them.
        let chunk = self.chunk_repr.size_bytes().unwrap_or(0).max(1);
        by_count.min((budget / chunk).max(threads).max(1))
    }

    /// The representation of the chunk `piece` lies in.
    pub(super) fn piece_repr<'a>(&'a self, piece: &'a ChunkPiece) -> &'a ChunkRepr {
        piece.repr.as_ref().unwrap_or(&self.chunk_repr)
    }

    /// The current write generation of `key`'s stripe.
    pub(super) fn generation(&self, key: &StoreKey) -> u64 {
        *lock(stripe(&self.store, key))
    }

    /// Stores `value` under `key` (erases it for `None`), unless `seen` is
    /// given and the stripe's generation has moved since: returns whether
    /// it was stored.
    pub(super) fn commit(
        &self,
        key: &StoreKey,
        value: Option<&[u8]>,
        seen: Option<u64>,
    ) -> Result<bool, Error> {
        self.commit_with(key, seen, || match value {
            Some(value) => self.store.set(key, value),
            None => self.store.erase(key),
        })
    }

    /// [`Self::commit`], storing by `store` (a `set`, an `erase`, or a
    /// value written in parts put in place) under the lock of `key`'s
    /// stripe, which counts one more write of `key` once it succeeds.
    fn commit_with(
        &self,
        key: &StoreKey,
        seen: Option<u64>,
        store: impl FnOnce() -> Result<(), StoreError>,
    ) -> Result<bool, Error> {
        let mut generation = lock(stripe(&self.store, key));
        if seen.is_some_and(|seen| seen != *generation) {
            return Ok(false);
        }
        store()?;
        *generation = generation.wrapping_add(1);
        Ok(true)
    }

    /// Stores the result of a read-modify-write of `key` (erases it for
    /// `None`) unless the chunk changed since it was read: `version` is
    /// what the read's snapshot pinned, `seen` the stripe's generation
    /// before it. Returns whether it was stored.
    pub(super) fn commit_if_unchanged(
        &self,
        key: &StoreKey,
        value: Option<&[u8]>,
        seen: u64,
        version: Option<&ValueVersion>,
    ) -> Result<bool, Error> {
        let conditional = self.store.capabilities().conditional_write;
        match version {
            Some(version) if conditional => Ok(self.store.set_if_unchanged(key, value, version)?),
            _ => {
                if !conditional {
                    warn_unguarded(self.store.name(), key);
                }
                self.commit(key, value, Some(seen))
            }
        }
    }

    /// Decodes the part of a chunk that `piece` covers through the codec
    /// chain's partial decoder, reading only the bytes it needs, all from
    /// one snapshot of the chunk, so the index and the inner chunks come
    /// from the same shard. A store that cannot pin a version gets a retry
    /// instead when a write in this process lands meanwhile.
    fn decode_piece_partial(
        &self,
        piece: &ChunkPiece,
    ) -> Result<Option<ChunkData<'static>>, Error> {
        let b = ChunkBox::new(piece.in_chunk.clone(), piece.shape.clone());
        loop {
            let seen = self.generation(&piece.key);
            let snapshot = self.store.snapshot(&piece.key)?;
            let result = self.codecs.decode_partial(
                &SnapshotReader(&*snapshot),
                self.piece_repr(piece),
                std::slice::from_ref(&b),
            );
            if snapshot.version().is_none() && self.generation(&piece.key) != seen {
                continue;
            }
            if matches!(&result, Err(err) if changed_while_read(err)) {
                continue;
            }
            return result
                .map(|boxes| boxes.and_then(|b| b.into_iter().next()))
                .map_err(|source| partial_error(&piece.key, source, false));
        }
    }

    /// As [`Self::decode_piece_partial`], straight into `out` (a C-order
    /// buffer of `out_shape` elements) at `out_start`: each element is
    /// copied once ([`CodecChain::decode_partial_into`]). A chunk not
    /// stored fills the piece's box with the fill value.
    fn decode_piece_partial_into(
        &self,
        piece: &ChunkPiece,
        out: &mut [u8],
        out_shape: &[u64],
        out_start: &[u64],
    ) -> Result<(), Error> {
        let b = ChunkBox::new(piece.in_chunk.clone(), piece.shape.clone());
        let stored = loop {
            let seen = self.generation(&piece.key);
            let snapshot = self.store.snapshot(&piece.key)?;
            let result = self.codecs.decode_partial_into(
                &SnapshotReader(&*snapshot),
                self.piece_repr(piece),
                &b,
                BoxOut {
                    buf: out,
                    shape: out_shape,
                    start: out_start,
                },
            );
            if snapshot.version().is_none() && self.generation(&piece.key) != seen {
                continue;
            }
            if matches!(&result, Err(err) if changed_while_read(err)) {
                continue;
            }
            break result.map_err(|source| partial_error(&piece.key, source, false))?;
        };
        if !stored {
            self.fill_box(&piece.shape, out, out_shape, out_start);
        }
        Ok(())
    }

    /// Reads the fixed-size pieces of a plan that the chain decodes in part
    /// straight into `out`, the region's buffer. Pieces of one row of the
    /// chunk grid (consecutive in a plan, and sharing their first
    /// coordinate in the region) fill one slab of the region's first
    /// dimension, disjoint from the others': slabs are read in parallel,
    /// the pieces of a slab in turn (each decoding its inner chunks in
    /// parallel). A single slab goes through the pool too: the codec's
    /// parallel decodes then start on a worker, not from this thread.
    fn read_partial_into(
        &self,
        region: &Region,
        partial: &[ChunkPiece],
        out: &mut [u8],
    ) -> Result<(), Error> {
        if partial.is_empty() {
            return Ok(());
        }
        if !self.codecs.capabilities().nests_chunks {
            // A chain that reads element runs (`bytes` alone) decodes each
            // piece's box in one step: decode pieces in parallel, then copy
            // each box once. Splitting `out` into slabs of the first
            // dimension would run the pieces of one slab one after another
            // (a region straddling chunks only in later dimensions is one
            // slab), measured about 1.2× slower on `read_straddling_region`.
            return self.read_partial_boxes(region, partial, out);
        }
        if self.ndim() == 0 {
            for piece in partial {
                self.decode_piece_partial_into(piece, out, &[], &[])?;
            }
            return Ok(());
        }
        // The region is non-empty: each index of its first dimension is a
        // plane of `row_bytes`.
        let row_bytes = out.len() / region.shape()[0] as usize;
        let mut slabs: Vec<(&mut [u8], &[ChunkPiece])> = Vec::new();
        let mut rest = out;
        let mut consumed = 0u64;
        let mut first = 0;
        while first < partial.len() {
            let row = partial[first].in_region[0];
            let rows = partial[first].shape[0];
            let last = first
                + partial[first..]
                    .iter()
                    .take_while(|p| p.in_region[0] == row)
                    .count();
            let tail = std::mem::take(&mut rest);
            let (_, tail) = tail.split_at_mut((row - consumed) as usize * row_bytes);
            let (slab, tail) = tail.split_at_mut(rows as usize * row_bytes);
            slabs.push((slab, &partial[first..last]));
            rest = tail;
            consumed = row + rows;
            first = last;
        }
        let read_slab = |(slab, pieces): (&mut [u8], &[ChunkPiece])| {
            let mut slab_shape = region.shape().to_vec();
            slab_shape[0] = pieces[0].shape[0];
            let mut start = vec![0; self.ndim()];
            for piece in pieces {
                start[1..].copy_from_slice(&piece.in_region[1..]);
                self.decode_piece_partial_into(piece, slab, &slab_shape, &start)?;
            }
            Ok(())
        };
        slabs.into_par_iter().try_for_each(read_slab)
    }

    /// Reads `partial` pieces of fixed-size elements for a chain that does
    /// not nest chunks: each piece's box decoded in parallel (a batch at a
    /// time), then copied once into `out` (the region's buffer).
    fn read_partial_boxes(
        &self,
        region: &Region,
        partial: &[ChunkPiece],
        out: &mut [u8],
    ) -> Result<(), Error> {
        let elem = self.data_type().size();
        for batch in partial.chunks(self.batch_size()) {
            let decoded = batch
                .par_iter()
                .map(|piece| Ok((piece, self.decode_piece_partial(piece)?)))
                .collect::<Result<Vec<_>, Error>>()?;
            for (piece, part) in decoded {
                let zeros = vec![0; piece.shape.len()];
                let copy = BoxCopy {
                    src_shape: &piece.shape,
                    src_start: &zeros,
                    dst_shape: region.shape(),
                    dst_start: &piece.in_region,
                    shape: &piece.shape,
                    elem,
                };
                match part {
                    Some(part) => copy.run(
                        part.as_fixed("array")
                            .map_err(|source| partial_error(&piece.key, source, false))?,
                        out,
                    ),
                    None => {
                        copy.for_each_run(|_, d, len| self.fill_value().fill(&mut out[d..d + len]));
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks a region against the array and returns its size in bytes.
    /// Variable-length arrays have no element bytes: they go through the
    /// string API ([`Array::read_strings`] and friends).
    fn check_region(&self, region: &Region) -> Result<usize, Error> {
        if self.data_type().is_variable_length() {
            return Err(Error::DataTypeMismatch {
                path: self.path.clone(),
                data_type: self.data_type().clone(),
                requested: "fixed-size element bytes (use read_strings/read_byte_strings)",
            });
        }
        self.check_region_bounds(region)?;
        let bytes = region
            .num_elements()
            .and_then(|n| n.checked_mul(self.data_type().size() as u64))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| Error::TooLarge {
                path: self.path.clone(),
                shape: region.shape().to_vec(),
            })?;
        self.check_budget(bytes as u64, || {
            format!("reading a region of shape {:?}", region.shape())
        })?;
        Ok(bytes)
    }

    /// Checks that `needed` bytes fit the memory budget.
    pub(super) fn check_budget(
        &self,
        needed: u64,
        what: impl FnOnce() -> String,
    ) -> Result<(), Error> {
        if needed > self.memory_budget {
            return Err(Error::MemoryBudget {
                path: self.path.clone(),
                what: what(),
                needed,
                budget: self.memory_budget,
            });
        }
        Ok(())
    }

    /// A zeroed buffer of `n` bytes (already checked against the budget),
    /// or [`Error::OutOfMemory`] when the allocator cannot provide it.
    pub(super) fn zeroed_buffer(&self, n: usize, what: &str) -> Result<Vec<u8>, Error> {
        // A zeroed allocation (calloc: fresh pages are zero already), not
        // a reservation filled with zeros, which writes every byte; huge
        // pages from 4 MiB up, as `read_region`'s vectors.
        crate::store::pages::try_result_bytes(n).ok_or_else(|| Error::OutOfMemory {
            path: self.path.clone(),
            what: what.to_string(),
            bytes: n as u64,
        })
    }

    /// Checks a region's dimensions and bounds against the array.
    pub(super) fn check_region_bounds(&self, region: &Region) -> Result<(), Error> {
        if region.ndim() != self.ndim() {
            return Err(Error::DimensionMismatch {
                path: self.path.clone(),
                region_ndim: region.ndim(),
                array_ndim: self.ndim(),
            });
        }
        if !region.is_within(self.shape()) {
            return Err(Error::OutOfBounds {
                path: self.path.clone(),
                region: region.to_string(),
                shape: self.shape().to_vec(),
            });
        }
        Ok(())
    }

    /// Decodes a fetched chunk, or `None` when it is not stored.
    pub(super) fn decode_chunk(
        &self,
        key: &StoreKey,
        repr: &ChunkRepr,
        encoded: Option<Vec<u8>>,
    ) -> Result<Option<ChunkData<'static>>, Error> {
        encoded
            .map(|bytes| self.decode_stored(key, repr, bytes))
            .transpose()
    }

    /// Decodes the stored bytes of the chunk at `key`, after checking its
    /// declared size against the memory budget.
    pub(super) fn decode_stored(
        &self,
        key: &StoreKey,
        repr: &ChunkRepr,
        bytes: Vec<u8>,
    ) -> Result<ChunkData<'static>, Error> {
        // The decoded chunk has its declared size, whatever is stored;
        // each variable-length element holds at least its offsets.
        let needed = if repr.data_type.is_variable_length() {
            let per_element = std::mem::size_of::<Vec<u8>>() as u64;
            Some(
                repr.num_elements()
                    .unwrap_or(u64::MAX)
                    .saturating_mul(per_element),
            )
        } else {
            repr.size_bytes().ok().map(|n| n as u64)
        };
        if let Some(needed) = needed {
            self.check_budget(needed, || {
                format!("decoding chunk `{key}` of shape {:?}", repr.shape)
            })?;
        }
        self.codecs
            .decode(bytes, repr)
            .map_err(|source| Error::Decode {
                key: key.clone(),
                source,
            })
    }

    /// Decodes a fetched chunk of fixed-size elements to its bytes.
    fn decode_fixed_chunk(
        &self,
        key: &StoreKey,
        repr: &ChunkRepr,
        encoded: Option<Vec<u8>>,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.decode_chunk(key, repr, encoded)?
            .map(|chunk| {
                chunk.into_fixed("array").map_err(|source| Error::Decode {
                    key: key.clone(),
                    source,
                })
            })
            .transpose()
    }

    /// Reads `region` into `out` as native-endian element bytes in C order.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`], [`Error::OutOfBounds`],
    /// [`Error::BufferLength`], or a store or decode error naming the chunk.
    pub fn read_region_bytes_into(&self, region: &Region, out: &mut [u8]) -> Result<(), Error> {
        let expected = self.check_region(region)?;
        if out.len() != expected {
            return Err(Error::BufferLength {
                path: self.path.clone(),
                expected: expected as u64,
                actual: out.len() as u64,
            });
        }
        if region.is_empty() {
            return Ok(());
        }
        self.read_planned(region, &mut ReadOut::Fixed(out))
    }

    /// The read engine, for every data type: plans `region`, reads chunks
    /// the region covers in part through the chain's partial decoder when
    /// it has one, and fetches the rest in batches (one batched store read
    /// each), decoded in parallel and put into `out`. Fixed-size chunks
    /// that fill a contiguous range of the caller's buffer decode straight
    /// into it. `region` is non-empty and checked.
    pub(super) fn read_planned(&self, region: &Region, out: &mut ReadOut<'_>) -> Result<(), Error> {
        let pieces = self.plan(region)?;
        let remote = self.store.concurrency() > 1;
        // Whole shards of fixed-size elements on a local store are read
        // through the partial decoder too: it reads the index, then each
        // slab of inner chunks while the slabs read before decode
        // (`decode_shard_streamed`), not the whole file before any decode.
        let shards_in_slabs = self.codecs.places_inner_chunks()
            && !remote
            && self.ndim() > 0
            && matches!(out, ReadOut::Fixed(_));
        // Chunks the region covers in part are read through the chain's
        // partial decoder when it has one (a shard's index and the inner
        // chunks needed, or the element runs of an uncompressed chunk).
        let (partial, pieces): (Vec<ChunkPiece>, Vec<ChunkPiece>) =
            if self.codecs.capabilities().partial_decode
                || self.codecs.capabilities().decodes_ranges
            {
                // So are chunks that reach past the array's edge: decoding
                // one whole would allocate its declared shape, which an
                // edited document can make 10^11 elements for an array of 10.
                pieces.into_iter().partition(|p| {
                    shards_in_slabs || !p.covers_chunk || p.shape != self.piece_repr(p).shape
                })
            } else {
                (Vec::new(), pieces)
            };
        // Called from the caller's own thread (outside every rayon pool).
        let outside = rayon::current_thread_index().is_none();
        // Partial reads of element runs (`bytes` alone) on a local store
        // wait on the disk and run many at once on their own threads (below).
        let runs = self.codecs.decodes_stored_bytes() && outside && !partial.is_empty();
        let batch_size = self.read_batch_size(pieces.len(), outside && !remote);
        // A local read that fetches no batch ahead and has no partial reads
        // of its own threads moves into rayon's pool once (see `on_pool`):
        // its parallel steps then split among the workers without a
        // hand-off each. A read that fetches ahead keeps the caller's
        // thread, which waits on the fetches.
        //
        // Except a read of part of one chunk (one inner chunk of a shard):
        // it has no chunks to share out, and whatever little parallel work
        // its partial decoder finds is not worth waking a worker and
        // sleeping until it is done: reading the 512 inner chunks of a
        // 256³ shard one by one took 22,848 context switches and 316 ms
        // of CPU with the hand-off, 142 and 252 ms without.
        let one_part = pieces.is_empty() && partial.len() == 1;
        if !runs
            && !one_part
            && pieces.len() <= batch_size
            && let Some(result) = on_pool(self.store.concurrency(), || {
                self.read_pieces(region, &partial, &pieces, out, false, batch_size)
            })
        {
            return result;
        }
        self.read_pieces(region, &partial, &pieces, out, outside, batch_size)
    }

    /// [`Self::read_planned`] after planning: reads `partial` through the
    /// chain's partial decoder and fetches and decodes the whole `pieces`
    /// in batches of `batch_size`, fetched ahead of decoding on a remote
    /// store and, when called from `outside` every rayon pool, on a local
    /// one.
    fn read_pieces(
        &self,
        region: &Region,
        partial: &[ChunkPiece],
        pieces: &[ChunkPiece],
        out: &mut ReadOut<'_>,
        outside: bool,
        batch_size: usize,
    ) -> Result<(), Error> {
        let read_partial = |out: &mut ReadOut<'_>| match out {
            ReadOut::Fixed(buf) => self.read_partial_into(region, partial, buf),
            ReadOut::Vlen { .. } => {
                for batch in partial.chunks(self.batch_size()) {
                    let decoded = batch
                        .par_iter()
                        .map(|piece| Ok((piece, self.decode_piece_partial(piece)?)))
                        .collect::<Result<Vec<_>, Error>>()?;
                    out.put(self, region, decoded, true)?;
                }
                Ok(())
            }
        };
        // A partial read of a chunk reads through its own snapshot, from a
        // rayon task: on a remote store each task mostly waits on a round
        // trip, so there run as many tasks as the store keeps requests in
        // flight, not one per core. The partial reads of a chain that
        // reads element runs (`bytes` alone: reading is all their work;
        // not blosc's block decoding, which is CPU work) on a local store,
        // from outside a rayon task, run on the store's I/O threads: a
        // cold file waits on the disk, which serves several reads at once.
        // Not on the 64 threads of the remote pool: on two cores their
        // idle spinning cost more than the reads gained (bench-compare
        // child, 64 32³ regions of 64³ raw chunks, 10 interleaved runs,
        // medians: warm 9.3 ms on 64 threads, 7.4 ms on 16; cold 31.8 and
        // 29.8 ms). Only a read with partial reads starts a pool: a whole
        // read of an uncompressed array started the 64 threads for
        // nothing, 20 ms of CPU as they went to sleep.
        let pool = match self.partial_read_threads(partial.len(), outside) {
            PartialReadThreads::Remote => remote_pool(self.store.concurrency()),
            PartialReadThreads::Io => crate::store::io_pool(),
            PartialReadThreads::Caller => None,
        };
        match pool {
            Some(pool) => pool.install(|| read_partial(out))?,
            None => read_partial(out)?,
        }
        // Fetch the next batch while this one decodes whenever the fetch
        // runs on threads other than the decoding ones: a remote store's
        // requests, and a local store read from outside the caller's rayon
        // pool (the filesystem store reads on I/O threads of its own, so
        // cold files load while the CPUs decode). From inside a rayon task
        // a local store's batches go one after another: this thread would
        // block on the channel, and a store that reads on the rayon pool
        // (a zip archive) could then wait for threads that all wait too.
        let ahead = self.store.concurrency() > 1 || outside;
        let batches: Vec<&[ChunkPiece]> = pieces.chunks(batch_size.max(1)).collect();
        let pool = &BUFFERS;
        let fetch = |batch: &[ChunkPiece]| {
            let requests: Vec<ReadRequest> = batch.iter().map(|p| (p.key.clone(), None)).collect();
            self.store.get_partial_values(&requests)
        };
        if !ahead || batches.len() < 2 {
            for batch in batches {
                let fetched = fetch(batch)?;
                self.put_batch(region, batch, fetched, out, pool)?;
            }
            return Ok(());
        }
        // Uncompressed chunks are large and cost little to decode: a read
        // of them waits on the disk, so each is placed as soon as it is read
        // (`read_streamed`). Compressed ones the page cache holds stay in
        // batches: streamed, the hand-off of each value cost more than the
        // batches' waits (bench-compare child, 256³ whole reads of 64³
        // chunks, 4 bits of noise, medians, batches → streamed, warm: zstd
        // 52.5 → 55.0 ms, v2 blosc 17.3 → 18.8, v2 zlib 47.5 → 54.3).
        // Compressed ones of `STREAM_COLD_BYTES` or more that wait on the
        // disk are streamed too: decoding starts with the first file read,
        // not once the first batch of 32 is in (cold, batches →
        // streamed, medians of 12–16 interleaved runs: zstd 72.0 → 67.6
        // ms, v2 blosc 40.2 → 37.3, v2 zlib 71.9 → 68.0).
        if let ReadOut::Fixed(buf) = out
            && outside
            && (self.codecs.decodes_stored_bytes() || self.chunks_wait(pieces))
        {
            return self.read_streamed(region, pieces, buf, batch_size);
        }
        // One fetched batch waits in the channel at most, which bounds the
        // memory in flight to three batches (see `batch_size`).
        let fetch = &fetch;
        std::thread::scope(|scope| {
            let (sender, receiver) = std::sync::mpsc::sync_channel(1);
            scope.spawn(move || {
                for batch in batches {
                    let fetched = fetch(batch);
                    let failed = fetched.is_err();
                    // A closed channel: the reader stopped at an error.
                    if sender.send((batch, fetched)).is_err() || failed {
                        break;
                    }
                }
            });
            for (batch, fetched) in receiver {
                self.put_batch(region, batch, fetched?, out, pool)?;
            }
            Ok(())
        })
    }

    /// Whether reading `pieces` would wait on the device for files of
    /// [`STREAM_COLD_BYTES`] or more: the store says so of the first or
    /// the last (a cold read of a whole array waits for them all; a warm
    /// one for none).
    fn chunks_wait(&self, pieces: &[ChunkPiece]) -> bool {
        self.store.concurrency() == 1
            && [pieces.first(), pieces.last()]
                .into_iter()
                .flatten()
                .any(|piece| {
                    self.store
                        .cold_size(&piece.key)
                        .is_some_and(|size| size >= STREAM_COLD_BYTES)
                })
    }

    /// Fetches whole `pieces` and decodes each into `out` (a C-order buffer
    /// of `region`'s shape) as soon as it is read, on the caller's rayon
    /// pool: no batch waits for its slowest file or its last decode before
    /// the next starts. Called from outside every rayon pool: this thread
    /// hands the values read over to the pool, at most `batch_size` of
    /// them queued or decoding at a time, and waits for the decodes; the
    /// store reads on threads of its own ([`Store::get_values_each`]), each
    /// holding the value it read until this thread takes it. That bounds
    /// the memory in flight. The pool's threads never wait on a read, so
    /// readers on several threads at once cannot hold each other up.
    ///
    /// Against batches of 8 (bench-compare child, a 256³ `uint16` whole
    /// read of 64³ uncompressed chunks, 12 interleaved runs, medians):
    /// cold 47.8 → 34.0 ms, warm 15.3 → 14.9 ms.
    fn read_streamed(
        &self,
        region: &Region,
        pieces: &[ChunkPiece],
        out: &mut [u8],
        batch_size: usize,
    ) -> Result<(), Error> {
        let elem = self.data_type().size();
        let threads = self.codecs.threads_per_chunk(pieces.len());
        let requests: Vec<ReadRequest> = pieces.iter().map(|p| (p.key.clone(), None)).collect();
        let shared = DisjointOut::new(out);
        let stop = AtomicBool::new(false);
        let first_error: Mutex<Option<Error>> = Mutex::new(None);
        let fail = |err: Error| {
            stop.store(true, Ordering::Relaxed);
            lock(&first_error).get_or_insert(err);
        };
        let limit = batch_size.max(1);
        // A value read waits in its I/O thread until this thread takes it.
        let (sender, receiver) = std::sync::mpsc::sync_channel(0);
        let mut answered = vec![false; pieces.len()];
        // Decodes waiting or running, and the signal that one ended.
        let running = (Mutex::new(0usize), std::sync::Condvar::new());
        /// Counts a decode as ended when dropped, even by a panic, which
        /// would otherwise leave this thread waiting for a free place.
        struct Ended<'a>(&'a (Mutex<usize>, std::sync::Condvar));
        impl Drop for Ended<'_> {
            fn drop(&mut self) {
                *lock(&self.0.0) -= 1;
                self.0.1.notify_one();
            }
        }
        let decode = |i: usize, value: Result<Option<Vec<u8>>, StoreError>| {
            let _ended = Ended(&running);
            if !stop.load(Ordering::Relaxed) {
                let piece = &pieces[i];
                let decoded = value.map_err(Error::from).and_then(|bytes| {
                    self.decode_shared(region, piece, bytes, &shared, elem, threads)
                });
                if let Err(err) = decoded {
                    fail(err);
                }
            } else if let Ok(Some(bytes)) = value {
                BUFFERS.give(std::iter::once(bytes));
            }
        };
        std::thread::scope(|scope| {
            let (stop, requests) = (&stop, &requests);
            scope.spawn(move || {
                self.store.get_values_each(requests, limit, &|i, value| {
                    !stop.load(Ordering::Relaxed) && sender.send((i, value)).is_ok()
                });
            });
            rayon::in_place_scope(|tasks| {
                let decode = &decode;
                for (i, value) in receiver {
                    // Each request once: a store that answered one twice,
                    // or a request it was not asked, is not believed.
                    if answered.get(i).is_none_or(|&a| a) {
                        if let Ok(Some(bytes)) = value {
                            BUFFERS.give(std::iter::once(bytes));
                        }
                        continue;
                    }
                    answered[i] = true;
                    let mut n = lock(&running.0);
                    while *n >= limit {
                        n = running.1.wait(n).unwrap_or_else(PoisonError::into_inner);
                    }
                    *n += 1;
                    drop(n);
                    tasks.spawn(move |_| decode(i, value));
                }
            });
        });
        if let Some(err) = first_error
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
        {
            return Err(err);
        }
        // A request the store never answered would leave its box zeroed:
        // an error naming its key, not values that were never read.
        match answered.iter().position(|a| !a) {
            Some(i) => Err(StoreError::Read {
                store: self.store.name(),
                key: pieces[i].key.clone(),
                source: std::io::Error::other("the store handed over no answer for it"),
            }
            .into()),
            None => Ok(()),
        }
    }

    /// Decodes one whole chunk of a streamed read (or places the fill
    /// value for a missing one) into `shared`: straight into its range
    /// when its elements are contiguous there, else through a buffer.
    fn decode_shared(
        &self,
        region: &Region,
        piece: &ChunkPiece,
        bytes: Option<Vec<u8>>,
        shared: &DisjointOut<'_, u8>,
        elem: usize,
        threads: usize,
    ) -> Result<(), Error> {
        let Some(range) = self.contiguous_range(region, piece, elem) else {
            return self.decode_staged_piece(region, piece, bytes, shared, elem, &BUFFERS, threads);
        };
        // SAFETY: the plan's pieces are disjoint boxes of the region, and
        // this range is this piece's alone.
        #[allow(unsafe_code)]
        unsafe {
            shared.with_range(range.start, range.len(), |slice| {
                self.decode_whole_into(piece, bytes, slice, threads)
            })
        }
    }

    /// Decodes a whole chunk straight into `slice`, the contiguous range of
    /// the output it fills, on `threads` threads (or fills it with the fill
    /// value when the chunk is missing).
    fn decode_whole_into(
        &self,
        piece: &ChunkPiece,
        bytes: Option<Vec<u8>>,
        slice: &mut [u8],
        threads: usize,
    ) -> Result<(), Error> {
        match bytes {
            Some(bytes) => threads::with_chunk_threads(threads, || {
                self.codecs
                    .decode_into_spent(bytes, self.piece_repr(piece), slice)
            })
            .map(|spent| BUFFERS.give(spent))
            .map_err(|source| Error::Decode {
                key: piece.key.clone(),
                source,
            }),
            None => {
                self.fill_value().fill(slice);
                Ok(())
            }
        }
    }

    /// The number of whole chunks a read of `n` fetches and decodes per
    /// batch: [`Self::batch_size`], or, when a local store's batches are
    /// fetched ahead (`local_ahead`), small enough that there are about
    /// [`AHEAD_BATCHES`] of them for uncompressed chunks (a 256³ read of
    /// 64³ chunks: 8 batches of 8, the first fetch of 4 MiB waiting alone)
    /// and [`AHEAD_BATCHES_COMPRESSED`] for the rest (2 of 32), but never
    /// under four chunks a thread, so that a read of a few chunks stays
    /// one batch and starts no fetching thread.
    ///
    /// Compressed chunks in batches of 32, not 8 (bench-compare child,
    /// whole 256³ reads of 64³ chunks, 10 interleaved runs, medians):
    /// zstd 17.6 → 13.7 ms cold and 11.4 → 10.7 ms warm, v2 zlib 19.3 →
    /// 16.3 and 13.6 → 10.3 ms, v2 blosc 20.9 → 16.6 and 13.4 → 11.7 ms,
    /// the same peak memory. Uncompressed chunks stay in batches of 8:
    /// warm, 16.0 ms against 18.6 in batches of 32, and 18 MiB less
    /// memory at its peak.
    fn read_batch_size(&self, n: usize, local_ahead: bool) -> usize {
        let size = self.batch_size();
        if !local_ahead {
            return size;
        }
        let batches = if self.codecs.decodes_stored_bytes() {
            AHEAD_BATCHES
        } else {
            AHEAD_BATCHES_COMPRESSED
        };
        let threads = rayon::current_num_threads();
        size.min(n.div_ceil(batches).max(threads * 4))
    }

    /// Where a read's `partial` reads of chunks run (see `read_pieces`).
    fn partial_read_threads(&self, partial: usize, outside: bool) -> PartialReadThreads {
        if partial == 0 {
            PartialReadThreads::Caller
        } else if self.store.concurrency() > 1 {
            PartialReadThreads::Remote
        } else if self.codecs.decodes_stored_bytes() && outside {
            PartialReadThreads::Io
        } else {
            PartialReadThreads::Caller
        }
    }

    /// Decodes whole fixed-size chunks that do not fill a contiguous range
    /// of `out`, in parallel, each into a buffer taken from `pool` (and
    /// given back after) and at once copied into its box of `out`, while
    /// the decoded chunk is still in the core's cache. Decoding a batch
    /// first and copying after made the copy read every chunk back from
    /// memory (32 chunks of 512 KiB, more than the cache holds), as zarrs,
    /// which places each chunk as it decodes, did not.
    fn decode_staged(
        &self,
        region: &Region,
        staged: Vec<(&ChunkPiece, Option<Vec<u8>>)>,
        out: &mut [u8],
        elem: usize,
        pool: &BufferPool,
    ) -> Result<(), Error> {
        if staged.is_empty() {
            return Ok(());
        }
        let threads = self.codecs.threads_per_chunk(staged.len());
        let shared = DisjointOut::new(out);
        staged.into_par_iter().try_for_each(|(piece, bytes)| {
            self.decode_staged_piece(region, piece, bytes, &shared, elem, pool, threads)
        })
    }

    /// Decodes one whole chunk of [`Self::decode_staged`] (or places the
    /// fill value for a missing one) into its box of `shared`, a C-order
    /// buffer of `region`'s shape, decoding on `threads` threads.
    #[allow(clippy::too_many_arguments)]
    fn decode_staged_piece(
        &self,
        region: &Region,
        piece: &ChunkPiece,
        bytes: Option<Vec<u8>>,
        shared: &DisjointOut<'_, u8>,
        elem: usize,
        pool: &BufferPool,
        threads: usize,
    ) -> Result<(), Error> {
        let fill = self.fill_value();
        let repr = self.piece_repr(piece);
        let copy = BoxCopy {
            src_shape: &repr.shape,
            src_start: &piece.in_chunk,
            dst_shape: region.shape(),
            dst_start: &piece.in_region,
            shape: &piece.shape,
            elem,
        };
        // The plan's pieces are disjoint boxes of the region: each
        // task places its own box (`place_runs`).
        let Some(bytes) = bytes else {
            place_runs(&copy, shared, &|_, dst: &mut [u8]| fill.fill(dst));
            return Ok(());
        };
        let decode_error = |source| Error::Decode {
            key: piece.key.clone(),
            source,
        };
        if self.codecs.decodes_stored_bytes() {
            // Uncompressed: the stored value is the chunk (byte-swapped
            // in place at most), copied from where it was read.
            let decoded = self.codecs.decode(bytes, repr).map_err(decode_error)?;
            let data = decoded.into_fixed("array").map_err(decode_error)?;
            place_runs(&copy, shared, &|s, dst: &mut [u8]| {
                dst.copy_from_slice(&data[s..s + dst.len()]);
            });
            // The store's buffer, for the next value read (`BUFFERS`).
            pool.give(std::iter::once(data));
            return Ok(());
        }
        let size = repr.size_bytes().map_err(decode_error)?;
        self.check_budget(size as u64, || {
            format!("decoding chunk `{}` of shape {:?}", piece.key, repr.shape)
        })?;
        let mut data = pool.buffer(size).ok_or_else(|| Error::TooLarge {
            path: self.path.clone(),
            shape: repr.shape.clone(),
        })?;
        let decoded = threads::with_chunk_threads(threads, || {
            self.codecs.decode_into_spent(bytes, repr, &mut data)
        })
        .map_err(decode_error);
        if decoded.is_ok() {
            place_runs(&copy, shared, &|s, dst: &mut [u8]| {
                dst.copy_from_slice(&data[s..s + dst.len()]);
            });
        }
        // The decode buffer, and the store's buffer of the stored value.
        pool.give(std::iter::once(data));
        pool.give(decoded?);
        Ok(())
    }

    /// Fills the box of `shape` at `out_start` in `out` (a C-order buffer
    /// of `out_shape` elements) with the fill value: a chunk not stored.
    fn fill_box(&self, shape: &[u64], out: &mut [u8], out_shape: &[u64], out_start: &[u64]) {
        let zeros = vec![0; shape.len()];
        BoxCopy {
            src_shape: shape,
            src_start: &zeros,
            dst_shape: out_shape,
            dst_start: out_start,
            shape,
            elem: self.data_type().size(),
        }
        .for_each_run(|_, d, len| self.fill_value().fill(&mut out[d..d + len]));
    }

    /// Decodes whole fixed-size chunks that do not fill a contiguous range
    /// of `out` straight into their boxes of it, one after another, for a
    /// chain that places inner chunks itself
    /// ([`CodecChain::places_inner_chunks`](crate::codec::CodecChain::places_inner_chunks)):
    /// each shard decodes its inner chunks in parallel and copies each
    /// once into `out`, with no shard-sized buffer between (one copy of
    /// each element instead of two, and no pages mapped for shards).
    fn decode_placed(
        &self,
        region: &Region,
        staged: Vec<(&ChunkPiece, Option<Vec<u8>>)>,
        out: &mut [u8],
    ) -> Result<(), Error> {
        for (piece, bytes) in staged {
            let repr = self.piece_repr(piece);
            let b = BoxOut {
                buf: &mut *out,
                shape: region.shape(),
                start: &piece.in_region,
            };
            match bytes {
                Some(bytes) => self
                    .codecs
                    .decode_into_box(bytes, repr, b)
                    .map_err(|source| Error::Decode {
                        key: piece.key.clone(),
                        source,
                    })?,
                None => self.fill_box(&piece.shape, out, region.shape(), &piece.in_region),
            }
        }
        Ok(())
    }

    /// Decodes a fetched batch of whole chunks into `out`.
    fn put_batch(
        &self,
        region: &Region,
        batch: &[ChunkPiece],
        fetched: Vec<Option<Vec<u8>>>,
        out: &mut ReadOut<'_>,
        pool: &BufferPool,
    ) -> Result<(), Error> {
        let staged: Vec<(&ChunkPiece, Option<Vec<u8>>)> = match out {
            ReadOut::Fixed(buf) => {
                let elem = self.data_type().size();
                let mut direct = Vec::new();
                let mut staged = Vec::new();
                for (piece, bytes) in batch.iter().zip(fetched) {
                    match self.contiguous_range(region, piece, elem) {
                        Some(range) => direct.push((range, piece, bytes)),
                        None => staged.push((piece, bytes)),
                    }
                }
                self.decode_direct(direct, buf)?;
                if self.codecs.places_inner_chunks() {
                    return self.decode_placed(region, staged, buf);
                }
                return self.decode_staged(region, staged, buf, elem, pool);
            }
            ReadOut::Vlen { .. } => batch.iter().zip(fetched).collect(),
        };
        if !staged.is_empty() {
            let decoded = staged
                .into_par_iter()
                .map(|(piece, bytes)| {
                    let repr = self.piece_repr(piece);
                    Ok((piece, self.decode_chunk(&piece.key, repr, bytes)?))
                })
                .collect::<Result<Vec<_>, Error>>()?;
            out.put(self, region, decoded, false)?;
        }
        Ok(())
    }

    /// The byte range of `out` that a whole chunk fills, when the chunk lies
    /// entirely inside the region and its elements are contiguous there (a
    /// 1-d array, or chunks spanning the region's trailing dimensions).
    fn contiguous_range(
        &self,
        region: &Region,
        piece: &ChunkPiece,
        elem: usize,
    ) -> Option<std::ops::Range<usize>> {
        if piece.shape != self.piece_repr(piece).shape {
            return None;
        }
        copy::contiguous_range(region.shape(), &piece.in_region, &piece.shape, elem)
    }

    /// Decodes whole chunks straight into their disjoint ranges of `out`,
    /// in parallel; missing chunks are filled with the fill value.
    fn decode_direct(&self, mut direct: Vec<DirectChunk<'_>>, out: &mut [u8]) -> Result<(), Error> {
        if direct.is_empty() {
            return Ok(());
        }
        direct.sort_by_key(|(range, _, _)| range.start);
        // Split `out` into one mutable slice per chunk: the ranges are
        // disjoint (the plan's pieces are), so each task owns its slice.
        let slices = copy::split_ranges(out, direct.iter().map(|(range, _, _)| range.clone()))
            .ok_or_else(|| Error::TooLarge {
                path: self.path.clone(),
                shape: self.shape().to_vec(),
            })?;
        let threads = self.codecs.threads_per_chunk(direct.len());
        slices
            .into_par_iter()
            .zip(direct)
            .try_for_each(|(slice, (_, piece, bytes))| {
                self.decode_whole_into(piece, bytes, slice, threads)
            })
    }

    /// Copies decoded chunks (or the fill value for missing ones) into the
    /// region's buffer, in parallel over the region's first dimension.
    fn scatter(
        &self,
        region: &Region,
        decoded: &[(&ChunkPiece, Option<Vec<u8>>)],
        out: &mut [u8],
        elem: usize,
    ) {
        let fill = self.fill_value();
        let copy_piece = |piece: &ChunkPiece,
                          chunk: Option<&Vec<u8>>,
                          dst: &mut [u8],
                          dst_shape: &[u64],
                          dst_start: &[u64],
                          src_start: &[u64],
                          shape: &[u64]| {
            let copy = BoxCopy {
                src_shape: &self.piece_repr(piece).shape,
                src_start,
                dst_shape,
                dst_start,
                shape,
                elem,
            };
            match chunk {
                Some(chunk) => copy.run(chunk, dst),
                None => copy.for_each_run(|_, d, len| fill.fill(&mut dst[d..d + len])),
            }
        };
        let ndim = self.ndim();
        if ndim < 2 || region.shape()[0] < 2 {
            for (piece, chunk) in decoded {
                copy_piece(
                    piece,
                    chunk.as_ref(),
                    out,
                    region.shape(),
                    &piece.in_region,
                    &piece.in_chunk,
                    &piece.shape,
                );
            }
            return;
        }
        // Each index of the region's first dimension is a contiguous plane
        // of `out`; planes are disjoint, so threads can fill them at once
        // without sharing a mutable buffer.
        let plane_bytes = out.len() / region.shape()[0] as usize;
        let lo = decoded
            .iter()
            .map(|(p, _)| p.in_region[0])
            .min()
            .unwrap_or(0) as usize;
        let hi = decoded
            .iter()
            .map(|(p, _)| p.in_region[0] + p.shape[0])
            .max()
            .unwrap_or(0) as usize;
        let plane_shape: Vec<u64> = std::iter::once(1)
            .chain(region.shape()[1..].iter().copied())
            .collect();
        out[lo * plane_bytes..hi * plane_bytes]
            .par_chunks_mut(plane_bytes)
            .enumerate()
            .for_each(|(i, plane)| {
                let row = (lo + i) as u64;
                let mut dst_start = vec![0u64; ndim];
                let mut src_start = vec![0u64; ndim];
                let mut shape = vec![1u64; ndim];
                for (piece, chunk) in decoded {
                    if row < piece.in_region[0] || row >= piece.in_region[0] + piece.shape[0] {
                        continue;
                    }
                    dst_start[1..].copy_from_slice(&piece.in_region[1..]);
                    src_start[0] = piece.in_chunk[0] + (row - piece.in_region[0]);
                    src_start[1..].copy_from_slice(&piece.in_chunk[1..]);
                    shape[1..].copy_from_slice(&piece.shape[1..]);
                    copy_piece(
                        piece,
                        chunk.as_ref(),
                        plane,
                        &plane_shape,
                        &dst_start,
                        &src_start,
                        &shape,
                    );
                }
            });
    }

    /// Reads `region` into a new vector, in C order.
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`] if `T` does not hold the data type,
    /// [`Error::OutOfBounds`], or a store or decode error naming the chunk.
    pub fn read_region<T: Element>(&self, region: &Region) -> Result<Vec<T>, Error> {
        self.check_element::<T>()?;
        let n = self.check_region(region)? / self.data_type().size().max(1);
        let mut out = crate::store::pages::result_vec(n, T::zero());
        self.read_region_into(region, &mut out)?;
        Ok(out)
    }

    /// Reads `region` into `out` (C order, exactly the region's elements).
    ///
    /// # Errors
    /// As [`Array::read_region`], and [`Error::BufferLength`].
    pub fn read_region_into<T: Element>(
        &self,
        region: &Region,
        out: &mut [T],
    ) -> Result<(), Error> {
        self.check_element::<T>()?;
        if let Some(bytes) = T::as_bytes_mut(out) {
            return self.read_region_bytes_into(region, bytes);
        }
        let bytes = self.read_region_bytes(region)?;
        self.elements_from_bytes(&bytes, out)
    }

    /// Converts native-endian element bytes into `out`, for element types
    /// whose memory is not the bytes themselves (`bool`).
    ///
    /// # Errors
    /// [`Error::BufferLength`] if the sizes differ, [`Error::InvalidValue`]
    /// for bytes that are no value of `T`.
    pub(super) fn elements_from_bytes<T: Element>(
        &self,
        bytes: &[u8],
        out: &mut [T],
    ) -> Result<(), Error> {
        if bytes.len() != std::mem::size_of_val(out) {
            return Err(Error::BufferLength {
                path: self.path.clone(),
                expected: bytes.len() as u64,
                actual: std::mem::size_of_val(out) as u64,
            });
        }
        T::from_bytes(bytes, out).map_err(|reason| Error::InvalidValue {
            path: self.path.clone(),
            data_type: self.data_type().clone(),
            reason,
        })
    }

    /// Reads `region` as raw element bytes (native byte order, C order), for any data type.
    ///
    /// # Errors
    /// As [`Array::read_region`].
    pub fn read_region_bytes(&self, region: &Region) -> Result<Vec<u8>, Error> {
        let n = self.check_region(region)?;
        let mut out = self.zeroed_buffer(n, "the region's bytes")?;
        self.read_region_bytes_into(region, &mut out)?;
        Ok(out)
    }

    /// Writes `data` (C order) into `region`.
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`], [`Error::OutOfBounds`],
    /// [`Error::BufferLength`], or a store or encode error naming the chunk.
    pub fn write_region<T: Element>(&self, region: &Region, data: &[T]) -> Result<(), Error> {
        self.check_element::<T>()?;
        self.write_region_bytes(region, &T::as_bytes(data))
    }

    /// Writes raw element bytes (native byte order, C order) into `region`, for any data type.
    ///
    /// Chunks the region covers entirely are encoded without being read;
    /// chunks it covers in part are read, updated and rewritten. A chunk
    /// that ends up equal to the fill value everywhere is erased instead of
    /// stored, unless [`Array::set_write_empty_chunks`] says otherwise.
    ///
    /// # Errors
    /// As [`Array::write_region`].
    pub fn write_region_bytes(&self, region: &Region, data: &[u8]) -> Result<(), Error> {
        let expected = self.check_region(region)?;
        if data.len() != expected {
            return Err(Error::BufferLength {
                path: self.path.clone(),
                expected: expected as u64,
                actual: data.len() as u64,
            });
        }
        if region.is_empty() {
            return Ok(());
        }
        self.chunk_repr.size_bytes().map_err(|_| Error::TooLarge {
            path: self.path.clone(),
            shape: self.chunk_shape().to_vec(),
        })?;
        self.write_planned(region, &ChunkData::from(data))
    }

    /// The write engine, for every data type: `data` holds the elements
    /// of `region` (non-empty and checked) in C order. Chunks the region
    /// covers entirely are encoded without being read: each task builds,
    /// encodes and stores one, so memory in flight is one chunk and its
    /// encoding per thread. Chunks covered in part go through the chain's
    /// partial encoder when it has one (a shard rewrites only the inner
    /// chunks it must); otherwise each is read whole through one snapshot,
    /// updated, and stored unless it changed meanwhile (then read again).
    pub(super) fn write_planned(&self, region: &Region, data: &ChunkData<'_>) -> Result<(), Error> {
        let written = self.write_planned_now(region, data);
        // A write is done when its background work is: the filesystem
        // store removes replaced values on threads of its own meanwhile.
        self.store.settle();
        written
    }

    /// [`Self::write_planned`] but for settling the store.
    fn write_planned_now(&self, region: &Region, data: &ChunkData<'_>) -> Result<(), Error> {
        if let Some(result) = on_pool(self.store.concurrency(), || {
            self.write_planned_now(region, data)
        }) {
            return result;
        }
        let pieces = self.plan(region)?;
        let (whole, partial): (Vec<&ChunkPiece>, Vec<&ChunkPiece>) =
            pieces.iter().partition(|piece| piece.covers_chunk);
        match remote_pool(self.store.concurrency()).filter(|_| whole.len() > 1) {
            Some(pool) => self.write_whole_pipelined(region, data, &whole, pool)?,
            None => whole.par_iter().try_for_each(|piece| {
                let threads = self.codecs.threads_per_chunk(whole.len());
                let streamed = threads::with_chunk_threads(threads, || {
                    self.write_piece_streamed(region, data, piece, whole.len() > 1)
                })?;
                if streamed {
                    return Ok(());
                }
                let value = threads::with_chunk_threads(threads, || {
                    self.build_piece(region, data, piece, None)
                })?;
                let commit = || self.commit(&piece.key, value.as_deref(), None).map(|_| ());
                // Many chunks: the store may finish each in the background
                // (settled before this write returns).
                if whole.len() > 1 {
                    crate::store::deferring(commit)
                } else {
                    commit()
                }
            })?,
        }
        if self.codecs.capabilities().partial_encode {
            return partial.par_iter().try_for_each(|piece| {
                let b = ChunkBox::new(piece.in_region.clone(), piece.shape.clone());
                let update = data
                    .extract_box(&self.chunk_repr, region.shape(), &b)
                    .map_err(|source| Error::Encode {
                        key: piece.key.clone(),
                        source,
                    })?;
                self.write_piece_partial(piece, update)
            });
        }
        partial.par_iter().try_for_each(|piece| {
            loop {
                let seen = self.generation(&piece.key);
                let snapshot = self.store.snapshot(&piece.key)?;
                let old = match snapshot.read(&[None]) {
                    Ok(old) => old.and_then(|mut v| v.pop()),
                    Err(StoreError::Changed { .. }) => continue,
                    Err(err) => return Err(err.into()),
                };
                let version = snapshot.version();
                drop(snapshot);
                match self.build_piece(region, data, piece, old) {
                    Ok(value) => {
                        if self.commit_if_unchanged(
                            &piece.key,
                            value.as_deref(),
                            seen,
                            version.as_ref(),
                        )? {
                            return Ok(());
                        }
                    }
                    // A chunk replaced while it was read (unpinned) is read again.
                    Err(_) if version.is_none() && self.generation(&piece.key) != seen => {}
                    Err(err) => return Err(err),
                }
            }
        })
    }

    /// Writes whole chunks to a remote store: a batch at a time encoded in
    /// parallel on the caller's pool, while the batch before is stored
    /// from `pool`, so that as many requests are in flight as the store
    /// allows rather than one per encoding thread (each of which would
    /// wait on its round trip). Memory in flight: three batches (see
    /// `batch_size`), as for reads.
    fn write_whole_pipelined(
        &self,
        region: &Region,
        data: &ChunkData<'_>,
        whole: &[&ChunkPiece],
        pool: &rayon::ThreadPool,
    ) -> Result<(), Error> {
        type Encoded<'p> = Vec<(&'p StoreKey, Option<Vec<u8>>)>;
        std::thread::scope(|scope| {
            let (sender, receiver) = std::sync::mpsc::sync_channel::<Encoded<'_>>(1);
            let putter = scope.spawn(move || {
                for batch in receiver {
                    pool.install(|| {
                        batch.par_iter().try_for_each(|(key, value)| {
                            self.commit(key, value.as_deref(), None).map(|_| ())
                        })
                    })?;
                }
                Ok::<_, Error>(())
            });
            let mut encoded = Ok(());
            for batch in whole.chunks(self.batch_size()) {
                let values = batch
                    .par_iter()
                    .map(|piece| Ok((&piece.key, self.build_piece(region, data, piece, None)?)))
                    .collect::<Result<Encoded<'_>, Error>>();
                match values {
                    // A closed channel: the putter stopped at an error.
                    Ok(values) => {
                        if sender.send(values).is_err() {
                            break;
                        }
                    }
                    Err(err) => {
                        encoded = Err(err);
                        break;
                    }
                }
            }
            drop(sender);
            let stored = putter
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            encoded.and(stored)
        })
    }

    /// Updates the part of one chunk that `piece` covers, with `update`
    /// (the piece's elements in C order), through the codec chain's
    /// partial encoder (a sharded array: the index, the inner chunks the
    /// piece does not cover, and only the touched ones re-encoded),
    /// retrying if another write to the chunk's stripe lands between the
    /// read and the store.
    fn write_piece_partial(&self, piece: &ChunkPiece, update: ChunkData<'_>) -> Result<(), Error> {
        let updates = [(
            ChunkBox::new(piece.in_chunk.clone(), piece.shape.clone()),
            update,
        )];
        let repr = self.piece_repr(piece);
        let encode_error = |source| Error::Encode {
            key: piece.key.clone(),
            source,
        };
        loop {
            let seen = self.generation(&piece.key);
            let snapshot = self.store.snapshot(&piece.key)?;
            let result = self
                .codecs
                .encode_partial(&SnapshotReader(&*snapshot), repr, &updates);
            let version = snapshot.version();
            drop(snapshot);
            let value = match result {
                Ok(value) => value,
                // Read unpinned while another thread replaced it, or
                // replaced on object storage while read: read again.
                Err(_) if version.is_none() && self.generation(&piece.key) != seen => continue,
                Err(err) if changed_while_read(&err) => continue,
                Err(source) => return Err(partial_error(&piece.key, source, true)),
            };
            let value = match value {
                None if self.write_empty_chunks => {
                    let fill = ChunkData::fill(repr, &repr.shape).map_err(encode_error)?;
                    Some(self.codecs.encode(fill, repr).map_err(encode_error)?)
                }
                value => value,
            };
            if self.commit_if_unchanged(&piece.key, value.as_deref(), seen, version.as_ref())? {
                return Ok(());
            }
        }
    }

    /// The copy of `piece`'s elements from `region`'s buffer into its chunk.
    fn piece_copy<'p>(&'p self, region: &'p Region, piece: &'p ChunkPiece) -> BoxCopy<'p> {
        BoxCopy {
            src_shape: region.shape(),
            src_start: &piece.in_region,
            dst_shape: &self.piece_repr(piece).shape,
            dst_start: &piece.in_chunk,
            shape: &piece.shape,
            elem: self.data_type().size(),
        }
    }

    /// Whether every element `copy` takes from `bytes` equals the fill value.
    fn all_fill(&self, bytes: &[u8], copy: &BoxCopy<'_>) -> bool {
        let fill = self.fill_value();
        let mut all_fill = true;
        copy.for_each_run(|s, _, len| {
            all_fill = all_fill && fill.equals_all(&bytes[s..s + len]);
        });
        all_fill
    }

    /// Writes the whole chunk `piece` of `data` to the store as it is
    /// encoded ([`CodecChain::encode_from_streamed`]: a shard with its
    /// index at the end goes to its file inner chunk by inner chunk, and is
    /// never assembled in memory) where the chain and the store both can
    /// ([`Store::begin_set`]). `Ok(false)`, with nothing stored, where
    /// either cannot, and for a chunk that is the fill value everywhere
    /// (which [`Self::build_piece`] leaves unstored): the caller then
    /// builds the value whole. Inside [`crate::store::deferring`] when
    /// `deferred` (one of several chunks), as [`Self::commit`] is.
    ///
    /// [`CodecChain::encode_from_streamed`]: crate::codec::CodecChain::encode_from_streamed
    fn write_piece_streamed(
        &self,
        region: &Region,
        data: &ChunkData<'_>,
        piece: &ChunkPiece,
        deferred: bool,
    ) -> Result<bool, Error> {
        let repr = self.piece_repr(piece);
        let ChunkData::Fixed(bytes) = data else {
            return Ok(false);
        };
        if piece.shape != repr.shape || !self.codecs.encodes_streamed() {
            return Ok(false);
        }
        let copy = self.piece_copy(region, piece);
        if !self.write_empty_chunks && self.all_fill(bytes, &copy) {
            return Ok(false);
        }
        let Some(mut pending) = self.store.begin_set(&piece.key)? else {
            return Ok(false);
        };
        let streamed = self
            .codecs
            .encode_from_streamed(
                bytes,
                region.shape(),
                &piece.in_region,
                repr,
                &mut PendingSink(&mut *pending),
            )
            .map_err(|source| match source {
                CodecError::Store(source) => Error::Store(source),
                source => Error::Encode {
                    key: piece.key.clone(),
                    source,
                },
            })?;
        if !streamed {
            // Dropped uncommitted: nothing is left behind.
            return Ok(false);
        }
        // With nothing seen to compare, the commit always stores (`true`).
        let commit = || self.commit_with(&piece.key, None, || pending.commit());
        match deferred {
            true => crate::store::deferring(commit),
            false => commit(),
        }
    }

    /// Builds one chunk from its stored bytes (`old`, `None` if missing or
    /// not read) and the region's `data`, and encodes it; `None` when it
    /// equals the fill value everywhere and is to be erased.
    fn build_piece(
        &self,
        region: &Region,
        data: &ChunkData<'_>,
        piece: &ChunkPiece,
        old: Option<Vec<u8>>,
    ) -> Result<Option<Vec<u8>>, Error> {
        let repr = self.piece_repr(piece);
        let encode_error = |source| Error::Encode {
            key: piece.key.clone(),
            source,
        };
        let copy = self.piece_copy(region, piece);
        if let ChunkData::Fixed(bytes) = data
            && old.is_none()
            && piece.shape == repr.shape
            && (self.codecs.capabilities().partial_encode
                || self.codecs.capabilities().decodes_ranges)
        {
            // A whole shard from `data`: the sharding codec encodes each
            // inner chunk straight from it, so the shard is never
            // gathered (a write of 32 MiB shards holds no 32 MiB buffer
            // per thread); `bytes` + `blosc` compresses a chunk that is
            // contiguous in `data` straight from it.
            if !self.write_empty_chunks && self.all_fill(bytes, &copy) {
                return Ok(None);
            }
            return self
                .codecs
                .encode_from(bytes, region.shape(), &piece.in_region, repr)
                .map(Some)
                .map_err(encode_error);
        }
        let old = self.decode_chunk(&piece.key, repr, old)?;
        let chunk = ChunkData::merge_from(old, repr, data, &copy).map_err(encode_error)?;
        if !self.write_empty_chunks && chunk.is_fill(repr) {
            return Ok(None);
        }
        self.codecs
            .encode(chunk, repr)
            .map(Some)
            .map_err(encode_error)
    }

    /// Reads the decoded chunk at `chunk_coords` (the whole chunk, including
    /// any part past the array's edge), or `None` if it is not stored.
    ///
    /// # Errors
    /// A store or decode error naming the chunk.
    pub fn read_chunk_bytes(&self, chunk_coords: &[u64]) -> Result<Option<Vec<u8>>, Error> {
        self.check_chunk_coords(chunk_coords)?;
        let key = self.chunk_key(chunk_coords)?;
        let bytes = self.store.get(&key, None)?;
        self.decode_fixed_chunk(&key, &self.chunk_repr_at(chunk_coords), bytes)
    }

    /// The shape of the inner chunks when the array is sharded (its codecs
    /// start with `sharding_indexed`), or `None`. Inner chunks are the
    /// natural unit for reading sharded data piece by piece.
    #[must_use]
    pub fn inner_chunk_shape(&self) -> Option<Vec<u64>> {
        self.codecs.inner_chunk_shape().map(<[u64]>::to_vec)
    }

    /// The number of inner chunks along each dimension of the whole array
    /// (the shard grid refined by the inner chunk shape), or `None` when the
    /// array is not sharded.
    #[must_use]
    pub fn inner_chunk_grid_shape(&self) -> Option<Vec<u64>> {
        let inner = self.inner_chunk_shape()?;
        Some(
            self.shape()
                .iter()
                .zip(&inner)
                .map(|(&n, &c)| n.div_ceil(c))
                .collect(),
        )
    }

    /// The elements of the inner chunk at `inner_coords` (counted over the
    /// whole array) that lie inside the array.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`] if the array is not sharded or the coordinates
    /// lie outside the inner chunk grid.
    pub fn inner_chunk_region(&self, inner_coords: &[u64]) -> Result<Region, Error> {
        let out_of_bounds = || Error::OutOfBounds {
            path: self.path.clone(),
            region: format!("inner chunk {inner_coords:?}"),
            shape: self.shape().to_vec(),
        };
        let (Some(inner), Some(grid)) = (self.inner_chunk_shape(), self.inner_chunk_grid_shape())
        else {
            return Err(out_of_bounds());
        };
        if inner_coords.len() != grid.len() || inner_coords.iter().zip(&grid).any(|(c, g)| c >= g) {
            return Err(out_of_bounds());
        }
        let (start, shape) = inner_coords
            .iter()
            .zip(&inner)
            .zip(self.shape())
            .map(|((&c, &n), &len)| (c * n, n.min(len - c * n)))
            .unzip();
        Ok(Region::new(start, shape))
    }

    /// Reads one inner chunk of a sharded array (its part inside the array),
    /// reading only the shard's index and that inner chunk from the store.
    ///
    /// # Errors
    /// As [`Array::inner_chunk_region`] and [`Array::read_region`].
    pub fn read_inner_chunk<T: Element>(&self, inner_coords: &[u64]) -> Result<Vec<T>, Error> {
        self.read_region(&self.inner_chunk_region(inner_coords)?)
    }

    /// Erases the chunk at `chunk_coords` (it then reads as the fill value).
    ///
    /// # Errors
    /// A store error.
    pub fn erase_chunk(&self, chunk_coords: &[u64]) -> Result<(), Error> {
        self.check_chunk_coords(chunk_coords)?;
        let key = self.chunk_key(chunk_coords)?;
        self.commit(&key, None, None).map(|_| ())
    }

    pub(super) fn check_chunk_coords(&self, chunk_coords: &[u64]) -> Result<(), Error> {
        let grid = self.chunk_grid_shape();
        if chunk_coords.len() != grid.len() || chunk_coords.iter().zip(&grid).any(|(c, g)| c >= g) {
            return Err(Error::OutOfBounds {
                path: self.path.clone(),
                region: format!("chunk {chunk_coords:?}"),
                shape: self.shape().to_vec(),
            });
        }
        Ok(())
    }

    /// Changes the shape, erasing chunks wholly outside the new shape and
    /// rewriting the metadata document.
    ///
    /// Elements of a chunk that straddles the new edge keep their stored
    /// values past the edge; growing the array again shows them, as in
    /// zarr-python and zarrs (the v3 spec leaves this open).
    ///
    /// A `rectilinear` grid keeps its edge lengths: a dimension given as one
    /// integer grows freely (the integer "repeats until it covers" the new
    /// length), while one given as explicit edge lengths can shrink, or grow
    /// up to the sum of its edge lengths but not past it (rectilinear, "Chunk
    /// edge lengths": the sum "MUST equal or exceed" the length); write a new
    /// grid to grow further.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`], [`Error::InvalidMetadata`] when a
    /// `rectilinear` grid's explicit edge lengths do not reach the new
    /// shape, or a store error.
    pub fn resize(&mut self, new_shape: &[u64]) -> Result<(), Error> {
        if new_shape.len() != self.ndim() {
            return Err(Error::DimensionMismatch {
                path: self.path.clone(),
                region_ndim: new_shape.len(),
                array_ndim: self.ndim(),
            });
        }
        self.metadata
            .chunk_grid
            .check_covers(new_shape)
            .map_err(|source| Error::InvalidMetadata {
                path: self.path.clone(),
                source,
            })?;
        let axes = &self.axes;
        // A chunk is outside when it starts at or past the new end along
        // some dimension; coordinates past the declared chunks of a
        // rectilinear grid never hold array elements, so they go too.
        let outside = |coords: &[u64]| {
            coords
                .iter()
                .zip(axes)
                .zip(new_shape)
                .any(|((&c, axis), &n)| axis.span(c).is_none_or(|(start, _)| start >= n))
        };
        let erase: Vec<StoreKey> = match self.listed_chunks()? {
            Some(listed) => listed
                .into_iter()
                .filter(|chunk| outside(&chunk.chunk_coords))
                .map(|chunk| chunk.key)
                .collect(),
            // Without listing, visit every chunk of the old grid that the new
            // shape leaves out.
            None => GridWalk::whole(&self.chunk_grid_shape())
                .filter(|coords| outside(coords))
                .map(|coords| self.chunk_key(&coords))
                .collect::<Result<_, _>>()?,
        };
        let old = std::mem::replace(&mut self.metadata.shape, new_shape.to_vec());
        if let Err(e) = self.write_metadata() {
            self.metadata.shape = old;
            return Err(e);
        }
        // Erase after the document is rewritten: a failure here leaves
        // unreachable chunks, never a document pointing at missing data.
        self.store.erase_values(&erase)?;
        Ok(())
    }
}

#[cfg(feature = "ndarray")]
impl Array {
    /// Reads `region` as an `ndarray` array.
    ///
    /// # Errors
    /// As [`Array::read_region`].
    pub fn read_ndarray<T: Element>(&self, region: &Region) -> Result<ndarray::ArrayD<T>, Error> {
        let data = self.read_region::<T>(region)?;
        let shape: Vec<usize> = region.shape().iter().map(|&n| n as usize).collect();
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), data).map_err(|_| Error::TooLarge {
            path: self.path.clone(),
            shape: region.shape().to_vec(),
        })
    }

    /// Writes an `ndarray` view with its first element at `start`.
    ///
    /// # Errors
    /// As [`Array::write_region`].
    pub fn write_ndarray<T: Element>(
        &self,
        start: &[u64],
        data: ndarray::ArrayViewD<'_, T>,
    ) -> Result<(), Error> {
        let shape: Vec<u64> = data.shape().iter().map(|&n| n as u64).collect();
        if start.len() != shape.len() {
            return Err(Error::DimensionMismatch {
                path: self.path.clone(),
                region_ndim: shape.len(),
                array_ndim: start.len(),
            });
        }
        let region = Region::new(start.to_vec(), shape);
        let standard = data.as_standard_layout();
        match standard.as_slice() {
            Some(slice) => self.write_region(&region, slice),
            None => self.write_region(&region, &standard.iter().copied().collect::<Vec<_>>()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::LatencyStore;
    use crate::store::{MemoryStore, Store};
    use std::time::Duration;

    /// A write of whole shards to a filesystem store streams each to its
    /// file as its inner chunks are encoded, never assembled in memory:
    /// the files hold exactly the bytes of the shards a memory store
    /// (which takes whole values only) holds, a shard of fill value
    /// everywhere is not stored, and the shards the array's edge cuts take
    /// the assembled way.
    #[cfg(target_os = "linux")]
    #[test]
    fn whole_shards_stream_to_files_with_the_bytes_of_assembled_shards() {
        let codecs: Vec<_> = [serde_json::json!({
            "name": "sharding_indexed",
            "configuration": {
                "chunk_shape": [32, 32],
                "codecs": [
                    {"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "zstd", "configuration": {"level": 1, "checksum": false}}
                ],
                "index_codecs": [
                    {"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "crc32c"}
                ],
                "index_location": "end"
            }
        })]
        .iter()
        .map(|c| crate::metadata::json::extension_from_json(c, "codecs").unwrap())
        .collect();
        let create = |store: Arc<dyn Store>| {
            Array::builder(&[200, 384], crate::metadata::DataType::UInt16, &[128, 128])
                .codecs_metadata(codecs.clone())
                .create(store, "/a")
                .unwrap()
        };
        // Shard (0, 1) is all fill value (0); the others hold noise.
        let data: Vec<u16> = (0..200 * 384)
            .map(|i| {
                let (y, x) = (i / 384, i % 384);
                if y < 128 && (128..256).contains(&x) {
                    0
                } else {
                    ((y * 7919 + x * 104_729 + (x * y) % 251) % 65_521) as u16 | 1
                }
            })
            .collect();
        let region = Region::new(vec![0, 0], vec![200, 384]);
        let dir = tempfile::tempdir().unwrap();
        let files: Arc<dyn Store> =
            Arc::new(crate::store::FilesystemStore::new(dir.path().join("s")).unwrap());
        let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let before = crate::store::PARTS_COMMITTED.load(Ordering::Relaxed);
        create(Arc::clone(&files))
            .write_region(&region, &data)
            .unwrap();
        let streamed = crate::store::PARTS_COMMITTED.load(Ordering::Relaxed) - before;
        assert!(streamed >= 2, "{streamed} shards streamed");
        create(Arc::clone(&memory))
            .write_region(&region, &data)
            .unwrap();
        let keys = |store: &Arc<dyn Store>| {
            let mut keys = store
                .list_prefix(&crate::store::StorePrefix::new("a/c/").unwrap())
                .unwrap();
            keys.sort();
            keys
        };
        let stored = keys(&files);
        assert_eq!(stored, keys(&memory));
        let names: Vec<&str> = stored.iter().map(StoreKey::as_str).collect();
        assert_eq!(
            names,
            ["a/c/0/0", "a/c/0/2", "a/c/1/0", "a/c/1/1", "a/c/1/2"]
        );
        for key in &stored {
            let (file, assembled) = (
                files.get(key, None).unwrap(),
                memory.get(key, None).unwrap(),
            );
            assert!(
                file.is_some() && file == assembled,
                "{key}: the shards differ"
            );
        }
        let again = Array::open(files, "/a").unwrap();
        assert_eq!(again.read_region::<u16>(&region).unwrap(), data);
    }

    /// A 64 × 64 `uint16` array of 32 × 32 chunks, uncompressed (the
    /// `bytes` codec alone) or zstd-compressed.
    fn array(store: Arc<dyn Store>, zstd: bool) -> Array {
        let mut codecs =
            vec![serde_json::json!({"name": "bytes", "configuration": {"endian": "little"}})];
        if zstd {
            codecs.push(serde_json::json!({"name": "zstd", "configuration": {"level": 3, "checksum": false}}));
        }
        let codecs = codecs
            .iter()
            .map(|c| crate::metadata::json::extension_from_json(c, "codecs").unwrap())
            .collect();
        Array::builder(&[64, 64], crate::metadata::DataType::UInt16, &[32, 32])
            .codecs_metadata(codecs)
            .create(store, if zstd { "/zstd" } else { "/raw" })
            .unwrap()
    }

    #[test]
    fn partial_reads_run_where_they_wait() {
        let local: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let remote: Arc<dyn Store> = Arc::new(LatencyStore::new(
            Arc::new(MemoryStore::new()),
            Duration::ZERO,
            8,
        ));
        let raw = array(Arc::clone(&local), false);
        // A read with no partial reads starts no pool: a whole read of an
        // uncompressed array started the remote pool's 64 threads.
        assert_eq!(
            raw.partial_read_threads(0, true),
            PartialReadThreads::Caller
        );
        // Element runs of a local store wait on the disk: the I/O threads,
        // from the caller's thread; inside a rayon task, that task's pool.
        assert_eq!(raw.partial_read_threads(3, true), PartialReadThreads::Io);
        assert_eq!(
            raw.partial_read_threads(3, false),
            PartialReadThreads::Caller
        );
        // Decoding is CPU work: it stays on the caller's pool.
        let zstd = array(Arc::clone(&local), true);
        assert_eq!(
            zstd.partial_read_threads(3, true),
            PartialReadThreads::Caller
        );
        // A remote store's round trips wait on the network.
        for compressed in [false, true] {
            let a = array(Arc::clone(&remote), compressed);
            assert_eq!(a.partial_read_threads(3, true), PartialReadThreads::Remote);
            assert_eq!(a.partial_read_threads(0, true), PartialReadThreads::Caller);
        }
    }

    /// A 128 × 128 `uint16` array at `/raw` of `chunk` × `chunk` chunks,
    /// uncompressed (`bytes` in `endian` order alone).
    fn raw_array(store: Arc<dyn Store>, endian: &str, chunk: u64) -> Array {
        let codecs = [serde_json::json!({"name": "bytes", "configuration": {"endian": endian}})]
            .iter()
            .map(|c| crate::metadata::json::extension_from_json(c, "codecs").unwrap())
            .collect();
        Array::builder(
            &[128, 128],
            crate::metadata::DataType::UInt16,
            &[chunk, chunk],
        )
        .codecs_metadata(codecs)
        .create(store, "/raw")
        .unwrap()
    }

    /// Whole reads of uncompressed chunks of a filesystem store decode
    /// each chunk as it is read (`read_streamed`): the values, missing
    /// chunks and regions come out as a batch read's do, a bad chunk is an
    /// error naming its key, and readers on many threads at once all end.
    #[test]
    fn streamed_reads_place_every_chunk_and_name_a_bad_one() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> =
            Arc::new(crate::store::FilesystemStore::new(dir.path()).unwrap());
        // 16 × 16 chunks of 8 × 8: 256, several batches on up to 63
        // threads.
        let a = raw_array(Arc::clone(&store), "big", 8);
        let values: Vec<u16> = (0..128 * 128).map(|i| (i * 7 + 1) as u16).collect();
        a.write_region(&Region::new(vec![0, 0], vec![128, 128]), &values)
            .unwrap();
        // Chunks (0, 3) and (9, 9) are missing: the fill value, 0.
        a.erase_chunk(&[0, 3]).unwrap();
        a.erase_chunk(&[9, 9]).unwrap();
        let expected = |r: usize, c: usize| {
            if (r / 8, c / 8) == (0, 3) || (r / 8, c / 8) == (9, 9) {
                0
            } else {
                values[r * 128 + c]
            }
        };
        let whole: Vec<u16> = (0..128 * 128).map(|i| expected(i / 128, i % 128)).collect();
        assert_eq!(
            a.read_region::<u16>(&Region::new(vec![0, 0], vec![128, 128]))
                .unwrap(),
            whole
        );
        // A region that cuts chunks at all four edges.
        let region: Vec<u16> = (3..125)
            .flat_map(|r| (5..126).map(move |c| (r, c)))
            .map(|(r, c)| expected(r, c))
            .collect();
        assert_eq!(
            a.read_region::<u16>(&Region::new(vec![3, 5], vec![122, 121]))
                .unwrap(),
            region
        );
        // Six readers at once, each fetching and decoding on the shared
        // threads.
        std::thread::scope(|scope| {
            let readers: Vec<_> = (0..6)
                .map(|_| {
                    scope.spawn(|| {
                        a.read_region::<u16>(&Region::new(vec![0, 0], vec![128, 128]))
                            .unwrap()
                    })
                })
                .collect();
            for reader in readers {
                assert!(reader.join().unwrap() == whole);
            }
        });
        // A chunk of the wrong length: the read fails naming it.
        let bad = StoreKey::new("raw/c/11/2").unwrap();
        store.set(&bad, &[0; 100]).unwrap();
        let err = a
            .read_region::<u16>(&Region::new(vec![0, 0], vec![128, 128]))
            .unwrap_err();
        assert!(
            matches!(&err, Error::Decode { key, .. } if *key == bad),
            "{err}"
        );
    }

    /// A memory store whose `get_values_each` never hands over the
    /// answer of request 5, hands every other one over twice, and hands
    /// over an answer to a request it was not asked after request 7's.
    #[derive(Debug)]
    struct Forgetful(MemoryStore);

    impl Store for Forgetful {
        fn name(&self) -> &'static str {
            "forgetful store"
        }
        fn capabilities(&self) -> crate::store::StoreCapabilities {
            self.0.capabilities()
        }
        fn get(
            &self,
            key: &StoreKey,
            range: Option<ByteRange>,
        ) -> Result<Option<Vec<u8>>, StoreError> {
            self.0.get(key, range)
        }
        fn get_values_each(
            &self,
            requests: &[ReadRequest],
            batch: usize,
            each: &(dyn Fn(usize, Result<Option<Vec<u8>>, StoreError>) -> bool + Sync),
        ) {
            self.0.get_values_each(requests, batch, &|i, value| {
                let again = match &value {
                    Ok(v) => Ok(v.clone()),
                    Err(_) => Ok(None),
                };
                i == 5
                    || (each(i, value)
                        && each(i, again)
                        && (i != 7 || each(usize::MAX, Ok(Some(vec![1; 3])))))
            });
        }
        fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
            self.0.set(key, value)
        }
        fn set_partial_values(&self, items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError> {
            self.0.set_partial_values(items)
        }
        fn erase(&self, key: &StoreKey) -> Result<(), StoreError> {
            self.0.erase(key)
        }
        fn erase_prefix(&self, prefix: &crate::store::StorePrefix) -> Result<(), StoreError> {
            self.0.erase_prefix(prefix)
        }
        fn list_prefix(
            &self,
            prefix: &crate::store::StorePrefix,
        ) -> Result<Vec<StoreKey>, StoreError> {
            self.0.list_prefix(prefix)
        }
        fn list_dir(
            &self,
            prefix: &crate::store::StorePrefix,
        ) -> Result<crate::store::ListDir, StoreError> {
            self.0.list_dir(prefix)
        }
    }

    /// A streamed read believes each request's first answer only, and a
    /// request left unanswered is an error naming its chunk, not a box of
    /// zeros.
    #[test]
    fn a_streamed_read_refuses_a_store_that_leaves_a_request_unanswered() {
        let store = Arc::new(Forgetful(MemoryStore::new()));
        // 1024 chunks of 4 × 4: several batches on up to 255 threads.
        let a = raw_array(store.clone(), "little", 4);
        let whole = Region::new(vec![0, 0], vec![128, 128]);
        let values: Vec<u16> = (0..128 * 128).map(|i| (i % 65_521 + 1) as u16).collect();
        a.write_region(&whole, &values).unwrap();
        let err = a.read_region::<u16>(&whole).unwrap_err();
        let Error::Store(StoreError::Read {
            key,
            store: name,
            source,
        }) = &err
        else {
            panic!("{err}");
        };
        assert_eq!(*name, "forgetful store");
        assert!(source.to_string().contains("no answer"), "{source}");
        // The key of request 5: a chunk of the array, which holds data.
        assert!(key.as_str().starts_with("raw/c/"), "{key}");
        assert!(store.get(key, None).unwrap().is_some());
    }

    #[test]
    fn local_reads_fetch_ahead_in_batches_by_how_chunks_are_stored() {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let (raw, zstd) = (array(Arc::clone(&store), false), array(store, true));
        // On a pool of two threads, as bench-compare measured it.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        pool.install(|| {
            // Not fetched ahead: the batch size alone (two threads: 32).
            assert_eq!(raw.read_batch_size(64, false), 32);
            assert_eq!(zstd.read_batch_size(64, false), 32);
            // 64 chunks fetched ahead: 8 batches of 8 uncompressed, 2 of
            // 32 compressed.
            assert_eq!(raw.read_batch_size(64, true), 8);
            assert_eq!(zstd.read_batch_size(64, true), 32);
            // Never more than the batch size, nor under four chunks a
            // thread.
            assert_eq!(zstd.read_batch_size(1000, true), 32);
            assert_eq!(raw.read_batch_size(1000, true), 32);
            assert_eq!(raw.read_batch_size(20, true), 8);
            assert_eq!(zstd.read_batch_size(12, true), 8);
            assert_eq!(zstd.read_batch_size(40, true), 20);
        });
    }
}
