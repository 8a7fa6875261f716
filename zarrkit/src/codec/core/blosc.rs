//! The `blosc` bytes-to-bytes codec: the c-blosc 1.x container, whose blocks
//! are shuffled and then compressed by an internal compressor.
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/blosc/index.html>
//! Names: v3 `blosc`; v2 compressor id `blosc`.
//!
//! ```
//! # use zarrkit::codec::blosc::BloscConfig;
//! let config: BloscConfig = serde_json::from_str(
//!     r#"{ "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0 }"#,
//! )?;
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! This module calls c-blosc through its thread-safe context functions
//! (`blosc_compress_ctx`, `blosc_decompress_ctx`), which need no global
//! initialisation and take no lock.

use crate::codec::{BytesToBytesCodec, Codec, CodecError, parse_configuration};
use crate::metadata::{ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use std::ffi::{CStr, c_int, c_void};
use std::sync::Arc;

/// The header c-blosc writes before the data (and the most it adds).
const MAX_OVERHEAD: usize = blosc_src::BLOSC_MAX_OVERHEAD as usize;
/// The largest input c-blosc 1.x compresses.
const MAX_BUFFER_SIZE: usize = blosc_src::BLOSC_MAX_BUFFERSIZE as usize;

/// The compressor blosc applies to each block (`cname`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BloscCompressor {
    /// `blosclz`, blosc's own fast compressor.
    Blosclz,
    /// `lz4`.
    Lz4,
    /// `lz4hc`: LZ4's high-compression mode, decoded as `lz4`.
    Lz4hc,
    /// `snappy`: defined by the spec, but not included in this build.
    Snappy,
    /// `zlib`.
    Zlib,
    /// `zstd`.
    Zstd,
}

impl BloscCompressor {
    /// The spec's (and c-blosc's) name for the compressor.
    #[must_use]
    pub fn name(self) -> &'static str {
        self.c_name().to_str().unwrap_or("")
    }

    fn c_name(self) -> &'static CStr {
        match self {
            Self::Blosclz => c"blosclz",
            Self::Lz4 => c"lz4",
            Self::Lz4hc => c"lz4hc",
            Self::Snappy => c"snappy",
            Self::Zlib => c"zlib",
            Self::Zstd => c"zstd",
        }
    }
}

/// How blosc rearranges the bytes of each block before compressing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BloscShuffle {
    /// `noshuffle`.
    #[serde(rename = "noshuffle")]
    NoShuffle,
    /// `shuffle`: byte-wise, grouping the i-th byte of every element.
    #[serde(rename = "shuffle")]
    Shuffle,
    /// `bitshuffle`: bit-wise.
    #[serde(rename = "bitshuffle")]
    BitShuffle,
}

impl BloscShuffle {
    fn name(self) -> &'static str {
        match self {
            Self::NoShuffle => "noshuffle",
            Self::Shuffle => "shuffle",
            Self::BitShuffle => "bitshuffle",
        }
    }

    fn code(self) -> c_int {
        let code = match self {
            Self::NoShuffle => blosc_src::BLOSC_NOSHUFFLE,
            Self::Shuffle => blosc_src::BLOSC_SHUFFLE,
            Self::BitShuffle => blosc_src::BLOSC_BITSHUFFLE,
        };
        code as c_int
    }
}

/// The configuration of the `blosc` codec (v3 `blosc`, "Configuration
/// parameters").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BloscConfig {
    /// The compressor applied to each block.
    pub cname: BloscCompressor,
    /// The compression level, 0 (none) to 9.
    pub clevel: u32,
    /// The shuffle applied before compressing.
    pub shuffle: BloscShuffle,
    /// The element size in bytes over which shuffling works. The spec
    /// requires it unless `shuffle` is `noshuffle`; when absent, 1 is used.
    #[serde(default)]
    pub typesize: Option<usize>,
    /// The block size in bytes, 0 for automatic (absent means 0).
    #[serde(default)]
    pub blocksize: usize,
}

/// The `blosc` codec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BloscCodec {
    cname: BloscCompressor,
    clevel: u32,
    shuffle: BloscShuffle,
    typesize: usize,
    blocksize: usize,
}

fn invalid(reason: String) -> CodecError {
    CodecError::InvalidConfiguration {
        codec: "blosc".to_string(),
        reason,
    }
}

impl BloscCodec {
    /// A `blosc` codec. `typesize` `None` means 1 (no effect of shuffling).
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if `cname` is `snappy` (not
    /// included in this build), `clevel` is not in `0..=9`, or `typesize`
    /// is 0 with a shuffle.
    pub fn new(
        cname: BloscCompressor,
        clevel: u32,
        shuffle: BloscShuffle,
        typesize: Option<usize>,
        blocksize: usize,
    ) -> Result<Self, CodecError> {
        if cname == BloscCompressor::Snappy {
            return Err(invalid(
                "`cname` `snappy` is not supported (this build of c-blosc has no snappy)"
                    .to_string(),
            ));
        }
        if clevel > 9 {
            return Err(invalid(format!("`clevel` is {clevel}, expected 0 to 9")));
        }
        let typesize = match (typesize, shuffle) {
            // v3 `blosc`: with `noshuffle` the value is ignored.
            (_, BloscShuffle::NoShuffle) => typesize.filter(|&n| n > 0).unwrap_or(1),
            (Some(0), _) => {
                return Err(invalid(format!(
                    "`typesize` is 0, expected a positive integer with `shuffle` `{}`",
                    shuffle.name()
                )));
            }
            (typesize, _) => typesize.unwrap_or(1),
        };
        Ok(Self {
            cname,
            clevel,
            shuffle,
            typesize,
            blocksize,
        })
    }

    /// The compressor applied to each block.
    #[must_use]
    pub fn cname(&self) -> BloscCompressor {
        self.cname
    }

    /// The compression level.
    #[must_use]
    pub fn clevel(&self) -> u32 {
        self.clevel
    }

    /// The shuffle.
    #[must_use]
    pub fn shuffle(&self) -> BloscShuffle {
        self.shuffle
    }

    /// The element size shuffling works over.
    #[must_use]
    pub fn typesize(&self) -> usize {
        self.typesize
    }

    /// The block size, 0 for automatic.
    #[must_use]
    pub fn blocksize(&self) -> usize {
        self.blocksize
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: BloscConfig = parse_configuration(metadata)?;
    Ok(Codec::BytesToBytes(Arc::new(BloscCodec::new(
        config.cname,
        config.clevel,
        config.shuffle,
        config.typesize,
        config.blocksize,
    )?)))
}

fn corrupt(reason: &str) -> CodecError {
    CodecError::Corrupt {
        codec: "blosc",
        reason: reason.to_string(),
    }
}

impl BytesToBytesCodec for BloscCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert("cname".into(), self.cname.name().into());
        configuration.insert("clevel".into(), self.clevel.into());
        configuration.insert("shuffle".into(), self.shuffle.name().into());
        // v3 `blosc`: implementations must record the typesize they use.
        configuration.insert("typesize".into(), self.typesize.into());
        configuration.insert("blocksize".into(), self.blocksize.into());
        ExtensionObject::with_configuration("blosc", configuration)
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>, CodecError> {
        if decoded.len() > MAX_BUFFER_SIZE {
            return Err(CodecError::Incompatible {
                codec: "blosc",
                what: format!(
                    "{} bytes (c-blosc takes at most {MAX_BUFFER_SIZE})",
                    decoded.len()
                ),
            });
        }
        let capacity = decoded.len() + MAX_OVERHEAD;
        let mut encoded: Vec<u8> = Vec::new();
        encoded
            .try_reserve_exact(capacity)
            .map_err(|_| CodecError::TooLarge {
                shape: vec![capacity as u64],
            })?;
        // The level and shuffle were checked in `new`: both fit in a c_int.
        let clevel = self.clevel as c_int;
        // SAFETY: `decoded` is readable for `decoded.len()` bytes and
        // `encoded` has `capacity` writable bytes of spare capacity, which
        // is what we pass as `destsize`; c-blosc writes at most `destsize`
        // bytes. The compressor name is a NUL-terminated static string. The
        // `_ctx` function keeps its state on the stack, so concurrent calls
        // are sound.
        let written = unsafe {
            blosc_src::blosc_compress_ctx(
                clevel,
                self.shuffle.code(),
                self.typesize,
                decoded.len(),
                decoded.as_ptr().cast::<c_void>(),
                encoded.as_mut_ptr().cast::<c_void>(),
                capacity,
                self.cname.c_name().as_ptr(),
                self.blocksize,
                1,
            )
        };
        // With MAX_OVERHEAD spare bytes blosc always fits (it falls back
        // to a plain copy), so 0 or a negative value is an internal error.
        let written = usize::try_from(written)
            .ok()
            .filter(|&n| n > 0 && n <= capacity)
            .ok_or_else(|| CodecError::Library {
                codec: "blosc",
                source: std::io::Error::other(format!("blosc_compress_ctx returned {written}")),
            })?;
        // SAFETY: c-blosc initialised the first `written` bytes, and
        // `written <= capacity` was checked above.
        unsafe { encoded.set_len(written) };
        Ok(encoded)
    }

    fn decode(&self, encoded: Vec<u8>, decoded_size: Option<usize>) -> Result<Vec<u8>, CodecError> {
        if encoded.len() < blosc_src::BLOSC_MIN_HEADER_LENGTH as usize {
            return Err(corrupt(&format!(
                "{} bytes is shorter than the 16-byte header",
                encoded.len()
            )));
        }
        let mut nbytes = 0usize;
        // SAFETY: `encoded` is readable for `encoded.len()` bytes, at least
        // the 16 the header needs, and `nbytes` is a valid out-pointer.
        let status = unsafe {
            blosc_src::blosc_cbuffer_validate(
                encoded.as_ptr().cast::<c_void>(),
                encoded.len(),
                &raw mut nbytes,
            )
        };
        // Validation checks that the header's compressed size is exactly the
        // length of `encoded`, so decompression cannot read past it, and
        // that the decoded size is at most 2 GiB, bounding the allocation.
        if status != 0 {
            return Err(corrupt(
                "invalid header (unknown version, or the compressed size does not match the data)",
            ));
        }
        // The header's size is untrusted: one beyond the chunk is refused
        // before the output is allocated (a 16-byte header can claim 2 GiB).
        if let Some(bound) = decoded_size.filter(|&bound| nbytes > bound) {
            return Err(corrupt(&format!(
                "the header declares {nbytes} decoded bytes, more than the chunk's {bound}"
            )));
        }
        if nbytes == 0 {
            return Ok(Vec::new());
        }
        let mut decoded: Vec<u8> = Vec::new();
        decoded
            .try_reserve_exact(nbytes)
            .map_err(|_| CodecError::TooLarge {
                shape: vec![nbytes as u64],
            })?;
        // SAFETY: `encoded` passed `blosc_cbuffer_validate`, so its header
        // is readable and names its own length; `decoded` has `nbytes`
        // writable bytes of spare capacity, passed as `destsize`, and
        // c-blosc never writes more than `destsize`. The buffers do not
        // overlap. The `_ctx` function is safe to call concurrently.
        let written = unsafe {
            blosc_src::blosc_decompress_ctx(
                encoded.as_ptr().cast::<c_void>(),
                decoded.as_mut_ptr().cast::<c_void>(),
                nbytes,
                1,
            )
        };
        if usize::try_from(written).ok() != Some(nbytes) {
            return Err(corrupt(&format!(
                "decompression failed (blosc_decompress_ctx returned {written}, expected {nbytes})"
            )));
        }
        // SAFETY: c-blosc reported writing exactly `nbytes` bytes, the
        // reserved capacity.
        unsafe { decoded.set_len(nbytes) };
        Ok(decoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (i % 251) as u8 ^ (i / 1000) as u8)
            .collect()
    }

    fn codec(cname: BloscCompressor, shuffle: BloscShuffle) -> BloscCodec {
        BloscCodec::new(cname, 5, shuffle, Some(4), 0).unwrap()
    }

    const COMPRESSORS: [BloscCompressor; 5] = [
        BloscCompressor::Blosclz,
        BloscCompressor::Lz4,
        BloscCompressor::Lz4hc,
        BloscCompressor::Zlib,
        BloscCompressor::Zstd,
    ];

    const SHUFFLES: [BloscShuffle; 3] = [
        BloscShuffle::NoShuffle,
        BloscShuffle::Shuffle,
        BloscShuffle::BitShuffle,
    ];

    #[test]
    fn header_records_sizes_typesize_and_shuffle() {
        let data: Vec<u8> = (0u32..10_000).flat_map(u32::to_le_bytes).collect();
        let encoded = codec(BloscCompressor::Lz4, BloscShuffle::Shuffle)
            .encode(data.clone())
            .unwrap();
        // Blosc chunk format: version 2, versionlz, flags, typesize, then
        // nbytes, blocksize and cbytes as little-endian u32.
        assert_eq!(encoded[0], 2);
        assert_eq!(encoded[2] & 0x1, 0x1, "byte-shuffle flag");
        assert_eq!(encoded[2] >> 5, 1, "lz4 format code");
        assert_eq!(encoded[3], 4);
        assert_eq!(encoded[4..8], 40_000u32.to_le_bytes());
        assert_eq!(encoded[12..16], (encoded.len() as u32).to_le_bytes());
        assert!(encoded.len() < data.len() / 4, "{}", encoded.len());
    }

    #[test]
    fn every_compressor_and_shuffle_round_trips() {
        let data = sample(100_000);
        for cname in COMPRESSORS {
            for shuffle in SHUFFLES {
                let codec = codec(cname, shuffle);
                let encoded = codec.encode(data.clone()).unwrap();
                assert!(encoded.len() < data.len(), "{cname:?} {shuffle:?}");
                let decoded = codec.decode(encoded, Some(data.len())).unwrap();
                assert_eq!(decoded, data, "{cname:?} {shuffle:?}");
            }
        }
    }

    #[test]
    fn level_zero_and_empty_input_round_trip() {
        let codec =
            BloscCodec::new(BloscCompressor::Zstd, 0, BloscShuffle::NoShuffle, None, 0).unwrap();
        let data = sample(1000);
        let encoded = codec.encode(data.clone()).unwrap();
        assert_eq!(encoded.len(), data.len() + MAX_OVERHEAD);
        assert_eq!(codec.decode(encoded, None).unwrap(), data);
        let encoded = codec.encode(Vec::new()).unwrap();
        assert_eq!(encoded.len(), MAX_OVERHEAD);
        assert_eq!(codec.decode(encoded, None).unwrap(), b"");
    }

    #[test]
    fn decoding_ignores_the_configuration() {
        // The header says how the data was compressed.
        let data = sample(20_000);
        let encoded = codec(BloscCompressor::Zlib, BloscShuffle::BitShuffle)
            .encode(data.clone())
            .unwrap();
        let other = codec(BloscCompressor::Lz4, BloscShuffle::NoShuffle);
        assert_eq!(other.decode(encoded.clone(), Some(20_000)).unwrap(), data);
        // The size is a bound, never exceeded: a header claiming more than
        // the chunk is refused before anything is allocated.
        let err = other.decode(encoded, Some(3)).unwrap_err();
        assert!(
            err.to_string()
                .contains("declares 20000 decoded bytes, more than the chunk's 3"),
            "{err}"
        );
    }

    #[test]
    fn corrupt_truncated_and_empty_inputs_are_errors() {
        for cname in COMPRESSORS {
            let codec = codec(cname, BloscShuffle::Shuffle);
            let encoded = codec.encode(sample(50_000)).unwrap();
            for len in [0, 1, 15, 16, 17, encoded.len() / 2, encoded.len() - 1] {
                let err = codec.decode(encoded[..len].to_vec(), None).unwrap_err();
                assert!(
                    err.to_string().starts_with("blosc data is corrupt"),
                    "{cname:?} {len}: {err}"
                );
            }
            let mut longer = encoded.clone();
            longer.push(0);
            assert!(codec.decode(longer, None).is_err());
            // A decoded size larger than the data was compressed from.
            let mut corrupt = encoded.clone();
            corrupt[4..8].copy_from_slice(&60_000u32.to_le_bytes());
            assert!(codec.decode(corrupt, None).is_err(), "{cname:?}");
            // Garbage in the compressed blocks.
            let mut corrupt = encoded;
            for byte in &mut corrupt[40..] {
                *byte = byte.wrapping_mul(13).wrapping_add(7);
            }
            let _ = codec.decode(corrupt, None);
        }
    }

    #[test]
    fn invalid_configurations_are_rejected_naming_the_codec() {
        let cases = [
            (
                r#"{"cname": "lz5", "clevel": 5, "shuffle": "shuffle", "typesize": 4}"#,
                "unknown variant `lz5`",
            ),
            (
                r#"{"cname": "lz4", "clevel": 10, "shuffle": "shuffle", "typesize": 4}"#,
                "`clevel` is 10, expected 0 to 9",
            ),
            (
                r#"{"cname": "snappy", "clevel": 5, "shuffle": "shuffle", "typesize": 4}"#,
                "`snappy` is not supported",
            ),
            (
                r#"{"cname": "lz4", "clevel": 5, "shuffle": 1, "typesize": 4}"#,
                "invalid type: integer `1`",
            ),
            (
                r#"{"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 0}"#,
                "`typesize` is 0",
            ),
            (
                r#"{"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "nthreads": 2}"#,
                "unknown field `nthreads`",
            ),
            (
                r#"{"clevel": 5, "shuffle": "shuffle", "typesize": 4}"#,
                "missing field `cname`",
            ),
        ];
        for (config, expected) in cases {
            let config: JsonMap = serde_json::from_str(config).unwrap();
            let err = create(&ExtensionObject::with_configuration("blosc", config)).unwrap_err();
            let message = err.to_string();
            assert!(
                message.starts_with("invalid configuration for codec `blosc`"),
                "{message}"
            );
            assert!(message.contains(expected), "{message}");
        }
    }

    #[test]
    fn typesize_and_blocksize_default_and_are_always_written() {
        let config: JsonMap =
            serde_json::from_str(r#"{"cname": "zstd", "clevel": 3, "shuffle": "noshuffle"}"#)
                .unwrap();
        let Codec::BytesToBytes(codec) =
            create(&ExtensionObject::with_configuration("blosc", config)).unwrap()
        else {
            panic!("blosc is bytes-to-bytes");
        };
        assert_eq!(
            serde_json::Value::Object(codec.metadata().configuration_or_empty()),
            serde_json::json!({
                "cname": "zstd", "clevel": 3, "shuffle": "noshuffle", "typesize": 1, "blocksize": 0
            })
        );
    }

    #[test]
    fn explicit_blocksize_is_used() {
        // c-blosc enlarges the blocks of codecs it splits (lz4, blosclz) but not zstd's.
        let codec = BloscCodec::new(
            BloscCompressor::Zstd,
            5,
            BloscShuffle::Shuffle,
            Some(2),
            4096,
        )
        .unwrap();
        let data = sample(50_000);
        let encoded = codec.encode(data.clone()).unwrap();
        assert_eq!(encoded[8..12], 4096u32.to_le_bytes());
        assert_eq!(codec.decode(encoded, None).unwrap(), data);
    }

    proptest! {
        #[test]
        fn blosc_round_trips(
            data in prop::collection::vec(any::<u8>(), 0..4096),
            cname in prop::sample::select(COMPRESSORS.to_vec()),
            shuffle in prop::sample::select(SHUFFLES.to_vec()),
            clevel in 0u32..=9,
            typesize in 1usize..=16,
        ) {
            let codec = BloscCodec::new(cname, clevel, shuffle, Some(typesize), 0)?;
            let decoded = codec.decode(codec.encode(data.clone())?, Some(data.len()))?;
            prop_assert_eq!(decoded, data);
        }

        #[test]
        fn blosc_decode_of_garbage_does_not_panic(data in prop::collection::vec(any::<u8>(), 16..512)) {
            let codec = codec(BloscCompressor::Lz4, BloscShuffle::Shuffle);
            // Make the header plausible so that decompression itself runs.
            let mut data = data;
            data[0] = 2;
            let len = data.len() as u32;
            data[12..16].copy_from_slice(&len.to_le_bytes());
            let _ = codec.decode(data, None);
        }
    }
}
