//! The `sharding_indexed` array-to-bytes codec: many inner chunks in one
//! stored value (a shard), found through an index of offsets and lengths.
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/index.html>
//! Names: v3 `sharding_indexed`.
//!
//! Inner chunks are encoded with the inner `codecs` chain (which may itself
//! be sharded), in parallel. Inner chunks equal to the fill value are not
//! stored. Reading part of a shard reads the index with one ranged request
//! and the inner chunks it needs with one more batch
//! ([`ArrayToBytesCodec::decode_partial`]); rewriting part of a shard
//! decodes only the inner chunks the update covers in part and copies the
//! stored bytes of the rest unchanged ([`ArrayToBytesCodec::encode_partial`]).
//! Shards of variable-length elements (`string`, `bytes`; zarr-python
//! writes these with inner `vlen-utf8` + `zstd`) are split and joined by
//! element through [`ArrayToBytesCodec::encode_vlen`] and
//! [`ArrayToBytesCodec::decode_vlen`], with the same index and the same
//! rule for inner chunks that are all fill value.
//!
//! ```
//! # use zarrkit::codec::sharding::{IndexLocation, ShardingConfig};
//! let config: ShardingConfig = serde_json::from_str(r#"{
//!     "chunk_shape": [32, 32],
//!     "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
//!     "index_codecs": [
//!         {"name": "bytes", "configuration": {"endian": "little"}},
//!         {"name": "crc32c"}
//!     ]
//! }"#)?;
//! assert_eq!(config.index_location, IndexLocation::End);
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::copy::BoxCopy;
use crate::codec::partial::{self, BytesRangeReader, ChunkBox};
use crate::codec::vlen::VlenChunk;
use crate::codec::{
    ArrayToBytesCodec, ChunkRepr, Codec, CodecChain, CodecError, bytes::BytesCodec,
    codec_from_metadata, registry::parse_configuration,
};
use crate::metadata::json::{extension_from_json, extension_to_json};
use crate::metadata::{DataType, ExtensionObject, FillValue, JsonMap};
use crate::store::ByteRange;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::num::NonZeroU64;
use std::sync::Arc;

const NAME: &str = "sharding_indexed";

/// The offset and length of an inner chunk that is not stored
/// ("Binary shard format": both are `2^64 - 1`).
const EMPTY: u64 = u64::MAX;

/// Where the shard index is stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexLocation {
    /// The index precedes the inner chunks.
    Start,
    /// The index follows the inner chunks (the spec's default).
    #[default]
    End,
}

/// The configuration of the `sharding_indexed` codec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardingConfig {
    /// The inner chunk shape; it must divide the shard shape.
    pub chunk_shape: Vec<NonZeroU64>,
    /// The codecs of each inner chunk (exactly one array→bytes codec).
    pub codecs: Vec<serde_json::Value>,
    /// The codecs of the index: zarrkit accepts `bytes` (little endian),
    /// optionally followed by `crc32c`, the fixed-size chains the spec recommends.
    pub index_codecs: Vec<serde_json::Value>,
    /// Where the index is stored; `end` when absent.
    #[serde(default)]
    pub index_location: IndexLocation,
}

/// The `sharding_indexed` codec.
#[derive(Clone, Debug)]
pub struct ShardingCodec {
    chunk_shape: Vec<u64>,
    codecs: Vec<Codec>,
    index_codecs: Vec<Codec>,
    index_checksum: bool,
    index_location: IndexLocation,
}

impl ShardingCodec {
    /// A sharding codec with inner chunks of `chunk_shape` encoded by
    /// `codecs`, and the index at the end, as little-endian `bytes`
    /// followed by `crc32c` when this build has the `crc32c` feature.
    #[must_use]
    pub fn new(chunk_shape: &[u64], codecs: Vec<Codec>) -> Self {
        let codec = Self {
            chunk_shape: chunk_shape.to_vec(),
            codecs,
            index_codecs: vec![Codec::ArrayToBytes(Arc::new(BytesCodec::little()))],
            index_checksum: false,
            index_location: IndexLocation::End,
        };
        #[cfg(feature = "crc32c")]
        let codec = codec.with_index_checksum_enabled();
        codec
    }

    #[cfg(feature = "crc32c")]
    fn with_index_checksum_enabled(mut self) -> Self {
        self.index_codecs.truncate(1);
        self.index_codecs.push(Codec::BytesToBytes(Arc::new(
            crate::codec::crc32c::Crc32cCodec::new(),
        )));
        self.index_checksum = true;
        self
    }

    /// Sets where the index is stored.
    #[must_use]
    pub fn with_index_location(mut self, index_location: IndexLocation) -> Self {
        self.index_location = index_location;
        self
    }

    /// Sets whether the index carries a `crc32c` checksum.
    ///
    /// # Errors
    /// [`CodecError::NotEnabled`] when asking for a checksum in a build
    /// without the `crc32c` feature.
    pub fn with_index_checksum(mut self, checksum: bool) -> Result<Self, CodecError> {
        if !checksum {
            self.index_codecs.truncate(1);
            self.index_checksum = false;
            return Ok(self);
        }
        #[cfg(feature = "crc32c")]
        return Ok(self.with_index_checksum_enabled());
        #[cfg(not(feature = "crc32c"))]
        Err(CodecError::NotEnabled {
            name: "crc32c".to_string(),
            feature: "crc32c",
        })
    }

    /// The inner chunk shape.
    #[must_use]
    pub fn chunk_shape(&self) -> &[u64] {
        &self.chunk_shape
    }

    /// The codecs of each inner chunk.
    #[must_use]
    pub fn codecs(&self) -> &[Codec] {
        &self.codecs
    }

    /// Where the index is stored.
    #[must_use]
    pub fn index_location(&self) -> IndexLocation {
        self.index_location
    }

    /// Whether the index carries a `crc32c` checksum.
    #[must_use]
    pub fn index_checksum(&self) -> bool {
        self.index_checksum
    }
}

fn invalid(reason: impl Into<String>) -> CodecError {
    CodecError::InvalidConfiguration {
        codec: NAME.to_string(),
        reason: reason.into(),
    }
}

fn codecs_from_json(values: &[serde_json::Value], field: &str) -> Result<Vec<Codec>, CodecError> {
    values
        .iter()
        .enumerate()
        .map(|(i, value)| {
            let extension = extension_from_json(value, &format!("{field}[{i}]"))
                .map_err(|e| invalid(e.to_string()))?;
            codec_from_metadata(&extension)
        })
        .collect()
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid or
/// `index_codecs` is not `bytes` (little endian) optionally followed by
/// `crc32c`; the error of an inner codec that cannot be built.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: ShardingConfig = parse_configuration(metadata)?;
    let codecs = codecs_from_json(&config.codecs, "codecs")?;
    let index_codecs = codecs_from_json(&config.index_codecs, "index_codecs")?;
    let little = BytesCodec::little().metadata();
    let index_checksum = match index_codecs.as_slice() {
        [bytes] if bytes.metadata() == little => false,
        [bytes, crc] if bytes.metadata() == little && crc.name() == "crc32c" => true,
        _ => {
            return Err(invalid(
                "`index_codecs` must be `bytes` with little endian, optionally followed by `crc32c`",
            ));
        }
    };
    Ok(Codec::ArrayToBytes(Arc::new(ShardingCodec {
        chunk_shape: config.chunk_shape.iter().map(|n| n.get()).collect(),
        codecs,
        index_codecs,
        index_checksum,
        index_location: config.index_location,
    })))
}

/// A shard's layout for one chunk representation: the inner chunk grid and
/// the resolved inner and index chains.
struct Shard {
    shape: Vec<u64>,
    inner_shape: Vec<u64>,
    /// Inner chunks per shard along each dimension.
    grid: Vec<u64>,
    /// The number of inner chunks.
    n: usize,
    elem: usize,
    inner_repr: ChunkRepr,
    inner: CodecChain,
    index_repr: ChunkRepr,
    index: CodecChain,
    index_size: u64,
}

impl Shard {
    /// The copy between inner chunk `i` and the box `b` (shard
    /// coordinates) of the elements they share, from the inner chunk to a
    /// buffer of the box's shape (`to_box`) or the other way, or `None`
    /// when they share none.
    fn shared_copy<'a>(
        &'a self,
        b: &'a ChunkBox,
        i: usize,
        elem: usize,
        to_box: bool,
        offsets: &'a mut (Vec<u64>, Vec<u64>, Vec<u64>),
    ) -> Option<BoxCopy<'a>> {
        let start = self.start(i);
        let common = b.intersect(&start, &self.inner_shape)?;
        let rel = |origin: &[u64]| -> Vec<u64> {
            common
                .start
                .iter()
                .zip(origin)
                .map(|(c, s)| c - s)
                .collect()
        };
        *offsets = (rel(&start), rel(&b.start), common.shape);
        let (in_inner, in_box, shape) = (&offsets.0, &offsets.1, &offsets.2);
        Some(if to_box {
            BoxCopy {
                src_shape: &self.inner_shape,
                src_start: in_inner,
                dst_shape: &b.shape,
                dst_start: in_box,
                shape,
                elem,
            }
        } else {
            BoxCopy {
                src_shape: &b.shape,
                src_start: in_box,
                dst_shape: &self.inner_shape,
                dst_start: in_inner,
                shape,
                elem,
            }
        })
    }

    /// The number of elements of one inner chunk.
    fn inner_len(&self) -> u64 {
        self.inner_shape.iter().product()
    }

    /// The grid coordinates of inner chunk `i` (C order).
    fn coords(&self, mut i: usize) -> Vec<u64> {
        let mut coords = vec![0u64; self.grid.len()];
        for d in (0..self.grid.len()).rev() {
            let g = self.grid[d] as usize;
            coords[d] = (i % g) as u64;
            i /= g;
        }
        coords
    }

    /// The first element of inner chunk `i` within the shard.
    fn start(&self, i: usize) -> Vec<u64> {
        self.coords(i)
            .iter()
            .zip(&self.inner_shape)
            .map(|(c, n)| c * n)
            .collect()
    }

    /// Calls `f` with the index of every inner chunk that `b` touches.
    fn for_each_touched(&self, b: &ChunkBox, mut f: impl FnMut(usize)) {
        if b.shape.contains(&0) {
            return;
        }
        let ndim = self.grid.len();
        let first: Vec<u64> = (0..ndim)
            .map(|d| b.start[d] / self.inner_shape[d])
            .collect();
        let last: Vec<u64> = (0..ndim)
            .map(|d| (b.start[d] + b.shape[d] - 1) / self.inner_shape[d])
            .collect();
        let mut coords = first.clone();
        loop {
            let i = coords
                .iter()
                .zip(&self.grid)
                .fold(0u64, |acc, (&c, &g)| acc * g + c);
            f(i as usize);
            let mut d = ndim;
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                if coords[d] < last[d] {
                    coords[d] += 1;
                    break;
                }
                coords[d] = first[d];
            }
        }
    }

    /// The byte range of the index within a shard.
    fn index_range(&self, location: IndexLocation) -> ByteRange {
        match location {
            IndexLocation::Start => ByteRange::new(0, self.index_size),
            IndexLocation::End => ByteRange::Suffix(self.index_size),
        }
    }

    /// An inner chunk filled with the fill value.
    fn fill_chunk(&self) -> Result<Vec<u8>, CodecError> {
        let mut chunk = vec![0u8; self.inner_repr.size_bytes()?];
        self.inner_repr.fill_value.fill(&mut chunk);
        Ok(chunk)
    }
}

/// The number of elements of a shard, as a `usize`.
fn shard_elements(shard: &Shard) -> Result<usize, CodecError> {
    shard_elements_of(&shard.shape, &shard.shape)
}

/// The number of elements of `shape`, as a `usize` (`TooLarge` naming
/// `shard_shape` otherwise).
fn shard_elements_of(shape: &[u64], shard_shape: &[u64]) -> Result<usize, CodecError> {
    shape
        .iter()
        .try_fold(1u64, |acc, &n| acc.checked_mul(n))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| CodecError::TooLarge {
            shape: shard_shape.to_vec(),
        })
}

fn corrupt(reason: String) -> CodecError {
    CodecError::Corrupt {
        codec: NAME,
        reason,
    }
}

impl ShardingCodec {
    fn shard(&self, repr: &ChunkRepr) -> Result<Shard, CodecError> {
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
    fn decode_index(
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
        let raw = shard.index.decode(encoded, &shard.index_repr)?;
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
            if let Some(len) = shard_len {
                if end > len {
                    return Err(corrupt(format!(
                        "inner chunk {i} at bytes {offset}..{end} runs past the end of the shard ({len} bytes)"
                    )));
                }
            }
        }
        Ok(index)
    }

    /// The `(offset, nbytes)` of inner chunk `i`, or `None` when it is not stored.
    fn entry(index: &[u64], i: usize) -> Option<(u64, u64)> {
        let (offset, nbytes) = (index[2 * i], index[2 * i + 1]);
        (offset != EMPTY).then_some((offset, nbytes))
    }

    /// Reads the index through `reader`: `None` when the shard is missing.
    fn read_index(
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
    fn read_inner(
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
        let Some(values) = reader.read_ranges(&requests)? else {
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
        let mut out = BTreeMap::new();
        for ((i, (_, nbytes)), (m, within)) in present.into_iter().zip(placement) {
            // Lengths were checked against the requests, which contain each range.
            let (within, nbytes) = (within as usize, nbytes as usize);
            out.insert(i, values[m][within..within + nbytes].to_vec());
        }
        Ok(Some(out))
    }

    /// Decodes the index of a whole shard held in memory, checking every
    /// stored inner chunk lies within it.
    fn whole_index(&self, shard: &Shard, encoded: &[u8]) -> Result<Vec<u64>, CodecError> {
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

    /// Calls `f(shard_element, inner_element)` for every element of inner
    /// chunk `i`, as runs: `f(shard_offset, inner_offset, len)` in elements.
    fn for_each_inner_run(shard: &Shard, i: usize, f: impl FnMut(usize, usize, usize)) {
        let zeros = vec![0u64; shard.shape.len()];
        BoxCopy {
            src_shape: &shard.shape,
            src_start: &shard.start(i),
            dst_shape: &shard.inner_shape,
            dst_start: &zeros,
            shape: &shard.inner_shape,
            elem: 1,
        }
        .for_each_run(f);
    }

    /// Decodes the inner chunks of a whole shard held in memory into `out`.
    fn decode_shard_into(
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
    fn decode_shard_with_index(
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
                    shard.inner.decode(bytes, &shard.inner_repr)
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

    /// Builds a shard from its encoded inner chunks (`None` for those not
    /// stored), in inner-chunk order, with the index where configured.
    fn assemble(&self, shard: &Shard, chunks: &[Option<&[u8]>]) -> Result<Vec<u8>, CodecError> {
        let data_len: u64 = chunks.iter().flatten().map(|c| c.len() as u64).sum();
        let mut offset = match self.index_location {
            IndexLocation::Start => shard.index_size,
            IndexLocation::End => 0,
        };
        let mut index = Vec::with_capacity(shard.n * 16);
        for chunk in chunks {
            let (o, n) = match chunk {
                Some(c) => {
                    let entry = (offset, c.len() as u64);
                    offset += c.len() as u64;
                    entry
                }
                None => (EMPTY, EMPTY),
            };
            index.extend_from_slice(&o.to_ne_bytes());
            index.extend_from_slice(&n.to_ne_bytes());
        }
        let index = shard.index.encode(index, &shard.index_repr)?;
        let total =
            usize::try_from(data_len + index.len() as u64).map_err(|_| CodecError::TooLarge {
                shape: shard.shape.clone(),
            })?;
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
        Ok(out)
    }

    /// Encodes an inner chunk, or `None` when it equals the fill value
    /// everywhere (such inner chunks are not stored).
    fn encode_inner(shard: &Shard, chunk: Vec<u8>) -> Result<Option<Vec<u8>>, CodecError> {
        if shard.inner_repr.fill_value.equals_all(&chunk) {
            return Ok(None);
        }
        shard.inner.encode(chunk, &shard.inner_repr).map(Some)
    }
}

impl ArrayToBytesCodec for ShardingCodec {
    /// None: a shard is its inner chunks, which their own codecs may
    /// expand, plus the index.
    fn encoded_size_bound(&self, _repr: &ChunkRepr) -> Option<usize> {
        None
    }

    fn metadata(&self) -> ExtensionObject {
        let chain = |codecs: &[Codec]| {
            serde_json::Value::Array(
                codecs
                    .iter()
                    .map(|c| extension_to_json(&c.metadata()))
                    .collect(),
            )
        };
        let mut configuration = JsonMap::new();
        configuration.insert("chunk_shape".into(), self.chunk_shape.clone().into());
        configuration.insert("codecs".into(), chain(&self.codecs));
        configuration.insert("index_codecs".into(), chain(&self.index_codecs));
        let location = match self.index_location {
            IndexLocation::Start => "start",
            IndexLocation::End => "end",
        };
        configuration.insert("index_location".into(), location.into());
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn validate(&self, repr: &ChunkRepr) -> Result<(), CodecError> {
        self.shard(repr).map(|_| ())
    }

    fn encode(&self, decoded: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        let expected = repr.size_bytes()?;
        if decoded.len() != expected {
            return Err(CodecError::WrongSize {
                expected,
                actual: decoded.len(),
            });
        }
        self.encode_from(&decoded, &repr.shape, &vec![0; repr.shape.len()], repr)
    }

    /// Copies each inner chunk straight from `src` and encodes them in
    /// parallel: the shard is never held decoded.
    fn encode_from(
        &self,
        src: &[u8],
        src_shape: &[u64],
        src_start: &[u64],
        repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let shard = self.shard(repr)?;
        let zeros = vec![0u64; shard.shape.len()];
        let inner_bytes = shard.inner_repr.size_bytes()?;
        let encoded = (0..shard.n)
            .into_par_iter()
            .map(|i| {
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
                Self::encode_inner(&shard, chunk)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let chunks: Vec<Option<&[u8]>> = encoded.iter().map(Option::as_deref).collect();
        self.assemble(&shard, &chunks)
    }

    fn decode(&self, encoded: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        // The declared shard shape is untrusted: check the stored index
        // before allocating the decoded shard, so that a shard of a few
        // bytes under an edited `chunk_shape` of 10^11 is a corrupt-shard
        // error, not an allocation that aborts the process. Then ask the
        // allocator for the legitimate size without aborting.
        let shard = self.shard(repr)?;
        let index = self.whole_index(&shard, &encoded)?;
        let size = repr.size_bytes()?;
        // Zeroed by the allocator (calloc), not filled: writing 32 MiB of
        // zeros per shard before decoding into it cost a sixth of a whole
        // sharded read.
        let mut out =
            bytemuck::allocation::try_zeroed_vec(size).map_err(|()| CodecError::TooLarge {
                shape: repr.shape.clone(),
            })?;
        self.decode_shard_with_index(&shard, &index, &encoded, &mut out)?;
        Ok(out)
    }

    fn decode_into(
        &self,
        encoded: Vec<u8>,
        repr: &ChunkRepr,
        out: &mut [u8],
    ) -> Result<(), CodecError> {
        let shard = self.shard(repr)?;
        let expected = repr.size_bytes()?;
        if out.len() != expected {
            return Err(CodecError::WrongSize {
                expected,
                actual: out.len(),
            });
        }
        self.decode_shard_into(&shard, &encoded, out)
    }

    /// Splits a shard of variable-length elements into inner chunks and
    /// encodes each with the inner chain, in parallel; inner chunks whose
    /// every element is the fill value are not stored.
    fn encode_vlen(&self, decoded: &VlenChunk, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        let shard = self.shard(repr)?;
        let expected = shard_elements(&shard)?;
        if decoded.len() != expected {
            return Err(CodecError::WrongSize {
                expected,
                actual: decoded.len(),
            });
        }
        let fill = shard.inner_repr.fill_value.as_bytes();
        let inner_len = shard_elements_of(&shard.inner_shape, &shard.shape)?;
        let encoded = (0..shard.n)
            .into_par_iter()
            .map(|i| {
                let mut indices = Vec::with_capacity(inner_len);
                Self::for_each_inner_run(&shard, i, |s, _, len| {
                    indices.extend((s..s + len).map(|e| e as u64));
                });
                let chunk = decoded.gather(&indices, NAME)?;
                if chunk.iter().all(|e| e == fill) {
                    return Ok(None);
                }
                shard.inner.encode_vlen(&chunk, &shard.inner_repr).map(Some)
            })
            .collect::<Result<Vec<_>, CodecError>>()?;
        let chunks: Vec<Option<&[u8]>> = encoded.iter().map(Option::as_deref).collect();
        self.assemble(&shard, &chunks)
    }

    /// Decodes the stored inner chunks in parallel and puts their elements
    /// in shard order; missing inner chunks read as the fill value.
    fn decode_vlen(&self, encoded: Vec<u8>, repr: &ChunkRepr) -> Result<VlenChunk, CodecError> {
        let shard = self.shard(repr)?;
        let total = shard_elements(&shard)?;
        let inner_len = shard_elements_of(&shard.inner_shape, &shard.shape)?;
        let index = self.whole_index(&shard, &encoded)?;
        let inner = (0..shard.n)
            .into_par_iter()
            .map(|i| {
                let Some((offset, nbytes)) = Self::entry(&index, i) else {
                    return Ok(None);
                };
                // Checked against the shard's length in `whole_index`.
                let bytes = encoded[offset as usize..(offset + nbytes) as usize].to_vec();
                let chunk = shard.inner.decode_vlen(bytes, &shard.inner_repr)?;
                if chunk.len() != inner_len {
                    return Err(corrupt(format!(
                        "inner chunk {i} has {} elements, expected {inner_len}",
                        chunk.len()
                    )));
                }
                Ok(Some(chunk))
            })
            .collect::<Result<Vec<_>, CodecError>>()?;
        // For each shard element: its inner chunk and its index there.
        let mut sources = vec![(0usize, 0usize); total];
        for i in 0..shard.n {
            Self::for_each_inner_run(&shard, i, |s, d, len| {
                for j in 0..len {
                    sources[s + j] = (i, d + j);
                }
            });
        }
        let fill = shard.inner_repr.fill_value.as_bytes();
        let mut out = VlenChunk::with_capacity(total);
        for (i, e) in sources {
            let value = match &inner[i] {
                Some(chunk) => chunk.get(e).unwrap_or(fill),
                None => fill,
            };
            out.push(value);
        }
        Ok(out)
    }

    /// Reads the index (one ranged read), then the inner chunks the boxes
    /// touch (one batch), and decodes those in parallel; the boxes' other
    /// elements are the fill value.
    fn decode_partial_vlen(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        boxes: &[ChunkBox],
    ) -> Result<Option<Vec<VlenChunk>>, CodecError> {
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
        let Some(stored) = Self::read_inner(reader, &index, &wanted)? else {
            return Ok(None);
        };
        let inner_len = shard_elements_of(&shard.inner_shape, &shard.shape)?;
        let decoded: BTreeMap<usize, VlenChunk> = stored
            .into_par_iter()
            .map(|(i, bytes)| {
                let chunk = shard.inner.decode_vlen(bytes, &shard.inner_repr)?;
                if chunk.len() != inner_len {
                    return Err(corrupt(format!(
                        "inner chunk {i} has {} elements, expected {inner_len}",
                        chunk.len()
                    )));
                }
                Ok((i, chunk))
            })
            .collect::<Result<_, CodecError>>()?;
        let fill = shard.inner_repr.fill_value.as_bytes();
        boxes
            .iter()
            .map(|b| {
                // For each element of the box: its inner chunk and its
                // index there, or `None` for the fill value.
                let mut sources: Vec<Option<(usize, usize)>> = vec![None; b.size_bytes(1)?];
                shard.for_each_touched(b, |i| {
                    if !decoded.contains_key(&i) {
                        return;
                    }
                    let mut offsets = Default::default();
                    if let Some(copy) = shard.shared_copy(b, i, 1, true, &mut offsets) {
                        copy.for_each_run(|s, d, len| {
                            for j in 0..len {
                                sources[d + j] = Some((i, s + j));
                            }
                        });
                    }
                });
                let mut out = VlenChunk::with_capacity(sources.len());
                for source in sources {
                    let value = source
                        .and_then(|(i, e)| decoded.get(&i).and_then(|chunk| chunk.get(e)))
                        .unwrap_or(fill);
                    out.push(value);
                }
                Ok(out)
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// Reads the index and the stored bytes of every inner chunk the
    /// updates do not cover entirely, decodes only those the updates touch,
    /// re-encodes those in parallel, and copies the stored bytes of the
    /// rest unchanged.
    fn encode_partial_vlen(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        updates: &[(ChunkBox, &VlenChunk)],
    ) -> Result<Option<Vec<u8>>, CodecError> {
        partial::check_boxes(repr, updates.iter().map(|(b, _)| b))?;
        partial::check_vlen_updates(updates)?;
        let shard = self.shard(repr)?;
        let index = self
            .read_index(&shard, reader)?
            .unwrap_or_else(|| vec![EMPTY; 2 * shard.n]);
        let mut touched = vec![false; shard.n];
        let mut covered = vec![false; shard.n];
        for (b, _) in updates {
            shard.for_each_touched(b, |i| {
                touched[i] = true;
                let start = shard.start(i);
                covered[i] |= (0..start.len()).all(|d| {
                    b.start[d] <= start[d]
                        && start[d] + shard.inner_shape[d] <= b.start[d] + b.shape[d]
                });
            });
        }
        let wanted: Vec<usize> = (0..shard.n).filter(|&i| !covered[i]).collect();
        let stored = Self::read_inner(reader, &index, &wanted)?.unwrap_or_default();
        let fill = shard.inner_repr.fill_value.as_bytes();
        let inner_len = shard_elements_of(&shard.inner_shape, &shard.shape)?;
        let rewritten = (0..shard.n)
            .into_par_iter()
            .filter(|&i| touched[i])
            .map(|i| {
                let old = match stored.get(&i) {
                    Some(bytes) if !covered[i] => {
                        let chunk = shard.inner.decode_vlen(bytes.clone(), &shard.inner_repr)?;
                        if chunk.len() != inner_len {
                            return Err(corrupt(format!(
                                "inner chunk {i} has {} elements, expected {inner_len}",
                                chunk.len()
                            )));
                        }
                        Some(chunk)
                    }
                    _ => None,
                };
                let chunk = partial::merge_vlen(
                    &shard.inner_shape,
                    &shard.start(i),
                    old.as_ref(),
                    updates,
                    fill,
                )?;
                if chunk.iter().all(|e| e == fill) {
                    return Ok((i, None));
                }
                let encoded = shard.inner.encode_vlen(&chunk, &shard.inner_repr)?;
                Ok((i, Some(encoded)))
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

    fn supports_partial_decode(&self) -> bool {
        true
    }

    /// Reads the index (one ranged read, from the end when it is stored
    /// there), then the inner chunks the boxes touch (one batch).
    fn decode_partial(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        boxes: &[ChunkBox],
    ) -> Result<Option<Vec<Vec<u8>>>, CodecError> {
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
        let ranged: Vec<usize> = if shard.inner.supports_partial_decode() {
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
                        b.intersect(&start, &shard.inner_shape)
                            .is_some_and(|c| c.shape == shard.inner_shape)
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
                        let common = b.intersect(&start, &shard.inner_shape)?;
                        let rel: Vec<u64> = common
                            .start
                            .iter()
                            .zip(&start)
                            .map(|(c, s)| c - s)
                            .collect();
                        Some((k, ChunkBox::new(rel, common.shape)))
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
            if ranged.is_empty() && b.start == shard.start(*i) && b.shape == shard.inner_shape {
                let chunk = match stored.into_iter().next() {
                    Some(entry) => decode(entry)?.1,
                    None => {
                        let mut out = vec![0u8; b.size_bytes(shard.elem)?];
                        shard.inner_repr.fill_value.fill(&mut out);
                        out
                    }
                };
                return Ok(Some(vec![chunk]));
            }
        }
        let decoded: BTreeMap<usize, Vec<u8>> = stored
            .into_par_iter()
            .map(decode)
            .collect::<Result<_, CodecError>>()?;
        let mut outs = boxes
            .iter()
            .map(|b| {
                let mut out = vec![0u8; b.size_bytes(shard.elem)?];
                shard.inner_repr.fill_value.fill(&mut out);
                shard.for_each_touched(b, |i| {
                    let Some(chunk) = decoded.get(&i) else {
                        return;
                    };
                    let mut offsets = Default::default();
                    if let Some(copy) = shard.shared_copy(b, i, shard.elem, true, &mut offsets) {
                        copy.run(chunk, &mut out);
                    }
                });
                Ok(out)
            })
            .collect::<Result<Vec<_>, CodecError>>()?;
        for (i, inner_boxes, decoded) in parts {
            // A shard whose index lists an inner chunk that is then missing
            // is corrupt only if the shard vanished meanwhile: read as fill.
            let Some(decoded) = decoded else { continue };
            let start = shard.start(i);
            for ((k, inner), buf) in inner_boxes.into_iter().zip(decoded) {
                let b = &boxes[k];
                let dst_start: Vec<u64> = inner
                    .start
                    .iter()
                    .zip(&start)
                    .zip(&b.start)
                    .map(|((r, s), bs)| r + s - bs)
                    .collect();
                BoxCopy {
                    src_shape: &inner.shape,
                    src_start: &vec![0; inner.shape.len()],
                    dst_shape: &b.shape,
                    dst_start: &dst_start,
                    shape: &inner.shape,
                    elem: shard.elem,
                }
                .run(&buf, &mut outs[k]);
            }
        }
        Ok(Some(outs))
    }

    fn supports_partial_encode(&self) -> bool {
        true
    }

    /// Reads the index, decodes only the inner chunks the updates cover in
    /// part, copies the stored bytes of untouched inner chunks unchanged,
    /// and re-encodes the touched ones in parallel.
    fn encode_partial(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        updates: &[(ChunkBox, &[u8])],
    ) -> Result<Option<Vec<u8>>, CodecError> {
        partial::check_boxes(repr, updates.iter().map(|(b, _)| b))?;
        let shard = self.shard(repr)?;
        for (b, data) in updates {
            let expected = b.size_bytes(shard.elem)?;
            if data.len() != expected {
                return Err(CodecError::WrongSize {
                    expected,
                    actual: data.len(),
                });
            }
        }
        let index = self
            .read_index(&shard, reader)?
            .unwrap_or_else(|| vec![EMPTY; 2 * shard.n]);
        // Per inner chunk: whether an update touches it, and whether one
        // update covers it entirely (then its old value is not needed).
        let mut touched = vec![false; shard.n];
        let mut covered = vec![false; shard.n];
        for (b, _) in updates {
            shard.for_each_touched(b, |i| {
                touched[i] = true;
                let start = shard.start(i);
                let inside = (0..start.len()).all(|d| {
                    b.start[d] <= start[d]
                        && start[d] + shard.inner_shape[d] <= b.start[d] + b.shape[d]
                });
                covered[i] |= inside;
            });
        }
        let wanted: Vec<usize> = (0..shard.n).filter(|&i| !covered[i]).collect();
        let stored = Self::read_inner(reader, &index, &wanted)?.unwrap_or_default();
        let rewritten = (0..shard.n)
            .into_par_iter()
            .filter(|&i| touched[i])
            .map(|i| {
                let mut chunk = match stored.get(&i) {
                    Some(bytes) if !covered[i] => {
                        shard.inner.decode(bytes.clone(), &shard.inner_repr)?
                    }
                    _ => shard.fill_chunk()?,
                };
                for (b, data) in updates {
                    let mut offsets = Default::default();
                    if let Some(copy) = shard.shared_copy(b, i, shard.elem, false, &mut offsets) {
                        copy.run(data, &mut chunk);
                    }
                }
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

// The tests write indices with and without a checksum.
#[cfg(all(test, feature = "crc32c"))]
mod tests {
    use super::*;
    use crate::codec::partial::SliceReader;
    use std::sync::Mutex;

    fn repr(shape: &[u64]) -> ChunkRepr {
        ChunkRepr {
            shape: shape.to_vec(),
            data_type: DataType::UInt16,
            fill_value: FillValue::new(7u16.to_ne_bytes().to_vec()),
        }
    }

    fn bytes_codec() -> Codec {
        Codec::ArrayToBytes(Arc::new(BytesCodec::little()))
    }

    fn u16s(values: impl IntoIterator<Item = u16>) -> Vec<u8> {
        values.into_iter().flat_map(u16::to_ne_bytes).collect()
    }

    fn sharding(location: IndexLocation, checksum: bool) -> ShardingCodec {
        ShardingCodec::new(&[2, 2], vec![bytes_codec()])
            .with_index_location(location)
            .with_index_checksum(checksum)
            .unwrap()
    }

    #[test]
    fn shard_layout_matches_the_spec_byte_for_byte() {
        // A 2x4 shard of 2x2 inner chunks; the second inner chunk is all
        // fill value, so it is not stored and its index entry is all ones.
        let codec = sharding(IndexLocation::End, false);
        let r = repr(&[2, 4]);
        let data = u16s([1, 2, 7, 7, 3, 4, 7, 7]);
        let encoded = codec.encode(data.clone(), &r).unwrap();
        let mut expected = u16s([1, 2, 3, 4])
            .iter()
            .flat_map(|b| b.to_le_bytes())
            .collect::<Vec<u8>>();
        for v in [0u64, 8, EMPTY, EMPTY] {
            expected.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(encoded, expected);
        assert_eq!(codec.decode(encoded, &r).unwrap(), data);
    }

    #[test]
    fn every_index_location_and_checksum_round_trips() {
        let r = repr(&[4, 6]);
        let data = u16s((0..24).map(|v| v * 3));
        for location in [IndexLocation::Start, IndexLocation::End] {
            for checksum in [false, true] {
                let codec = sharding(location, checksum);
                let encoded = codec.encode(data.clone(), &r).unwrap();
                assert_eq!(encoded.len(), 48 + 6 * 16 + if checksum { 4 } else { 0 });
                if location == IndexLocation::Start {
                    // The first chunk starts right after the index.
                    let offset = u64::from_le_bytes(encoded[..8].try_into().unwrap());
                    assert_eq!(offset, 96 + if checksum { 4 } else { 0 });
                }
                assert_eq!(codec.decode(encoded, &r).unwrap(), data);
            }
        }
    }

    #[test]
    fn shard_shape_must_be_a_multiple_of_the_inner_chunk_shape() {
        let err = sharding(IndexLocation::End, false)
            .validate(&repr(&[4, 5]))
            .unwrap_err();
        assert!(err.to_string().contains("sharding_indexed"), "{err}");
        assert!(err.to_string().contains("[2, 2]"), "{err}");
    }

    #[test]
    fn corrupt_indices_are_errors_not_panics() {
        let codec = sharding(IndexLocation::End, false);
        let r = repr(&[2, 4]);
        let good = codec.encode(u16s(0..8), &r).unwrap();
        let index_at = good.len() - 32;
        let with_entry = |offset: u64, nbytes: u64| {
            let mut bad = good.clone();
            bad[index_at..index_at + 8].copy_from_slice(&offset.to_le_bytes());
            bad[index_at + 8..index_at + 16].copy_from_slice(&nbytes.to_le_bytes());
            bad
        };
        for bad in [
            with_entry(u64::MAX - 3, 8),
            with_entry(0, 1 << 40),
            with_entry(EMPTY, 8),
            with_entry(44, 8),
            good[..10].to_vec(),
            Vec::new(),
        ] {
            let err = codec.decode(bad.clone(), &r).unwrap_err();
            assert!(
                matches!(
                    err,
                    CodecError::Corrupt { .. } | CodecError::WrongSize { .. }
                ),
                "{err}"
            );
            let partial = codec.decode_partial(
                &SliceReader(Some(&bad)),
                &r,
                &[ChunkBox::new(vec![0, 0], vec![1, 1])],
            );
            assert!(partial.is_err());
        }
        let crc = sharding(IndexLocation::End, true);
        let mut bad = crc.encode(u16s(0..8), &r).unwrap();
        let last = bad.len() - 5;
        bad[last] ^= 1;
        assert!(matches!(
            crc.decode(bad, &r).unwrap_err(),
            CodecError::ChecksumMismatch { .. }
        ));
    }

    #[test]
    fn partial_decode_reads_the_index_then_only_the_needed_inner_chunks() {
        let codec = sharding(IndexLocation::End, true);
        let r = repr(&[4, 8]);
        let data = u16s(0..32);
        let encoded = codec.encode(data, &r).unwrap();
        let requests = Mutex::new(Vec::new());
        let reader = |ranges: &[ByteRange]| {
            requests.lock().unwrap().push(ranges.to_vec());
            SliceReader(Some(&encoded)).read_ranges(ranges)
        };
        // Elements (2..4, 5..7): inner chunks (1, 2) and (1, 3).
        let b = ChunkBox::new(vec![2, 5], vec![2, 2]);
        let out = codec.decode_partial(&reader, &r, &[b]).unwrap().unwrap();
        assert_eq!(out, vec![u16s([21, 22, 29, 30])]);
        let requests = requests.into_inner().unwrap();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0], vec![ByteRange::Suffix(8 * 16 + 4)]);
        // The two inner chunks are adjacent: one coalesced range of 16 bytes.
        assert_eq!(requests[1], vec![ByteRange::new(6 * 8, 16)]);
    }

    #[test]
    fn partial_encode_copies_untouched_chunks_and_keeps_missing_ones_missing() {
        let codec = sharding(IndexLocation::Start, true);
        let r = repr(&[4, 4]);
        let mut data = u16s(0..16);
        // The last inner chunk (rows 2..4, columns 2..4) holds the fill value.
        for (row, col) in [(2, 2), (2, 3), (3, 2), (3, 3)] {
            let at = (row * 4 + col) * 2;
            data[at..at + 2].copy_from_slice(&7u16.to_ne_bytes());
        }
        let encoded = codec.encode(data.clone(), &r).unwrap();
        // Overwrite element (1, 2) only: inner chunk 1 is decoded and rewritten.
        let update = (ChunkBox::new(vec![1, 2], vec![1, 1]), &u16s([999])[..]);
        let rewritten = codec
            .encode_partial(&SliceReader(Some(&encoded)), &r, &[update])
            .unwrap()
            .unwrap();
        let mut expected = data.clone();
        expected[12..14].copy_from_slice(&999u16.to_ne_bytes());
        assert_eq!(codec.decode(rewritten, &r).unwrap(), expected);
        // Filling the whole shard with the fill value leaves nothing to store.
        let fill = u16s([7; 16]);
        let update = (ChunkBox::new(vec![0, 0], vec![4, 4]), &fill[..]);
        assert!(
            codec
                .encode_partial(&SliceReader(Some(&encoded)), &r, &[update])
                .unwrap()
                .is_none()
        );
        // A missing shard starts as the fill value.
        let update = (ChunkBox::new(vec![3, 0], vec![1, 1]), &u16s([5])[..]);
        let new = codec
            .encode_partial(&SliceReader(None), &r, &[update])
            .unwrap()
            .unwrap();
        let mut expected = fill.clone();
        expected[24..26].copy_from_slice(&5u16.to_ne_bytes());
        assert_eq!(codec.decode(new, &r).unwrap(), expected);
    }

    #[test]
    fn nested_sharding_round_trips_and_reads_partially() {
        let inner = ShardingCodec::new(&[1, 2], vec![bytes_codec()]);
        let codec = ShardingCodec::new(&[2, 4], vec![Codec::ArrayToBytes(Arc::new(inner))]);
        let r = repr(&[4, 8]);
        let data = u16s(100..132);
        let encoded = codec.encode(data.clone(), &r).unwrap();
        assert_eq!(codec.decode(encoded.clone(), &r).unwrap(), data);
        let out = codec
            .decode_partial(
                &SliceReader(Some(&encoded)),
                &r,
                &[ChunkBox::new(vec![3, 6], vec![1, 2])],
            )
            .unwrap()
            .unwrap();
        assert_eq!(out, vec![u16s([130, 131])]);
    }

    /// A reader that records the ranges it is asked for.
    struct Recording<'a> {
        bytes: &'a [u8],
        log: Mutex<Vec<(u64, u64)>>,
    }

    impl BytesRangeReader for Recording<'_> {
        fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, CodecError> {
            let mut log = self.log.lock().unwrap();
            for r in ranges {
                let (o, l) = match *r {
                    ByteRange::FromStart { offset, length } => {
                        (offset, length.unwrap_or(self.bytes.len() as u64 - offset))
                    }
                    ByteRange::Suffix(n) => (self.bytes.len() as u64 - n, n),
                };
                log.push((o, l));
            }
            drop(log);
            SliceReader(Some(self.bytes)).read_ranges(ranges)
        }
    }

    #[test]
    fn nested_and_uncompressed_inner_chunks_are_read_in_ranges() {
        // Outer shard 128x128 of inner shards 64x64 (8 KiB, over the
        // coalescing gap) of inner-inner chunks 4x4.
        let inner = ShardingCodec::new(&[4, 4], vec![bytes_codec()]);
        let codec = ShardingCodec::new(&[64, 64], vec![Codec::ArrayToBytes(Arc::new(inner))]);
        let r = repr(&[128, 128]);
        let values: Vec<u16> = (0..16384).collect();
        let encoded = codec.encode(u16s(values.iter().copied()), &r).unwrap();
        let reader = Recording {
            bytes: &encoded,
            log: Mutex::new(Vec::new()),
        };
        let out = codec
            .decode_partial(&reader, &r, &[ChunkBox::new(vec![40, 50], vec![1, 2])])
            .unwrap()
            .unwrap();
        assert_eq!(out, vec![u16s([40 * 128 + 50, 40 * 128 + 51])]);
        let log = reader.log.into_inner().unwrap();
        // The outer index (4 inner shards x 16 bytes + crc32c), the inner
        // shard's index (256 x 16 + 4), then the one 4x4 chunk holding the
        // two elements (32 bytes: smaller than the gap worth a ranged read,
        // so read whole). Never the whole 8 KiB inner shard.
        let sizes: Vec<u64> = log.iter().map(|&(_, l)| l).collect();
        assert_eq!(sizes, [68, 4100, 32], "{log:?}");

        // A box that covers an inner shard entirely reads it whole.
        let reader = Recording {
            bytes: &encoded,
            log: Mutex::new(Vec::new()),
        };
        let out = codec
            .decode_partial(&reader, &r, &[ChunkBox::new(vec![0, 64], vec![64, 64])])
            .unwrap()
            .unwrap();
        let expected: Vec<u16> = (0..64)
            .flat_map(|row| (64..128).map(move |col| row * 128 + col))
            .collect();
        assert_eq!(out, vec![u16s(expected)]);
        assert_eq!(reader.log.into_inner().unwrap().len(), 2);

        // Plain `bytes` inner chunks: one element of a 64x64 inner chunk
        // reads its 2 bytes.
        let flat = ShardingCodec::new(&[64, 64], vec![bytes_codec()]);
        let encoded = flat.encode(u16s(values.iter().copied()), &r).unwrap();
        let reader = Recording {
            bytes: &encoded,
            log: Mutex::new(Vec::new()),
        };
        let out = flat
            .decode_partial(&reader, &r, &[ChunkBox::new(vec![33, 5], vec![1, 1])])
            .unwrap()
            .unwrap();
        assert_eq!(out, vec![u16s([33 * 128 + 5])]);
        let sizes: Vec<u64> = reader
            .log
            .into_inner()
            .unwrap()
            .iter()
            .map(|&(_, l)| l)
            .collect();
        assert_eq!(sizes, [68, 2]);
    }

    #[test]
    fn metadata_round_trips_through_the_registry() {
        let codec = sharding(IndexLocation::Start, true);
        let metadata = codec.metadata();
        let json = extension_to_json(&metadata);
        assert_eq!(
            json,
            serde_json::json!({
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": [2, 2],
                    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                    "index_codecs": [
                        {"name": "bytes", "configuration": {"endian": "little"}},
                        {"name": "crc32c"}
                    ],
                    "index_location": "start"
                }
            })
        );
        let again = codec_from_metadata(&metadata).unwrap();
        assert_eq!(again.metadata(), metadata);
    }

    #[test]
    fn compressed_index_codecs_are_rejected() {
        let config = serde_json::json!({
            "chunk_shape": [2],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "crc32c"},
                {"name": "crc32c"}
            ]
        });
        let serde_json::Value::Object(config) = config else {
            unreachable!()
        };
        let err = create(&ExtensionObject::with_configuration(NAME, config)).unwrap_err();
        assert!(err.to_string().contains("index_codecs"), "{err}");
    }

    fn string_repr(shape: &[u64]) -> ChunkRepr {
        ChunkRepr {
            shape: shape.to_vec(),
            data_type: DataType::String,
            fill_value: FillValue::new(b"-".to_vec()),
        }
    }

    fn vlen_sharding(location: IndexLocation, checksum: bool) -> ShardingCodec {
        let utf8 = Codec::ArrayToBytes(Arc::new(crate::codec::vlen::VlenCodec::utf8()));
        ShardingCodec::new(&[2, 2], vec![utf8])
            .with_index_location(location)
            .with_index_checksum(checksum)
            .unwrap()
    }

    #[test]
    fn string_shards_skip_all_fill_inner_chunks_in_every_layout() {
        let r = string_repr(&[2, 4]);
        // Inner chunk 0 is a b / c d; inner chunk 1 (columns 2..4) is all fill.
        let data = VlenChunk::from_items(["a", "bé", "-", "-", "c", "", "-", "-"]);
        for location in [IndexLocation::Start, IndexLocation::End] {
            for checksum in [false, true] {
                let codec = vlen_sharding(location, checksum);
                let encoded = codec.encode_vlen(&data, &r).unwrap();
                // One inner chunk: count + 4 lengths + 4 bytes of text.
                let inner_len = 4 + 4 * 4 + "abéc".len();
                let index_len = 32 + if checksum { 4 } else { 0 };
                assert_eq!(encoded.len(), inner_len + index_len);
                let index_at = match location {
                    IndexLocation::Start => 0,
                    IndexLocation::End => inner_len,
                };
                let word = |k: usize| {
                    u64::from_le_bytes(
                        encoded[index_at + 8 * k..index_at + 8 * k + 8]
                            .try_into()
                            .unwrap(),
                    )
                };
                let first = if location == IndexLocation::Start {
                    index_len as u64
                } else {
                    0
                };
                assert_eq!([word(0), word(1)], [first, inner_len as u64]);
                assert_eq!([word(2), word(3)], [EMPTY, EMPTY]);
                assert_eq!(codec.decode_vlen(encoded, &r).unwrap(), data);
            }
        }
    }

    #[test]
    fn nested_string_shards_round_trip() {
        let utf8 = Codec::ArrayToBytes(Arc::new(crate::codec::vlen::VlenCodec::utf8()));
        let inner = ShardingCodec::new(&[1, 2], vec![utf8]);
        let outer = ShardingCodec::new(&[2, 2], vec![Codec::ArrayToBytes(Arc::new(inner))]);
        let r = string_repr(&[4, 4]);
        let data = VlenChunk::from_items((0..16).map(|i| {
            if i % 3 == 0 {
                "-".to_string()
            } else {
                format!("v{i}")
            }
        }));
        let encoded = outer.encode_vlen(&data, &r).unwrap();
        assert_eq!(outer.decode_vlen(encoded, &r).unwrap(), data);
        // Every element the fill value: every inner chunk is missing.
        let fill = VlenChunk::filled(16, b"-");
        let encoded = outer.encode_vlen(&fill, &r).unwrap();
        assert_eq!(encoded.len(), 4 * 16 + 4);
        assert_eq!(outer.decode_vlen(encoded, &r).unwrap(), fill);
    }

    #[test]
    fn corrupt_string_shards_are_errors_not_panics() {
        let codec = vlen_sharding(IndexLocation::End, false);
        let r = string_repr(&[2, 4]);
        let data = VlenChunk::from_items(["a", "b", "c", "d", "e", "f", "g", "h"]);
        let good = codec.encode_vlen(&data, &r).unwrap();
        assert!(
            codec
                .encode_vlen(&VlenChunk::from_items(["a"]), &r)
                .is_err()
        );
        for cut in [0, 5, good.len() - 1] {
            assert!(
                codec.decode_vlen(good[..cut].to_vec(), &r).is_err(),
                "{cut}"
            );
        }
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0x5a;
            // Any outcome but a panic; a decoded shard has every element.
            if let Ok(chunk) = codec.decode_vlen(bad, &r) {
                assert_eq!(chunk.len(), 8);
            }
        }
    }

    #[test]
    fn partial_string_reads_decode_only_the_inner_chunks_they_touch() {
        let codec = vlen_sharding(IndexLocation::End, true);
        let r = string_repr(&[4, 4]);
        let data = VlenChunk::from_items((0..16).map(|i| {
            if i == 5 {
                "-".to_string()
            } else {
                format!("e{i}")
            }
        }));
        let encoded = codec.encode_vlen(&data, &r).unwrap();
        let requests = Mutex::new(Vec::new());
        let reader = |ranges: &[ByteRange]| {
            requests.lock().unwrap().push(ranges.to_vec());
            SliceReader(Some(&encoded)).read_ranges(ranges)
        };
        // Rows 1..3, columns 1..2: inner chunks (0, 0) and (1, 0).
        let b = ChunkBox::new(vec![1, 1], vec![2, 1]);
        let whole = ChunkBox::new(vec![0, 0], vec![4, 4]);
        let out = codec
            .decode_partial_vlen(&reader, &r, &[b, whole])
            .unwrap()
            .unwrap();
        assert_eq!(out[0], VlenChunk::from_items(["-", "e9"]));
        assert_eq!(out[1], data);
        // The index, then one batch of inner chunks.
        assert_eq!(requests.lock().unwrap().len(), 2);
        requests.lock().unwrap().clear();
        let corner = ChunkBox::new(vec![3, 3], vec![1, 1]);
        let out = codec
            .decode_partial_vlen(&reader, &r, std::slice::from_ref(&corner))
            .unwrap()
            .unwrap();
        assert_eq!(out[0], VlenChunk::from_items(["e15"]));
        let batches = requests.lock().unwrap().clone();
        // One inner chunk of 4 elements: 4 + 4 * 4 + "e10e11e14e15".len() bytes.
        assert_eq!(batches.len(), 2);
        assert!(
            matches!(
                batches[1].as_slice(),
                [ByteRange::FromStart {
                    length: Some(32),
                    ..
                }]
            ),
            "{batches:?}"
        );
        // A missing shard is `None`; a box outside the shard is an error.
        assert_eq!(
            codec
                .decode_partial_vlen(&SliceReader(None), &r, &[corner])
                .unwrap(),
            None
        );
        let outside = ChunkBox::new(vec![3, 3], vec![2, 1]);
        assert!(codec.decode_partial_vlen(&reader, &r, &[outside]).is_err());
    }

    #[test]
    fn partial_string_writes_decode_only_the_inner_chunks_they_touch() {
        let codec = vlen_sharding(IndexLocation::Start, true);
        let r = string_repr(&[4, 4]);
        let data = VlenChunk::from_items((0..16).map(|i| format!("e{i}")));
        let encoded = codec.encode_vlen(&data, &r).unwrap();
        let requests = Mutex::new(Vec::new());
        let reader = |ranges: &[ByteRange]| {
            requests.lock().unwrap().push(ranges.to_vec());
            SliceReader(Some(&encoded)).read_ranges(ranges)
        };
        // (1, 1) in inner chunk (0, 0), and all of inner chunk (1, 1).
        let one = VlenChunk::from_items(["x"]);
        let four = VlenChunk::from_items(["-", "-", "-", "-"]);
        let updates = [
            (ChunkBox::new(vec![1, 1], vec![1, 1]), &one),
            (ChunkBox::new(vec![2, 2], vec![2, 2]), &four),
        ];
        let new = codec
            .encode_partial_vlen(&reader, &r, &updates)
            .unwrap()
            .unwrap();
        // The index, then one batch of the three inner chunks not covered.
        let batches = requests.lock().unwrap().clone();
        assert_eq!(batches.len(), 2);
        assert_eq!(batches[1].len(), 1, "coalesced: {batches:?}");
        let mut expected: Vec<String> = (0..16).map(|i| format!("e{i}")).collect();
        expected[5] = "x".into();
        for i in [10, 11, 14, 15] {
            expected[i] = "-".into();
        }
        assert_eq!(
            codec.decode_vlen(new.clone(), &r).unwrap(),
            VlenChunk::from_items(&expected)
        );
        // Inner chunk (1, 1) is now all fill: not stored. Untouched inner
        // chunks (0, 1) and (1, 0) keep their stored bytes.
        let word = |k: usize| u64::from_le_bytes(new[8 * k..8 * k + 8].try_into().unwrap());
        assert_eq!([word(6), word(7)], [EMPTY, EMPTY]);
        let old_word = |k: usize| u64::from_le_bytes(encoded[8 * k..8 * k + 8].try_into().unwrap());
        for i in [1, 2] {
            let (o, n) = (old_word(2 * i) as usize, old_word(2 * i + 1) as usize);
            let (p, m) = (word(2 * i) as usize, word(2 * i + 1) as usize);
            assert_eq!(new[p..p + m], encoded[o..o + n]);
        }
        // Into a missing shard: only the touched inner chunk is stored;
        // fill everywhere gives `None`; a wrong-length update is an error.
        let new = codec
            .encode_partial_vlen(&SliceReader(None), &r, &updates[..1])
            .unwrap()
            .unwrap();
        let mut expected = vec!["-".to_string(); 16];
        expected[5] = "x".into();
        assert_eq!(
            codec.decode_vlen(new, &r).unwrap(),
            VlenChunk::from_items(&expected)
        );
        assert_eq!(
            codec
                .encode_partial_vlen(&SliceReader(None), &r, &updates[1..])
                .unwrap(),
            None
        );
        let short = [(ChunkBox::new(vec![0, 0], vec![2, 2]), &one)];
        assert!(codec.encode_partial_vlen(&reader, &r, &short).is_err());
    }
}
