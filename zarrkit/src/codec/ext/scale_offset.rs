//! The `scale_offset` array-to-array codec (v3 extension): stores
//! `(x - offset) * scale` in the same data type, computed with that type's
//! arithmetic.
//!
//! Spec: <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/scale_offset>
//! Names: v3 `scale_offset`. (numcodecs' `numcodecs.fixedscaleoffset`, which
//! also rounds and casts with NumPy's wrapping rules, is
//! [`crate::codec::fixedscaleoffset`].)
//!
//! `offset` and `scale` are written as fill values of the array's data type
//! (so they are checked once the type is known). Integers use exact
//! arithmetic: a result outside the type is an error, and decoding divides
//! rounding toward zero. Floats round each operation to the type; a finite
//! value that overflows to infinity is an error, NaN stays NaN. The fill
//! value is transformed like the elements.
//!
//! ```
//! # use zarrkit::codec::scale_offset::ScaleOffsetConfig;
//! let config: ScaleOffsetConfig = serde_json::from_str(r#"{ "offset": 5, "scale": 0.1 }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::numpy_dtype::{
    Num, check_len, is_float, is_integer, load, round_to, store, wrap,
};
use crate::codec::{ArrayToArrayCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::json::fill_value_from_json;
use crate::metadata::{DataType, ExtensionObject, FillValue, JsonMap};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "scale_offset";

/// The configuration of the `scale_offset` codec.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleOffsetConfig {
    /// Subtracted before scaling (default 0), as a fill value of the array's type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<Value>,
    /// Multiplied after subtracting `offset` (default 1), as a fill value of the array's type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Value>,
}

/// The `scale_offset` codec.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleOffsetCodec {
    config: ScaleOffsetConfig,
}

/// `offset` and `scale` as values of one data type.
#[derive(Clone, Copy)]
struct Params {
    offset: Num,
    scale: Num,
}

fn incompatible(what: String) -> CodecError {
    CodecError::Incompatible { codec: NAME, what }
}

impl ScaleOffsetCodec {
    /// A codec with `config`.
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if `offset` or `scale` is
    /// neither a number nor a string (the fill value encodings of numbers).
    pub fn new(config: ScaleOffsetConfig) -> Result<Self, CodecError> {
        for (field, value) in [("offset", &config.offset), ("scale", &config.scale)] {
            if let Some(v) = value
                && !(v.is_number() || v.is_string())
            {
                return Err(CodecError::InvalidConfiguration {
                    codec: NAME.into(),
                    reason: format!("`{field}` must be a number, found {v}"),
                });
            }
        }
        Ok(Self { config })
    }

    fn params(&self, data_type: &DataType) -> Result<Params, CodecError> {
        if !is_integer(data_type) && !is_float(data_type) {
            return Err(incompatible(format!(
                "{} (only integer and float types)",
                data_type.name()
            )));
        }
        let parse = |field: &str, value: &Option<Value>, default: i64| {
            let value = value.clone().unwrap_or_else(|| default.into());
            let fill = fill_value_from_json(&value, data_type).map_err(|_| {
                incompatible(format!(
                    "{} with `{field}` {value} (not a value of that type)",
                    data_type.name()
                ))
            })?;
            Ok::<_, CodecError>(load(data_type, fill.as_bytes()))
        };
        let params = Params {
            offset: parse("offset", &self.config.offset, 0)?,
            scale: parse("scale", &self.config.scale, 1)?,
        };
        Ok(params)
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: ScaleOffsetConfig = parse_configuration(metadata)?;
    Ok(Codec::ArrayToArray(Arc::new(ScaleOffsetCodec::new(
        config,
    )?)))
}

/// Applies `int` or `float` to `a` and `b`, in the arithmetic of `data_type`.
fn apply(
    data_type: &DataType,
    a: Num,
    b: Num,
    int: impl Fn(i128, i128) -> Option<i128>,
    float: impl Fn(f64, f64) -> f64,
) -> Result<Num, CodecError> {
    match (a, b) {
        (Num::Int(a), Num::Int(b)) => int(a, b)
            .filter(|v| wrap(data_type, *v) == *v)
            .map(Num::Int)
            .ok_or_else(|| CodecError::Corrupt {
                codec: NAME,
                reason: format!(
                    "a value ({a}, {b}) leaves the range of {}",
                    data_type.name()
                ),
            }),
        (a, b) => {
            let (a, b) = (a.to_f64(), b.to_f64());
            let v = round_to(data_type, float(a, b));
            if v.is_infinite() && a.is_finite() && b.is_finite() {
                Err(CodecError::Corrupt {
                    codec: NAME,
                    reason: format!("a value ({a}, {b}) overflows {}", data_type.name()),
                })
            } else {
                Ok(Num::Float(v))
            }
        }
    }
}

fn encode_one(data_type: &DataType, p: Params, x: Num) -> Result<Num, CodecError> {
    let shifted = apply(data_type, x, p.offset, i128::checked_sub, |a, b| a - b)?;
    apply(data_type, shifted, p.scale, i128::checked_mul, |a, b| a * b)
}

fn decode_one(data_type: &DataType, p: Params, x: Num) -> Result<Num, CodecError> {
    let unscaled = apply(data_type, x, p.scale, i128::checked_div, |a, b| a / b)?;
    apply(data_type, unscaled, p.offset, i128::checked_add, |a, b| {
        a + b
    })
}

fn map(
    data: &mut [u8],
    data_type: &DataType,
    mut f: impl FnMut(Num) -> Result<Num, CodecError>,
) -> Result<(), CodecError> {
    let size = data_type.size();
    for element in data.chunks_exact_mut(size) {
        let v = f(load(data_type, element))?;
        store(data_type, v, element);
    }
    Ok(())
}

impl ArrayToArrayCodec for ScaleOffsetCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        if let Some(offset) = &self.config.offset {
            configuration.insert("offset".into(), offset.clone());
        }
        if let Some(scale) = &self.config.scale {
            configuration.insert("scale".into(), scale.clone());
        }
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn encoded_repr(&self, decoded: &ChunkRepr) -> Result<ChunkRepr, CodecError> {
        let data_type = &decoded.data_type;
        let p = self.params(data_type)?;
        if matches!(p.scale, Num::Int(0)) || matches!(p.scale, Num::Float(s) if s == 0.0) {
            return Err(incompatible(format!(
                "{} with `scale` 0 (it cannot be decoded)",
                data_type.name()
            )));
        }
        let mut fill = decoded.fill_value.as_bytes().to_vec();
        map(&mut fill, data_type, |x| encode_one(data_type, p, x))
            .map_err(|e| incompatible(format!("the fill value of {} ({e})", data_type.name())))?;
        Ok(ChunkRepr {
            shape: decoded.shape.clone(),
            data_type: data_type.clone(),
            fill_value: FillValue::new(fill),
        })
    }

    crate::codec::fixed_array_to_array!(NAME);
}

impl ScaleOffsetCodec {
    fn encode_bytes(
        &self,
        mut decoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let data_type = &decoded_repr.data_type;
        let p = self.params(data_type)?;
        check_len(&decoded, decoded_repr.size_bytes()?, 1)?;
        map(&mut decoded, data_type, |x| encode_one(data_type, p, x))?;
        Ok(decoded)
    }
    fn decode_bytes(
        &self,
        mut encoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let data_type = &decoded_repr.data_type;
        let p = self.params(data_type)?;
        check_len(&encoded, decoded_repr.size_bytes()?, 1)?;
        map(&mut encoded, data_type, |x| decode_one(data_type, p, x))?;
        Ok(encoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn codec(config: Value) -> Result<ScaleOffsetCodec, CodecError> {
        let Value::Object(map) = config else {
            unreachable!("test configurations are objects")
        };
        let metadata = ExtensionObject::with_configuration(NAME, map);
        create(&metadata)?;
        ScaleOffsetCodec::new(parse_configuration(&metadata)?)
    }

    fn repr(data_type: DataType, n: u64, fill: FillValue) -> ChunkRepr {
        ChunkRepr {
            shape: vec![n],
            fill_value: fill,
            data_type,
        }
    }

    fn u16s(values: &[u16]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_ne_bytes()).collect()
    }

    #[test]
    fn readme_uint16_range_reduction_subtracts_1000() {
        let c = codec(json!({"offset": 1000})).unwrap();
        let fill = FillValue::new(1000u16.to_ne_bytes().to_vec());
        let r = repr(DataType::UInt16, 3, fill);
        // The fill value moves with the data.
        assert_eq!(
            c.encoded_repr(&r).unwrap().fill_value.as_bytes(),
            0u16.to_ne_bytes()
        );
        let encoded = c.encode(u16s(&[1000, 1001, 1255]).into(), &r).unwrap();
        assert_eq!(encoded, u16s(&[0, 1, 255]));
        assert_eq!(c.decode(encoded, &r).unwrap(), u16s(&[1000, 1001, 1255]));
        // 999 - 1000 is not a uint16: an error, not a wrap.
        let err = c
            .encode(
                u16s(&[999]).into(),
                &repr(DataType::UInt16, 1, FillValue::zero(&DataType::UInt16)),
            )
            .unwrap_err();
        assert!(err.to_string().contains("scale_offset"), "{err}");
        // A fill value of 0 cannot be encoded either.
        assert!(
            c.encoded_repr(&repr(
                DataType::UInt16,
                1,
                FillValue::zero(&DataType::UInt16)
            ))
            .is_err()
        );
    }

    #[test]
    fn readme_float32_example_rounds_each_step_to_float32() {
        let c = codec(json!({"offset": 5, "scale": 0.1})).unwrap();
        let r = repr(DataType::Float32, 2, FillValue::zero(&DataType::Float32));
        let data: Vec<u8> = [15.0f32, f32::NAN]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let encoded = c.encode(data.into(), &r).unwrap();
        let e: Vec<f32> = encoded
            .as_fixed("test")
            .unwrap()
            .chunks_exact(4)
            .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        // 10 * float32(0.1), rounded to float32: 1.0000000149..., which is 1.0 in float32.
        assert_eq!(e[0], 10.0f32 * 0.1f32);
        assert!(e[1].is_nan());
        let fill = c.encoded_repr(&r).unwrap().fill_value;
        assert_eq!(fill.as_bytes(), (-5.0f32 * 0.1f32).to_ne_bytes());
        let decoded = c.decode(encoded, &r).unwrap();
        assert_eq!(
            f32::from_ne_bytes(decoded.as_fixed("test").unwrap()[..4].try_into().unwrap()),
            15.0
        );
    }

    #[test]
    fn integer_scales_multiply_and_divide_exactly() {
        let c = codec(json!({"offset": -3, "scale": 4})).unwrap();
        let r = repr(DataType::Int8, 3, FillValue::zero(&DataType::Int8));
        let encoded = c.encode(vec![0, 5, (-10i8) as u8].into(), &r).unwrap();
        assert_eq!(encoded, [12, 32, (-28i8) as u8]);
        assert_eq!(c.decode(encoded, &r).unwrap(), [0, 5, (-10i8) as u8]);
        // 30 + 3 = 33, times 4 = 132 > 127.
        assert!(
            c.encode(
                vec![30].into(),
                &repr(DataType::Int8, 1, FillValue::zero(&DataType::Int8))
            )
            .is_err()
        );
    }

    #[test]
    fn bad_configurations_and_types_are_refused() {
        assert!(codec(json!({"offset": [1]})).is_err());
        assert!(codec(json!({"factor": 1})).is_err());
        let r = repr(DataType::UInt8, 1, FillValue::zero(&DataType::UInt8));
        // 0.5 is not a uint8; 0 as a scale cannot be decoded; 300 is out of range.
        for bad in [
            json!({"scale": 0.5}),
            json!({"scale": 0}),
            json!({"offset": 300}),
        ] {
            let err = codec(bad.clone()).unwrap().encoded_repr(&r).unwrap_err();
            assert!(err.to_string().contains("scale_offset"), "{bad}: {err}");
        }
        let b = repr(DataType::Bool, 1, FillValue::zero(&DataType::Bool));
        assert!(codec(json!({})).unwrap().encoded_repr(&b).is_err());
        assert!(
            codec(json!({}))
                .unwrap()
                .decode(vec![0; 3].into(), &r)
                .is_err()
        );
    }

    #[test]
    fn metadata_keeps_only_given_fields() {
        let c = codec(json!({"scale": "NaN"})).unwrap();
        assert_eq!(
            Value::Object(c.metadata().configuration_or_empty()),
            json!({"scale": "NaN"})
        );
    }

    proptest! {
        #[test]
        fn integer_round_trips_within_range(values in prop::collection::vec(-1000i32..1000, 0..32), offset in -1000i32..1000, scale in 1i32..1000) {
            let c = codec(json!({"offset": offset, "scale": scale})).unwrap();
            let r = repr(DataType::Int32, values.len() as u64, FillValue::zero(&DataType::Int32));
            let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let encoded = c.encode(data.clone().into(), &r)?;
            for (v, e) in values.iter().zip(encoded.as_fixed("test").unwrap().chunks_exact(4)) {
                prop_assert_eq!(i32::from_ne_bytes(e.try_into().unwrap()), (v - offset) * scale);
            }
            prop_assert_eq!(c.decode(encoded, &r)?, data);
        }
    }
}
