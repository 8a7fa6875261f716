//! The `numcodecs.lz4` bytes-to-bytes codec: one LZ4 block after a 4-byte
//! little-endian header holding the decoded size, as numcodecs' `LZ4`.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/compression/lz4.html>
//! Names: v3 `numcodecs.lz4` (as zarr-python 3.1 writes it); v2 compressor id `lz4`.
//!
//! ```
//! # use zarrkit::codec::lz4::Lz4Config;
//! let config: Lz4Config = serde_json::from_str(r#"{ "acceleration": 1 }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! `acceleration` trades ratio for speed in the reference LZ4 compressor.
//! This codec compresses with `lz4_flex`, which has one speed; it keeps the
//! value in the metadata, and any LZ4 decoder reads the output.

use crate::codec::{BytesToBytesCodec, Codec, CodecError, parse_configuration};
use crate::metadata::{ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "numcodecs.lz4";

/// The size of numcodecs' header: the decoded size as a little-endian `i32`.
const HEADER: usize = 4;

/// LZ4's best ratio is 255:1 (a match of at most 255 bytes per sequence
/// byte, plus run headers); a header claiming more than this per input byte
/// is corrupt, which bounds the allocation a forged header can cause.
const MAX_RATIO: usize = 256;

/// The configuration of the `numcodecs.lz4` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lz4Config {
    /// LZ4's acceleration (1 is the default). Absent means 1.
    #[serde(default = "default_acceleration")]
    pub acceleration: i32,
}

fn default_acceleration() -> i32 {
    1
}

/// The `numcodecs.lz4` codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lz4Codec {
    acceleration: i32,
}

impl Lz4Codec {
    /// A codec recording `acceleration` in its metadata.
    #[must_use]
    pub fn new(acceleration: i32) -> Self {
        Self { acceleration }
    }

    /// The acceleration recorded in the metadata.
    #[must_use]
    pub fn acceleration(&self) -> i32 {
        self.acceleration
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: Lz4Config = parse_configuration(metadata)?;
    Ok(Codec::BytesToBytes(Arc::new(Lz4Codec::new(
        config.acceleration,
    ))))
}

fn corrupt(reason: String) -> CodecError {
    CodecError::Corrupt {
        codec: NAME,
        reason,
    }
}

impl BytesToBytesCodec for Lz4Codec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert("acceleration".into(), self.acceleration.into());
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>, CodecError> {
        // numcodecs stores the size as a C `int`.
        let size = i32::try_from(decoded.len()).map_err(|_| CodecError::TooLarge {
            shape: vec![decoded.len() as u64],
        })?;
        let mut output =
            Vec::with_capacity(HEADER + lz4_flex::block::get_maximum_output_size(decoded.len()));
        output.extend_from_slice(&size.to_le_bytes());
        output.extend_from_slice(&lz4_flex::block::compress(&decoded));
        Ok(output)
    }

    fn decode(&self, encoded: Vec<u8>, decoded_size: Option<usize>) -> Result<Vec<u8>, CodecError> {
        let Some((header, block)) = encoded.split_first_chunk::<HEADER>() else {
            return Err(corrupt(format!(
                "{} bytes is shorter than the 4-byte size header",
                encoded.len()
            )));
        };
        let size = i32::from_le_bytes(*header);
        let size = usize::try_from(size)
            .map_err(|_| corrupt(format!("the size header is negative ({size})")))?;
        // The hint is a bound (exact only under `bytes`): a smaller block is
        // left for the chain to judge, a larger one is refused unread.
        if let Some(bound) = decoded_size.filter(|&n| size > n) {
            return Err(corrupt(format!(
                "the size header says {size} bytes, more than the chunk's {bound}"
            )));
        }
        if size > block.len().saturating_mul(MAX_RATIO) {
            return Err(corrupt(format!(
                "the size header says {size} bytes, more than {} compressed bytes can hold",
                block.len()
            )));
        }
        let mut output = vec![0; size];
        let written = lz4_flex::block::decompress_into(block, &mut output)
            .map_err(|e| corrupt(e.to_string()))?;
        if written != size {
            return Err(corrupt(format!(
                "the block decodes to {written} bytes, the size header says {size}"
            )));
        }
        Ok(output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn numcodecs_vectors_decode() {
        // numcodecs.LZ4().encode(...) in numcodecs 0.16.6.
        let codec = Lz4Codec::new(1);
        assert_eq!(codec.decode(vec![0; 5], None).unwrap(), b"");
        let encoded = b"\x15\x00\x00\x009abc\x03\x00Pbcabc".to_vec();
        assert_eq!(
            codec.decode(encoded, Some(21)).unwrap(),
            b"abcabcabcabcabcabcabc"
        );
    }

    #[test]
    fn output_starts_with_the_little_endian_size() {
        let encoded = Lz4Codec::new(1).encode(vec![7; 1000]).unwrap();
        assert_eq!(encoded[..4], [0xe8, 0x03, 0, 0]);
        assert!(encoded.len() < 40, "{}", encoded.len());
    }

    #[test]
    fn forged_headers_are_errors_not_allocations() {
        let codec = Lz4Codec::new(1);
        for (bytes, needle) in [
            (vec![1, 2], "shorter than the 4-byte size header"),
            (vec![0xff, 0xff, 0xff, 0xff, 0], "negative"),
            (
                vec![0xff, 0xff, 0xff, 0x7f, 0],
                "more than 1 compressed bytes",
            ),
            (
                vec![5, 0, 0, 0, 0x40, b'a', b'b', b'c', b'd'],
                "decodes to 4 bytes",
            ),
        ] {
            let err = codec.decode(bytes.clone(), None).unwrap_err();
            assert!(err.to_string().contains(needle), "{bytes:?}: {err}");
        }
        let err = codec
            .decode(vec![4, 0, 0, 0, 0x40, 1, 2, 3, 4], Some(3))
            .unwrap_err();
        assert!(err.to_string().contains("more than the chunk's 3"), "{err}");
        // A bound, not an exact size: a smaller block decodes.
        assert_eq!(
            codec
                .decode(vec![4, 0, 0, 0, 0x40, 1, 2, 3, 4], Some(8))
                .unwrap(),
            [1, 2, 3, 4]
        );
    }

    proptest! {
        #[test]
        fn lz4_round_trips(data in prop::collection::vec(any::<u8>(), 0..4096)) {
            let codec = Lz4Codec::new(1);
            let decoded = codec.decode(codec.encode(data.clone())?, Some(data.len()))?;
            prop_assert_eq!(decoded, data);
        }

        #[test]
        fn lz4_decode_of_garbage_does_not_panic(data in prop::collection::vec(any::<u8>(), 0..256)) {
            let _ = Lz4Codec::new(1).decode(data.clone(), None);
            let _ = Lz4Codec::new(1).decode(data, Some(100));
        }
    }
}
