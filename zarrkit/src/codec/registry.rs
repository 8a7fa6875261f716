//! The one place that maps codec names to constructors.
//!
//! Each codec module has `pub fn create(metadata: &ExtensionObject) ->
//! Result<Codec, CodecError>`; adding a codec is one line in the `REGISTRY` table.

use super::CodecError;
use crate::metadata::ExtensionObject;

// Kept at their old paths, `codec::registry::{Codec, parse_configuration}`.
pub use super::{Codec, parse_configuration};

type Constructor = fn(&ExtensionObject) -> Result<Codec, CodecError>;

/// Codec names (registered names first, then accepted old spellings) and
/// their constructors.
const REGISTRY: &[(&str, Constructor)] = &[
    ("bytes", super::core::bytes::create),
    // zarr-python 3.0 betas wrote `endian` for what the spec calls `bytes`.
    ("endian", super::core::bytes::create),
    ("transpose", super::core::transpose::create),
    ("sharding_indexed", super::core::sharding::create),
    (super::ext::vlen::UTF8_NAME, super::ext::vlen::create_utf8),
    (super::ext::vlen::BYTES_NAME, super::ext::vlen::create_bytes),
    // numcodecs object codecs for v2 `|O` arrays, under their ids.
    (
        super::object::vlen_array::NAME,
        super::object::vlen_array::create,
    ),
    (super::object::json2::NAME, super::object::json2::create),
    // Refused: unpickling runs arbitrary code (the error says how to convert).
    (super::object::pickle::NAME, super::object::pickle::create),
    (
        super::object::pickle::NUMCODECS_NAME,
        super::object::pickle::create,
    ),
    #[cfg(feature = "msgpack")]
    (
        super::object::msgpack2::NAME,
        super::object::msgpack2::create,
    ),
    // v2 structs whose fields differ in byte order (format/v2.rs).
    (
        super::core::struct_bytes::NAME,
        super::core::struct_bytes::create,
    ),
    // Registered v3 extension codecs (zarr-extensions).
    (super::ext::bitround::NAME, super::ext::bitround::create),
    (super::ext::reshape::NAME, super::ext::reshape::create),
    (super::ext::packbits::NAME, super::ext::packbits::create),
    (
        super::ext::scale_offset::NAME,
        super::ext::scale_offset::create,
    ),
    (super::ext::cast_value::NAME, super::ext::cast_value::create),
    (
        super::ext::conditional::NAME,
        super::ext::conditional::create,
    ),
    (super::ext::n5_default::NAME, super::ext::n5_default::create),
    #[cfg(feature = "gzip")]
    ("gzip", super::core::gzip::create),
    #[cfg(feature = "zstd")]
    ("zstd", super::core::zstd::create),
    #[cfg(feature = "blosc")]
    ("blosc", super::core::blosc::create),
    #[cfg(feature = "crc32c")]
    ("crc32c", super::core::crc32c::create),
    #[cfg(feature = "zfp")]
    (super::ext::zfp::NAME, super::ext::zfp::create),
    // zarr-python 3.1's name for numcodecs' CRC32C, the same checksum.
    #[cfg(feature = "crc32c")]
    ("numcodecs.crc32c", super::core::crc32c::create),
    // numcodecs codecs, under the names zarr-python 3.1 writes (v2 arrays
    // name them by compressor id; format/v2.rs maps the ids to these).
    #[cfg(feature = "zlib")]
    (super::numcodecs::zlib::NAME, super::numcodecs::zlib::create),
    #[cfg(feature = "bz2")]
    (super::numcodecs::bz2::NAME, super::numcodecs::bz2::create),
    #[cfg(feature = "lzma")]
    (super::numcodecs::lzma::NAME, super::numcodecs::lzma::create),
    #[cfg(feature = "lz4")]
    (super::numcodecs::lz4::NAME, super::numcodecs::lz4::create),
    // numcodecs filters and checksums (zarr-python 3.1's `numcodecs.<id>`).
    (
        super::numcodecs::delta::NAME,
        super::numcodecs::delta::create,
    ),
    (
        super::numcodecs::fixedscaleoffset::NAME,
        super::numcodecs::fixedscaleoffset::create,
    ),
    (
        super::numcodecs::quantize::NAME,
        super::numcodecs::quantize::create,
    ),
    (
        super::numcodecs::bitround::NAME,
        super::numcodecs::bitround::create,
    ),
    (
        super::numcodecs::astype::NAME,
        super::numcodecs::astype::create,
    ),
    (
        super::numcodecs::packbits::NAME,
        super::numcodecs::packbits::create,
    ),
    (
        super::numcodecs::categorize::NAME,
        super::numcodecs::categorize::create,
    ),
    (
        super::numcodecs::categorize::ID,
        super::numcodecs::categorize::create,
    ),
    (
        super::numcodecs::shuffle::NAME,
        super::numcodecs::shuffle::create,
    ),
    (
        super::numcodecs::checksums::CRC32_NAME,
        super::numcodecs::checksums::create_crc32,
    ),
    (
        super::numcodecs::checksums::ADLER32_NAME,
        super::numcodecs::checksums::create_adler32,
    ),
    (
        super::numcodecs::checksums::FLETCHER32_NAME,
        super::numcodecs::checksums::create_fletcher32,
    ),
    (
        super::numcodecs::checksums::JENKINS_LOOKUP3_NAME,
        super::numcodecs::checksums::create_jenkins_lookup3,
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
