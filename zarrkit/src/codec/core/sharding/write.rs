//! Encoding shards: whole (each inner chunk straight from the caller's
//! buffer) and in part (only the inner chunks an update touches are
//! re-encoded, the stored bytes of the rest copied), one path for
//! fixed-size and variable-length data.

use super::index::Shard;
use super::{EMPTY, ShardingCodec};
use crate::codec::copy::BoxCopy;
use crate::codec::partial::{self, BytesRangeReader, ChunkBox};
use crate::codec::{ChunkData, ChunkRepr, CodecError};
use rayon::prelude::*;
use std::collections::BTreeMap;

impl ShardingCodec {
    /// Encodes an inner chunk, or `None` when it equals the fill value
    /// everywhere (such inner chunks are not stored).
    fn encode_inner(shard: &Shard, chunk: ChunkData<'_>) -> Result<Option<Vec<u8>>, CodecError> {
        if chunk.is_fill(&shard.inner_repr) {
            return Ok(None);
        }
        shard.inner.encode(chunk, &shard.inner_repr).map(Some)
    }

    /// Encodes every inner chunk, each built by `inner`, in parallel, and
    /// assembles the shard.
    fn encode_inner_chunks(
        &self,
        shard: &Shard,
        inner: impl Fn(usize) -> Result<ChunkData<'static>, CodecError> + Sync,
    ) -> Result<Vec<u8>, CodecError> {
        let encoded = (0..shard.n)
            .into_par_iter()
            .map(|i| Self::encode_inner(shard, inner(i)?))
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
            decoded.extract_box(&shard.inner_repr, &shard.shape, &b)
        })
    }

    /// Copies each inner chunk straight from `src` and encodes them in
    /// parallel: the shard is never held decoded.
    pub(super) fn encode_shard_from(
        &self,
        src: &[u8],
        src_shape: &[u64],
        src_start: &[u64],
        repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let shard = self.shard(repr)?;
        let zeros = vec![0u64; shard.shape.len()];
        let inner_bytes = shard.inner_repr.size_bytes()?;
        self.encode_inner_chunks(&shard, |i| {
            let mut chunk = vec![0u8; inner_bytes];
            let start: Vec<u64> = shard
                .start(i)
                .iter()
                .zip(src_start)
                .map(|(a, b)| a + b)
                .collect();
            BoxCopy {
                src_shape,
                src_start: &start,
                dst_shape: &shard.inner_shape,
                dst_start: &zeros,
                shape: &shard.inner_shape,
                elem: shard.elem,
            }
            .run(src, &mut chunk);
            Ok(chunk.into())
        })
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
