//! Decoding shards: whole (straight into the caller's buffer for
//! fixed-size data) and in part (the index, then only the inner chunks the
//! boxes touch), one path for fixed-size and variable-length data.
//!
//! A partial read plans each box over the inner chunk grid with the
//! array's planner (`grid/plan.rs`, through `Shard::plan`): the inner
//! chunks it touches and the piece of each. Into the caller's buffer
//! ([`ArrayToBytesCodec::decode_partial_into`](crate::codec::ArrayToBytesCodec::decode_partial_into)),
//! each inner chunk is copied once from its decoded form, and inner chunks
//! the box covers whose elements are contiguous there decode into it
//! directly: the nested use of the planner an array read makes of its own
//! chunks. A box of the whole shard read through a reader (an array read
//! covering the shard, on a local store) is read and decoded slab by slab
//! instead (`decode_shard_streamed`), each slab decoding while the next
//! ones are read; both whole paths place inner chunks through one
//! `SlabLayout`.

use super::ShardingCodec;
use super::index::{Shard, corrupt};
use crate::codec::copy::{self, BoxCopy};
use crate::codec::data::Assembler;
use crate::codec::partial::{self, BoxOut, BytesRangeReader, ChunkBox};
use crate::codec::{ChunkData, ChunkRepr, CodecError};
use crate::grid::plan::Piece;
use crate::store::buffers::BUFFERS;
use crate::store::{ByteRange, StoreError};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

impl ShardingCodec {
    /// Decodes the inner chunks of a whole shard held in memory into the
    /// box of `out` it fills (`out.start`, the shard's shape): a buffer of
    /// the shard alone, or the caller's region buffer, so that a shard read
    /// whole copies each element once from its inner chunk into place.
    pub(super) fn decode_shard_into(
        &self,
        shard: &Shard,
        encoded: &[u8],
        out: BoxOut<'_>,
    ) -> Result<(), CodecError> {
        let index = self.whole_index(shard, encoded)?;
        self.decode_shard_with_index(shard, &index, encoded, out)
    }

    /// As [`Self::decode_shard_into`], with the index already decoded and
    /// checked against `encoded` by [`Self::whole_index`]. The caller has
    /// checked that the shard's box fits in `out`.
    pub(super) fn decode_shard_with_index(
        &self,
        shard: &Shard,
        index: &[u64],
        encoded: &[u8],
        out: BoxOut<'_>,
    ) -> Result<(), CodecError> {
        // Decodes inner chunk `i` into `dst` (one inner chunk's bytes):
        // `false`, writing nothing, when it is not stored.
        let decode_into = |i: usize, dst: &mut [u8]| -> Result<bool, CodecError> {
            let Some((offset, nbytes)) = Self::entry(index, i) else {
                return Ok(false);
            };
            // Checked against the shard's length in `whole_index`.
            let bytes = encoded[offset as usize..(offset + nbytes) as usize].to_vec();
            shard.inner.decode_into(bytes, &shard.inner_repr, dst)?;
            Ok(true)
        };
        if shard.shape.is_empty() {
            // A 0-d shard holds exactly one inner chunk.
            if !decode_into(0, out.buf)? {
                shard.inner_repr.fill_value.fill(out.buf);
            }
            return Ok(());
        }
        let Some((layout, rows)) = SlabLayout::new(shard, out) else {
            return Ok(());
        };
        // With a slab for every thread and more, each slab decodes its
        // inner chunks in turn; with fewer, the inner chunks of a slab
        // decode in parallel.
        let sequential = layout.slabs >= 2 * rayon::current_num_threads();
        rows.par_chunks_mut(layout.slab_bytes)
            .enumerate()
            .try_for_each(|(g, slab)| layout.decode(g, slab, sequential, &decode_into))
    }

    /// Decodes a whole shard of fixed-size elements read through `reader`
    /// into the box of `out` it fills, the index already read: the stored
    /// bytes of each slab of inner chunks (those sharing their first grid
    /// coordinate) are read in turn, and each slab decodes as soon as it is
    /// read, while the next is read. Read whole first, a 256³ shard of 32³
    /// zstd inner chunks kept one core busy reading its 13 MiB and the
    /// other idle; cold, both waited for the whole file. A shard with
    /// fewer slabs than twice the threads is read in one range and its
    /// slabs decode in parallel. `false` when the shard vanished after its
    /// index was read (nothing is then known of its elements).
    pub(super) fn decode_shard_streamed(
        &self,
        reader: &dyn BytesRangeReader,
        shard: &Shard,
        index: &[u64],
        out: BoxOut<'_>,
    ) -> Result<bool, CodecError> {
        // A 0-d shard never comes here: the caller reads it through the
        // other paths.
        let Some((layout, rows)) = SlabLayout::new(shard, out) else {
            return Ok(true);
        };
        let threads = rayon::current_num_threads();
        let per_read = if layout.slabs >= 2 * threads {
            1
        } else {
            layout.slabs
        };
        let reads: Vec<SlabRead> = (0..layout.slabs)
            .step_by(per_read)
            .map(|g| SlabRead::new(index, g * layout.per_slab..(g + per_read) * layout.per_slab))
            .collect();
        // Tell the store everything the reads will ask for, so that a
        // device reads ahead of the decoding.
        let first = reads
            .iter()
            .filter_map(|r| r.merged.first())
            .map(|m| m.0)
            .min();
        let end = reads
            .iter()
            .filter_map(|r| r.merged.last())
            .map(|m| m.0.saturating_add(m.1))
            .max();
        if let (Some(first), Some(end)) = (first, end) {
            reader.will_read(ByteRange::new(first, end - first));
        }
        let slots: Vec<Mutex<Option<&mut [u8]>>> = rows
            .chunks_mut(layout.slab_bytes * per_read)
            .map(|group| Mutex::new(Some(group)))
            .collect();
        let next = AtomicUsize::new(0);
        // Set when a read or decode failed or the shard vanished: the
        // other workers take no more reads.
        let (stop, vanished) = (AtomicBool::new(false), AtomicBool::new(false));
        let fail = |error: CodecError| {
            stop.store(true, Ordering::Relaxed);
            error
        };
        // Each worker takes the next read in order (as a device reads
        // ahead), reads it and decodes its slabs.
        let work = |_| -> Result<(), CodecError> {
            loop {
                let r = next.fetch_add(1, Ordering::Relaxed);
                let (Some(read), Some(slot)) = (reads.get(r), slots.get(r)) else {
                    return Ok(());
                };
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                let Some(rows) = slot.lock().unwrap_or_else(PoisonError::into_inner).take() else {
                    continue;
                };
                let Some(values) = read.read(reader).map_err(fail)? else {
                    vanished.store(true, Ordering::Relaxed);
                    stop.store(true, Ordering::Relaxed);
                    return Ok(());
                };
                let decode_into = |i: usize, dst: &mut [u8]| -> Result<bool, CodecError> {
                    let Some(bytes) = read.bytes(&values, i)? else {
                        return Ok(false);
                    };
                    shard
                        .inner
                        .decode_into(bytes.to_vec(), &shard.inner_repr, dst)?;
                    Ok(true)
                };
                let g0 = r * per_read;
                let decoded = if per_read == 1 {
                    layout.decode(g0, rows, true, &decode_into)
                } else {
                    rows.par_chunks_mut(layout.slab_bytes)
                        .enumerate()
                        .try_for_each(|(j, slab)| layout.decode(g0 + j, slab, false, &decode_into))
                };
                BUFFERS.give(values);
                decoded.map_err(fail)?;
            }
        };
        (0..threads.min(reads.len()))
            .into_par_iter()
            .try_for_each(work)?;
        Ok(!vanished.into_inner())
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
            let whole = ChunkBox::whole(&shard.shape);
            let fetched = Fetched {
                plans: vec![shard.plan(&whole)?],
                whole: decoded,
                parts: BTreeMap::new(),
                encoded: BTreeMap::new(),
            };
            let mut out = Assembler::new(&shard.inner_repr, &shard.shape, true)?;
            fetched.for_each_copy(
                &shard,
                0,
                &shard.shape,
                &vec![0; shard.shape.len()],
                |data, copy| {
                    if let Some(data) = data {
                        out.copy(data, &copy);
                    }
                },
            );
            return out.finish(super::NAME);
        }
        let size = repr.size_bytes()?;
        // Zeroed by the allocator (calloc), not filled: writing 32 MiB of
        // zeros per shard before decoding into it cost a sixth of a whole
        // sharded read.
        let mut out =
            bytemuck::allocation::try_zeroed_vec(size).map_err(|()| CodecError::TooLarge {
                shape: repr.shape.clone(),
            })?;
        let zeros = vec![0; shard.shape.len()];
        let whole = BoxOut {
            buf: &mut out,
            shape: &shard.shape,
            start: &zeros,
        };
        self.decode_shard_with_index(&shard, &index, &encoded, whole)?;
        Ok(out.into())
    }

    /// Reads the inner chunks that `plans` (of boxes, over the inner
    /// chunks) touch (one batch, found through the shard's `index`), and
    /// decodes those in parallel, except those `direct` lists (sorted),
    /// which are returned encoded for the caller to decode straight into
    /// its buffer. `None` when the shard is not stored any more (it
    /// vanished after its index was read).
    fn fetch_partial(
        &self,
        reader: &dyn BytesRangeReader,
        shard: &Shard,
        index: &[u64],
        plans: Vec<Vec<(usize, Piece)>>,
        direct: &[usize],
    ) -> Result<Option<Fetched>, CodecError> {
        let mut wanted: Vec<usize> = plans.iter().flatten().map(|(i, _)| *i).collect();
        wanted.sort_unstable();
        wanted.dedup();
        // Inner chunks whose own chain reads ranges (a nested shard, or
        // `bytes` with no compression), that are larger than the gap worth
        // a request of its own, and that no box covers entirely are read in
        // parts through a window on the shard; the rest are read whole, in
        // one batch.
        let mut ranged: Vec<usize> = Vec::new();
        if shard.inner.capabilities().partial_decode {
            // An entry far larger than the decoded inner chunk is corrupt:
            // the whole-chunk path reads and rejects it.
            let plausible = shard.elem as u64 * shard.inner_len() * 2 + (1 << 20);
            ranged = wanted
                .iter()
                .copied()
                .filter(|&i| {
                    Self::entry(index, i)
                        .is_some_and(|(_, n)| n > partial::COALESCE_GAP && n <= plausible)
                        && !plans
                            .iter()
                            .flatten()
                            .any(|(j, piece)| *j == i && piece.covers_chunk)
                })
                .collect();
            wanted.retain(|i| ranged.binary_search(i).is_err());
        }
        // The parts of ranged inner chunks, per (box, inner chunk), each
        // decoded by the inner chain's own partial decoder.
        let parts = plans
            .iter()
            .enumerate()
            .flat_map(|(k, plan)| plan.iter().map(move |(i, piece)| (k, *i, piece)))
            .filter(|(_, i, _)| ranged.binary_search(i).is_ok())
            .collect::<Vec<_>>()
            .into_par_iter()
            .filter_map(|(k, i, piece)| Self::entry(index, i).map(|e| (k, i, piece, e)))
            .map(|(k, i, piece, (offset, length))| {
                let window = partial::WindowReader {
                    reader,
                    offset,
                    length,
                };
                let b = ChunkBox::new(piece.in_chunk.clone(), piece.shape.clone());
                let part = shard
                    .inner
                    .decode_partial(&window, &shard.inner_repr, std::slice::from_ref(&b))?
                    .and_then(|parts| parts.into_iter().next());
                if let Some(part) = &part {
                    part.check_shape(&shard.inner_repr, &piece.shape)?;
                }
                Ok(((k, i), part))
            })
            .collect::<Result<Vec<_>, CodecError>>()?
            .into_iter()
            // A shard whose index lists an inner chunk that is then missing
            // is corrupt only if the shard vanished meanwhile: read as fill.
            .filter_map(|(at, part)| part.map(|part| (at, part)))
            .collect();
        let Some(mut stored) = Self::read_inner(reader, index, &wanted)? else {
            return Ok(None);
        };
        let encoded: BTreeMap<usize, Vec<u8>> = direct
            .iter()
            .filter_map(|i| stored.remove_entry(i))
            .collect();
        // Fixed-size inner chunks decode into buffers of the process's
        // pool, which the caller gives back once it has copied them
        // ([`Fetched::recycle`]): fresh ones faulted in their pages on
        // every read of a region.
        let fixed = !shard.inner_repr.data_type.is_variable_length();
        let whole = stored
            .into_par_iter()
            .map(|(i, bytes)| {
                if fixed {
                    let size = shard.inner_repr.size_bytes()?;
                    let mut buffer = BUFFERS.buffer(size).ok_or_else(|| CodecError::TooLarge {
                        shape: shard.inner_repr.shape.clone(),
                    })?;
                    // The stored bytes' buffer, when the chain only read
                    // it, goes back to the pool too.
                    match shard
                        .inner
                        .decode_into_spent(bytes, &shard.inner_repr, &mut buffer)
                    {
                        Ok(spent) => BUFFERS.give(spent),
                        Err(error) => {
                            BUFFERS.give([buffer]);
                            return Err(error);
                        }
                    }
                    return Ok((i, ChunkData::from(buffer)));
                }
                let chunk = shard.inner.decode(bytes, &shard.inner_repr)?;
                chunk.check(&shard.inner_repr)?;
                Ok((i, chunk))
            })
            .collect::<Result<_, CodecError>>()?;
        Ok(Some(Fetched {
            plans,
            whole,
            parts,
            encoded,
        }))
    }

    /// Decodes `boxes` of a shard read through `reader` (see
    /// [`Self::fetch_partial`]); the boxes' elements of inner chunks not
    /// stored are the fill value.
    pub(super) fn decode_shard_partial(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        boxes: &[ChunkBox],
    ) -> Result<Option<Vec<ChunkData<'static>>>, CodecError> {
        partial::check_boxes(repr, boxes)?;
        let shard = self.shard(repr)?;
        // The index first: a shard declared huge is refused by its stored
        // index before a plan of its inner chunks is built.
        let Some(index) = self.read_index(&shard, reader)? else {
            return Ok(None);
        };
        let plans = boxes
            .iter()
            .map(|b| shard.plan(b))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(mut fetched) = self.fetch_partial(reader, &shard, &index, plans, &[])? else {
            return Ok(None);
        };
        // The common read of one whole inner chunk (a data loader's unit)
        // hands the decoded chunk over without a copy.
        if let [plan] = fetched.plans.as_slice()
            && let [(i, piece)] = plan.as_slice()
            && fetched.parts.is_empty()
            && piece.covers_chunk
        {
            let chunk = match fetched.whole.remove(i) {
                Some(chunk) => chunk,
                None => ChunkData::fill(&shard.inner_repr, &piece.shape)?,
            };
            return Ok(Some(vec![chunk]));
        }
        let boxes = boxes
            .iter()
            .enumerate()
            .map(|(k, b)| {
                let mut out = Assembler::new(&shard.inner_repr, b.shape(), true)?;
                fetched.for_each_copy(&shard, k, b.shape(), &vec![0; b.ndim()], |data, copy| {
                    if let Some(data) = data {
                        out.copy(data, &copy);
                    }
                });
                out.finish(super::NAME)
            })
            .collect::<Result<Vec<_>, CodecError>>();
        fetched.recycle();
        boxes.map(Some)
    }

    /// Decodes box `b` of a shard of fixed-size elements read through
    /// `reader` straight into `out`: each inner chunk the box touches is
    /// decoded in parallel into its own buffer and copied once into `out`;
    /// the elements of inner chunks not stored are the fill value.
    pub(super) fn decode_shard_partial_into(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        b: &ChunkBox,
        out: BoxOut<'_>,
    ) -> Result<bool, CodecError> {
        if repr.data_type.is_variable_length() {
            let part = self.decode_shard_partial(reader, repr, std::slice::from_ref(b))?;
            return partial::copy_part_into(part, repr, b, out);
        }
        let BoxOut {
            buf: out,
            shape: out_shape,
            start: out_start,
        } = out;
        let shard = self.shard(repr)?;
        // Inner chunks the box covers whose elements are contiguous in
        // `out` decode straight into it: no copy at all.
        let elem = shard.elem;
        let Some(index) = self.read_index(&shard, reader)? else {
            return Ok(false);
        };
        // A box of the whole shard (an array read covering the shard, on a
        // local store) reads and decodes it slab by slab.
        if !shard.shape.is_empty()
            && b.shape() == shard.shape.as_slice()
            && b.start().iter().all(|&s| s == 0)
        {
            let out = BoxOut {
                buf: out,
                shape: out_shape,
                start: out_start,
            };
            out.check(&shard.shape, elem)?;
            return self.decode_shard_streamed(reader, &shard, &index, out);
        }
        let plan = shard.plan(b)?;
        let mut dst_start = vec![0; out_start.len()];
        let mut direct: Vec<(usize, std::ops::Range<usize>)> = plan
            .iter()
            .filter(|(_, piece)| piece.covers_chunk)
            .filter_map(|(i, piece)| {
                for (d, start) in dst_start.iter_mut().enumerate() {
                    *start = out_start[d] + piece.in_region[d];
                }
                copy::contiguous_range(out_shape, &dst_start, &piece.shape, elem)
                    .map(|range| (*i, range))
            })
            .collect();
        direct.sort_unstable_by_key(|(_, range)| range.start);
        let mut direct_ids: Vec<usize> = direct.iter().map(|(i, _)| *i).collect();
        direct_ids.sort_unstable();
        let Some(mut fetched) =
            self.fetch_partial(reader, &shard, &index, vec![plan], &direct_ids)?
        else {
            return Ok(false);
        };
        if !direct.is_empty() {
            let slices = copy::split_ranges(out, direct.iter().map(|(_, r)| r.clone()))
                .ok_or_else(|| CodecError::OutsideChunk {
                    start: out_start.to_vec(),
                    shape: b.shape().to_vec(),
                    chunk_shape: out_shape.to_vec(),
                })?;
            let decode_one = |(slice, bytes): (&mut [u8], Option<Vec<u8>>)| match bytes {
                Some(bytes) => shard.inner.decode_into(bytes, &shard.inner_repr, slice),
                None => {
                    shard.inner_repr.fill_value.fill(slice);
                    Ok(())
                }
            };
            let encoded: Vec<Option<Vec<u8>>> = direct
                .iter()
                .map(|(i, _)| fetched.encoded.remove(i))
                .collect();
            if slices.len() == 1 {
                // One inner chunk (a data loader's unit): on this thread.
                slices.into_iter().zip(encoded).try_for_each(decode_one)?;
            } else {
                slices
                    .into_par_iter()
                    .zip(encoded)
                    .try_for_each(decode_one)?;
            }
            // Drop the direct pieces from the plan: they are in `out`.
            fetched.plans[0].retain(|(i, _)| direct_ids.binary_search(i).is_err());
        }
        let mut result = Ok(());
        fetched.for_each_copy(&shard, 0, out_shape, out_start, |data, copy| {
            match data.map(|d| d.as_fixed(super::NAME)).transpose() {
                Ok(Some(data)) => copy.run(data, out),
                Ok(None) => copy.for_each_run(|_, d, len| {
                    shard.inner_repr.fill_value.fill(&mut out[d..d + len]);
                }),
                Err(error) => result = Err(error),
            }
        });
        fetched.recycle();
        result.map(|()| true)
    }
}

/// Decodes inner chunk `i` into `dst` (one inner chunk's bytes): `false`,
/// writing nothing, when it is not stored.
type DecodeInner<'d> = dyn Fn(usize, &mut [u8]) -> Result<bool, CodecError> + Sync + 'd;

/// Where a whole shard's inner chunks go in the buffer its box fills:
/// inner chunks sharing their first grid coordinate fill one slab of the
/// planes of the buffer the shard spans (planes of its first dimension
/// are contiguous), so slabs are filled independently.
struct SlabLayout<'a> {
    shard: &'a Shard,
    /// The shard's first element in the buffer.
    out_start: &'a [u64],
    /// The number of slabs, inner chunks per slab, and bytes per slab.
    slabs: usize,
    per_slab: usize,
    slab_bytes: usize,
    /// The shape of a slab: one inner chunk deep, the buffer's elsewhere.
    slab_shape: Vec<u64>,
    inner_bytes: usize,
}

impl<'a> SlabLayout<'a> {
    /// The layout of `shard`'s box in `out`, and the rows of `out` its
    /// slabs fill; `None` when there is nothing to fill or the shard is
    /// 0-d (one inner chunk, no slabs: the caller decodes it).
    fn new(shard: &'a Shard, out: BoxOut<'a>) -> Option<(Self, &'a mut [u8])> {
        let BoxOut {
            buf,
            shape: out_shape,
            start: out_start,
        } = out;
        if shard.shape.is_empty() || buf.is_empty() || shard.n == 0 {
            return None;
        }
        let plane = buf.len() / out_shape[0] as usize;
        let rows = &mut buf
            [out_start[0] as usize * plane..(out_start[0] + shard.shape[0]) as usize * plane];
        let slabs = shard.grid[0] as usize;
        let layout = Self {
            shard,
            out_start,
            slabs,
            per_slab: shard.n / slabs,
            slab_bytes: shard.inner_shape[0] as usize * plane,
            slab_shape: std::iter::once(shard.inner_shape[0])
                .chain(out_shape[1..].iter().copied())
                .collect(),
            inner_bytes: shard.inner_len() as usize * shard.elem,
        };
        Some((layout, rows))
    }

    /// Where inner chunk `i` starts in its slab.
    fn place(&self, i: usize) -> Vec<u64> {
        let mut start = self.shard.start(i);
        start[0] = 0;
        for (s, o) in start.iter_mut().zip(self.out_start).skip(1) {
            *s += o;
        }
        start
    }

    /// Copies a decoded inner chunk (`None`: the fill value) to
    /// `dst_start` of `slab`.
    fn copy_to(&self, dst_start: &[u64], src: Option<&[u8]>, slab: &mut [u8]) {
        let zeros = vec![0u64; self.shard.shape.len()];
        let copy = BoxCopy {
            src_shape: &self.shard.inner_shape,
            src_start: &zeros,
            dst_shape: &self.slab_shape,
            dst_start,
            shape: &self.shard.inner_shape,
            elem: self.shard.elem,
        };
        match src {
            Some(src) => copy.run(src, slab),
            None => copy.for_each_run(|_, d, len| {
                self.shard.inner_repr.fill_value.fill(&mut slab[d..d + len]);
            }),
        }
    }

    /// Decodes the inner chunks of slab `g` into `slab`: in turn
    /// (`sequential`), into one reused buffer or straight into place where
    /// an inner chunk is contiguous there, or else in parallel.
    fn decode(
        &self,
        g: usize,
        slab: &mut [u8],
        sequential: bool,
        decode_into: &DecodeInner<'_>,
    ) -> Result<(), CodecError> {
        let (shard, first) = (self.shard, g * self.per_slab);
        let fill = &shard.inner_repr.fill_value;
        if sequential {
            let mut scratch = Vec::new();
            for i in first..first + self.per_slab {
                let dst_start = self.place(i);
                if let Some(range) = copy::contiguous_range(
                    &self.slab_shape,
                    &dst_start,
                    &shard.inner_shape,
                    shard.elem,
                ) {
                    if !decode_into(i, &mut slab[range.clone()])? {
                        fill.fill(&mut slab[range]);
                    }
                    continue;
                }
                scratch.resize(self.inner_bytes, 0);
                let stored = decode_into(i, &mut scratch)?;
                self.copy_to(&dst_start, stored.then_some(&scratch[..]), slab);
            }
            return Ok(());
        }
        let decoded = (first..first + self.per_slab)
            .into_par_iter()
            .map(|i| {
                let mut chunk = vec![0u8; self.inner_bytes];
                Ok(decode_into(i, &mut chunk)?.then_some(chunk))
            })
            .collect::<Result<Vec<_>, CodecError>>()?;
        for (j, chunk) in decoded.into_iter().enumerate() {
            self.copy_to(&self.place(first + j), chunk.as_deref(), slab);
        }
        Ok(())
    }
}

/// One read of [`ShardingCodec::decode_shard_streamed`]: the stored bytes
/// of a run of inner chunks, as ranges of the shard (nearby ones merged).
struct SlabRead {
    /// The first inner chunk of the run.
    first: usize,
    /// Per inner chunk of the run: the merged range holding it, where it
    /// starts there and its length; `None` when it is not stored.
    at: Vec<Option<(usize, u64, u64)>>,
    /// The ranges to read, `(offset, length)`.
    merged: Vec<(u64, u64)>,
}

impl SlabRead {
    fn new(index: &[u64], run: std::ops::Range<usize>) -> Self {
        let present: Vec<(usize, (u64, u64))> = run
            .clone()
            .filter_map(|i| ShardingCodec::entry(index, i).map(|e| (i, e)))
            .collect();
        let ranges: Vec<(u64, u64)> = present.iter().map(|(_, e)| *e).collect();
        let (merged, placement) = partial::coalesce(&ranges);
        let mut at = vec![None; run.len()];
        for ((i, (_, nbytes)), (m, within)) in present.into_iter().zip(placement) {
            at[i - run.start] = Some((m, within, nbytes));
        }
        Self {
            first: run.start,
            at,
            merged,
        }
    }

    /// Reads the ranges: `None` when the shard has vanished.
    fn read(&self, reader: &dyn BytesRangeReader) -> Result<Option<Vec<Vec<u8>>>, CodecError> {
        if self.merged.is_empty() {
            return Ok(Some(Vec::new()));
        }
        let requests: Vec<ByteRange> = self
            .merged
            .iter()
            .map(|&(offset, length)| ByteRange::new(offset, length))
            .collect();
        let values = match reader.read_ranges(&requests) {
            Ok(Some(values)) => values,
            Ok(None) => return Ok(None),
            // The index was read alone, not checked against the shard's
            // length: an entry past the end is named as a whole shard's
            // check names it.
            Err(CodecError::Store(StoreError::InvalidRange { len, .. })) => {
                return Err(self.past_the_end(len).unwrap_or_else(|| {
                    corrupt(format!(
                        "a range read of the shard ({len} bytes) is out of bounds"
                    ))
                }));
            }
            Err(error) => return Err(error),
        };
        if values.len() != self.merged.len()
            || values
                .iter()
                .zip(&self.merged)
                .any(|(v, &(_, length))| v.len() as u64 != length)
        {
            return Err(corrupt(
                "a ranged read returned the wrong number of bytes".to_string(),
            ));
        }
        Ok(Some(values))
    }

    /// The error for the first inner chunk of the run that ends past
    /// `len`, the shard's length.
    fn past_the_end(&self, len: u64) -> Option<CodecError> {
        self.at.iter().enumerate().find_map(|(k, at)| {
            let (m, within, nbytes) = (*at)?;
            let offset = self.merged[m].0 + within;
            let end = offset.saturating_add(nbytes);
            (end > len).then(|| {
                corrupt(format!(
                    "inner chunk {} at bytes {offset}..{end} runs past the end of the shard ({len} bytes)",
                    self.first + k
                ))
            })
        })
    }

    /// The stored bytes of inner chunk `i` among `values` (what
    /// [`Self::read`] returned): `None` when it is not stored.
    fn bytes<'v>(&self, values: &'v [Vec<u8>], i: usize) -> Result<Option<&'v [u8]>, CodecError> {
        let Some(&Some((m, within, nbytes))) =
            i.checked_sub(self.first).and_then(|k| self.at.get(k))
        else {
            return Ok(None);
        };
        let range = within
            .checked_add(nbytes)
            .and_then(|end| Some(usize::try_from(within).ok()?..usize::try_from(end).ok()?));
        range
            .and_then(|range| values.get(m)?.get(range))
            .map(Some)
            .ok_or_else(|| {
                corrupt(format!(
                    "inner chunk {i} lies outside the bytes read for it"
                ))
            })
    }
}

/// What a partial read of a shard fetched and decoded.
struct Fetched {
    /// Per box, the inner chunks it touches and the piece of each.
    plans: Vec<Vec<(usize, Piece)>>,
    /// The inner chunks decoded whole; those not stored are absent.
    whole: BTreeMap<usize, ChunkData<'static>>,
    /// The pieces of inner chunks decoded in part, by (box, inner chunk).
    parts: BTreeMap<(usize, usize), ChunkData<'static>>,
    /// The stored bytes of inner chunks the caller decodes itself.
    encoded: BTreeMap<usize, Vec<u8>>,
}

impl Fetched {
    /// Gives the buffers of the inner chunks decoded whole back to
    /// [`BUFFERS`], once their elements have been copied out.
    fn recycle(self) {
        BUFFERS.give(self.whole.into_values().filter_map(|chunk| match chunk {
            ChunkData::Fixed(std::borrow::Cow::Owned(bytes)) => Some(bytes),
            _ => None,
        }));
    }

    /// Calls `f` once per inner chunk box `k` touches, with its decoded
    /// data (`None`: the fill value) and the copy of its piece to a buffer
    /// of `dst_shape` in which the box starts at `dst_origin` (the copy's
    /// `elem` is the element size).
    fn for_each_copy<'f>(
        &'f self,
        shard: &Shard,
        k: usize,
        dst_shape: &[u64],
        dst_origin: &[u64],
        mut f: impl FnMut(Option<&'f ChunkData<'static>>, BoxCopy<'_>),
    ) {
        let zeros = vec![0; dst_shape.len()];
        let mut dst_start = vec![0; dst_shape.len()];
        for (i, piece) in &self.plans[k] {
            for (d, start) in dst_start.iter_mut().enumerate() {
                *start = dst_origin[d] + piece.in_region[d];
            }
            let copy = |src_shape, src_start| BoxCopy {
                src_shape,
                src_start,
                dst_shape,
                dst_start: &dst_start,
                shape: &piece.shape,
                elem: shard.elem,
            };
            match (self.whole.get(i), self.parts.get(&(k, *i))) {
                (Some(chunk), _) => f(Some(chunk), copy(&shard.inner_shape, &piece.in_chunk)),
                (None, Some(part)) => f(Some(part), copy(&piece.shape, &zeros)),
                (None, None) => f(None, copy(&shard.inner_shape, &piece.in_chunk)),
            }
        }
    }
}
