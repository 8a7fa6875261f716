//! The 2019 drafts of the Zarr v3 core protocol ↔ the internal model:
//!
//! - [`ZarrFormat::V3Draft2019`] (`v3-draft-2019`): the draft of 19 June 2019
//!   (`seeds/v3-core-protocol-2019-06-19-draft.rst`, "Bootstrap metadata",
//!   "Array metadata", "Group metadata", "Storage keys");
//! - [`ZarrFormat::V3Draft2019Json`] (`v3-draft-2019-json`): zarr-python 2.x's
//!   experimental v3 (`ZARR_V3_EXPERIMENTAL_API=1`), the same with a
//!   `metadata_key_suffix` (`.json`) and chunks under `data/root/`;
//! - [`ZarrFormat::V3Draft2019a`] (`v3-draft-2019a`): the early 2019 draft
//!   (`seeds/v3-core-protocol-2019-early-draft.rst`), whose node documents
//!   carry `zarr_format` and a `chunk_codecs` list. That draft defines no key
//!   layout; it is stored like the June 2019 draft (see the specs README).
//!
//! # Layout
//!
//! | | June 2019 / early 2019 | zarr-python 2.x |
//! |---|---|---|
//! | entry point | `zarr.json` | `zarr.json` with `"metadata_key_suffix": ".json"` |
//! | root group / array | `meta/root.group` / `meta/root.array` | `meta/root.group.json` / `meta/root.array.json` |
//! | node `/a/b` | `meta/root/a/b.array` | `meta/root/a/b.array.json` |
//! | chunk (0, 1) of `/a/b` | `data/a/b/0.1` (separator from the grid, `.` by default) | `data/root/a/b/c0/1` |
//! | chunk of a 0-d array | `data/a/b/0` | `data/root/a/b/c0` (as zarr-python 2.18 writes it) |
//!
//! Groups need no document: a group exists when something below it does.
//!
//! # Mapping onto the model
//!
//! - Data types are NumPy type strings with their byte order: `bool`
//!   (also `|b1`), `i1`, `u1`, `<i4`, `>f8`, `<c8`, … The byte order becomes
//!   the `bytes` codec's `endian`. zarr-python 2.x writes complex types as
//!   its complex-dtypes extension object, which is read (and written) too.
//!   Extension data types (the string, datetime and struct extensions, and
//!   others through their `fallback` when allowed) as in
//!   [`super::dtypes`].
//! - `chunk_memory_layout` `"F"` becomes a leading `transpose` codec.
//! - `compressor` (`{"codec": URI, "configuration": {...}}` or `null`) and
//!   `chunk_codecs` (`[{"codec": URI, ...configuration inline}]`) become
//!   bytes-to-bytes codecs: URIs `http(s)://purl.org/zarr/spec/codec/<name>`
//!   with an optional version, for `gzip`, `zlib`, `blosc`, `zstd`, `bz2`,
//!   `lzma` and `lz4` (numcodecs configurations). Writing uses
//!   zarr-python's `https://purl.org/zarr/spec/codec/<name>/1.0`.
//! - `fill_value` `null` ("undefined") reads as zero.
//! - zarr-python 2.x's documents are read and written through the v2
//!   mapping (see `zarr_python`): its `filters` (kept in
//!   `attributes.filters`), its complex and datetime extension data types
//!   and every numcodecs compressor and filter v2 supports mean what they
//!   mean in v2. Its sharding storage transformer becomes a
//!   `sharding_indexed` codec (see `sharding`).
//! - Must-understand `extensions` stop the node opening, naming the URI.
//!
//! Node names: only `a-z`, `A-Z`, `0-9`, `-`, `_`, `.`, at most 255
//! characters, and siblings unique ignoring case (checked when writing).

use super::dtypes::{self, DraftReadOptions};
use super::{self as shared, DocKind, DraftKeys, EntryPoint, Found, ZARR_FORMAT_2019};
use super::{sharding, zarr_python};
use crate::Error;
use crate::format::ChunkLayout;
use crate::format::{ZarrFormat, v3};
use crate::metadata::{
    ArrayMetadata, ChunkKeyEncoding, DataType, ExtensionObject, FillValue, GroupMetadata, JsonMap,
    MetadataError, NodeMetadata, Separator,
};
use crate::metadata::{NodePath, NodePathError};
use crate::store::{Store, StoreError, StoreKey, StorePrefix};
use serde_json::Value;

/// The `zarr_format` written into the entry point (June 2019 draft,
/// "Bootstrap metadata", and zarr-python 2.x).
pub const ZARR_FORMAT: &str = "https://purl.org/zarr/spec/protocol/core/3.0";

/// The `zarr_format` of node documents of the early 2019 draft.
pub const ZARR_FORMAT_EARLY: &str = "http://purl.org/zarr/spec/protocol/core/3.0";

/// The extension URI zarr-python 2.x gives complex data types.
pub const COMPLEX_EXTENSION: &str = "https://zarr-specs.readthedocs.io/en/core-protocol-v3.0-dev/protocol/extensions/complex-dtypes/v1.0.html";

/// The codec URI prefix zarr-python 2.x writes (`…/codec/gzip/1.0`).
const CODEC_URI_PREFIX: &str = "https://purl.org/zarr/spec/codec/";

/// The compressors a 2019 document can name.
pub(crate) const CODECS: &[&str] = &["gzip", "zlib", "blosc", "zstd", "bz2", "lzma", "lz4"];

/// The longest node name (2019 drafts, "Node names").
const MAX_NAME_LEN: usize = 255;

fn is_early(format: ZarrFormat) -> bool {
    format == ZarrFormat::V3Draft2019a
}

fn is_json(format: ZarrFormat) -> bool {
    format == ZarrFormat::V3Draft2019Json
}

fn keys_for(format: ZarrFormat, suffix: String) -> DraftKeys {
    DraftKeys {
        meta: "meta/root",
        data: if is_json(format) { "data/root" } else { "data" },
        suffix,
        root_in_meta: false,
    }
}

/// The key of the array document at `path` in `format` with the format's
/// default metadata key suffix (`.json` for zarr-python 2.x's layout, none
/// for the June and early 2019 drafts; June 2019 draft, "Storage keys").
pub(crate) fn default_array_doc_key(
    path: &NodePath,
    format: ZarrFormat,
) -> Result<StoreKey, StoreError> {
    let suffix = if is_json(format) { ".json" } else { "" };
    keys_for(format, suffix.to_string()).doc_key(path, DocKind::Array)
}

/// The key layout of `format` in this store, and whether its entry point
/// has the early draft's `http` URI; `Ok(None)` when the store is not of
/// this format.
///
/// The early draft defines no bootstrap document, but a store without one
/// is not probed: that would cost every failed lookup in every other format
/// a listing. zarrkit writes one (see [`entry_point_document`]).
fn keys(store: &dyn Store, format: ZarrFormat) -> Result<Option<(DraftKeys, bool)>, Error> {
    Ok(match shared::read_entry_point(store)? {
        EntryPoint::Draft2019 { suffix, early } if is_json(format) != suffix.is_empty() => {
            Some((keys_for(format, suffix), early))
        }
        _ => None,
    })
}

/// Reads the node at `path` in `format` with `options` (see
/// [`super::dtypes`]), `Ok(None)` when the store is not of that format or
/// holds nothing there. A document with `zarr_format` is of the early
/// draft, one without of the June draft.
///
/// # Errors
/// [`Error::Metadata`] naming the document's key for an invalid document; a
/// store error.
pub fn read_node_with(
    store: &dyn Store,
    path: &NodePath,
    format: ZarrFormat,
    options: DraftReadOptions,
) -> Result<Option<NodeMetadata>, Error> {
    let Some((keys, early_bootstrap)) = keys(store, format)? else {
        return Ok(None);
    };
    let found = shared::find_node(store, &keys, path)?;
    match found {
        None => Ok(None),
        Some(Found::Implicit) => {
            // An implicit group has no document to say which 2019 draft it
            // is of: the entry point's URI says (`http` for the early draft).
            if !is_json(format) && early_bootstrap != is_early(format) {
                return Ok(None);
            }
            Ok(Some(NodeMetadata::Group(GroupMetadata::default())))
        }
        Some(Found::Document(kind, key, bytes)) => {
            let parsed = (|| {
                let value: Value = serde_json::from_slice(&bytes).map_err(MetadataError::Json)?;
                let Value::Object(doc) = value else {
                    return Err(MetadataError::NotAnObject);
                };
                // The early draft's documents carry `zarr_format`; the June
                // draft's do not (zarr-python 2.x documents are checked
                // field by field below).
                if !is_json(format) && doc.contains_key("zarr_format") != is_early(format) {
                    return Ok(None);
                }
                node_from_json(&doc, kind, format, options).map(Some)
            })();
            parsed.map_err(|source| Error::Metadata { key, source })
        }
    }
}

/// Parses a node document of `format` (array or group as `kind` says).
///
/// # Errors
/// A [`MetadataError`] naming the field: a missing required field, a field
/// of the wrong type, an unknown field, an unknown codec URI or data type,
/// or a must-understand extension.
pub fn parse_node(
    bytes: &[u8],
    is_array: bool,
    format: ZarrFormat,
) -> Result<NodeMetadata, MetadataError> {
    let value: Value = serde_json::from_slice(bytes).map_err(MetadataError::Json)?;
    let Value::Object(doc) = value else {
        return Err(MetadataError::NotAnObject);
    };
    let kind = if is_array {
        DocKind::Array
    } else {
        DocKind::Group
    };
    node_from_json(&doc, kind, format, DraftReadOptions::default())
}

fn node_from_json(
    doc: &JsonMap,
    kind: DocKind,
    format: ZarrFormat,
    options: DraftReadOptions,
) -> Result<NodeMetadata, MetadataError> {
    if is_early(format) {
        let zarr_format = shared::required(doc, "zarr_format")?;
        if !zarr_format
            .as_str()
            .is_some_and(|s| ZARR_FORMAT_2019.contains(&s))
        {
            return Err(MetadataError::ZarrFormat {
                expected: ZARR_FORMAT_EARLY,
                found: zarr_format.to_string(),
            });
        }
    }
    match kind {
        DocKind::Group => {
            let known: &[&str] = if is_early(format) {
                &["zarr_format", "extensions", "attributes"]
            } else {
                &["extensions", "attributes"]
            };
            shared::reject_unknown_fields(doc, known)?;
            shared::check_extensions(doc.get("extensions"), "extensions")?;
            Ok(NodeMetadata::Group(GroupMetadata {
                attributes: shared::attributes_from_json(doc)?,
                extra_fields: JsonMap::new(),
            }))
        }
        DocKind::Array => array_from_json(doc, format, options).map(NodeMetadata::Array),
    }
}

fn array_from_json(
    doc: &JsonMap,
    format: ZarrFormat,
    options: DraftReadOptions,
) -> Result<ArrayMetadata, MetadataError> {
    let mut known = vec![
        "shape",
        "data_type",
        "chunk_grid",
        "chunk_memory_layout",
        "fill_value",
        "extensions",
        "attributes",
    ];
    if is_early(format) {
        known.extend(["zarr_format", "chunk_codecs"]);
    } else {
        known.push("compressor");
    }
    if is_json(format) {
        // zarr-python 2.x writes these two besides the June fields.
        known.extend(["dimension_separator", "storage_transformers"]);
    }
    shared::reject_unknown_fields(doc, &known)?;
    if is_json(format) {
        return zarr_python_array_from_json(doc);
    }
    let shape = shared::shape_from_json(shared::required(doc, "shape")?)?;
    let (data_type, big) = data_type_from_json(shared::required(doc, "data_type")?, options)?;
    // June 2019 draft, "Regular grids": "The default value for the separator
    // is the period character".
    let (chunk_grid, separator) =
        shared::chunk_grid_from_json(shared::required(doc, "chunk_grid")?, Some(Separator::Dot))?;
    let f_order = shared::memory_layout_from_json(shared::required(doc, "chunk_memory_layout")?)?;
    let fill_value = match shared::required(doc, "fill_value")? {
        // "if the fill_value is the literal null then the fill value is
        // undefined and the implementation may use any arbitrary value".
        Value::Null => FillValue::zero(&data_type),
        value => v3::fill_value_from_json(value, &data_type)?,
    };
    let extensions = shared::check_extensions(doc.get("extensions"), "extensions")?;
    let attributes = shared::attributes_from_json(doc)?;
    let mut compressors = Vec::new();
    if is_early(format) {
        let value = shared::required(doc, "chunk_codecs")?;
        let items = value.as_array().ok_or_else(|| {
            MetadataError::invalid("chunk_codecs", "an array of codec objects", value)
        })?;
        for (i, item) in items.iter().enumerate() {
            let field = format!("chunk_codecs[{i}]");
            let Value::Object(object) = item else {
                return Err(MetadataError::invalid(field, "a codec object", item));
            };
            let mut configuration = object.clone();
            let uri = configuration.remove("codec");
            compressors.push(codec_from_json(
                uri.as_ref(),
                configuration,
                &data_type,
                &field,
            )?);
        }
    } else {
        match doc.get("compressor") {
            None | Some(Value::Null) => {}
            Some(Value::Object(object)) => {
                shared::check_compressor_members(object)?;
                let configuration = match object.get("configuration") {
                    None => JsonMap::new(),
                    Some(Value::Object(c)) => c.clone(),
                    Some(other) => {
                        return Err(MetadataError::invalid(
                            "compressor.configuration",
                            "an object",
                            other,
                        ));
                    }
                };
                compressors.push(codec_from_json(
                    object.get("codec"),
                    configuration,
                    &data_type,
                    "compressor",
                )?);
            }
            Some(other) => {
                return Err(MetadataError::invalid(
                    "compressor",
                    "a codec object or null",
                    other,
                ));
            }
        }
    }
    let codecs = shared::assemble_codecs(
        f_order,
        shape.len(),
        Vec::new(),
        shared::bytes_codec(&data_type, big),
        compressors,
    );
    let mut extra_fields = JsonMap::new();
    if !extensions.is_empty() {
        extra_fields.insert("extensions".into(), Value::Array(extensions));
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
        attributes,
        extra_fields,
    };
    metadata.validate()?;
    Ok(metadata)
}

/// A zarr-python 2.x array document (fields already checked): read through
/// the v2 mapping ([`zarr_python`]), with its `extensions` and the
/// sharding storage transformer ([`sharding`]).
fn zarr_python_array_from_json(doc: &JsonMap) -> Result<ArrayMetadata, MetadataError> {
    let extensions = shared::check_extensions(doc.get("extensions"), "extensions")?;
    let ndim = shared::shape_from_json(shared::required(doc, "shape")?)?.len();
    let chunks_per_shard = sharding::from_json(doc.get("storage_transformers"), ndim)?;
    let mut array = zarr_python::array_from_json(doc)?;
    if !extensions.is_empty() {
        array
            .extra_fields
            .insert("extensions".into(), Value::Array(extensions));
    }
    array.validate()?;
    match chunks_per_shard {
        Some(counts) => sharding::shard(array, &counts),
        None => Ok(array),
    }
}

fn codec_from_json(
    uri: Option<&Value>,
    configuration: JsonMap,
    data_type: &DataType,
    field: &str,
) -> Result<ExtensionObject, MetadataError> {
    let uri = match uri {
        Some(Value::String(uri)) => uri,
        Some(other) => {
            return Err(MetadataError::invalid(
                format!("{field}.codec"),
                "a codec URI",
                other,
            ));
        }
        None => {
            return Err(MetadataError::invalid(
                field,
                "a codec object with `codec`",
                &Value::Object(configuration),
            ));
        }
    };
    let name = codec_short_name(uri).ok_or_else(|| MetadataError::UnsupportedExtension {
        point: "codec",
        name: uri.clone(),
    })?;
    shared::compressor_from_draft(name, configuration, data_type, field)
}

/// `http(s)://purl.org/zarr/spec/codec/<name>` with an optional `/<version>`.
pub(crate) fn codec_short_name(uri: &str) -> Option<&'static str> {
    let rest = uri
        .strip_prefix("https://purl.org/zarr/spec/codec/")
        .or_else(|| uri.strip_prefix("http://purl.org/zarr/spec/codec/"))?;
    let name = match rest.split_once('/') {
        None => rest,
        Some((name, version)) if !version.is_empty() && !version.contains('/') => name,
        Some(_) => return None,
    };
    CODECS.iter().find(|&&n| n == name).copied()
}

/// Parses a 2019 `data_type`: the type and whether it is big endian.
fn data_type_from_json(
    value: &Value,
    options: DraftReadOptions,
) -> Result<(DataType, bool), MetadataError> {
    match value {
        Value::String(s) => numpy_type(s).ok_or_else(|| MetadataError::UnsupportedExtension {
            point: "data type",
            name: s.clone(),
        }),
        Value::Object(object) => {
            let uri = shared::extension_uri(object);
            if uri == COMPLEX_EXTENSION {
                return object
                    .get("type")
                    .and_then(Value::as_str)
                    .and_then(numpy_type)
                    .filter(|(dt, _)| matches!(dt, DataType::Complex64 | DataType::Complex128))
                    .ok_or(MetadataError::UnsupportedExtension {
                        point: "data type",
                        name: uri,
                    });
            }
            // The string, datetime and struct extensions; others through
            // their fallback (a type string of this draft) when allowed.
            let core = |v: &Value| {
                v.as_str()
                    .and_then(numpy_type)
                    .map(|(data_type, big)| (data_type, Some(big)))
            };
            let (data_type, big) = dtypes::extension_from_json(object, &core, options)?;
            Ok((data_type, big.unwrap_or(false)))
        }
        other => Err(MetadataError::invalid(
            "data_type",
            "a type string such as `\"<f8\"`",
            other,
        )),
    }
}

/// A NumPy type string of the 2019 drafts: the type and whether it is big endian.
pub(crate) fn numpy_type(s: &str) -> Option<(DataType, bool)> {
    if s == "bool" {
        return Some((DataType::Bool, false));
    }
    let (order, rest) = match s.as_bytes().first()? {
        b'<' => (Some(false), &s[1..]),
        b'>' => (Some(true), &s[1..]),
        b'|' => (None, &s[1..]),
        _ => (None, s),
    };
    let data_type = match rest {
        "b1" => DataType::Bool,
        "i1" => DataType::Int8,
        "u1" => DataType::UInt8,
        "i2" => DataType::Int16,
        "i4" => DataType::Int32,
        "i8" => DataType::Int64,
        "u2" => DataType::UInt16,
        "u4" => DataType::UInt32,
        "u8" => DataType::UInt64,
        "f2" => DataType::Float16,
        "f4" => DataType::Float32,
        "f8" => DataType::Float64,
        "c8" => DataType::Complex64,
        "c16" => DataType::Complex128,
        _ => return None,
    };
    // Multi-byte types need their byte order; one-byte types have none.
    match (data_type.size() > 1, order) {
        (true, Some(big)) => Some((data_type, big)),
        (false, Some(false)) | (true, None) => None,
        (false, _) => Some((data_type, false)),
    }
}

/// The type string of a data type: `bool`, `i1`, `u1`, or `<`/`>` and the
/// NumPy code. `None` for types the 2019 drafts lack (`r*`).
pub(crate) fn numpy_name(data_type: &DataType, big: bool) -> Option<String> {
    let code = match data_type {
        DataType::Bool => return Some("bool".into()),
        DataType::Int8 => return Some("i1".into()),
        DataType::UInt8 => return Some("u1".into()),
        DataType::Int16 => "i2",
        DataType::Int32 => "i4",
        DataType::Int64 => "i8",
        DataType::UInt16 => "u2",
        DataType::UInt32 => "u4",
        DataType::UInt64 => "u8",
        DataType::Float16 => "f2",
        DataType::Float32 => "f4",
        DataType::Float64 => "f8",
        DataType::Complex64 => "c8",
        DataType::Complex128 => "c16",
        _ => return None,
    };
    Some(format!("{}{code}", if big { '>' } else { '<' }))
}

/// Serialises a node to a document of `format` (without its key).
///
/// # Errors
/// [`MetadataError::UnsupportedExtension`] for what the draft cannot say:
/// `r*` data types, array-to-array codecs other than the F-order transpose,
/// codecs without a URI, more than one compressor (except in the early
/// draft), dimension names or storage transformers.
pub fn serialize_node(
    metadata: &NodeMetadata,
    format: ZarrFormat,
) -> Result<Vec<u8>, MetadataError> {
    let mut doc = JsonMap::new();
    if is_early(format) {
        doc.insert("zarr_format".into(), Value::from(ZARR_FORMAT_EARLY));
    }
    match metadata {
        NodeMetadata::Group(group) => {
            if !is_json(format) {
                doc.insert("extensions".into(), Value::Array(Vec::new()));
            }
            doc.insert("attributes".into(), Value::Object(group.attributes.clone()));
        }
        NodeMetadata::Array(array) => array_to_json(array, format, &mut doc)?,
    }
    Ok(crate::format::pretty_json(&Value::Object(doc)))
}

fn array_to_json(
    array: &ArrayMetadata,
    format: ZarrFormat,
    doc: &mut JsonMap,
) -> Result<(), MetadataError> {
    if is_json(format) {
        let (inner, chunks_per_shard) = match sharding::unshard(array)? {
            Some((inner, counts)) => (std::borrow::Cow::Owned(inner), Some(counts)),
            None => (std::borrow::Cow::Borrowed(array), None),
        };
        shared::check_representable(&inner)?;
        doc.extend(zarr_python::array_to_json(&inner)?);
        doc.insert("extensions".into(), shared::extensions_to_json(array));
        if let Some(counts) = chunks_per_shard {
            doc.insert(
                "storage_transformers".into(),
                sharding::to_json(sharding::ZARR_PYTHON_URI, &counts),
            );
        }
        return Ok(());
    }
    shared::check_representable(array)?;
    let split = shared::split_codecs(&array.codecs, array.ndim());
    if let Some(codec) = split.array_to_array.first() {
        return Err(MetadataError::UnsupportedExtension {
            point: "codec in this format",
            name: codec.name.clone(),
        });
    }
    let big = split.bytes.is_some_and(shared::bytes_is_big);
    let data_type = match numpy_name(&array.data_type, big) {
        Some(type_name) => Value::String(type_name),
        // The string (its 2 March 2022 URI), datetime (the June 2019
        // example's URI, with its `<i8` fallback) and struct extensions.
        None => {
            let fallback = matches!(
                array.data_type,
                DataType::NumpyDateTime64 { .. } | DataType::NumpyTimeDelta64 { .. }
            )
            .then(|| Value::from(if big { ">i8" } else { "<i8" }));
            dtypes::extension_to_json(
                &array.data_type,
                big,
                dtypes::STRING_URI_2022_03,
                dtypes::DATETIME_URI_2019,
                fallback,
            )
            .ok_or_else(|| MetadataError::UnsupportedExtension {
                point: "data type in this format",
                name: array.data_type.name(),
            })?
        }
    };
    let mut compressors = Vec::new();
    for codec in &split.bytes_to_bytes {
        let (name, configuration) = shared::compressor_to_draft(codec, CODECS)?;
        compressors.push((format!("{CODEC_URI_PREFIX}{name}/1.0"), configuration));
    }
    doc.insert("shape".into(), Value::from(array.shape.clone()));
    doc.insert("data_type".into(), data_type);
    doc.insert(
        "chunk_grid".into(),
        shared::chunk_grid_to_json(&array.chunk_grid, array.chunk_key_encoding.separator())?,
    );
    doc.insert(
        "chunk_memory_layout".into(),
        Value::from(if split.f_order { "F" } else { "C" }),
    );
    if is_early(format) {
        let list = compressors
            .into_iter()
            .map(|(uri, configuration)| {
                let mut object = JsonMap::new();
                object.insert("codec".into(), Value::String(uri));
                object.extend(configuration);
                Value::Object(object)
            })
            .collect();
        doc.insert("chunk_codecs".into(), Value::Array(list));
    } else {
        if compressors.len() > 1 {
            return Err(MetadataError::UnsupportedExtension {
                point: "second compressor in this format",
                name: split.bytes_to_bytes[1].name.clone(),
            });
        }
        match compressors.pop() {
            None => {
                doc.insert("compressor".into(), Value::Null);
            }
            Some((uri, configuration)) => {
                doc.insert(
                    "compressor".into(),
                    serde_json::json!({"codec": uri, "configuration": configuration}),
                );
            }
        }
    }
    doc.insert(
        "fill_value".into(),
        fill_value_to_json(&array.fill_value, &array.data_type),
    );
    doc.insert("extensions".into(), shared::extensions_to_json(array));
    doc.insert("attributes".into(), Value::Object(array.attributes.clone()));
    Ok(())
}

/// A fill value as v3 spells it, except a NaN with a payload: the 2019
/// drafts say nothing of floating-point fill values ("fill_value": "TODO
/// what about nan and inf?") and show only `"NaN"`, and zarr-python 2.x,
/// the one implementation of a 2019 draft, reads no hexadecimal spelling, so
/// every NaN is written as `"NaN"` (a migration notes the lost payload).
fn fill_value_to_json(fill: &FillValue, data_type: &DataType) -> Value {
    let hex_nan = |value: Value| match value {
        Value::String(text) if text.starts_with("0x") => Value::from("NaN"),
        other => other,
    };
    match v3::fill_value_to_json(fill, data_type) {
        value if !data_type.is_float() => value,
        Value::Array(parts) => Value::Array(parts.into_iter().map(hex_nan).collect()),
        value => hex_nan(value),
    }
}

/// The entry point written into an empty store for `format`.
#[must_use]
pub fn entry_point_document(format: ZarrFormat) -> Vec<u8> {
    let doc = if is_json(format) {
        // Exactly the four keys zarr-python 2.x accepts.
        serde_json::json!({
            "zarr_format": ZARR_FORMAT,
            "metadata_encoding": ZARR_FORMAT,
            "metadata_key_suffix": ".json",
            "extensions": [],
        })
    } else {
        // The early draft has no bootstrap document; zarrkit writes the June
        // one with the early draft's own (`http`) URI, so that implicit
        // groups, which have no document, are known to be of that draft.
        let zarr_format = if is_early(format) {
            ZARR_FORMAT_EARLY
        } else {
            ZARR_FORMAT
        };
        serde_json::json!({
            "zarr_format": zarr_format,
            "metadata_encoding": "application/json",
            "extensions": [],
        })
    };
    crate::format::pretty_json(&doc)
}

/// The key under which zarr-python 2.x's `consolidate_metadata` stores the
/// consolidated metadata of a json-suffixed hierarchy (`zarr/convenience.py`:
/// `.zmetadata` inside a group `consolidated` it creates for the purpose),
/// `{"zarr_consolidated_format": 1, "metadata": {<key>: <document>}}`.
pub const CONSOLIDATED_KEY: &str = "meta/root/consolidated/.zmetadata";

/// The path of the group zarr-python 2.x creates to hold [`CONSOLIDATED_KEY`].
pub const CONSOLIDATED_GROUP: &str = "/consolidated";

/// The name of the consolidated document inside [`CONSOLIDATED_GROUP`]:
/// v2's, as zarr-python 2.x reuses it.
const CONSOLIDATED_NAME: &str = ".zmetadata";

/// The key layout of zarr-python 2.x's json-suffixed hierarchies as
/// zarr-python writes them (`.json`), which consolidated metadata assumes.
fn zarr_python_keys() -> DraftKeys {
    keys_for(
        ZarrFormat::V3Draft2019Json,
        shared::DEFAULT_SUFFIX.to_string(),
    )
}

/// [`CONSOLIDATED_KEY`], formed from the key layout: the document
/// `.zmetadata` among the children of [`CONSOLIDATED_GROUP`].
///
/// # Errors
/// [`StoreError::InvalidKey`](crate::store::StoreError::InvalidKey), never
/// for these constants.
pub(crate) fn consolidated_key() -> Result<StoreKey, Error> {
    let group = NodePath::new(CONSOLIDATED_GROUP)?;
    Ok(zarr_python_keys()
        .children_prefix(&group)?
        .key(CONSOLIDATED_NAME)?)
}

/// The documents zarr-python 2.x's `consolidate_metadata` gathers from a
/// json-suffixed hierarchy: `zarr.json` and every key under `meta/` ending
/// in `.array<suffix>` or `.group<suffix>`, by key. Empty when the store is
/// not of this layout.
///
/// # Errors
/// [`Error::Metadata`] naming a document that is not JSON; a store error
/// (including a store that cannot list).
pub(crate) fn consolidated_documents(
    store: &dyn Store,
) -> Result<std::collections::BTreeMap<String, Value>, Error> {
    let mut out = std::collections::BTreeMap::new();
    let Some((keys, _)) = keys(store, ZarrFormat::V3Draft2019Json)? else {
        return Ok(out);
    };
    let endings = [DocKind::Array, DocKind::Group].map(|kind| keys.doc_ending(kind));
    let mut found = vec![StoreKey::new(shared::ENTRY_POINT_KEY)?];
    found.extend(
        store
            .list_prefix(&keys.documents_prefix())?
            .into_iter()
            .filter(|k| endings.iter().any(|e| k.as_str().ends_with(e.as_str()))),
    );
    for key in found {
        if let Some(bytes) = store.get(&key, None)? {
            let doc = serde_json::from_slice(&bytes).map_err(|e| Error::Metadata {
                key: key.clone(),
                source: MetadataError::Json(e),
            })?;
            out.insert(key.as_str().to_string(), doc);
        }
    }
    Ok(out)
}

/// The nodes described by consolidated `entries` (see
/// [`consolidated_documents`]), by path, the root included, and with every
/// implicit group (an ancestor without a document of its own).
///
/// # Errors
/// A message naming the entry that is not a valid document.
pub(crate) fn nodes_from_consolidated(
    entries: &JsonMap,
) -> Result<std::collections::BTreeMap<NodePath, NodeMetadata>, String> {
    let keys = zarr_python_keys();
    let mut nodes = std::collections::BTreeMap::new();
    for (key, doc) in entries {
        let (rest, is_array) = if let Some(rest) = doc_key_rest(&keys, key, DocKind::Array) {
            (rest, true)
        } else if let Some(rest) = doc_key_rest(&keys, key, DocKind::Group) {
            (rest, false)
        } else {
            continue;
        };
        let path = NodePath::new(if rest.is_empty() { "/" } else { rest })
            .map_err(|e| format!("consolidated entry `{key}` has an invalid path: {e}"))?;
        let bytes = serde_json::to_vec(doc).unwrap_or_default();
        let metadata = parse_node(&bytes, is_array, ZarrFormat::V3Draft2019Json)
            .map_err(|e| format!("consolidated entry `{key}` is invalid: {e}"))?;
        nodes.insert(path, metadata);
    }
    // Implicit groups have no document: every ancestor of a node is a group.
    let paths: Vec<NodePath> = nodes.keys().cloned().collect();
    for path in paths {
        let mut ancestor = path.parent();
        while let Some(parent) = ancestor {
            nodes
                .entry(parent.clone())
                .or_insert_with(|| NodeMetadata::Group(GroupMetadata::default()));
            ancestor = parent.parent();
        }
    }
    Ok(nodes)
}

/// The node path part of `key` if it is the key of a document of `kind` in
/// the layout `keys` (`meta/root/a/b.array.json` gives `/a/b`, the root's
/// `meta/root.array.json` the empty string).
fn doc_key_rest<'a>(keys: &DraftKeys, key: &'a str, kind: DocKind) -> Option<&'a str> {
    key.strip_prefix(keys.meta)?
        .strip_suffix(&keys.doc_ending(kind))
}

/// A 2019 draft in the dispatch of [`crate::format::version`]: which one is
/// its format ([`Draft2019::JUNE`], [`Draft2019::EARLY`],
/// [`Draft2019::ZARR_PYTHON`]); the three share this module's code and
/// differ where it asks [`is_early`] and [`is_json`].
pub(crate) struct Draft2019(ZarrFormat);

impl Draft2019 {
    /// The June 2019 draft.
    pub(crate) const JUNE: Self = Self(ZarrFormat::V3Draft2019);
    /// The early 2019 draft.
    pub(crate) const EARLY: Self = Self(ZarrFormat::V3Draft2019a);
    /// zarr-python 2.x's experimental v3.
    pub(crate) const ZARR_PYTHON: Self = Self(ZarrFormat::V3Draft2019Json);
}

impl crate::format::Version for Draft2019 {
    fn is_document_key(&self, key: &StoreKey) -> bool {
        super::is_document_key(key)
    }

    /// The prefix under which the chunks of the array at `path` lie.
    fn node_prefix(&self, path: &NodePath) -> StorePrefix {
        keys_for(self.0, String::new()).data_prefix(path)
    }

    fn metadata_key(&self, path: &NodePath) -> Result<StoreKey, StoreError> {
        default_array_doc_key(path, self.0)
    }

    fn chunk_layout(&self, path: &NodePath, encoding: &ChunkKeyEncoding) -> ChunkLayout {
        let prefix = self.node_prefix(path);
        if is_json(self.0) {
            ChunkLayout {
                prefix,
                encoding: encoding.clone(),
                // zarr-python 2.18 gives a 0-d array's chunk the
                // coordinates (0,), so its key is `c0`.
                glued: Some("c0"),
            }
        } else {
            // June 2019 draft, "Regular grids": the indices joined by the
            // separator, `1.23.45`; a 0-d array's one chunk is `0`, as in v2.
            ChunkLayout {
                prefix,
                encoding: ChunkKeyEncoding::V2 {
                    separator: encoding.separator(),
                },
                glued: None,
            }
        }
    }

    /// Reads the node at `path` in `format`, `Ok(None)` when the store is not of
    /// that format or holds nothing there. A document with `zarr_format` is of
    /// the early draft, one without of the June draft.
    ///
    /// # Errors
    /// [`Error::Metadata`] naming the document's key for an invalid document; a
    /// store error.
    fn read_node(&self, store: &dyn Store, path: &NodePath) -> Result<Option<NodeMetadata>, Error> {
        read_node_with(store, path, self.0, DraftReadOptions::default())
    }

    fn serialize_node(&self, metadata: &NodeMetadata) -> Result<Vec<u8>, MetadataError> {
        serialize_node(metadata, self.0)
    }

    /// Writes the node's document in `format`, and the entry point first when
    /// the store has none.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] for what the draft cannot say,
    /// [`Error::NodePath`] for a name the draft does not allow (including one
    /// that differs from a sibling's only in case), [`Error::Metadata`] when the
    /// store's entry point is of another format, or a store error.
    fn write_node(
        &self,
        store: &dyn Store,
        path: &NodePath,
        metadata: &NodeMetadata,
        mode: crate::format::WriteMode,
    ) -> Result<bool, Error> {
        let format = self.0;
        shared::check_names(path, Some(MAX_NAME_LEN))?;
        let bytes = serialize_node(metadata, format).map_err(|source| Error::InvalidMetadata {
            path: path.clone(),
            source,
        })?;
        let keys = match shared::read_entry_point(store)? {
            EntryPoint::Draft2019 { suffix, .. } if is_json(format) != suffix.is_empty() => {
                keys_for(format, suffix)
            }
            EntryPoint::Absent => {
                store.set(
                    &StoreKey::new(shared::ENTRY_POINT_KEY)?,
                    &entry_point_document(format),
                )?;
                keys_for(
                    format,
                    if is_json(format) {
                        ".json".into()
                    } else {
                        String::new()
                    },
                )
            }
            other => {
                return Err(shared::wrong_entry_point(
                    if is_json(format) {
                        "a 2019 draft entry point with `metadata_key_suffix`"
                    } else {
                        "a 2019 draft entry point without `metadata_key_suffix`"
                    },
                    &other,
                )?);
            }
        };
        // 2019 drafts, "Node names": sibling names must be unique under
        // case-insensitive comparison.
        if let Some(parent) = path.parent() {
            let siblings = shared::list_children(store, &keys, &parent).unwrap_or_default();
            let name = path.name();
            if siblings
                .iter()
                .any(|s| s.name() != name && s.name().eq_ignore_ascii_case(name))
            {
                return Err(NodePathError {
                    path: path.to_string(),
                    reason: "a sibling's name differs only in case, which the 2019 v3 drafts forbid",
                }
                .into());
            }
        }
        let kind = match metadata {
            NodeMetadata::Array(_) => DocKind::Array,
            NodeMetadata::Group(_) => DocKind::Group,
        };
        shared::put_document(store, &keys, path, kind, &bytes, mode)
    }

    /// The children of the group at `path` in `format`.
    ///
    /// # Errors
    /// A store error, including a store that cannot list.
    fn children(&self, store: &dyn Store, path: &NodePath) -> Result<Vec<NodePath>, Error> {
        let format = self.0;
        match keys(store, format)? {
            Some((keys, _)) => shared::list_children(store, &keys, path),
            None => Ok(Vec::new()),
        }
    }

    /// Erases the node at `path` in `format` (array, explicit or implicit
    /// group) and everything below it: `meta/root/<path>.array` or `.group`
    /// (with the entry point's suffix), `meta/root/<path>/` and the chunks under
    /// `data/<path>/` (`data/root/<path>/` in zarr-python 2.x's layout).
    ///
    /// # Errors
    /// [`Error::NodeNotFound`] when the store is not a hierarchy of `format` or
    /// has no node at `path`; a store error.
    fn erase_node(&self, store: &dyn Store, path: &NodePath) -> Result<(), Error> {
        let format = self.0;
        match keys(store, format)? {
            Some((keys, _)) => shared::erase_found(store, &keys, path),
            None => Err(Error::NodeNotFound { path: path.clone() }),
        }
    }

    /// zarr-python 2.x writes NumPy's `descr`, as its v2 does.
    fn holds_mixed_byte_order_structs(&self) -> bool {
        is_json(self.0)
    }

    /// zarr-python 2.x's consolidated metadata, in a group of its own.
    fn consolidation(&self) -> Option<&'static dyn crate::format::consolidate::Consolidation> {
        is_json(self.0).then_some(&crate::format::consolidate::ZarrPythonConsolidation as _)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A change to a document, for bad-input tables.
    type Edit = Box<dyn Fn(&mut Value)>;

    fn array(doc: &Value, format: ZarrFormat) -> Result<ArrayMetadata, MetadataError> {
        match parse_node(doc.to_string().as_bytes(), true, format)? {
            NodeMetadata::Array(a) => Ok(a),
            NodeMetadata::Group(_) => unreachable!(),
        }
    }

    fn june() -> Value {
        json!({
            "shape": [10, 4], "data_type": ">i4",
            "chunk_grid": {"type": "regular", "chunk_shape": [5, 2]},
            "chunk_memory_layout": "C",
            "compressor": {"codec": "http://purl.org/zarr/spec/codec/gzip", "configuration": {"level": 1}},
            "fill_value": null, "extensions": [], "attributes": {"foo": 42}
        })
    }

    #[test]
    fn type_strings_carry_the_byte_order() {
        assert_eq!(numpy_type("<i4"), Some((DataType::Int32, false)));
        assert_eq!(numpy_type(">f8"), Some((DataType::Float64, true)));
        assert_eq!(numpy_type("|b1"), Some((DataType::Bool, false)));
        assert_eq!(numpy_type("bool"), Some((DataType::Bool, false)));
        assert_eq!(numpy_type("u1"), Some((DataType::UInt8, false)));
        assert_eq!(numpy_type(">c16"), Some((DataType::Complex128, true)));
        for bad in ["i4", "|i4", "<i3", "<b1", "float32", "", "<", "<M8[ns]"] {
            assert_eq!(numpy_type(bad), None, "{bad}");
        }
        for (dt, big) in [
            (DataType::Int16, true),
            (DataType::Complex64, false),
            (DataType::Bool, false),
        ] {
            let name = numpy_name(&dt, big).unwrap();
            assert_eq!(numpy_type(&name), Some((dt, big)), "{name}");
        }
    }

    #[test]
    fn june_documents_map_onto_the_model() {
        let a = array(&june(), ZarrFormat::V3Draft2019).unwrap();
        assert_eq!(a.data_type, DataType::Int32);
        assert!(shared::bytes_is_big(&a.codecs[0]));
        assert_eq!(a.codecs[1].name, "gzip");
        assert_eq!(a.fill_value, FillValue::zero(&DataType::Int32));
        assert_eq!(
            a.chunk_key_encoding,
            ChunkKeyEncoding::V2 {
                separator: Separator::Dot
            }
        );
        let written: Value = serde_json::from_slice(
            &serialize_node(&NodeMetadata::Array(a), ZarrFormat::V3Draft2019).unwrap(),
        )
        .unwrap();
        assert_eq!(written["data_type"], json!(">i4"));
        assert_eq!(
            written["compressor"]["codec"],
            json!("https://purl.org/zarr/spec/codec/gzip/1.0")
        );
        assert_eq!(written["fill_value"], json!(0));
    }

    #[test]
    fn early_documents_list_their_codecs_inline() {
        let doc = json!({
            "zarr_format": "http://purl.org/zarr/spec/protocol/core/3.0",
            "shape": [3], "data_type": "<c8",
            "chunk_grid": {"type": "regular", "chunk_shape": [2], "separator": "/"},
            "chunk_memory_layout": "C",
            "chunk_codecs": [{"codec": "http://purl.org/zarr/spec/codec/blosc/1.0", "cname": "zstd", "clevel": 3, "shuffle": 2}],
            "fill_value": [1.0, "NaN"], "extensions": [], "attributes": {}
        });
        let a = array(&doc, ZarrFormat::V3Draft2019a).unwrap();
        assert_eq!(
            a.codecs[1].configuration_or_empty()["shuffle"],
            json!("bitshuffle")
        );
        let written: Value = serde_json::from_slice(
            &serialize_node(&NodeMetadata::Array(a), ZarrFormat::V3Draft2019a).unwrap(),
        )
        .unwrap();
        assert_eq!(written["chunk_codecs"][0]["shuffle"], json!(2));
        assert_eq!(written["zarr_format"], json!(ZARR_FORMAT_EARLY));
    }

    #[test]
    fn bad_documents_name_the_field_or_uri() {
        let cases: Vec<(Edit, &str)> = vec![
            (
                Box::new(|d| {
                    d.as_object_mut().unwrap().remove("shape");
                }),
                "`shape`",
            ),
            (
                Box::new(|d| d["chunk_memory_layout"] = json!(1)),
                "`chunk_memory_layout`",
            ),
            (
                Box::new(|d| {
                    d["compressor"] = json!({"codec": "http://purl.org/zarr/spec/codec/snappy"})
                }),
                "`http://purl.org/zarr/spec/codec/snappy`",
            ),
            (
                Box::new(|d| {
                    d["extensions"] =
                        json!([{"extension": "http://example.org/must", "must_understand": true}])
                }),
                "`http://example.org/must`",
            ),
            (Box::new(|d| d["data_type"] = json!("int32")), "`int32`"),
            (
                Box::new(|d| d["codecs"] = json!([])),
                "unknown field `codecs`",
            ),
            (
                Box::new(|d| d["compressor"]["configuration"] = json!(5)),
                "`compressor.configuration`",
            ),
        ];
        for (mutate, needle) in cases {
            let mut doc = june();
            mutate(&mut doc);
            let err = array(&doc, ZarrFormat::V3Draft2019).unwrap_err();
            assert!(err.to_string().contains(needle), "{err} for {doc}");
        }
    }

    #[test]
    fn zarr_python_filters_are_refused_by_name() {
        let mut doc = june();
        doc["attributes"] = json!({"filters": [{"id": "delta", "dtype": "<i4"}]});
        let err = array(&doc, ZarrFormat::V3Draft2019Json).unwrap_err();
        assert!(err.to_string().contains("`delta`"), "{err}");
    }

    #[test]
    fn the_consolidated_key_comes_from_the_key_layout() {
        assert_eq!(consolidated_key().unwrap().as_str(), CONSOLIDATED_KEY);
    }
}
