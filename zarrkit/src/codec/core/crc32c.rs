//! The `crc32c` bytes-to-bytes codec: appends a CRC-32C (Castagnoli) checksum.
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/crc32c/index.html>
//! Names: v3 `crc32c`; numcodecs `crc32c`.
//!
//! ```
//! # use zarrkit::codec::crc32c::Crc32cConfig;
//! let config: Crc32cConfig = serde_json::from_str(r#"{}"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::{BytesToBytesCodec, Codec, CodecError, parse_configuration};
use crate::metadata::ExtensionObject;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The size of the stored checksum in bytes.
const CHECKSUM_SIZE: usize = 4;

/// The configuration of the `crc32c` codec: it has no parameters (v3
/// `crc32c`, "Configuration parameters"), so only `{}` or no configuration
/// at all is accepted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Crc32cConfig {}

/// The `crc32c` codec.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Crc32cCodec;

impl Crc32cCodec {
    /// A `crc32c` codec.
    #[must_use]
    pub fn new() -> Self {
        Self
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration has any field.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let Crc32cConfig {} = parse_configuration(metadata)?;
    Ok(Codec::BytesToBytes(Arc::new(Crc32cCodec::new())))
}

impl BytesToBytesCodec for Crc32cCodec {
    fn metadata(&self) -> ExtensionObject {
        ExtensionObject::new("crc32c")
    }

    fn encode(&self, mut decoded: Vec<u8>) -> Result<Vec<u8>, CodecError> {
        // v3 `crc32c`, "Format and algorithm": the input unchanged, then the
        // checksum as a little-endian u32.
        let checksum = crc32c::crc32c(&decoded);
        decoded.extend_from_slice(&checksum.to_le_bytes());
        Ok(decoded)
    }

    fn decode(
        &self,
        mut encoded: Vec<u8>,
        _decoded_size: Option<usize>,
    ) -> Result<Vec<u8>, CodecError> {
        let Some(data_len) = encoded.len().checked_sub(CHECKSUM_SIZE) else {
            return Err(CodecError::Corrupt {
                codec: "crc32c",
                reason: format!(
                    "{} bytes is shorter than the {CHECKSUM_SIZE}-byte checksum",
                    encoded.len()
                ),
            });
        };
        let mut stored = [0u8; CHECKSUM_SIZE];
        stored.copy_from_slice(&encoded[data_len..]);
        let stored = u32::from_le_bytes(stored);
        let computed = crc32c::crc32c(&encoded[..data_len]);
        if stored != computed {
            return Err(CodecError::ChecksumMismatch {
                codec: "crc32c",
                stored,
                computed,
            });
        }
        encoded.truncate(data_len);
        Ok(encoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::JsonMap;
    use proptest::prelude::*;

    #[test]
    fn checksum_of_check_string_is_appended_little_endian() {
        // The standard CRC-32C check value (RFC 3720, appendix B.4).
        let encoded = Crc32cCodec.encode(b"123456789".to_vec()).unwrap();
        assert_eq!(&encoded[..9], b"123456789");
        assert_eq!(&encoded[9..], &0xE306_9283u32.to_le_bytes());
        assert_eq!(encoded[9..], [0x83, 0x92, 0x06, 0xE3]);
    }

    #[test]
    fn empty_input_encodes_to_the_checksum_of_nothing() {
        let encoded = Crc32cCodec.encode(Vec::new()).unwrap();
        assert_eq!(encoded, [0, 0, 0, 0]);
        assert_eq!(Crc32cCodec.decode(encoded, Some(0)).unwrap(), b"");
    }

    #[test]
    fn flipped_bit_is_a_checksum_mismatch_naming_both_values() {
        let mut encoded = Crc32cCodec.encode(b"123456789".to_vec()).unwrap();
        encoded[0] ^= 1;
        let err = Crc32cCodec.decode(encoded, None).unwrap_err();
        let computed = crc32c::crc32c(b"023456789");
        assert!(matches!(
            err,
            CodecError::ChecksumMismatch { codec: "crc32c", stored: 0xE306_9283, computed: c }
                if c == computed
        ));
        assert_eq!(
            err.to_string(),
            format!("crc32c checksum mismatch (stored 0xe3069283, computed {computed:#010x})")
        );
    }

    #[test]
    fn input_shorter_than_the_checksum_is_corrupt() {
        for len in 0..CHECKSUM_SIZE {
            let err = Crc32cCodec.decode(vec![0; len], None).unwrap_err();
            assert!(matches!(
                err,
                CodecError::Corrupt {
                    codec: "crc32c",
                    ..
                }
            ));
            assert!(
                err.to_string().starts_with("crc32c data is corrupt"),
                "{err}"
            );
        }
    }

    #[test]
    fn absent_or_empty_configuration_is_accepted_and_fields_are_rejected() {
        assert!(create(&ExtensionObject::new("crc32c")).is_ok());
        assert!(
            create(&ExtensionObject::with_configuration(
                "crc32c",
                JsonMap::new()
            ))
            .is_ok()
        );
        let mut config = JsonMap::new();
        config.insert("seed".into(), 1.into());
        let err = create(&ExtensionObject::with_configuration("crc32c", config)).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("codec `crc32c`"), "{message}");
        assert!(message.contains("unknown field `seed`"), "{message}");
    }

    #[test]
    fn metadata_has_no_configuration() {
        let metadata = Crc32cCodec.metadata();
        assert_eq!(metadata.name, "crc32c");
        assert_eq!(metadata.configuration, None);
    }

    proptest! {
        #[test]
        fn crc32c_round_trips(data in prop::collection::vec(any::<u8>(), 0..4096)) {
            let encoded = Crc32cCodec.encode(data.clone())?;
            prop_assert_eq!(encoded.len(), data.len() + CHECKSUM_SIZE);
            let decoded = Crc32cCodec.decode(encoded, Some(data.len()))?;
            prop_assert_eq!(decoded, data);
        }

        #[test]
        fn any_single_bit_flip_is_detected(
            data in prop::collection::vec(any::<u8>(), 0..512),
            bit in any::<prop::sample::Index>(),
        ) {
            let mut encoded = Crc32cCodec.encode(data)?;
            let bit = bit.index(encoded.len() * 8);
            encoded[bit / 8] ^= 1 << (bit % 8);
            prop_assert!(Crc32cCodec.decode(encoded, None).is_err());
        }
    }
}
