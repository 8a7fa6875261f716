//! The `gzip` bytes-to-bytes codec: DEFLATE with a gzip header (RFC 1952).
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/gzip/index.html>
//! Names: v3 `gzip`; v2 compressor id `gzip`.
//!
//! ```
//! # use zarrkit::codec::gzip::GzipConfig;
//! let config: GzipConfig = serde_json::from_str(r#"{ "level": 5 }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::bounded::{Deflate, decode_whole, deflate, inflate, read_bounded, read_into};
use crate::codec::{BytesToBytesCodec, Codec, CodecError, parse_configuration};
use crate::metadata::{ExtensionObject, JsonMap};
use flate2::read::MultiGzDecoder;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The configuration of the `gzip` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GzipConfig {
    /// The compression level, 0 (none) to 9 (smallest) (v3 `gzip`,
    /// "Configuration parameters").
    pub level: u32,
}

/// The `gzip` codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GzipCodec {
    level: u32,
}

impl GzipCodec {
    /// A `gzip` codec compressing at `level`.
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if `level` is not in `0..=9`.
    pub fn new(level: u32) -> Result<Self, CodecError> {
        if level > 9 {
            return Err(CodecError::InvalidConfiguration {
                codec: "gzip".to_string(),
                reason: format!("`level` is {level}, expected 0 to 9"),
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
    let config: GzipConfig = parse_configuration(metadata)?;
    Ok(Codec::BytesToBytes(Arc::new(GzipCodec::new(config.level)?)))
}

fn library_error(source: std::io::Error) -> CodecError {
    crate::codec::bounded::stream_error("gzip", source)
}

impl BytesToBytesCodec for GzipCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert("level".into(), self.level.into());
        ExtensionObject::with_configuration("gzip", configuration)
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>, CodecError> {
        deflate(Deflate::Gzip, self.level, &decoded, "gzip")
    }

    fn decode(&self, encoded: Vec<u8>, decoded_size: Option<usize>) -> Result<Vec<u8>, CodecError> {
        check_not_empty(&encoded)?;
        // The whole stream at once when the chain bounds its size (every
        // fixed-size chunk) and it is one member that fills the bound;
        // otherwise (several members, no bound, or data libdeflate
        // refuses, whose error the streaming decoder then gives) as a stream.
        if let Some(decoded) = decode_whole(Deflate::Gzip, &encoded, decoded_size, true, "gzip")? {
            return Ok(decoded);
        }
        // numcodecs and zlib may write several concatenated gzip members;
        // RFC 1952 defines their concatenation as one stream. Reading stops
        // one byte past the bound: a bomb costs no more than the chunk.
        read_bounded(
            MultiGzDecoder::new(encoded.as_slice()),
            decoded_size,
            "gzip",
            library_error,
        )
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
        check_not_empty(encoded)?;
        if inflate(Deflate::Gzip, encoded, out, "gzip")? == Some(out.len()) {
            return Ok(());
        }
        // A first member shorter than the chunk (more members follow), or
        // data libdeflate refused: the streaming decoder has the last word.
        read_into(MultiGzDecoder::new(encoded), out, "gzip", library_error)
    }
}

/// A gzip stream has at least a header: no data is corrupt, not empty.
fn check_not_empty(encoded: &[u8]) -> Result<(), CodecError> {
    if encoded.is_empty() {
        return Err(CodecError::Corrupt {
            codec: "gzip",
            reason: "the data is empty (a gzip stream has at least a header)".to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Read;

    fn sample(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (i % 251) as u8 ^ (i / 1000) as u8)
            .collect()
    }

    #[test]
    fn output_is_a_gzip_stream_that_compresses_repetitive_data() {
        let data = sample(10_000);
        let encoded = GzipCodec::new(5).unwrap().encode(data.clone()).unwrap();
        // RFC 1952: ID1, ID2, CM = 8 (deflate).
        assert_eq!(encoded[..3], [0x1f, 0x8b, 8]);
        assert!(encoded.len() < data.len() / 4, "{}", encoded.len());
        let mut decoded = Vec::new();
        flate2::read::GzDecoder::new(encoded.as_slice())
            .read_to_end(&mut decoded)
            .unwrap();
        assert_eq!(decoded, data);
    }

    #[test]
    fn level_zero_stores_without_compressing() {
        let data = sample(10_000);
        let encoded = GzipCodec::new(0).unwrap().encode(data.clone()).unwrap();
        assert!(encoded.len() > data.len());
        let decoded = GzipCodec::new(0).unwrap().decode(encoded, None).unwrap();
        assert_eq!(decoded, data);
    }

    #[cfg(feature = "zlib")]
    #[test]
    fn level_one_compresses_as_gzip_does() {
        // Python's gzip.compress(data, 1) (zlib 1.2.13): 32.0:1; zlib-ng's
        // level 1 (static Huffman codes only, as zlib-rs): about 8:1.
        let data = crate::codec::numcodecs::zlib::tests::field(false);
        let encoded = GzipCodec::new(1).unwrap().encode(data.clone()).unwrap();
        let ratio = data.len() as f64 / encoded.len() as f64;
        assert!(ratio >= 25.0, "{ratio:.2}:1");
        // RFC 1952: the magic bytes, deflate.
        assert_eq!(encoded[..3], [0x1f, 0x8b, 8]);
        let mut decoded = Vec::new();
        flate2::read::GzDecoder::new(encoded.as_slice())
            .read_to_end(&mut decoded)
            .unwrap();
        assert_eq!(decoded, data);
    }

    #[test]
    fn concatenated_members_decode_to_the_concatenated_data() {
        let codec = GzipCodec::new(1).unwrap();
        let mut encoded = codec.encode(b"hello ".to_vec()).unwrap();
        encoded.extend(codec.encode(b"world".to_vec()).unwrap());
        assert_eq!(codec.decode(encoded, None).unwrap(), b"hello world");
    }

    #[test]
    fn concatenated_members_decode_into_the_output_and_to_a_bound() {
        let codec = GzipCodec::new(1).unwrap();
        let mut encoded = codec.encode(b"hello ".to_vec()).unwrap();
        encoded.extend(codec.encode(b"world".to_vec()).unwrap());
        let mut out = vec![0; 11];
        codec.decode_into(&encoded, &mut out).unwrap();
        assert_eq!(out, b"hello world");
        assert_eq!(
            codec.decode(encoded.clone(), Some(11)).unwrap(),
            b"hello world"
        );
        let err = codec.decode_into(&encoded, &mut [0; 8]).unwrap_err();
        assert!(
            err.to_string().contains("more than the expected 8 bytes"),
            "{err}"
        );
        let err = codec.decode_into(&encoded, &mut [0; 12]).unwrap_err();
        assert!(
            matches!(
                err,
                CodecError::WrongSize {
                    expected: 12,
                    actual: 11
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_crc32_mismatch_is_an_error_in_every_decoding_path() {
        let codec = GzipCodec::new(6).unwrap();
        let data = sample(3000);
        let mut encoded = codec.encode(data.clone()).unwrap();
        let mut out = vec![0; 3000];
        codec.decode_into(&encoded, &mut out).unwrap();
        assert_eq!(out, data);
        // RFC 1952: CRC32, then ISIZE, end the member.
        let crc = encoded.len() - 8;
        encoded[crc] ^= 1;
        assert!(codec.decode(encoded.clone(), None).is_err());
        assert!(codec.decode(encoded.clone(), Some(3000)).is_err());
        let err = codec.decode_into(&encoded, &mut out).unwrap_err();
        assert!(matches!(err, CodecError::Corrupt { .. }), "{err}");
    }

    #[test]
    fn the_size_is_a_bound_the_output_never_exceeds() {
        let codec = GzipCodec::new(6).unwrap();
        let data = sample(5000);
        let encoded = codec.encode(data.clone()).unwrap();
        assert_eq!(codec.decode(encoded.clone(), Some(5000)).unwrap(), data);
        assert_eq!(
            codec.decode(encoded.clone(), Some(usize::MAX)).unwrap(),
            data
        );
        let err = codec.decode(encoded, Some(10)).unwrap_err();
        assert!(
            err.to_string().contains("more than the expected 10 bytes"),
            "{err}"
        );
    }

    #[test]
    fn level_ten_is_rejected_naming_the_codec() {
        let err = GzipCodec::new(10).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid configuration for codec `gzip`: `level` is 10, expected 0 to 9"
        );
        let mut config = JsonMap::new();
        config.insert("level".into(), 10.into());
        let err = create(&ExtensionObject::with_configuration("gzip", config)).unwrap_err();
        assert!(err.to_string().contains("codec `gzip`"), "{err}");
    }

    #[test]
    fn missing_negative_or_non_integer_level_is_rejected() {
        for config in [
            r"{}",
            r#"{"level": -1}"#,
            r#"{"level": 1.5}"#,
            r#"{"level": "5"}"#,
        ] {
            let config: JsonMap = serde_json::from_str(config).unwrap();
            let err = create(&ExtensionObject::with_configuration("gzip", config)).unwrap_err();
            assert!(err.to_string().contains("codec `gzip`"), "{err}");
        }
    }

    #[test]
    fn metadata_round_trips_through_create() {
        let codec = GzipCodec::new(7).unwrap();
        let metadata = codec.metadata();
        assert_eq!(
            serde_json::Value::Object(metadata.configuration_or_empty()),
            serde_json::json!({ "level": 7 })
        );
        let Codec::BytesToBytes(created) = create(&metadata).unwrap() else {
            panic!("gzip is bytes-to-bytes");
        };
        assert_eq!(created.metadata(), metadata);
    }

    #[test]
    fn corrupt_truncated_and_empty_inputs_are_errors() {
        let codec = GzipCodec::new(5).unwrap();
        let encoded = codec.encode(sample(5000)).unwrap();
        for len in [0, 1, 9, 10, 20, encoded.len() / 2, encoded.len() - 1] {
            let err = codec.decode(encoded[..len].to_vec(), None).unwrap_err();
            assert!(
                err.to_string().starts_with("gzip data is corrupt"),
                "{len}: {err}"
            );
        }
        let mut corrupt = encoded.clone();
        corrupt[0] = 0;
        assert!(codec.decode(corrupt, None).is_err());
        // A flipped byte in the body breaks either the deflate stream or the CRC.
        let mut corrupt = encoded;
        let middle = corrupt.len() / 2;
        corrupt[middle] ^= 0x55;
        assert!(codec.decode(corrupt, None).is_err());
    }

    proptest! {
        #[test]
        fn gzip_decodes_into_the_output(data in prop::collection::vec(any::<u8>(), 0..4096), level in 0u32..=9) {
            let codec = GzipCodec::new(level)?;
            let mut out = vec![0xAA; data.len()];
            codec.decode_into(&codec.encode(data.clone())?, &mut out)?;
            prop_assert_eq!(out, data);
        }

        #[test]
        fn gzip_round_trips(data in prop::collection::vec(any::<u8>(), 0..4096), level in 0u32..=9) {
            let codec = GzipCodec::new(level)?;
            let decoded = codec.decode(codec.encode(data.clone())?, Some(data.len()))?;
            prop_assert_eq!(decoded, data);
        }

        #[test]
        fn gzip_decode_of_garbage_does_not_panic(data in prop::collection::vec(any::<u8>(), 0..256)) {
            let _ = GzipCodec::new(5)?.decode(data, Some(100));
        }
    }
}
