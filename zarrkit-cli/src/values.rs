//! Array elements as values a person or a script reads and writes: decoded
//! from element bytes (native byte order) for `zarrkit get`, and parsed
//! from text or converted from `.npy` elements for `zarrkit set`, with
//! range checks.
//!
//! One value type, [`Scalar`], sits between every data type and every
//! output: text (NumPy's spelling: `True`, `1.5`, `nan`, `1+2j`,
//! `2020-01-01T00:00:00`, `NaT`) and JSON (numbers; `"NaN"`, `"Infinity"`,
//! `"-Infinity"` as Zarr spells them in fill values; complex numbers as
//! `[re, im]`; datetimes as ISO strings).

use anyhow::{Context, anyhow, bail};
use serde_json::{Map, Value};
use zarrkit::metadata::{DataType, SmallFloat, SmallInt, StructField, TimeUnit};

/// The precision a float was stored with, to print it as briefly as that
/// precision allows (a `float32` 0.1 prints `0.1`, not `0.10000000149011612`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Precision {
    Half,
    BHalf,
    Single,
    Double,
}

/// One element, whatever its data type.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i128),
    Float(f64, Precision),
    Complex(f64, f64, Precision),
    Str(String),
    Bytes(Vec<u8>),
    /// A `numpy.datetime64` count (`i64::MIN` is `NaT`).
    DateTime(i64, TimeUnit, u32),
    /// A `numpy.timedelta64` count (`i64::MIN` is `NaT`).
    TimeDelta(i64),
    /// Raw bits (`r*`, NumPy `V`).
    Raw(Vec<u8>),
    /// A struct's fields, an object array's JSON, a `vlen-array` element.
    Json(Value),
}

fn ne_u64(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    u64::from_ne_bytes(b)
}

fn ne_f32(bytes: &[u8]) -> f32 {
    f32::from_ne_bytes(bytes[..4].try_into().unwrap_or([0; 4]))
}

fn ne_f64(bytes: &[u8]) -> f64 {
    f64::from_ne_bytes(bytes[..8].try_into().unwrap_or([0; 8]))
}

fn ne_u16(bytes: &[u8]) -> u16 {
    u16::from_ne_bytes(bytes[..2].try_into().unwrap_or([0; 2]))
}

/// Decodes one fixed-size element of `data_type` from `bytes` (native
/// byte order, exactly the element's size).
pub fn decode(data_type: &DataType, bytes: &[u8]) -> Scalar {
    use DataType as D;
    match data_type {
        D::Bool => Scalar::Bool(bytes[0] != 0),
        D::Int8 => Scalar::Int(i128::from(bytes[0] as i8)),
        D::Int16 => Scalar::Int(i128::from(ne_u16(bytes) as i16)),
        D::Int32 => Scalar::Int(i128::from(i32::from_ne_bytes(
            bytes[..4].try_into().unwrap_or([0; 4]),
        ))),
        D::Int64 => Scalar::Int(i128::from(ne_u64(bytes) as i64)),
        D::UInt8 => Scalar::Int(i128::from(bytes[0])),
        D::UInt16 => Scalar::Int(i128::from(ne_u16(bytes))),
        D::UInt32 => Scalar::Int(i128::from(u32::from_ne_bytes(
            bytes[..4].try_into().unwrap_or([0; 4]),
        ))),
        D::UInt64 => Scalar::Int(i128::from(ne_u64(bytes))),
        D::Float16 => Scalar::Float(
            f64::from(half::f16::from_bits(ne_u16(bytes))),
            Precision::Half,
        ),
        D::BFloat16 => Scalar::Float(
            f64::from(half::bf16::from_bits(ne_u16(bytes))),
            Precision::BHalf,
        ),
        D::Float32 => Scalar::Float(f64::from(ne_f32(bytes)), Precision::Single),
        D::Float64 => Scalar::Float(ne_f64(bytes), Precision::Double),
        D::SmallFloat(t) => Scalar::Float(f64::from(t.to_f32(bytes[0])), Precision::Single),
        D::SmallInt(t) => Scalar::Int(i128::from(t.to_i8(bytes[0]))),
        D::Complex64 => Scalar::Complex(
            f64::from(ne_f32(bytes)),
            f64::from(ne_f32(&bytes[4..])),
            Precision::Single,
        ),
        D::Complex128 => Scalar::Complex(ne_f64(bytes), ne_f64(&bytes[8..]), Precision::Double),
        D::ComplexFloat16 => Scalar::Complex(
            f64::from(half::f16::from_bits(ne_u16(bytes))),
            f64::from(half::f16::from_bits(ne_u16(&bytes[2..]))),
            Precision::Half,
        ),
        D::ComplexBFloat16 => Scalar::Complex(
            f64::from(half::bf16::from_bits(ne_u16(bytes))),
            f64::from(half::bf16::from_bits(ne_u16(&bytes[2..]))),
            Precision::BHalf,
        ),
        D::ComplexSmallFloat(t) => Scalar::Complex(
            f64::from(t.to_f32(bytes[0])),
            f64::from(t.to_f32(bytes[1])),
            Precision::Single,
        ),
        D::NumpyDateTime64 { unit, scale_factor } => {
            Scalar::DateTime(ne_u64(bytes) as i64, *unit, *scale_factor)
        }
        D::NumpyTimeDelta64 { .. } => Scalar::TimeDelta(ne_u64(bytes) as i64),
        D::FixedBytes(_) => {
            // NumPy drops trailing zero bytes of `S` elements.
            let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            Scalar::Bytes(bytes[..end].to_vec())
        }
        D::FixedUtf32(_) => Scalar::Str(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_ne_bytes(c.try_into().unwrap_or([0; 4])))
                .take_while(|&c| c != 0)
                .map(|c| char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER))
                .collect(),
        ),
        D::Struct(fields) => Scalar::Json(Value::Object(decode_struct(fields, bytes))),
        D::RawBits(_) => Scalar::Raw(bytes.to_vec()),
        // Variable-length types are decoded by `decode_vlen`.
        D::String | D::Bytes | D::VlenArray(_) | D::Object => Scalar::Raw(bytes.to_vec()),
        _ => Scalar::Raw(bytes.to_vec()),
    }
}

/// A struct's fields as a JSON object (sub-array fields as lists).
fn decode_struct(fields: &[StructField], bytes: &[u8]) -> Map<String, Value> {
    let mut map = Map::new();
    let mut offset = 0;
    for field in fields {
        let size = field.data_type.size();
        let value = if field.shape.is_empty() {
            to_json(&decode(&field.data_type, &bytes[offset..offset + size]))
        } else {
            Value::Array(
                bytes[offset..offset + field.size()]
                    .chunks_exact(size.max(1))
                    .map(|e| to_json(&decode(&field.data_type, e)))
                    .collect(),
            )
        };
        offset += field.size();
        map.insert(field.name.clone(), value);
    }
    map
}

/// Decodes one variable-length element (`string`, `bytes`, an object
/// array's JSON text, a `vlen-array` element's native bytes).
pub fn decode_vlen(data_type: &DataType, bytes: &[u8]) -> Scalar {
    match data_type {
        DataType::String => Scalar::Str(String::from_utf8_lossy(bytes).into_owned()),
        DataType::Object => Scalar::Json(
            serde_json::from_slice(bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned())),
        ),
        DataType::VlenArray(inner) => {
            let size = inner.size().max(1);
            Scalar::Json(Value::Array(
                bytes
                    .chunks_exact(size)
                    .map(|e| to_json(&decode(inner, e)))
                    .collect(),
            ))
        }
        _ => Scalar::Bytes(bytes.to_vec()),
    }
}

/// A float printed as briefly as its precision allows, in NumPy's
/// spelling of the special values (`nan`, `inf`, `-inf`).
pub fn float_text(value: f64, precision: Precision) -> String {
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.into();
    }
    let magnitude = value.abs();
    let exponent = magnitude != 0.0 && !(1e-4..1e16).contains(&magnitude);
    #[allow(clippy::cast_possible_truncation)] // Shortest text of the stored precision.
    let text = match (precision, exponent) {
        (Precision::Half | Precision::BHalf, false) => shortest_half(value, precision),
        (Precision::Single, false) => {
            format!("{}", value as f32)
        }
        (Precision::Double, false) => format!("{value}"),
        (Precision::Half | Precision::BHalf | Precision::Single, true) => {
            format!("{:e}", value as f32)
        }
        (Precision::Double, true) => format!("{value:e}"),
    };
    // `1` prints as NumPy's `1.`, so that a float never looks like an integer.
    if text.contains(['.', 'e', 'i', 'n']) {
        text
    } else {
        format!("{text}.")
    }
}

/// The shortest decimal text that reads back as the same `float16` (or
/// `bfloat16`) value, as NumPy prints them.
fn shortest_half(value: f64, precision: Precision) -> String {
    let same = |x: f64| match precision {
        Precision::BHalf => half::bf16::from_f64(x) == half::bf16::from_f64(value),
        _ => half::f16::from_f64(x) == half::f16::from_f64(value),
    };
    for digits in 0..12 {
        let text = format!("{value:.digits$e}");
        if let Ok(x) = text.parse::<f64>()
            && same(x)
        {
            // Plain notation: the nearest f32 of the short decimal prints it.
            #[allow(clippy::cast_possible_truncation)]
            return format!("{}", x as f32);
        }
    }
    #[allow(clippy::cast_possible_truncation)]
    let text = format!("{}", value as f32);
    text
}

/// A float as JSON: a number, or Zarr's fill-value spellings of the
/// special values (`"NaN"`, `"Infinity"`, `"-Infinity"`), since JSON has
/// no such numbers.
fn float_json(value: f64, precision: Precision) -> Value {
    if value.is_nan() {
        return Value::String("NaN".into());
    }
    if value.is_infinite() {
        return Value::String(if value > 0.0 { "Infinity" } else { "-Infinity" }.into());
    }
    // The shortest text of the stored precision, read back as f64: a
    // `float32` 0.1 is 0.1 in JSON.
    let short: f64 = float_text(value, precision)
        .trim_end_matches('.')
        .parse()
        .unwrap_or(value);
    serde_json::Number::from_f64(short).map_or(Value::Null, Value::Number)
}

/// Bytes as a Python bytes literal's body: printable ASCII as is, the rest
/// as `\xNN` escapes.
fn bytes_text(bytes: &[u8]) -> String {
    let mut out = String::new();
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\'' => out.push_str("\\'"),
            b' '..=b'~' => out.push(char::from(b)),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}

/// The element as text in a table or CSV cell: numbers as NumPy prints
/// them, strings bare (`quote` puts them in single quotes, as NumPy's
/// repr does), byte strings as `b'…'`.
pub fn to_text(value: &Scalar, quote: bool) -> String {
    match value {
        Scalar::Bool(b) => if *b { "True" } else { "False" }.into(),
        Scalar::Int(n) => n.to_string(),
        Scalar::Float(x, p) => float_text(*x, *p),
        Scalar::Complex(re, im, p) => {
            let im_text = float_text(*im, *p);
            let sign = if im_text.starts_with('-') { "" } else { "+" };
            format!("{}{sign}{im_text}j", float_text(*re, *p))
        }
        Scalar::Str(s) if quote => format!("'{s}'"),
        Scalar::Str(s) => s.clone(),
        Scalar::Bytes(b) => format!("b'{}'", bytes_text(b)),
        Scalar::DateTime(n, unit, scale) => datetime_text(*n, *unit, *scale),
        Scalar::TimeDelta(n) if *n == i64::MIN => "NaT".into(),
        Scalar::TimeDelta(n) => n.to_string(),
        Scalar::Raw(b) => {
            let hex: String = b.iter().map(|b| format!("{b:02x}")).collect();
            format!("0x{hex}")
        }
        Scalar::Json(v) => v.to_string(),
    }
}

/// The element as a table shows it: as [`to_text`] with strings quoted,
/// and floats rounded to 8 decimals as NumPy prints arrays (`0.33333333`);
/// CSV and JSON keep every digit.
pub fn to_table_text(value: &Scalar) -> String {
    let round = |x: f64, p: Precision| {
        let text = float_text(x, p);
        let decimals = text.split_once('.').map_or(0, |(_, f)| f.len());
        if decimals <= 8 || text.contains(['e', 'n']) {
            return text;
        }
        let rounded = format!("{x:.8}");
        let trimmed = rounded.trim_end_matches('0');
        trimmed.to_string()
    };
    match value {
        Scalar::Float(x, p) => round(*x, *p),
        Scalar::Complex(re, im, p) => {
            let im_text = round(*im, *p);
            let sign = if im_text.starts_with('-') { "" } else { "+" };
            format!("{}{sign}{im_text}j", round(*re, *p))
        }
        other => to_text(other, true),
    }
}

/// The element as JSON (see the module's documentation).
pub fn to_json(value: &Scalar) -> Value {
    match value {
        Scalar::Bool(b) => Value::Bool(*b),
        Scalar::Int(n) => i64::try_from(*n)
            .map(Value::from)
            .or_else(|_| u64::try_from(*n).map(Value::from))
            .unwrap_or_else(|_| Value::String(n.to_string())),
        Scalar::Float(x, p) => float_json(*x, *p),
        Scalar::Complex(re, im, p) => Value::Array(vec![float_json(*re, *p), float_json(*im, *p)]),
        Scalar::Str(s) => Value::String(s.clone()),
        // Byte strings as text when they are UTF-8 (as most `S` data is),
        // else as `{"base64": …}`.
        Scalar::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => Value::String(s.to_string()),
            Err(_) => serde_json::json!({ "base64": base64_encode(b) }),
        },
        Scalar::DateTime(n, unit, scale) => Value::String(datetime_text(*n, *unit, *scale)),
        Scalar::TimeDelta(n) if *n == i64::MIN => Value::String("NaT".into()),
        Scalar::TimeDelta(n) => Value::from(*n),
        Scalar::Raw(_) => Value::String(to_text(value, false)),
        Scalar::Json(v) => v.clone(),
    }
}

/// Standard base64 with padding (RFC 4648).
fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for group in bytes.chunks(3) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= group.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian
/// (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
fn civil_from_days(days: i128) -> (i128, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i128::from(month <= 2);
    (year, month, day)
}

/// (year, month, day) → days since 1970-01-01.
fn days_from_civil(year: i128, month: u32, day: u32) -> i128 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let month = i128::from(month);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + i128::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Sub-second digits of each unit finer than a second, and units per second.
fn subsecond(unit: TimeUnit) -> Option<(usize, i128)> {
    Some(match unit {
        TimeUnit::Millisecond => (3, 1_000),
        TimeUnit::Microsecond => (6, 1_000_000),
        TimeUnit::Nanosecond => (9, 1_000_000_000),
        TimeUnit::Picosecond => (12, 1_000_000_000_000),
        TimeUnit::Femtosecond => (15, 1_000_000_000_000_000),
        TimeUnit::Attosecond => (18, 1_000_000_000_000_000_000),
        _ => return None,
    })
}

/// A `numpy.datetime64` count as NumPy prints it (`numpy.datetime_as_string`):
/// ISO 8601 to the unit's precision, `NaT` for `i64::MIN`.
pub fn datetime_text(count: i64, unit: TimeUnit, scale: u32) -> String {
    if count == i64::MIN {
        return "NaT".into();
    }
    let n = i128::from(count) * i128::from(scale);
    let date = |days: i128| {
        let (y, m, d) = civil_from_days(days);
        format!("{y:04}-{m:02}-{d:02}")
    };
    let time = |seconds: i128, parts: usize| {
        let days = seconds.div_euclid(86_400);
        let s = seconds.rem_euclid(86_400);
        let (h, min, sec) = (s / 3600, s / 60 % 60, s % 60);
        let clock = match parts {
            1 => format!("{h:02}"),
            2 => format!("{h:02}:{min:02}"),
            _ => format!("{h:02}:{min:02}:{sec:02}"),
        };
        format!("{}T{clock}", date(days))
    };
    match unit {
        TimeUnit::Year => format!("{}", 1970 + n),
        TimeUnit::Month => {
            let (y, m) = (1970 + n.div_euclid(12), n.rem_euclid(12) + 1);
            format!("{y}-{m:02}")
        }
        TimeUnit::Week => date(n * 7),
        TimeUnit::Day => date(n),
        TimeUnit::Hour => time(n * 3600, 1),
        TimeUnit::Minute => time(n * 60, 2),
        TimeUnit::Second => time(n, 3),
        TimeUnit::Generic => n.to_string(),
        fine => match subsecond(fine) {
            Some((digits, per_second)) => {
                let (s, frac) = (n.div_euclid(per_second), n.rem_euclid(per_second));
                format!("{}.{frac:0digits$}", time(s, 3))
            }
            None => n.to_string(),
        },
    }
}

/// Parses an ISO 8601 date or date-time (`2020`, `2020-03`, `2020-03-05`,
/// `2020-03-05T13:45:10.25`, a space for the `T`, a trailing `Z`) into a
/// count of `unit` × `scale`; refuses a value finer than the unit.
fn parse_datetime(text: &str, unit: TimeUnit, scale: u32) -> anyhow::Result<i64> {
    let bad = || anyhow!("`{text}` is not an ISO 8601 date or time such as `2020-03-05T13:45:10`");
    let t = text.trim().trim_end_matches('Z');
    let (date, clock) = match t.split_once(['T', ' ']) {
        Some((d, c)) => (d, Some(c)),
        None => (t, None),
    };
    let (negative, date) = match date.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, date),
    };
    let mut parts = date.split('-');
    let year: i128 = parts.next().and_then(|y| y.parse().ok()).ok_or_else(bad)?;
    let year = if negative { -year } else { year };
    let month: u32 = parts.next().map_or(Ok(1), str::parse).map_err(|_| bad())?;
    let day: u32 = parts.next().map_or(Ok(1), str::parse).map_err(|_| bad())?;
    if parts.next().is_some() || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return Err(bad());
    }
    let days = days_from_civil(year, month, day);
    // The instant in attoseconds, the finest unit, then in the array's unit.
    let mut attos: i128 = days * 86_400 * 1_000_000_000_000_000_000;
    if let Some(clock) = clock {
        let (hms, frac) = clock.split_once('.').unwrap_or((clock, ""));
        let mut fields = hms.split(':').map(str::parse::<i128>);
        let h = fields.next().transpose().map_err(|_| bad())?.unwrap_or(0);
        let m = fields.next().transpose().map_err(|_| bad())?.unwrap_or(0);
        let s = fields.next().transpose().map_err(|_| bad())?.unwrap_or(0);
        if fields.next().is_some() || frac.len() > 18 || !frac.chars().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        let frac_attos: i128 = if frac.is_empty() {
            0
        } else {
            format!("{frac:0<18}").parse().map_err(|_| bad())?
        };
        attos += (h * 3600 + m * 60 + s) * 1_000_000_000_000_000_000 + frac_attos;
    }
    let count = match unit {
        TimeUnit::Year | TimeUnit::Month => {
            if attos != days_from_civil(year, month, 1) * 86_400 * 1_000_000_000_000_000_000
                || (unit == TimeUnit::Year && month != 1)
            {
                bail!("`{text}` is finer than the array's unit `{}`", unit.name());
            }
            if unit == TimeUnit::Year {
                year - 1970
            } else {
                (year - 1970) * 12 + i128::from(month) - 1
            }
        }
        TimeUnit::Generic => bail!("a generic datetime takes an integer count, not `{text}`"),
        unit => {
            let per: i128 = match unit {
                TimeUnit::Week => 7 * 86_400 * 1_000_000_000_000_000_000,
                TimeUnit::Day => 86_400 * 1_000_000_000_000_000_000,
                TimeUnit::Hour => 3600 * 1_000_000_000_000_000_000,
                TimeUnit::Minute => 60 * 1_000_000_000_000_000_000,
                TimeUnit::Second => 1_000_000_000_000_000_000,
                fine => {
                    1_000_000_000_000_000_000
                        / subsecond(fine).map_or(1_000_000_000_000_000_000, |(_, p)| p)
                }
            };
            if attos.rem_euclid(per) != 0 {
                bail!("`{text}` is finer than the array's unit `{}`", unit.name());
            }
            attos.div_euclid(per)
        }
    };
    let scale = i128::from(scale.max(1));
    if count.rem_euclid(scale) != 0 {
        bail!(
            "`{text}` is not a multiple of the array's unit of {scale} `{}`",
            unit.name()
        );
    }
    i64::try_from(count / scale)
        .ok()
        .filter(|&c| c != i64::MIN)
        .with_context(|| format!("`{text}` is out of range for the array's datetime"))
}

/// How strictly values are converted into the array's data type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Casting {
    /// Only conversions that keep every value exactly (as stored), and
    /// never out of range.
    Exact,
    /// Also those that round or truncate (float to int toward zero, a
    /// wider float to a narrower one, int to float, dropping a complex
    /// number's zero or non-zero imaginary part, a non-zero int to `True`);
    /// out of range is still refused (`--cast`).
    Cast,
}

/// Parses `text` as one element of `data_type` (the rules of `zarrkit set
/// --value`): integers in range, floats (`nan`, `inf`, `-inf`,
/// `Infinity`), `true`/`false`, complex `1+2j` or `[1, 2]`, strings as
/// they are (or a JSON string literal), datetimes in ISO 8601 or `NaT`,
/// raw bits as `0x…`, structs and object elements as JSON.
///
/// # Errors
/// If the text is not a value of the data type, or is out of its range.
pub fn parse_value(text: &str, data_type: &DataType) -> anyhow::Result<Scalar> {
    use DataType as D;
    let t = text.trim();
    let json = || serde_json::from_str::<Value>(t).ok();
    Ok(match data_type {
        D::Bool => match t {
            "true" | "True" | "TRUE" | "1" => Scalar::Bool(true),
            "false" | "False" | "FALSE" | "0" => Scalar::Bool(false),
            _ => bail!("`{text}` is not a boolean (true or false)"),
        },
        D::Int8
        | D::Int16
        | D::Int32
        | D::Int64
        | D::UInt8
        | D::UInt16
        | D::UInt32
        | D::UInt64
        | D::SmallInt(_) => Scalar::Int(
            t.replace('_', "")
                .parse()
                .map_err(|_| anyhow!("`{text}` is not an integer"))?,
        ),
        D::Float16 | D::BFloat16 | D::Float32 | D::Float64 | D::SmallFloat(_) => {
            Scalar::Float(parse_float(t)?, Precision::Double)
        }
        D::Complex64
        | D::Complex128
        | D::ComplexFloat16
        | D::ComplexBFloat16
        | D::ComplexSmallFloat(_) => {
            let (re, im) = parse_complex(t)?;
            Scalar::Complex(re, im, Precision::Double)
        }
        D::NumpyDateTime64 { unit, scale_factor } => {
            if t == "NaT" {
                Scalar::DateTime(i64::MIN, *unit, *scale_factor)
            } else if let Ok(n) = t.parse::<i64>() {
                Scalar::DateTime(n, *unit, *scale_factor)
            } else {
                Scalar::DateTime(
                    parse_datetime(t, *unit, *scale_factor)?,
                    *unit,
                    *scale_factor,
                )
            }
        }
        D::NumpyTimeDelta64 { .. } => {
            if t == "NaT" {
                Scalar::TimeDelta(i64::MIN)
            } else {
                Scalar::TimeDelta(
                    t.parse()
                        .map_err(|_| anyhow!("`{text}` is not an integer count or `NaT`"))?,
                )
            }
        }
        D::String | D::FixedUtf32(_) => match json() {
            Some(Value::String(s)) if t.starts_with('"') => Scalar::Str(s),
            _ => Scalar::Str(text.to_string()),
        },
        D::Bytes | D::FixedBytes(_) => match json() {
            Some(Value::String(s)) if t.starts_with('"') => Scalar::Bytes(s.into_bytes()),
            _ => Scalar::Bytes(text.as_bytes().to_vec()),
        },
        D::RawBits(_) => {
            let hex = t
                .strip_prefix("0x")
                .ok_or_else(|| anyhow!("`{text}` is not raw bits written as `0x…` hex digits"))?;
            if hex.len() % 2 != 0 {
                bail!("`{text}` has an odd number of hex digits");
            }
            Scalar::Raw(
                (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
                    .collect::<Result<_, _>>()
                    .map_err(|_| anyhow!("`{text}` is not hex digits"))?,
            )
        }
        D::Object => Scalar::Json(json().unwrap_or_else(|| Value::String(text.to_string()))),
        D::Struct(_) | D::VlenArray(_) => Scalar::Json(
            json()
                .ok_or_else(|| anyhow!("`{text}` is not JSON ({data_type} takes a JSON value)"))?,
        ),
        _ => bail!("cannot parse a value of data type `{data_type}`"),
    })
}

fn parse_float(t: &str) -> anyhow::Result<f64> {
    let lower = t.to_ascii_lowercase();
    Ok(match lower.trim_start_matches('+') {
        "nan" => f64::NAN,
        "inf" | "infinity" => f64::INFINITY,
        "-inf" | "-infinity" => f64::NEG_INFINITY,
        other => other
            .replace('_', "")
            .parse()
            .map_err(|_| anyhow!("`{t}` is not a number"))?,
    })
}

/// `1+2j`, `(1-2.5j)`, `2j`, `3`, or `[re, im]`.
fn parse_complex(t: &str) -> anyhow::Result<(f64, f64)> {
    if let Ok(Value::Array(pair)) = serde_json::from_str::<Value>(t) {
        let part = |v: &Value| match v {
            Value::Number(n) => n
                .as_f64()
                .ok_or_else(|| anyhow!("`{t}` is not a number pair")),
            Value::String(s) => parse_float(s),
            _ => bail!("`{t}` is not a pair [re, im] of numbers"),
        };
        if let [re, im] = pair.as_slice() {
            return Ok((part(re)?, part(im)?));
        }
        bail!("`{t}` is not a pair [re, im]");
    }
    let s = t
        .trim_start_matches('(')
        .trim_end_matches(')')
        .replace(' ', "");
    let Some(body) = s.strip_suffix(['j', 'J']) else {
        return Ok((parse_float(&s)?, 0.0));
    };
    // The sign that starts the imaginary part: the last `+`/`-` not at the
    // start and not after an exponent's `e`.
    let bytes = body.as_bytes();
    let split = (1..bytes.len())
        .rev()
        .find(|&i| matches!(bytes[i], b'+' | b'-') && !matches!(bytes[i - 1], b'e' | b'E'));
    Ok(match split {
        Some(i) => (parse_float(&body[..i])?, parse_float(&body[i..])?),
        None => (0.0, parse_float(body)?),
    })
}

/// The conversion error of one element.
fn refuse(value: &Scalar, data_type: &DataType, why: &str) -> anyhow::Error {
    anyhow!("{} {why} `{data_type}`", to_text(value, true))
}

/// Encodes `value` as one element of `data_type` (native byte order),
/// appending to `out`, with range checks and `casting`'s rules.
///
/// # Errors
/// If the value does not fit the data type, or fits only by a lossy
/// conversion that `casting` does not allow.
#[allow(clippy::too_many_lines, clippy::cast_possible_truncation)]
pub fn encode(
    value: &Scalar,
    data_type: &DataType,
    casting: Casting,
    out: &mut Vec<u8>,
) -> anyhow::Result<()> {
    use DataType as D;
    let lossy = casting == Casting::Cast;
    match data_type {
        D::Bool => {
            let b = match value {
                Scalar::Bool(b) => *b,
                Scalar::Int(0) => false,
                Scalar::Int(1) => true,
                Scalar::Int(_) if lossy => true,
                _ => return Err(refuse(value, data_type, "is not a value of")),
            };
            out.push(u8::from(b));
        }
        D::Int8
        | D::Int16
        | D::Int32
        | D::Int64
        | D::UInt8
        | D::UInt16
        | D::UInt32
        | D::UInt64
        | D::SmallInt(_) => {
            let n = as_int(value, data_type, lossy)?;
            let (min, max): (i128, i128) = match data_type {
                D::Int8 => (i8::MIN.into(), i8::MAX.into()),
                D::Int16 => (i16::MIN.into(), i16::MAX.into()),
                D::Int32 => (i32::MIN.into(), i32::MAX.into()),
                D::Int64 => (i64::MIN.into(), i64::MAX.into()),
                D::UInt8 => (0, u8::MAX.into()),
                D::UInt16 => (0, u16::MAX.into()),
                D::UInt32 => (0, u32::MAX.into()),
                D::SmallInt(t) => {
                    let (lo, hi) = t.range();
                    (lo.into(), hi.into())
                }
                _ => (0, u64::MAX.into()),
            };
            if n < min || n > max {
                bail!("{n} is out of range for `{data_type}` ({min}..={max})");
            }
            match data_type {
                D::SmallInt(t) => out.push(small_int(*t, n)?),
                D::Int8 | D::UInt8 => out.push(n as u8),
                D::Int16 | D::UInt16 => out.extend_from_slice(&(n as u16).to_ne_bytes()),
                D::Int32 | D::UInt32 => out.extend_from_slice(&(n as u32).to_ne_bytes()),
                _ => out.extend_from_slice(&(n as u64).to_ne_bytes()),
            }
        }
        D::Float16 | D::BFloat16 | D::Float32 | D::Float64 | D::SmallFloat(_) => {
            let x = as_float(value, data_type, lossy)?;
            encode_float(x, data_type, lossy, out).map_err(|e| refuse(value, data_type, &e))?;
        }
        D::Complex64
        | D::Complex128
        | D::ComplexFloat16
        | D::ComplexBFloat16
        | D::ComplexSmallFloat(_) => {
            let (re, im) = match value {
                Scalar::Complex(re, im, _) => (*re, *im),
                other => (as_float(other, &D::Float64, lossy)?, 0.0),
            };
            let part = match data_type {
                D::Complex64 => D::Float32,
                D::Complex128 => D::Float64,
                D::ComplexFloat16 => D::Float16,
                D::ComplexBFloat16 => D::BFloat16,
                D::ComplexSmallFloat(t) => D::SmallFloat(*t),
                _ => unreachable!(),
            };
            for x in [re, im] {
                encode_float(x, &part, lossy, out).map_err(|e| refuse(value, data_type, &e))?;
            }
        }
        D::NumpyDateTime64 { unit, scale_factor } => {
            let n = match value {
                Scalar::DateTime(n, u, s) if u == unit && s == scale_factor => *n,
                // NaT is NaT in every unit.
                Scalar::DateTime(i64::MIN, ..) => i64::MIN,
                // Another unit: converted through the instant it names, exactly.
                Scalar::DateTime(n, u, s) => {
                    parse_datetime(&datetime_text(*n, *u, *s), *unit, *scale_factor)
                        .map_err(|e| refuse(value, data_type, &format!("({e}) does not fit")))?
                }
                _ => return Err(refuse(value, data_type, "is not a value of")),
            };
            out.extend_from_slice(&n.to_ne_bytes());
        }
        D::NumpyTimeDelta64 { .. } => match value {
            Scalar::TimeDelta(n) => out.extend_from_slice(&n.to_ne_bytes()),
            _ => return Err(refuse(value, data_type, "is not a value of")),
        },
        D::FixedUtf32(n) => {
            let s = as_str(value, data_type)?;
            let chars = s.chars().count();
            if chars > n / 4 {
                bail!(
                    "'{s}' has {chars} characters, more than the {} of `{data_type}`",
                    n / 4
                );
            }
            let start = out.len();
            for c in s.chars() {
                out.extend_from_slice(&u32::from(c).to_ne_bytes());
            }
            out.resize(start + n, 0);
        }
        D::FixedBytes(n) => {
            let b = as_bytes(value, data_type)?;
            if b.len() > *n {
                bail!(
                    "{} has {} bytes, more than the {n} of `{data_type}`",
                    to_text(value, true),
                    b.len()
                );
            }
            let start = out.len();
            out.extend_from_slice(&b);
            out.resize(start + n, 0);
        }
        D::RawBits(bits) => match value {
            Scalar::Raw(b) if b.len() * 8 == *bits => out.extend_from_slice(b),
            _ => {
                return Err(refuse(
                    value,
                    data_type,
                    &format!("is not {} bytes of", bits / 8),
                ));
            }
        },
        D::Struct(fields) => {
            let Scalar::Json(Value::Object(map)) = value else {
                return Err(refuse(value, data_type, "is not a JSON object for"));
            };
            for key in map.keys() {
                if !fields.iter().any(|f| &f.name == key) {
                    bail!("`{data_type}` has no field `{key}`");
                }
            }
            for field in fields {
                let item = map
                    .get(&field.name)
                    .with_context(|| format!("the field `{}` is missing", field.name))?;
                let items: Vec<&Value> = if field.shape.is_empty() {
                    vec![item]
                } else {
                    let Value::Array(list) = item else {
                        bail!("the field `{}` takes a list", field.name);
                    };
                    if list.len() != field.count() {
                        bail!(
                            "the field `{}` takes {} values, not {}",
                            field.name,
                            field.count(),
                            list.len()
                        );
                    }
                    list.iter().collect()
                };
                for item in items {
                    let text = match item {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    let scalar = parse_value(&text, &field.data_type)
                        .with_context(|| format!("the field `{}`", field.name))?;
                    encode(&scalar, &field.data_type, casting, out)
                        .with_context(|| format!("the field `{}`", field.name))?;
                }
            }
        }
        _ => bail!("cannot write elements of data type `{data_type}` this way"),
    }
    Ok(())
}

fn small_int(t: SmallInt, n: i128) -> anyhow::Result<u8> {
    Ok(t.from_i64(i64::try_from(n)?)?)
}

fn as_int(value: &Scalar, data_type: &DataType, lossy: bool) -> anyhow::Result<i128> {
    match value {
        Scalar::Int(n) => Ok(*n),
        Scalar::Bool(b) => Ok(i128::from(*b)),
        Scalar::Float(x, _) | Scalar::Complex(x, _, _) => {
            if let Scalar::Complex(_, im, _) = value
                && *im != 0.0
                && !lossy
            {
                return Err(refuse(value, data_type, "has an imaginary part, lost in"));
            }
            if !x.is_finite() {
                return Err(refuse(value, data_type, "is not representable in"));
            }
            if x.fract() != 0.0 && !lossy {
                return Err(refuse(
                    value,
                    data_type,
                    "is not an integer (--cast truncates it) for",
                ));
            }
            let t = x.trunc();
            if t.abs() > 1.8e38 {
                return Err(refuse(value, data_type, "is out of range for"));
            }
            #[allow(clippy::cast_possible_truncation)] // Checked above.
            Ok(t as i128)
        }
        _ => Err(refuse(value, data_type, "is not a value of")),
    }
}

#[allow(clippy::cast_precision_loss)]
fn as_float(value: &Scalar, data_type: &DataType, lossy: bool) -> anyhow::Result<f64> {
    match value {
        Scalar::Float(x, _) => Ok(*x),
        Scalar::Bool(b) => Ok(f64::from(u8::from(*b))),
        Scalar::Int(n) => {
            let x = *n as f64;
            if !lossy && x as i128 != *n {
                return Err(refuse(
                    value,
                    data_type,
                    "is not exactly representable (--cast rounds it) in",
                ));
            }
            Ok(x)
        }
        Scalar::Complex(re, im, _) => {
            if *im != 0.0 && !lossy {
                return Err(refuse(
                    value,
                    data_type,
                    "has an imaginary part (--cast drops it), lost in",
                ));
            }
            Ok(*re)
        }
        _ => Err(refuse(value, data_type, "is not a value of")),
    }
}

/// Encodes a float into a float type: a finite value that overflows is
/// refused, one that rounds is refused unless `lossy`.
#[allow(clippy::cast_possible_truncation)]
fn encode_float(
    x: f64,
    data_type: &DataType,
    lossy: bool,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let check = |back: f64| -> Result<(), String> {
        if x.is_finite() && !back.is_finite() {
            return Err("is out of range for".into());
        }
        if !lossy && x.is_finite() && back != x {
            return Err("is not exactly representable (--cast rounds it) in".into());
        }
        Ok(())
    };
    match data_type {
        DataType::Float64 => out.extend_from_slice(&x.to_ne_bytes()),
        DataType::Float32 => {
            let v = x as f32;
            check(f64::from(v))?;
            out.extend_from_slice(&v.to_ne_bytes());
        }
        DataType::Float16 => {
            let v = half::f16::from_f64(x);
            check(f64::from(v))?;
            out.extend_from_slice(&v.to_bits().to_ne_bytes());
        }
        DataType::BFloat16 => {
            let v = half::bf16::from_f64(x);
            check(f64::from(v))?;
            out.extend_from_slice(&v.to_bits().to_ne_bytes());
        }
        DataType::SmallFloat(t) => {
            let bits = small_float(*t, x).map_err(|e| format!("({e}) cannot be stored in"))?;
            check(f64::from(t.to_f32(bits)))?;
            out.push(bits);
        }
        _ => return Err("is not a value of".into()),
    }
    Ok(())
}

fn small_float(t: SmallFloat, x: f64) -> Result<u8, zarrkit::metadata::SmallTypeError> {
    t.from_f64(x)
}

fn as_str(value: &Scalar, data_type: &DataType) -> anyhow::Result<String> {
    match value {
        Scalar::Str(s) => Ok(s.clone()),
        Scalar::Bytes(b) => String::from_utf8(b.clone())
            .map_err(|_| refuse(value, data_type, "is not UTF-8 text for")),
        _ => Err(refuse(value, data_type, "is not a string for")),
    }
}

fn as_bytes(value: &Scalar, data_type: &DataType) -> anyhow::Result<Vec<u8>> {
    match value {
        Scalar::Bytes(b) => Ok(b.clone()),
        Scalar::Str(s) => Ok(s.clone().into_bytes()),
        _ => Err(refuse(value, data_type, "is not a byte string for")),
    }
}

/// The bytes of one variable-length element of `data_type` (`string`:
/// UTF-8; `bytes`: the bytes; an object array: compact JSON text).
///
/// # Errors
/// If the value is not one of the data type.
pub fn encode_vlen(value: &Scalar, data_type: &DataType) -> anyhow::Result<Vec<u8>> {
    match data_type {
        DataType::String => Ok(as_str(value, data_type)?.into_bytes()),
        DataType::Bytes => as_bytes(value, data_type),
        DataType::Object => Ok(to_json(value).to_string().into_bytes()),
        other => bail!("cannot write elements of data type `{other}` this way"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(text: &str, data_type: &DataType) -> anyhow::Result<String> {
        let mut out = Vec::new();
        // As `set --value` encodes: text rounds to the nearest float.
        encode(
            &parse_value(text, data_type)?,
            data_type,
            Casting::Cast,
            &mut out,
        )?;
        Ok(to_text(&decode(data_type, &out), false))
    }

    #[test]
    fn values_parse_and_print_per_data_type() {
        assert_eq!(roundtrip("-128", &DataType::Int8).unwrap(), "-128");
        assert!(
            roundtrip("128", &DataType::Int8)
                .unwrap_err()
                .to_string()
                .contains("128 is out of range for `int8` (-128..=127)")
        );
        assert_eq!(
            roundtrip("18446744073709551615", &DataType::UInt64).unwrap(),
            "18446744073709551615"
        );
        assert_eq!(roundtrip("0.1", &DataType::Float32).unwrap(), "0.1");
        assert_eq!(roundtrip("2", &DataType::Float64).unwrap(), "2.");
        assert_eq!(roundtrip("-Infinity", &DataType::Float16).unwrap(), "-inf");
        let mut out = Vec::new();
        let tenth = Scalar::Float(0.1, Precision::Double);
        encode(&tenth, &DataType::Float16, Casting::Cast, &mut out).unwrap();
        assert_eq!(to_text(&decode(&DataType::Float16, &out), false), "0.1");
        assert_eq!(roundtrip("nan", &DataType::Float64).unwrap(), "nan");
        assert!(roundtrip("1e300", &DataType::Float32).is_err());
        assert_eq!(roundtrip("True", &DataType::Bool).unwrap(), "True");
        assert_eq!(
            roundtrip("1-2.5j", &DataType::Complex64).unwrap(),
            "1.-2.5j"
        );
        assert_eq!(
            roundtrip("[0, 3]", &DataType::Complex128).unwrap(),
            "0.+3.j"
        );
        assert_eq!(
            roundtrip("héllo", &DataType::FixedUtf32(20)).unwrap(),
            "héllo"
        );
        assert!(roundtrip("toolong", &DataType::FixedUtf32(8)).is_err());
        assert_eq!(roundtrip("ab", &DataType::FixedBytes(4)).unwrap(), "b'ab'");
        let seconds = DataType::NumpyDateTime64 {
            unit: TimeUnit::Second,
            scale_factor: 1,
        };
        assert_eq!(
            roundtrip("2020-03-05T13:45:10", &seconds).unwrap(),
            "2020-03-05T13:45:10"
        );
        assert_eq!(roundtrip("NaT", &seconds).unwrap(), "NaT");
        assert!(roundtrip("2020-03-05T13:45:10.5", &seconds).is_err());
    }

    #[test]
    fn datetimes_print_as_numpy_does() {
        assert_eq!(datetime_text(0, TimeUnit::Day, 1), "1970-01-01");
        assert_eq!(datetime_text(-1, TimeUnit::Day, 1), "1969-12-31");
        assert_eq!(datetime_text(18_326, TimeUnit::Day, 1), "2020-03-05");
        assert_eq!(datetime_text(601, TimeUnit::Month, 1), "2020-02");
        assert_eq!(
            datetime_text(1_500, TimeUnit::Millisecond, 1),
            "1970-01-01T00:00:01.500"
        );
        assert_eq!(
            datetime_text(-1, TimeUnit::Second, 10),
            "1969-12-31T23:59:50"
        );
        // From a `.npy` of another unit: exact conversions only.
        let seconds = DataType::NumpyDateTime64 {
            unit: TimeUnit::Second,
            scale_factor: 1,
        };
        let days = DataType::NumpyDateTime64 {
            unit: TimeUnit::Day,
            scale_factor: 1,
        };
        let mut out = Vec::new();
        let one_day = Scalar::DateTime(1, TimeUnit::Day, 1);
        encode(&one_day, &seconds, Casting::Exact, &mut out).unwrap();
        assert_eq!(out, 86_400i64.to_ne_bytes());
        let one_second = Scalar::DateTime(1, TimeUnit::Second, 1);
        assert!(encode(&one_second, &days, Casting::Exact, &mut Vec::new()).is_err());
    }

    #[test]
    fn lossy_conversions_need_cast() {
        let f = Scalar::Float(2.5, Precision::Double);
        let mut out = Vec::new();
        assert!(encode(&f, &DataType::Int32, Casting::Exact, &mut out).is_err());
        encode(&f, &DataType::Int32, Casting::Cast, &mut out).unwrap();
        assert_eq!(out, 2i32.to_ne_bytes());
        let big = Scalar::Int(1 << 60 | 1);
        assert!(encode(&big, &DataType::Float64, Casting::Exact, &mut out).is_err());
        // Out of range is refused even with --cast.
        let f = Scalar::Float(300.0, Precision::Double);
        assert!(encode(&f, &DataType::UInt8, Casting::Cast, &mut Vec::new()).is_err());
    }

    #[test]
    fn json_spells_special_floats_as_zarr_fill_values() {
        assert_eq!(to_json(&Scalar::Float(f64::NAN, Precision::Double)), "NaN");
        assert_eq!(
            to_json(&Scalar::Float(f64::NEG_INFINITY, Precision::Single)),
            "-Infinity"
        );
        assert_eq!(
            to_json(&Scalar::Float(f64::from(0.1f32), Precision::Single)),
            0.1
        );
        assert_eq!(base64_encode(b"fo\xff"), "Zm//");
    }
}
