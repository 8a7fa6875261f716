//! Codecs: array→array, array→bytes and bytes→bytes, and the chain that
//! applies them.
//!
//! Spec: v3 core, "Codecs". A chain is any number of array→array codecs,
//! exactly one array→bytes codec, then any number of bytes→bytes codecs.
//! A decoded chunk is one [`ChunkData`]: the C-order bytes of its
//! fixed-size elements in native byte order, or its variable-length
//! elements ([`ChunkRepr`] says their shape and type). Every codec trait,
//! the chain and sharding take and return it; a codec that serves one kind
//! says so with [`ChunkData::into_fixed`] or [`ChunkData::as_vlen`]. What a
//! codec can do beyond whole chunks (decode in place, partial decode and
//! encode, nest chunks) it says in [`CodecCapabilities`].
//!
//! Codecs are grouped by family: [`core`] (the v3 core codecs),
//! [`ext`] (registered v3 extensions), [`numcodecs`] (numcodecs' compressors
//! and filters) and [`object`] (numcodecs' object codecs for v2 `|O`
//! arrays), beside the machinery: the chain, the [`registry`] and
//! [`partial`] decoding. Each codec is also exported at `codec::<name>`.
//!
//! To add a codec: write `codec/<family>/<spec-name>.rs` with a `create`
//! function, and add one line to [`registry`].

pub mod core;
pub mod ext;
pub mod numcodecs;
pub mod object;

#[cfg(any(feature = "gzip", feature = "zlib", feature = "bz2", feature = "lzma"))]
mod bounded;
mod chain;
pub(crate) mod copy;
pub mod data;
pub mod numpy_dtype;
pub mod partial;
pub mod registry;
pub mod threads;

// Every codec at its path from before the families (`codec::zstd`,
// `codec::bitround_v3`, …), so code written against them keeps working.
#[cfg(feature = "blosc")]
pub use self::core::blosc;
#[cfg(feature = "crc32c")]
pub use self::core::crc32c;
#[cfg(feature = "gzip")]
pub use self::core::gzip;
#[cfg(feature = "zstd")]
pub use self::core::zstd;
pub use self::core::{bytes, sharding, struct_bytes, transpose};
pub use ext::bitround as bitround_v3;
pub use ext::packbits as packbits_v3;
#[cfg(feature = "zfp")]
pub use ext::zfp;
pub use ext::{cast_value, conditional, n5_default, reshape, scale_offset, vlen};
#[cfg(feature = "bz2")]
pub use numcodecs::bz2;
#[cfg(feature = "lz4")]
pub use numcodecs::lz4;
#[cfg(feature = "lzma")]
pub use numcodecs::lzma;
#[cfg(feature = "zlib")]
pub use numcodecs::zlib;
pub use numcodecs::{
    astype, bitround, categorize, checksums, delta, fixedscaleoffset, packbits, quantize, shuffle,
};
#[cfg(feature = "msgpack")]
pub use object::msgpack2;
pub use object::{json2, pickle, vlen_array};

pub use chain::CodecChain;
pub use data::ChunkData;
pub(crate) use partial::BytesSink;
pub use partial::{BoxOut, BytesRangeReader, ChunkBox};
pub use registry::codec_from_metadata;

use crate::metadata::{DataType, ExtensionObject, FillValue};
use crate::store::StoreError;
use std::fmt::Debug;
use std::sync::Arc;

/// The decoded representation of a chunk: its shape, data type and fill value.
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkRepr {
    /// The chunk's shape (for a regular grid, the grid's chunk shape, also at the edge).
    pub shape: Vec<u64>,
    /// The element type.
    pub data_type: DataType,
    /// The fill value, as the bytes of one element.
    pub fill_value: FillValue,
}

impl ChunkRepr {
    /// The number of elements in the chunk, or `None` on overflow.
    #[must_use]
    pub fn num_elements(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |acc, &n| acc.checked_mul(n))
    }

    /// The number of elements in the chunk, as a `usize`.
    ///
    /// # Errors
    /// [`CodecError::TooLarge`] if it does not fit in memory's address space.
    pub fn element_count(&self) -> Result<usize, CodecError> {
        self.num_elements()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| CodecError::TooLarge {
                shape: self.shape.clone(),
            })
    }

    /// The size of the decoded chunk in bytes.
    ///
    /// # Errors
    /// [`CodecError::TooLarge`] if it does not fit in memory's address
    /// space, [`CodecError::Incompatible`] for a variable-length data type.
    pub fn size_bytes(&self) -> Result<usize, CodecError> {
        if self.data_type.is_variable_length() {
            return Err(CodecError::Incompatible {
                codec: "array",
                what: format!(
                    "`{}` as fixed-size elements (it is variable-length)",
                    self.data_type
                ),
            });
        }
        self.num_elements()
            .and_then(|n| n.checked_mul(self.data_type.size() as u64))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| CodecError::TooLarge {
                shape: self.shape.clone(),
            })
    }
}

/// The `encode` and `decode` of an array→array codec that takes
/// fixed-size data only: inside its `impl ArrayToArrayCodec`, over its own
/// `encode_bytes(Vec<u8>, &ChunkRepr)` and `decode_bytes(..)`, refusing
/// variable-length data with the error [`ChunkData::into_fixed`] builds
/// for the codec `$name`.
macro_rules! fixed_array_to_array {
    ($name:expr) => {
        fn encode(
            &self,
            decoded: $crate::codec::ChunkData<'_>,
            decoded_repr: &$crate::codec::ChunkRepr,
        ) -> Result<$crate::codec::ChunkData<'static>, $crate::codec::CodecError> {
            self.encode_bytes(decoded.into_fixed($name)?, decoded_repr)
                .map(Into::into)
        }

        fn decode(
            &self,
            encoded: $crate::codec::ChunkData<'_>,
            decoded_repr: &$crate::codec::ChunkRepr,
        ) -> Result<$crate::codec::ChunkData<'static>, $crate::codec::CodecError> {
            self.decode_bytes(encoded.into_fixed($name)?, decoded_repr)
                .map(Into::into)
        }
    };
}
pub(crate) use fixed_array_to_array;

/// The `encode` and `decode` of an array→bytes codec for fixed-size data
/// only, as [`fixed_array_to_array`] for array→array codecs.
macro_rules! fixed_array_to_bytes {
    ($name:expr) => {
        fn encode(
            &self,
            decoded: $crate::codec::ChunkData<'_>,
            repr: &$crate::codec::ChunkRepr,
        ) -> Result<Vec<u8>, $crate::codec::CodecError> {
            self.encode_bytes(decoded.into_fixed($name)?, repr)
        }

        fn decode(
            &self,
            encoded: Vec<u8>,
            repr: &$crate::codec::ChunkRepr,
        ) -> Result<$crate::codec::ChunkData<'static>, $crate::codec::CodecError> {
            self.decode_bytes(encoded, repr).map(Into::into)
        }
    };
}
pub(crate) use fixed_array_to_bytes;

/// The `encode` and `decode` of an array→bytes codec for variable-length
/// elements only (`vlen-utf8`, `json2`, …), over its own
/// `encode_elements(&VlenChunk, &ChunkRepr)` and `decode_elements(..)`,
/// refusing fixed-size data with the error [`ChunkData::as_vlen`] builds.
macro_rules! vlen_array_to_bytes {
    ($name:expr) => {
        fn encode(
            &self,
            decoded: $crate::codec::ChunkData<'_>,
            repr: &$crate::codec::ChunkRepr,
        ) -> Result<Vec<u8>, $crate::codec::CodecError> {
            self.encode_elements(decoded.as_vlen($name)?, repr)
        }

        fn decode(
            &self,
            encoded: Vec<u8>,
            repr: &$crate::codec::ChunkRepr,
        ) -> Result<$crate::codec::ChunkData<'static>, $crate::codec::CodecError> {
            self.decode_elements(encoded, repr).map(Into::into)
        }
    };
}
pub(crate) use vlen_array_to_bytes;

/// What a codec can do beyond encoding and decoding whole chunks, asked
/// once instead of probed for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodecCapabilities {
    /// [`ArrayToBytesCodec::decode_in_place`] works: the encoded bytes have
    /// the decoded size (`bytes`, `struct_bytes`).
    pub decodes_in_place: bool,
    /// [`ArrayToBytesCodec::decode_partial`] reads less than the whole value.
    pub partial_decode: bool,
    /// [`ArrayToBytesCodec::encode_partial`] reads and rewrites less than
    /// the whole value.
    pub partial_encode: bool,
    /// [`CodecChain::decode_partial`] reads the whole value but decodes
    /// only the parts of it that the boxes need: a chain of `bytes` (or
    /// `struct_bytes`) and one bytes→bytes codec that decodes byte ranges
    /// ([`BytesToBytesCodec::decodes_ranges`]: `blosc` decodes only the
    /// blocks they touch, `zstd` only the blocks up to the last byte they
    /// need).
    pub decodes_ranges: bool,
    /// The codec stores a chunk as inner chunks of their own
    /// (`sharding_indexed`); [`ArrayToBytesCodec::as_sharding`] gives
    /// their shape.
    pub nests_chunks: bool,
}

/// A codec that maps an array to another array (such as `transpose`).
pub trait ArrayToArrayCodec: Debug + Send + Sync {
    /// The codec's metadata, as written to the array's `codecs` (canonical form).
    fn metadata(&self) -> ExtensionObject;

    /// The canonical metadata of the codec when it receives arrays of
    /// `decoded`; codecs whose configuration depends on the array (such as
    /// `transpose` read with the old `"C"`/`"F"` orders) spell it out here.
    fn metadata_for(&self, decoded: &ChunkRepr) -> ExtensionObject {
        let _ = decoded;
        self.metadata()
    }

    /// The representation of the encoded array, given the decoded one.
    ///
    /// # Errors
    /// [`CodecError::Incompatible`] if the codec cannot apply to `decoded`.
    fn encoded_repr(&self, decoded: &ChunkRepr) -> Result<ChunkRepr, CodecError>;

    /// Encodes an array of representation `decoded_repr`. Most codecs
    /// take fixed-size data only ([`ChunkData::into_fixed`]);
    /// `categorize` turns variable-length data into fixed-size data.
    ///
    /// # Errors
    /// A [`CodecError`] describing why the data cannot be encoded.
    fn encode(
        &self,
        decoded: ChunkData<'_>,
        decoded_repr: &ChunkRepr,
    ) -> Result<ChunkData<'static>, CodecError>;

    /// Decodes an array back to `decoded_repr`.
    ///
    /// # Errors
    /// A [`CodecError`] describing why the data cannot be decoded.
    fn decode(
        &self,
        encoded: ChunkData<'_>,
        decoded_repr: &ChunkRepr,
    ) -> Result<ChunkData<'static>, CodecError>;

    /// Whether the codec only moves elements (`transpose`, `reshape`),
    /// never looks at or changes them. Such a codec also applies to
    /// variable-length data: the chain runs it on element indices and
    /// gathers the elements, so the codec itself sees fixed-size data only.
    fn permutes_elements(&self) -> bool {
        false
    }
}

/// A codec that serialises an array to bytes (such as `bytes`).
pub trait ArrayToBytesCodec: Debug + Send + Sync {
    /// The codec's metadata, as written to the array's `codecs` (canonical form).
    fn metadata(&self) -> ExtensionObject;

    /// What the codec can do beyond whole-chunk encoding and decoding.
    /// The default is nothing.
    fn capabilities(&self) -> CodecCapabilities {
        CodecCapabilities::default()
    }

    /// Checks that the codec can serialise arrays of `repr`.
    ///
    /// # Errors
    /// [`CodecError::Incompatible`] saying why not.
    fn validate(&self, repr: &ChunkRepr) -> Result<(), CodecError> {
        let _ = repr;
        Ok(())
    }

    /// Serialises an array of representation `repr`: fixed-size bytes for
    /// most codecs, variable-length elements for `vlen-utf8` and its kin.
    ///
    /// # Errors
    /// A [`CodecError`] describing why the data cannot be encoded.
    fn encode(&self, decoded: ChunkData<'_>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError>;

    /// Deserialises bytes to an array of representation `repr`.
    ///
    /// # Errors
    /// A [`CodecError`] if the bytes are not a valid encoding of such an array.
    fn decode(&self, encoded: Vec<u8>, repr: &ChunkRepr) -> Result<ChunkData<'static>, CodecError>;

    /// The most bytes the codec's encoding of a chunk of `repr` can take,
    /// or `None` when it has no bound. The chain tells the innermost
    /// bytes→bytes decoder to produce no more than this. The default, the
    /// decoded size, fits codecs that store each element in at most its
    /// own bytes (`bytes`, `packbits`); codecs that add headers or can
    /// expand override it.
    fn encoded_size_bound(&self, repr: &ChunkRepr) -> Option<usize> {
        repr.size_bytes().ok()
    }

    /// Deserialises fixed-size data in place, when the encoded bytes have
    /// the decoded size (as for `bytes`, which at most swaps byte order).
    /// Codecs that can say so in [`CodecCapabilities::decodes_in_place`];
    /// for others the default is an error.
    ///
    /// # Errors
    /// As [`Self::decode`].
    fn decode_in_place(&self, data: &mut [u8], repr: &ChunkRepr) -> Result<(), CodecError> {
        let _ = data;
        Err(CodecError::Incompatible {
            codec: "array-to-bytes",
            what: format!("`{}` in place", repr.data_type),
        })
    }

    /// Deserialises fixed-size data into `out`, exactly one chunk of
    /// `repr`. The default decodes to a new buffer and copies; a codec that
    /// can write into the caller's buffer (`sharding_indexed`) overrides it.
    ///
    /// # Errors
    /// As [`Self::decode`], and [`CodecError::WrongSize`] if the result
    /// does not fill `out`.
    fn decode_into(
        &self,
        encoded: Vec<u8>,
        repr: &ChunkRepr,
        out: &mut [u8],
    ) -> Result<(), CodecError> {
        let decoded = self.decode(encoded, repr)?;
        let decoded = decoded.as_fixed("array-to-bytes")?;
        if decoded.len() != out.len() {
            return Err(CodecError::WrongSize {
                expected: out.len(),
                actual: decoded.len(),
            });
        }
        out.copy_from_slice(decoded);
        Ok(())
    }

    /// Deserialises a whole chunk of fixed-size data of `repr` into the box
    /// of `out` it fills (at `out.start`, of `repr.shape`): for a chunk
    /// whose elements are not contiguous in the caller's buffer. The
    /// default decodes into a new buffer and copies it once;
    /// `sharding_indexed` copies each inner chunk straight into place, so
    /// a shard read whole is never held decoded. The caller has checked
    /// that the box fits in `out` ([`CodecChain::decode_into_box`] does).
    ///
    /// # Errors
    /// As [`Self::decode`], and [`CodecError::WrongSize`] if the decoded
    /// chunk does not hold `repr`'s elements.
    fn decode_into_box(
        &self,
        encoded: Vec<u8>,
        repr: &ChunkRepr,
        out: BoxOut<'_>,
    ) -> Result<(), CodecError> {
        let decoded = self.decode(encoded, repr)?;
        partial::copy_chunk_into(decoded.as_fixed("array-to-bytes")?, repr, out)
    }

    /// Serialises the fixed-size chunk of `repr` that lies at `src_start`
    /// in `src`, a C-order buffer of `src_shape` elements (the chunk's
    /// elements are not contiguous there). The default copies them into a
    /// chunk and calls [`Self::encode`]; `sharding_indexed` copies each
    /// inner chunk straight from `src`, so writing a whole shard never
    /// holds it decoded.
    ///
    /// # Errors
    /// As [`Self::encode`].
    fn encode_from(
        &self,
        src: &[u8],
        src_shape: &[u64],
        src_start: &[u64],
        repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let mut chunk = vec![0u8; repr.size_bytes()?];
        copy::BoxCopy {
            src_shape,
            src_start,
            dst_shape: &repr.shape,
            dst_start: &vec![0; repr.shape.len()],
            shape: &repr.shape,
            elem: repr.data_type.size(),
        }
        .run(src, &mut chunk);
        self.encode(chunk.into(), repr)
    }

    /// Whether [`Self::encode`] returns fixed-size data of `repr`
    /// unchanged (`bytes` in the machine's byte order, or for one-byte
    /// elements), so a chain may hand the caller's bytes straight to the
    /// bytes→bytes codec after it. The default is `false`.
    fn encodes_as_is(&self, repr: &ChunkRepr) -> bool {
        let _ = repr;
        false
    }

    /// The codec as `sharding_indexed`, or `None` for any other codec: how
    /// callers ask for a shard's inner chunk shape and index location
    /// ([`CodecChain::sharding`]) instead of looking for its name.
    fn as_sharding(&self) -> Option<&sharding::ShardingCodec> {
        None
    }

    /// Decodes `boxes` of a stored chunk of `repr`, reading through
    /// `reader`: the elements of each box in C order (native byte order
    /// for fixed-size data); `Ok(None)` when the chunk is not stored. The
    /// default reads and decodes the whole value; codecs that can do
    /// better override it and say so in [`CodecCapabilities::partial_decode`].
    ///
    /// # Errors
    /// A read error, or the error of decoding.
    fn decode_partial(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        boxes: &[ChunkBox],
    ) -> Result<Option<Vec<ChunkData<'static>>>, CodecError> {
        partial::decode_partial_whole(reader, repr, boxes, |encoded| self.decode(encoded, repr))
    }

    /// Decodes box `b` of a stored chunk of `repr` of fixed-size elements,
    /// reading through `reader`, straight into `out` (the caller's region
    /// buffer, and where the box goes in it). Returns `false`, writing nothing, when the
    /// chunk is not stored. The default decodes the box with
    /// [`Self::decode_partial`] and copies it once; `sharding_indexed`
    /// copies each inner chunk it decodes straight into `out`.
    ///
    /// The caller has checked that `b` lies within the chunk and fits in
    /// `out` ([`CodecChain::decode_partial_into`] does).
    ///
    /// # Errors
    /// A read error, the error of decoding, or a kind error for
    /// variable-length data.
    fn decode_partial_into(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        b: &ChunkBox,
        out: BoxOut<'_>,
    ) -> Result<bool, CodecError> {
        let part = self.decode_partial(reader, repr, std::slice::from_ref(b))?;
        partial::copy_part_into(part, repr, b, out)
    }

    /// Re-encodes a stored chunk of `repr` with `updates` applied (each a
    /// box and its elements in C order), reading what it needs through
    /// `reader` (a missing chunk is all fill value). Returns the new encoded
    /// chunk, or `None` when every element is now the fill value. The
    /// default decodes and re-encodes the whole chunk; codecs that can do
    /// better override it and say so in [`CodecCapabilities::partial_encode`].
    ///
    /// # Errors
    /// [`CodecError::WrongSize`] for an update with the wrong number of
    /// elements, a read error, or the error of decoding or encoding.
    fn encode_partial(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        updates: &[(ChunkBox, ChunkData<'_>)],
    ) -> Result<Option<Vec<u8>>, CodecError> {
        partial::encode_partial_whole(
            reader,
            repr,
            updates,
            |encoded| self.decode(encoded, repr),
            |decoded| self.encode(decoded, repr),
        )
    }
}

/// A codec that maps bytes to bytes (compressors, checksums).
pub trait BytesToBytesCodec: Debug + Send + Sync {
    /// The codec's metadata, as written to the array's `codecs` (canonical form).
    fn metadata(&self) -> ExtensionObject;

    /// Encodes bytes.
    ///
    /// # Errors
    /// A [`CodecError`] describing why the data cannot be encoded.
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>, CodecError>;

    /// Decodes bytes. `decoded_size` is an upper bound on the size of the
    /// result when the chain knows one: the size the array→bytes codec
    /// declares for the innermost step (exact for `bytes`), that plus a
    /// small slack for each step further out. A decompressor allocates at
    /// most that much and refuses to produce more, whatever its stream's
    /// header claims: the bytes are untrusted (a decompression bomb).
    ///
    /// # Errors
    /// A [`CodecError`] if the bytes are corrupt.
    fn decode(&self, encoded: Vec<u8>, decoded_size: Option<usize>) -> Result<Vec<u8>, CodecError>;

    /// Encodes bytes the caller keeps: the default copies them and calls
    /// [`Self::encode`]; a codec that only reads its input (blosc)
    /// overrides it to save the copy.
    ///
    /// # Errors
    /// As [`Self::encode`].
    fn encode_slice(&self, decoded: &[u8]) -> Result<Vec<u8>, CodecError> {
        self.encode(decoded.to_vec())
    }

    /// Decodes `encoded`, which stays the caller's (a reader gives the
    /// buffer back to the store's pool), into `out`, which the result must
    /// fill exactly. The default copies the input, decodes to a new
    /// buffer and copies that; a decompressor that can read a borrowed
    /// input and write into a caller's buffer overrides it.
    ///
    /// # Errors
    /// A [`CodecError`] if the bytes are corrupt, or
    /// [`CodecError::WrongSize`] if they do not decode to `out.len()` bytes.
    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
        let decoded = self.decode(encoded.to_vec(), Some(out.len()))?;
        if decoded.len() != out.len() {
            return Err(CodecError::WrongSize {
                expected: out.len(),
                actual: decoded.len(),
            });
        }
        out.copy_from_slice(&decoded);
        Ok(())
    }

    /// Whether [`Self::decode_ranges`] decodes less than the whole value
    /// (`blosc`: the blocks the ranges touch; `zstd`: the blocks up to the
    /// end of the last range). The default is `false`.
    fn decodes_ranges(&self) -> bool {
        false
    }

    /// Decodes the byte ranges `ranges` (offset, length) of the decoded
    /// value of `encoded` (the whole stored value), which must decode to
    /// exactly `decoded_size` bytes: the bytes of every range, one after
    /// another. The default decodes the whole value; a codec that can do
    /// less says so in [`Self::decodes_ranges`].
    ///
    /// # Errors
    /// As [`Self::decode`], [`CodecError::WrongSize`] if the value does not
    /// decode to `decoded_size` bytes, and [`CodecError::Corrupt`] for a
    /// range past its end.
    fn decode_ranges(
        &self,
        encoded: Vec<u8>,
        decoded_size: usize,
        ranges: &[(usize, usize)],
    ) -> Result<Vec<u8>, CodecError> {
        let decoded = self.decode(encoded, Some(decoded_size))?;
        partial::gather_ranges(&decoded, decoded_size, ranges)
    }
}

/// Errors from codecs. The caller adds the chunk key or array path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// No codec is registered under this name.
    #[error("unknown codec `{name}`")]
    Unknown {
        /// The name found in the metadata.
        name: String,
    },

    /// The codec is known but this build does not include it.
    #[error("codec `{name}` is not enabled in this build (enable the `{feature}` feature)")]
    NotEnabled {
        /// The codec's name.
        name: String,
        /// The Cargo feature that enables it.
        feature: &'static str,
    },

    /// The codec is known and deliberately not supported (`pickle`).
    #[error("codec `{name}` is refused: {reason}")]
    Refused {
        /// The codec's name.
        name: String,
        /// Why, and what to do instead.
        reason: &'static str,
    },

    /// A codec's configuration is invalid.
    #[error("invalid configuration for codec `{codec}`: {reason}")]
    InvalidConfiguration {
        /// The codec's name.
        codec: String,
        /// What is wrong.
        reason: String,
    },

    /// The codec chain is not array→array*, array→bytes, bytes→bytes*.
    #[error("invalid codec chain: codec `{codec}` at position {position} {reason}")]
    InvalidChain {
        /// The codec's name.
        codec: String,
        /// Its position in `codecs`, counting from 0.
        position: usize,
        /// What is wrong.
        reason: String,
    },

    /// The codec cannot apply to this data type or shape.
    #[error("codec `{codec}` cannot encode {what}")]
    Incompatible {
        /// The codec's name.
        codec: &'static str,
        /// What it cannot handle.
        what: String,
    },

    /// Decoding failed: the bytes are truncated or corrupt.
    #[error("{codec} data is corrupt: {reason}")]
    Corrupt {
        /// The codec's name.
        codec: &'static str,
        /// What is wrong.
        reason: String,
    },

    /// The underlying library reported an error.
    #[error("{codec} failed")]
    Library {
        /// The codec's name.
        codec: &'static str,
        /// The library's error.
        #[source]
        source: std::io::Error,
    },

    /// A checksum does not match the data.
    #[error("{codec} checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    ChecksumMismatch {
        /// The codec's name.
        codec: &'static str,
        /// The checksum stored with the data.
        stored: u32,
        /// The checksum of the data.
        computed: u32,
    },

    /// The decoded data has the wrong size for its representation.
    #[error("decoded to {actual} bytes, expected {expected}")]
    WrongSize {
        /// The size the representation requires.
        expected: usize,
        /// The size produced.
        actual: usize,
    },

    /// Reading part of a stored value failed (the store error names the key).
    #[error(transparent)]
    Store(#[from] StoreError),

    /// A box of a partial read or write does not lie within the chunk.
    #[error(
        "box at {start:?} of shape {shape:?} does not lie within a chunk of shape {chunk_shape:?}"
    )]
    OutsideChunk {
        /// The box's start.
        start: Vec<u64>,
        /// The box's shape.
        shape: Vec<u64>,
        /// The chunk's shape.
        chunk_shape: Vec<u64>,
    },

    /// A chunk's decoded size does not fit in memory's address space.
    #[error("a chunk of shape `{shape:?}` is too large to hold in memory")]
    TooLarge {
        /// The chunk shape.
        shape: Vec<u64>,
    },
}

/// A resolved codec of any of the three kinds.
#[derive(Clone, Debug)]
pub enum Codec {
    /// An array→array codec.
    ArrayToArray(Arc<dyn ArrayToArrayCodec>),
    /// An array→bytes codec.
    ArrayToBytes(Arc<dyn ArrayToBytesCodec>),
    /// A bytes→bytes codec.
    BytesToBytes(Arc<dyn BytesToBytesCodec>),
}

impl Codec {
    /// The codec's metadata in canonical form.
    #[must_use]
    pub fn metadata(&self) -> ExtensionObject {
        match self {
            Self::ArrayToArray(c) => c.metadata(),
            Self::ArrayToBytes(c) => c.metadata(),
            Self::BytesToBytes(c) => c.metadata(),
        }
    }

    /// The codec's registered name.
    #[must_use]
    pub fn name(&self) -> String {
        self.metadata().name
    }
}

/// Parses a codec's configuration into `T`, rejecting unknown fields with
/// an error that names the codec.
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] with serde's description.
pub fn parse_configuration<T: serde::de::DeserializeOwned>(
    metadata: &ExtensionObject,
) -> Result<T, CodecError> {
    let value = serde_json::Value::Object(metadata.configuration_or_empty());
    serde_json::from_value(value).map_err(|e| CodecError::InvalidConfiguration {
        codec: metadata.name.clone(),
        reason: e.to_string(),
    })
}
