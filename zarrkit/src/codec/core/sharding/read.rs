//! Decoding shards: whole (straight into the caller's buffer for
//! fixed-size data) and in part (the index, then only the inner chunks the
//! boxes touch), one path for fixed-size and variable-length data.

use super::ShardingCodec;
use super::index::Shard;
use crate::codec::copy::BoxCopy;
use crate::codec::data::Assembler;
use crate::codec::partial::{self, BytesRangeReader, ChunkBox};
use crate::codec::{ChunkData, ChunkRepr, CodecError};
use rayon::prelude::*;
use std::collections::BTreeMap;

impl ShardingCodec {
    /// Decodes the inner chunks of a whole shard held in memory into `out`.
    pub(super) fn decode_shard_into(
        &self,
        shard: &Shard,
        encoded: &[u8],
        out: &mut [u8],
    ) -> Result<(), CodecError> {
        let index = self.whole_index(shard, encoded)?;
        self.decode_shard_with_index(shard, &index, encoded, out)
    }

    /// As [`Self::decode_shard_into`], with the index already decoded and
    /// checked against `encoded` by [`Self::whole_index`].
    pub(super) fn decode_shard_with_index(
        &self,
        shard: &Shard,
        index: &[u64],
        encoded: &[u8],
        out: &mut [u8],
    ) -> Result<(), CodecError> {
        let decode_one = |i: usize| -> Result<Option<Vec<u8>>, CodecError> {
            Self::entry(index, i)
                .map(|(offset, nbytes)| {
                    // Checked against the shard's length in `decode_index`.
                    let bytes = encoded[offset as usize..(offset + nbytes) as usize].to_vec();
                    shard
                        .inner
                        .decode(bytes, &shard.inner_repr)?
                        .into_fixed(super::NAME)
                })
                .transpose()
        };
        if shard.shape.is_empty() {
            // A 0-d shard holds exactly one inner chunk.
            match decode_one(0)? {
                Some(chunk) => out.copy_from_slice(&chunk),
                None => shard.inner_repr.fill_value.fill(out),
            }
            return Ok(());
        }
        // Inner chunks sharing their first grid coordinate fill one
        // contiguous slab of `out`: slabs are filled in parallel, and the
        // chunks of each slab decode in parallel too.
        let slabs = shard.grid[0] as usize;
        let per_slab = shard.n / slabs;
        let slab_bytes = out.len() / slabs;
        let slab_shape: Vec<u64> = std::iter::once(shard.inner_shape[0])
            .chain(shard.shape[1..].iter().copied())
            .collect();
        let zeros = vec![0u64; shard.shape.len()];
        out.par_chunks_mut(slab_bytes)
            .enumerate()
            .try_for_each(|(g, slab)| {
                let first = g * per_slab;
                let decoded = (first..first + per_slab)
                    .into_par_iter()
                    .map(decode_one)
                    .collect::<Result<Vec<_>, _>>()?;
                for (j, chunk) in decoded.into_iter().enumerate() {
                    let mut dst_start = shard.start(first + j);
                    dst_start[0] = 0;
                    let copy = BoxCopy {
                        src_shape: &shard.inner_shape,
                        src_start: &zeros,
                        dst_shape: &slab_shape,
                        dst_start: &dst_start,
                        shape: &shard.inner_shape,
                        elem: shard.elem,
                    };
                    match chunk {
                        Some(chunk) => copy.run(&chunk, slab),
                        None => copy.for_each_run(|_, d, len| {
                            shard.inner_repr.fill_value.fill(&mut slab[d..d + len]);
                        }),
                    }
                }
                Ok(())
            })
    }

    /// Decodes a whole shard: fixed-size data into a zeroed buffer that
    /// the inner chunks decode into in parallel, variable-length data by
    /// assembling the inner chunks' elements.
    pub(super) fn decode_shard(
        &self,
        encoded: Vec<u8>,
        repr: &ChunkRepr,
    ) -> Result<ChunkData<'static>, CodecError> {
        // The declared shard shape is untrusted: check the stored index
        // before allocating the decoded shard, so that a shard of a few
        // bytes under an edited `chunk_shape` of 10^11 is a corrupt-shard
        // error, not an allocation that aborts the process. Then ask the
        // allocator for the legitimate size without aborting.
        let shard = self.shard(repr)?;
        let index = self.whole_index(&shard, &encoded)?;
        if repr.data_type.is_variable_length() {
            let decoded = (0..shard.n)
                .into_par_iter()
                .filter_map(|i| Self::entry(&index, i).map(|e| (i, e)))
                .map(|(i, (offset, nbytes))| {
                    // Checked against the shard's length in `whole_index`.
                    let bytes = encoded[offset as usize..(offset + nbytes) as usize].to_vec();
                    Ok((i, shard.inner.decode(bytes, &shard.inner_repr)?))
                })
                .collect::<Result<BTreeMap<_, _>, CodecError>>()?;
            let whole = ChunkBox::new(vec![0; shard.shape.len()], shard.shape.clone());
            return shard.assemble_box(&whole, &decoded, &[]);
        }
        let size = repr.size_bytes()?;
        // Zeroed by the allocator (calloc), not filled: writing 32 MiB of
        // zeros per shard before decoding into it cost a sixth of a whole
        // sharded read.
        let mut out =
            bytemuck::allocation::try_zeroed_vec(size).map_err(|()| CodecError::TooLarge {
                shape: repr.shape.clone(),
            })?;
        self.decode_shard_with_index(&shard, &index, &encoded, &mut out)?;
        Ok(out.into())
    }

    /// Reads the index (one ranged read, from the end when it is stored
    /// there), then the inner chunks the boxes touch (one batch), and
    /// decodes those in parallel; the boxes' other elements are the fill
    /// value.
    pub(super) fn decode_shard_partial(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        boxes: &[ChunkBox],
    ) -> Result<Option<Vec<ChunkData<'static>>>, CodecError> {
        partial::check_boxes(repr, boxes)?;
        let shard = self.shard(repr)?;
        let Some(index) = self.read_index(&shard, reader)? else {
            return Ok(None);
        };
        let mut wanted = Vec::new();
        for b in boxes {
            shard.for_each_touched(b, |i| wanted.push(i));
        }
        wanted.sort_unstable();
        wanted.dedup();
        // Inner chunks whose own chain reads ranges (a nested shard, or
        // `bytes` with no compression), that are larger than the gap worth
        // a request of its own, and that no box covers entirely are read in
        // parts through a window on the shard; the rest are read whole, in
        // one batch.
        let ranged: Vec<usize> = if shard.inner.capabilities().partial_decode {
            wanted
                .iter()
                .copied()
                .filter(|&i| {
                    // An entry far larger than the decoded inner chunk is
                    // corrupt: the whole-chunk path reads and rejects it.
                    let plausible = shard.elem as u64 * shard.inner_len() * 2 + (1 << 20);
                    if Self::entry(&index, i)
                        .is_none_or(|(_, n)| n <= partial::COALESCE_GAP || n > plausible)
                    {
                        return false;
                    }
                    let start = shard.start(i);
                    !boxes.iter().any(|b| {
                        b.intersect_box(&start, &shard.inner_shape)
                            .is_some_and(|c| c.shape() == shard.inner_shape.as_slice())
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        wanted.retain(|i| !ranged.contains(i));
        let parts = ranged
            .par_iter()
            .filter_map(|&i| Self::entry(&index, i).map(|e| (i, e)))
            .map(|(i, (offset, length))| {
                let start = shard.start(i);
                let inner_boxes: Vec<(usize, ChunkBox)> = boxes
                    .iter()
                    .enumerate()
                    .filter_map(|(k, b)| {
                        let common = b.intersect_box(&start, &shard.inner_shape)?;
                        let rel: Vec<u64> = common
                            .start()
                            .iter()
                            .zip(&start)
                            .map(|(c, s)| c - s)
                            .collect();
                        Some((k, ChunkBox::new(rel, common.shape().to_vec())))
                    })
                    .collect();
                let window = partial::WindowReader {
                    reader,
                    offset,
                    length,
                };
                let only: Vec<ChunkBox> = inner_boxes.iter().map(|(_, b)| b.clone()).collect();
                let decoded = shard
                    .inner
                    .decode_partial(&window, &shard.inner_repr, &only)?;
                Ok((i, inner_boxes, decoded))
            })
            .collect::<Result<Vec<_>, CodecError>>()?;
        let Some(stored) = Self::read_inner(reader, &index, &wanted)? else {
            return Ok(None);
        };
        let decode =
            |(i, bytes): (usize, Vec<u8>)| Ok((i, shard.inner.decode(bytes, &shard.inner_repr)?));
        // The common read of one whole inner chunk (a data loader's unit)
        // decodes on this thread and hands the chunk over without a copy.
        if let ([b], [i]) = (boxes, wanted.as_slice()) {
            if ranged.is_empty() && b.start() == shard.start(*i) && b.shape() == shard.inner_shape {
                let chunk = match stored.into_iter().next() {
                    Some(entry) => decode(entry)?.1,
                    None => ChunkData::fill(&shard.inner_repr, b.shape())?,
                };
                return Ok(Some(vec![chunk]));
            }
        }
        let decoded: BTreeMap<usize, ChunkData<'static>> = stored
            .into_par_iter()
            .map(decode)
            .collect::<Result<_, CodecError>>()?;
        boxes
            .iter()
            .enumerate()
            .map(|(k, b)| {
                // The parts of ranged inner chunks in this box, where they
                // start within the shard. A shard whose index lists an inner
                // chunk that is then missing is corrupt only if the shard
                // vanished meanwhile: read as fill.
                let mut box_parts = Vec::new();
                for (i, inner_boxes, decoded) in &parts {
                    let Some(decoded) = decoded else { continue };
                    let start = shard.start(*i);
                    for ((kk, inner), data) in inner_boxes.iter().zip(decoded) {
                        if *kk == k {
                            box_parts.push((start.clone(), inner, data));
                        }
                    }
                }
                shard.assemble_box(b, &decoded, &box_parts)
            })
            .collect::<Result<Vec<_>, CodecError>>()
            .map(Some)
    }
}

impl Shard {
    /// The elements of box `b` of the shard: from the decoded inner chunks
    /// it touches, then from `parts` (boxes of inner chunks that start at
    /// the given shard coordinates, decoded in part), else the fill value.
    pub(super) fn assemble_box(
        &self,
        b: &ChunkBox,
        decoded: &BTreeMap<usize, ChunkData<'static>>,
        parts: &[(Vec<u64>, &ChunkBox, &ChunkData<'static>)],
    ) -> Result<ChunkData<'static>, CodecError> {
        let mut out = Assembler::new(&self.inner_repr, b.shape(), true)?;
        self.for_each_touched(b, |i| {
            let Some(chunk) = decoded.get(&i) else {
                return;
            };
            let mut offsets = Default::default();
            if let Some(copy) = self.shared_copy(b, i, 0, true, &mut offsets) {
                out.copy(chunk, &copy);
            }
        });
        for (start, inner, data) in parts {
            let dst_start: Vec<u64> = inner
                .start()
                .iter()
                .zip(start)
                .zip(b.start())
                .map(|((r, s), bs)| r + s - bs)
                .collect();
            let zeros = vec![0; inner.shape().len()];
            out.copy(
                data,
                &BoxCopy {
                    src_shape: inner.shape(),
                    src_start: &zeros,
                    dst_shape: b.shape(),
                    dst_start: &dst_start,
                    shape: inner.shape(),
                    elem: 0,
                },
            );
        }
        out.finish(super::NAME)
    }
}
