//! The v3 JSON forms of the model's extension objects and fill values,
//! shared by the formats that write v3-shaped documents ([`crate::format`])
//! and the codecs whose configuration holds an extension or a fill value
//! (`sharding_indexed`, `conditional`, `n5_default`, `cast_value`,
//! `scale_offset`). They live here, below both, so that codecs do not import
//! `format` (issue #11, item 4). [`crate::format::v3`] re-exports them at their
//! old paths.

use super::{DataType, ExtensionObject, FillValue, JsonMap, MetadataError, SmallFloat};
use serde_json::{Number, Value};

/// The members an extension object may have (v3 core, "Extension definition").
const EXTENSION_MEMBERS: &[&str] = &["name", "configuration", "must_understand"];

/// Parses an extension point's value: the short-hand name `"gzip"` or an
/// object with a string `name`, an optional `configuration` object and an
/// optional boolean `must_understand` (v3 core, "Extension definition").
/// `field` names the value in errors, such as `codecs[0]`.
///
/// # Errors
/// [`MetadataError::InvalidField`] for any other JSON, including an object
/// with members other than those three.
pub fn extension_from_json(value: &Value, field: &str) -> Result<ExtensionObject, MetadataError> {
    let object = match value {
        Value::String(name) => return Ok(ExtensionObject::new(name.clone())),
        Value::Object(object) => object,
        other => {
            return Err(MetadataError::invalid(
                field,
                "an extension name or object",
                other,
            ));
        }
    };
    let name = match object.get("name") {
        Some(Value::String(name)) => name.clone(),
        Some(other) => {
            return Err(MetadataError::invalid(
                format!("{field}.name"),
                "a string",
                other,
            ));
        }
        None => {
            return Err(MetadataError::invalid(
                field,
                "an extension object with a `name`",
                value,
            ));
        }
    };
    let configuration = match object.get("configuration") {
        None => None,
        Some(Value::Object(configuration)) => Some(configuration.clone()),
        Some(other) => {
            return Err(MetadataError::invalid(
                format!("{field}.configuration"),
                "an object",
                other,
            ));
        }
    };
    let must_understand = match object.get("must_understand") {
        None => true,
        Some(Value::Bool(must_understand)) => *must_understand,
        Some(other) => {
            return Err(MetadataError::invalid(
                format!("{field}.must_understand"),
                "a boolean",
                other,
            ));
        }
    };
    if let Some((key, other)) = object
        .iter()
        .find(|(key, _)| !EXTENSION_MEMBERS.contains(&key.as_str()))
    {
        return Err(MetadataError::invalid(
            format!("{field}.{key}"),
            "no member other than `name`, `configuration` and `must_understand`",
            other,
        ));
    }
    Ok(ExtensionObject {
        name,
        configuration,
        must_understand,
    })
}

/// The object form of an extension: `name`, then `configuration` when
/// present (even if empty), then `"must_understand": false` when the
/// extension may be ignored (`true` is the default and is not written).
#[must_use]
pub fn extension_to_json(extension: &ExtensionObject) -> Value {
    let mut object = JsonMap::new();
    object.insert("name".into(), Value::String(extension.name.clone()));
    if let Some(configuration) = &extension.configuration {
        object.insert("configuration".into(), Value::Object(configuration.clone()));
    }
    if !extension.must_understand {
        object.insert("must_understand".into(), Value::Bool(false));
    }
    Value::Object(object)
}

/// The IEEE 754 bit patterns the fill value `"NaN"` stands for: sign 0, the
/// most significant mantissa bit 1, the other mantissa bits 0 (`final/v3/data-types`,
/// "Permitted fill values").
const CANONICAL_NAN_F16: u64 = 0x7e00;
const CANONICAL_NAN_F32: u64 = 0x7fc0_0000;
const CANONICAL_NAN_F64: u64 = 0x7ff8_0000_0000_0000;

/// Parses `fill_value` for `data_type` (`final/v3/data-types`, "Permitted
/// fill values"):
///
/// - `bool`: `true` or `false`;
/// - integers: a JSON integer in range (an integral number such as `5.0`
///   is accepted too, as some writers produce it);
/// - `float16/32/64`: a number (rounded to nearest, ties to even), `"NaN"`,
///   `"Infinity"`, `"+Infinity"`, `"-Infinity"`, or `"0x…"` with exactly
///   two hex digits per byte giving the bit pattern (any NaN payload);
/// - `complex64/128`: `[re, im]`, each as for the float of half the size,
///   or leniently a real part alone (a number or a non-finite name), read
///   as `re + 0j` (issue #9: zarr 1.x writes `0`);
/// - `r<N>`: an array of N/8 integers in `0..=255`, the element's bytes;
/// - `bfloat16`: as a float, with `"0x…"` of 4 hex digits and `"NaN"` being
///   `0x7fc0`; `complex_float16`/`complex_bfloat16`: `[re, im]` of those;
/// - `numpy.datetime64`/`numpy.timedelta64`: a JSON integer in the `i64`
///   range, or `"NaT"` (stored as `i64::MIN`, as NumPy does);
/// - `float8_*`, `float6_*`, `float4_e2m1fn`: a number (rounded as
///   [`SmallFloat::from_f64`]), `"NaN"` (each type's own pattern, refused by
///   the types without NaN), `"Infinity"`/`"+Infinity"`/`"-Infinity"` (only
///   the IEEE-like `float8_e3m4`, `float8_e4m3`, `float8_e5m2`), or `"0x…"`
///   of two hex digits (the in-memory byte);
/// - `int2`, `int4`, `uint2`, `uint4`: an integer in the type's range.
///
/// The result holds the element in native byte order.
///
/// # Errors
/// [`MetadataError::InvalidFillValue`] if `value` is none of these.
pub fn fill_value_from_json(
    value: &Value,
    data_type: &DataType,
) -> Result<FillValue, MetadataError> {
    fill_value_bytes(value, data_type)
        .map(FillValue::new)
        .ok_or_else(|| MetadataError::InvalidFillValue {
            data_type: data_type.name(),
            found: compact(value),
        })
}

fn fill_value_bytes(value: &Value, data_type: &DataType) -> Option<Vec<u8>> {
    if let Some(bytes) = configured::fill_value_bytes(value, data_type, &fill_value_bytes) {
        return bytes;
    }
    Some(match data_type {
        DataType::Bool => vec![u8::from(value.as_bool()?)],
        DataType::Int8 => i8::try_from(integer(value)?).ok()?.to_ne_bytes().to_vec(),
        DataType::Int16 => i16::try_from(integer(value)?).ok()?.to_ne_bytes().to_vec(),
        DataType::Int32 => i32::try_from(integer(value)?).ok()?.to_ne_bytes().to_vec(),
        DataType::Int64 => i64::try_from(integer(value)?).ok()?.to_ne_bytes().to_vec(),
        DataType::UInt8 => u8::try_from(integer(value)?).ok()?.to_ne_bytes().to_vec(),
        DataType::UInt16 => u16::try_from(integer(value)?).ok()?.to_ne_bytes().to_vec(),
        DataType::UInt32 => u32::try_from(integer(value)?).ok()?.to_ne_bytes().to_vec(),
        DataType::UInt64 => u64::try_from(integer(value)?).ok()?.to_ne_bytes().to_vec(),
        DataType::Float16 => float(value, 2)?,
        DataType::Float32 => float(value, 4)?,
        DataType::Float64 => float(value, 8)?,
        DataType::Complex64 | DataType::Complex128 | DataType::ComplexFloat16 => {
            let half = data_type.size() / 2;
            let (re, im) = complex_parts(value)?;
            let mut bytes = float(re, half)?;
            bytes.extend(im.map_or(Some(vec![0; half]), |im| float(im, half))?);
            bytes
        }
        DataType::BFloat16 => bfloat(value)?,
        DataType::SmallFloat(t) => vec![small_float(value, *t)?],
        DataType::SmallInt(t) => vec![t.from_i64(i64::try_from(integer(value)?).ok()?).ok()?],
        DataType::ComplexBFloat16 => {
            let (re, im) = complex_parts(value)?;
            let mut bytes = bfloat(re)?;
            bytes.extend(im.map_or(Some(vec![0; 2]), bfloat)?);
            bytes
        }
        // extensions/data-types/numpy.datetime64, "Fill value
        // representation": an integer, or `"NaT"` (the same as -2^63).
        DataType::NumpyDateTime64 { .. } | DataType::NumpyTimeDelta64 { .. } => match value {
            Value::String(s) if s == "NaT" => i64::MIN.to_ne_bytes().to_vec(),
            // "no fraction or exponent part": only exact JSON integers.
            _ => value.as_i64()?.to_ne_bytes().to_vec(),
        },
        DataType::RawBits(_) => {
            // final/v3/data-types says "length equal to <N>", but each item
            // is a byte (0..=255), so an `r<N>` element is N/8 of them.
            let items = value.as_array()?;
            if items.len() != data_type.size() {
                return None;
            }
            items
                .iter()
                .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                .collect::<Option<Vec<u8>>>()?
        }
        // Handled by `v3_strings` above.
        _ => return None,
    })
}

/// The real and imaginary parts of a complex fill value: `[re, im]` (v3
/// core, "Fill value"), or, leniently, a real number or one of the
/// non-finite names alone, with a zero imaginary part. zarr 1.x writes
/// `"fill_value": 0` for `<c16` arrays, and NumPy (so every zarr-python)
/// reads a real number as `re + 0j`; zarrs reads only the pair, so this
/// is read, never written (issue #9). A lone `"0x…"` is refused: it does
/// not say which part it is.
/// `None` for the imaginary part means zero (all bits clear).
fn complex_parts(value: &Value) -> Option<(&Value, Option<&Value>)> {
    match value {
        Value::Array(items) => match items.as_slice() {
            [re, im] => Some((re, Some(im))),
            _ => None,
        },
        Value::Number(_) => Some((value, None)),
        Value::String(s) if !s.starts_with("0x") => Some((value, None)),
        _ => None,
    }
}

/// A `bfloat16` fill value, native-endian: as a float (extensions/data-types/
/// bfloat16, "Fill value representation"), with `"0x…"` of 4 hex digits.
/// `"NaN"` is `0x7fc0`, the high half of the `float32` canonical NaN.
fn bfloat(value: &Value) -> Option<Vec<u8>> {
    let bits = match value {
        Value::Number(number) => half::bf16::from_f64(number.as_f64()?).to_bits(),
        Value::String(s) if s.starts_with("0x") => {
            return float(value, 2);
        }
        Value::String(_) => {
            let bits = u32::from_ne_bytes(float(value, 4)?.try_into().ok()?);
            u16::try_from(bits >> 16).ok()?
        }
        _ => return None,
    };
    Some(bits.to_ne_bytes().to_vec())
}

/// A small float fill value (`extensions/data-types/<name>`, "Fill value
/// representation": as the core floats, with the type's own `"NaN"` and no
/// `"Infinity"` for the types without one).
fn small_float(value: &Value, data_type: SmallFloat) -> Option<u8> {
    match value {
        Value::Number(number) => data_type.from_f64(number.as_f64()?).ok(),
        Value::String(s) => match s.as_str() {
            "NaN" => data_type.nan_bits(),
            "Infinity" | "+Infinity" if data_type.has_infinity() => {
                data_type.from_f32(f32::INFINITY).ok()
            }
            "-Infinity" if data_type.has_infinity() => data_type.from_f32(f32::NEG_INFINITY).ok(),
            _ => {
                let digits = s.strip_prefix("0x")?;
                if digits.len() != 2 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                // Any byte: the bits above the type's width are ignored, as
                // the `bytes` codec specifies, and kept as written.
                u8::from_str_radix(digits, 16).ok()
            }
        },
        _ => None,
    }
}

/// A small float's bit pattern as JSON, in the form of [`float_to_json`]:
/// a number, `"NaN"` for the type's own NaN pattern, other NaNs as `"0x…"`,
/// `"Infinity"`/`"-Infinity"`; patterns with bits above the type's width
/// as `"0x…"` too (zarrkit never produces them from numbers).
fn small_float_to_json(bits: u8, data_type: SmallFloat) -> Option<Value> {
    if u32::from(bits) >> data_type.bits() != 0 {
        return Some(Value::String(format!("0x{bits:02x}")));
    }
    let x = data_type.to_f32(bits);
    Some(if x.is_nan() {
        if Some(bits) == data_type.nan_bits() {
            Value::from("NaN")
        } else {
            Value::String(format!("0x{bits:02x}"))
        }
    } else if x.is_infinite() {
        Value::from(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        Value::Number(Number::from_f64(f64::from(x))?)
    })
}

/// A native-endian `bfloat16` as JSON, in the form of [`float_to_json`].
fn bfloat_to_json(bytes: &[u8]) -> Option<Value> {
    let bits = u16::from_ne_bytes(bytes.try_into().ok()?);
    let x = half::bf16::from_bits(bits).to_f64();
    Some(if x.is_nan() {
        if bits == 0x7fc0 {
            Value::from("NaN")
        } else {
            Value::String(format!("0x{bits:04x}"))
        }
    } else if x.is_infinite() {
        Value::from(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        Value::Number(Number::from_f64(x)?)
    })
}

/// A JSON integer, or a JSON number with no fractional part (`5.0`).
fn integer(value: &Value) -> Option<i128> {
    let number = value.as_number()?;
    if let Some(n) = number.as_u64() {
        return Some(i128::from(n));
    }
    if let Some(n) = number.as_i64() {
        return Some(i128::from(n));
    }
    let n = number.as_f64()?;
    // Beyond ±2^64 no integer type can hold it; checking here keeps the
    // cast below exact.
    let limit = 18_446_744_073_709_551_616.0; // 2^64
    if n.fract() != 0.0 || !(-limit..=limit).contains(&n) {
        return None;
    }
    #[allow(clippy::cast_possible_truncation)] // integral and within ±2^64
    Some(n as i128)
}

/// A floating point fill value of `width` bytes (2, 4 or 8), native-endian.
fn float(value: &Value, width: usize) -> Option<Vec<u8>> {
    let bits = match value {
        Value::Number(number) => {
            let x = number.as_f64()?;
            match width {
                2 => u64::from(half::f16::from_f64(x).to_bits()),
                // `as` rounds to nearest, ties to even, as the spec asks;
                // beyond the range of f32 it gives ±infinity.
                #[allow(clippy::cast_possible_truncation)]
                4 => u64::from((x as f32).to_bits()),
                _ => x.to_bits(),
            }
        }
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            // v3 core, "Fill value": `"NaN"`, `"Infinity"`, `"-Infinity"`.
            // Read leniently: the spellings other writers use (`nan`,
            // `inf`, signs) mean the same; only the canonical form is written.
            "nan" | "+nan" | "-nan" => canonical_nan(width),
            "infinity" | "+infinity" | "inf" | "+inf" => infinity(width, false),
            "-infinity" | "-inf" => infinity(width, true),
            _ => {
                let digits = s.strip_prefix("0x")?;
                if digits.len() != 2 * width || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                u64::from_str_radix(digits, 16).ok()?
            }
        },
        _ => return None,
    };
    bits_to_ne_bytes(bits, width)
}

fn canonical_nan(width: usize) -> u64 {
    match width {
        2 => CANONICAL_NAN_F16,
        4 => CANONICAL_NAN_F32,
        _ => CANONICAL_NAN_F64,
    }
}

fn infinity(width: usize, negative: bool) -> u64 {
    let (positive, sign) = match width {
        2 => (0x7c00, 0x8000),
        4 => (0x7f80_0000, 0x8000_0000),
        _ => (0x7ff0_0000_0000_0000, 0x8000_0000_0000_0000),
    };
    if negative { positive | sign } else { positive }
}

fn bits_to_ne_bytes(bits: u64, width: usize) -> Option<Vec<u8>> {
    Some(match width {
        2 => u16::try_from(bits).ok()?.to_ne_bytes().to_vec(),
        4 => u32::try_from(bits).ok()?.to_ne_bytes().to_vec(),
        8 => bits.to_ne_bytes().to_vec(),
        _ => return None,
    })
}

/// The canonical JSON form of a fill value (see [`fill_value_from_json`]):
/// integers and finite floats as numbers (exact: a `float32` is written as
/// the `float64` of the same value), `"NaN"` for the canonical NaN and the
/// hex bit pattern for any other NaN so its payload survives,
/// `"Infinity"`/`"-Infinity"`, complex numbers as `[re, im]`, and `r*` as
/// an array of bytes.
///
/// A fill value whose length is not the data type's size (which
/// [`ArrayMetadata::validate`](super::ArrayMetadata::validate) rejects) is written as its array of bytes.
#[must_use]
pub fn fill_value_to_json(fill: &FillValue, data_type: &DataType) -> Value {
    fill_value_json(fill.as_bytes(), data_type).unwrap_or_else(|| bytes_to_json(fill.as_bytes()))
}

fn fill_value_json(bytes: &[u8], data_type: &DataType) -> Option<Value> {
    if bytes.len() != data_type.size() && !data_type.is_variable_length() {
        return None;
    }
    if let Some(value) = configured::fill_value_json(bytes, data_type, &|b, t| {
        fill_value_to_json(&FillValue::new(b.to_vec()), t)
    }) {
        return Some(value);
    }
    Some(match data_type {
        DataType::Bool => Value::Bool(bytes[0] != 0),
        DataType::Int8 => Value::from(i8::from_ne_bytes(bytes.try_into().ok()?)),
        DataType::Int16 => Value::from(i16::from_ne_bytes(bytes.try_into().ok()?)),
        DataType::Int32 => Value::from(i32::from_ne_bytes(bytes.try_into().ok()?)),
        DataType::Int64 => Value::from(i64::from_ne_bytes(bytes.try_into().ok()?)),
        DataType::UInt8 => Value::from(bytes[0]),
        DataType::UInt16 => Value::from(u16::from_ne_bytes(bytes.try_into().ok()?)),
        DataType::UInt32 => Value::from(u32::from_ne_bytes(bytes.try_into().ok()?)),
        DataType::UInt64 => Value::from(u64::from_ne_bytes(bytes.try_into().ok()?)),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => float_to_json(bytes)?,
        DataType::Complex64 | DataType::Complex128 | DataType::ComplexFloat16 => {
            let (re, im) = bytes.split_at(bytes.len() / 2);
            Value::Array(vec![float_to_json(re)?, float_to_json(im)?])
        }
        DataType::RawBits(_) => bytes_to_json(bytes),
        DataType::BFloat16 => bfloat_to_json(bytes)?,
        DataType::SmallFloat(t) => small_float_to_json(*bytes.first()?, *t)?,
        DataType::SmallInt(t) => Value::from(t.to_i8(*bytes.first()?)),
        DataType::ComplexBFloat16 => {
            let (re, im) = bytes.split_at(2);
            Value::Array(vec![bfloat_to_json(re)?, bfloat_to_json(im)?])
        }
        DataType::NumpyDateTime64 { .. } | DataType::NumpyTimeDelta64 { .. } => {
            match i64::from_ne_bytes(bytes.try_into().ok()?) {
                i64::MIN => Value::from("NaT"),
                n => Value::from(n),
            }
        }
        // Handled by `v3_strings` above.
        _ => return None,
    })
}

fn bytes_to_json(bytes: &[u8]) -> Value {
    Value::Array(bytes.iter().map(|&b| Value::from(b)).collect())
}

/// A native-endian float of 2, 4 or 8 bytes as JSON.
fn float_to_json(bytes: &[u8]) -> Option<Value> {
    let width = bytes.len();
    let (bits, x) = match width {
        2 => {
            let bits = u16::from_ne_bytes(bytes.try_into().ok()?);
            (u64::from(bits), half::f16::from_bits(bits).to_f64())
        }
        4 => {
            let bits = u32::from_ne_bytes(bytes.try_into().ok()?);
            (u64::from(bits), f64::from(f32::from_bits(bits)))
        }
        8 => {
            let bits = u64::from_ne_bytes(bytes.try_into().ok()?);
            (bits, f64::from_bits(bits))
        }
        _ => return None,
    };
    Some(if x.is_nan() {
        if bits == canonical_nan(width) {
            Value::from("NaN")
        } else {
            Value::String(format!("0x{bits:0digits$x}", digits = 2 * width))
        }
    } else if x.is_infinite() {
        Value::from(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        // Finite, so `from_f64` succeeds; serde_json writes the shortest
        // text that reads back as the same f64, and the f16/f32 value is
        // exactly that f64, so the bits survive.
        Value::Number(Number::from_f64(x)?)
    })
}

/// `value` as compact JSON for an error message, shortened to 100 characters.
pub(crate) fn compact(value: &Value) -> String {
    let mut text = value.to_string();
    if text.len() > 100 {
        let cut = (0..=97)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        text.truncate(cut);
        text.push_str("...");
    }
    text
}

/// Standard base64 with padding (RFC 4648 section 4), as v2 and the
/// v3 byte-string extensions write fill values.
pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes standard base64 with padding, or `None` if it is not that.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

/// The fill values of the v3 data types with a configuration of their own
/// (string and byte-string types, `struct`, complex small floats; their
/// names and configurations are read in `format/v3_strings.rs`).
mod configured {
    use super::{DataType, JsonMap};
    use serde_json::Value;

    /// Decodes the fill value of the types of this module into the bytes of
    /// one element; `None` when `value` is not a valid fill value of the type,
    /// and `Some(None)` when the type is not one of this module's.
    ///
    /// - `string`: a JSON string;
    /// - `bytes`: an array of integers in 0..=255 or a base64 string;
    /// - `fixed_length_utf32`: a string of at most `length_bytes / 4` code
    ///   points (native-endian UTF-32, zero-padded);
    /// - `null_terminated_bytes`: base64 (zarr-python) or an array of
    ///   integers, at most `length_bytes` bytes, zero-padded;
    /// - `struct`: an object with one member per field, or (legacy
    ///   `structured`) base64 of the packed little-endian record;
    /// - complex small floats: `[re, im]`, each as the real type's fill value.
    pub(super) fn fill_value_bytes(
        value: &Value,
        data_type: &DataType,
        scalar: &dyn Fn(&Value, &DataType) -> Option<Vec<u8>>,
    ) -> Option<Option<Vec<u8>>> {
        Some(match data_type {
            DataType::String => value.as_str().map(|s| s.as_bytes().to_vec()),
            DataType::Bytes => byte_string(value),
            DataType::FixedUtf32(n) => value
                .as_str()
                .and_then(|s| crate::metadata::strings::encode_utf32(s, *n)),
            DataType::FixedBytes(n) => byte_string(value).filter(|b| b.len() <= *n).map(|mut b| {
                b.resize(*n, 0);
                b
            }),
            DataType::Struct(fields) => match value {
                Value::String(text) => {
                    let mut bytes = super::base64_decode(text)?;
                    if bytes.len() != data_type.size() {
                        return Some(None);
                    }
                    // extensions/data-types/structured, "Base64-encoded fill
                    // values": little-endian unless the `bytes` codec says
                    // otherwise (zarr-python writes them little-endian).
                    if cfg!(target_endian = "big") {
                        swap_units(&mut bytes, data_type);
                    }
                    Some(bytes)
                }
                Value::Object(object) => {
                    let mut bytes = Vec::with_capacity(data_type.size());
                    for field in fields {
                        let Some(v) = object.get(&field.name) else {
                            return Some(None);
                        };
                        let Some(b) = scalar(v, &field.data_type) else {
                            return Some(None);
                        };
                        bytes.extend(b);
                    }
                    if object.len() != fields.len() {
                        return Some(None);
                    }
                    Some(bytes)
                }
                _ => None,
            },
            DataType::ComplexSmallFloat(t) => match value.as_array().map(Vec::as_slice) {
                Some([re, im]) => (|| {
                    let re = scalar(re, &DataType::SmallFloat(*t))?;
                    let im = scalar(im, &DataType::SmallFloat(*t))?;
                    Some([re, im].concat())
                })(),
                _ => None,
            },
            _ => return None,
        })
    }

    /// Reverses the byte order of every multi-byte number of each element.
    fn swap_units(bytes: &mut [u8], data_type: &DataType) {
        for (offset, unit) in data_type.endian_units() {
            if let Some(unit_bytes) = bytes.get_mut(offset..offset + unit) {
                unit_bytes.reverse();
            }
        }
    }

    fn byte_string(value: &Value) -> Option<Vec<u8>> {
        match value {
            Value::String(text) => super::base64_decode(text),
            Value::Array(items) => items
                .iter()
                .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                .collect(),
            _ => None,
        }
    }

    /// The JSON fill value of the types of this module; `None` when the type
    /// is not one of them or the bytes are not a valid element.
    pub(super) fn fill_value_json(
        bytes: &[u8],
        data_type: &DataType,
        scalar: &dyn Fn(&[u8], &DataType) -> Value,
    ) -> Option<Value> {
        Some(match data_type {
            DataType::String => Value::String(std::str::from_utf8(bytes).ok()?.to_owned()),
            // extensions/data-types/bytes: base64 is the compact form.
            DataType::Bytes => Value::String(super::base64_encode(bytes)),
            DataType::FixedUtf32(_) => {
                Value::String(crate::metadata::strings::decode_utf32(bytes).ok()?)
            }
            // Trailing zero bytes are padding (NumPy `S`): written without
            // them, as zarr-python writes them (`"YWI="` for `b"ab"` in `S3`).
            DataType::FixedBytes(_) => Value::String(super::base64_encode(
                crate::metadata::strings::trim_nul(bytes),
            )),
            DataType::Struct(fields) => {
                let mut object = JsonMap::new();
                let mut offset = 0;
                for field in fields {
                    let size = field.size();
                    let b = bytes.get(offset..offset + size)?;
                    object.insert(field.name.clone(), scalar(b, &field.data_type));
                    offset += size;
                }
                Value::Object(object)
            }
            DataType::ComplexSmallFloat(t) => {
                let [re, im] = bytes else { return None };
                let t = DataType::SmallFloat(*t);
                Value::Array(vec![scalar(&[*re], &t), scalar(&[*im], &t)])
            }
            _ => return None,
        })
    }
}
