//! The `numcodecs.bz2` bytes-to-bytes codec: bzip2 streams, as numcodecs' `BZ2`.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/compression/bz2.html>
//! Names: v3 `numcodecs.bz2` (as zarr-python 3.1 writes it); v2 compressor id `bz2`.
//!
//! ```
//! # use zarrkit::codec::bz2::Bz2Config;
//! let config: Bz2Config = serde_json::from_str(r#"{ "level": 9 }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::bounded::read_bounded;
use crate::codec::{BytesToBytesCodec, Codec, CodecError, parse_configuration};
use crate::metadata::{ExtensionObject, JsonMap};
use bzip2::Compression;
use bzip2::read::MultiBzDecoder;
use bzip2::write::BzEncoder;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "numcodecs.bz2";

/// The configuration of the `numcodecs.bz2` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bz2Config {
    /// The block size in units of 100 kB, 1 to 9. Absent means numcodecs'
    /// default, 1.
    #[serde(default = "default_level")]
    pub level: u32,
}

fn default_level() -> u32 {
    1
}

/// The `numcodecs.bz2` codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bz2Codec {
    level: u32,
}

impl Bz2Codec {
    /// A codec compressing at `level`.
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if `level` is not in `1..=9`
    /// (Python's `bz2` refuses 0 as numcodecs passes it on).
    pub fn new(level: u32) -> Result<Self, CodecError> {
        if !(1..=9).contains(&level) {
            return Err(CodecError::InvalidConfiguration {
                codec: NAME.to_string(),
                reason: format!("`level` is {level}, expected 1 to 9"),
            });
        }
        Ok(Self { level })
    }

    /// The compression level.
    #[must_use]
    pub fn level(&self) -> u32 {
        self.level
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: Bz2Config = parse_configuration(metadata)?;
    Ok(Codec::BytesToBytes(Arc::new(Bz2Codec::new(config.level)?)))
}

fn library_error(source: std::io::Error) -> CodecError {
    crate::codec::bounded::stream_error(NAME, source)
}

impl BytesToBytesCodec for Bz2Codec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert("level".into(), self.level.into());
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>, CodecError> {
        let output = Vec::with_capacity(decoded.len() / 2 + 64);
        let mut encoder = BzEncoder::new(output, Compression::new(self.level));
        encoder.write_all(&decoded).map_err(library_error)?;
        encoder.finish().map_err(library_error)
    }

    fn decode(&self, encoded: Vec<u8>, decoded_size: Option<usize>) -> Result<Vec<u8>, CodecError> {
        if encoded.is_empty() {
            return Err(CodecError::Corrupt {
                codec: NAME,
                reason: "the data is empty (a bzip2 stream has at least a header)".to_string(),
            });
        }
        // Python's `bz2.decompress`, which numcodecs calls, reads
        // concatenated streams as one.
        read_bounded(
            MultiBzDecoder::new(encoded.as_slice()),
            decoded_size,
            NAME,
            library_error,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (i % 251) as u8 ^ (i / 700) as u8)
            .collect()
    }

    #[test]
    fn output_is_a_bzip2_stream_of_the_level_block_size() {
        let data = sample(10_000);
        let encoded = Bz2Codec::new(9).unwrap().encode(data.clone()).unwrap();
        // "BZh" and the block size digit.
        assert_eq!(encoded[..4], *b"BZh9");
        assert!(encoded.len() < data.len() / 4, "{}", encoded.len());
        let codec = Bz2Codec::new(1).unwrap();
        assert_eq!(codec.decode(encoded, Some(data.len())).unwrap(), data);
    }

    #[test]
    fn concatenated_streams_decode_to_the_concatenated_data() {
        let codec = Bz2Codec::new(1).unwrap();
        let mut encoded = codec.encode(b"hello ".to_vec()).unwrap();
        encoded.extend(codec.encode(b"world".to_vec()).unwrap());
        assert_eq!(codec.decode(encoded, None).unwrap(), b"hello world");
    }

    #[test]
    fn level_zero_and_ten_are_rejected_naming_the_codec() {
        for level in [0, 10] {
            let err = Bz2Codec::new(level).unwrap_err();
            assert!(err.to_string().contains("`numcodecs.bz2`"), "{err}");
        }
    }

    #[test]
    fn corrupt_truncated_and_oversized_inputs_are_errors() {
        let codec = Bz2Codec::new(5).unwrap();
        let encoded = codec.encode(sample(5000)).unwrap();
        for len in [0, 1, 4, encoded.len() / 2, encoded.len() - 1] {
            assert!(
                codec.decode(encoded[..len].to_vec(), None).is_err(),
                "{len}"
            );
        }
        let mut corrupt = encoded.clone();
        let middle = corrupt.len() / 2;
        corrupt[middle] ^= 0x55;
        assert!(codec.decode(corrupt, None).is_err());
        assert!(codec.decode(encoded, Some(10)).is_err());
    }

    proptest! {
        #[test]
        fn bz2_round_trips(data in prop::collection::vec(any::<u8>(), 0..4096), level in 1u32..=9) {
            let codec = Bz2Codec::new(level)?;
            let decoded = codec.decode(codec.encode(data.clone())?, Some(data.len()))?;
            prop_assert_eq!(decoded, data);
        }

        #[test]
        fn bz2_decode_of_garbage_does_not_panic(data in prop::collection::vec(any::<u8>(), 0..256)) {
            let _ = Bz2Codec::new(1)?.decode(data, Some(100));
        }
    }
}
