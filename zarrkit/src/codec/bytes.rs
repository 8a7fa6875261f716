//! The `bytes` array-to-bytes codec: elements in C order, little or big endian.
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/bytes/index.html>
//! Names: v3 `bytes` (zarr-python 3.0 betas wrote `endian`).
//!
//! ```
//! # use zarrkit::codec::bytes::BytesConfig;
//! let config: BytesConfig = serde_json::from_str(r#"{ "endian": "big" }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use super::{ArrayToBytesCodec, ChunkRepr, Codec, CodecError, registry::parse_configuration};
use crate::metadata::{ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Byte order of multi-byte elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Endian {
    /// Least significant byte first.
    Little,
    /// Most significant byte first.
    Big,
}

impl Endian {
    /// The byte order of this machine.
    #[must_use]
    pub const fn native() -> Self {
        if cfg!(target_endian = "big") {
            Self::Big
        } else {
            Self::Little
        }
    }
}

/// The configuration of the `bytes` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BytesConfig {
    /// Required when the data type has more than one byte per element
    /// (v3 `bytes`, "Configuration parameters").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endian: Option<Endian>,
}

/// The `bytes` codec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BytesCodec {
    endian: Option<Endian>,
}

impl BytesCodec {
    /// A `bytes` codec with the given byte order (`None` only for 1-byte types).
    #[must_use]
    pub fn new(endian: Option<Endian>) -> Self {
        Self { endian }
    }

    /// A little-endian `bytes` codec, the usual choice.
    #[must_use]
    pub fn little() -> Self {
        Self::new(Some(Endian::Little))
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: BytesConfig = parse_configuration(metadata)?;
    Ok(Codec::ArrayToBytes(Arc::new(BytesCodec::new(
        config.endian,
    ))))
}

/// Reverses the bytes of each `unit`-sized group in place.
pub(crate) fn swap_bytes(data: &mut [u8], unit: usize) {
    match unit {
        0 | 1 => {}
        2 => data.chunks_exact_mut(2).for_each(|c| c.swap(0, 1)),
        4 => data.chunks_exact_mut(4).for_each(|c| {
            let v = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]).swap_bytes();
            c.copy_from_slice(&v.to_ne_bytes());
        }),
        8 => data.chunks_exact_mut(8).for_each(|c| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            c.copy_from_slice(&u64::from_ne_bytes(a).swap_bytes().to_ne_bytes());
        }),
        n => data.chunks_exact_mut(n).for_each(<[u8]>::reverse),
    }
}

impl BytesCodec {
    fn convert(&self, mut data: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        let unit = repr.data_type.endian_unit();
        match self.endian {
            Some(endian) if endian != Endian::native() => swap_bytes(&mut data, unit),
            Some(_) => {}
            None if unit > 1 => return Err(self.missing_endian(repr)),
            None => {}
        }
        Ok(data)
    }

    fn missing_endian(&self, repr: &ChunkRepr) -> CodecError {
        CodecError::Incompatible {
            codec: "bytes",
            what: format!(
                "`{}` without `endian` (required for multi-byte data types)",
                repr.data_type
            ),
        }
    }
}

impl ArrayToBytesCodec for BytesCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        if let Some(endian) = self.endian {
            let value = match endian {
                Endian::Little => "little",
                Endian::Big => "big",
            };
            configuration.insert("endian".into(), value.into());
        }
        ExtensionObject::with_configuration("bytes", configuration)
    }

    fn validate(&self, repr: &ChunkRepr) -> Result<(), CodecError> {
        if self.endian.is_none() && repr.data_type.endian_unit() > 1 {
            return Err(self.missing_endian(repr));
        }
        Ok(())
    }

    fn encode(&self, decoded: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        self.convert(decoded, repr)
    }

    fn decode_in_place(&self, data: &mut [u8], repr: &ChunkRepr) -> Option<Result<(), CodecError>> {
        let unit = repr.data_type.endian_unit();
        Some(match self.endian {
            Some(endian) if endian != Endian::native() => {
                swap_bytes(data, unit);
                Ok(())
            }
            None if unit > 1 => Err(self.missing_endian(repr)),
            _ => Ok(()),
        })
    }

    fn decode(&self, encoded: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        let expected = repr.size_bytes()?;
        if encoded.len() != expected {
            return Err(CodecError::WrongSize {
                expected,
                actual: encoded.len(),
            });
        }
        self.convert(encoded, repr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{DataType, FillValue};

    fn repr(data_type: DataType, shape: &[u64]) -> ChunkRepr {
        ChunkRepr {
            shape: shape.to_vec(),
            fill_value: FillValue::zero(&data_type),
            data_type,
        }
    }

    #[test]
    fn big_endian_swaps_each_element_and_complex_swaps_each_component() {
        let codec = BytesCodec::new(Some(Endian::Big));
        let r = repr(DataType::UInt32, &[2]);
        let data: Vec<u8> = [1u32, 0x0102_0304]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let encoded = codec.encode(data.clone(), &r).unwrap();
        assert_eq!(encoded, vec![0, 0, 0, 1, 1, 2, 3, 4]);
        assert_eq!(codec.decode(encoded, &r).unwrap(), data);

        let r = repr(DataType::Complex64, &[1]);
        let data: Vec<u8> = [1.0f32, -2.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let encoded = codec.encode(data, &r).unwrap();
        let mut expected = 1.0f32.to_be_bytes().to_vec();
        expected.extend((-2.0f32).to_be_bytes());
        assert_eq!(encoded, expected);
    }

    #[test]
    fn truncated_chunk_is_an_error() {
        let err = BytesCodec::little()
            .decode(vec![0; 7], &repr(DataType::UInt16, &[4]))
            .unwrap_err();
        assert_eq!(err.to_string(), "decoded to 7 bytes, expected 8");
    }

    #[test]
    fn endian_is_required_for_multi_byte_types_only() {
        let codec = BytesCodec::new(None);
        assert!(codec.validate(&repr(DataType::UInt8, &[4])).is_ok());
        assert!(codec.validate(&repr(DataType::RawBits(24), &[4])).is_ok());
        let err = codec.validate(&repr(DataType::Int16, &[4])).unwrap_err();
        assert!(err.to_string().contains("`int16` without `endian`"));
    }

    #[test]
    fn unknown_configuration_fields_are_rejected() {
        let mut config = JsonMap::new();
        config.insert("endianness".into(), "little".into());
        let err = create(&ExtensionObject::with_configuration("bytes", config)).unwrap_err();
        assert!(
            err.to_string().contains("unknown field `endianness`"),
            "{err}"
        );
    }
}
