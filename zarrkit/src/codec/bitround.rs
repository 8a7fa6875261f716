//! The `numcodecs.bitround` array-to-array codec: rounds floats to
//! `keepbits` mantissa bits (round half to even on the bits), as numcodecs' `BitRound`.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/filter/bitround.html>
//! Names: v3 `numcodecs.bitround` (as zarr-python 3.1 writes it); v2 filter id `bitround`.
//!
//! Lossy: decoding is the identity. The element type is unchanged.
//!
//! ```
//! # use zarrkit::codec::bitround::BitRoundConfig;
//! let config: BitRoundConfig = serde_json::from_str(r#"{ "keepbits": 10 }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use super::numpy_dtype::check_len;
use super::{ArrayToArrayCodec, ChunkRepr, Codec, CodecError, registry::parse_configuration};
use crate::metadata::{DataType, ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "numcodecs.bitround";

/// The configuration of the `numcodecs.bitround` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BitRoundConfig {
    /// The number of mantissa bits to keep (at most 10, 23 or 52 for
    /// `float16`, `float32`, `float64`).
    pub keepbits: u32,
}

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

/// Rounds the `width`-bit pattern `b` (sign-extended to `i64`), dropping `maskbits` bits.
pub(crate) fn round_bits(b: i64, maskbits: u32, width: u32) -> i64 {
    let mask = -1i64 << maskbits;
    let half_quantum1 = (1i64 << (maskbits - 1)) - 1;
    let sum = b.wrapping_add(((b >> maskbits) & 1) + half_quantum1);
    // Wrap to the element width, as NumPy's in-place add does.
    let wrapped = (sum << (64 - width)) >> (64 - width);
    wrapped & mask
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
        mut decoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let bits = self.mantissa_bits(&decoded_repr.data_type)?;
        let size = decoded_repr.data_type.size();
        check_len(&decoded, decoded_repr.size_bytes()? / size, size)?;
        if self.keepbits == bits {
            return Ok(decoded);
        }
        let maskbits = bits - self.keepbits;
        for element in decoded.chunks_exact_mut(size) {
            match size {
                2 => {
                    let b = i16::from_ne_bytes([element[0], element[1]]);
                    let r = round_bits(i64::from(b), maskbits, 16) as i16;
                    element.copy_from_slice(&r.to_ne_bytes());
                }
                4 => {
                    let b = i32::from_ne_bytes([element[0], element[1], element[2], element[3]]);
                    let r = round_bits(i64::from(b), maskbits, 32) as i32;
                    element.copy_from_slice(&r.to_ne_bytes());
                }
                _ => {
                    let mut raw = [0u8; 8];
                    raw.copy_from_slice(element);
                    let r = round_bits(i64::from_ne_bytes(raw), maskbits, 64);
                    element.copy_from_slice(&r.to_ne_bytes());
                }
            }
        }
        Ok(decoded)
    }

    fn decode(&self, encoded: Vec<u8>, decoded_repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        self.mantissa_bits(&decoded_repr.data_type)?;
        let size = decoded_repr.data_type.size();
        check_len(&encoded, decoded_repr.size_bytes()? / size, size)?;
        Ok(encoded)
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
        let out = c.encode(data, &repr(DataType::Float32, 4)).unwrap();
        let values: Vec<f32> = out
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
                .decode(vec![0; 3], &repr(DataType::Float32, 1))
                .is_err()
        );
    }

    proptest! {
        #[test]
        fn bitround_is_idempotent(values in prop::collection::vec(any::<f64>(), 0..32), keep in 0u32..52) {
            let c = BitRoundCodec::new(keep);
            let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let r = repr(DataType::Float64, values.len() as u64);
            let once = c.encode(data, &r)?;
            prop_assert_eq!(c.encode(once.clone(), &r)?, once);
        }
    }
}
