//! The one place that maps codec names to constructors.
//!
//! Each codec module has `pub fn create(metadata: &ExtensionObject) ->
//! Result<Codec, CodecError>`; adding a codec is one line in the `REGISTRY` table.

use super::{ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, CodecError};
use crate::metadata::ExtensionObject;
use std::sync::Arc;

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

type Constructor = fn(&ExtensionObject) -> Result<Codec, CodecError>;

/// Codec names (registered names first, then accepted old spellings) and
/// their constructors.
const REGISTRY: &[(&str, Constructor)] = &[
    ("bytes", super::bytes::create),
    // zarr-python 3.0 betas wrote `endian` for what the spec calls `bytes`.
    ("endian", super::bytes::create),
    ("transpose", super::transpose::create),
    ("sharding_indexed", super::sharding::create),
    (super::vlen::UTF8_NAME, super::vlen::create_utf8),
    (super::vlen::BYTES_NAME, super::vlen::create_bytes),
    // numcodecs object codecs for v2 `|O` arrays, under their ids.
    (super::vlen_array::NAME, super::vlen_array::create),
    (super::json2::NAME, super::json2::create),
    // Refused: unpickling runs arbitrary code (the error says how to convert).
    (super::pickle::NAME, super::pickle::create),
    (super::pickle::NUMCODECS_NAME, super::pickle::create),
    #[cfg(feature = "msgpack")]
    (super::msgpack2::NAME, super::msgpack2::create),
    // v2 structs whose fields differ in byte order (format/v2.rs).
    (super::struct_bytes::NAME, super::struct_bytes::create),
    // Registered v3 extension codecs (zarr-extensions).
    (super::bitround_v3::NAME, super::bitround_v3::create),
    (super::reshape::NAME, super::reshape::create),
    (super::packbits_v3::NAME, super::packbits_v3::create),
    (super::scale_offset::NAME, super::scale_offset::create),
    (super::cast_value::NAME, super::cast_value::create),
    (super::conditional::NAME, super::conditional::create),
    (super::n5_default::NAME, super::n5_default::create),
    #[cfg(feature = "gzip")]
    ("gzip", super::gzip::create),
    #[cfg(feature = "zstd")]
    ("zstd", super::zstd::create),
    #[cfg(feature = "blosc")]
    ("blosc", super::blosc::create),
    #[cfg(feature = "crc32c")]
    ("crc32c", super::crc32c::create),
    #[cfg(feature = "zfp")]
    (super::zfp::NAME, super::zfp::create),
    // zarr-python 3.1's name for numcodecs' CRC32C, the same checksum.
    #[cfg(feature = "crc32c")]
    ("numcodecs.crc32c", super::crc32c::create),
    // numcodecs codecs, under the names zarr-python 3.1 writes (v2 arrays
    // name them by compressor id; format/v2.rs maps the ids to these).
    #[cfg(feature = "zlib")]
    (super::zlib::NAME, super::zlib::create),
    #[cfg(feature = "bz2")]
    (super::bz2::NAME, super::bz2::create),
    #[cfg(feature = "lzma")]
    (super::lzma::NAME, super::lzma::create),
    #[cfg(feature = "lz4")]
    (super::lz4::NAME, super::lz4::create),
    // numcodecs filters and checksums (zarr-python 3.1's `numcodecs.<id>`).
    (super::delta::NAME, super::delta::create),
    (
        super::fixedscaleoffset::NAME,
        super::fixedscaleoffset::create,
    ),
    (super::quantize::NAME, super::quantize::create),
    (super::bitround::NAME, super::bitround::create),
    (super::astype::NAME, super::astype::create),
    (super::packbits::NAME, super::packbits::create),
    (super::categorize::NAME, super::categorize::create),
    (super::categorize::ID, super::categorize::create),
    (super::shuffle::NAME, super::shuffle::create),
    (super::checksums::CRC32_NAME, super::checksums::create_crc32),
    (
        super::checksums::ADLER32_NAME,
        super::checksums::create_adler32,
    ),
    (
        super::checksums::FLETCHER32_NAME,
        super::checksums::create_fletcher32,
    ),
    (
        super::checksums::JENKINS_LOOKUP3_NAME,
        super::checksums::create_jenkins_lookup3,
    ),
];

/// Codecs the spec defines but this build leaves out, with their features.
const DISABLED: &[(&str, &str)] = &[
    #[cfg(not(feature = "gzip"))]
    ("gzip", "gzip"),
    #[cfg(not(feature = "zstd"))]
    ("zstd", "zstd"),
    #[cfg(not(feature = "blosc"))]
    ("blosc", "blosc"),
    #[cfg(not(feature = "crc32c"))]
    ("crc32c", "crc32c"),
    #[cfg(not(feature = "zfp"))]
    ("zfp", "zfp"),
    #[cfg(not(feature = "crc32c"))]
    ("numcodecs.crc32c", "crc32c"),
    #[cfg(not(feature = "zlib"))]
    ("numcodecs.zlib", "zlib"),
    #[cfg(not(feature = "bz2"))]
    ("numcodecs.bz2", "bz2"),
    #[cfg(not(feature = "lzma"))]
    ("numcodecs.lzma", "lzma"),
    #[cfg(not(feature = "lz4"))]
    ("numcodecs.lz4", "lz4"),
    #[cfg(not(feature = "msgpack"))]
    ("msgpack2", "msgpack"),
];

/// Resolves a codec from its metadata.
///
/// # Errors
/// [`CodecError::Unknown`] for a name no codec has,
/// [`CodecError::NotEnabled`] for one this build leaves out, or the codec's
/// own [`CodecError::InvalidConfiguration`].
pub fn codec_from_metadata(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    if let Some((_, create)) = REGISTRY.iter().find(|(name, _)| *name == metadata.name) {
        return create(metadata);
    }
    if let Some((name, feature)) = DISABLED.iter().find(|(name, _)| *name == metadata.name) {
        return Err(CodecError::NotEnabled {
            name: (*name).to_string(),
            feature,
        });
    }
    Err(CodecError::Unknown {
        name: metadata.name.clone(),
    })
}

/// The names of every codec this build can read, registered names and old
/// spellings alike.
#[must_use]
pub fn codec_names() -> Vec<&'static str> {
    REGISTRY.iter().map(|(name, _)| *name).collect()
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
