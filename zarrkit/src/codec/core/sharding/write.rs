//! Encoding shards: whole (each inner chunk straight from the caller's
//! buffer) and in part (only the inner chunks an update touches are
//! re-encoded, the stored bytes of the rest copied), one path for
//! fixed-size and variable-length data.

use super::index::Shard;
use super::{EMPTY, IndexLocation, ShardingCodec};
use crate::codec::partial::{self, BytesRangeReader, BytesSink, ChunkBox};
use crate::codec::{ChunkData, ChunkRepr, CodecError};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

impl ShardingCodec {
    /// Encodes an inner chunk, or `None` when it equals the fill value
    /// everywhere (such inner chunks are not stored).
    fn encode_inner(shard: &Shard, chunk: ChunkData<'_>) -> Result<Option<Vec<u8>>, CodecError> {
        if chunk.is_fill(&shard.inner_repr) {
            return Ok(None);
        }
        shard.inner.encode(chunk, &shard.inner_repr).map(Some)
    }

    /// Encodes every inner chunk, each by `encode` (`None`: not stored),
    /// in parallel, and assembles the shard.
    fn encode_inner_chunks(
        &self,
        shard: &Shard,
        encode: impl Fn(usize) -> Result<Option<Vec<u8>>, CodecError> + Sync,
    ) -> Result<Vec<u8>, CodecError> {
        let encoded = (0..shard.n)
            .into_par_iter()
            .map(&encode)
            .collect::<Result<Vec<_>, _>>()?;
        let chunks: Vec<Option<&[u8]>> = encoded.iter().map(Option::as_deref).collect();
        self.assemble(shard, &chunks)
    }

    /// Splits a shard into inner chunks and encodes them in parallel.
    pub(super) fn encode_shard(
        &self,
        decoded: ChunkData<'_>,
        repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        decoded.check(repr)?;
        if let ChunkData::Fixed(bytes) = &decoded {
            return self.encode_shard_from(bytes, &repr.shape, &vec![0; repr.shape.len()], repr);
        }
        let shard = self.shard(repr)?;
        self.encode_inner_chunks(&shard, |i| {
            let b = ChunkBox::new(shard.start(i), shard.inner_shape.clone());
            Self::encode_inner(
                &shard,
                decoded.extract_box(&shard.inner_repr, &shard.shape, &b)?,
            )
        })
    }

    /// Encodes each inner chunk straight from `src`, in parallel
    /// ([`CodecChain::encode_gathered`]): the shard is never held decoded.
    ///
    /// [`CodecChain::encode_gathered`]: crate::codec::CodecChain::encode_gathered
    pub(super) fn encode_shard_from(
        &self,
        src: &[u8],
        src_shape: &[u64],
        src_start: &[u64],
        repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let shard = self.shard(repr)?;
        self.encode_inner_chunks(&shard, |i| {
            Self::encode_inner_from(&shard, i, src, src_shape, src_start)
        })
    }

    /// Encodes inner chunk `i` of the shard at `src_start` in `src` (a
    /// C-order buffer of `src_shape` elements) straight from there, or
    /// `None` when it equals the fill value everywhere.
    fn encode_inner_from(
        shard: &Shard,
        i: usize,
        src: &[u8],
        src_shape: &[u64],
        src_start: &[u64],
    ) -> Result<Option<Vec<u8>>, CodecError> {
        let start: Vec<u64> = shard
            .start(i)
            .iter()
            .zip(src_start)
            .map(|(a, b)| a + b)
            .collect();
        shard
            .inner
            .encode_gathered(src, src_shape, &start, &shard.inner_repr, true)
    }

    /// Whether [`Self::encode_shard_from_streamed`] streams this codec's
    /// shards: those with the index at the end.
    pub(crate) fn streams(&self) -> bool {
        self.index_location == IndexLocation::End
    }

    /// [`Self::encode_shard_from`], appending the shard to `sink` as its
    /// inner chunks are encoded, in order, instead of assembling it in
    /// memory: the copy into the store (a file's page cache) overlaps the
    /// encoding instead of following it, and no shard-sized buffer is
    /// filled first. `Ok(false)`, with nothing appended, for an index at
    /// the start, which can only be written once every inner chunk is
    /// encoded.
    ///
    /// The threads take the inner chunks in index order, so they finish
    /// nearly in that order; whichever thread finishes the chunk the file
    /// waits for appends it and every encoded chunk after it, while the
    /// others go on encoding. The bytes are exactly those of
    /// [`Self::encode_shard_from`].
    pub(crate) fn encode_shard_from_streamed(
        &self,
        src: &[u8],
        src_shape: &[u64],
        src_start: &[u64],
        repr: &ChunkRepr,
        sink: &mut dyn BytesSink,
    ) -> Result<bool, CodecError> {
        if !self.streams() {
            return Ok(false);
        }
        let shard = self.shard(repr)?;
        let encode = |i: usize| Self::encode_inner_from(&shard, i, src, src_shape, src_start);
        let ordered = InOrder {
            ready: Mutex::new(Ready {
                chunks: (0..shard.n).map(|_| None).collect(),
                from: 0,
                end: 0,
                bytes: 0,
            }),
            writer: Mutex::new(Writer {
                sink,
                lengths: Vec::with_capacity(shard.n),
            }),
        };
        let taken = AtomicUsize::new(0);
        let failure: Mutex<Option<CodecError>> = Mutex::new(None);
        let fail = |err: CodecError| {
            lock(&failure).get_or_insert(err);
        };
        rayon::scope(|scope| {
            for _ in 0..rayon::current_num_threads().clamp(1, shard.n.max(1)) {
                scope.spawn(|_| {
                    while lock(&failure).is_none() {
                        let i = taken.fetch_add(1, Ordering::Relaxed);
                        if i >= shard.n {
                            break;
                        }
                        if let Err(err) = encode(i).and_then(|chunk| ordered.put(i, chunk)) {
                            fail(err);
                        }
                    }
                });
            }
        });
        if let Some(err) = failure.into_inner().unwrap_or_else(PoisonError::into_inner) {
            return Err(err);
        }
        let InOrder { ready, writer } = ordered;
        let mut ready = ready.into_inner().unwrap_or_else(PoisonError::into_inner);
        let mut writer = writer.into_inner().unwrap_or_else(PoisonError::into_inner);
        // Every chunk was encoded; those no thread appended go now.
        if ready.end != shard.n {
            return Err(missing(ready.end));
        }
        writer.append(ready.take())?;
        if writer.lengths.len() != shard.n {
            return Err(missing(writer.lengths.len()));
        }
        let index = Self::encode_index(&shard, 0, writer.lengths.iter().copied())?;
        writer.sink.append(&[&index])?;
        Ok(true)
    }

    /// Reads the index and the stored bytes of every inner chunk the
    /// updates do not cover entirely, decodes only those the updates
    /// touch, re-encodes those in parallel, and copies the stored bytes of
    /// the rest unchanged.
    pub(super) fn encode_shard_partial(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        updates: &[(ChunkBox, ChunkData<'_>)],
    ) -> Result<Option<Vec<u8>>, CodecError> {
        partial::check_updates(repr, updates)?;
        let shard = self.shard(repr)?;
        let index = self
            .read_index(&shard, reader)?
            .unwrap_or_else(|| vec![EMPTY; 2 * shard.n]);
        // Per inner chunk: whether an update touches it, and whether one
        // update covers it entirely (then its old value is not needed).
        let mut touched = vec![false; shard.n];
        let mut covered = vec![false; shard.n];
        for (b, _) in updates {
            for (i, piece) in shard.plan(b)? {
                touched[i] = true;
                covered[i] |= piece.covers_chunk;
            }
        }
        let wanted: Vec<usize> = (0..shard.n).filter(|&i| !covered[i]).collect();
        let stored = Self::read_inner(reader, &index, &wanted)?.unwrap_or_default();
        let rewritten = (0..shard.n)
            .into_par_iter()
            .filter(|&i| touched[i])
            .map(|i| {
                let old = match stored.get(&i) {
                    Some(bytes) if !covered[i] => {
                        Some(shard.inner.decode(bytes.clone(), &shard.inner_repr)?)
                    }
                    _ => None,
                };
                let chunk = ChunkData::merge(
                    old,
                    &shard.inner_repr,
                    &shard.inner_shape,
                    &shard.start(i),
                    updates,
                )?;
                Ok((i, Self::encode_inner(&shard, chunk)?))
            })
            .collect::<Result<BTreeMap<usize, Option<Vec<u8>>>, CodecError>>()?;
        let chunks: Vec<Option<&[u8]>> = (0..shard.n)
            .map(|i| match rewritten.get(&i) {
                Some(new) => new.as_deref(),
                None => stored.get(&i).map(Vec::as_slice),
            })
            .collect();
        if chunks.iter().all(Option::is_none) {
            return Ok(None);
        }
        self.assemble(&shard, &chunks).map(Some)
    }
}

/// The fewest stored bytes a streamed shard appends at once while its
/// inner chunks are encoded (the rest go at the end): a write of each
/// small inner chunk on its own would be a system call per chunk.
const MIN_APPEND: usize = 128 << 10;

/// The error of a streamed shard whose inner chunk `i` was never encoded
/// (an encoding thread stopped early): the shard is not stored.
fn missing(i: usize) -> CodecError {
    CodecError::Corrupt {
        codec: super::NAME,
        reason: format!("inner chunk {i} of the shard was not encoded"),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The inner chunks of a streamed shard ([`ShardingCodec::encode_shard_from_streamed`]),
/// put as they are encoded and appended to the sink in order.
struct InOrder<'s> {
    ready: Mutex<Ready>,
    writer: Mutex<Writer<'s>>,
}

/// The encoded inner chunks not yet appended.
struct Ready {
    /// Each inner chunk once encoded (`Some(None)`: not stored), until
    /// taken to be appended.
    chunks: Vec<Option<Option<Vec<u8>>>>,
    /// The first inner chunk not taken.
    from: usize,
    /// The first inner chunk from `from` on not yet encoded: those before
    /// it are the run the sink can take next.
    end: usize,
    /// The stored bytes of that run.
    bytes: usize,
}

impl Ready {
    /// Puts inner chunk `i` and extends the run past it and any chunks
    /// after it already put (each chunk joins the run once).
    fn put(&mut self, i: usize, chunk: Option<Vec<u8>>) {
        if let Some(slot) = self.chunks.get_mut(i) {
            *slot = Some(chunk);
        }
        while let Some(Some(chunk)) = self.chunks.get(self.end) {
            self.bytes += chunk.as_ref().map_or(0, Vec::len);
            self.end += 1;
        }
    }

    /// Takes the run out.
    fn take(&mut self) -> Vec<Option<Vec<u8>>> {
        let run = self.chunks[self.from..self.end]
            .iter_mut()
            .filter_map(Option::take)
            .collect();
        (self.from, self.bytes) = (self.end, 0);
        run
    }

    /// Whether the run is worth an append of its own while encoding goes on.
    fn worth_appending(&self) -> bool {
        self.bytes >= MIN_APPEND
    }
}

/// The sink, and the stored length of each inner chunk appended to it
/// (`None`: not stored).
struct Writer<'s> {
    sink: &'s mut dyn BytesSink,
    lengths: Vec<Option<usize>>,
}

impl Writer<'_> {
    /// Appends `run`, the next encoded inner chunks, in one call.
    fn append(&mut self, run: Vec<Option<Vec<u8>>>) -> Result<(), CodecError> {
        let parts: Vec<&[u8]> = run.iter().flatten().map(Vec::as_slice).collect();
        if !parts.is_empty() {
            self.sink.append(&parts)?;
        }
        self.lengths
            .extend(run.iter().map(|chunk| chunk.as_ref().map(Vec::len)));
        Ok(())
    }
}

impl InOrder<'_> {
    /// Puts inner chunk `i`, then appends the run of encoded chunks the
    /// sink can take next once it is worth an append, unless another
    /// thread is appending (which then sees it).
    fn put(&self, i: usize, chunk: Option<Vec<u8>>) -> Result<(), CodecError> {
        lock(&self.ready).put(i, chunk);
        loop {
            let Ok(mut writer) = self.writer.try_lock() else {
                return Ok(());
            };
            loop {
                let run = {
                    let mut ready = lock(&self.ready);
                    if !ready.worth_appending() {
                        break;
                    }
                    ready.take()
                };
                writer.append(run)?;
            }
            drop(writer);
            // A chunk put after this thread last looked, while it still
            // held the writer, was left by its own thread (which could not
            // take the writer): look once more now that it is free.
            if !lock(&self.ready).worth_appending() {
                return Ok(());
            }
        }
    }
}
