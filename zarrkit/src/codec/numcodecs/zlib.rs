//! The `numcodecs.zlib` bytes-to-bytes codec: DEFLATE with a zlib header
//! and Adler-32 trailer (RFC 1950), as numcodecs' `Zlib`.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/compression/zlib.html>
//! Names: v3 `numcodecs.zlib` (as zarr-python 3.1 writes it); v2 compressor id `zlib`.
//!
//! ```
//! # use zarrkit::codec::zlib::ZlibConfig;
//! let config: ZlibConfig = serde_json::from_str(r#"{ "level": 1 }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::bounded::{Deflate, decode_whole, deflate, inflate, read_bounded, read_into};
use crate::codec::{BytesToBytesCodec, Codec, CodecError, parse_configuration};
use crate::metadata::{ExtensionObject, JsonMap};
use flate2::read::ZlibDecoder;
use serde::{Deserialize, Serialize};
#[cfg(test)]
use std::io::Read;
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "numcodecs.zlib";

/// The configuration of the `numcodecs.zlib` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZlibConfig {
    /// The compression level, 0 (none) to 9, or -1 for zlib's default (6).
    /// Absent means numcodecs' default, 1.
    #[serde(default = "default_level")]
    pub level: i32,
}

fn default_level() -> i32 {
    1
}

/// The `numcodecs.zlib` codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZlibCodec {
    level: i32,
}

impl ZlibCodec {
    /// A codec compressing at `level` (-1 for zlib's default, 6).
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if `level` is not in `-1..=9`.
    pub fn new(level: i32) -> Result<Self, CodecError> {
        if !(-1..=9).contains(&level) {
            return Err(CodecError::InvalidConfiguration {
                codec: NAME.to_string(),
                reason: format!("`level` is {level}, expected -1 to 9"),
            });
        }
        Ok(Self { level })
    }

    /// The compression level.
    #[must_use]
    pub fn level(&self) -> i32 {
        self.level
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: ZlibConfig = parse_configuration(metadata)?;
    Ok(Codec::BytesToBytes(Arc::new(ZlibCodec::new(config.level)?)))
}

fn library_error(source: std::io::Error) -> CodecError {
    crate::codec::bounded::stream_error(NAME, source)
}

impl BytesToBytesCodec for ZlibCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert("level".into(), self.level.into());
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>, CodecError> {
        // -1 is zlib's Z_DEFAULT_COMPRESSION, level 6.
        let level = u32::try_from(self.level).unwrap_or(6);
        deflate(Deflate::Zlib, level, &decoded, NAME)
    }

    fn decode(&self, encoded: Vec<u8>, decoded_size: Option<usize>) -> Result<Vec<u8>, CodecError> {
        check_not_empty(&encoded)?;
        // The whole stream at once when the chain bounds its size (every
        // fixed-size chunk); otherwise, or for data libdeflate refuses
        // (the streaming decoder then gives the error), as a stream.
        if let Some(decoded) = decode_whole(Deflate::Zlib, &encoded, decoded_size, false, NAME)? {
            return Ok(decoded);
        }
        read_bounded(
            ZlibDecoder::new(encoded.as_slice()),
            decoded_size,
            NAME,
            library_error,
        )
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
        check_not_empty(encoded)?;
        match inflate(Deflate::Zlib, encoded, out, NAME)? {
            Some(n) if n == out.len() => Ok(()),
            Some(n) => Err(CodecError::WrongSize {
                expected: out.len(),
                actual: n,
            }),
            None => read_into(ZlibDecoder::new(encoded), out, NAME, library_error),
        }
    }
}

/// A zlib stream has at least a header: no data is corrupt, not empty.
fn check_not_empty(encoded: &[u8]) -> Result<(), CodecError> {
    if encoded.is_empty() {
        return Err(CodecError::Corrupt {
            codec: NAME,
            reason: "the data is empty (a zlib stream has at least a header)".to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (i % 251) as u8 ^ (i / 700) as u8)
            .collect()
    }

    /// A 64³ `uint16` field: smooth, or with 3 pseudo-random low bits.
    pub(crate) fn field(noise: bool) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(2 << 18);
        for i in 0..64u64 {
            for j in 0..64 {
                for k in 0..64 {
                    let index = (i * 64 + j) * 64 + k;
                    let jitter = if noise {
                        ((index * 2_654_435_761) >> 7) & 7
                    } else {
                        0
                    };
                    bytes.extend_from_slice(
                        &(((i * 7 + j * 3 + k) / 4 + jitter) as u16).to_le_bytes(),
                    );
                }
            }
        }
        bytes
    }

    #[test]
    fn level_one_compresses_as_zlib_does() {
        // zlib 1.2.13 (Python's zlib.compress(data, 1)) compresses these
        // 32.1:1 and 3.90:1; zlib-ng's level 1 (deflate_quick, static
        // Huffman codes only, as zlib-rs) 8.4:1 and 2.19:1.
        for (noise, at_least) in [(false, 25.0), (true, 3.5)] {
            let data = field(noise);
            let encoded = ZlibCodec::new(1).unwrap().encode(data.clone()).unwrap();
            let ratio = data.len() as f64 / encoded.len() as f64;
            assert!(ratio >= at_least, "noise {noise}: {ratio:.2}:1");
            assert_eq!(encoded.capacity(), encoded.len());
            let mut decoded = Vec::new();
            ZlibDecoder::new(encoded.as_slice())
                .read_to_end(&mut decoded)
                .unwrap();
            assert_eq!(decoded, data);
        }
    }

    #[test]
    fn output_is_a_zlib_stream_python_can_read() {
        let data = sample(10_000);
        let encoded = ZlibCodec::new(1).unwrap().encode(data.clone()).unwrap();
        // RFC 1950: CMF 0x78 (deflate, 32 KiB window); FLEVEL 0 for level 1.
        assert_eq!(encoded[..2], [0x78, 0x01]);
        assert!(encoded.len() < data.len() / 2, "{}", encoded.len());
        let mut decoded = Vec::new();
        ZlibDecoder::new(encoded.as_slice())
            .read_to_end(&mut decoded)
            .unwrap();
        assert_eq!(decoded, data);
    }

    #[test]
    fn empty_input_matches_numcodecs_bytes() {
        // numcodecs.Zlib(0).encode(b"") in numcodecs 0.16.6.
        let encoded = ZlibCodec::new(0).unwrap().encode(Vec::new()).unwrap();
        assert_eq!(
            encoded,
            [
                0x78, 0x01, 0x01, 0x00, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01
            ]
        );
        assert!(
            ZlibCodec::new(0)
                .unwrap()
                .decode(encoded, Some(0))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn output_larger_than_the_chunk_is_refused() {
        let codec = ZlibCodec::new(5).unwrap();
        let encoded = codec.encode(sample(5000)).unwrap();
        let err = codec.decode(encoded, Some(100)).unwrap_err();
        assert!(
            err.to_string().contains("more than the expected 100 bytes"),
            "{err}"
        );
    }

    #[test]
    fn out_of_range_levels_are_rejected_naming_the_codec() {
        for level in [-2, 10] {
            let err = ZlibCodec::new(level).unwrap_err();
            assert!(err.to_string().contains("`numcodecs.zlib`"), "{err}");
        }
        let config: JsonMap = serde_json::from_str(r#"{"level": 1, "x": 2}"#).unwrap();
        assert!(create(&ExtensionObject::with_configuration(NAME, config)).is_err());
        let Codec::BytesToBytes(codec) = create(&ExtensionObject::new(NAME)).unwrap() else {
            panic!("zlib is bytes-to-bytes");
        };
        assert_eq!(
            serde_json::Value::Object(codec.metadata().configuration_or_empty()),
            serde_json::json!({"level": 1})
        );
    }

    #[test]
    fn corrupt_and_truncated_inputs_are_errors() {
        let codec = ZlibCodec::new(5).unwrap();
        let encoded = codec.encode(sample(5000)).unwrap();
        for len in [0, 1, 2, encoded.len() / 2, encoded.len() - 1] {
            assert!(
                codec.decode(encoded[..len].to_vec(), None).is_err(),
                "{len}"
            );
        }
        let mut corrupt = encoded;
        let last = corrupt.len() - 1;
        corrupt[last] ^= 1; // the Adler-32 trailer
        assert!(codec.decode(corrupt, None).is_err());
    }

    #[test]
    fn whole_buffer_decoding_fills_the_output_exactly_or_fails() {
        let codec = ZlibCodec::new(1).unwrap();
        let data = sample(5000);
        let encoded = codec.encode(data.clone()).unwrap();
        let mut out = vec![0; 5000];
        codec.decode_into(&encoded, &mut out).unwrap();
        assert_eq!(out, data);
        assert_eq!(codec.decode(encoded.clone(), Some(5000)).unwrap(), data);
        // A bound above the size is a bound, not the size.
        assert_eq!(codec.decode(encoded.clone(), Some(9000)).unwrap(), data);
        // The output stops at the buffer: more is refused, not allocated.
        let err = codec.decode_into(&encoded, &mut vec![0; 4000]).unwrap_err();
        assert!(
            err.to_string()
                .contains("more than the expected 4000 bytes"),
            "{err}"
        );
        let err = codec.decode(encoded.clone(), Some(4000)).unwrap_err();
        assert!(
            err.to_string()
                .contains("more than the expected 4000 bytes"),
            "{err}"
        );
        let err = codec.decode_into(&encoded, &mut vec![0; 6000]).unwrap_err();
        assert!(
            matches!(
                err,
                CodecError::WrongSize {
                    expected: 6000,
                    actual: 5000
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn every_decoding_path_ignores_bytes_after_the_stream_and_checks_adler32() {
        let codec = ZlibCodec::new(6).unwrap();
        let data = sample(3000);
        let mut encoded = codec.encode(data.clone()).unwrap();
        let mut corrupt = encoded.clone();
        let last = corrupt.len() - 1;
        corrupt[last] ^= 1;
        // zlib (and so numcodecs) stops at the end of the stream.
        encoded.extend_from_slice(b"trailing");
        for size in [None, Some(3000)] {
            assert_eq!(codec.decode(encoded.clone(), size).unwrap(), data);
            assert!(codec.decode(corrupt.clone(), size).is_err(), "{size:?}");
        }
        let mut out = vec![0; 3000];
        codec.decode_into(&encoded, &mut out).unwrap();
        assert_eq!(out, data);
        let err = codec.decode_into(&corrupt, &mut out).unwrap_err();
        assert!(matches!(err, CodecError::Corrupt { .. }), "{err}");
    }

    proptest! {
        #[test]
        fn zlib_decodes_into_the_output(data in prop::collection::vec(any::<u8>(), 0..4096), level in -1i32..=9) {
            let codec = ZlibCodec::new(level)?;
            let mut out = vec![0xAA; data.len()];
            codec.decode_into(&codec.encode(data.clone())?, &mut out)?;
            prop_assert_eq!(out, data);
        }

        #[test]
        fn zlib_round_trips(data in prop::collection::vec(any::<u8>(), 0..4096), level in -1i32..=9) {
            let codec = ZlibCodec::new(level)?;
            let decoded = codec.decode(codec.encode(data.clone())?, Some(data.len()))?;
            prop_assert_eq!(decoded, data);
        }

        #[test]
        fn zlib_decode_of_garbage_does_not_panic(data in prop::collection::vec(any::<u8>(), 0..256)) {
            let _ = ZlibCodec::new(1)?.decode(data, Some(100));
        }
    }
}
