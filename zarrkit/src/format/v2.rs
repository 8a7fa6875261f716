//! Zarr v2: `.zarray`, `.zgroup` and `.zattrs` documents ↔ the internal model.
//!
//! Spec: `final/v2/v2.0.rst` ("Metadata", "Data type encoding", "Fill value
//! encoding", "Chunks", "Hierarchies", "Attributes"); the compressors are
//! numcodecs'.
//!
//! The model is shaped on v3, so a v2 array maps onto it like this:
//!
//! | `.zarray` | model |
//! | --- | --- |
//! | `shape`, `chunks` | `shape`, a `regular` grid |
//! | `dtype` `"<i4"` | `int32`, and a `bytes` codec with `endian` `little` (`>`: `big`; `\|`: none) |
//! | `order` `"F"` | a `transpose` codec with the reversed permutation before `bytes` (`"C"`: none) |
//! | `filters` | numcodecs array filters (`delta`, `fixedscaleoffset`, `quantize`, `bitround`, `astype`, `packbits`) as array→array codecs before `bytes`, whose endianness is that of the last filter's output type; byte filters (`shuffle`, `crc32`, `adler32`, `fletcher32`, `jenkins_lookup3`, and `crc32c` as the v3 `crc32c` codec) as bytes→bytes codecs after `bytes`; `categorize` is refused (its labels are strings). On write the last bytes→bytes codec is the compressor and any before it are filters |
//! | `compressor` | one bytes→bytes codec after `bytes` and the byte filters (a compressor, a checksum or `shuffle`), or none for `null` |
//! | `dimension_separator` `.` (the default) or `/` | the `v2` chunk key encoding with that separator |
//! | `fill_value` | `fill_value` (see below) |
//! | `.zattrs` (absent: `{}`) | `attributes` |
//!
//! Data types: `|b1` `bool`; `|i1`, `<i2`…`>i8` `int8`…`int64`; `|u1`…`>u8`
//! `uint8`…`uint64`; `<f2`…`>f8` `float16`…`float64`; `<c8`, `<c16` (both
//! byte orders) `complex64`, `complex128`; `|V<n>` `r<8n>`. Strings,
//! datetimes, objects and structured types are not supported yet.
//!
//! Compressors by numcodecs id: `blosc` (its integer `shuffle`, with -1
//! meaning bit-shuffle for 1-byte elements and byte-shuffle otherwise, as
//! numcodecs' `AUTOSHUFFLE`; `typesize` is the element size) → v3 `blosc`;
//! `zstd` → v3 `zstd`; `gzip` → v3 `gzip`; `zlib`, `bz2`, `lzma`, `lz4` →
//! `numcodecs.zlib`, `numcodecs.bz2`, `numcodecs.lzma`, `numcodecs.lz4`, the
//! names zarr-python 3.1 gives them in v3 metadata, so a v2 array rewritten
//! as v3 opens in zarr-python. An unknown id is an error naming it.
//!
//! Fill values: numbers; `"NaN"`, `"Infinity"`, `"-Infinity"` and the bare,
//! non-standard JSON tokens `NaN`, `Infinity`, `-Infinity` that Python's
//! `json` writes (accepted on reading only); `[re, im]` for complex numbers;
//! integers up to 2^64-1 for `<u8`; base64 for `|V<n>`. `null` means "no
//! fill value" in v2 and the spec leaves unwritten chunks undefined; the
//! model has no such state, so `null` reads as zero (what zarr-python 3.1
//! returns for it) and is remembered in `extra_fields` under the name
//! `fill_value` ([`NULL_FILL_VALUE_FIELD`]), which writing v2 turns back into
//! `null` and v3 writing leaves out (it writes the model's zero).
//!
//! Writing is canonical: keys sorted (as zarr-python 2), `filters: null`,
//! `dimension_separator` always written, NaN with a payload written as
//! `"NaN"` (v2 has no bit-pattern form). A model that v2 cannot express
//! (another codec, a second compressor, a transpose other than F order,
//! dimension names, storage transformers) is a
//! [`MetadataError::NotRepresentable`] naming what.
//!
//! ```
//! use zarrkit::format::v2;
//! use zarrkit::metadata::DataType;
//!
//! let zarray = br#"{"zarr_format": 2, "shape": [10], "chunks": [5], "dtype": ">f8",
//!     "compressor": {"id": "zlib", "level": 1}, "fill_value": NaN, "order": "C",
//!     "filters": null}"#;
//! let array = v2::parse_array(zarray, None)?;
//! assert_eq!(array.data_type, DataType::Float64);
//! assert_eq!(array.codecs[0].name, "bytes");
//! assert_eq!(array.codecs[1].name, "numcodecs.zlib");
//! # Ok::<(), zarrkit::metadata::MetadataError>(())
//! ```

use super::v3;
use crate::metadata::{
    ArrayMetadata, ChunkGrid, ChunkKeyEncoding, DataType, ExtensionObject, FillValue,
    GroupMetadata, JsonMap, MetadataError, Separator, TimeUnit,
};
use serde_json::Value;

/// The key of an array's document.
pub const ARRAY_KEY: &str = ".zarray";
/// The key of a group's document.
pub const GROUP_KEY: &str = ".zgroup";
/// The key of a node's attributes.
pub const ATTRIBUTES_KEY: &str = ".zattrs";

/// The `extra_fields` entry that records a v2 `"fill_value": null`. Its
/// name is a v3 core field, so the v3 writer never writes it (the model's
/// own fill value wins).
pub const NULL_FILL_VALUE_FIELD: &str = "fill_value";

/// The top-level fields of `.zarray` that this module interprets. Others
/// are ignored, as v2 "Metadata" asks ("SHOULD be ignored").
pub const ARRAY_FIELDS: &[&str] = &[
    "zarr_format",
    "shape",
    "chunks",
    "dtype",
    "compressor",
    "fill_value",
    "order",
    "filters",
    "dimension_separator",
];

fn required<'a>(doc: &'a JsonMap, field: &'static str) -> Result<&'a Value, MetadataError> {
    doc.get(field).ok_or(MetadataError::MissingField { field })
}

/// Replaces the bare tokens `NaN`, `Infinity` and `-Infinity` outside
/// strings by the strings `"NaN"`, `"Infinity"` and `"-Infinity"`.
///
/// Python's `json.dumps` writes them for float fill values, and zarr-python
/// 2.x wrote such documents; they are not JSON.
#[must_use]
pub fn quote_non_finite_tokens(text: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    const TOKENS: [&[u8]; 3] = [b"-Infinity", b"Infinity", b"NaN"];
    let mut out: Option<Vec<u8>> = None;
    let mut in_string = false;
    let mut escaped = false;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else if let Some(token) = TOKENS.iter().find(|t| text[i..].starts_with(t)) {
            let out = out.get_or_insert_with(|| text[..i].to_vec());
            out.push(b'"');
            out.extend_from_slice(token);
            out.push(b'"');
            i += token.len();
            continue;
        }
        if let Some(out) = out.as_mut() {
            out.push(b);
        }
        i += 1;
    }
    match out {
        Some(out) => std::borrow::Cow::Owned(out),
        None => std::borrow::Cow::Borrowed(text),
    }
}

fn parse_json(bytes: &[u8]) -> Result<JsonMap, MetadataError> {
    let value: Value =
        serde_json::from_slice(&quote_non_finite_tokens(bytes)).map_err(MetadataError::Json)?;
    match value {
        Value::Object(doc) => Ok(doc),
        _ => Err(MetadataError::NotAnObject),
    }
}

fn check_zarr_format(doc: &JsonMap) -> Result<(), MetadataError> {
    let zarr_format = required(doc, "zarr_format")?;
    if zarr_format.as_u64() != Some(2) {
        return Err(MetadataError::ZarrFormat {
            expected: "2",
            found: zarr_format.to_string(),
        });
    }
    Ok(())
}

/// Parses a `.zattrs` document: a JSON object.
///
/// # Errors
/// [`MetadataError::Json`] or [`MetadataError::NotAnObject`].
pub fn parse_attributes(bytes: &[u8]) -> Result<JsonMap, MetadataError> {
    parse_json(bytes)
}

/// Parses a `.zgroup` document, with the `.zattrs` document if there is one.
///
/// # Errors
/// [`MetadataError::Json`], [`MetadataError::NotAnObject`] or
/// [`MetadataError::ZarrFormat`] for the group document. The attributes are
/// parsed by the caller with [`parse_attributes`], so their errors name
/// their own key.
pub fn parse_group(
    bytes: &[u8],
    attributes: Option<JsonMap>,
) -> Result<GroupMetadata, MetadataError> {
    let doc = parse_json(bytes)?;
    check_zarr_format(&doc)?;
    Ok(GroupMetadata {
        attributes: attributes.unwrap_or_default(),
        extra_fields: JsonMap::new(),
    })
}

/// Parses a `.zarray` document, with the attributes of `.zattrs` if there
/// is one.
///
/// # Errors
/// A [`MetadataError`] naming the field at fault.
pub fn parse_array(
    bytes: &[u8],
    attributes: Option<JsonMap>,
) -> Result<ArrayMetadata, MetadataError> {
    let doc = parse_json(bytes)?;
    check_zarr_format(&doc)?;
    let shape = integers(required(&doc, "shape")?, "shape")?;
    let chunks = integers(required(&doc, "chunks")?, "chunks")?;
    if chunks.len() != shape.len() {
        return Err(MetadataError::invalid(
            "chunks",
            format!("{} lengths, one per dimension of `shape`", shape.len()),
            &doc["chunks"],
        ));
    }
    if chunks.contains(&0) {
        return Err(MetadataError::invalid(
            "chunks",
            "positive lengths",
            &doc["chunks"],
        ));
    }
    let chunk_grid = ChunkGrid::regular(&chunks)?;
    let (data_type, endian) = dtype_from_json(required(&doc, "dtype")?)?;
    let order = match required(&doc, "order")? {
        Value::String(s) if s == "C" => false,
        Value::String(s) if s == "F" => true,
        other => return Err(MetadataError::invalid("order", "`\"C\"` or `\"F\"`", other)),
    };
    let filters = match required(&doc, "filters")? {
        Value::Null => filters_from_json(&[], &data_type, endian)?,
        Value::Array(filters) => filters_from_json(filters, &data_type, endian)?,
        other => {
            return Err(MetadataError::invalid(
                "filters",
                "null or a list of codec objects",
                other,
            ));
        }
    };
    let separator = match doc.get("dimension_separator") {
        None | Some(Value::Null) => Separator::Dot,
        Some(value) => value
            .as_str()
            .and_then(Separator::from_str_opt)
            .ok_or_else(|| {
                MetadataError::invalid("dimension_separator", "`\".\"` or `\"/\"`", value)
            })?,
    };
    let mut extra_fields = JsonMap::new();
    let fill_value = match required(&doc, "fill_value")? {
        Value::Null => {
            extra_fields.insert(NULL_FILL_VALUE_FIELD.into(), Value::Null);
            FillValue::zero(&data_type)
        }
        value => fill_value_from_json(value, &data_type)?,
    };
    let mut codecs = Vec::new();
    if order && shape.len() > 1 {
        // v2 "order": in F order the first dimension varies fastest, which
        // is the C-order layout of the chunk with its dimensions reversed.
        let permutation: Vec<Value> = (0..shape.len()).rev().map(Value::from).collect();
        let mut configuration = JsonMap::new();
        configuration.insert("order".into(), Value::Array(permutation));
        codecs.push(ExtensionObject::with_configuration(
            "transpose",
            configuration,
        ));
    }
    codecs.extend(filters.array_to_array);
    let mut bytes = JsonMap::new();
    if let Some(endian) = filters.endian {
        bytes.insert("endian".into(), endian.into());
    }
    codecs.push(ExtensionObject::with_configuration("bytes", bytes));
    codecs.extend(filters.bytes_to_bytes);
    match required(&doc, "compressor")? {
        Value::Null => {}
        Value::Object(compressor) => {
            codecs.push(compressor_from_json(compressor, &filters.data_type)?);
        }
        other => {
            return Err(MetadataError::invalid(
                "compressor",
                "null or a codec object with an `id`",
                other,
            ));
        }
    }
    let metadata = ArrayMetadata {
        shape,
        data_type,
        chunk_grid,
        chunk_key_encoding: ChunkKeyEncoding::V2 { separator },
        fill_value,
        codecs,
        storage_transformers: Vec::new(),
        dimension_names: None,
        attributes: attributes.unwrap_or_default(),
        extra_fields,
    };
    metadata.validate()?;
    Ok(metadata)
}

fn integers(value: &Value, field: &'static str) -> Result<Vec<u64>, MetadataError> {
    let expected = "a list of non-negative integers";
    value
        .as_array()
        .ok_or_else(|| MetadataError::invalid(field, expected, value))?
        .iter()
        .map(|item| {
            item.as_u64()
                .ok_or_else(|| MetadataError::invalid(field, expected, value))
        })
        .collect()
}

/// The data type and `bytes` codec endianness of a v2 `dtype`.
///
/// # Errors
/// [`MetadataError::InvalidField`] for a malformed type string, or
/// [`MetadataError::UnsupportedExtension`] for a well-formed NumPy type this
/// version does not support (strings, datetimes, objects, structured types).
pub fn dtype_from_json(value: &Value) -> Result<(DataType, Option<&'static str>), MetadataError> {
    let expected = "a NumPy type string such as `\"<f8\"`";
    let text = match value {
        Value::String(text) => text,
        Value::Array(_) => {
            return Err(MetadataError::UnsupportedExtension {
                point: "v2 data type",
                name: format!("structured {}", compact(value)),
            });
        }
        other => return Err(MetadataError::invalid("dtype", expected, other)),
    };
    let invalid = || MetadataError::invalid("dtype", expected, value);
    let mut chars = text.chars();
    let order = chars.next().ok_or_else(invalid)?;
    let kind = chars.next().ok_or_else(invalid)?;
    let size = chars.as_str();
    if matches!(kind, 'M' | 'm') {
        return numpy_time_dtype(order, kind, size).ok_or_else(|| unsupported_dtype(text));
    }
    if size.is_empty() || !size.bytes().all(|b| b.is_ascii_digit()) || size.len() > 9 {
        return Err(if matches!(kind, 'S' | 'U' | 'O' | 'M' | 'm') {
            unsupported_dtype(text)
        } else {
            invalid()
        });
    }
    let size: usize = size.parse().map_err(|_| invalid())?;
    let data_type = match (kind, size) {
        ('b', 1) => DataType::Bool,
        ('i', 1) => DataType::Int8,
        ('i', 2) => DataType::Int16,
        ('i', 4) => DataType::Int32,
        ('i', 8) => DataType::Int64,
        ('u', 1) => DataType::UInt8,
        ('u', 2) => DataType::UInt16,
        ('u', 4) => DataType::UInt32,
        ('u', 8) => DataType::UInt64,
        ('f', 2) => DataType::Float16,
        ('f', 4) => DataType::Float32,
        ('f', 8) => DataType::Float64,
        ('c', 8) => DataType::Complex64,
        ('c', 16) => DataType::Complex128,
        ('V', n) if n > 0 => DataType::RawBits(n.checked_mul(8).ok_or_else(invalid)?),
        ('S' | 'U' | 'O' | 'M' | 'm', _) => return Err(unsupported_dtype(text)),
        _ => return Err(invalid()),
    };
    let endian = match (order, data_type.endian_unit()) {
        // v2 "Data type encoding": `|` is "not relevant", for types whose
        // elements are single bytes (or raw bytes); NumPy writes `|` for
        // them, and a `<` or `>` there changes nothing.
        ('|' | '<' | '>', 1) => None,
        ('<', _) => Some("little"),
        ('>', _) => Some("big"),
        _ => return Err(invalid()),
    };
    Ok((data_type, endian))
}

/// NumPy's `M8[<scale><unit>]` / `m8[...]` (and `M8` with the generic
/// unit) as `numpy.datetime64` / `numpy.timedelta64`: the same 64-bit counts
/// (extensions/data-types/numpy.datetime64, "Background").
fn numpy_time_dtype(
    order: char,
    kind: char,
    size: &str,
) -> Option<(DataType, Option<&'static str>)> {
    let endian = match order {
        '<' => Some("little"),
        '>' => Some("big"),
        _ => return None,
    };
    let rest = size.strip_prefix('8')?;
    let (unit, scale_factor) = if rest.is_empty() {
        (TimeUnit::Generic, 1)
    } else {
        let inner = rest.strip_prefix('[')?.strip_suffix(']')?;
        let split = inner
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(inner.len());
        let (digits, unit) = inner.split_at(split);
        let scale_factor = if digits.is_empty() {
            1
        } else {
            digits
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=0x7fff_ffff).contains(n))?
        };
        (TimeUnit::from_name(unit)?, scale_factor)
    };
    let data_type = if kind == 'M' {
        DataType::NumpyDateTime64 { unit, scale_factor }
    } else {
        DataType::NumpyTimeDelta64 { unit, scale_factor }
    };
    Some((data_type, endian))
}

fn unsupported_dtype(text: &str) -> MetadataError {
    MetadataError::UnsupportedExtension {
        point: "v2 data type",
        name: text.to_string(),
    }
}

/// The v2 `dtype` of a data type in a byte order (`"little"`, `"big"` or
/// `None` for single-byte units).
#[must_use]
pub fn dtype_to_string(data_type: &DataType, big_endian: bool) -> String {
    let order = if data_type.endian_unit() == 1 {
        '|'
    } else if big_endian {
        '>'
    } else {
        '<'
    };
    let (kind, size) = match data_type {
        DataType::Bool => ('b', 1),
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
            ('i', data_type.size())
        }
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => {
            ('u', data_type.size())
        }
        DataType::Float16 | DataType::Float32 | DataType::Float64 => ('f', data_type.size()),
        DataType::Complex64 | DataType::Complex128 => ('c', data_type.size()),
        DataType::NumpyDateTime64 { unit, scale_factor }
        | DataType::NumpyTimeDelta64 { unit, scale_factor } => {
            let kind = if matches!(data_type, DataType::NumpyDateTime64 { .. }) {
                'M'
            } else {
                'm'
            };
            return match (unit, scale_factor) {
                (TimeUnit::Generic, 1) => format!("{order}{kind}8"),
                (unit, 1) => format!("{order}{kind}8[{}]", unit.name()),
                (unit, n) => format!("{order}{kind}8[{n}{}]", unit.name()),
            };
        }
        _ => ('V', data_type.size()),
    };
    format!("{order}{kind}{size}")
}

/// The fill value of a v2 document: as v3 for numbers, non-finite floats
/// and complex pairs, plus `0`/`1` for `bool` and base64 for `|V<n>`.
///
/// # Errors
/// [`MetadataError::InvalidFillValue`].
pub fn fill_value_from_json(
    value: &Value,
    data_type: &DataType,
) -> Result<FillValue, MetadataError> {
    let invalid = || MetadataError::InvalidFillValue {
        data_type: dtype_to_string(data_type, false),
        found: compact(value),
    };
    match (data_type, value) {
        // v2 "Fill value encoding": base64 for byte strings and raw records.
        (DataType::RawBits(_), Value::String(text)) => {
            let bytes = super::base64_decode(text).ok_or_else(invalid)?;
            if bytes.len() != data_type.size() {
                return Err(invalid());
            }
            Ok(FillValue::new(bytes))
        }
        (DataType::Bool, Value::Number(n)) => match n.as_u64() {
            Some(b @ (0 | 1)) => Ok(FillValue::new(vec![u8::from(b == 1)])),
            _ => Err(invalid()),
        },
        _ => v3::fill_value_from_json(value, data_type).map_err(|_| invalid()),
    }
}

/// The v2 JSON of a fill value: v3's spelling, except that `|V<n>` is
/// base64 and a NaN with a payload is `"NaN"`.
#[must_use]
pub fn fill_value_to_json(fill: &FillValue, data_type: &DataType) -> Value {
    if let DataType::RawBits(_) = data_type {
        return Value::String(super::base64_encode(fill.as_bytes()));
    }
    if let DataType::NumpyDateTime64 { .. } | DataType::NumpyTimeDelta64 { .. } = data_type {
        // zarr-python 2 writes `M8`/`m8` fill values as their i64 count
        // (NaT as -2^63).
        if let Ok(bytes) = <[u8; 8]>::try_from(fill.as_bytes()) {
            return Value::from(i64::from_ne_bytes(bytes));
        }
    }
    let nan_payload_to_nan = |v: Value| match v {
        Value::String(s) if s.starts_with("0x") => Value::from("NaN"),
        other => other,
    };
    match v3::fill_value_to_json(fill, data_type) {
        Value::Array(items) if data_type.is_float() => {
            Value::Array(items.into_iter().map(nan_payload_to_nan).collect())
        }
        other => nan_payload_to_nan(other),
    }
}

/// numcodecs filters that map arrays to arrays, by v2 id, with their options.
const ARRAY_FILTERS: &[(&str, &[&str])] = &[
    ("delta", &["dtype", "astype"]),
    ("fixedscaleoffset", &["offset", "scale", "dtype", "astype"]),
    ("quantize", &["digits", "dtype", "astype"]),
    ("bitround", &["keepbits"]),
    ("astype", &["encode_dtype", "decode_dtype"]),
    ("packbits", &[]),
];

/// numcodecs codecs that map bytes to bytes and may stand among the
/// filters or as the compressor, by v2 id, with their options.
const BYTES_FILTERS: &[(&str, &[&str])] = &[
    ("shuffle", &["elementsize"]),
    ("crc32", &["location"]),
    ("adler32", &["location"]),
    ("fletcher32", &[]),
    ("jenkins_lookup3", &["initval", "prefix"]),
    // numcodecs' CRC32C (checksum after the data) is the v3 `crc32c` codec.
    ("crc32c", &["location"]),
];

/// The model codec of a v2 byte filter or checksum compressor `id` with its
/// options; `field` names the object for errors.
fn byte_codec(
    id: &str,
    mut configuration: JsonMap,
    field: &str,
) -> Result<ExtensionObject, MetadataError> {
    match id {
        "shuffle" => {
            configuration.entry("elementsize").or_insert(Value::from(4));
        }
        "crc32c" => {
            return match configuration.get("location") {
                None | Some(Value::Null) => Ok(ExtensionObject::new("crc32c")),
                Some(Value::String(end)) if end == "end" => Ok(ExtensionObject::new("crc32c")),
                Some(other) => Err(MetadataError::invalid(
                    format!("{field}.location"),
                    "`\"end\"` (the v3 `crc32c` codec stores the checksum after the data)",
                    other,
                )),
            };
        }
        _ => {}
    }
    Ok(ExtensionObject::with_configuration(
        format!("numcodecs.{id}"),
        configuration,
    ))
}

/// A v2 `filters` list in the model: array→array codecs before `bytes`,
/// the `bytes` endianness of the last one's output, the element type the
/// compressor sees, and bytes→bytes codecs between `bytes` and the compressor.
struct Filters {
    array_to_array: Vec<ExtensionObject>,
    endian: Option<&'static str>,
    data_type: DataType,
    bytes_to_bytes: Vec<ExtensionObject>,
}

/// A filter's NumPy type option: the type and its `bytes` endianness.
type FilterDtype = (DataType, Option<&'static str>);

fn filter_dtype(
    configuration: &JsonMap,
    key: &str,
    field: &str,
) -> Result<Option<FilterDtype>, MetadataError> {
    match configuration.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => match dtype_from_json(value) {
            Ok((data_type, endian))
                if !matches!(
                    data_type,
                    DataType::RawBits(_) | DataType::Complex64 | DataType::Complex128
                ) =>
            {
                Ok(Some((data_type, endian)))
            }
            _ => Err(MetadataError::invalid(
                field.to_string(),
                "a fixed-size numeric NumPy type string such as `\"<i4\"`",
                value,
            )),
        },
    }
}

fn filters_from_json(
    filters: &[Value],
    data_type: &DataType,
    endian: Option<&'static str>,
) -> Result<Filters, MetadataError> {
    let mut out = Filters {
        array_to_array: Vec::new(),
        endian,
        data_type: data_type.clone(),
        bytes_to_bytes: Vec::new(),
    };
    for (i, filter) in filters.iter().enumerate() {
        let field = |key: &str| format!("filters[{i}].{key}");
        let Value::Object(filter) = filter else {
            return Err(MetadataError::invalid(
                field("id"),
                "a codec object",
                filter,
            ));
        };
        let id = match filter.get("id") {
            Some(Value::String(id)) => id.as_str(),
            Some(other) => return Err(MetadataError::invalid(field("id"), "a string", other)),
            None => {
                return Err(MetadataError::MissingField {
                    field: "filters[].id",
                });
            }
        };
        let (allowed, array) = match (
            ARRAY_FILTERS.iter().find(|(name, _)| *name == id),
            BYTES_FILTERS.iter().find(|(name, _)| *name == id),
        ) {
            (Some((_, allowed)), _) => (*allowed, true),
            (None, Some((_, allowed))) => (*allowed, false),
            (None, None) => {
                return Err(MetadataError::UnsupportedExtension {
                    point: "v2 filter",
                    name: id.to_string(),
                });
            }
        };
        let mut configuration = JsonMap::new();
        for (key, value) in filter {
            if key == "id" {
                continue;
            }
            if !allowed.contains(&key.as_str()) {
                return Err(MetadataError::invalid(
                    field(key),
                    format!("no such option for the `{id}` filter"),
                    value,
                ));
            }
            configuration.insert(key.clone(), value.clone());
        }
        let name = format!("numcodecs.{id}");
        if !array {
            out.bytes_to_bytes
                .push(byte_codec(id, configuration, &format!("filters[{i}]"))?);
            continue;
        }
        if !out.bytes_to_bytes.is_empty() {
            return Err(MetadataError::Inconsistent(format!(
                "the v2 filter `{id}` (an array filter) follows the byte filter `{}`; \
                 zarrkit applies array filters before byte filters",
                out.bytes_to_bytes[0].name.trim_start_matches("numcodecs.")
            )));
        }
        // The filter's input type, if it names one, must be the type so far
        // in the byte order so far: numcodecs views the bytes as it.
        let input_key = if id == "astype" {
            "decode_dtype"
        } else {
            "dtype"
        };
        let input = filter_dtype(&configuration, input_key, &field(input_key))?;
        let current_string = dtype_to_string(&out.data_type, out.endian == Some("big"));
        if let Some((input_type, input_endian)) = &input {
            if *input_type != out.data_type || *input_endian != out.endian {
                return Err(MetadataError::Inconsistent(format!(
                    "the v2 filter `{id}` has `{input_key}` {} but receives {current_string}",
                    dtype_to_string(input_type, *input_endian == Some("big")),
                )));
            }
        } else if matches!(id, "fixedscaleoffset" | "quantize") {
            // zarr-python fills in the array's type.
            configuration.insert("dtype".into(), current_string.into());
        }
        let output = match id {
            "packbits" => Some((DataType::UInt8, None)),
            "bitround" => None,
            "astype" => filter_dtype(&configuration, "encode_dtype", &field("encode_dtype"))?,
            _ => filter_dtype(&configuration, "astype", &field("astype"))?,
        };
        if let Some((data_type, endian)) = output {
            out.endian = endian;
            out.data_type = data_type;
        }
        out.array_to_array
            .push(ExtensionObject::with_configuration(name, configuration));
    }
    Ok(out)
}

fn compressor_field(
    compressor: &JsonMap,
    allowed: &[&str],
    id: &str,
) -> Result<JsonMap, MetadataError> {
    let mut configuration = JsonMap::new();
    for (key, value) in compressor {
        if key == "id" {
            continue;
        }
        if !allowed.contains(&key.as_str()) {
            return Err(MetadataError::invalid(
                format!("compressor.{key}"),
                format!("no such option for the `{id}` compressor"),
                value,
            ));
        }
        configuration.insert(key.clone(), value.clone());
    }
    Ok(configuration)
}

pub(crate) fn compressor_from_json(
    compressor: &JsonMap,
    data_type: &DataType,
) -> Result<ExtensionObject, MetadataError> {
    let id = match compressor.get("id") {
        Some(Value::String(id)) => id.as_str(),
        Some(other) => return Err(MetadataError::invalid("compressor.id", "a string", other)),
        None => {
            return Err(MetadataError::MissingField {
                field: "compressor.id",
            });
        }
    };
    let (name, allowed): (&str, &[&str]) = match id {
        "blosc" => return blosc_from_json(compressor, data_type),
        "zstd" => ("zstd", &["level", "checksum"]),
        "gzip" => ("gzip", &["level"]),
        "zlib" => ("numcodecs.zlib", &["level"]),
        "bz2" => ("numcodecs.bz2", &["level"]),
        "lzma" => ("numcodecs.lzma", &["format", "check", "preset", "filters"]),
        "lz4" => ("numcodecs.lz4", &["acceleration"]),
        other => {
            if let Some((_, allowed)) = BYTES_FILTERS.iter().find(|(name, _)| *name == other) {
                let configuration = compressor_field(compressor, allowed, id)?;
                return byte_codec(other, configuration, "compressor");
            }
            return Err(MetadataError::UnsupportedExtension {
                point: "v2 compressor",
                name: other.to_string(),
            });
        }
    };
    let mut configuration = compressor_field(compressor, allowed, id)?;
    match id {
        // numcodecs' defaults for options older writers left out; v3
        // `gzip` and `zstd` require `level`.
        "zstd" => {
            configuration.entry("level").or_insert(Value::from(0));
            configuration
                .entry("checksum")
                .or_insert(Value::Bool(false));
        }
        "gzip" => {
            configuration.entry("level").or_insert(Value::from(1));
        }
        "lzma" => {
            // zarr-python 3.1 leaves null options out of v3 metadata.
            configuration.retain(|_, v| !v.is_null());
        }
        _ => {}
    }
    Ok(ExtensionObject::with_configuration(name, configuration))
}

fn blosc_from_json(
    compressor: &JsonMap,
    data_type: &DataType,
) -> Result<ExtensionObject, MetadataError> {
    let configuration = compressor_field(
        compressor,
        &["cname", "clevel", "shuffle", "blocksize", "typesize"],
        "blosc",
    )?;
    let cname = configuration
        .get("cname")
        .cloned()
        .unwrap_or(Value::from("lz4"));
    let clevel = configuration
        .get("clevel")
        .cloned()
        .unwrap_or(Value::from(5));
    let blocksize = configuration
        .get("blocksize")
        .cloned()
        .unwrap_or(Value::from(0));
    let shuffle = match configuration.get("shuffle") {
        None => 1,
        Some(value) => value
            .as_i64()
            .filter(|n| (-1..=2).contains(n))
            .ok_or_else(|| MetadataError::invalid("compressor.shuffle", "-1, 0, 1 or 2", value))?,
    };
    let typesize = data_type.size();
    let shuffle = match shuffle {
        0 => "noshuffle",
        1 => "shuffle",
        2 => "bitshuffle",
        // numcodecs' AUTOSHUFFLE: bit-shuffle for 1-byte elements, byte-shuffle otherwise.
        _ if typesize == 1 => "bitshuffle",
        _ => "shuffle",
    };
    let mut out = JsonMap::new();
    out.insert("cname".into(), cname);
    out.insert("clevel".into(), clevel);
    out.insert("shuffle".into(), shuffle.into());
    out.insert("typesize".into(), typesize.into());
    out.insert("blocksize".into(), blocksize);
    Ok(ExtensionObject::with_configuration("blosc", out))
}

fn not_representable(what: impl Into<String>) -> MetadataError {
    MetadataError::NotRepresentable {
        format: "v2",
        what: what.into(),
    }
}

/// The `.zarray` document of an array (attributes go to `.zattrs`, see
/// [`attributes_to_json`]).
///
/// # Errors
/// [`MetadataError::NotRepresentable`] naming what v2 cannot hold: a codec
/// other than an F-order `transpose`, `bytes` and one compressor; the
/// `default` chunk key encoding; dimension names; storage transformers.
pub fn array_to_json(array: &ArrayMetadata) -> Result<Value, MetadataError> {
    if matches!(
        array.data_type,
        DataType::BFloat16
            | DataType::ComplexBFloat16
            | DataType::ComplexFloat16
            | DataType::SmallFloat(_)
            | DataType::SmallInt(_)
            | DataType::ComplexSmallFloat(_)
    ) {
        return Err(not_representable(format!(
            "the data type `{}` (NumPy has no such dtype)",
            array.data_type
        )));
    }
    let separator = match &array.chunk_key_encoding {
        ChunkKeyEncoding::V2 { separator } => *separator,
        other => {
            return Err(not_representable(format!(
                "the `{}` chunk key encoding (v2 keys have no `c` prefix; use the `v2` encoding)",
                other.name()
            )));
        }
    };
    if array.dimension_names.is_some() {
        return Err(not_representable("`dimension_names`"));
    }
    if let Some(transformer) = array.storage_transformers.first() {
        return Err(not_representable(format!(
            "the storage transformer `{}`",
            transformer.name
        )));
    }
    let ndim = array.shape.len();
    let mut codecs = array.codecs.iter().peekable();
    let mut order = "C";
    if let Some(codec) = codecs.next_if(|c| c.name == "transpose") {
        let permutation: Option<Vec<u64>> = codec
            .configuration
            .as_ref()
            .and_then(|c| c.get("order"))
            .and_then(Value::as_array)
            .and_then(|items| items.iter().map(Value::as_u64).collect());
        let identity: Vec<u64> = (0..ndim as u64).collect();
        let reversed: Vec<u64> = identity.iter().rev().copied().collect();
        match permutation {
            Some(p) if p == identity => {}
            Some(p) if p == reversed => order = "F",
            _ => {
                return Err(not_representable(format!(
                    "the codec `transpose` with configuration `{}` (v2 has only C and F order)",
                    compact(&Value::Object(codec.configuration_or_empty()))
                )));
            }
        }
    }
    let mut filters = Vec::new();
    let mut array_big_endian = None;
    while let Some(codec) = codecs.next_if(|c| filter_id(&c.name, ARRAY_FILTERS).is_some()) {
        let id = filter_id(&codec.name, ARRAY_FILTERS).unwrap_or_default();
        let configuration = codec.configuration_or_empty();
        let input_key = if id == "astype" {
            "decode_dtype"
        } else {
            "dtype"
        };
        if filters.is_empty() {
            // The array's byte order is the one the first filter reads.
            array_big_endian = configuration
                .get(input_key)
                .and_then(Value::as_str)
                .map(|t| t.starts_with('>'));
        }
        filters.push(filter_to_json(id, configuration));
    }
    let bytes_big_endian = match codecs.next() {
        Some(codec) if codec.name == "bytes" => {
            codec
                .configuration
                .as_ref()
                .and_then(|c| c.get("endian"))
                .and_then(Value::as_str)
                == Some("big")
        }
        Some(codec) => {
            return Err(not_representable(format!(
                "the codec `{}` in place of `bytes`",
                codec.name
            )));
        }
        None => return Err(not_representable("a codec chain without `bytes`")),
    };
    let rest: Vec<&ExtensionObject> = codecs.by_ref().collect();
    let compressor = match rest.split_last() {
        None => Value::Null,
        Some((last, before)) => {
            // Byte filters (shuffle, checksums) before the last codec stay
            // filters; the last is the compressor.
            for codec in before {
                let Some(id) = filter_id(&codec.name, BYTES_FILTERS) else {
                    return Err(not_representable(format!(
                        "the codec `{}` before the compressor (v2 has one compressor)",
                        codec.name
                    )));
                };
                filters.push(filter_to_json(id, codec.configuration_or_empty()));
            }
            compressor_to_json(last)?
        }
    };
    let fill_value = if array.extra_fields.get(NULL_FILL_VALUE_FIELD) == Some(&Value::Null)
        && array.fill_value == FillValue::zero(&array.data_type)
    {
        Value::Null
    } else {
        fill_value_to_json(&array.fill_value, &array.data_type)
    };
    // v2 "Metadata": `chunks` is one shape for every chunk.
    let chunks: Vec<u64> = array
        .chunk_grid
        .chunk_shape()
        .ok_or_else(|| {
            not_representable(format!(
                "the `{}` chunk grid (only regular chunks)",
                array.chunk_grid.name()
            ))
        })?
        .iter()
        .map(|n| n.get())
        .collect();
    // Keys sorted, as zarr-python 2 writes them.
    let mut doc = JsonMap::new();
    doc.insert("chunks".into(), Value::from(chunks));
    doc.insert("compressor".into(), compressor);
    doc.insert(
        "dimension_separator".into(),
        separator.as_char().to_string().into(),
    );
    doc.insert(
        "dtype".into(),
        dtype_to_string(
            &array.data_type,
            array_big_endian.unwrap_or(bytes_big_endian),
        )
        .into(),
    );
    doc.insert("fill_value".into(), fill_value);
    doc.insert(
        "filters".into(),
        if filters.is_empty() {
            Value::Null
        } else {
            Value::Array(filters)
        },
    );
    doc.insert("order".into(), order.into());
    doc.insert("shape".into(), Value::from(array.shape.clone()));
    doc.insert("zarr_format".into(), 2.into());
    Ok(Value::Object(doc))
}

pub(crate) fn compressor_to_json(codec: &ExtensionObject) -> Result<Value, MetadataError> {
    let mut configuration = codec.configuration_or_empty();
    let id = match codec.name.as_str() {
        "gzip" => "gzip",
        "zstd" => {
            // As zarr-python 3.1 writes it: `checksum` only when true.
            // Tensorstore's v2 driver refuses the member even when false.
            if configuration.get("checksum") == Some(&Value::Bool(false)) {
                configuration.remove("checksum");
            }
            "zstd"
        }
        "blosc" => {
            // numcodecs' Blosc takes the type size from the chunk's dtype.
            configuration.remove("typesize");
            let shuffle = match configuration.get("shuffle").and_then(Value::as_str) {
                Some("noshuffle") => 0,
                Some("bitshuffle") => 2,
                _ => 1,
            };
            configuration.insert("shuffle".into(), shuffle.into());
            "blosc"
        }
        "numcodecs.zlib" => "zlib",
        "numcodecs.bz2" => "bz2",
        "numcodecs.lz4" => "lz4",
        name if filter_id(name, BYTES_FILTERS).is_some() => {
            filter_id(name, BYTES_FILTERS).unwrap_or_default()
        }
        "numcodecs.lzma" => {
            // numcodecs writes every option, null when unset.
            for key in ["preset", "filters"] {
                configuration.entry(key).or_insert(Value::Null);
            }
            "lzma"
        }
        other => {
            return Err(not_representable(format!(
                "the codec `{other}` (not a numcodecs compressor)"
            )));
        }
    };
    let mut doc = JsonMap::new();
    doc.insert("id".into(), id.into());
    doc.extend(configuration);
    Ok(Value::Object(doc))
}

/// The v2 id of the numcodecs codec `name` (`numcodecs.<id>`) if it is in `table`.
fn filter_id(name: &str, table: &[(&'static str, &[&str])]) -> Option<&'static str> {
    let id = if name == "crc32c" {
        name
    } else {
        name.strip_prefix("numcodecs.")?
    };
    table
        .iter()
        .find(|(known, _)| *known == id)
        .map(|(known, _)| *known)
}

/// A v2 filter object: `id` first, then the configuration.
fn filter_to_json(id: &str, configuration: JsonMap) -> Value {
    let mut doc = JsonMap::new();
    doc.insert("id".into(), id.into());
    doc.extend(configuration);
    Value::Object(doc)
}

/// The `.zgroup` document.
#[must_use]
pub fn group_to_json() -> Value {
    serde_json::json!({ "zarr_format": 2 })
}

/// The `.zattrs` document of a node's attributes.
#[must_use]
pub fn attributes_to_json(attributes: &JsonMap) -> Value {
    Value::Object(attributes.clone())
}

/// Serialises a document as zarr-python does: pretty-printed JSON.
#[must_use]
pub fn to_bytes(document: &Value) -> Vec<u8> {
    format!("{document:#}").into_bytes()
}

fn compact(value: &Value) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn zarray(overrides: Value) -> Vec<u8> {
        let mut doc = json!({
            "zarr_format": 2, "shape": [4, 6], "chunks": [2, 3], "dtype": "<i4",
            "compressor": null, "fill_value": 0, "order": "C", "filters": null
        });
        for (k, v) in overrides.as_object().unwrap() {
            if v == &json!("__remove__") {
                doc.as_object_mut().unwrap().remove(k);
            } else {
                doc[k] = v.clone();
            }
        }
        doc.to_string().into_bytes()
    }

    fn parse(overrides: Value) -> Result<ArrayMetadata, MetadataError> {
        parse_array(&zarray(overrides), None)
    }

    #[test]
    fn dtypes_map_to_data_types_and_byte_orders() {
        for (dtype, data_type, endian) in [
            ("|b1", DataType::Bool, None),
            ("|i1", DataType::Int8, None),
            ("|u1", DataType::UInt8, None),
            ("<i2", DataType::Int16, Some("little")),
            (">i8", DataType::Int64, Some("big")),
            (">u4", DataType::UInt32, Some("big")),
            ("<u8", DataType::UInt64, Some("little")),
            ("<f2", DataType::Float16, Some("little")),
            (">f8", DataType::Float64, Some("big")),
            ("<c8", DataType::Complex64, Some("little")),
            (">c16", DataType::Complex128, Some("big")),
            ("|V3", DataType::RawBits(24), None),
            (
                "<M8[ns]",
                DataType::NumpyDateTime64 {
                    unit: TimeUnit::Nanosecond,
                    scale_factor: 1,
                },
                Some("little"),
            ),
            (
                ">m8[10s]",
                DataType::NumpyTimeDelta64 {
                    unit: TimeUnit::Second,
                    scale_factor: 10,
                },
                Some("big"),
            ),
            (
                "<M8",
                DataType::NumpyDateTime64 {
                    unit: TimeUnit::Generic,
                    scale_factor: 1,
                },
                Some("little"),
            ),
        ] {
            assert_eq!(
                dtype_from_json(&json!(dtype)).unwrap(),
                (data_type.clone(), endian),
                "{dtype}"
            );
            assert_eq!(dtype_to_string(&data_type, endian == Some("big")), dtype);
        }
    }

    #[test]
    fn malformed_and_unsupported_dtypes_are_errors_naming_them() {
        for bad in [
            "",
            "<",
            "<i",
            "<i3",
            "|f4",
            "=i4",
            "<x4",
            "<i4 ",
            "<V0",
            "<f99999999999",
        ] {
            let err = dtype_from_json(&json!(bad)).unwrap_err();
            assert!(err.to_string().contains("`dtype`"), "{bad}: {err}");
        }
        for unsupported in [
            "|S5", "<U3", "|O", "<M8[xs]", "|m8[s]", "<m4[s]", "<M8[0s]", "<M8[ns", "<m8[]",
        ] {
            let err = dtype_from_json(&json!(unsupported)).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("unsupported v2 data type `{unsupported}`")
            );
        }
        let err = dtype_from_json(&json!([["a", "<i4"]])).unwrap_err();
        assert!(err.to_string().contains("structured"), "{err}");
    }

    #[test]
    fn f_order_becomes_a_reversing_transpose_before_bytes() {
        let array =
            parse(json!({"order": "F", "shape": [2, 3, 4], "chunks": [1, 2, 3], "dtype": ">f4"}))
                .unwrap();
        assert_eq!(array.codecs.len(), 2);
        assert_eq!(array.codecs[0].name, "transpose");
        assert_eq!(
            Value::Object(array.codecs[0].configuration_or_empty()),
            json!({"order": [2, 1, 0]})
        );
        assert_eq!(
            Value::Object(array.codecs[1].configuration_or_empty()),
            json!({"endian": "big"})
        );
        let doc = array_to_json(&array).unwrap();
        assert_eq!(doc["order"], "F");
        assert_eq!(doc["dtype"], ">f4");
    }

    #[test]
    fn compressors_map_to_v3_names() {
        for (compressor, name, configuration) in [
            (
                json!({"id": "zlib", "level": 1}),
                "numcodecs.zlib",
                json!({"level": 1}),
            ),
            (
                json!({"id": "bz2", "level": 9}),
                "numcodecs.bz2",
                json!({"level": 9}),
            ),
            (
                json!({"id": "lz4", "acceleration": 1}),
                "numcodecs.lz4",
                json!({"acceleration": 1}),
            ),
            (
                json!({"id": "lzma", "format": 1, "check": -1, "preset": null, "filters": null}),
                "numcodecs.lzma",
                json!({"format": 1, "check": -1}),
            ),
            (
                json!({"id": "zstd", "level": 0}),
                "zstd",
                json!({"level": 0, "checksum": false}),
            ),
            (
                json!({"id": "gzip", "level": 5}),
                "gzip",
                json!({"level": 5}),
            ),
            (
                json!({"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0}),
                "blosc",
                json!({"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0}),
            ),
            (
                json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0}),
                "blosc",
                json!({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}),
            ),
        ] {
            let array = parse(json!({"compressor": compressor.clone()})).unwrap();
            assert_eq!(array.codecs[1].name, name, "{compressor}");
            assert_eq!(
                Value::Object(array.codecs[1].configuration_or_empty()),
                configuration
            );
            // And back: the document has the same compressor, with
            // numcodecs' explicit nulls, shuffle as an integer (-1 resolved).
            let back = array_to_json(&array).unwrap();
            let mut expected = compressor.clone();
            if expected["shuffle"] == json!(-1) {
                expected["shuffle"] = json!(1);
            }
            assert_eq!(back["compressor"], expected);
        }
        // AUTOSHUFFLE on 1-byte elements is bit-shuffle.
        let array =
            parse(json!({"dtype": "|u1", "compressor": {"id": "blosc", "shuffle": -1}})).unwrap();
        assert_eq!(
            array.codecs[1].configuration_or_empty()["shuffle"],
            "bitshuffle"
        );
    }

    #[test]
    fn unknown_compressors_and_filters_are_errors_naming_them() {
        let err = parse(json!({"compressor": {"id": "snappy2"}})).unwrap_err();
        assert_eq!(err.to_string(), "unsupported v2 compressor `snappy2`");
        let err =
            parse(json!({"filters": [{"id": "categorize", "labels": ["a"], "dtype": "<U1"}]}))
                .unwrap_err();
        assert_eq!(err.to_string(), "unsupported v2 filter `categorize`");
        assert!(parse(json!({"filters": []})).is_ok());
        let err = parse(json!({"compressor": {"id": "zlib", "lvl": 1}})).unwrap_err();
        assert!(err.to_string().contains("`compressor.lvl`"), "{err}");
        let err = parse(json!({"compressor": {"level": 1}})).unwrap_err();
        assert!(err.to_string().contains("`compressor.id`"), "{err}");
    }

    #[test]
    fn malformed_documents_name_the_field() {
        for (overrides, needle) in [
            (json!({"zarr_format": 3}), "`zarr_format` `3`"),
            (json!({"shape": "__remove__"}), "`shape`"),
            (json!({"shape": [-1, 2]}), "`shape`"),
            (json!({"chunks": [2]}), "`chunks`"),
            (json!({"chunks": [0, 1]}), "`chunks`"),
            (json!({"order": "K"}), "`order`"),
            (json!({"order": "__remove__"}), "`order`"),
            (json!({"filters": {}}), "`filters`"),
            (json!({"filters": "__remove__"}), "`filters`"),
            (json!({"compressor": "zlib"}), "`compressor`"),
            (json!({"compressor": "__remove__"}), "`compressor`"),
            (json!({"dimension_separator": "-"}), "`dimension_separator`"),
            (json!({"fill_value": "x"}), "fill value `\"x\"`"),
            (json!({"fill_value": "__remove__"}), "`fill_value`"),
            (json!({"dtype": 4}), "`dtype`"),
        ] {
            let err = parse(overrides.clone()).unwrap_err();
            assert!(err.to_string().contains(needle), "{overrides}: {err}");
        }
        assert!(matches!(
            parse_array(b"[1]", None),
            Err(MetadataError::NotAnObject)
        ));
        assert!(matches!(
            parse_array(b"{", None),
            Err(MetadataError::Json(_))
        ));
    }

    #[test]
    fn fill_values_in_every_writer_form() {
        let f32_bytes = |x: f32| x.to_ne_bytes().to_vec();
        let nan = parse_array(
            br#"{"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": "<f4",
                "compressor": null, "fill_value": NaN, "order": "C", "filters": null}"#,
            None,
        )
        .unwrap();
        assert_eq!(nan.fill_value.as_bytes(), 0x7fc0_0000_u32.to_ne_bytes());
        let neg_inf = parse(json!({"dtype": "<f4", "fill_value": "-Infinity"})).unwrap();
        assert_eq!(neg_inf.fill_value.as_bytes(), f32_bytes(f32::NEG_INFINITY));
        let big = parse(json!({"dtype": "<u8", "fill_value": u64::MAX})).unwrap();
        assert_eq!(big.fill_value.as_bytes(), u64::MAX.to_ne_bytes());
        let raw = parse(json!({"dtype": "|V3", "fill_value": "AQID"})).unwrap();
        assert_eq!(raw.fill_value.as_bytes(), [1, 2, 3]);
        assert_eq!(array_to_json(&raw).unwrap()["fill_value"], "AQID");
        assert!(parse(json!({"dtype": "|V3", "fill_value": "AQI="})).is_err());
        let complex = parse(json!({"dtype": "<c8", "fill_value": [1.0, "NaN"]})).unwrap();
        let mut expected = f32_bytes(1.0);
        expected.extend(0x7fc0_0000_u32.to_ne_bytes());
        assert_eq!(complex.fill_value.as_bytes(), expected);
        let boolean = parse(json!({"dtype": "|b1", "fill_value": 1})).unwrap();
        assert_eq!(boolean.fill_value.as_bytes(), [1]);
        assert_eq!(array_to_json(&boolean).unwrap()["fill_value"], true);
    }

    #[test]
    fn null_fill_value_reads_as_zero_and_writes_back_as_null() {
        let array = parse(json!({"fill_value": null})).unwrap();
        assert_eq!(array.fill_value.as_bytes(), [0; 4]);
        assert_eq!(array_to_json(&array).unwrap()["fill_value"], Value::Null);
        // Migrated to v3, the array has the zero fill value and no stray field.
        let v3_doc = v3::node_to_json(&crate::metadata::NodeMetadata::Array(array.clone()));
        assert_eq!(v3_doc["fill_value"], 0);
        // A fill value set later replaces the null.
        let mut changed = array;
        changed.fill_value = FillValue::new(7i32.to_ne_bytes().to_vec());
        assert_eq!(array_to_json(&changed).unwrap()["fill_value"], 7);
    }

    #[test]
    fn bare_non_finite_tokens_are_quoted_outside_strings_only() {
        let text = br#"{"a": NaN, "b": [Infinity, -Infinity], "c": "NaN Infinity \" NaN"}"#;
        let quoted = quote_non_finite_tokens(text);
        let value: Value = serde_json::from_slice(&quoted).unwrap();
        assert_eq!(
            value,
            json!({"a": "NaN", "b": ["Infinity", "-Infinity"], "c": "NaN Infinity \" NaN"})
        );
        assert!(matches!(
            quote_non_finite_tokens(b"{\"a\": 1}"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn separators_and_zero_dimensional_arrays() {
        let slash = parse(json!({"dimension_separator": "/"})).unwrap();
        assert_eq!(slash.chunk_key_encoding.encode(&[1, 2]), "1/2");
        let dot = parse(json!({})).unwrap();
        assert_eq!(dot.chunk_key_encoding.encode(&[1, 2]), "1.2");
        let scalar = parse(json!({"shape": [], "chunks": [], "order": "F"})).unwrap();
        assert_eq!(scalar.chunk_key_encoding.encode(&[]), "0");
        assert_eq!(scalar.codecs.len(), 1);
    }

    #[test]
    fn filters_map_to_numcodecs_codecs_and_back() {
        let filters = json!([
            {"id": "astype", "encode_dtype": ">i8", "decode_dtype": "<f8"},
            {"id": "delta", "dtype": ">i8", "astype": "|u1"},
            {"id": "shuffle", "elementsize": 1},
            {"id": "crc32c"}
        ]);
        let array = parse(json!({"dtype": "<f8", "filters": filters.clone(),
                                 "compressor": {"id": "adler32", "location": "end"}}))
        .unwrap();
        let names: Vec<&str> = array.codecs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "numcodecs.astype",
                "numcodecs.delta",
                "bytes",
                "numcodecs.shuffle",
                "crc32c",
                "numcodecs.adler32"
            ]
        );
        // `|u1` is the last filter's output: `bytes` has no byte order.
        assert_eq!(array.codecs[2].configuration_or_empty().get("endian"), None);
        let back = array_to_json(&array).unwrap();
        assert_eq!(back["filters"], filters);
        assert_eq!(back["dtype"], "<f8");
        assert_eq!(
            back["compressor"],
            json!({"id": "adler32", "location": "end"})
        );
        // The compressor sees the filters' output: blosc's typesize is 8 (i8).
        let blosc = parse(json!({"dtype": "<f8",
            "filters": [{"id": "astype", "encode_dtype": "<i2", "decode_dtype": "<f8"}],
            "compressor": {"id": "blosc"}}))
        .unwrap();
        assert_eq!(blosc.codecs[2].configuration_or_empty()["typesize"], 2);
        // fixedscaleoffset and quantize get the array's dtype when it is missing.
        let fso = parse(json!({"dtype": ">f4",
            "filters": [{"id": "fixedscaleoffset", "offset": 1, "scale": 2, "astype": "<i2"}]}))
        .unwrap();
        assert_eq!(fso.codecs[0].configuration_or_empty()["dtype"], ">f4");
    }

    #[test]
    fn malformed_filters_are_errors_naming_them() {
        for (filters, needle) in [
            (
                json!([{"id": "crc32c", "location": "start"}]),
                "`filters[0].location`",
            ),
            (json!([{"dtype": "<i4"}]), "`filters[].id`"),
            (json!([3]), "`filters[0].id`"),
            (
                json!([{"id": "delta", "dtype": "<U3"}]),
                "`filters[0].dtype`",
            ),
            (json!([{"id": "delta", "dtype": 4}]), "`filters[0].dtype`"),
            (
                json!([{"id": "delta", "dtype": "<i2"}]),
                "`dtype` <i2 but receives <i4",
            ),
            (
                json!([{"id": "packbits"}]),
                "`numcodecs.packbits` cannot encode",
            ),
            (
                json!([{"id": "bitround", "keepbits": 2}]),
                "`numcodecs.bitround` cannot encode",
            ),
            (json!([{"id": "zlib"}]), "unsupported v2 filter `zlib`"),
        ] {
            let doc = json!({"dtype": "<i4", "filters": filters});
            let err = match parse(doc.clone()) {
                Err(e) => e.to_string(),
                // Type mismatches the codecs find surface when the chain is built.
                Ok(array) => {
                    let repr = crate::codec::ChunkRepr {
                        shape: vec![1],
                        data_type: array.data_type.clone(),
                        fill_value: array.fill_value.clone(),
                    };
                    crate::codec::CodecChain::from_metadata(&array.codecs, &repr)
                        .unwrap_err()
                        .to_string()
                }
            };
            assert!(err.contains(needle), "{doc}: {err}");
        }
    }

    #[test]
    fn what_v2_cannot_hold_is_an_error_naming_it() {
        let array = parse(json!({"compressor": {"id": "zlib", "level": 1}})).unwrap();
        let mut crc = array.clone();
        crc.codecs.push(ExtensionObject::new("crc32c"));
        let err = array_to_json(&crc).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Zarr v2 cannot represent the codec `numcodecs.zlib` before the compressor (v2 has one compressor)"
        );
        let mut sharded = array.clone();
        sharded.codecs = vec![ExtensionObject::new("sharding_indexed")];
        assert!(
            array_to_json(&sharded)
                .unwrap_err()
                .to_string()
                .contains("`sharding_indexed`")
        );
        let mut default_keys = array.clone();
        default_keys.chunk_key_encoding = ChunkKeyEncoding::default();
        assert!(
            array_to_json(&default_keys)
                .unwrap_err()
                .to_string()
                .contains("`default` chunk key encoding")
        );
        let mut named = array.clone();
        named.dimension_names = Some(vec![None, None]);
        assert!(
            array_to_json(&named)
                .unwrap_err()
                .to_string()
                .contains("`dimension_names`")
        );
        let mut odd = array;
        let mut configuration = JsonMap::new();
        configuration.insert("order".into(), json!([0, 1]));
        odd.codecs.insert(
            0,
            ExtensionObject::with_configuration("transpose", configuration.clone()),
        );
        assert_eq!(array_to_json(&odd).unwrap()["order"], "C");
        configuration.insert("order".into(), json!([1, 1]));
        odd.codecs[0] = ExtensionObject::with_configuration("transpose", configuration);
        assert!(
            array_to_json(&odd)
                .unwrap_err()
                .to_string()
                .contains("`transpose`")
        );
        let mut unknown = parse(json!({})).unwrap();
        unknown.codecs.push(ExtensionObject::new("made_up"));
        assert!(
            array_to_json(&unknown)
                .unwrap_err()
                .to_string()
                .contains("not a numcodecs compressor")
        );
    }

    fn data_type_strategy() -> impl Strategy<Value = (DataType, bool)> {
        let types = vec![
            DataType::Bool,
            DataType::Int8,
            DataType::Int16,
            DataType::Int32,
            DataType::Int64,
            DataType::UInt8,
            DataType::UInt16,
            DataType::UInt32,
            DataType::UInt64,
            DataType::Float16,
            DataType::Float32,
            DataType::Float64,
            DataType::Complex64,
            DataType::Complex128,
            DataType::RawBits(8),
            DataType::RawBits(40),
        ];
        (prop::sample::select(types), any::<bool>())
    }

    proptest! {
        #[test]
        fn document_to_model_to_document_is_the_identity(
            (data_type, big) in data_type_strategy(),
            shape in prop::collection::vec(0u64..100, 0..4),
            f_order in any::<bool>(),
            slash in any::<bool>(),
            compressor in prop::sample::select(vec![
                json!(null),
                json!({"id": "zlib", "level": 3}),
                json!({"id": "gzip", "level": 1}),
                json!({"id": "bz2", "level": 2}),
                json!({"id": "lz4", "acceleration": 1}),
                json!({"id": "zstd", "level": 3, "checksum": true}),
                json!({"id": "lzma", "format": 1, "check": -1, "preset": 1, "filters": null}),
                json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}),
            ]),
            fill in any::<[u8; 16]>(),
            null_fill in any::<bool>(),
        ) {
            let ndim = shape.len();
            let chunks: Vec<u64> = shape.iter().map(|n| n / 2 + 1).collect();
            let mut array = parse_array(
                &serde_json::to_vec(&json!({
                    "zarr_format": 2, "shape": shape, "chunks": chunks,
                    "dtype": dtype_to_string(&data_type, big), "compressor": compressor,
                    "fill_value": null, "order": if f_order { "F" } else { "C" },
                    "filters": null, "dimension_separator": if slash { "/" } else { "." },
                }))?,
                None,
            )?;
            if !null_fill {
                // Any bit pattern except NaN payloads, which v2 writes as "NaN".
                let mut bytes = fill[..data_type.size()].to_vec();
                if data_type == DataType::Bool { bytes[0] &= 1; }
                array.fill_value = FillValue::new(bytes);
                array.extra_fields.clear();
                let canonical = fill_value_to_json(&array.fill_value, &data_type);
                array.fill_value = fill_value_from_json(&canonical, &data_type)?;
            }
            let doc = array_to_json(&array)?;
            let again = parse_array(&to_bytes(&doc), None)?;
            prop_assert_eq!(&again, &array);
            prop_assert_eq!(array_to_json(&again)?, doc.clone());
            prop_assert_eq!(&doc["order"], if f_order && ndim > 1 { "F" } else { "C" });
        }

        #[test]
        fn random_documents_never_panic(text in "[\\[\\]{}\",:0-9a-zA-Z<>|. -]{0,80}") {
            let _ = parse_array(text.as_bytes(), None);
            let _ = parse_group(text.as_bytes(), None);
        }

        #[test]
        fn random_field_values_never_panic(
            field in prop::sample::select(vec!["shape", "chunks", "dtype", "compressor", "fill_value", "order", "filters", "dimension_separator", "zarr_format"]),
            value in prop_oneof![
                Just(json!(null)), any::<i64>().prop_map(Value::from), any::<f64>().prop_map(Value::from),
                "[a-zA-Z<>|0-9]{0,6}".prop_map(Value::from),
                prop::collection::vec(any::<i32>(), 0..4).prop_map(Value::from),
                Just(json!({"id": "blosc", "shuffle": "x"})), Just(json!([{"id": 1}])), Just(json!({})),
            ],
        ) {
            let mut doc: Value = serde_json::from_slice(&zarray(json!({})))?;
            doc[field] = value;
            let _ = parse_array(doc.to_string().as_bytes(), None);
        }
    }
}
