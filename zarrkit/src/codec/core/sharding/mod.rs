//! The `sharding_indexed` array-to-bytes codec: many inner chunks in one
//! stored value (a shard), found through an index of offsets and lengths.
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/index.html>
//! Names: v3 `sharding_indexed`.
//!
//! Inner chunks are encoded with the inner `codecs` chain (which may itself
//! be sharded), in parallel. Inner chunks equal to the fill value are not
//! stored. Reading part of a shard reads the index with one ranged request
//! and the inner chunks it needs with one more batch, planned over the
//! inner chunk grid by the same planner as an array's chunks
//! ([`ArrayToBytesCodec::decode_partial`]); a read into the caller's
//! buffer copies each inner chunk it decodes straight there
//! ([`ArrayToBytesCodec::decode_partial_into`]); rewriting part of a shard
//! decodes only the inner chunks the update covers in part and copies the
//! stored bytes of the rest unchanged ([`ArrayToBytesCodec::encode_partial`]).
//! Shards of variable-length elements (`string`, `bytes`; zarr-python
//! writes these with inner `vlen-utf8` + `zstd`) take the same paths: the
//! chunk data ([`ChunkData`]) says which kind it holds.
//!
//! The module is split by job: `index.rs` (the shard layout and its
//! index), `read.rs` (decoding, whole and in part) and `write.rs`
//! (encoding, whole and in part).
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

mod index;
mod read;
mod write;

use self::index::Shard;
use crate::codec::partial::{BoxOut, BytesRangeReader, ChunkBox};
use crate::codec::{
    ArrayToBytesCodec, ChunkData, ChunkRepr, Codec, CodecCapabilities, CodecError,
    bytes::BytesCodec, codec_from_metadata, parse_configuration,
};
use crate::metadata::json::{extension_from_json, extension_to_json};
use crate::metadata::{ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use std::num::NonZeroU64;
use std::sync::{Arc, OnceLock};

pub(super) const NAME: &str = "sharding_indexed";

/// The offset and length of an inner chunk that is not stored
/// ("Binary shard format": both are `2^64 - 1`).
pub(super) const EMPTY: u64 = u64::MAX;

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
    /// The shard layout (inner and index chains) for the first chunk
    /// representation encoded or decoded, so every shard of a regular grid
    /// reuses it.
    prepared: OnceLock<(ChunkRepr, Arc<Shard>)>,
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
            prepared: OnceLock::new(),
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
        self.prepared = OnceLock::new();
        self
    }

    /// Sets where the index is stored.
    #[must_use]
    pub fn with_index_location(mut self, index_location: IndexLocation) -> Self {
        self.index_location = index_location;
        self.prepared = OnceLock::new();
        self
    }

    /// Sets whether the index carries a `crc32c` checksum.
    ///
    /// # Errors
    /// [`CodecError::NotEnabled`] when asking for a checksum in a build
    /// without the `crc32c` feature.
    pub fn with_index_checksum(mut self, checksum: bool) -> Result<Self, CodecError> {
        self.prepared = OnceLock::new();
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
        prepared: OnceLock::new(),
    })))
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

    fn capabilities(&self) -> CodecCapabilities {
        CodecCapabilities {
            partial_decode: true,
            partial_encode: true,
            nests_chunks: true,
            ..CodecCapabilities::default()
        }
    }

    fn as_sharding(&self) -> Option<&ShardingCodec> {
        Some(self)
    }

    fn validate(&self, repr: &ChunkRepr) -> Result<(), CodecError> {
        self.shard(repr).map(|_| ())
    }

    fn encode(&self, decoded: ChunkData<'_>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        self.encode_shard(decoded, repr)
    }

    fn encode_from(
        &self,
        src: &[u8],
        src_shape: &[u64],
        src_start: &[u64],
        repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        self.encode_shard_from(src, src_shape, src_start, repr)
    }

    fn decode(&self, encoded: Vec<u8>, repr: &ChunkRepr) -> Result<ChunkData<'static>, CodecError> {
        self.decode_shard(encoded, repr)
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
        let zeros = vec![0; shard.shape.len()];
        let whole = BoxOut {
            buf: out,
            shape: &shard.shape,
            start: &zeros,
        };
        let decoded = self.decode_shard_into(&shard, &encoded, whole);
        give_back(encoded);
        decoded
    }

    fn decode_into_box(
        &self,
        encoded: Vec<u8>,
        repr: &ChunkRepr,
        out: BoxOut<'_>,
    ) -> Result<(), CodecError> {
        // Fixed-size data only: a variable-length representation has no size.
        repr.size_bytes()?;
        let shard = self.shard(repr)?;
        out.check(&shard.shape, shard.elem)?;
        let decoded = self.decode_shard_into(&shard, &encoded, out);
        give_back(encoded);
        decoded
    }

    fn decode_partial(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        boxes: &[ChunkBox],
    ) -> Result<Option<Vec<ChunkData<'static>>>, CodecError> {
        self.decode_shard_partial(reader, repr, boxes)
    }

    fn decode_partial_into(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        b: &ChunkBox,
        out: BoxOut<'_>,
    ) -> Result<bool, CodecError> {
        self.decode_shard_partial_into(reader, repr, b, out)
    }

    fn encode_partial(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        updates: &[(ChunkBox, ChunkData<'_>)],
    ) -> Result<Option<Vec<u8>>, CodecError> {
        self.encode_shard_partial(reader, repr, updates)
    }
}

/// Gives a whole shard's stored bytes, once decoded, to the process's
/// buffer pool, where the store's next read of a value that size takes
/// them. Dropped instead, a 13 MiB shard's bytes went back to glibc, which
/// gave the next read fresh memory again (the second read of a process:
/// glibc maps so large a buffer afresh until it has raised its mapping
/// threshold): 3,400 page faults, and 10.8 ms in `pread` against 3.5 ms
/// into memory faulted in before.
fn give_back(encoded: Vec<u8>) {
    crate::store::buffers::BUFFERS.give([encoded]);
}

// The tests write indices with and without a checksum.
#[cfg(all(test, feature = "crc32c"))]
mod tests {
    use super::*;
    use crate::codec::partial::SliceReader;
    use crate::codec::vlen::VlenChunk;
    use crate::metadata::{DataType, FillValue};
    use crate::store::ByteRange;
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
        let encoded = codec.encode(data.clone().into(), &r).unwrap();
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

    /// A shard of more than `PARALLEL_ASSEMBLY` stored bytes, whose inner
    /// chunks are copied into it in parallel, is laid out byte for byte
    /// as the spec says, with the index at either end.
    #[test]
    fn a_large_shard_assembled_in_parallel_matches_the_spec_byte_for_byte() {
        // A 512 x 1536 shard of 256 x 512 inner chunks (256 KiB each); the
        // fifth is all fill value and not stored: 1.25 MiB of data.
        let (rows, cols, inner_rows, inner_cols) = (512usize, 1536usize, 256usize, 512usize);
        let r = repr(&[rows as u64, cols as u64]);
        let value = |y: usize, x: usize| -> u16 {
            if y >= inner_rows && (inner_cols..2 * inner_cols).contains(&x) {
                7
            } else {
                (y * 31 + x * 17 % 65521) as u16 | 1 << 15
            }
        };
        let data = u16s((0..rows * cols).map(|i| value(i / cols, i % cols)));
        let mut stored = Vec::new();
        let mut entries = Vec::new();
        for (cy, cx) in [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)] {
            if (cy, cx) == (1, 1) {
                entries.push((EMPTY, EMPTY));
                continue;
            }
            let chunk: Vec<u8> = (0..inner_rows * inner_cols)
                .flat_map(|i| {
                    value(
                        cy * inner_rows + i / inner_cols,
                        cx * inner_cols + i % inner_cols,
                    )
                    .to_le_bytes()
                })
                .collect();
            entries.push((stored.len() as u64, chunk.len() as u64));
            stored.extend_from_slice(&chunk);
        }
        assert!(stored.len() >= super::index::PARALLEL_ASSEMBLY);
        for location in [IndexLocation::Start, IndexLocation::End] {
            let codec =
                ShardingCodec::new(&[inner_rows as u64, inner_cols as u64], vec![bytes_codec()])
                    .with_index_location(location)
                    .with_index_checksum(false)
                    .unwrap();
            let encoded = codec.encode(data.clone().into(), &r).unwrap();
            let shift = match location {
                IndexLocation::Start => 6 * 16,
                IndexLocation::End => 0,
            };
            let mut index = Vec::new();
            for &(offset, len) in &entries {
                let offset = if offset == EMPTY {
                    EMPTY
                } else {
                    offset + shift
                };
                index.extend_from_slice(&offset.to_le_bytes());
                index.extend_from_slice(&len.to_le_bytes());
            }
            let expected = match location {
                IndexLocation::Start => [index.as_slice(), &stored].concat(),
                IndexLocation::End => [stored.as_slice(), &index].concat(),
            };
            assert_eq!(encoded.len(), expected.len(), "{location:?}");
            assert!(encoded == expected, "{location:?}: the bytes differ");
            assert_eq!(codec.decode(encoded, &r).unwrap(), data);
        }
    }

    /// A sink that records each append, and fails from append `fail_at` on.
    struct SinkLog {
        appends: Vec<Vec<u8>>,
        fail_at: Option<usize>,
    }

    impl crate::codec::BytesSink for SinkLog {
        fn append(&mut self, parts: &[&[u8]]) -> Result<(), CodecError> {
            if self.fail_at == Some(self.appends.len()) {
                return Err(CodecError::Store(crate::store::StoreError::Unsupported {
                    store: "recording sink",
                    operation: "append",
                }));
            }
            self.appends.push(parts.concat());
            Ok(())
        }
    }

    /// A shard streamed to a sink as its inner chunks are encoded holds
    /// exactly the bytes of the assembled shard, appended in several
    /// parts with the index last; inner chunks equal to the fill value are
    /// not stored. The shard is a box of a larger source (each inner chunk
    /// is gathered from rows of it) with zstd inner chunks.
    #[test]
    fn a_shard_streamed_in_parts_matches_the_assembled_shard() {
        let (rows, cols) = (384usize, 1152usize);
        let (shard_rows, shard_cols, inner) = (256u64, 1024u64, 32u64);
        let src_start = [64u64, 96];
        let value = |y: usize, x: usize| -> u16 {
            // The shard's inner chunk (1, 2), rows 96..128 and columns
            // 160..192 of the source, is all fill value.
            if (96..128).contains(&y) && (160..192).contains(&x) {
                7
            } else {
                ((y * 7919 + x * 104_729 + (x * y) % 251) % 65_521) as u16
            }
        };
        let src = u16s((0..rows * cols).map(|i| value(i / cols, i % cols)));
        let r = repr(&[shard_rows, shard_cols]);
        let zstd = Codec::BytesToBytes(Arc::new(
            crate::codec::core::zstd::ZstdCodec::new(1, false).unwrap(),
        ));
        let codec = ShardingCodec::new(&[inner, inner], vec![bytes_codec(), zstd])
            .with_index_checksum(true)
            .unwrap();
        let src_shape = [rows as u64, cols as u64];
        let assembled = codec
            .encode_shard_from(&src, &src_shape, &src_start, &r)
            .unwrap();
        let mut sink = SinkLog {
            appends: Vec::new(),
            fail_at: None,
        };
        assert!(
            codec
                .encode_shard_from_streamed(&src, &src_shape, &src_start, &r, &mut sink)
                .unwrap()
        );
        let streamed = sink.appends.concat();
        assert!(streamed == assembled, "the streamed shard's bytes differ");
        // More than `MIN_APPEND` of inner chunks: appended while encoding,
        // then the rest, then the index (256 entries and a crc32c) alone.
        assert!(assembled.len() > 2 * (128 << 10), "{}", assembled.len());
        assert!(sink.appends.len() >= 3, "{} appends", sink.appends.len());
        assert_eq!(sink.appends.last().map(Vec::len), Some(256 * 16 + 4));
        // The shard decodes to the source's box, and the fill inner chunk
        // (number 1 * 32 + 2) was not stored.
        let index = codec
            .whole_index(&codec.shard(&r).unwrap(), &streamed)
            .unwrap();
        assert_eq!(index[2 * 34..2 * 35], [EMPTY, EMPTY]);
        assert_ne!(index[2 * 33..2 * 34], [EMPTY, EMPTY]);
        let expected = u16s((0..(shard_rows * shard_cols) as usize).map(|i| {
            let (y, x) = (i / shard_cols as usize, i % shard_cols as usize);
            value(y + src_start[0] as usize, x + src_start[1] as usize)
        }));
        assert_eq!(codec.decode(streamed, &r).unwrap(), expected);
        // A sink that fails on its second append fails the encode with
        // its error, and nothing more is appended.
        let mut failing = SinkLog {
            appends: Vec::new(),
            fail_at: Some(1),
        };
        let err = codec
            .encode_shard_from_streamed(&src, &src_shape, &src_start, &r, &mut failing)
            .unwrap_err();
        assert!(matches!(err, CodecError::Store(_)), "{err}");
        assert_eq!(failing.appends.len(), 1);
        // An index at the start cannot be streamed: nothing is appended.
        let start = ShardingCodec::new(&[inner, inner], vec![bytes_codec()])
            .with_index_checksum(false)
            .unwrap()
            .with_index_location(IndexLocation::Start);
        let mut untouched = SinkLog {
            appends: Vec::new(),
            fail_at: None,
        };
        assert!(
            !start
                .encode_shard_from_streamed(&src, &src_shape, &src_start, &r, &mut untouched)
                .unwrap()
        );
        assert!(untouched.appends.is_empty());
    }

    #[test]
    fn every_index_location_and_checksum_round_trips() {
        let r = repr(&[4, 6]);
        let data = u16s((0..24).map(|v| v * 3));
        for location in [IndexLocation::Start, IndexLocation::End] {
            for checksum in [false, true] {
                let codec = sharding(location, checksum);
                let encoded = codec.encode(data.clone().into(), &r).unwrap();
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

    /// A shard decoded whole into the caller's buffer gives its stored
    /// bytes to the buffer pool, where the next read of a value that size
    /// takes them (the same memory, not a fresh mapping).
    #[test]
    fn a_shard_decoded_whole_gives_its_bytes_to_the_buffer_pool() {
        use crate::store::buffers::BUFFERS;
        let codec = sharding(IndexLocation::End, true);
        let r = repr(&[4, 6]);
        let data = u16s((0..24).map(|v| v * 5 + 1));
        let encoded = codec.encode(data.clone().into(), &r).unwrap();
        // A capacity no other buffer of this process has.
        let stored = |extra: usize| {
            let mut stored = Vec::with_capacity((3 << 20) + extra);
            stored.extend_from_slice(&encoded);
            let key = (stored.as_ptr() as usize, stored.capacity());
            (stored, key)
        };
        let taken = |capacity: usize| {
            let buffer = BUFFERS.empty(capacity).unwrap();
            (buffer.as_ptr() as usize, buffer.capacity())
        };
        let (bytes, key) = stored(12_345);
        let mut out = vec![0u8; data.len()];
        ArrayToBytesCodec::decode_into(&codec, bytes, &r, &mut out).unwrap();
        assert_eq!(out, data);
        assert_eq!(taken(key.1), key);
        // Into a box of a larger buffer: a 6 × 8 region, the shard at (1, 2).
        let (bytes, key) = stored(23_456);
        let mut region = vec![0u8; 6 * 8 * 2];
        let start = [1, 2];
        let boxed = BoxOut {
            buf: &mut region,
            shape: &[6, 8],
            start: &start,
        };
        codec.decode_into_box(bytes, &r, boxed).unwrap();
        for (row, chunk) in data.chunks(12).enumerate() {
            let at = ((row + 1) * 8 + 2) * 2;
            assert_eq!(&region[at..at + 12], chunk, "row {row}");
        }
        assert_eq!(taken(key.1), key);
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
        let good = codec.encode(u16s(0..8).into(), &r).unwrap();
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
        let mut bad = crc.encode(u16s(0..8).into(), &r).unwrap();
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
        let encoded = codec.encode(data.into(), &r).unwrap();
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

    /// A reader of a value in memory that records the ranges read and
    /// those announced through `will_read`.
    struct Recorder<'a> {
        value: Option<&'a [u8]>,
        reads: Mutex<Vec<Vec<ByteRange>>>,
        announced: Mutex<Vec<ByteRange>>,
    }

    impl BytesRangeReader for Recorder<'_> {
        fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, CodecError> {
            self.reads.lock().unwrap().push(ranges.to_vec());
            SliceReader(self.value).read_ranges(ranges)
        }

        fn will_read(&self, range: ByteRange) {
            self.announced.lock().unwrap().push(range);
        }
    }

    #[test]
    fn a_whole_shard_read_in_ranges_decodes_slab_by_slab_into_place() {
        // A 16 × 4 shard of 2 × 2 inner chunks: 8 slabs of 2. Inner chunk
        // (3, 1), rows 6..8 and columns 2..4, is all fill value: not stored.
        let codec = sharding(IndexLocation::End, true);
        let r = repr(&[16, 4]);
        let mut values: Vec<u16> = (100..164).collect();
        for (row, col) in [(6, 2), (6, 3), (7, 2), (7, 3)] {
            values[row * 4 + col] = 7;
        }
        let encoded = codec.encode(u16s(values.clone()).into(), &r).unwrap();
        // The whole shard through `reader`, into `out` of `shape` at `start`.
        let whole_into = |reader: &dyn BytesRangeReader, out: &mut [u8], shape, start| {
            let out = BoxOut {
                buf: out,
                shape,
                start,
            };
            codec.decode_partial_into(reader, &r, &ChunkBox::whole(&[16, 4]), out)
        };
        // 15 stored inner chunks of 8 bytes, in order from the start.
        let data_bytes = 15 * 8;
        // Into an 18 × 6 buffer, the shard's box at (1, 2); the rest keeps
        // its sentinel.
        let mut expected = vec![0xabcdu16; 18 * 6];
        for row in 0..16 {
            for col in 0..4 {
                expected[(row + 1) * 6 + col + 2] = values[row * 4 + col];
            }
        }
        // On 2 threads, 8 slabs are read one by one (each worker taking
        // the next); on 8 threads, all in one range.
        for (threads, slab_reads) in [(2, 8), (8, 1)] {
            let reader = Recorder {
                value: Some(&encoded),
                reads: Mutex::new(Vec::new()),
                announced: Mutex::new(Vec::new()),
            };
            let mut out = u16s(vec![0xabcd; 18 * 6]);
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let stored = pool
                .install(|| whole_into(&reader, &mut out, &[18, 6], &[1, 2]))
                .unwrap();
            assert!(stored);
            assert_eq!(out, u16s(expected.clone()), "{threads} threads");
            let mut reads = reader.reads.into_inner().unwrap();
            // The index first, alone.
            assert_eq!(reads.remove(0), vec![ByteRange::Suffix(16 * 16 + 4)]);
            reads.sort_by_key(|r| match r[0] {
                ByteRange::FromStart { offset, .. } => offset,
                ByteRange::Suffix(_) => u64::MAX,
            });
            let expected_reads: Vec<Vec<ByteRange>> = if slab_reads == 1 {
                vec![vec![ByteRange::new(0, data_bytes)]]
            } else {
                // Slab 3 holds one stored inner chunk, the others two.
                let mut at = 0;
                (0..8)
                    .map(|g| {
                        let len = if g == 3 { 8 } else { 16 };
                        at += len;
                        vec![ByteRange::new(at - len, len)]
                    })
                    .collect()
            };
            assert_eq!(reads, expected_reads, "{threads} threads");
            assert_eq!(
                reader.announced.into_inner().unwrap(),
                vec![ByteRange::new(0, data_bytes)]
            );
        }
        // A shard not stored: nothing written, `false`.
        let mut out = u16s(vec![0xabcd; 16 * 4]);
        let missing = SliceReader(None);
        let stored = whole_into(&missing, &mut out, &[16, 4], &[0, 0]).unwrap();
        assert!(!stored);
        assert_eq!(out, u16s(vec![0xabcd; 16 * 4]));
        // An inner chunk past the shard's end is an error naming it
        // (`shard_index_pointing_past_the_end_is_refused_unallocated`, on
        // a store that reports the shard's length).
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
        let encoded = codec.encode(data.clone().into(), &r).unwrap();
        // Overwrite element (1, 2) only: inner chunk 1 is decoded and rewritten.
        let update = (ChunkBox::new(vec![1, 2], vec![1, 1]), u16s([999]).into());
        let rewritten = codec
            .encode_partial(&SliceReader(Some(&encoded)), &r, &[update])
            .unwrap()
            .unwrap();
        let mut expected = data.clone();
        expected[12..14].copy_from_slice(&999u16.to_ne_bytes());
        assert_eq!(codec.decode(rewritten, &r).unwrap(), expected);
        // Filling the whole shard with the fill value leaves nothing to store.
        let fill = u16s([7; 16]);
        let update = (
            ChunkBox::new(vec![0, 0], vec![4, 4]),
            ChunkData::from(&fill[..]),
        );
        assert!(
            codec
                .encode_partial(&SliceReader(Some(&encoded)), &r, &[update])
                .unwrap()
                .is_none()
        );
        // A missing shard starts as the fill value.
        let update = (ChunkBox::new(vec![3, 0], vec![1, 1]), u16s([5]).into());
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
        let encoded = codec.encode(data.clone().into(), &r).unwrap();
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
        // Outer shard 512x512 of inner shards 256x256 (128 KiB, over the
        // coalescing gap) of inner-inner chunks 4x4; element (r, c) holds
        // r * 512 + c, wrapped to 16 bits.
        const { assert!(256 * 256 * 2 > crate::codec::partial::COALESCE_GAP) };
        let value = |r: u64, c: u64| ((r * 512 + c) % 65536) as u16;
        let inner = ShardingCodec::new(&[4, 4], vec![bytes_codec()]);
        let codec = ShardingCodec::new(&[256, 256], vec![Codec::ArrayToBytes(Arc::new(inner))]);
        let r = repr(&[512, 512]);
        let values: Vec<u16> = (0..512)
            .flat_map(|row| (0..512).map(move |col| value(row, col)))
            .collect();
        let encoded = codec
            .encode(u16s(values.iter().copied()).into(), &r)
            .unwrap();
        let reader = Recording {
            bytes: &encoded,
            log: Mutex::new(Vec::new()),
        };
        let out = codec
            .decode_partial(&reader, &r, &[ChunkBox::new(vec![40, 50], vec![1, 2])])
            .unwrap()
            .unwrap();
        assert_eq!(out, vec![u16s([value(40, 50), value(40, 51)])]);
        let log = reader.log.into_inner().unwrap();
        // The outer index (4 inner shards x 16 bytes + crc32c), the inner
        // shard's index (4096 x 16 + 4), then the one 4x4 chunk holding the
        // two elements (32 bytes: smaller than the gap worth a ranged read,
        // so read whole). Never the whole 128 KiB inner shard.
        let sizes: Vec<u64> = log.iter().map(|&(_, l)| l).collect();
        assert_eq!(sizes, [68, 65540, 32], "{log:?}");

        // A box that covers an inner shard entirely reads it whole.
        let reader = Recording {
            bytes: &encoded,
            log: Mutex::new(Vec::new()),
        };
        let out = codec
            .decode_partial(&reader, &r, &[ChunkBox::new(vec![0, 256], vec![256, 256])])
            .unwrap()
            .unwrap();
        let expected: Vec<u16> = (0..256)
            .flat_map(|row| (256..512).map(move |col| value(row, col)))
            .collect();
        assert_eq!(out, vec![u16s(expected)]);
        assert_eq!(reader.log.into_inner().unwrap().len(), 2);

        // Plain `bytes` inner chunks: one element of a 256x256 inner chunk
        // reads its 2 bytes.
        let flat = ShardingCodec::new(&[256, 256], vec![bytes_codec()]);
        let encoded = flat
            .encode(u16s(values.iter().copied()).into(), &r)
            .unwrap();
        let reader = Recording {
            bytes: &encoded,
            log: Mutex::new(Vec::new()),
        };
        let out = flat
            .decode_partial(&reader, &r, &[ChunkBox::new(vec![33, 5], vec![1, 1])])
            .unwrap()
            .unwrap();
        assert_eq!(out, vec![u16s([value(33, 5)])]);
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
    fn partial_reads_into_a_buffer_match_partial_decodes() {
        // A 4x6 shard of 2x2 inner chunks; inner chunk (1, 2) is all fill.
        let codec = sharding(IndexLocation::End, true);
        let r = repr(&[4, 6]);
        let values: Vec<u16> = (0..24)
            .map(|v| if v % 6 >= 4 && v >= 12 { 7 } else { v })
            .collect();
        let encoded = codec
            .encode(u16s(values.iter().copied()).into(), &r)
            .unwrap();
        let reader = SliceReader(Some(&encoded));
        // Whole rows (inner chunks contiguous in the output), a box cutting
        // inner chunks, one whole inner chunk, and the fill-only corner.
        for (start, shape) in [
            ([0, 0], [2, 6]),
            ([1, 1], [3, 4]),
            ([2, 2], [2, 2]),
            ([2, 4], [2, 2]),
            ([0, 0], [4, 6]),
        ] {
            let b = ChunkBox::new(start.to_vec(), shape.to_vec());
            let expected = codec
                .decode_partial(&reader, &r, std::slice::from_ref(&b))
                .unwrap()
                .unwrap();
            // Into a larger buffer, one row and one column in.
            let out_shape = [shape[0] + 2, shape[1] + 2];
            let mut out = vec![0xaa; (out_shape[0] * out_shape[1] * 2) as usize];
            let into = BoxOut {
                buf: &mut out,
                shape: &out_shape,
                start: &[1, 1],
            };
            assert!(codec.decode_partial_into(&reader, &r, &b, into).unwrap());
            let row = (out_shape[1] * 2) as usize;
            for y in 0..shape[0] as usize {
                let at = (y + 1) * row + 2;
                let len = shape[1] as usize * 2;
                assert_eq!(
                    out[at..at + len],
                    expected[0].as_fixed("test").unwrap()[y * len..(y + 1) * len],
                    "{b}"
                );
            }
            assert!(out[..row].iter().all(|&x| x == 0xaa), "{b}");
        }
        let b = ChunkBox::new(vec![0, 0], vec![2, 2]);
        let mut out = vec![0; 8];
        let into = BoxOut {
            buf: &mut out,
            shape: &[2, 2],
            start: &[0, 0],
        };
        assert!(
            !codec
                .decode_partial_into(&SliceReader(None), &r, &b, into)
                .unwrap()
        );
        // A corrupt inner chunk is an error, whether it decodes into the
        // buffer or is copied.
        let codec = sharding(IndexLocation::End, false);
        let mut bad = codec
            .encode(u16s(values.iter().copied()).into(), &r)
            .unwrap();
        let index_at = bad.len() - 96;
        bad[index_at + 8..index_at + 16].copy_from_slice(&1u64.to_le_bytes());
        for (start, shape) in [([0, 0], [2, 2]), ([1, 1], [1, 1])] {
            let b = ChunkBox::new(start.to_vec(), shape.to_vec());
            let mut out = vec![0; (shape[0] * shape[1] * 2) as usize];
            let reader = SliceReader(Some(&bad));
            let into = BoxOut {
                buf: &mut out,
                shape: &shape,
                start: &[0, 0],
            };
            let result = codec.decode_partial_into(&reader, &r, &b, into);
            assert!(result.is_err(), "{b}");
        }
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
                let encoded = codec.encode(ChunkData::from(&data), &r).unwrap();
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
                assert_eq!(codec.decode(encoded, &r).unwrap(), data);
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
        let encoded = outer.encode(ChunkData::from(&data), &r).unwrap();
        assert_eq!(outer.decode(encoded, &r).unwrap(), data);
        // Every element the fill value: every inner chunk is missing.
        let fill = VlenChunk::filled(16, b"-");
        let encoded = outer.encode(ChunkData::from(&fill), &r).unwrap();
        assert_eq!(encoded.len(), 4 * 16 + 4);
        assert_eq!(outer.decode(encoded, &r).unwrap(), fill);
    }

    #[test]
    fn corrupt_string_shards_are_errors_not_panics() {
        let codec = vlen_sharding(IndexLocation::End, false);
        let r = string_repr(&[2, 4]);
        let data = VlenChunk::from_items(["a", "b", "c", "d", "e", "f", "g", "h"]);
        let good = codec.encode(ChunkData::from(&data), &r).unwrap();
        assert!(
            codec
                .encode(VlenChunk::from_items(["a"]).into(), &r)
                .is_err()
        );
        for cut in [0, 5, good.len() - 1] {
            assert!(codec.decode(good[..cut].to_vec(), &r).is_err(), "{cut}");
        }
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0x5a;
            // Any outcome but a panic; a decoded shard has every element.
            if let Ok(chunk) = codec.decode(bad, &r) {
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
        let encoded = codec.encode(ChunkData::from(&data), &r).unwrap();
        let requests = Mutex::new(Vec::new());
        let reader = |ranges: &[ByteRange]| {
            requests.lock().unwrap().push(ranges.to_vec());
            SliceReader(Some(&encoded)).read_ranges(ranges)
        };
        // Rows 1..3, columns 1..2: inner chunks (0, 0) and (1, 0).
        let b = ChunkBox::new(vec![1, 1], vec![2, 1]);
        let whole = ChunkBox::new(vec![0, 0], vec![4, 4]);
        let out = codec
            .decode_partial(&reader, &r, &[b, whole])
            .unwrap()
            .unwrap();
        assert_eq!(out[0], VlenChunk::from_items(["-", "e9"]));
        assert_eq!(out[1], data);
        // The index, then one batch of inner chunks.
        assert_eq!(requests.lock().unwrap().len(), 2);
        requests.lock().unwrap().clear();
        let corner = ChunkBox::new(vec![3, 3], vec![1, 1]);
        let out = codec
            .decode_partial(&reader, &r, std::slice::from_ref(&corner))
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
                .decode_partial(&SliceReader(None), &r, &[corner])
                .unwrap(),
            None
        );
        let outside = ChunkBox::new(vec![3, 3], vec![2, 1]);
        assert!(codec.decode_partial(&reader, &r, &[outside]).is_err());
    }

    #[test]
    fn partial_string_writes_decode_only_the_inner_chunks_they_touch() {
        let codec = vlen_sharding(IndexLocation::Start, true);
        let r = string_repr(&[4, 4]);
        let data = VlenChunk::from_items((0..16).map(|i| format!("e{i}")));
        let encoded = codec.encode(ChunkData::from(&data), &r).unwrap();
        let requests = Mutex::new(Vec::new());
        let reader = |ranges: &[ByteRange]| {
            requests.lock().unwrap().push(ranges.to_vec());
            SliceReader(Some(&encoded)).read_ranges(ranges)
        };
        // (1, 1) in inner chunk (0, 0), and all of inner chunk (1, 1).
        let one = VlenChunk::from_items(["x"]);
        let four = VlenChunk::from_items(["-", "-", "-", "-"]);
        let updates = [
            (ChunkBox::new(vec![1, 1], vec![1, 1]), ChunkData::from(&one)),
            (
                ChunkBox::new(vec![2, 2], vec![2, 2]),
                ChunkData::from(&four),
            ),
        ];
        let new = codec
            .encode_partial(&reader, &r, &updates)
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
            codec.decode(new.clone(), &r).unwrap(),
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
            .encode_partial(&SliceReader(None), &r, &updates[..1])
            .unwrap()
            .unwrap();
        let mut expected = vec!["-".to_string(); 16];
        expected[5] = "x".into();
        assert_eq!(
            codec.decode(new, &r).unwrap(),
            VlenChunk::from_items(&expected)
        );
        assert_eq!(
            codec
                .encode_partial(&SliceReader(None), &r, &updates[1..])
                .unwrap(),
            None
        );
        let short = [(ChunkBox::new(vec![0, 0], vec![2, 2]), ChunkData::from(&one))];
        assert!(codec.encode_partial(&reader, &r, &short).is_err());
    }
}
