//! The Zarr v3 core draft of 25 May 2022 (`v3-draft-2022`): the entry point
//! `zarr.json`, `meta/…` node documents and `data/…` chunks ↔ the internal
//! model.
//!
//! Spec: `seeds/v3-core-2022-05-25-draft.txt` ("Entry point metadata",
//! "Array metadata", "Group metadata", "Storage keys", "Operations") and the
//! codec texts of that era in `draft-2022-companions/codecs/` (`endian`,
//! `gzip`, `blosc`, all `…/1.0`).
//!
//! # Layout
//!
//! | node | document | chunks |
//! |---|---|---|
//! | root array | `meta/array.json` | `data/c0/0` |
//! | root group | `meta/group.json` (optional) | — |
//! | array `/foo/baz` | `meta/foo/baz.array.json` | `data/foo/baz/c1/0` |
//! | group `/foo` | `meta/foo.group.json` (optional: implicit groups) | — |
//!
//! `.json` is the entry point's `metadata_encoding.metadata_key_suffix`, which
//! is honoured when it says otherwise. A 0-d array's one chunk is `c`.
//!
//! # Mapping onto the model
//!
//! - Data types are the draft's names (`int32`, `float64`, `bool`, `r24`, …),
//!   which are the model's names. Extension data types: the string
//!   (`S12`, `<U4`, `>U4`), datetime and struct extensions of that era, and
//!   any other through its `fallback` when the caller allows it (see
//!   [`super::dtypes`]); written with a raw (`r<bits>`) or `int64`
//!   fallback.
//! - The sharding storage transformer becomes a `sharding_indexed` codec
//!   (see `sharding`).
//! - `chunk_memory_layout` `"F"` becomes a leading `transpose` codec that
//!   reverses the dimensions; on writing, such a leading `transpose` becomes
//!   `"F"` again.
//! - The `endian` codec becomes the `bytes` codec; when the draft's chain has
//!   none, the default representation (little endian) is meant, so a
//!   little-endian `bytes` codec is put after the array-to-array codecs.
//!   Writing leaves a little-endian `bytes` codec out, as the draft allows.
//! - `gzip/1.0` and `blosc/1.0` become `gzip` and `blosc` (blosc's `shuffle`
//!   integer becomes its name; `typesize` is the element size).
//!   `transpose/1.0` carries a `transpose` codec's `order`. Any other codec
//!   URI is an error naming it, and so is writing a codec the draft cannot
//!   name (such as `zstd` or `crc32c`).
//! - The grid's `separator` is kept as a `default` chunk key encoding; the
//!   key of a chunk comes from [`crate::format::chunk_layout`], which glues `c` to
//!   the first index as this draft does (`c0/0`, not `c/0/0`).
//! - `fill_value` is required and may be a number, `"NaN"`, `"+Infinity"`,
//!   `"-Infinity"`, `"0x…"` (hex) or `"0b…"` (binary) with every digit of the
//!   element given.
//! - `extensions` (in the entry point and in array documents) whose
//!   `must_understand` is `true` stop the node opening, naming the URI; the
//!   others are ignored (those of an array are kept and written back).
//!
//! This module also holds what the draft layouts share with
//! [`super::draft2019`]: reading the entry point, the key layout,
//! implicit groups and listing children.
//!
//! ```
//! use zarrkit::format::v3_draft2022;
//! use zarrkit::metadata::{DataType, NodeMetadata};
//!
//! let document = br#"{
//!     "shape": [10, 4], "data_type": "float64",
//!     "chunk_grid": {"type": "regular", "chunk_shape": [5, 2], "separator": "/"},
//!     "chunk_memory_layout": "F", "fill_value": "-Infinity",
//!     "codecs": [{"type": "https://purl.org/zarr/spec/codecs/gzip/1.0",
//!                 "configuration": {"level": 1}}],
//!     "extensions": [], "attributes": {}
//! }"#;
//! let NodeMetadata::Array(array) = v3_draft2022::parse_array(document)? else { unreachable!() };
//! assert_eq!(array.data_type, DataType::Float64);
//! let names: Vec<&str> = array.codecs.iter().map(|c| c.name.as_str()).collect();
//! assert_eq!(names, ["transpose", "bytes", "gzip"]);
//! # Ok::<(), zarrkit::metadata::MetadataError>(())
//! ```

use super::dtypes::{self, DraftReadOptions};
use super::sharding;
use crate::Error;
use crate::format::ChunkLayout;
use crate::format::v3;
use crate::metadata::NodePath;
use crate::metadata::{
    ArrayMetadata, ChunkKeyEncoding, DataType, ExtensionObject, FillValue, GroupMetadata, JsonMap,
    MetadataError, NodeMetadata,
};
use crate::store::{Store, StoreError, StoreKey, StorePrefix};
use serde_json::Value;

// What the drafts share (entry point, key layout, common fields) is in
// `format/v3_draft/`; the public constants stay reachable here.
#[allow(clippy::wildcard_imports)]
use super::*;
pub use super::{DEFAULT_SUFFIX, ENTRY_POINT_KEY, ZARR_FORMAT};

/// The URI prefix of this draft's codecs (`…/codecs/gzip/1.0`).
const CODEC_URI_PREFIX: &str = "https://purl.org/zarr/spec/codecs/";

/// The codecs this draft names, by their model names.
const CODECS: &[&str] = &["endian", "transpose", "gzip", "blosc"];

/// The fields of an array document (2022 draft, "Array metadata": "The array
/// metadata object must not contain any other names").
const ARRAY_FIELDS: &[&str] = &[
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_memory_layout",
    "fill_value",
    "extensions",
    "attributes",
    "codecs",
    "storage_transformers",
];

/// The entry point this module writes into an empty store.
#[must_use]
pub fn entry_point_document() -> Vec<u8> {
    let doc = serde_json::json!({
        "zarr_format": ZARR_FORMAT,
        "metadata_encoding": {"type": "json", "metadata_key_suffix": DEFAULT_SUFFIX},
        "extensions": [],
    });
    crate::format::pretty_json(&doc)
}

/// Parses an array document (`meta/….array.json`).
///
/// # Errors
/// A [`MetadataError`] naming the field: a missing required field, a field
/// of the wrong type, an unknown field, an unknown codec URI, extension data
/// type, storage transformer or must-understand extension.
pub fn parse_array(bytes: &[u8]) -> Result<NodeMetadata, MetadataError> {
    parse_array_with(bytes, DraftReadOptions::default())
}

/// Parses an array document with `options` (see
/// [`super::dtypes`] for data type fallbacks).
///
/// # Errors
/// As [`parse_array`].
pub fn parse_array_with(
    bytes: &[u8],
    options: DraftReadOptions,
) -> Result<NodeMetadata, MetadataError> {
    let value: Value = serde_json::from_slice(bytes).map_err(MetadataError::Json)?;
    let Value::Object(doc) = value else {
        return Err(MetadataError::NotAnObject);
    };
    array_from_json(&doc, options).map(NodeMetadata::Array)
}

/// Parses a group document (`meta/….group.json`).
///
/// # Errors
/// As [`parse_array`]: only `attributes` may be present.
pub fn parse_group(bytes: &[u8]) -> Result<NodeMetadata, MetadataError> {
    let value: Value = serde_json::from_slice(bytes).map_err(MetadataError::Json)?;
    let Value::Object(doc) = value else {
        return Err(MetadataError::NotAnObject);
    };
    // 2022 draft, "Group metadata": all names but `attributes` are reserved.
    reject_unknown_fields(&doc, &["attributes"])?;
    Ok(NodeMetadata::Group(GroupMetadata {
        attributes: attributes_from_json(&doc)?,
        extra_fields: JsonMap::new(),
    }))
}

fn array_from_json(
    doc: &JsonMap,
    options: DraftReadOptions,
) -> Result<ArrayMetadata, MetadataError> {
    reject_unknown_fields(doc, ARRAY_FIELDS)?;
    let shape = shape_from_json(required(doc, "shape")?)?;
    let (data_type, type_big) = data_type_from_json(required(doc, "data_type")?, options)?;
    let (chunk_grid, separator) = chunk_grid_from_json(required(doc, "chunk_grid")?, None)?;
    let f_order = memory_layout_from_json(required(doc, "chunk_memory_layout")?)?;
    let fill_value = fill_value_from_json(required(doc, "fill_value")?, &data_type)?;
    let extensions = check_extensions(doc.get("extensions"), "extensions")?;
    let chunks_per_shard = sharding::from_json(doc.get("storage_transformers"), shape.len())?;
    let mut codecs = codecs_from_json(doc.get("codecs"), &data_type, f_order, shape.len())?;
    if let Some(big) = type_big {
        apply_type_byte_order(&mut codecs, big, doc.get("codecs"))?;
    }
    let mut extra_fields = JsonMap::new();
    if !extensions.is_empty() {
        extra_fields.insert("extensions".into(), Value::Array(extensions));
    }
    let metadata = ArrayMetadata {
        shape,
        data_type,
        chunk_grid,
        chunk_key_encoding: ChunkKeyEncoding::Default { separator },
        fill_value,
        codecs,
        storage_transformers: Vec::new(),
        dimension_names: None,
        attributes: attributes_from_json(doc)?,
        extra_fields,
    };
    metadata.validate()?;
    match chunks_per_shard {
        Some(counts) => sharding::shard(metadata, &counts),
        None => Ok(metadata),
    }
}

/// A name of the draft's core types (`int32`, `r24`): not the final v3
/// extension types nor their aliases (`complex_float32`).
fn core_data_type(name: &str) -> Option<DataType> {
    DataType::from_name(name)
        .filter(|data_type| !data_type.is_extension() && data_type.name() == name)
}

/// Parses `data_type`: a name of the draft's core types, or an extension
/// data type object ([`dtypes`]) with the byte order its `type` gives.
fn data_type_from_json(
    value: &Value,
    options: DraftReadOptions,
) -> Result<dtypes::Parsed, MetadataError> {
    match value {
        Value::String(name) => core_data_type(name)
            .map(|data_type| (data_type, None))
            .ok_or_else(|| MetadataError::UnsupportedExtension {
                point: "data type",
                name: name.clone(),
            }),
        Value::Object(object) if object.contains_key("extension") => {
            let core = |v: &Value| v.as_str().and_then(core_data_type).map(|d| (d, None));
            dtypes::extension_from_json(object, &core, options)
        }
        other => Err(MetadataError::invalid(
            "data_type",
            "a data type name such as `\"int32\"`",
            other,
        )),
    }
}

/// Gives the `bytes` codec the byte order of an extension type's `type`
/// (`>U4` is stored big endian). An `endian` codec may say the same, but
/// not the opposite.
fn apply_type_byte_order(
    codecs: &mut [ExtensionObject],
    big: bool,
    listed: Option<&Value>,
) -> Result<(), MetadataError> {
    let endian_uri = format!("{CODEC_URI_PREFIX}endian/1.0");
    let explicit = listed.and_then(Value::as_array).is_some_and(|items| {
        items
            .iter()
            .any(|c| c.get("type").and_then(Value::as_str) == Some(endian_uri.as_str()))
    });
    let Some(bytes) = codecs.iter_mut().find(|c| c.name == "bytes") else {
        return Ok(());
    };
    if explicit && bytes_is_big(bytes) != big {
        return Err(MetadataError::Inconsistent(format!(
            "the `endian` codec says {} endian but the data type's `type` says {}",
            if big { "little" } else { "big" },
            if big { "big" } else { "little" },
        )));
    }
    let mut configuration = bytes.configuration_or_empty();
    configuration.insert(
        "endian".into(),
        Value::from(if big { "big" } else { "little" }),
    );
    bytes.configuration = Some(configuration);
    Ok(())
}

fn codec_short_name(uri: &str) -> Option<&'static str> {
    let rest = uri.strip_prefix(CODEC_URI_PREFIX)?;
    let (name, version) = rest.split_once('/')?;
    if version != "1.0" {
        return None;
    }
    CODECS.iter().find(|&&n| n == name).copied()
}

fn codecs_from_json(
    value: Option<&Value>,
    data_type: &DataType,
    f_order: bool,
    ndim: usize,
) -> Result<Vec<ExtensionObject>, MetadataError> {
    let items = match value {
        // 2022 draft, "codecs": "An absent codecs member is equivalent to
        // specifying an empty list of codecs."
        None => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(other) => {
            return Err(MetadataError::invalid(
                "codecs",
                "an array of codec objects",
                other,
            ));
        }
    };
    let mut array_to_array = Vec::new();
    let mut bytes = None;
    let mut bytes_to_bytes = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = format!("codecs[{i}]");
        let Value::Object(object) = item else {
            return Err(MetadataError::invalid(field, "a codec object", item));
        };
        let uri = match object.get("type") {
            Some(Value::String(uri)) => uri,
            Some(other) => {
                return Err(MetadataError::invalid(
                    format!("{field}.type"),
                    "a codec URI",
                    other,
                ));
            }
            None => {
                return Err(MetadataError::invalid(
                    field,
                    "a codec object with `type`",
                    item,
                ));
            }
        };
        let configuration = match object.get("configuration") {
            None => JsonMap::new(),
            Some(Value::Object(c)) => c.clone(),
            Some(other) => {
                return Err(MetadataError::invalid(
                    format!("{field}.configuration"),
                    "an object",
                    other,
                ));
            }
        };
        if let Some((key, other)) = object
            .iter()
            .find(|(k, _)| !["type", "configuration"].contains(&k.as_str()))
        {
            return Err(MetadataError::invalid(
                format!("{field}.{key}"),
                "no member other than `type` and `configuration`",
                other,
            ));
        }
        let name = codec_short_name(uri).ok_or_else(|| MetadataError::UnsupportedExtension {
            point: "codec",
            name: uri.clone(),
        })?;
        let misplaced = || {
            MetadataError::Inconsistent(format!(
                "`{field}` (`{uri}`) comes after a codec that produces bytes"
            ))
        };
        match name {
            "transpose" => {
                if bytes.is_some() || !bytes_to_bytes.is_empty() {
                    return Err(misplaced());
                }
                array_to_array.push(ExtensionObject::with_configuration(
                    "transpose",
                    configuration,
                ));
            }
            "endian" => {
                if bytes.is_some() || !bytes_to_bytes.is_empty() {
                    return Err(misplaced());
                }
                bytes = Some(ExtensionObject::with_configuration("bytes", configuration));
            }
            other => bytes_to_bytes.push(compressor_from_draft(
                other,
                configuration,
                data_type,
                &format!("{field}.configuration"),
            )?),
        }
    }
    // endian/1.0: omitting the codec means the default (little endian)
    // representation.
    let bytes = bytes.unwrap_or_else(|| bytes_codec(data_type, false));
    Ok(assemble_codecs(
        f_order,
        ndim,
        array_to_array,
        bytes,
        bytes_to_bytes,
    ))
}

/// Parses `fill_value` (2022 draft, "fill_value"): required and not `null`;
/// numbers, `true`/`false`, `"NaN"`, `"+Infinity"`, `"-Infinity"`, and for
/// any core type a `"0x…"` or `"0b…"` string giving every bit of the element
/// (complex numbers as `[re, im]`, each part as a float, `r*` also as an
/// array of bytes).
///
/// # Errors
/// [`MetadataError::FillValueLength`] for a `0x…`/`0b…` string with too
/// many or too few digits; [`MetadataError::InvalidFillValue`] for any
/// other value the type does not take.
pub fn fill_value_from_json(
    value: &Value,
    data_type: &DataType,
) -> Result<FillValue, MetadataError> {
    // 2022 draft, "fill_value": "For core data types for which fill values
    // are not permitted in JSON or for which decimal representation could
    // be lossy, a string representing of the binary (starting with 0b) or
    // hexadecimal value (starting with 0x) is accepted. This string must
    // include all leading or trailing zeroes necessary to match the given
    // type size." The draft's core types are these; its extension types
    // (strings, structures) say their own fill values.
    let bit_strings = !matches!(
        data_type,
        DataType::Complex64
            | DataType::Complex128
            | DataType::FixedBytes(_)
            | DataType::FixedUtf32(_)
            | DataType::Struct(_)
    );
    match value {
        Value::String(s) if bit_strings && is_bit_string(s) => {
            let be = bits_from_string(s, data_type)?;
            element_from_big_endian(be, data_type).ok_or_else(|| MetadataError::InvalidFillValue {
                data_type: data_type.name(),
                found: value.to_string(),
            })
        }
        // A complex number is two floats of the draft: each part may be
        // such a string too (of the part's size), as in final v3's pair.
        Value::Array(parts)
            if matches!(data_type, DataType::Complex64 | DataType::Complex128)
                && parts.len() == 2 =>
        {
            let part_type = if *data_type == DataType::Complex64 {
                DataType::Float32
            } else {
                DataType::Float64
            };
            let mut bytes = Vec::with_capacity(data_type.size());
            for part in parts {
                let one = fill_value_from_json(part, &part_type).map_err(|err| match err {
                    MetadataError::FillValueLength { .. } => err,
                    _ => MetadataError::InvalidFillValue {
                        data_type: data_type.name(),
                        found: value.to_string(),
                    },
                })?;
                bytes.extend_from_slice(one.as_bytes());
            }
            Ok(FillValue::new(bytes))
        }
        _ => v3::fill_value_from_json(value, data_type),
    }
}

fn is_bit_string(s: &str) -> bool {
    s.starts_with("0x") || s.starts_with("0b")
}

/// The bytes of a `0x…`/`0b…` string, most significant first, if it gives
/// exactly the size of `data_type`.
fn bits_from_string(s: &str, data_type: &DataType) -> Result<Vec<u8>, MetadataError> {
    let size = data_type.size();
    let invalid = || MetadataError::InvalidFillValue {
        data_type: data_type.name(),
        found: Value::from(s).to_string(),
    };
    let (digits, per_byte, radix, radix_name) = if let Some(d) = s.strip_prefix("0x") {
        (d, 2, 16, "hexadecimal")
    } else {
        (s.strip_prefix("0b").ok_or_else(invalid)?, 8, 2, "binary")
    };
    if !digits.is_ascii() {
        return Err(invalid());
    }
    let expected = size.saturating_mul(per_byte);
    if digits.len() != expected {
        return Err(MetadataError::FillValueLength {
            data_type: data_type.name(),
            found: s.to_string(),
            radix: radix_name,
            digits: digits.len(),
            expected,
            size,
        });
    }
    digits
        .as_bytes()
        .chunks(per_byte)
        .map(|chunk| {
            std::str::from_utf8(chunk)
                .ok()
                .and_then(|c| u8::from_str_radix(c, radix).ok())
        })
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(invalid)
}

fn element_from_big_endian(mut bytes: Vec<u8>, data_type: &DataType) -> Option<FillValue> {
    match data_type {
        DataType::RawBits(_) => {}
        DataType::Bool => {
            if bytes[0] > 1 {
                return None;
            }
        }
        _ => {
            if cfg!(target_endian = "little") {
                bytes.reverse();
            }
        }
    }
    Some(FillValue::new(bytes))
}

/// The `fill_value` of this draft: as final v3 writes it, with `+Infinity`
/// for positive infinity and `r*` as a hex string.
#[must_use]
pub fn fill_value_to_json(fill: &FillValue, data_type: &DataType) -> Value {
    if let DataType::RawBits(_) = data_type {
        let hex: String = fill.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
        return Value::String(format!("0x{hex}"));
    }
    plus_infinity(v3::fill_value_to_json(fill, data_type))
}

fn plus_infinity(value: Value) -> Value {
    match value {
        Value::String(s) if s == "Infinity" => Value::from("+Infinity"),
        Value::Array(items) => Value::Array(items.into_iter().map(plus_infinity).collect()),
        other => other,
    }
}

/// Serialises a node to this draft's document (without its key).
///
/// # Errors
/// [`MetadataError::UnsupportedExtension`] for what this draft cannot say:
/// a codec other than `bytes`, `transpose`, `gzip` and `blosc`, dimension
/// names or storage transformers.
pub fn serialize_node(metadata: &NodeMetadata) -> Result<Vec<u8>, MetadataError> {
    let value = match metadata {
        NodeMetadata::Group(group) => serde_json::json!({ "attributes": group.attributes }),
        NodeMetadata::Array(array) => array_to_json(array)?,
    };
    Ok(format!("{value:#}").into_bytes())
}

fn array_to_json(array: &ArrayMetadata) -> Result<Value, MetadataError> {
    if let Some((inner, chunks_per_shard)) = sharding::unshard(array)? {
        let mut doc = array_to_json(&inner)?;
        if let Value::Object(doc) = &mut doc {
            doc.insert(
                "storage_transformers".into(),
                sharding::to_json(sharding::SPEC_URI, &chunks_per_shard),
            );
        }
        return Ok(doc);
    }
    check_representable(array)?;
    let split = split_codecs(&array.codecs, array.ndim());
    let big = split.bytes.is_some_and(bytes_is_big);
    let data_type = if array.data_type.is_extension() {
        // Extension data types, with the fallback the draft recommends: a
        // raw type of the element's size (a 64-bit integer for datetimes).
        let fallback = match array.data_type {
            DataType::NumpyDateTime64 { .. } | DataType::NumpyTimeDelta64 { .. } => {
                "int64".to_string()
            }
            _ => format!("r{}", array.data_type.size() * 8),
        };
        dtypes::extension_to_json(
            &array.data_type,
            big,
            dtypes::STRING_URI,
            dtypes::DATETIME_URI,
            Some(Value::String(fallback)),
        )
        .ok_or_else(|| MetadataError::UnsupportedExtension {
            point: "data type in this format",
            name: array.data_type.name(),
        })?
    } else {
        Value::String(array.data_type.name())
    };
    let mut codecs = Vec::new();
    for codec in split.array_to_array {
        if codec.name != "transpose" {
            return Err(MetadataError::UnsupportedExtension {
                point: "codec in this format",
                name: codec.name.clone(),
            });
        }
        codecs.push(serde_json::json!({
            "type": format!("{CODEC_URI_PREFIX}transpose/1.0"),
            "configuration": codec.configuration_or_empty(),
        }));
    }
    if split.bytes.is_some_and(bytes_is_big) {
        codecs.push(serde_json::json!({
            "type": format!("{CODEC_URI_PREFIX}endian/1.0"),
            "configuration": {"endian": "big"},
        }));
    }
    for codec in split.bytes_to_bytes {
        let (name, configuration) = compressor_to_draft(codec, &["gzip", "blosc"])?;
        codecs.push(serde_json::json!({
            "type": format!("{CODEC_URI_PREFIX}{name}/1.0"),
            "configuration": configuration,
        }));
    }
    let mut doc = JsonMap::new();
    doc.insert("shape".into(), Value::from(array.shape.clone()));
    doc.insert("data_type".into(), data_type);
    doc.insert(
        "chunk_grid".into(),
        chunk_grid_to_json(&array.chunk_grid, array.chunk_key_encoding.separator())?,
    );
    doc.insert(
        "chunk_memory_layout".into(),
        Value::from(if split.f_order { "F" } else { "C" }),
    );
    doc.insert("codecs".into(), Value::Array(codecs));
    doc.insert(
        "fill_value".into(),
        fill_value_to_json(&array.fill_value, &array.data_type),
    );
    doc.insert("extensions".into(), extensions_to_json(array));
    doc.insert("attributes".into(), Value::Object(array.attributes.clone()));
    Ok(Value::Object(doc))
}

/// The key layout of the store, from its entry point. `Ok(None)` when the
/// store is not a 2022 draft hierarchy.
fn keys(store: &dyn Store) -> Result<Option<DraftKeys>, Error> {
    Ok(match read_entry_point(store)? {
        EntryPoint::Draft2022 { suffix } => Some(DraftKeys::draft2022(suffix)),
        _ => None,
    })
}

/// Reads the node at `path` with `options` (see [`super::dtypes`]),
/// `Ok(None)` when the store is not a 2022 draft hierarchy or holds nothing
/// there. An implicit group reads as a group without attributes.
///
/// # Errors
/// [`Error::Metadata`] naming the document's key for an invalid document; a
/// store error.
pub fn read_node_with(
    store: &dyn Store,
    path: &NodePath,
    options: DraftReadOptions,
) -> Result<Option<NodeMetadata>, Error> {
    let Some(keys) = keys(store)? else {
        return Ok(None);
    };
    match find_node(store, &keys, path)? {
        None => Ok(None),
        Some(Found::Implicit) => Ok(Some(NodeMetadata::Group(GroupMetadata::default()))),
        Some(Found::Document(kind, key, bytes)) => {
            let parsed = match kind {
                DocKind::Array => parse_array_with(&bytes, options),
                DocKind::Group => parse_group(&bytes),
            };
            parsed
                .map(Some)
                .map_err(|source| Error::Metadata { key, source })
        }
    }
}

/// The 2022 draft in the dispatch of [`crate::format::version`].
pub(crate) struct Draft2022;

impl crate::format::Version for Draft2022 {
    fn is_document_key(&self, key: &StoreKey) -> bool {
        super::is_document_key(key)
    }

    /// The prefix under which the chunks of the array at `path` lie (`data/…/`).
    fn node_prefix(&self, path: &NodePath) -> StorePrefix {
        DraftKeys::draft2022(DEFAULT_SUFFIX.to_string()).data_prefix(path)
    }

    fn metadata_key(&self, path: &NodePath) -> Result<StoreKey, StoreError> {
        DraftKeys::draft2022(DEFAULT_SUFFIX.to_string()).doc_key(path, DocKind::Array)
    }

    fn chunk_layout(&self, path: &NodePath, encoding: &ChunkKeyEncoding) -> ChunkLayout {
        ChunkLayout {
            prefix: self.node_prefix(path),
            encoding: encoding.clone(),
            // "Regular grids": a 0-d array's chunk key is `c`.
            glued: Some("c"),
        }
    }

    /// This draft names no `zstd` codec, so its arrays get `gzip` (level 5)
    /// when that feature is on.
    fn default_codecs(&self, data_type: &DataType) -> Option<Vec<ExtensionObject>> {
        let mut codecs = vec![bytes_codec(data_type, false)];
        if cfg!(feature = "gzip") {
            let mut gzip = JsonMap::new();
            gzip.insert("level".into(), 5.into());
            codecs.push(ExtensionObject::with_configuration("gzip", gzip));
        }
        Some(codecs)
    }

    /// Reads the node at `path`, `Ok(None)` when the store is not a 2022 draft
    /// hierarchy or holds nothing there. An implicit group reads as a group
    /// without attributes.
    ///
    /// # Errors
    /// [`Error::Metadata`] naming the document's key for an invalid document; a
    /// store error.
    fn read_node(&self, store: &dyn Store, path: &NodePath) -> Result<Option<NodeMetadata>, Error> {
        read_node_with(store, path, DraftReadOptions::default())
    }

    fn serialize_node(&self, metadata: &NodeMetadata) -> Result<Vec<u8>, MetadataError> {
        serialize_node(metadata)
    }

    /// Writes the node's document, and the entry point first when the store has none.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] for what the draft cannot say,
    /// [`Error::NodePath`] for a name the draft does not allow,
    /// [`Error::Metadata`] when the store's entry point is of another format, or
    /// a store error.
    fn write_node(
        &self,
        store: &dyn Store,
        path: &NodePath,
        metadata: &NodeMetadata,
        mode: crate::format::WriteMode,
    ) -> Result<bool, Error> {
        check_names(path, None)?;
        let bytes = serialize_node(metadata).map_err(|source| Error::InvalidMetadata {
            path: path.clone(),
            source,
        })?;
        let keys = match read_entry_point(store)? {
            EntryPoint::Draft2022 { suffix } => DraftKeys::draft2022(suffix),
            EntryPoint::Absent => {
                store.set(&StoreKey::new(ENTRY_POINT_KEY)?, &entry_point_document())?;
                DraftKeys::draft2022(DEFAULT_SUFFIX.to_string())
            }
            other => return Err(wrong_entry_point(ZARR_FORMAT, &other)?),
        };
        let kind = match metadata {
            NodeMetadata::Array(_) => DocKind::Array,
            NodeMetadata::Group(_) => DocKind::Group,
        };
        put_document(store, &keys, path, kind, &bytes, mode)
    }

    /// The children of the group at `path`.
    ///
    /// # Errors
    /// A store error, including a store that cannot list.
    fn children(&self, store: &dyn Store, path: &NodePath) -> Result<Vec<NodePath>, Error> {
        match keys(store)? {
            Some(keys) => list_children(store, &keys, path),
            None => Ok(Vec::new()),
        }
    }

    /// Erases the node at `path` (array, explicit or implicit group) and
    /// everything below it: `meta/<path>.array.json` or `.group.json`,
    /// `meta/<path>/` and `data/<path>/` (the entry point's suffix honoured).
    ///
    /// # Errors
    /// [`Error::NodeNotFound`] when the store is not a 2022 draft hierarchy or
    /// has no node at `path`; a store error.
    fn erase_node(&self, store: &dyn Store, path: &NodePath) -> Result<(), Error> {
        match keys(store)? {
            Some(keys) => erase_found(store, &keys, path),
            None => Err(Error::NodeNotFound { path: path.clone() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A change to a document, for bad-input tables.
    type Edit = Box<dyn Fn(&mut Value)>;

    fn array(doc: Value) -> Result<ArrayMetadata, MetadataError> {
        match parse_array(doc.to_string().as_bytes())? {
            NodeMetadata::Array(a) => Ok(a),
            NodeMetadata::Group(_) => unreachable!(),
        }
    }

    fn base() -> Value {
        json!({
            "shape": [4, 6], "data_type": "int32",
            "chunk_grid": {"type": "regular", "chunk_shape": [2, 3], "separator": "/"},
            "chunk_memory_layout": "C", "fill_value": 0,
            "extensions": [], "attributes": {}
        })
    }

    #[test]
    fn hex_and_binary_fill_values_give_every_bit() {
        let fill =
            |v: Value, dt: DataType| fill_value_from_json(&v, &dt).map(|f| f.as_bytes().to_vec());
        assert_eq!(
            fill(json!("0x0000ff01"), DataType::Int32).unwrap(),
            0xff01_i32.to_ne_bytes()
        );
        assert_eq!(fill(json!("0b10000001"), DataType::Int8).unwrap(), [0x81]);
        assert_eq!(
            fill(
                json!("0b00111111100000000000000000000000"),
                DataType::Float32
            )
            .unwrap(),
            1.0f32.to_ne_bytes()
        );
        assert_eq!(
            fill(json!("0x7fc00001"), DataType::Float32).unwrap(),
            0x7fc0_0001_u32.to_ne_bytes()
        );
        assert_eq!(
            fill(json!("+Infinity"), DataType::Float64).unwrap(),
            f64::INFINITY.to_ne_bytes()
        );
        assert_eq!(
            fill(json!("0x0102ff"), DataType::RawBits(24)).unwrap(),
            [1, 2, 255]
        );
        assert_eq!(fill(json!("0b00000001"), DataType::Bool).unwrap(), [1]);
        // Issue #9: every float takes `0b…` as it takes `0x…`, and complex
        // parts each take either, of the part's size.
        assert_eq!(
            fill(json!("0b0011110000000000"), DataType::Float16).unwrap(),
            0x3c00_u16.to_ne_bytes()
        );
        assert_eq!(
            fill(json!("0x3c00"), DataType::Float16).unwrap(),
            0x3c00_u16.to_ne_bytes()
        );
        let mut pair = 1.0f32.to_ne_bytes().to_vec();
        pair.extend(0x7fc0_0001_u32.to_ne_bytes());
        assert_eq!(
            fill(
                json!(["0b00111111100000000000000000000000", "0x7fc00001"]),
                DataType::Complex64
            )
            .unwrap(),
            pair
        );
        let mut real = 2.5f64.to_ne_bytes().to_vec();
        real.extend(0.0f64.to_ne_bytes());
        assert_eq!(fill(json!(2.5), DataType::Complex128).unwrap(), real);
        for (bad, dt) in [
            (json!("0x0001"), DataType::Int32),
            (json!("0b1"), DataType::Int8),
            (json!("0b00000002"), DataType::UInt8),
            (json!("0x02"), DataType::Bool),
            (json!(null), DataType::Int32),
            (json!("0xé0"), DataType::UInt8),
            (json!("0b001111000000000"), DataType::Float16),
            (json!(["0x3f80", 0]), DataType::Complex64),
        ] {
            assert!(fill(bad.clone(), dt).is_err(), "{bad}");
        }
        let err =
            fill_value_from_json(&json!("0b001111000000000"), &DataType::Float16).unwrap_err();
        assert_eq!(
            err.to_string(),
            "fill value `0b001111000000000` has 15 binary digits, but data type `float16` \
             needs exactly 16 (every leading zero of its 2 bytes)"
        );
        let err = fill_value_from_json(&json!("0x7fc0001"), &DataType::Float32).unwrap_err();
        assert!(err.to_string().contains("7 hexadecimal digits"), "{err}");
    }

    #[test]
    fn fill_values_are_written_with_plus_infinity() {
        let fill = FillValue::new(f32::INFINITY.to_ne_bytes().to_vec());
        assert_eq!(
            fill_value_to_json(&fill, &DataType::Float32),
            json!("+Infinity")
        );
        let raw = FillValue::new(vec![0, 10, 255]);
        assert_eq!(
            fill_value_to_json(&raw, &DataType::RawBits(24)),
            json!("0x000aff")
        );
    }

    #[test]
    fn f_layout_becomes_a_reversing_transpose_and_back() {
        let mut doc = base();
        doc["chunk_memory_layout"] = json!("F");
        doc["shape"] = json!([4, 6, 2]);
        doc["chunk_grid"]["chunk_shape"] = json!([2, 3, 1]);
        let a = array(doc).unwrap();
        assert_eq!(a.codecs[0].name, "transpose");
        assert_eq!(
            a.codecs[0].configuration_or_empty()["order"],
            json!([2, 1, 0])
        );
        assert_eq!(
            a.codecs[1].configuration_or_empty()["endian"],
            json!("little")
        );
        let written: Value =
            serde_json::from_slice(&serialize_node(&NodeMetadata::Array(a)).unwrap()).unwrap();
        assert_eq!(written["chunk_memory_layout"], json!("F"));
        assert_eq!(written["codecs"], json!([]));
    }

    #[test]
    fn endian_codec_becomes_bytes_and_blosc_shuffle_becomes_its_name() {
        let mut doc = base();
        doc["codecs"] = json!([
            {"type": "https://purl.org/zarr/spec/codecs/endian/1.0", "configuration": {"endian": "big"}},
            {"type": "https://purl.org/zarr/spec/codecs/blosc/1.0",
             "configuration": {"cname": "lz4", "clevel": 1, "shuffle": -1, "blocksize": 0}}
        ]);
        let a = array(doc).unwrap();
        assert_eq!(a.codecs[0].name, "bytes");
        assert!(bytes_is_big(&a.codecs[0]));
        assert_eq!(
            Value::Object(a.codecs[1].configuration_or_empty()),
            json!({"cname": "lz4", "clevel": 1, "shuffle": "shuffle", "blocksize": 0, "typesize": 4})
        );
        let written: Value =
            serde_json::from_slice(&serialize_node(&NodeMetadata::Array(a)).unwrap()).unwrap();
        assert_eq!(
            written["codecs"][0]["configuration"],
            json!({"endian": "big"})
        );
        assert_eq!(written["codecs"][1]["configuration"]["shuffle"], json!(1));
    }

    #[test]
    fn bad_documents_name_the_field_or_uri() {
        let cases: Vec<(Edit, &str)> = vec![
            (
                Box::new(|d| {
                    d.as_object_mut().unwrap().remove("fill_value");
                }),
                "`fill_value`",
            ),
            (Box::new(|d| d["shape"] = json!("4")), "`shape`"),
            (
                Box::new(|d| d["chunk_grid"]["separator"] = json!("-")),
                "`chunk_grid.separator`",
            ),
            (
                Box::new(|d| {
                    d["chunk_grid"].as_object_mut().unwrap().remove("separator");
                }),
                "`chunk_grid.separator`",
            ),
            (
                Box::new(|d| d["zarr_format"] = json!(3)),
                "unknown field `zarr_format`",
            ),
            (
                Box::new(|d| d["chunk_memory_layout"] = json!("K")),
                "`chunk_memory_layout`",
            ),
            (Box::new(|d| d["data_type"] = json!("<i4")), "`<i4`"),
            (
                Box::new(|d| {
                    d["data_type"] =
                        json!({"extension": "https://x.org/dt", "type": "x", "fallback": "r8"})
                }),
                "`https://x.org/dt`",
            ),
            (
                Box::new(|d| {
                    d["codecs"] = json!([{"type": "https://purl.org/zarr/spec/codecs/lz4/1.0"}])
                }),
                "`https://purl.org/zarr/spec/codecs/lz4/1.0`",
            ),
            (
                Box::new(|d| {
                    d["extensions"] =
                        json!([{"extension": "https://x.org/must", "must_understand": true}])
                }),
                "`https://x.org/must`",
            ),
            (
                Box::new(|d| {
                    d["storage_transformers"] =
                        json!([{"extension": "https://x.org/cache/1.0", "type": "lru"}])
                }),
                "`https://x.org/cache/1.0`",
            ),
            (
                Box::new(
                    |d| d["codecs"] = json!([{"type": "https://purl.org/zarr/spec/codecs/gzip/1.0"}, {"type": "https://purl.org/zarr/spec/codecs/endian/1.0", "configuration": {"endian": "big"}}]),
                ),
                "`codecs[1]`",
            ),
        ];
        for (mutate, needle) in cases {
            let mut doc = base();
            mutate(&mut doc);
            let err = array(doc.clone()).unwrap_err();
            assert!(err.to_string().contains(needle), "{err} for {doc}");
        }
    }

    #[test]
    fn ignorable_extensions_are_kept_and_written_back() {
        let mut doc = base();
        let ext = json!([{"extension": "https://x.org/opt", "must_understand": false, "configuration": {"a": 1}}]);
        doc["extensions"] = ext.clone();
        let a = array(doc).unwrap();
        let written: Value =
            serde_json::from_slice(&serialize_node(&NodeMetadata::Array(a)).unwrap()).unwrap();
        assert_eq!(written["extensions"], ext);
    }

    #[test]
    fn codecs_without_a_draft_uri_are_refused_on_writing() {
        let mut a = array(base()).unwrap();
        a.codecs.push(ExtensionObject::new("crc32c"));
        let err = serialize_node(&NodeMetadata::Array(a)).unwrap_err();
        assert!(err.to_string().contains("`crc32c`"), "{err}");
    }

    #[test]
    fn keys_follow_the_storage_keys_table() {
        let keys = DraftKeys::draft2022(".json".into());
        let p = |s: &str| NodePath::new(s).unwrap();
        assert_eq!(
            keys.doc_key(&p("/"), DocKind::Array).unwrap().as_str(),
            "meta/array.json"
        );
        assert_eq!(
            keys.doc_key(&p("/"), DocKind::Group).unwrap().as_str(),
            "meta/group.json"
        );
        assert_eq!(
            keys.doc_key(&p("/foo/bar"), DocKind::Group)
                .unwrap()
                .as_str(),
            "meta/foo/bar.group.json"
        );
        assert_eq!(
            keys.doc_key(&p("/foo/baz"), DocKind::Array)
                .unwrap()
                .as_str(),
            "meta/foo/baz.array.json"
        );
        assert_eq!(keys.data_prefix(&p("/foo/baz")).as_str(), "data/foo/baz/");
        assert_eq!(keys.data_prefix(&p("/")).as_str(), "data/");
        assert_eq!(keys.children_prefix(&p("/")).unwrap().as_str(), "meta/");
    }
}
