//! `zarrkit.struct_bytes`: the `bytes` codec for a struct whose fields are
//! stored in different byte orders.
//!
//! A v2 structured `dtype` gives each field its own byte order (NumPy
//! `[["a", "<i4"], ["b", ">f8"]]`); the `bytes` codec has one `endian` for
//! all of them. zarrkit reads such arrays through this codec, whose
//! configuration has one `endian` per byte-order unit of the record (see
//! [`DataType::endian_units`]). It exists only for v2 (format/v2.rs maps it
//! to and from the `dtype`); no v3 reader knows it, so migrating such an
//! array to v3 re-encodes it with `bytes` (zarr-python 3.1 stores structs
//! little-endian).
//!
//! ```
//! use zarrkit::codec::struct_bytes;
//! let codec = struct_bytes::metadata(&[false, true]);
//! assert_eq!(codec.name, struct_bytes::NAME);
//! ```

use crate::codec::CodecCapabilities;
use crate::codec::{ArrayToBytesCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::{DataType, ExtensionObject, JsonMap};
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;

/// The codec's name.
pub const NAME: &str = "zarrkit.struct_bytes";

/// `zarrkit.struct_bytes`: one byte order per endian unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructBytesCodec {
    /// `true` for a big-endian unit.
    big: Vec<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    endian: Vec<EndianName>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum EndianName {
    Little,
    Big,
}

/// The metadata of the codec for these per-unit byte orders (`true`:
/// big-endian).
#[must_use]
pub fn metadata(big: &[bool]) -> ExtensionObject {
    let mut configuration = JsonMap::new();
    let endian: Vec<Value> = big
        .iter()
        .map(|&b| Value::from(if b { "big" } else { "little" }))
        .collect();
    configuration.insert("endian".into(), Value::Array(endian));
    ExtensionObject::with_configuration(NAME, configuration)
}

/// The per-unit byte orders of the codec's metadata (`true`: big-endian),
/// or `None` if it is not this codec or is malformed.
#[must_use]
pub fn unit_orders(metadata: &ExtensionObject) -> Option<Vec<bool>> {
    if metadata.name != NAME {
        return None;
    }
    let config: Config = parse_configuration(metadata).ok()?;
    Some(
        config
            .endian
            .into_iter()
            .map(|e| e == EndianName::Big)
            .collect(),
    )
}

/// Builds the codec from its metadata.
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] unless the configuration is
/// `{"endian": [...]}` with `"little"` and `"big"` entries.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: Config = parse_configuration(metadata)?;
    Ok(Codec::ArrayToBytes(Arc::new(StructBytesCodec {
        big: config
            .endian
            .into_iter()
            .map(|e| e == EndianName::Big)
            .collect(),
    })))
}

impl StructBytesCodec {
    fn swap(&self, data: &mut [u8], repr: &ChunkRepr) -> Result<(), CodecError> {
        self.validate(repr)?;
        let size = repr.data_type.size();
        if !data.len().is_multiple_of(size.max(1)) {
            return Err(CodecError::WrongSize {
                expected: data.len() - data.len() % size.max(1),
                actual: data.len(),
            });
        }
        let native_big = cfg!(target_endian = "big");
        let units: Vec<(usize, usize)> = repr
            .data_type
            .endian_units()
            .into_iter()
            .zip(&self.big)
            .filter(|&(_, &big)| big != native_big)
            .map(|(unit, _)| unit)
            .collect();
        if units.is_empty() {
            return Ok(());
        }
        for record in data.chunks_exact_mut(size) {
            for &(offset, len) in &units {
                record[offset..offset + len].reverse();
            }
        }
        Ok(())
    }
}

impl ArrayToBytesCodec for StructBytesCodec {
    fn metadata(&self) -> ExtensionObject {
        metadata(&self.big)
    }

    fn validate(&self, repr: &ChunkRepr) -> Result<(), CodecError> {
        let units = match &repr.data_type {
            DataType::Struct(_) => repr.data_type.endian_units().len(),
            other => {
                return Err(CodecError::Incompatible {
                    codec: NAME,
                    what: format!("`{other}` (it encodes only structs)"),
                });
            }
        };
        if units != self.big.len() || repr.data_type.size() == 0 {
            return Err(CodecError::Incompatible {
                codec: NAME,
                what: format!(
                    "`{}` with {units} byte-order units (the configuration has {})",
                    repr.data_type,
                    self.big.len()
                ),
            });
        }
        Ok(())
    }

    crate::codec::fixed_array_to_bytes!(NAME);

    fn capabilities(&self) -> CodecCapabilities {
        CodecCapabilities {
            decodes_in_place: true,
            ..CodecCapabilities::default()
        }
    }

    fn decode_in_place(&self, data: &mut [u8], repr: &ChunkRepr) -> Result<(), CodecError> {
        self.swap(data, repr)
    }
}

impl StructBytesCodec {
    fn encode_bytes(&self, mut decoded: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        self.swap(&mut decoded, repr)?;
        Ok(decoded)
    }
    fn decode_bytes(&self, mut encoded: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        self.swap(&mut encoded, repr)?;
        Ok(encoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{FillValue, StructField};

    fn repr() -> ChunkRepr {
        let data_type = DataType::Struct(vec![
            StructField::new("a", DataType::Int16),
            StructField::new("s", DataType::FixedBytes(1)),
            StructField::new("b", DataType::UInt32),
        ]);
        ChunkRepr {
            shape: vec![2],
            fill_value: FillValue::zero(&data_type),
            data_type,
        }
    }

    #[test]
    fn each_unit_is_swapped_to_its_own_order() {
        let Codec::ArrayToBytes(codec) = create(&metadata(&[false, true])).unwrap() else {
            panic!("not an array-to-bytes codec");
        };
        let mut decoded = Vec::new();
        for (a, s, b) in [(1i16, b'x', 0x0102_0304u32), (-2, b'y', 5)] {
            decoded.extend(a.to_ne_bytes());
            decoded.push(s);
            decoded.extend(b.to_ne_bytes());
        }
        let encoded = codec.encode(decoded.clone().into(), &repr()).unwrap();
        assert_eq!(&encoded[..7], [1, 0, b'x', 1, 2, 3, 4]);
        assert_eq!(&encoded[7..], [0xfe, 0xff, b'y', 0, 0, 0, 5]);
        assert_eq!(codec.decode(encoded, &repr()).unwrap(), decoded);
        assert_eq!(unit_orders(&codec.metadata()), Some(vec![false, true]));
    }

    #[test]
    fn bad_configurations_and_types_are_errors() {
        let mut bad = metadata(&[true]);
        bad.configuration
            .as_mut()
            .unwrap()
            .insert("endian".into(), Value::from("big"));
        assert!(create(&bad).is_err());
        let Codec::ArrayToBytes(codec) = create(&metadata(&[true])).unwrap() else {
            panic!("not an array-to-bytes codec");
        };
        let err = codec.validate(&repr()).unwrap_err().to_string();
        assert!(err.contains("2 byte-order units"), "{err}");
        let mut int = repr();
        int.data_type = DataType::Int32;
        assert!(codec.validate(&int).is_err());
        let Codec::ArrayToBytes(codec) = create(&metadata(&[true, false])).unwrap() else {
            panic!("not an array-to-bytes codec");
        };
        assert!(codec.decode(vec![0; 8], &repr()).is_err());
    }
}
