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

use super::copy::BoxCopy;
use super::partial::{self, BytesRangeReader, ChunkBox};
use super::{
    ArrayToBytesCodec, ChunkRepr, Codec, CodecChain, CodecError, bytes::BytesCodec,
    codec_from_metadata, registry::parse_configuration,
};
use crate::format::v3::{extension_from_json, extension_to_json};
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
            super::crc32c::Crc32cCodec::new(),
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

    /// Decodes the inner chunks of a whole shard held in memory into `out`.
    fn decode_shard_into(
        &self,
        shard: &Shard,
        encoded: &[u8],
        out: &mut [u8],
    ) -> Result<(), CodecError> {
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
        let index = self.decode_index(shard, index_bytes.to_vec(), Some(len))?;
        let decode_one = |i: usize| -> Result<Option<Vec<u8>>, CodecError> {
            Self::entry(&index, i)
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
        let shard = self.shard(repr)?;
        let expected = repr.size_bytes()?;
        if decoded.len() != expected {
            return Err(CodecError::WrongSize {
                expected,
                actual: decoded.len(),
            });
        }
        let zeros = vec![0u64; shard.shape.len()];
        let inner_bytes = shard.inner_repr.size_bytes()?;
        let encoded = (0..shard.n)
            .into_par_iter()
            .map(|i| {
                let mut chunk = vec![0u8; inner_bytes];
                BoxCopy {
                    src_shape: &shard.shape,
                    src_start: &shard.start(i),
                    dst_shape: &shard.inner_shape,
                    dst_start: &zeros,
                    shape: &shard.inner_shape,
                    elem: shard.elem,
                }
                .run(&decoded, &mut chunk);
                Self::encode_inner(&shard, chunk)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let chunks: Vec<Option<&[u8]>> = encoded.iter().map(Option::as_deref).collect();
        self.assemble(&shard, &chunks)
    }

    fn decode(&self, encoded: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        let mut out = vec![0u8; repr.size_bytes()?];
        self.decode_into(encoded, repr, &mut out)?;
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
                    let start = shard.start(i);
                    if let Some(common) = b.intersect(&start, &shard.inner_shape) {
                        let src_start: Vec<u64> = common
                            .start
                            .iter()
                            .zip(&start)
                            .map(|(c, s)| c - s)
                            .collect();
                        let dst_start: Vec<u64> = common
                            .start
                            .iter()
                            .zip(&b.start)
                            .map(|(c, s)| c - s)
                            .collect();
                        BoxCopy {
                            src_shape: &shard.inner_shape,
                            src_start: &src_start,
                            dst_shape: &b.shape,
                            dst_start: &dst_start,
                            shape: &common.shape,
                            elem: shard.elem,
                        }
                        .run(chunk, &mut out);
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
                let start = shard.start(i);
                for (b, data) in updates {
                    if let Some(common) = b.intersect(&start, &shard.inner_shape) {
                        let src_start: Vec<u64> = common
                            .start
                            .iter()
                            .zip(&b.start)
                            .map(|(c, s)| c - s)
                            .collect();
                        let dst_start: Vec<u64> = common
                            .start
                            .iter()
                            .zip(&start)
                            .map(|(c, s)| c - s)
                            .collect();
                        BoxCopy {
                            src_shape: &b.shape,
                            src_start: &src_start,
                            dst_shape: &shard.inner_shape,
                            dst_start: &dst_start,
                            shape: &common.shape,
                            elem: shard.elem,
                        }
                        .run(data, &mut chunk);
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
}
