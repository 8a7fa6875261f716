//! The shard index: the layout of a shard for one chunk representation,
//! reading and checking the index, and assembling a shard from its encoded
//! inner chunks (v3 `sharding_indexed`, "Binary shard format").

use super::{EMPTY, IndexLocation, NAME, ShardingCodec};
use crate::codec::partial::{self, BytesRangeReader, ChunkBox};
use crate::codec::{ChunkRepr, CodecChain, CodecError};
use crate::grid::axis::Axis;
use crate::grid::plan::{Piece, PlanError, plan_region};
use crate::metadata::{DataType, FillValue};
use crate::store::ByteRange;
use crate::store::buffers::BUFFERS;
use crate::store::pages;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;

/// The stored bytes from which [`ShardingCodec::assemble`] copies the
/// inner chunks into a fresh shard buffer in parallel; below, one thread
/// appends them (a few hundred kilobytes take less than handing them out).
pub(super) const PARALLEL_ASSEMBLY: usize = 1 << 20;

/// A shard's layout for one chunk representation: the inner chunk grid and
/// the resolved inner and index chains.
#[derive(Debug)]
pub(super) struct Shard {
    pub(super) shape: Vec<u64>,
    pub(super) inner_shape: Vec<u64>,
    /// Inner chunks per shard along each dimension.
    pub(super) grid: Vec<u64>,
    /// The inner chunk grid's dimensions, for the planner.
    pub(super) axes: Vec<Axis>,
    /// The number of inner chunks.
    pub(super) n: usize,
    pub(super) elem: usize,
    pub(super) inner_repr: ChunkRepr,
    pub(super) inner: CodecChain,
    pub(super) index_repr: ChunkRepr,
    pub(super) index: CodecChain,
    pub(super) index_size: u64,
}

impl Shard {
    /// The inner chunks box `b` (shard coordinates, within the shard)
    /// touches, in C order, each as its index and the [`Piece`] it shares
    /// with the box: the planner of [`grid`](crate::grid) over the inner
    /// chunk grid.
    pub(super) fn plan(&self, b: &ChunkBox) -> Result<Vec<(usize, Piece)>, CodecError> {
        let planned = plan_region(
            &self.axes,
            &self.shape,
            b,
            u64::MAX,
            0,
            |coords, _, piece| {
                let i = coords
                    .iter()
                    .zip(&self.grid)
                    .fold(0u64, |acc, (&c, &g)| acc * g + c);
                Ok::<_, Infallible>((i as usize, piece))
            },
        );
        match planned {
            Ok(pieces) => Ok(pieces),
            // A plan of at most `n` pieces, each of a few vectors, fits the
            // budget of `u64::MAX` bytes.
            Err(PlanError::MemoryBudget { .. }) => Err(CodecError::TooLarge {
                shape: self.shape.clone(),
            }),
            Err(PlanError::Piece(never)) => match never {},
        }
    }

    /// The number of elements of one inner chunk.
    pub(super) fn inner_len(&self) -> u64 {
        self.inner_shape.iter().product()
    }

    /// The grid coordinates of inner chunk `i` (C order).
    pub(super) fn coords(&self, mut i: usize) -> Vec<u64> {
        let mut coords = vec![0u64; self.grid.len()];
        for d in (0..self.grid.len()).rev() {
            let g = self.grid[d] as usize;
            coords[d] = (i % g) as u64;
            i /= g;
        }
        coords
    }

    /// The first element of inner chunk `i` within the shard.
    pub(super) fn start(&self, i: usize) -> Vec<u64> {
        self.coords(i)
            .iter()
            .zip(&self.inner_shape)
            .map(|(c, n)| c * n)
            .collect()
    }

    /// The byte range of the index within a shard.
    pub(super) fn index_range(&self, location: IndexLocation) -> ByteRange {
        match location {
            IndexLocation::Start => ByteRange::new(0, self.index_size),
            IndexLocation::End => ByteRange::Suffix(self.index_size),
        }
    }
}

pub(super) fn corrupt(reason: String) -> CodecError {
    CodecError::Corrupt {
        codec: NAME,
        reason,
    }
}

impl ShardingCodec {
    /// The layout of shards of `repr`: prepared once for the first
    /// representation asked for (every shard of a regular grid), built
    /// afresh for others.
    pub(super) fn shard(&self, repr: &ChunkRepr) -> Result<Arc<Shard>, CodecError> {
        if let Some((prepared, shard)) = self.prepared.get()
            && prepared == repr
        {
            return Ok(Arc::clone(shard));
        }
        let shard = Arc::new(self.build_shard(repr)?);
        // Another thread may have prepared one meanwhile: either is right.
        let _ = self.prepared.set((repr.clone(), Arc::clone(&shard)));
        Ok(shard)
    }

    fn build_shard(&self, repr: &ChunkRepr) -> Result<Shard, CodecError> {
        let incompatible = |what: String| CodecError::Incompatible { codec: NAME, what };
        if repr.shape.len() != self.chunk_shape.len() {
            return Err(incompatible(format!(
                "a shard of shape {:?} into inner chunks of {} dimensions ({:?})",
                repr.shape,
                self.chunk_shape.len(),
                self.chunk_shape
            )));
        }
        if repr
            .shape
            .iter()
            .zip(&self.chunk_shape)
            .any(|(&s, &c)| c == 0 || s % c != 0)
        {
            return Err(incompatible(format!(
                "a shard of shape {:?}: it is not a multiple of the inner chunk_shape {:?}",
                repr.shape, self.chunk_shape
            )));
        }
        let grid: Vec<u64> = repr
            .shape
            .iter()
            .zip(&self.chunk_shape)
            .map(|(s, c)| s / c)
            .collect();
        let too_large = || CodecError::TooLarge {
            shape: repr.shape.clone(),
        };
        let n = grid
            .iter()
            .try_fold(1u64, |acc, &g| acc.checked_mul(g))
            .ok_or_else(too_large)?;
        let index_size = n
            .checked_mul(16)
            .and_then(|s| s.checked_add(if self.index_checksum { 4 } else { 0 }))
            .ok_or_else(too_large)?;
        let inner_repr = ChunkRepr {
            shape: self.chunk_shape.clone(),
            data_type: repr.data_type.clone(),
            fill_value: repr.fill_value.clone(),
        };
        let inner = CodecChain::new(self.codecs.clone(), &inner_repr)?;
        let index_repr = ChunkRepr {
            shape: grid.iter().copied().chain([2]).collect(),
            data_type: DataType::UInt64,
            fill_value: FillValue::new(vec![0xff; 8]),
        };
        let index = CodecChain::new(self.index_codecs.clone(), &index_repr)?;
        Ok(Shard {
            shape: repr.shape.clone(),
            inner_shape: self.chunk_shape.clone(),
            axes: self.chunk_shape.iter().map(|&c| Axis::Regular(c)).collect(),
            grid,
            n: usize::try_from(n).map_err(|_| too_large())?,
            elem: repr.data_type.size(),
            inner_repr,
            inner,
            index_repr,
            index,
            index_size,
        })
    }

    /// Decodes and validates an index: `2n` values, offset then length per
    /// inner chunk. `shard_len` is the shard's size when known; every stored
    /// inner chunk must then lie within it.
    pub(super) fn decode_index(
        &self,
        shard: &Shard,
        encoded: Vec<u8>,
        shard_len: Option<u64>,
    ) -> Result<Vec<u64>, CodecError> {
        if encoded.len() as u64 != shard.index_size {
            return Err(corrupt(format!(
                "the shard index has {} bytes, expected {}",
                encoded.len(),
                shard.index_size
            )));
        }
        let raw = shard
            .index
            .decode(encoded, &shard.index_repr)?
            .into_fixed(NAME)?;
        let index: Vec<u64> = raw
            .chunks_exact(8)
            .map(|b| u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
            .collect();
        for (i, entry) in index.chunks_exact(2).enumerate() {
            let (offset, nbytes) = (entry[0], entry[1]);
            if offset == EMPTY && nbytes == EMPTY {
                continue;
            }
            let end = offset
                .checked_add(nbytes)
                .filter(|_| offset != EMPTY && nbytes != EMPTY);
            let Some(end) = end else {
                return Err(corrupt(format!(
                    "inner chunk {i} has offset {offset} and nbytes {nbytes}"
                )));
            };
            if let Some(len) = shard_len
                && end > len
            {
                return Err(corrupt(format!(
                    "inner chunk {i} at bytes {offset}..{end} runs past the end of the shard ({len} bytes)"
                )));
            }
        }
        Ok(index)
    }

    /// The `(offset, nbytes)` of inner chunk `i`, or `None` when it is not stored.
    pub(super) fn entry(index: &[u64], i: usize) -> Option<(u64, u64)> {
        let (offset, nbytes) = (index[2 * i], index[2 * i + 1]);
        (offset != EMPTY).then_some((offset, nbytes))
    }

    /// Reads the index through `reader`: `None` when the shard is missing.
    pub(super) fn read_index(
        &self,
        shard: &Shard,
        reader: &dyn BytesRangeReader,
    ) -> Result<Option<Vec<u64>>, CodecError> {
        let Some(values) = reader.read_ranges(&[shard.index_range(self.index_location)])? else {
            return Ok(None);
        };
        let encoded = values
            .into_iter()
            .next()
            .ok_or_else(|| corrupt("the index read returned nothing".to_string()))?;
        self.decode_index(shard, encoded, None).map(Some)
    }

    /// Reads the stored bytes of inner chunks `wanted` with one batched read
    /// (nearby chunks coalesced). `None` when the shard has vanished.
    pub(super) fn read_inner(
        reader: &dyn BytesRangeReader,
        index: &[u64],
        wanted: &[usize],
    ) -> Result<Option<BTreeMap<usize, Vec<u8>>>, CodecError> {
        let present: Vec<(usize, (u64, u64))> = wanted
            .iter()
            .filter_map(|&i| Self::entry(index, i).map(|e| (i, e)))
            .collect();
        if present.is_empty() {
            return Ok(Some(BTreeMap::new()));
        }
        let ranges: Vec<(u64, u64)> = present.iter().map(|(_, e)| *e).collect();
        let (merged, placement) = partial::coalesce(&ranges);
        let requests: Vec<ByteRange> = merged
            .iter()
            .map(|&(offset, length)| ByteRange::new(offset, length))
            .collect();
        let Some(mut values) = reader.read_ranges(&requests)? else {
            return Ok(None);
        };
        if values.len() != merged.len()
            || values
                .iter()
                .zip(&merged)
                .any(|(v, &(_, length))| v.len() as u64 != length)
        {
            return Err(corrupt(
                "a ranged read returned the wrong number of bytes".to_string(),
            ));
        }
        // A range that holds one inner chunk is moved out; those of a
        // range holding several are copied into buffers of the process's
        // pool, and the ranges' buffers go back to it: fresh copies
        // faulted in their pages on every region read (64 reads of 32³
        // regions of a blosc shard: half of the read's page faults).
        let mut holders = vec![0usize; values.len()];
        for &(m, _) in &placement {
            holders[m] += 1;
        }
        let mut out = BTreeMap::new();
        for ((i, (_, nbytes)), (m, within)) in present.into_iter().zip(placement) {
            // Lengths were checked against the requests, which contain each range.
            let (within, nbytes) = (within as usize, nbytes as usize);
            let bytes = if holders[m] == 1 && within == 0 && values[m].len() == nbytes {
                std::mem::take(&mut values[m])
            } else {
                let mut bytes = BUFFERS.empty(nbytes).unwrap_or_default();
                bytes.extend_from_slice(&values[m][within..within + nbytes]);
                bytes
            };
            out.insert(i, bytes);
        }
        BUFFERS.give(values);
        Ok(Some(out))
    }

    /// Decodes the index of a whole shard held in memory, checking every
    /// stored inner chunk lies within it.
    pub(super) fn whole_index(
        &self,
        shard: &Shard,
        encoded: &[u8],
    ) -> Result<Vec<u64>, CodecError> {
        let len = encoded.len() as u64;
        if len < shard.index_size {
            return Err(corrupt(format!(
                "the shard has {len} bytes, fewer than its index ({} bytes)",
                shard.index_size
            )));
        }
        // Both bounds are at most `len`, a usize.
        let index_bytes = match self.index_location {
            IndexLocation::Start => &encoded[..shard.index_size as usize],
            IndexLocation::End => &encoded[(len - shard.index_size) as usize..],
        };
        self.decode_index(shard, index_bytes.to_vec(), Some(len))
    }

    /// The encoded index of a shard whose inner chunks have the stored
    /// `lengths` (`None`: not stored), in inner-chunk order, stored one
    /// after another from byte `first` of the shard.
    pub(super) fn encode_index(
        shard: &Shard,
        first: u64,
        lengths: impl Iterator<Item = Option<usize>>,
    ) -> Result<Vec<u8>, CodecError> {
        let mut offset = first;
        let mut index = Vec::with_capacity(shard.n * 16);
        for length in lengths {
            let (o, n) = match length {
                Some(len) => {
                    let entry = (offset, len as u64);
                    offset += len as u64;
                    entry
                }
                None => (EMPTY, EMPTY),
            };
            index.extend_from_slice(&o.to_ne_bytes());
            index.extend_from_slice(&n.to_ne_bytes());
        }
        shard.index.encode(index, &shard.index_repr)
    }

    /// Builds a shard from its encoded inner chunks (`None` for those not
    /// stored), in inner-chunk order, with the index where configured.
    ///
    /// Below [`PARALLEL_ASSEMBLY`] stored bytes, the parts are appended in
    /// order. From there up, the shard is one fresh buffer
    /// ([`pages::try_result_bytes`]: zeroed pages the copies fault in,
    /// huge pages from 4 MiB up) and the inner chunks are copied into it
    /// in parallel, each to its own slice. Assembled on one thread in
    /// 4 KiB pages, a 17 MB shard of blosc inner chunks took a quarter of
    /// the first write of the 256³ array in a process.
    pub(super) fn assemble(
        &self,
        shard: &Shard,
        chunks: &[Option<&[u8]>],
    ) -> Result<Vec<u8>, CodecError> {
        let data_len: u64 = chunks.iter().flatten().map(|c| c.len() as u64).sum();
        let first = match self.index_location {
            IndexLocation::Start => shard.index_size,
            IndexLocation::End => 0,
        };
        let index = Self::encode_index(shard, first, chunks.iter().map(|c| c.map(<[u8]>::len)))?;
        let too_large = || CodecError::TooLarge {
            shape: shard.shape.clone(),
        };
        let data_len = usize::try_from(data_len).map_err(|_| too_large())?;
        let total = data_len.checked_add(index.len()).ok_or_else(too_large)?;
        if data_len < PARALLEL_ASSEMBLY {
            // Appended in order: no zeroed buffer, whose zeroing (calloc
            // of memory the allocator reuses) would be a pass of its own.
            let mut out = Vec::with_capacity(total);
            if self.index_location == IndexLocation::Start {
                out.extend_from_slice(&index);
            }
            for chunk in chunks.iter().flatten() {
                out.extend_from_slice(chunk);
            }
            if self.index_location == IndexLocation::End {
                out.extend_from_slice(&index);
            }
            return Ok(out);
        }
        let mut out = pages::try_result_bytes(total).ok_or_else(too_large)?;
        let (data, index_place) = match self.index_location {
            IndexLocation::Start => {
                let (head, data) = out.split_at_mut(index.len());
                (data, head)
            }
            IndexLocation::End => out.split_at_mut(data_len),
        };
        index_place.copy_from_slice(&index);
        let mut places = Vec::with_capacity(chunks.len());
        let mut rest = data;
        for chunk in chunks.iter().flatten() {
            let (place, tail) = std::mem::take(&mut rest).split_at_mut(chunk.len());
            places.push((place, *chunk));
            rest = tail;
        }
        places
            .into_par_iter()
            .for_each(|(place, chunk)| place.copy_from_slice(chunk));
        Ok(out)
    }
}
