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
//! | `filters` | numcodecs array filters (`delta`, `fixedscaleoffset`, `quantize`, `bitround`, `astype`, `packbits`) as array→array codecs before `bytes`, whose endianness is that of the last filter's output type; byte filters (`shuffle`, `crc32`, `adler32`, `fletcher32`, `jenkins_lookup3`, and `crc32c` as the v3 `crc32c` codec) as bytes→bytes codecs after `bytes`; `categorize` (strings to labels, checked by `codec/numcodecs/categorize.rs`). On write the last bytes→bytes codec is the compressor and any before it are filters |
//! | `compressor` | one bytes→bytes codec after `bytes` and the byte filters (a compressor, a checksum or `shuffle`), or none for `null` |
//! | `dimension_separator` `.` (the default) or `/` | the `v2` chunk key encoding with that separator |
//! | `fill_value` | `fill_value` (see below) |
//! | `.zattrs` (absent: `{}`) | `attributes` |
//!
//! Data types: `|b1` `bool`; `|i1`, `<i2`…`>i8` `int8`…`int64`; `|u1`…`>u8`
//! `uint8`…`uint64`; `<f2`…`>f8` `float16`…`float64`; `<c8`, `<c16` (both
//! byte orders) `complex64`, `complex128`; `|V<n>` `r<8n>`; `<M8[unit]`,
//! `<m8[unit]` `numpy.datetime64`, `numpy.timedelta64`; `|S<n>`
//! [`DataType::FixedBytes`]; `<U<n>`/`>U<n>` [`DataType::FixedUtf32`] of
//! `4n` bytes; structured types, lists of `[name, type]` and `[name, type,
//! shape]` (nested too), [`DataType::Struct`]. Each structured field keeps
//! its byte order, as zarr-python (2.18 and 3.1) does: when every
//! multi-byte field has the same order it is the `bytes` codec's, and when
//! they differ the array→bytes codec is `zarrkit.struct_bytes` with one
//! order per unit ([`ByteOrder::PerUnit`]). `|O` arrays take their type
//! from their object codec, the first filter (see `object_codec`):
//! `vlen-utf8` [`DataType::String`], `vlen-bytes` [`DataType::Bytes`],
//! which is the array→bytes codec, the other filters and the compressor
//! after it; `pickle` is refused, explaining why and how to convert.
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
//! integers up to 2^64-1 for `<u8`; base64 for `|V<n>`, `|S<n>` (NumPy's
//! bytes, trailing zeros dropped) and structured records (each field in its
//! stored byte order); strings for `U` and `vlen-utf8`; base64 for
//! `vlen-bytes`; and zarr-python 2.18's `0` for `|O` (the string `"0"` for
//! `vlen-utf8`, as zarr-python 3.1 reads it; empty for `vlen-bytes`),
//! remembered like `null` and written back. `null` means "no
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
use crate::Error;
use crate::metadata::numpy;
use crate::metadata::{
    ArrayMetadata, ChunkGrid, ChunkKeyEncoding, DataType, ExtensionObject, FillValue,
    GroupMetadata, JsonMap, MetadataError, NodeMetadata, NodePath, Separator, StructField,
    TimeUnit,
};
use crate::store::{Store, StoreError, StoreKey, StorePrefix};
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
    // Most documents hold no such token anywhere: find that out with one
    // quick search for their first letters rather than the walk below,
    // which took a fifth of reading a small array's document.
    let mut rest = text;
    let any_token = loop {
        match rest.iter().position(|&b| b == b'N' || b == b'I') {
            None => break false,
            Some(at) if TOKENS[1..].iter().any(|t| rest[at..].starts_with(t)) => break true,
            Some(at) => rest = &rest[at + 1..],
        }
    };
    if !any_token {
        return std::borrow::Cow::Borrowed(text);
    }
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
    let dtype = required(&doc, "dtype")?;
    let filter_list: &[Value] = match required(&doc, "filters")? {
        Value::Null => &[],
        Value::Array(filters) => filters,
        other => {
            return Err(MetadataError::invalid(
                "filters",
                "null or a list of codec objects",
                other,
            ));
        }
    };
    let order = match required(&doc, "order")? {
        Value::String(s) if s == "C" => false,
        Value::String(s) if s == "F" => true,
        other => return Err(MetadataError::invalid("order", "`\"C\"` or `\"F\"`", other)),
    };
    // An object array's type is its object codec's, the first filter.
    let (data_type, byte_order, object, skip) = if dtype.as_str() == Some("|O") {
        let first = filter_list.first().and_then(Value::as_object);
        let id = first.and_then(|f| f.get("id")).and_then(Value::as_str);
        let (Some(first), Some(id)) = (first, id) else {
            return Err(MetadataError::Inconsistent(
                "an object array (`dtype` `|O`) needs an object codec (such as `vlen-utf8`) \
                 as its first filter"
                    .into(),
            ));
        };
        let mut configuration = first.clone();
        configuration.remove("id");
        match object_codec(id, &configuration)? {
            ObjectCodec::Serialises(data_type, codec) => {
                (data_type, ByteOrder::NotRelevant, Some(codec), 1)
            }
            ObjectCodec::Filter(data_type) => (data_type, ByteOrder::NotRelevant, None, 0),
        }
    } else {
        let (data_type, byte_order) = numpy_dtype_from_json(dtype)?;
        (data_type, byte_order, None, 0)
    };
    let mut filters =
        filters_from_json(&filter_list[skip..], skip, &data_type, byte_order.endian())?;
    if let Some(codec) = &object {
        // The byte filters and the compressor see the object codec's bytes.
        filters.data_type = DataType::UInt8;
        if let Some(filter) = filters.array_to_array.first() {
            return Err(MetadataError::Inconsistent(format!(
                "the v2 filter `{}` (an array filter) follows the object codec `{}`; \
                 only byte filters can",
                filter.name.trim_start_matches("numcodecs."),
                codec.name
            )));
        }
    }
    if matches!(byte_order, ByteOrder::PerUnit(_)) && !filters.array_to_array.is_empty() {
        return Err(MetadataError::Inconsistent(
            "array filters on a structured type whose fields differ in byte order".into(),
        ));
    }
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
        value => {
            if matches!(data_type, DataType::String | DataType::Bytes) && value.as_u64() == Some(0)
            {
                // zarr-python 2.18's default for object arrays; written back.
                extra_fields.insert(NULL_FILL_VALUE_FIELD.into(), Value::from(0));
            }
            fill_value_from_json_in(value, &data_type, &byte_order)?
        }
    };
    let mut codecs = Vec::new();
    // numcodecs' JSON and MsgPack nest a chunk by `tolist()`, in its
    // logical shape whatever its memory order: their bytes are the same in
    // C and F order, so no `transpose` goes before them (and the array is
    // written back as C order, which zarr-python 2 also reads correctly).
    let logical = object
        .as_ref()
        .is_some_and(|c| matches!(c.name.as_str(), "json2" | "msgpack2"));
    if order && shape.len() > 1 && !logical {
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
    match (object, &byte_order) {
        (Some(codec), _) => codecs.push(codec),
        (None, ByteOrder::PerUnit(units)) => {
            codecs.push(crate::codec::struct_bytes::metadata(units));
        }
        (None, _) => {
            let mut bytes = JsonMap::new();
            if let Some(endian) = filters.endian {
                bytes.insert("endian".into(), endian.into());
            }
            codecs.push(ExtensionObject::with_configuration("bytes", bytes));
        }
    }
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

/// The byte order of the multi-byte numbers of a v2 `dtype`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    /// No multi-byte numbers (NumPy writes `|`).
    NotRelevant,
    /// Every multi-byte number little-endian (`<`).
    Little,
    /// Every multi-byte number big-endian (`>`).
    Big,
    /// A structured type whose fields differ: one flag per entry of
    /// [`DataType::endian_units`], `true` for big-endian.
    PerUnit(Vec<bool>),
}

impl ByteOrder {
    /// The order of a list of per-unit flags: uniform when they agree.
    #[must_use]
    pub fn from_units(units: Vec<bool>) -> Self {
        match units.first() {
            None => Self::NotRelevant,
            Some(&first) if units.iter().all(|&b| b == first) => {
                if first {
                    Self::Big
                } else {
                    Self::Little
                }
            }
            Some(_) => Self::PerUnit(units),
        }
    }

    /// The `endian` of a `bytes` codec for this order: `None` when byte
    /// order does not matter or differs between fields.
    #[must_use]
    pub fn endian(&self) -> Option<&'static str> {
        match self {
            Self::Little => Some("little"),
            Self::Big => Some("big"),
            Self::NotRelevant | Self::PerUnit(_) => None,
        }
    }

    /// Whether endian unit `i` is big-endian.
    #[must_use]
    pub fn is_big(&self, i: usize) -> bool {
        match self {
            Self::Big => true,
            Self::PerUnit(units) => units.get(i).copied().unwrap_or(false),
            Self::Little | Self::NotRelevant => false,
        }
    }

    /// The order of `len` units starting at unit `start`.
    fn slice(&self, start: usize, len: usize) -> Self {
        match self {
            Self::PerUnit(units) => Self::from_units(
                units
                    .get(start..start.saturating_add(len))
                    .unwrap_or_default()
                    .to_vec(),
            ),
            other => other.clone(),
        }
    }
}

/// The deepest nesting of structured dtypes accepted.
const MAX_STRUCT_DEPTH: usize = 16;

/// The largest structured record accepted, in bytes (16 MiB).
const MAX_RECORD_BYTES: usize = 1 << 24;

/// The data type and `bytes` codec endianness of a v2 `dtype`.
///
/// # Errors
/// [`MetadataError::InvalidField`] for a malformed type string, or
/// [`MetadataError::UnsupportedExtension`] for a well-formed NumPy type this
/// function cannot express with one endianness: `|O` (its type is its
/// object codec's, see [`parse_array`]) and structured types whose fields
/// differ in byte order (see [`numpy_dtype_from_json`]).
pub fn dtype_from_json(value: &Value) -> Result<(DataType, Option<&'static str>), MetadataError> {
    let (data_type, order) = numpy_dtype_from_json(value)?;
    if let ByteOrder::PerUnit(_) = order {
        return Err(MetadataError::UnsupportedExtension {
            point: "v2 data type",
            name: format!("{} (fields in different byte orders)", compact(value)),
        });
    }
    Ok((data_type, order.endian()))
}

/// The data type and byte order of a v2 `dtype`: a NumPy type string or a
/// structured type, a list of `[name, type]` and `[name, type, shape]`
/// (v2 "Data type encoding"; `type` may itself be structured).
///
/// # Errors
/// [`MetadataError::InvalidField`] for a malformed type (naming the
/// structured field at fault), or [`MetadataError::UnsupportedExtension`]
/// for `|O` (whose type depends on the object codec) and other NumPy
/// types zarrkit does not hold.
pub fn numpy_dtype_from_json(value: &Value) -> Result<(DataType, ByteOrder), MetadataError> {
    numpy_dtype(value, "dtype", 0)
}

/// [`numpy_dtype_from_json`] for a type found in `field` of another
/// format's document (zarr-python 2.x's `data_type.type`), which errors name.
pub(crate) fn numpy_dtype_from_json_at(
    value: &Value,
    field: &str,
) -> Result<(DataType, ByteOrder), MetadataError> {
    numpy_dtype(value, field, 0)
}

fn numpy_dtype(
    value: &Value,
    field: &str,
    depth: usize,
) -> Result<(DataType, ByteOrder), MetadataError> {
    match value {
        Value::String(text) => type_string(text, value, field),
        Value::Array(items) => structured_dtype(items, field, depth),
        other => Err(MetadataError::invalid(
            field.to_string(),
            "a NumPy type string such as `\"<f8\"` or a structured type",
            other,
        )),
    }
}

/// A structured dtype: its fields, packed, and their byte orders.
fn structured_dtype(
    items: &[Value],
    field: &str,
    depth: usize,
) -> Result<(DataType, ByteOrder), MetadataError> {
    let list = Value::Array(items.to_vec());
    if depth >= MAX_STRUCT_DEPTH {
        return Err(MetadataError::invalid(
            field.to_string(),
            format!("structured types nested at most {MAX_STRUCT_DEPTH} deep"),
            &list,
        ));
    }
    if items.is_empty() {
        return Err(MetadataError::invalid(
            field.to_string(),
            "a non-empty list of `[name, type]` fields",
            &list,
        ));
    }
    let mut fields: Vec<StructField> = Vec::with_capacity(items.len());
    let mut units = Vec::new();
    let mut record = 0usize;
    for (i, item) in items.iter().enumerate() {
        let at = format!("{field}[{i}]");
        let parts = item
            .as_array()
            .filter(|p| matches!(p.len(), 2 | 3))
            .ok_or_else(|| {
                MetadataError::invalid(
                    at.clone(),
                    "a `[name, type]` or `[name, type, shape]` list",
                    item,
                )
            })?;
        // NumPy names the padding of aligned structs `""` (`["", "|V3"]`).
        let padding = parts[0].as_str() == Some("")
            && parts.len() == 2
            && parts[1].as_str().is_some_and(|t| t.starts_with("|V"));
        let name = parts[0]
            .as_str()
            .filter(|n| !n.is_empty() || padding)
            .ok_or_else(|| {
                MetadataError::invalid(
                    format!("{at}[0]"),
                    "a non-empty name (`\"\"` only for `|V` padding)",
                    item,
                )
            })?;
        if !padding && fields.iter().any(|f| f.name == name) {
            return Err(MetadataError::invalid(
                format!("{at}[0]"),
                "a name unique within the structured type",
                &parts[0],
            ));
        }
        let (data_type, order) = numpy_dtype(&parts[1], &format!("{at}[1]"), depth + 1)?;
        let shape = match parts.get(2) {
            None => Vec::new(),
            Some(shape) => integers(shape, "dtype").map_err(|_| {
                MetadataError::invalid(format!("{at}[2]"), "a list of non-negative integers", shape)
            })?,
        };
        let count = shape
            .iter()
            .try_fold(1usize, |acc, &n| acc.checked_mul(usize::try_from(n).ok()?));
        let size = count.and_then(|c| c.checked_mul(data_type.size()));
        record = match size.and_then(|s| record.checked_add(s)) {
            Some(r) if r <= MAX_RECORD_BYTES => r,
            _ => {
                return Err(MetadataError::invalid(
                    at,
                    format!("a record of at most {MAX_RECORD_BYTES} bytes"),
                    item,
                ));
            }
        };
        let n_units = data_type.endian_units().len();
        for _ in 0..count.unwrap_or(0) {
            units.extend((0..n_units).map(|u| order.is_big(u)));
        }
        fields.push(StructField {
            name: name.to_string(),
            data_type,
            shape,
        });
    }
    if record == 0 {
        return Err(MetadataError::invalid(
            field.to_string(),
            "a record of at least one byte",
            &list,
        ));
    }
    Ok((DataType::Struct(fields), ByteOrder::from_units(units)))
}

/// A NumPy type string.
fn type_string(
    text: &str,
    value: &Value,
    field: &str,
) -> Result<(DataType, ByteOrder), MetadataError> {
    let expected = "a NumPy type string such as `\"<f8\"`";
    let invalid = || MetadataError::invalid(field.to_string(), expected, value);
    let mut chars = text.chars();
    let order = chars.next().ok_or_else(invalid)?;
    let kind = chars.next().ok_or_else(invalid)?;
    let size = chars.as_str();
    if matches!(kind, 'M' | 'm') {
        let (data_type, endian) =
            numpy_time_dtype(order, kind, size).ok_or_else(|| unsupported_dtype(text))?;
        let order = if endian == Some("big") {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        };
        return Ok((data_type, order));
    }
    if kind == 'O' {
        // The type of an object array is its object codec's.
        return Err(unsupported_dtype(text));
    }
    if size.is_empty() || !size.bytes().all(|b| b.is_ascii_digit()) || size.len() > 9 {
        return Err(invalid());
    }
    let size: usize = size.parse().map_err(|_| invalid())?;
    let data_type = numpy::data_type_of(kind, size).ok_or_else(invalid)?;
    let order = match (order, data_type.endian_unit()) {
        // v2 "Data type encoding": `|` is "not relevant", for types whose
        // elements are single bytes (or raw bytes); NumPy writes `|` for
        // them, and a `<` or `>` there changes nothing.
        ('|' | '<' | '>', 1) => ByteOrder::NotRelevant,
        ('<', _) => ByteOrder::Little,
        ('>', _) => ByteOrder::Big,
        _ => return Err(invalid()),
    };
    Ok((data_type, order))
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
/// `None` for single-byte units): [`metadata::numpy::type_string`], where
/// NumPy's one type-string table lives.
///
/// [`metadata::numpy::type_string`]: crate::metadata::numpy::type_string
#[must_use]
pub fn dtype_to_string(data_type: &DataType, big_endian: bool) -> String {
    numpy::type_string(data_type, big_endian)
}

/// The v2 `dtype` of a data type in a byte order: a type string, `"|O"`
/// for the variable-length types (their object codec goes to `filters`),
/// or for a struct a list of `[name, type]` and `[name, type, shape]`
/// fields, each with its own byte order.
#[must_use]
pub fn dtype_to_json(data_type: &DataType, order: &ByteOrder) -> Value {
    let DataType::Struct(fields) = data_type else {
        let big = match order {
            ByteOrder::PerUnit(_) => order.is_big(0),
            other => *other == ByteOrder::Big,
        };
        return Value::from(dtype_to_string(data_type, big));
    };
    let mut unit = 0;
    let mut out = Vec::with_capacity(fields.len());
    for field in fields {
        let n_units = field.data_type.endian_units().len();
        // NumPy gives a sub-array one dtype: its first element's order.
        let field_order = order.slice(unit, n_units);
        unit += n_units.saturating_mul(field.count());
        let mut item = vec![
            Value::from(field.name.clone()),
            dtype_to_json(&field.data_type, &field_order),
        ];
        if !field.shape.is_empty() {
            item.push(Value::from(field.shape.clone()));
        }
        out.push(Value::Array(item));
    }
    Value::Array(out)
}

/// The fill value of a v2 document: as v3 for numbers, non-finite floats
/// and complex pairs, plus `0`/`1` for `bool`, base64 for `|V<n>`, `|S<n>`
/// and structured types (their records little-endian; see
/// [`fill_value_from_json_in`] for other byte orders), strings for `U`, a
/// number for `S`/`U` as NumPy casts it (`0` on `|S1` is `b"0"`, as
/// zarr-python 2.0-era arrays have it), a real number for a complex type
/// (`re + 0j`), and for `|O` arrays a string (`vlen-utf8`), base64 (`vlen-bytes`) or the `0`
/// zarr-python 2 writes by default (the empty string).
///
/// # Errors
/// [`MetadataError::InvalidFillValue`].
pub fn fill_value_from_json(
    value: &Value,
    data_type: &DataType,
) -> Result<FillValue, MetadataError> {
    fill_value_from_json_in(value, data_type, &ByteOrder::Little)
}

/// [`fill_value_from_json`] for an array whose records are stored in
/// `order`: v2 "Fill value encoding" gives a structured fill value as the
/// base64 of its record as stored.
///
/// # Errors
/// [`MetadataError::InvalidFillValue`].
pub fn fill_value_from_json_in(
    value: &Value,
    data_type: &DataType,
    order: &ByteOrder,
) -> Result<FillValue, MetadataError> {
    let invalid = || MetadataError::InvalidFillValue {
        data_type: compact(&dtype_to_json(data_type, order)),
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
        (DataType::FixedBytes(n), Value::String(text)) => {
            // NumPy drops trailing zero bytes; zarr-python 2 writes the rest.
            let mut bytes = super::base64_decode(text).ok_or_else(invalid)?;
            if bytes.len() > *n {
                return Err(invalid());
            }
            bytes.resize(*n, 0);
            Ok(FillValue::new(bytes))
        }
        // zarr-python 2.0-era writers stored `"fill_value": 0` for `|S1`
        // and `<U4` arrays (zarr-python's own fixture data, issue #9).
        // zarr-python 2.18 (`Metadata2.decode_fill_value`) hands the number
        // to NumPy, which casts it to the type's text (`b"0"`, `"0"`),
        // truncated to the element's length; the v2 text is silent.
        (DataType::FixedBytes(n), Value::Number(number)) => {
            let mut bytes = super::numpy_types::number_as_numpy_text(number).into_bytes();
            bytes.truncate(*n);
            bytes.resize(*n, 0);
            Ok(FillValue::new(bytes))
        }
        (DataType::FixedUtf32(n), Value::Number(number)) => {
            let text: String = super::numpy_types::number_as_numpy_text(number)
                .chars()
                .take(n / 4)
                .collect();
            crate::metadata::strings::encode_utf32(&text, *n)
                .map(FillValue::new)
                .ok_or_else(invalid)
        }
        (DataType::Struct(_), Value::String(text)) => {
            let mut bytes = super::base64_decode(text).ok_or_else(invalid)?;
            if bytes.len() != data_type.size() {
                return Err(invalid());
            }
            swap_to_native(&mut bytes, data_type, order);
            Ok(FillValue::new(bytes))
        }
        (DataType::Struct(_), _) => Err(invalid()),
        (DataType::Bool, Value::Number(n)) => match n.as_u64() {
            Some(b @ (0 | 1)) => Ok(FillValue::new(vec![u8::from(b == 1)])),
            _ => Err(invalid()),
        },
        // zarr-python 2.18 writes `0` for an object array created without
        // a fill value, and reads it as the integer 0; zarr-python 3.1
        // reads it as the string "0" for `vlen-utf8` (and refuses it for
        // `vlen-bytes`, where zarrkit reads it as empty).
        (DataType::String, Value::Number(n)) if n.as_u64() == Some(0) => {
            Ok(FillValue::new(b"0".to_vec()))
        }
        (DataType::Bytes, Value::Number(n)) if n.as_u64() == Some(0) => {
            Ok(FillValue::new(Vec::new()))
        }
        (DataType::Bytes, Value::String(text)) => super::base64_decode(text)
            .map(FillValue::new)
            .ok_or_else(invalid),
        (DataType::VlenArray(_) | DataType::Object, _) => object_fill_value(value, data_type),
        _ => v3::fill_value_from_json(value, data_type).map_err(|_| invalid()),
    }
}

/// Reverses the byte order of the units of a record that `order` stores
/// in the other order than this machine's.
fn swap_to_native(bytes: &mut [u8], data_type: &DataType, order: &ByteOrder) {
    let native_big = cfg!(target_endian = "big");
    for (i, (offset, unit)) in data_type.endian_units().into_iter().enumerate() {
        if order.is_big(i) != native_big
            && let Some(b) = bytes.get_mut(offset..offset + unit)
        {
            b.reverse();
        }
    }
}

/// The v2 JSON of a fill value: v3's spelling, except that `|V<n>`, `|S<n>`
/// and structured records (little-endian; see [`fill_value_to_json_in`])
/// are base64, `vlen-bytes` elements base64, and a NaN with a payload is
/// `"NaN"`.
#[must_use]
pub fn fill_value_to_json(fill: &FillValue, data_type: &DataType) -> Value {
    fill_value_to_json_in(fill, data_type, &ByteOrder::Little)
}

/// [`fill_value_to_json`] for an array whose records are stored in `order`.
#[must_use]
pub fn fill_value_to_json_in(fill: &FillValue, data_type: &DataType, order: &ByteOrder) -> Value {
    match data_type {
        DataType::RawBits(_) | DataType::Bytes => {
            return Value::String(super::base64_encode(fill.as_bytes()));
        }
        // As zarr-python 2: the bytes NumPy keeps (trailing zeros dropped).
        DataType::FixedBytes(_) => {
            return Value::String(super::base64_encode(crate::metadata::strings::trim_nul(
                fill.as_bytes(),
            )));
        }
        DataType::Struct(_) => {
            let mut bytes = fill.as_bytes().to_vec();
            swap_to_native(&mut bytes, data_type, order);
            return Value::String(super::base64_encode(&bytes));
        }
        DataType::String => {
            return Value::String(String::from_utf8_lossy(fill.as_bytes()).into_owned());
        }
        DataType::VlenArray(_) | DataType::Object => return object_fill_value_to_json(fill),
        _ => {}
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

// ---------------------------------------------------------------------------
// Object codecs (`|O` arrays). The first entry of `filters` of an object
// array is its object codec, which serialises the elements: in the model
// it is the array→bytes codec, and the remaining filters and the compressor
// follow it. `vlen-utf8` and `vlen-bytes` are this module's; the other ids
// are mapped in `object_codec` below and implemented in
// codec/{vlen_array,json2,msgpack2,categorize}.rs.
// ---------------------------------------------------------------------------

/// What the first filter of an `|O` array makes of it.
enum ObjectCodec {
    /// An object codec: the data type and the array→bytes codec.
    Serialises(DataType, ExtensionObject),
    /// A filter that stays a filter (`categorize`): the data type.
    Filter(DataType),
}

/// The object codec `id` of an `|O` array, with its options, in the model.
///
/// # Errors
/// [`MetadataError::UnsupportedExtension`] naming an unknown object codec,
/// or `pickle` with why it is refused and how to convert the data;
/// [`MetadataError::InvalidField`] for a malformed `vlen-array` `dtype`.
fn object_codec(id: &str, configuration: &JsonMap) -> Result<ObjectCodec, MetadataError> {
    // Object codecs of other modules (branch v2obj): keep this arm small.
    let other = |data_type: DataType| {
        ObjectCodec::Serialises(
            data_type,
            ExtensionObject::with_configuration(id, configuration.clone()),
        )
    };
    Ok(match id {
        crate::codec::vlen::UTF8_NAME => ObjectCodec::Serialises(
            DataType::String,
            ExtensionObject::with_configuration(id, JsonMap::new()),
        ),
        crate::codec::vlen::BYTES_NAME => ObjectCodec::Serialises(
            DataType::Bytes,
            ExtensionObject::with_configuration(id, JsonMap::new()),
        ),
        "vlen-array" => {
            let value = configuration.get("dtype").unwrap_or(&Value::Null);
            let (inner, _) = dtype_from_json(value).map_err(|_| {
                MetadataError::invalid(
                    "filters[0].dtype",
                    "the NumPy type string of the `vlen-array` elements",
                    value,
                )
            })?;
            other(DataType::VlenArray(Box::new(inner)))
        }
        "json2" | "msgpack2" => other(DataType::Object),
        "categorize" => ObjectCodec::Filter(DataType::String),
        "pickle" => {
            return Err(MetadataError::UnsupportedExtension {
                point: "v2 object codec",
                name: "pickle (unpickling can run arbitrary code, so zarrkit never does it;                        convert the array in Python, trusting its source, by re-saving it with                        `object_codec=numcodecs.VLenUTF8()` for strings, `VLenBytes()` for                        bytes or `JSON()` for other objects)"
                    .into(),
            });
        }
        other_id => {
            return Err(MetadataError::UnsupportedExtension {
                point: "v2 object codec",
                name: other_id.to_string(),
            });
        }
    })
}

/// The fill value of the object types of other modules (`vlen-array`,
/// `json2`, `msgpack2`): `0` and `null` are empty / the JSON text.
fn object_fill_value(value: &Value, data_type: &DataType) -> Result<FillValue, MetadataError> {
    Ok(match data_type {
        DataType::Object => FillValue::new(value.to_string().into_bytes()),
        _ => FillValue::new(Vec::new()),
    })
}

fn object_fill_value_to_json(fill: &FillValue) -> Value {
    serde_json::from_slice(fill.as_bytes()).unwrap_or(Value::from(0))
}

/// The v2 filter object of the object codec `codec`, or `None` if it is
/// not an object codec.
fn object_codec_to_json(codec: &ExtensionObject) -> Option<Value> {
    match codec.name.as_str() {
        crate::codec::vlen::UTF8_NAME
        | crate::codec::vlen::BYTES_NAME
        | "vlen-array"
        | "json2"
        | "msgpack2" => Some(filter_to_json(&codec.name, codec.configuration_or_empty())),
        _ => None,
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
    // Strings to integer labels (codec/numcodecs/categorize.rs checks its `dtype`).
    ("categorize", &["labels", "dtype", "astype"]),
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
                    DataType::RawBits(_)
                        | DataType::Complex64
                        | DataType::Complex128
                        | DataType::FixedBytes(_)
                        | DataType::FixedUtf32(_)
                        | DataType::Struct(_)
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
    first_index: usize,
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
        let i = i + first_index;
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
        // `categorize` takes strings, which the codec itself checks.
        let input = if id == "categorize" {
            None
        } else {
            filter_dtype(&configuration, input_key, &field(input_key))?
        };
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
    let byte_order = match codecs.next() {
        Some(codec) if codec.name == "bytes" => {
            let big = codec
                .configuration
                .as_ref()
                .and_then(|c| c.get("endian"))
                .and_then(Value::as_str)
                == Some("big");
            if big {
                ByteOrder::Big
            } else {
                ByteOrder::Little
            }
        }
        Some(codec) if codec.name == crate::codec::struct_bytes::NAME => {
            let units = crate::codec::struct_bytes::unit_orders(codec).ok_or_else(|| {
                not_representable(format!(
                    "the codec `{}` with configuration `{}`",
                    codec.name,
                    compact(&Value::Object(codec.configuration_or_empty()))
                ))
            })?;
            ByteOrder::from_units(units)
        }
        Some(codec) => match object_codec_to_json(codec) {
            // v2: the object codec is the first filter.
            Some(filter) => {
                filters.insert(0, filter);
                ByteOrder::NotRelevant
            }
            None => {
                return Err(not_representable(format!(
                    "the codec `{}` in place of `bytes`",
                    codec.name
                )));
            }
        },
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
    let byte_order = match array_big_endian {
        Some(true) => ByteOrder::Big,
        Some(false) => ByteOrder::Little,
        None => byte_order,
    };
    // `null`, and zarr-python 2.18's `0` for object arrays, are written
    // back while the fill value is still what they read as.
    let marked = match array.extra_fields.get(NULL_FILL_VALUE_FIELD) {
        Some(Value::Null) => Some((Value::Null, FillValue::zero(&array.data_type))),
        Some(marker @ Value::Number(_)) => {
            fill_value_from_json_in(marker, &array.data_type, &byte_order)
                .ok()
                .map(|fill| (marker.clone(), fill))
        }
        _ => None,
    };
    let fill_value = match marked {
        Some((marker, fill)) if fill == array.fill_value => marker,
        _ => fill_value_to_json_in(&array.fill_value, &array.data_type, &byte_order),
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
    doc.insert("dtype".into(), dtype_to_json(&array.data_type, &byte_order));
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
    super::pretty_json(document)
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

/// The key of the document `name` (`.zarray`, `.zgroup`, `.zattrs`) of the
/// node at `path` (v2 spec, "Hierarchies").
pub(crate) fn node_key(path: &NodePath, name: &str) -> Result<StoreKey, StoreError> {
    path.to_prefix().key(name)
}

/// Whether the node at `path` exists (v2 "Groups": a node is a path with
/// `.zarray` or `.zgroup`).
fn is_node(store: &dyn Store, path: &NodePath) -> Result<bool, Error> {
    Ok(store.size(&node_key(path, ARRAY_KEY)?)?.is_some()
        || store.size(&node_key(path, GROUP_KEY)?)?.is_some())
}

/// Zarr v2 in the dispatch of [`super::version`]: a node is a directory
/// holding its `.zarray` or `.zgroup` and its `.zattrs`.
pub(crate) struct V2;

impl super::Version for V2 {
    fn is_document_key(&self, key: &StoreKey) -> bool {
        [
            ARRAY_KEY,
            GROUP_KEY,
            ATTRIBUTES_KEY,
            super::consolidate::V2_KEY,
        ]
        .contains(&key.name())
    }

    fn node_prefix(&self, path: &NodePath) -> StorePrefix {
        path.to_prefix()
    }

    fn metadata_key(&self, path: &NodePath) -> Result<StoreKey, StoreError> {
        node_key(path, ARRAY_KEY)
    }

    /// v2 "Chunks": the indices joined by `.`.
    fn default_chunk_key_encoding(&self) -> ChunkKeyEncoding {
        ChunkKeyEncoding::V2 {
            separator: Separator::Dot,
        }
    }

    /// Reads the node at `path`, or `None` when there is none. v2
    /// "Hierarchies": a node's document is `.zarray` or `.zgroup` (a node with
    /// both is read as the array, as zarr-python 2 does), its attributes
    /// `.zattrs`.
    ///
    /// # Errors
    /// [`Error::Metadata`] naming the key of an invalid document, or a store
    /// error.
    fn read_node(&self, store: &dyn Store, path: &NodePath) -> Result<Option<NodeMetadata>, Error> {
        let array_key = node_key(path, ARRAY_KEY)?;
        let array = store.get(&array_key, None)?;
        let group_key = node_key(path, GROUP_KEY)?;
        let (key, bytes) = match array {
            Some(bytes) => (array_key, bytes),
            None => match store.get(&group_key, None)? {
                Some(bytes) => (group_key, bytes),
                None => return Ok(None),
            },
        };
        let attributes_key = node_key(path, ATTRIBUTES_KEY)?;
        let attributes = match store.get(&attributes_key, None)? {
            None => None,
            Some(bytes) => Some(parse_attributes(&bytes).map_err(|source| Error::Metadata {
                key: attributes_key,
                source,
            })?),
        };
        let metadata = if key.as_str().ends_with(ARRAY_KEY) {
            parse_array(&bytes, attributes).map(NodeMetadata::Array)
        } else {
            parse_group(&bytes, attributes).map(NodeMetadata::Group)
        }
        .map_err(|source| Error::Metadata { key, source })?;
        Ok(Some(metadata))
    }

    fn serialize_node(&self, metadata: &NodeMetadata) -> Result<Vec<u8>, MetadataError> {
        Ok(to_bytes(&match metadata {
            NodeMetadata::Array(array) => array_to_json(array)?,
            NodeMetadata::Group(_) => group_to_json(),
        }))
    }

    /// Writes the node's `.zarray` or `.zgroup` and its `.zattrs`, creating
    /// `.zgroup`s at ancestors that are not nodes yet.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] if the array cannot be written as v2, or a
    /// store error.
    fn write_node(
        &self,
        store: &dyn Store,
        path: &NodePath,
        metadata: &NodeMetadata,
        mode: super::WriteMode,
    ) -> Result<bool, Error> {
        let (name, document, attributes) = match metadata {
            NodeMetadata::Array(array) => (
                ARRAY_KEY,
                array_to_json(array).map_err(|source| Error::InvalidMetadata {
                    path: path.clone(),
                    source,
                })?,
                &array.attributes,
            ),
            NodeMetadata::Group(group) => (GROUP_KEY, group_to_json(), &group.attributes),
        };
        // v2 "Groups": creating a node creates groups at all its ancestors.
        let mut ancestor = path.parent();
        while let Some(parent) = ancestor {
            if store.size(&node_key(&parent, GROUP_KEY)?)?.is_none()
                && store.size(&node_key(&parent, ARRAY_KEY)?)?.is_none()
                && store.size(&v3::document_key(&parent)?)?.is_none()
            {
                // Created only if absent where the store can: a writer
                // creating an array there meanwhile keeps its node, and
                // two writers creating a child each write one `.zgroup`.
                super::put_node_document(
                    store,
                    &node_key(&parent, GROUP_KEY)?,
                    &to_bytes(&group_to_json()),
                    super::WriteMode::Create,
                )?;
            }
            ancestor = parent.parent();
        }
        // zarr-python writes `.zattrs` even when empty; so does this, which
        // also replaces any stale one.
        super::put_node_with_attributes(
            store,
            (&node_key(path, name)?, &to_bytes(&document)),
            (
                &node_key(path, ATTRIBUTES_KEY)?,
                &to_bytes(&attributes_to_json(attributes)),
            ),
            mode,
        )
    }

    /// The paths of the children of the group at `path`, sorted by name: the
    /// directories below it that are nodes.
    ///
    /// # Errors
    /// A store error (including a store that cannot list).
    fn children(&self, store: &dyn Store, path: &NodePath) -> Result<Vec<NodePath>, Error> {
        super::directory_children(store, path, |child| is_node(store, child))
    }

    /// Erases the node at `path` and everything below it.
    ///
    /// # Errors
    /// [`Error::NodeNotFound`] if there is no v2 node there, or a store error.
    fn erase_node(&self, store: &dyn Store, path: &NodePath) -> Result<(), Error> {
        super::erase_directory_node(store, path, is_node(store, path)?)
    }

    fn node_of_document(&self, key: &StoreKey) -> Option<NodePath> {
        super::node_of_document_named(key, &[ARRAY_KEY, GROUP_KEY])
    }

    /// Each document under its key: `.zarray` or `.zgroup`, and `.zattrs`.
    fn node_document(&self, metadata: &NodeMetadata) -> Result<Value, MetadataError> {
        Ok(match metadata {
            NodeMetadata::Array(array) => serde_json::json!({
                ARRAY_KEY: array_to_json(array)?,
                ATTRIBUTES_KEY: &array.attributes,
            }),
            NodeMetadata::Group(group) => serde_json::json!({
                GROUP_KEY: group_to_json(),
                ATTRIBUTES_KEY: &group.attributes,
            }),
        })
    }

    fn array_document(&self, array: &ArrayMetadata) -> Option<Value> {
        array_to_json(array).ok()
    }

    /// `dtype`, `order`, `filters` and `compressor`.
    fn display_facts(&self, array: &ArrayMetadata) -> Vec<(String, String)> {
        let Some(document) = self.array_document(array) else {
            return Vec::new();
        };
        ["dtype", "order", "filters", "compressor"]
            .into_iter()
            .map(|field| (format!("v2 {field}"), document[field].to_string()))
            .collect()
    }

    fn holds_mixed_byte_order_structs(&self) -> bool {
        true
    }

    fn keeps_consolidated_metadata_in_the_root(&self) -> bool {
        true
    }

    fn consolidation(&self) -> Option<&'static dyn super::consolidate::Consolidation> {
        Some(&super::consolidate::V2Consolidation)
    }
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
        for bad in ["|S0", "<U0", "|U3", "|Sx"] {
            let err = dtype_from_json(&json!(bad)).unwrap_err();
            assert!(err.to_string().contains("`dtype`"), "{bad}: {err}");
        }
        for unsupported in [
            "|O", "<M8[xs]", "|m8[s]", "<m4[s]", "<M8[0s]", "<M8[ns", "<m8[]",
        ] {
            let err = dtype_from_json(&json!(unsupported)).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("unsupported v2 data type `{unsupported}`")
            );
        }
        let err = dtype_from_json(&json!([["a", "<i4"], ["b", ">i4"]])).unwrap_err();
        assert!(err.to_string().contains("different byte orders"), "{err}");
    }

    #[test]
    fn string_dtypes_map_to_fixed_length_types() {
        assert_eq!(
            numpy_dtype_from_json(&json!("|S5")).unwrap(),
            (DataType::FixedBytes(5), ByteOrder::NotRelevant)
        );
        assert_eq!(
            numpy_dtype_from_json(&json!(">U3")).unwrap(),
            (DataType::FixedUtf32(12), ByteOrder::Big)
        );
        assert_eq!(dtype_to_string(&DataType::FixedUtf32(12), false), "<U3");
        assert_eq!(dtype_to_string(&DataType::FixedBytes(5), true), "|S5");
        assert_eq!(dtype_to_string(&DataType::String, false), "|O");
    }

    #[test]
    fn structured_dtypes_keep_names_shapes_nesting_and_byte_orders() {
        let dtype = json!([
            ["a", "<i4"],
            ["b", ">f8"],
            ["c", "|S2"],
            ["d", "<i2", [2, 3]],
            ["e", [["x", "|u1"], ["y", ">u2"]]]
        ]);
        let (data_type, order) = numpy_dtype_from_json(&dtype).unwrap();
        let DataType::Struct(fields) = &data_type else {
            panic!("{data_type:?}");
        };
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e"]);
        assert_eq!(fields[3].shape, [2, 3]);
        assert_eq!(data_type.size(), 4 + 8 + 2 + 12 + 3);
        // a, b, six of d, e.y
        let mut units = vec![false, true];
        units.extend([false; 6]);
        units.push(true);
        assert_eq!(order, ByteOrder::PerUnit(units));
        assert_eq!(dtype_to_json(&data_type, &order), dtype);
        let same = json!([["a", ">i4"], ["s", "|S3"], ["u", ">U1"]]);
        let (data_type, order) = numpy_dtype_from_json(&same).unwrap();
        assert_eq!(order, ByteOrder::Big);
        assert_eq!(dtype_to_json(&data_type, &order), same);
        let array = parse(json!({"dtype": dtype, "fill_value": null})).unwrap();
        assert_eq!(array.codecs[0].name, crate::codec::struct_bytes::NAME);
        let back = array_to_json(&array).unwrap();
        assert_eq!(back["dtype"], dtype);
        let array = parse(json!({"dtype": same, "order": "F", "fill_value": null})).unwrap();
        assert_eq!(
            Value::Object(array.codecs[1].configuration_or_empty()),
            json!({"endian": "big"})
        );
        assert_eq!(array_to_json(&array).unwrap()["dtype"], same);
    }

    #[test]
    fn aligned_struct_padding_fields_are_kept() {
        // NumPy's descr of `np.dtype([("a", "u1"), ("b", "<i4"), ("c", "u1")], align=True)`.
        let dtype = json!([
            ["a", "|u1"],
            ["", "|V3"],
            ["b", "<i4"],
            ["c", "|u1"],
            ["", "|V3"]
        ]);
        let (data_type, order) = numpy_dtype_from_json(&dtype).unwrap();
        assert_eq!(data_type.size(), 12);
        assert_eq!(order, ByteOrder::Little);
        assert_eq!(dtype_to_json(&data_type, &order), dtype);
        assert!(numpy_dtype_from_json(&json!([["", "<i4"]])).is_err());
    }

    #[test]
    fn malformed_structured_dtypes_name_the_field() {
        for (dtype, needle) in [
            (json!([]), "`dtype`"),
            (json!([["a"]]), "`dtype[0]`"),
            (json!([["", "<i4"]]), "`dtype[0][0]`"),
            (json!([["a", "<i4"], ["a", "<i4"]]), "`dtype[1][0]`"),
            (json!([["a", "<q4"]]), "`dtype[0][1]`"),
            (json!([["a", "<i4", [-1]]]), "`dtype[0][2]`"),
            (
                json!([["a", "<i4", [1_u64 << 40, 1_u64 << 40]]]),
                "`dtype[0]`",
            ),
            (
                json!([["a", [["b", [["c", 5]]]]]]),
                "`dtype[0][1][0][1][0][1]`",
            ),
            (json!([["a", "|S1", [0]]]), "at least one byte"),
            (json!([["o", "|O"]]), "|O"),
        ] {
            let err = numpy_dtype_from_json(&dtype).unwrap_err().to_string();
            assert!(err.contains(needle), "{dtype}: {err}");
        }
        let mut deep = json!("<i4");
        for _ in 0..40 {
            deep = json!([["a", deep]]);
        }
        let err = numpy_dtype_from_json(&deep).unwrap_err().to_string();
        assert!(err.contains("nested at most 16"), "{err}");
    }

    #[test]
    fn string_and_struct_fill_values_in_zarr_python_2_forms() {
        let s = parse(json!({"dtype": "|S4", "fill_value": "YWI="})).unwrap();
        assert_eq!(s.fill_value.as_bytes(), b"ab\0\0");
        assert_eq!(array_to_json(&s).unwrap()["fill_value"], "YWI=");
        let empty = parse(json!({"dtype": "|S4", "fill_value": ""})).unwrap();
        assert_eq!(empty.fill_value.as_bytes(), [0; 4]);
        assert!(parse(json!({"dtype": "|S1", "fill_value": "YWI="})).is_err());
        let u = parse(json!({"dtype": ">U3", "fill_value": "h\u{e9}"})).unwrap();
        let mut expected = Vec::new();
        for c in ['h', '\u{e9}', '\0'] {
            expected.extend((c as u32).to_ne_bytes());
        }
        assert_eq!(u.fill_value.as_bytes(), expected);
        assert_eq!(array_to_json(&u).unwrap()["fill_value"], "h\u{e9}");
        // zarr-python 2.18: (1, 2.0) as `<i4`, `>f8`, each field as stored.
        let st = parse(json!({"dtype": [["a", "<i4"], ["b", ">f8"]],
                              "fill_value": "AQAAAEAAAAAAAAAA"}))
        .unwrap();
        let mut record = 1i32.to_ne_bytes().to_vec();
        record.extend(2.0f64.to_ne_bytes());
        assert_eq!(st.fill_value.as_bytes(), record);
        assert_eq!(
            array_to_json(&st).unwrap()["fill_value"],
            "AQAAAEAAAAAAAAAA"
        );
        assert!(parse(json!({"dtype": [["a", "<i4"]], "fill_value": 0})).is_err());
        assert!(parse(json!({"dtype": [["a", "<i4"]], "fill_value": "AQ=="})).is_err());
    }

    #[test]
    fn object_arrays_take_their_type_from_the_object_codec() {
        let utf8 = parse(json!({"dtype": "|O", "filters": [{"id": "vlen-utf8"}],
            "fill_value": 0, "compressor": {"id": "blosc", "shuffle": -1}}))
        .unwrap();
        assert_eq!(utf8.data_type, DataType::String);
        let names: Vec<&str> = utf8.codecs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["vlen-utf8", "blosc"]);
        // The compressor sees bytes: typesize 1, AUTOSHUFFLE is bit-shuffle.
        assert_eq!(utf8.codecs[1].configuration_or_empty()["typesize"], 1);
        assert_eq!(
            utf8.codecs[1].configuration_or_empty()["shuffle"],
            "bitshuffle"
        );
        // As zarr-python 3.1 reads it: the string "0".
        assert_eq!(utf8.fill_value.as_bytes(), b"0");
        let back = array_to_json(&utf8).unwrap();
        assert_eq!(back["dtype"], "|O");
        assert_eq!(back["filters"], json!([{"id": "vlen-utf8"}]));
        assert_eq!(back["fill_value"], 0);
        let hi = parse(json!({"dtype": "|O", "filters": [{"id": "vlen-utf8"}],
            "fill_value": "hi", "order": "F"}))
        .unwrap();
        assert_eq!(hi.fill_value.as_bytes(), b"hi");
        assert_eq!(hi.codecs[0].name, "transpose");
        let back = array_to_json(&hi).unwrap();
        assert_eq!(
            (&back["fill_value"], &back["order"]),
            (&json!("hi"), &json!("F"))
        );
        let bytes = parse(json!({"dtype": "|O",
            "filters": [{"id": "vlen-bytes"}, {"id": "crc32"}], "fill_value": "AQI="}))
        .unwrap();
        assert_eq!(bytes.data_type, DataType::Bytes);
        assert_eq!(bytes.fill_value.as_bytes(), [1, 2]);
        let names: Vec<&str> = bytes.codecs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["vlen-bytes", "numcodecs.crc32"]);
        // Written back, the last byte codec is the compressor (v2 cannot
        // tell a trailing byte filter from a compressor).
        let back = array_to_json(&bytes).unwrap();
        assert_eq!(back["filters"], json!([{"id": "vlen-bytes"}]));
        assert_eq!(back["compressor"], json!({"id": "crc32"}));
        let null = parse(json!({"dtype": "|O", "filters": [{"id": "vlen-bytes"}],
            "fill_value": null}))
        .unwrap();
        assert_eq!(array_to_json(&null).unwrap()["fill_value"], Value::Null);
        let array =
            parse(json!({"dtype": "|O", "filters": [{"id": "vlen-array", "dtype": "<i2"}]}))
                .unwrap();
        assert_eq!(
            array.data_type,
            DataType::VlenArray(Box::new(DataType::Int16))
        );
        let json2 = parse(json!({"dtype": "|O", "filters": [{"id": "json2"}]})).unwrap();
        assert_eq!(json2.data_type, DataType::Object);
    }

    #[test]
    fn object_arrays_without_a_known_object_codec_are_refused_with_a_reason() {
        for (filters, needle) in [
            (json!(null), "needs an object codec"),
            (json!([]), "needs an object codec"),
            (json!([{"id": "pickle"}]), "arbitrary code"),
            (json!([{"id": "pickle"}]), "VLenUTF8"),
            (
                json!([{"id": "made-up"}]),
                "unsupported v2 object codec `made-up`",
            ),
            (json!([{"id": "vlen-array"}]), "`filters[0].dtype`"),
            (
                json!([{"id": "vlen-utf8"}, {"id": "delta"}]),
                "follows the object codec",
            ),
            (json!([{"id": "vlen-utf8"}, {"id": "nope"}]), "`nope`"),
        ] {
            let err = parse(json!({"dtype": "|O", "filters": filters.clone()}))
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle), "{filters}: {err}");
        }
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
        let err = parse(json!({"filters": [{"id": "vlen-utf9"}]})).unwrap_err();
        assert_eq!(err.to_string(), "unsupported v2 filter `vlen-utf9`");
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
        fn structured_dtypes_round_trip_through_the_model(
            fields in prop::collection::vec(
                (
                    prop::sample::select(vec!["<i4", ">i4", "|u1", "<f8", ">c8", "|S3", ">U2", "<U1", "|b1", ">M8[s]"]),
                    prop::collection::vec(1u64..3, 0..3),
                    any::<bool>(),
                ),
                1..5,
            ),
            fill in prop::collection::vec(any::<u8>(), 64),
        ) {
            let items: Vec<Value> = fields
                .iter()
                .enumerate()
                .map(|(i, (t, shape, nested))| {
                    let t = if *nested { json!([["n", t]]) } else { json!(t) };
                    if shape.is_empty() {
                        json!([format!("f{i}"), t])
                    } else {
                        json!([format!("f{i}"), t, shape])
                    }
                })
                .collect();
            let dtype = Value::Array(items);
            let (data_type, order) = numpy_dtype_from_json(&dtype)?;
            prop_assert_eq!(dtype_to_json(&data_type, &order), dtype.clone());
            // A base64 fill value is the record as stored, and reads back.
            let record = &fill[..data_type.size().min(64)];
            if record.len() == data_type.size() {
                let text = crate::format::base64_encode(record);
                let value = fill_value_from_json_in(&Value::from(text), &data_type, &order)?;
                prop_assert_eq!(
                    fill_value_to_json_in(&value, &data_type, &order),
                    Value::from(crate::format::base64_encode(record))
                );
            }
        }

        #[test]
        fn random_structured_dtypes_never_panic(
            value in prop::collection::vec(
                prop_oneof![
                    Just(json!(["a", "<i4"])), Just(json!(["a", "<i4", [2]])),
                    Just(json!(["b", [["c", ">u2"]]])), Just(json!(["", "|u1"])),
                    Just(json!(["d", "<i4", [-1]])), Just(json!(["e"])), Just(json!(3)),
                    Just(json!(["f", "|O"])), Just(json!(["g", ">U0"])), Just(json!(["h", [], []])),
                ],
                0..5,
            ),
        ) {
            let _ = numpy_dtype_from_json(&Value::Array(value.clone()));
            let doc = json!({"zarr_format": 2, "shape": [2], "chunks": [1], "dtype": value,
                "compressor": null, "fill_value": "AAAA", "order": "C", "filters": null});
            let _ = parse_array(doc.to_string().as_bytes(), None);
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
