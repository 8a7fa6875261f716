//! The `bitround` array-to-array codec in its two flavours, which round
//! floats identically:
//!
//! - the registered v3 extension `bitround` (this module): rounds floats to
//!   `keepbits` mantissa bits and integers to `keepbits` significant bits;
//! - numcodecs' float-only `BitRound` ([`numcodecs_bitround`]), v3
//!   `numcodecs.bitround` (as zarr-python 3.1 writes it, and the extension's
//!   deprecated alias), v2 filter id `bitround`.
//!
//! Spec: <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/bitround>,
//! <https://numcodecs.readthedocs.io/en/stable/filter/bitround.html>.
//!
//! Lossy: decoding is the identity. The element type is unchanged. Floats
//! (and both parts of complex numbers) round half to even on the mantissa
//! bits, as numcodecs does (`float16`, `bfloat16`, `float32`, `float64` and
//! their complex types; numcodecs' flavour only `float16/32/64`). Integers
//! round their magnitude half to even, keeping `keepbits` bits from the most
//! significant set bit, and keep their sign (`numpy.datetime64`/`timedelta64`
//! as `int64`); a rounding that would leave the type's range rounds down
//! instead.
//!
//! ```
//! # use zarrkit::codec::ext::bitround::BitRoundConfig;
//! let config: BitRoundConfig = serde_json::from_str(r#"{ "keepbits": 10 }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::numpy_dtype::check_len;
use crate::codec::{ArrayToArrayCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::{DataType, ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "bitround";

/// The configuration of the `bitround` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BitRoundConfig {
    /// The number of bits to keep: mantissa bits for floats, significant
    /// bits for integers. At least 1.
    pub keepbits: u32,
}

/// The `bitround` codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitRoundCodec {
    keepbits: u32,
}

/// How the codec treats one data type.
#[derive(Clone, Copy)]
enum Kind {
    /// Floats with this many mantissa bits and this component width in bytes.
    Float { mantissa: u32, width: usize },
    /// Integers of this width in bytes.
    Int { width: usize, signed: bool },
}

impl BitRoundCodec {
    /// A codec keeping `keepbits` bits.
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if `keepbits` is 0.
    pub fn new(keepbits: u32) -> Result<Self, CodecError> {
        if keepbits == 0 {
            return Err(CodecError::InvalidConfiguration {
                codec: NAME.into(),
                reason: "`keepbits` must be at least 1".into(),
            });
        }
        Ok(Self { keepbits })
    }

    fn kind(data_type: &DataType) -> Result<Kind, CodecError> {
        let float = |mantissa, width| Ok(Kind::Float { mantissa, width });
        let int = |width, signed| Ok(Kind::Int { width, signed });
        match data_type {
            DataType::Float16 | DataType::ComplexFloat16 => float(10, 2),
            DataType::BFloat16 | DataType::ComplexBFloat16 => float(7, 2),
            DataType::Float32 | DataType::Complex64 => float(23, 4),
            DataType::Float64 | DataType::Complex128 => float(52, 8),
            DataType::Int8 => int(1, true),
            DataType::Int16 => int(2, true),
            DataType::Int32 => int(4, true),
            // Spec: datetimes and timedeltas round as `int64`.
            DataType::Int64
            | DataType::NumpyDateTime64 { .. }
            | DataType::NumpyTimeDelta64 { .. } => int(8, true),
            DataType::UInt8 => int(1, false),
            DataType::UInt16 => int(2, false),
            DataType::UInt32 => int(4, false),
            DataType::UInt64 => int(8, false),
            other => Err(CodecError::Incompatible {
                codec: NAME,
                what: format!("{} (only integer, float and complex types)", other.name()),
            }),
        }
    }
}

/// Rounds an unsigned magnitude to `keepbits` significant bits, half to
/// even; `max` is the largest magnitude the result may take.
fn round_magnitude(m: u64, keepbits: u32, max: u64) -> u64 {
    let significant = 64 - m.leading_zeros();
    if significant <= keepbits {
        return m;
    }
    let maskbits = significant - keepbits;
    let mask = u64::MAX << maskbits;
    let half_quantum1 = (1u64 << (maskbits - 1)) - 1;
    let rounded = u128::from(m) + u128::from((m >> maskbits) & 1) + u128::from(half_quantum1);
    match u64::try_from(rounded) {
        Ok(r) if r & mask <= max => r & mask,
        _ => m & mask,
    }
}

/// Rounds one integer of `width` bytes (native order) in place.
fn round_int(element: &mut [u8], width: usize, signed: bool, keepbits: u32) {
    let bits = 8 * width as u32;
    let mut raw = [0u8; 8];
    let (lo, hi) = if cfg!(target_endian = "little") {
        (0, width)
    } else {
        (8 - width, 8)
    };
    raw[lo..hi].copy_from_slice(element);
    let unsigned = u64::from_ne_bytes(raw);
    let out = if signed {
        // Sign-extend, round the magnitude, restore the sign.
        let v = ((unsigned << (64 - bits)) as i64) >> (64 - bits);
        let max = (1u64 << (bits - 1)) - u64::from(v >= 0);
        let r = round_magnitude(v.unsigned_abs(), keepbits, max);
        let value = if v < 0 {
            (r as i64).wrapping_neg()
        } else {
            r as i64
        };
        value as u64
    } else {
        let max = u64::MAX >> (64 - bits);
        round_magnitude(unsigned, keepbits, max)
    };
    element.copy_from_slice(&out.to_ne_bytes()[lo..hi]);
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: BitRoundConfig = parse_configuration(metadata)?;
    Ok(Codec::ArrayToArray(Arc::new(BitRoundCodec::new(
        config.keepbits,
    )?)))
}

impl ArrayToArrayCodec for BitRoundCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert("keepbits".into(), self.keepbits.into());
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn encoded_repr(&self, decoded: &ChunkRepr) -> Result<ChunkRepr, CodecError> {
        Self::kind(&decoded.data_type)?;
        Ok(decoded.clone())
    }

    crate::codec::fixed_array_to_array!(NAME);
}

impl BitRoundCodec {
    fn encode_bytes(
        &self,
        mut decoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let kind = Self::kind(&decoded_repr.data_type)?;
        let size = decoded_repr.data_type.size();
        check_len(&decoded, decoded_repr.size_bytes()? / size, size)?;
        match kind {
            Kind::Float { mantissa, width } => {
                round_floats(&mut decoded, width, mantissa, self.keepbits);
            }
            Kind::Int { width, signed } => {
                for element in decoded.chunks_exact_mut(width) {
                    round_int(element, width, signed, self.keepbits);
                }
            }
        }
        Ok(decoded)
    }
    fn decode_bytes(
        &self,
        encoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        Self::kind(&decoded_repr.data_type)?;
        let size = decoded_repr.data_type.size();
        check_len(&encoded, decoded_repr.size_bytes()? / size, size)?;
        Ok(encoded)
    }
}

/// Rounds the `width`-bit pattern `b` (sign-extended to `i64`), dropping `maskbits` bits.
fn round_bits(b: i64, maskbits: u32, width: u32) -> i64 {
    let mask = -1i64 << maskbits;
    let half_quantum1 = (1i64 << (maskbits - 1)) - 1;
    let sum = b.wrapping_add(((b >> maskbits) & 1) + half_quantum1);
    // Wrap to the element width, as NumPy's in-place add does.
    let wrapped = (sum << (64 - width)) >> (64 - width);
    wrapped & mask
}

/// Rounds each float component of `width` bytes (native order) in `bytes`
/// from `mantissa` to `keepbits` mantissa bits, half to even on the bits:
/// the rounding both flavours share (numcodecs' `BitRound`).
fn round_floats(bytes: &mut [u8], width: usize, mantissa: u32, keepbits: u32) {
    if keepbits >= mantissa {
        return;
    }
    let maskbits = mantissa - keepbits;
    // One loop per width over fixed-size integers, which the compiler
    // vectorises (a loop over byte ranges of any width ran ~70 times slower).
    match width {
        2 => {
            for component in bytes.chunks_exact_mut(2) {
                let b = i16::from_ne_bytes([component[0], component[1]]);
                let r = round_bits(i64::from(b), maskbits, 16) as i16;
                component.copy_from_slice(&r.to_ne_bytes());
            }
        }
        4 => {
            for component in bytes.chunks_exact_mut(4) {
                let b =
                    i32::from_ne_bytes([component[0], component[1], component[2], component[3]]);
                let r = round_bits(i64::from(b), maskbits, 32) as i32;
                component.copy_from_slice(&r.to_ne_bytes());
            }
        }
        _ => {
            for component in bytes.chunks_exact_mut(8) {
                let mut raw = [0u8; 8];
                raw.copy_from_slice(component);
                let r = round_bits(i64::from_ne_bytes(raw), maskbits, 64);
                component.copy_from_slice(&r.to_ne_bytes());
            }
        }
    }
}

/// numcodecs' float-only `BitRound`: v3 `numcodecs.bitround`, v2 filter id
/// `bitround`. Also at its old path, `codec::bitround`.
///
/// ```
/// # use zarrkit::codec::bitround::BitRoundConfig;
/// let config: BitRoundConfig = serde_json::from_str(r#"{ "keepbits": 10 }"#)?;
/// # Ok::<(), serde_json::Error>(())
/// ```
pub mod numcodecs_bitround {
    use super::{
        Arc, ArrayToArrayCodec, ChunkRepr, Codec, CodecError, DataType, ExtensionObject, JsonMap,
        check_len, parse_configuration,
    };
    use crate::codec::ChunkData;

    /// The configuration: the same `keepbits` as the v3 extension's, here
    /// at most 10, 23 or 52 for `float16`, `float32`, `float64` (and 0
    /// allowed).
    pub use super::BitRoundConfig;

    /// The codec's name in v3 metadata.
    pub const NAME: &str = "numcodecs.bitround";

    /// The `numcodecs.bitround` codec.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct BitRoundCodec {
        keepbits: u32,
    }

    impl BitRoundCodec {
        /// A codec keeping `keepbits` mantissa bits.
        #[must_use]
        pub fn new(keepbits: u32) -> Self {
            Self { keepbits }
        }

        /// The mantissa bits of `data_type`, or an error if it is not a float type
        /// or has fewer than `keepbits`.
        fn mantissa_bits(&self, data_type: &DataType) -> Result<u32, CodecError> {
            let bits = match data_type {
                DataType::Float16 => 10,
                DataType::Float32 => 23,
                DataType::Float64 => 52,
                other => {
                    return Err(CodecError::Incompatible {
                        codec: NAME,
                        what: format!("{} (only float16, float32 and float64)", other.name()),
                    });
                }
            };
            if self.keepbits > bits {
                return Err(CodecError::Incompatible {
                    codec: NAME,
                    what: format!(
                        "{} with `keepbits` {} (at most {bits})",
                        data_type.name(),
                        self.keepbits
                    ),
                });
            }
            Ok(bits)
        }
    }

    /// Builds the codec from its metadata (the registry's constructor).
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
    pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
        let config: BitRoundConfig = parse_configuration(metadata)?;
        Ok(Codec::ArrayToArray(Arc::new(BitRoundCodec::new(
            config.keepbits,
        ))))
    }

    impl ArrayToArrayCodec for BitRoundCodec {
        fn metadata(&self) -> ExtensionObject {
            let mut configuration = JsonMap::new();
            configuration.insert("keepbits".into(), self.keepbits.into());
            ExtensionObject::with_configuration(NAME, configuration)
        }

        fn encoded_repr(&self, decoded: &ChunkRepr) -> Result<ChunkRepr, CodecError> {
            self.mantissa_bits(&decoded.data_type)?;
            Ok(decoded.clone())
        }

        fn encode(
            &self,
            decoded: ChunkData<'_>,
            decoded_repr: &ChunkRepr,
        ) -> Result<ChunkData<'static>, CodecError> {
            let mut decoded = decoded.into_fixed(NAME)?;
            let bits = self.mantissa_bits(&decoded_repr.data_type)?;
            let size = decoded_repr.data_type.size();
            check_len(&decoded, decoded_repr.size_bytes()? / size, size)?;
            super::round_floats(&mut decoded, size, bits, self.keepbits);
            Ok(decoded.into())
        }

        fn decode(
            &self,
            encoded: ChunkData<'_>,
            decoded_repr: &ChunkRepr,
        ) -> Result<ChunkData<'static>, CodecError> {
            let encoded = encoded.into_fixed(NAME)?;
            self.mantissa_bits(&decoded_repr.data_type)?;
            let size = decoded_repr.data_type.size();
            check_len(&encoded, decoded_repr.size_bytes()? / size, size)?;
            Ok(encoded.into())
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::metadata::FillValue;
        use proptest::prelude::*;

        fn repr(data_type: DataType, n: u64) -> ChunkRepr {
            ChunkRepr {
                shape: vec![n],
                fill_value: FillValue::zero(&data_type),
                data_type,
            }
        }

        #[test]
        fn keeping_one_bit_rounds_to_the_nearest_half_step() {
            // With 1 mantissa bit, floats are 1.0, 1.5, 2.0, 3.0, ...
            let c = BitRoundCodec::new(1);
            let data: Vec<u8> = [1.2f32, 1.3, 1.75, -2.9]
                .iter()
                .flat_map(|v| v.to_ne_bytes())
                .collect();
            let out = c.encode(data.into(), &repr(DataType::Float32, 4)).unwrap();
            let values: Vec<f32> = out
                .as_fixed("test")
                .unwrap()
                .chunks_exact(4)
                .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
                .collect();
            assert_eq!(values, [1.0, 1.5, 2.0, -3.0]);
        }

        #[test]
        fn integers_and_too_many_bits_are_refused() {
            assert!(
                BitRoundCodec::new(3)
                    .encoded_repr(&repr(DataType::Int32, 1))
                    .is_err()
            );
            assert!(
                BitRoundCodec::new(24)
                    .encoded_repr(&repr(DataType::Float32, 1))
                    .is_err()
            );
            assert!(
                BitRoundCodec::new(3)
                    .decode(vec![0; 3].into(), &repr(DataType::Float32, 1))
                    .is_err()
            );
        }

        proptest! {
            #[test]
            fn bitround_is_idempotent(values in prop::collection::vec(any::<f64>(), 0..32), keep in 0u32..52) {
                let c = BitRoundCodec::new(keep);
                let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
                let r = repr(DataType::Float64, values.len() as u64);
                let once = c.encode(data.into(), &r)?;
                prop_assert_eq!(c.encode(once.clone(), &r)?, once);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::FillValue;
    use proptest::prelude::*;

    fn repr(data_type: DataType, n: u64) -> ChunkRepr {
        ChunkRepr {
            shape: vec![n],
            fill_value: FillValue::zero(&data_type),
            data_type,
        }
    }

    fn codec(keepbits: u32) -> BitRoundCodec {
        BitRoundCodec::new(keepbits).unwrap()
    }

    #[test]
    fn floats_keep_one_mantissa_bit_like_numcodecs() {
        let data: Vec<u8> = [1.2f32, 1.3, 1.75, -2.9]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let out = codec(1)
            .encode(data.into(), &repr(DataType::Float32, 4))
            .unwrap();
        let values: Vec<f32> = out
            .as_fixed("test")
            .unwrap()
            .chunks_exact(4)
            .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(values, [1.0, 1.5, 2.0, -3.0]);
    }

    #[test]
    fn bfloat16_keeps_seven_mantissa_bits_at_most() {
        // bfloat16 1.3 is 0x3FA6 (mantissa 0b0100110); one bit kept: 1.5 (0x3FC0).
        let c = codec(1);
        let out = c
            .encode(
                0x3FA6u16.to_ne_bytes().to_vec().into(),
                &repr(DataType::BFloat16, 1),
            )
            .unwrap();
        assert_eq!(
            u16::from_ne_bytes([
                out.as_fixed("test").unwrap()[0],
                out.as_fixed("test").unwrap()[1]
            ]),
            0x3FC0
        );
    }

    #[test]
    fn complex_numbers_round_both_parts() {
        let data: Vec<u8> = [1.3f64, -2.9]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let out = codec(1)
            .encode(data.into(), &repr(DataType::Complex128, 1))
            .unwrap();
        let values: Vec<f64> = out
            .as_fixed("test")
            .unwrap()
            .chunks_exact(8)
            .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(values, [1.5, -3.0]);
    }

    #[test]
    fn integers_round_from_the_most_significant_set_bit() {
        // 0b1011_0110 (182) with 3 bits kept: 0b1011_0110 -> 0b1100_0000 (192).
        // 0b101 (5) with 3 bits kept is exact. 0b1101 (13) with 3 bits: 12 or 14,
        // half to even -> 0b1100 (12). 255 would round to 256: rounds down to 224.
        let c = codec(3);
        let out = c
            .encode(vec![182, 5, 13, 255, 0].into(), &repr(DataType::UInt8, 5))
            .unwrap();
        assert_eq!(out, [192, 5, 12, 224, 0]);
        let data: Vec<u8> = [-182i16, 182, 1000, -32768]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let out = c.encode(data.into(), &repr(DataType::Int16, 4)).unwrap();
        let values: Vec<i16> = out
            .as_fixed("test")
            .unwrap()
            .chunks_exact(2)
            .map(|b| i16::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        // 1000 = 0b11_1110_1000 -> 0b100_0000_0000 (1024).
        assert_eq!(values, [-192, 192, 1024, -32768]);
    }

    #[test]
    fn zero_keepbits_and_other_types_are_refused() {
        let err = BitRoundCodec::new(0).unwrap_err();
        assert!(err.to_string().contains("`bitround`"), "{err}");
        assert!(codec(3).encoded_repr(&repr(DataType::Bool, 1)).is_err());
        assert!(
            codec(3)
                .decode(vec![0; 3].into(), &repr(DataType::Float32, 1))
                .is_err()
        );
        let bad = ExtensionObject::with_configuration(NAME, JsonMap::new());
        assert!(create(&bad).is_err());
    }

    #[test]
    fn metadata_is_canonical() {
        let json = serde_json::Value::Object(codec(10).metadata().configuration_or_empty());
        assert_eq!(json, serde_json::json!({"keepbits": 10}));
    }

    proptest! {
        #[test]
        fn integer_rounding_is_idempotent_and_close(values in prop::collection::vec(any::<i32>(), 0..32), keep in 1u32..32) {
            let c = codec(keep);
            let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let r = repr(DataType::Int32, values.len() as u64);
            let once = c.encode(data.into(), &r)?;
            prop_assert_eq!(c.encode(once.clone(), &r)?, once.clone());
            for (v, b) in values.iter().zip(once.as_fixed("test").unwrap().chunks_exact(4)) {
                let rounded = i32::from_ne_bytes(b.try_into().unwrap());
                let significant = 32 - v.unsigned_abs().leading_zeros();
                let quantum = 1i64 << significant.saturating_sub(keep);
                prop_assert!((i64::from(*v) - i64::from(rounded)).abs() < quantum);
                prop_assert!(rounded == 0 || v.signum() == rounded.signum());
            }
        }
    }
}
