//! The `numcodecs.quantize` array-to-array codec: keeps `digits` decimal
//! digits of precision by rounding to a power-of-two grid, as numcodecs' `Quantize`.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/filter/quantize.html>
//! Names: v3 `numcodecs.quantize` (as zarr-python 3.1 writes it); v2 filter id `quantize`.
//!
//! The grid is `2^-bits` with `bits = ceil(log2(10^digits))` (numcodecs'
//! derivation); values round half to even in `dtype`. Decoding only casts
//! `astype` back to `dtype`.
//!
//! ```
//! # use zarrkit::codec::quantize::QuantizeConfig;
//! let config: QuantizeConfig = serde_json::from_str(r#"{ "digits": 1, "dtype": "<f8" }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::numpy_dtype::{
    Direction, Num, NumpyDtype, check_type, convert_chunk, is_float, repr_as, round_to,
};
use crate::codec::{ArrayToArrayCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::{ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "numcodecs.quantize";

/// The configuration of the `numcodecs.quantize` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuantizeConfig {
    /// The number of decimal digits to keep.
    pub digits: i32,
    /// The decoded element type, a float NumPy type string.
    pub dtype: String,
    /// The encoded element type (a float type); absent or `null` means `dtype`.
    #[serde(default)]
    pub astype: Option<String>,
}

/// The `numcodecs.quantize` codec.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizeCodec {
    digits: i32,
    dtype: NumpyDtype,
    astype: NumpyDtype,
    scale: f64,
}

impl QuantizeCodec {
    /// A codec keeping `digits` decimal digits of `dtype` values, stored as `astype`.
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if a type is not a float type
    /// or `digits` is out of `-300..=300`.
    pub fn new(digits: i32, dtype: NumpyDtype, astype: NumpyDtype) -> Result<Self, CodecError> {
        for (field, t) in [("dtype", &dtype), ("astype", &astype)] {
            if !is_float(&t.data_type) {
                return Err(CodecError::InvalidConfiguration {
                    codec: NAME.to_string(),
                    reason: format!("`{field}` is {}, expected a float type", t.to_type_string()),
                });
            }
        }
        if !(-300..=300).contains(&digits) {
            return Err(CodecError::InvalidConfiguration {
                codec: NAME.to_string(),
                reason: format!("`digits` is {digits}, expected -300 to 300"),
            });
        }
        // numcodecs: precision 10^-digits; its exponent rounded away from
        // zero; bits = ceil(log2(10^-exp)).
        let precision = 10f64.powf(-f64::from(digits));
        let exp = precision.log10();
        let exp = if exp < 0.0 { exp.floor() } else { exp.ceil() };
        let bits = 10f64.powf(-exp).log2().ceil();
        Ok(Self {
            digits,
            dtype,
            astype,
            scale: 2f64.powf(bits),
        })
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: QuantizeConfig = parse_configuration(metadata)?;
    let dtype = NumpyDtype::parse(NAME, "dtype", &config.dtype)?;
    let astype = match &config.astype {
        Some(text) => NumpyDtype::parse(NAME, "astype", text)?,
        None => dtype.clone(),
    };
    Ok(Codec::ArrayToArray(Arc::new(QuantizeCodec::new(
        config.digits,
        dtype,
        astype,
    )?)))
}

impl ArrayToArrayCodec for QuantizeCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert("digits".into(), self.digits.into());
        configuration.insert("dtype".into(), self.dtype.to_type_string().into());
        configuration.insert("astype".into(), self.astype.to_type_string().into());
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn encoded_repr(&self, decoded: &ChunkRepr) -> Result<ChunkRepr, CodecError> {
        check_type(NAME, &decoded.data_type, &self.dtype)?;
        Ok(repr_as(decoded, self.astype.data_type.clone()))
    }

    crate::codec::fixed_array_to_array!(NAME);
}

impl QuantizeCodec {
    fn encode_bytes(
        &self,
        decoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let from = &self.dtype.data_type;
        let scale = round_to(from, self.scale);
        convert_chunk(
            NAME,
            &decoded,
            decoded_repr,
            (&self.dtype, &self.astype),
            Direction::Encode,
            |x| {
                let scaled = round_to(from, scale * x.to_f64()).round_ties_even();
                Num::Float(round_to(from, scaled / scale))
            },
        )
    }
    fn decode_bytes(
        &self,
        encoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        convert_chunk(
            NAME,
            &encoded,
            decoded_repr,
            (&self.dtype, &self.astype),
            Direction::Decode,
            |e| e,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{DataType, FillValue};
    use proptest::prelude::*;

    fn repr(data_type: DataType, n: u64) -> ChunkRepr {
        ChunkRepr {
            shape: vec![n],
            fill_value: FillValue::zero(&data_type),
            data_type,
        }
    }

    fn codec(digits: i32, dtype: &str) -> QuantizeCodec {
        let t = NumpyDtype::parse(NAME, "d", dtype).unwrap();
        QuantizeCodec::new(digits, t.clone(), t).unwrap()
    }

    #[test]
    fn one_digit_rounds_to_sixteenths() {
        // digits=1: bits = ceil(log2(10)) = 4, grid 1/16.
        let c = codec(1, "<f8");
        let data: Vec<u8> = [0.1f64, 1.03125, 3.1]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let encoded = c.encode(data.into(), &repr(DataType::Float64, 3)).unwrap();
        let values: Vec<f64> = encoded
            .as_fixed("test")
            .unwrap()
            .chunks_exact(8)
            .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        // 1.6 → 2/16; 16.5 → 16 (half to even); 49.6 → 50.
        assert_eq!(values, [0.125, 1.0, 3.125]);
    }

    #[test]
    fn integer_types_are_refused() {
        let i = NumpyDtype::parse(NAME, "d", "<i4").unwrap();
        assert!(QuantizeCodec::new(1, i.clone(), i).is_err());
        assert!(
            codec(2, "<f4")
                .decode(vec![0; 5].into(), &repr(DataType::Float32, 1))
                .is_err()
        );
    }

    proptest! {
        #[test]
        fn quantize_is_idempotent_and_within_precision(values in prop::collection::vec(-1e6f64..1e6, 0..32)) {
            let c = codec(3, "<f8");
            let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let r = repr(DataType::Float64, values.len() as u64);
            let once = c.encode(data.into(), &r)?;
            prop_assert_eq!(c.encode(once.clone(), &r)?, once.clone());
            for (v, b) in values.iter().zip(once.as_fixed("test").unwrap().chunks_exact(8)) {
                let q = f64::from_ne_bytes(b.try_into().unwrap());
                prop_assert!((v - q).abs() <= 1.0 / 1024.0 / 2.0 + 1e-9);
            }
        }
    }
}
