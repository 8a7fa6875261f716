//! The `cast_value` array-to-array codec (v3 extension): converts each
//! element's numerical value to another integer or float data type.
//!
//! Spec: <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/cast_value>
//! Names: v3 `cast_value`. (numcodecs' `numcodecs.astype`, which casts
//! with NumPy's rules, is [`crate::codec::astype`].)
//!
//! In order: a value listed in `scalar_map` takes its mapped value; a
//! value the other type holds exactly is kept; otherwise it is rounded
//! (`rounding`, default ties to even) and, if then out of range, clamped
//! or wrapped (`out_of_range`; without it that is an error). NaN and
//! infinities stay themselves between floats and are errors when cast to
//! integers unless mapped. Supports `int8`–`uint64` and `float16/32/64`.
//! The fill value is cast too and must survive the round trip.
//!
//! ```
//! # use zarrkit::codec::cast_value::CastValueConfig;
//! let config: CastValueConfig = serde_json::from_str(
//!     r#"{ "data_type": "uint8", "rounding": "towards-zero", "out_of_range": "wrap" }"#,
//! )?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::numpy_dtype::{Num, check_len, is_float, is_integer, load, store, wrap};
use crate::codec::{ArrayToArrayCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::json::fill_value_from_json;
use crate::metadata::{DataType, ExtensionObject, FillValue, JsonMap};
use half::f16;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::cmp::Ordering;
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "cast_value";

/// How values between two representable ones are rounded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rounding {
    /// To the nearest, ties to even (the default).
    #[default]
    NearestEven,
    /// Toward zero.
    TowardsZero,
    /// Toward positive infinity.
    TowardsPositive,
    /// Toward negative infinity.
    TowardsNegative,
    /// To the nearest, ties away from zero.
    NearestAway,
}

/// What happens to values outside the target type's range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutOfRange {
    /// The nearest end of the range (±infinity for floats).
    Clamp,
    /// Modulo `2^bits` (integer targets only).
    Wrap,
}

/// Explicit value mappings, each `[input, output]` as fill values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalarMap {
    /// Applied when encoding (array type → `data_type`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encode: Option<Vec<(Value, Value)>>,
    /// Applied when decoding (`data_type` → array type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode: Option<Vec<(Value, Value)>>,
}

/// The configuration of the `cast_value` codec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CastValueConfig {
    /// The encoded data type.
    pub data_type: String,
    /// The rounding rule (default `nearest-even`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounding: Option<Rounding>,
    /// The out-of-range rule (default: an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_of_range: Option<OutOfRange>,
    /// Explicit mappings, checked first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scalar_map: Option<ScalarMap>,
}

/// The `cast_value` codec.
#[derive(Clone, Debug, PartialEq)]
pub struct CastValueCodec {
    config: CastValueConfig,
    target: DataType,
}

/// One direction's cast: from, to, and the parsed map.
struct Cast<'a> {
    from: &'a DataType,
    to: &'a DataType,
    rounding: Rounding,
    out_of_range: Option<OutOfRange>,
    map: Vec<(Num, Num)>,
}

fn supported(data_type: &DataType) -> bool {
    is_integer(data_type) || is_float(data_type)
}

impl CastValueCodec {
    /// A codec with `config`.
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if `data_type` is not an
    /// integer or float type, or `wrap` is asked of a float type.
    pub fn new(config: CastValueConfig) -> Result<Self, CodecError> {
        let invalid = |reason: String| CodecError::InvalidConfiguration {
            codec: NAME.into(),
            reason,
        };
        let target = DataType::from_name(&config.data_type)
            .filter(supported)
            .ok_or_else(|| {
                invalid(format!(
                    "`data_type` {} is not an integer or float type",
                    config.data_type
                ))
            })?;
        if config.out_of_range == Some(OutOfRange::Wrap) && !is_integer(&target) {
            return Err(invalid(format!(
                "`out_of_range` \"wrap\" needs an integer `data_type`, not {}",
                config.data_type
            )));
        }
        Ok(Self { config, target })
    }

    fn cast<'a>(&'a self, decoded: &'a DataType, encode: bool) -> Result<Cast<'a>, CodecError> {
        if !supported(decoded) {
            return Err(CodecError::Incompatible {
                codec: NAME,
                what: format!("{} (only integer and float types)", decoded.name()),
            });
        }
        let (from, to, pairs) = if encode {
            let pairs = self
                .config
                .scalar_map
                .as_ref()
                .and_then(|m| m.encode.as_ref());
            (decoded, &self.target, pairs)
        } else {
            let pairs = self
                .config
                .scalar_map
                .as_ref()
                .and_then(|m| m.decode.as_ref());
            (&self.target, decoded, pairs)
        };
        let parse = |value: &Value, data_type: &DataType| {
            fill_value_from_json(value, data_type)
                .map(|fill| load(data_type, fill.as_bytes()))
                .map_err(|_| CodecError::Incompatible {
                    codec: NAME,
                    what: format!(
                        "{} with `scalar_map` value {value} (not a {})",
                        decoded.name(),
                        data_type.name()
                    ),
                })
        };
        let mut map = Vec::new();
        for (input, output) in pairs.into_iter().flatten() {
            map.push((parse(input, from)?, parse(output, to)?));
        }
        Ok(Cast {
            from,
            to,
            rounding: self.config.rounding.unwrap_or_default(),
            out_of_range: self.config.out_of_range,
            map,
        })
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: CastValueConfig = parse_configuration(metadata)?;
    Ok(Codec::ArrayToArray(Arc::new(CastValueCodec::new(config)?)))
}

/// Whether two values are the same scalar (NaN matches NaN; -0 and 0 differ).
fn same(a: Num, b: Num) -> bool {
    match (a, b) {
        (Num::Int(a), Num::Int(b)) => a == b,
        (Num::Float(a), Num::Float(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
        _ => false,
    }
}

/// Compares an exact value with a (non-NaN) float.
fn cmp_exact(x: Num, v: f64) -> Ordering {
    match x {
        Num::Float(a) => a.partial_cmp(&v).unwrap_or(Ordering::Equal),
        Num::Int(a) => {
            if v.is_infinite() || v.abs() >= 2f64.powi(126) {
                return if v > 0.0 {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
            }
            let whole = v.trunc();
            a.cmp(&(whole as i128)).then(if v - whole > 0.0 {
                Ordering::Less
            } else if v - whole < 0.0 {
                Ordering::Greater
            } else {
                Ordering::Equal
            })
        }
    }
}

/// The float type's value nearest `x` (ties to even), as `f64`.
fn nearest(to: &DataType, x: Num) -> f64 {
    match (to, x) {
        (DataType::Float16, Num::Int(v)) => f16::from_f64(v as f64).to_f64(),
        (DataType::Float16, Num::Float(v)) => f16::from_f64(v).to_f64(),
        (DataType::Float32, Num::Int(v)) => f64::from(v as f32),
        (DataType::Float32, Num::Float(v)) => f64::from(v as f32),
        (_, Num::Int(v)) => v as f64,
        (_, Num::Float(v)) => v,
    }
}

/// The next IEEE bit pattern of `width` bits after `bits` (not NaN), up
/// or down in value; infinities do not move further out.
fn next_bits(bits: u64, width: u32, infinity: u64, up: bool) -> u64 {
    let sign = 1u64 << (width - 1);
    let magnitude = bits & !sign;
    let negative = bits & sign != 0;
    if magnitude == 0 {
        return if up { 1 } else { sign | 1 };
    }
    if negative != up {
        // Away from zero.
        if magnitude == infinity {
            bits
        } else {
            bits + 1
        }
    } else {
        bits - 1
    }
}

/// The next value of the float type after `v`, up or down.
fn step(to: &DataType, v: f64, up: bool) -> f64 {
    match to {
        DataType::Float16 => {
            let bits = next_bits(u64::from(f16::from_f64(v).to_bits()), 16, 0x7C00, up);
            f16::from_bits(bits as u16).to_f64()
        }
        DataType::Float32 => {
            let bits = next_bits(u64::from((v as f32).to_bits()), 32, 0x7F80_0000, up);
            f64::from(f32::from_bits(bits as u32))
        }
        _ => f64::from_bits(next_bits(v.to_bits(), 64, 0x7FF0_0000_0000_0000, up)),
    }
}

/// Whether `x` lies exactly halfway between the floats `lo` and `hi`.
fn is_tie(x: Num, lo: f64, hi: f64) -> bool {
    let limit = 2f64.powi(120);
    if let Num::Int(v) = x
        && lo.fract() == 0.0
        && hi.fract() == 0.0
        && lo.abs() < limit
        && hi.abs() < limit
    {
        return v.checked_mul(2) == Some(lo as i128 + hi as i128);
    }
    lo.is_finite() && hi.is_finite() && cmp_exact(x, lo / 2.0 + hi / 2.0) == Ordering::Equal
}

impl Cast<'_> {
    fn fail(&self, x: Num, why: &str) -> String {
        let shown = match x {
            Num::Int(v) => v.to_string(),
            Num::Float(v) => v.to_string(),
        };
        format!(
            "{} value {shown} as {} ({why})",
            self.from.name(),
            self.to.name()
        )
    }

    /// Casts one value (the spec's ordered rules).
    fn one(&self, x: Num) -> Result<Num, String> {
        if let Some((_, out)) = self.map.iter().find(|(input, _)| same(*input, x)) {
            return Ok(*out);
        }
        if is_float(self.to) {
            self.to_float(x)
        } else {
            self.to_int(x)
        }
    }

    fn to_float(&self, x: Num) -> Result<Num, String> {
        if let Num::Float(v) = x
            && !v.is_finite()
        {
            return Ok(Num::Float(v));
        }
        let c = nearest(self.to, x);
        let ord = cmp_exact(x, c);
        let rounded = if ord == Ordering::Equal {
            c
        } else {
            let other = step(self.to, c, ord == Ordering::Greater);
            let (lo, hi) = if c < other { (c, other) } else { (other, c) };
            let positive = cmp_exact(x, 0.0) == Ordering::Greater;
            match self.rounding {
                Rounding::NearestEven => c,
                Rounding::TowardsZero => {
                    if positive {
                        lo
                    } else {
                        hi
                    }
                }
                Rounding::TowardsPositive => hi,
                Rounding::TowardsNegative => lo,
                Rounding::NearestAway => {
                    if is_tie(x, lo, hi) {
                        if positive { hi } else { lo }
                    } else {
                        c
                    }
                }
            }
        };
        if rounded.is_infinite() {
            return match self.out_of_range {
                Some(OutOfRange::Clamp) => Ok(Num::Float(rounded)),
                _ => Err(self.fail(x, "out of range")),
            };
        }
        Ok(Num::Float(rounded))
    }

    fn to_int(&self, x: Num) -> Result<Num, String> {
        let (min, max) = (int_min(self.to), int_max(self.to));
        let value = match x {
            Num::Int(v) => v,
            Num::Float(v) if !v.is_finite() => {
                return Err(self.fail(x, "not a finite number"));
            }
            Num::Float(v) => {
                let r = match self.rounding {
                    Rounding::NearestEven => v.round_ties_even(),
                    Rounding::TowardsZero => v.trunc(),
                    Rounding::TowardsPositive => v.ceil(),
                    Rounding::TowardsNegative => v.floor(),
                    Rounding::NearestAway => v.round(),
                };
                if r.abs() >= 2f64.powi(126) {
                    return match self.out_of_range {
                        Some(OutOfRange::Clamp) => Ok(Num::Int(if r > 0.0 { max } else { min })),
                        Some(OutOfRange::Wrap) => {
                            let bits = 8 * self.to.size() as i32;
                            let m = r.rem_euclid(2f64.powi(bits));
                            Ok(Num::Int(wrap(self.to, m as i128)))
                        }
                        None => Err(self.fail(x, "out of range")),
                    };
                }
                r as i128
            }
        };
        if (min..=max).contains(&value) {
            return Ok(Num::Int(value));
        }
        match self.out_of_range {
            Some(OutOfRange::Clamp) => Ok(Num::Int(value.clamp(min, max))),
            Some(OutOfRange::Wrap) => Ok(Num::Int(wrap(self.to, value))),
            None => Err(self.fail(x, "out of range")),
        }
    }

    fn apply(&self, input: &[u8]) -> Result<Vec<u8>, String> {
        let (from_size, to_size) = (self.from.size(), self.to.size());
        let mut out = vec![0u8; input.len() / from_size * to_size];
        for (src, dst) in input
            .chunks_exact(from_size)
            .zip(out.chunks_exact_mut(to_size))
        {
            store(self.to, self.one(load(self.from, src))?, dst);
        }
        Ok(out)
    }
}

/// The smallest value of the integer type.
fn int_min(data_type: &DataType) -> i128 {
    match data_type {
        DataType::Int8 => i128::from(i8::MIN),
        DataType::Int16 => i128::from(i16::MIN),
        DataType::Int32 => i128::from(i32::MIN),
        DataType::Int64 => i128::from(i64::MIN),
        _ => 0,
    }
}

/// The largest value of the integer type.
fn int_max(data_type: &DataType) -> i128 {
    if int_min(data_type) < 0 {
        (1i128 << (8 * data_type.size() - 1)) - 1
    } else {
        (1i128 << (8 * data_type.size())) - 1
    }
}

impl ArrayToArrayCodec for CastValueCodec {
    fn metadata(&self) -> ExtensionObject {
        let configuration = match serde_json::to_value(&self.config) {
            Ok(Value::Object(map)) => map,
            _ => JsonMap::new(),
        };
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn encoded_repr(&self, decoded: &ChunkRepr) -> Result<ChunkRepr, CodecError> {
        let encode = self.cast(&decoded.data_type, true)?;
        let decode = self.cast(&decoded.data_type, false)?;
        let fill = decoded.fill_value.as_bytes();
        let bad_fill = |why: String| CodecError::Incompatible {
            codec: NAME,
            what: format!("the fill value: {why}"),
        };
        let encoded_fill = encode.apply(fill).map_err(bad_fill)?;
        let back = decode.apply(&encoded_fill).map_err(bad_fill)?;
        if !same(
            load(&decoded.data_type, &back),
            load(&decoded.data_type, fill),
        ) {
            return Err(bad_fill(format!(
                "it does not survive the round trip through {}",
                self.target.name()
            )));
        }
        Ok(ChunkRepr {
            shape: decoded.shape.clone(),
            data_type: self.target.clone(),
            fill_value: FillValue::new(encoded_fill),
        })
    }

    crate::codec::fixed_array_to_array!(NAME);
}

impl CastValueCodec {
    fn encode_bytes(
        &self,
        decoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let cast = self.cast(&decoded_repr.data_type, true)?;
        check_len(&decoded, decoded_repr.size_bytes()?, 1)?;
        cast.apply(&decoded)
            .map_err(|what| CodecError::Incompatible { codec: NAME, what })
    }
    fn decode_bytes(
        &self,
        encoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let cast = self.cast(&decoded_repr.data_type, false)?;
        let count = decoded_repr
            .num_elements()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| CodecError::TooLarge {
                shape: decoded_repr.shape.clone(),
            })?;
        check_len(&encoded, count, self.target.size())?;
        cast.apply(&encoded).map_err(|reason| CodecError::Corrupt {
            codec: NAME,
            reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn codec(config: Value) -> Result<CastValueCodec, CodecError> {
        let Value::Object(map) = config else {
            unreachable!("test configurations are objects")
        };
        let metadata = ExtensionObject::with_configuration(NAME, map);
        create(&metadata)?;
        CastValueCodec::new(parse_configuration(&metadata)?)
    }

    fn repr(data_type: DataType, n: u64) -> ChunkRepr {
        ChunkRepr {
            shape: vec![n],
            fill_value: FillValue::zero(&data_type),
            data_type,
        }
    }

    fn f64s(values: &[f64]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_ne_bytes()).collect()
    }

    fn encode_one(config: Value, from: DataType, x: &[u8]) -> Result<Vec<u8>, CodecError> {
        let n = (x.len() / from.size()) as u64;
        codec(config)?
            .encode(x.to_vec().into(), &repr(from, n))
            .and_then(|d| d.into_fixed("test"))
    }

    #[test]
    fn readme_out_of_range_example_128_as_int8() {
        let x = f64s(&[128.0]);
        assert!(encode_one(json!({"data_type": "int8"}), DataType::Float64, &x).is_err());
        let clamp = json!({"data_type": "int8", "out_of_range": "clamp"});
        assert_eq!(encode_one(clamp, DataType::Float64, &x).unwrap(), [127]);
        let wrap = json!({"data_type": "int8", "out_of_range": "wrap"});
        assert_eq!(
            encode_one(wrap, DataType::Float64, &x).unwrap(),
            [(-128i8) as u8]
        );
    }

    #[test]
    fn readme_int16_wrapping_follows_twos_complement() {
        let c = json!({"data_type": "int16", "out_of_range": "wrap"});
        let x: Vec<u8> = [32768i32, 32769, -32769]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let out = encode_one(c, DataType::Int32, &x).unwrap();
        let v: Vec<i16> = out
            .chunks_exact(2)
            .map(|b| i16::from_ne_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(v, [-32768, -32767, 32767]);
    }

    #[test]
    fn rounding_modes_differ_on_halves_and_negatives() {
        let x = f64s(&[2.5, -2.5, 2.4, -0.5]);
        let cases = [
            ("nearest-even", [2i8, -2, 2, 0]),
            ("nearest-away", [3, -3, 2, -1]),
            ("towards-zero", [2, -2, 2, 0]),
            ("towards-positive", [3, -2, 3, 0]),
            ("towards-negative", [2, -3, 2, -1]),
        ];
        for (rounding, expected) in cases {
            let out = encode_one(
                json!({"data_type": "int8", "rounding": rounding}),
                DataType::Float64,
                &x,
            )
            .unwrap();
            let got: Vec<i8> = out.iter().map(|b| *b as i8).collect();
            assert_eq!(got, expected, "{rounding}");
        }
    }

    #[test]
    fn float_narrowing_rounds_by_mode_and_overflows_by_rule() {
        // 1 + 2^-24 lies halfway between float32 1 and 1 + 2^-23.
        let half = 1.0 + 2f64.powi(-24);
        let x = f64s(&[half, -half, 1e300]);
        let up = 1.0 + 2f32.powi(-23);
        let get = |rounding: &str, out_of_range: Option<&str>| {
            let mut config = json!({"data_type": "float32", "rounding": rounding});
            if let Some(o) = out_of_range {
                config["out_of_range"] = o.into();
            }
            encode_one(config, DataType::Float64, &x).map(|out| {
                out.chunks_exact(4)
                    .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
                    .collect::<Vec<f32>>()
            })
        };
        // 1e300 does not fit float32: an error unless clamped (to infinity).
        assert!(get("nearest-even", None).is_err());
        assert_eq!(
            get("nearest-even", Some("clamp")).unwrap(),
            [1.0, -1.0, f32::INFINITY]
        );
        assert_eq!(
            get("nearest-away", Some("clamp")).unwrap(),
            [up, -up, f32::INFINITY]
        );
        assert_eq!(
            get("towards-positive", Some("clamp")).unwrap(),
            [up, -1.0, f32::INFINITY]
        );
        // Rounding toward zero keeps 1e300 at the largest finite float32.
        assert_eq!(get("towards-zero", None).unwrap(), [1.0, -1.0, f32::MAX]);
    }

    #[test]
    fn int64_to_float32_rounds_large_integers() {
        let x: Vec<u8> = [(1i64 << 24) + 1]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        for (rounding, expected) in [
            ("nearest-even", 16_777_216f32),
            ("towards-positive", 16_777_218.0),
        ] {
            let out = encode_one(
                json!({"data_type": "float32", "rounding": rounding}),
                DataType::Int64,
                &x,
            )
            .unwrap();
            assert_eq!(
                f32::from_ne_bytes(out[..4].try_into().unwrap()),
                expected,
                "{rounding}"
            );
        }
    }

    #[test]
    fn nan_is_an_error_for_integers_unless_mapped() {
        let x = f64s(&[f64::NAN, 3.0]);
        assert!(encode_one(json!({"data_type": "uint8"}), DataType::Float64, &x).is_err());
        // The README's NaN-preserving example: NaN <-> 0.
        let c = codec(json!({
            "data_type": "uint8",
            "rounding": "nearest-even",
            "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}
        }))
        .unwrap();
        let r = ChunkRepr {
            shape: vec![2],
            data_type: DataType::Float64,
            fill_value: FillValue::new(f64::NAN.to_ne_bytes().to_vec()),
        };
        let encoded_repr = c.encoded_repr(&r).unwrap();
        assert_eq!(encoded_repr.data_type, DataType::UInt8);
        assert_eq!(encoded_repr.fill_value.as_bytes(), [0]);
        let encoded = c.encode(x.into(), &r).unwrap();
        assert_eq!(encoded, [0, 3]);
        let decoded = c.decode(encoded, &r).unwrap();
        assert!(
            f64::from_ne_bytes(decoded.as_fixed("test").unwrap()[..8].try_into().unwrap()).is_nan()
        );
        assert_eq!(
            f64::from_ne_bytes(decoded.as_fixed("test").unwrap()[8..].try_into().unwrap()),
            3.0
        );
        // Floats keep NaN and signed zero without a map.
        let out = encode_one(
            json!({"data_type": "float16"}),
            DataType::Float64,
            &f64s(&[f64::NAN, -0.0]),
        )
        .unwrap();
        assert!(f16::from_ne_bytes([out[0], out[1]]).is_nan());
        assert_eq!(f16::from_ne_bytes([out[2], out[3]]).to_bits(), 0x8000);
    }

    #[test]
    fn fill_values_that_do_not_survive_the_round_trip_are_refused() {
        let c = codec(json!({"data_type": "uint8", "out_of_range": "clamp"})).unwrap();
        let r = ChunkRepr {
            shape: vec![1],
            data_type: DataType::Int16,
            fill_value: FillValue::new(300i16.to_ne_bytes().to_vec()),
        };
        let err = c.encoded_repr(&r).unwrap_err();
        assert!(err.to_string().contains("cast_value"), "{err}");
    }

    #[test]
    fn bad_configurations_are_refused_naming_the_codec() {
        for bad in [
            json!({}),
            json!({"data_type": "bool"}),
            json!({"data_type": "complex64"}),
            json!({"data_type": "float32", "out_of_range": "wrap"}),
            json!({"data_type": "int8", "rounding": "up"}),
            json!({"data_type": "int8", "scalar_map": {"both": []}}),
            json!({"data_type": "int8", "extra": 1}),
        ] {
            let err = codec(bad.clone()).unwrap_err();
            assert!(err.to_string().contains("`cast_value`"), "{bad}: {err}");
        }
        let c = codec(json!({"data_type": "int8", "scalar_map": {"encode": [[1.5, 0]]}})).unwrap();
        assert!(c.encoded_repr(&repr(DataType::Int32, 1)).is_err());
        let c = codec(json!({"data_type": "int8"})).unwrap();
        assert!(c.encoded_repr(&repr(DataType::Bool, 1)).is_err());
        assert!(
            c.decode(vec![0; 3].into(), &repr(DataType::Int32, 2))
                .is_err()
        );
    }

    #[test]
    fn metadata_keeps_the_given_fields() {
        let config = json!({"data_type": "uint8", "out_of_range": "wrap", "scalar_map": {"encode": [["NaN", 0]]}});
        let c = codec(config.clone()).unwrap();
        assert_eq!(Value::Object(c.metadata().configuration_or_empty()), config);
    }

    proptest! {
        #[test]
        fn in_range_integers_round_trip(values in prop::collection::vec(-128i64..128, 0..32)) {
            let c = codec(json!({"data_type": "int8"})).unwrap();
            let r = repr(DataType::Int64, values.len() as u64);
            let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let encoded = c.encode(data.clone().into(), &r)?;
            prop_assert_eq!(encoded.len(), values.len());
            prop_assert_eq!(c.decode(encoded, &r)?, data);
        }

        #[test]
        fn float32_values_round_trip_through_float64(values in prop::collection::vec(any::<f32>(), 0..32)) {
            let c = codec(json!({"data_type": "float64"})).unwrap();
            let r = repr(DataType::Float32, values.len() as u64);
            let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let decoded = c.decode(c.encode(data.clone().into(), &r)?, &r)?;
            for (a, b) in data.chunks_exact(4).zip(decoded.as_fixed("test").unwrap().chunks_exact(4)) {
                let (a, b) = (f32::from_ne_bytes(a.try_into().unwrap()), f32::from_ne_bytes(b.try_into().unwrap()));
                prop_assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
            }
        }

        #[test]
        fn directed_rounding_brackets_the_value(v in -1e6f64..1e6) {
            let x = f64s(&[v]);
            let down = encode_one(json!({"data_type": "float16", "rounding": "towards-negative", "out_of_range": "clamp"}), DataType::Float64, &x)?;
            let up = encode_one(json!({"data_type": "float16", "rounding": "towards-positive", "out_of_range": "clamp"}), DataType::Float64, &x)?;
            let (d, u) = (f16::from_ne_bytes([down[0], down[1]]).to_f64(), f16::from_ne_bytes([up[0], up[1]]).to_f64());
            prop_assert!(d <= v && v <= u, "{} <= {} <= {}", d, v, u);
            prop_assert!(d == u || f16::from_f64(d).to_bits().abs_diff(f16::from_f64(u).to_bits()) <= 1 || d.signum() != u.signum());
        }
    }
}
