//! The `packbits` array-to-bytes codec (v3 extension): stores bits
//! `first_bit..=last_bit` of each element (each part of a complex number),
//! packed with no gaps.
//!
//! Spec: <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/packbits>
//! Names: v3 `packbits`. (numcodecs' `bool`-only filter is
//! [`crate::codec::numcodecs::packbits`], `numcodecs.packbits`, an array-to-array codec.)
//!
//! Element `i` takes bits `[i * k, (i + 1) * k)` of the stream; stream bit
//! `j` is bit `j % 8` (counting from the least significant) of byte `j / 8`.
//! `bool` is one bit; other types are `8 * size` bits per component, their
//! little-endian value. Decoding sign-extends signed integers from
//! `last_bit` and zero-extends everything else. The configuration's schema
//! spells the options `start_byte`/`end_byte` and `start_bit`/`end_bit`;
//! those are read too, and the README's names are written.
//!
//! ```
//! # use zarrkit::codec::ext::packbits::PackBitsConfig;
//! let config: PackBitsConfig =
//!     serde_json::from_str(r#"{ "padding_encoding": "first_byte", "last_bit": 3 }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::{ArrayToBytesCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::{DataType, ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "packbits";

/// Where the number of padding bits is stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaddingEncoding {
    /// Not stored (the default).
    #[default]
    None,
    /// In a byte before the packed bits.
    #[serde(alias = "start_byte")]
    FirstByte,
    /// In a byte after the packed bits.
    #[serde(alias = "end_byte")]
    LastByte,
}

/// The configuration of the `packbits` codec.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackBitsConfig {
    /// Where the number of padding bits is stored.
    #[serde(default)]
    pub padding_encoding: PaddingEncoding,
    /// The first bit stored (default 0).
    #[serde(default, alias = "start_bit")]
    pub first_bit: Option<u32>,
    /// The last bit stored, inclusive (default the component's top bit).
    #[serde(default, alias = "end_bit")]
    pub last_bit: Option<u32>,
}

/// The `packbits` codec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackBitsCodec {
    config: PackBitsConfig,
}

/// How one data type is packed.
#[derive(Clone, Copy, Debug)]
struct Layout {
    /// Bytes per component in memory.
    size: usize,
    /// Bits per component (`N`).
    bits: u32,
    /// Whether decoding sign-extends.
    signed: bool,
    first: u32,
    /// Bits stored per component (`b`).
    stored: u32,
}

impl PackBitsCodec {
    /// A codec with `config`.
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if `last_bit` is below `first_bit`.
    pub fn new(config: PackBitsConfig) -> Result<Self, CodecError> {
        if let (Some(first), Some(last)) = (config.first_bit, config.last_bit)
            && last < first
        {
            return Err(CodecError::InvalidConfiguration {
                codec: NAME.into(),
                reason: format!("`last_bit` {last} is below `first_bit` {first}"),
            });
        }
        Ok(Self { config })
    }

    fn layout(&self, data_type: &DataType) -> Result<Layout, CodecError> {
        let (size, bits, signed) = match data_type {
            DataType::Bool => (1, 1, false),
            DataType::Int8 => (1, 8, true),
            DataType::Int16 => (2, 16, true),
            DataType::Int32 => (4, 32, true),
            DataType::Int64 => (8, 64, true),
            DataType::UInt8 => (1, 8, false),
            DataType::UInt16
            | DataType::Float16
            | DataType::BFloat16
            | DataType::ComplexFloat16
            | DataType::ComplexBFloat16 => (2, 16, false),
            DataType::UInt32 | DataType::Float32 | DataType::Complex64 => (4, 32, false),
            DataType::UInt64 | DataType::Float64 | DataType::Complex128 => (8, 64, false),
            // One byte in memory, its type's bits packed
            // (extensions/data-types/int4, "packbits": a 4-bit value);
            // decoded with the upper bits zero, which the types ignore.
            DataType::SmallInt(t) => (1, t.bits(), t.is_signed()),
            DataType::SmallFloat(t) => (1, t.bits(), false),
            other => {
                return Err(CodecError::Incompatible {
                    codec: NAME,
                    what: other.name().to_string(),
                });
            }
        };
        let first = self.config.first_bit.unwrap_or(0);
        let last = self.config.last_bit.unwrap_or(bits - 1);
        if last >= bits || first > last {
            return Err(CodecError::Incompatible {
                codec: NAME,
                what: format!(
                    "{} with bits {first}..={last} (it has {bits} bits per component)",
                    data_type.name()
                ),
            });
        }
        Ok(Layout {
            size,
            bits,
            signed,
            first,
            stored: last - first + 1,
        })
    }

    /// The number of components and the packed size in bits.
    fn sizes(&self, repr: &ChunkRepr) -> Result<(Layout, usize, usize), CodecError> {
        let layout = self.layout(&repr.data_type)?;
        let components = repr.size_bytes()? / layout.size;
        let total_bits = components
            .checked_mul(layout.stored as usize)
            .ok_or_else(|| CodecError::TooLarge {
                shape: repr.shape.clone(),
            })?;
        Ok((layout, components, total_bits))
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: PackBitsConfig = parse_configuration(metadata)?;
    Ok(Codec::ArrayToBytes(Arc::new(PackBitsCodec::new(config)?)))
}

/// Reads the component of `size` bytes (native order) as an unsigned value.
fn read_component(bytes: &[u8]) -> u64 {
    let mut raw = [0u8; 8];
    if cfg!(target_endian = "little") {
        raw[..bytes.len()].copy_from_slice(bytes);
    } else {
        raw[8 - bytes.len()..].copy_from_slice(bytes);
    }
    u64::from_ne_bytes(raw)
}

fn write_component(value: u64, out: &mut [u8]) {
    let raw = value.to_ne_bytes();
    let n = out.len();
    if cfg!(target_endian = "little") {
        out.copy_from_slice(&raw[..n]);
    } else {
        out.copy_from_slice(&raw[8 - n..]);
    }
}

fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

impl ArrayToBytesCodec for PackBitsCodec {
    /// The elements' bytes plus the padding byte: an element packs to at
    /// most its own bits.
    fn encoded_size_bound(&self, repr: &ChunkRepr) -> Option<usize> {
        repr.size_bytes().ok()?.checked_add(1)
    }

    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert(
            "padding_encoding".into(),
            serde_json::to_value(self.config.padding_encoding).unwrap_or_default(),
        );
        if let Some(first) = self.config.first_bit {
            configuration.insert("first_bit".into(), first.into());
        }
        if let Some(last) = self.config.last_bit {
            configuration.insert("last_bit".into(), last.into());
        }
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn validate(&self, repr: &ChunkRepr) -> Result<(), CodecError> {
        self.layout(&repr.data_type).map(|_| ())
    }

    crate::codec::fixed_array_to_bytes!(NAME);
}

impl PackBitsCodec {
    fn encode_bytes(&self, decoded: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        let (layout, components, total_bits) = self.sizes(repr)?;
        if decoded.len() != components * layout.size {
            return Err(CodecError::WrongSize {
                expected: components * layout.size,
                actual: decoded.len(),
            });
        }
        let padding = (8 - total_bits % 8) % 8;
        let mut out = Vec::with_capacity(total_bits.div_ceil(8) + 1);
        if self.config.padding_encoding == PaddingEncoding::FirstByte {
            out.push(padding as u8);
        }
        let mask = low_mask(layout.stored);
        // Bits waiting to be written, least significant first.
        let mut acc: u128 = 0;
        let mut pending = 0u32;
        for component in decoded.chunks_exact(layout.size) {
            let value = (read_component(component) >> layout.first) & mask;
            acc |= u128::from(value) << pending;
            pending += layout.stored;
            while pending >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                pending -= 8;
            }
        }
        if pending > 0 {
            out.push(acc as u8);
        }
        if self.config.padding_encoding == PaddingEncoding::LastByte {
            out.push(padding as u8);
        }
        Ok(out)
    }
    fn decode_bytes(&self, encoded: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        let (layout, components, total_bits) = self.sizes(repr)?;
        let padding = (8 - total_bits % 8) % 8;
        let packed = match self.config.padding_encoding {
            PaddingEncoding::None => &encoded[..],
            PaddingEncoding::FirstByte => encoded.split_first().map_or(&[][..], |(p, rest)| {
                if usize::from(*p) == padding {
                    rest
                } else {
                    &[]
                }
            }),
            PaddingEncoding::LastByte => encoded.split_last().map_or(&[][..], |(p, rest)| {
                if usize::from(*p) == padding {
                    rest
                } else {
                    &[]
                }
            }),
        };
        let expected = total_bits.div_ceil(8);
        if packed.len() != expected
            || (self.config.padding_encoding != PaddingEncoding::None && encoded.is_empty())
        {
            return Err(CodecError::Corrupt {
                codec: NAME,
                reason: format!(
                    "expected {expected} packed bytes with {padding} padding bits, got {} bytes",
                    encoded.len()
                ),
            });
        }
        let mut out = vec![0u8; components * layout.size];
        let mask = low_mask(layout.stored);
        let mut acc: u128 = 0;
        let mut available = 0u32;
        let mut bytes = packed.iter();
        for component in out.chunks_exact_mut(layout.size) {
            while available < layout.stored {
                // The length check above guarantees enough bytes.
                let byte = bytes.next().copied().unwrap_or(0);
                acc |= u128::from(byte) << available;
                available += 8;
            }
            let stored = (acc as u64) & mask;
            acc >>= layout.stored;
            available -= layout.stored;
            let top = layout.first + layout.stored; // one past `last_bit`
            let mut value = stored << layout.first;
            if layout.signed && top < 64 && (value >> (top - 1)) & 1 == 1 {
                value |= !low_mask(top);
            }
            write_component(value & low_mask(layout.bits), component);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::FillValue;
    use proptest::prelude::*;

    fn codec(config: serde_json::Value) -> Result<PackBitsCodec, CodecError> {
        let serde_json::Value::Object(map) = config else {
            unreachable!("test configurations are objects")
        };
        let metadata = ExtensionObject::with_configuration(NAME, map);
        create(&metadata)?;
        PackBitsCodec::new(parse_configuration(&metadata)?)
    }

    fn repr(data_type: DataType, n: u64) -> ChunkRepr {
        ChunkRepr {
            shape: vec![n],
            fill_value: FillValue::zero(&data_type),
            data_type,
        }
    }

    #[test]
    fn bools_pack_least_significant_bit_first() {
        let c = codec(serde_json::json!({})).unwrap();
        let data = vec![1, 0, 1, 1, 0, 0, 0, 0, 1, 1];
        let packed = c
            .encode(data.clone().into(), &repr(DataType::Bool, 10))
            .unwrap();
        assert_eq!(packed, [0b0000_1101, 0b0000_0011]);
        assert_eq!(c.decode(packed, &repr(DataType::Bool, 10)).unwrap(), data);
    }

    #[test]
    fn padding_bytes_count_the_padding_bits() {
        let data = vec![1, 0, 1];
        let first = codec(serde_json::json!({"padding_encoding": "first_byte"})).unwrap();
        assert_eq!(
            first
                .encode(data.clone().into(), &repr(DataType::Bool, 3))
                .unwrap(),
            [5, 0b101]
        );
        let last = codec(serde_json::json!({"padding_encoding": "end_byte"})).unwrap();
        let packed = last
            .encode(data.clone().into(), &repr(DataType::Bool, 3))
            .unwrap();
        assert_eq!(packed, [0b101, 5]);
        assert_eq!(last.decode(packed, &repr(DataType::Bool, 3)).unwrap(), data);
        // A wrong padding count or length is corrupt data, not a panic.
        assert!(
            last.decode(vec![0b101, 4], &repr(DataType::Bool, 3))
                .is_err()
        );
        assert!(last.decode(vec![], &repr(DataType::Bool, 3)).is_err());
        assert!(first.decode(vec![5], &repr(DataType::Bool, 3)).is_err());
    }

    #[test]
    fn a_bit_range_of_signed_integers_sign_extends_from_last_bit() {
        // Bits 1..=3 of each int8: 6 = 0b0110 -> 0b011; -4 = 0b1111_1100 -> 0b110.
        let c = codec(serde_json::json!({"first_bit": 1, "last_bit": 3})).unwrap();
        let data: Vec<u8> = [6i8, -4, 7].iter().map(|v| *v as u8).collect();
        let packed = c.encode(data.into(), &repr(DataType::Int8, 3)).unwrap();
        // 0b011, 0b110, 0b011 -> bits 011 011 110 (reading the stream from bit 0).
        assert_eq!(packed, [0b11_110_011, 0b0]);
        let decoded: Vec<i8> = c
            .decode(packed, &repr(DataType::Int8, 3))
            .unwrap()
            .into_fixed("test")
            .unwrap()
            .into_iter()
            .map(|b| b as i8)
            .collect();
        // Bit 0 is lost; -4 keeps its sign.
        assert_eq!(decoded, [6, -4, 6]);
    }

    #[test]
    fn four_bit_unsigned_values_share_bytes_little_end_first() {
        let c = codec(serde_json::json!({"last_bit": 3})).unwrap();
        let data: Vec<u8> = [0x1u16, 0xF, 0x2A]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let packed = c.encode(data.into(), &repr(DataType::UInt16, 3)).unwrap();
        assert_eq!(packed, [0xF1, 0x0A]);
        let decoded = c.decode(packed, &repr(DataType::UInt16, 3)).unwrap();
        let values: Vec<u16> = decoded
            .as_fixed("test")
            .unwrap()
            .chunks_exact(2)
            .map(|b| u16::from_ne_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(values, [0x1, 0xF, 0xA]);
    }

    #[test]
    fn bad_configurations_and_types_are_refused() {
        let err = codec(serde_json::json!({"first_bit": 3, "last_bit": 2})).unwrap_err();
        assert!(err.to_string().contains("`packbits`"), "{err}");
        assert!(codec(serde_json::json!({"padding_encoding": "middle"})).is_err());
        assert!(codec(serde_json::json!({"bits": 2})).is_err());
        let c = codec(serde_json::json!({"last_bit": 8})).unwrap();
        assert!(c.validate(&repr(DataType::UInt8, 1)).is_err());
        assert!(c.validate(&repr(DataType::UInt16, 1)).is_ok());
        assert!(c.validate(&repr(DataType::RawBits(16), 1)).is_err());
        // complex_bfloat16 is two 16-bit components.
        assert!(c.validate(&repr(DataType::ComplexBFloat16, 1)).is_ok());
    }

    #[test]
    fn metadata_is_canonical() {
        let c =
            codec(serde_json::json!({"padding_encoding": "start_byte", "start_bit": 2})).unwrap();
        assert_eq!(
            serde_json::Value::Object(c.metadata().configuration_or_empty()),
            serde_json::json!({"padding_encoding": "first_byte", "first_bit": 2})
        );
    }

    proptest! {
        #[test]
        fn full_width_packing_round_trips_complex_and_signed(
            values in prop::collection::vec(any::<i64>(), 0..16),
            floats in prop::collection::vec(any::<f32>(), 0..8),
        ) {
            let c = codec(serde_json::json!({"padding_encoding": "last_byte"})).unwrap();
            let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let r = repr(DataType::Int64, values.len() as u64);
            let packed = c.encode(data.clone().into(), &r)?;
            prop_assert_eq!(c.decode(packed, &r)?, data);
            let data: Vec<u8> = floats.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let r = repr(DataType::Complex64, (floats.len() / 2) as u64);
            let data = data[..floats.len() / 2 * 8].to_vec();
            let packed = c.encode(data.clone().into(), &r)?;
            prop_assert_eq!(c.decode(packed, &r)?, data);
        }

        #[test]
        fn narrow_signed_values_round_trip(values in prop::collection::vec(-8i32..8, 0..40)) {
            let c = codec(serde_json::json!({"last_bit": 3})).unwrap();
            let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let r = repr(DataType::Int32, values.len() as u64);
            let packed = c.encode(data.clone().into(), &r)?;
            prop_assert_eq!(packed.len(), (values.len() * 4).div_ceil(8));
            prop_assert_eq!(c.decode(packed, &r)?, data);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..20), n in 0u64..20) {
            let c = codec(serde_json::json!({"padding_encoding": "first_byte", "first_bit": 1, "last_bit": 5})).unwrap();
            let _ = c.decode(bytes, &repr(DataType::Int16, n));
        }
    }
}
