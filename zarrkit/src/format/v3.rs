//! Zarr v3 (3.0 and 3.1): `zarr.json` documents ↔ the internal model.
//!
//! Spec: `final/v3/core` ("Metadata", "Extensions", "Additional fields"),
//! `final/v3/data-types` (the permitted fill values), `final/v3/chunk-grids/regular-grid`,
//! the registered `extensions/chunk-grids/rectilinear` grid
//! and `final/v3/chunk-key-encodings/{default,v2}`.
//!
//! Documents are parsed into a [`serde_json::Value`] and walked by hand, so
//! that every error names the field it is about, such as
//! `chunk_grid.configuration.chunk_shape` or `codecs[1].configuration`.
//! Codecs are kept as [`ExtensionObject`]s: the codec chain resolves them.
//!
//! Writing is canonical: keys in a fixed order, pretty-printed with two
//! spaces, extensions in their object form (3.0 readers do not accept the
//! short-hand form in `codecs`), fill values in one spelling per value.
//!
//! ```
//! use zarrkit::format::v3;
//! use zarrkit::metadata::{DataType, NodeMetadata};
//!
//! let document = br#"{
//!     "zarr_format": 3, "node_type": "array", "shape": [10], "data_type": "float32",
//!     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5]}},
//!     "chunk_key_encoding": {"name": "default"}, "fill_value": "NaN",
//!     "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]
//! }"#;
//! let NodeMetadata::Array(array) = v3::parse_node(document)? else { unreachable!() };
//! assert_eq!(array.data_type, DataType::Float32);
//! assert_eq!(array.fill_value.as_bytes(), 0x7fc0_0000_u32.to_ne_bytes());
//! # Ok::<(), zarrkit::metadata::MetadataError>(())
//! ```

use crate::metadata::{
    ArrayMetadata, ChunkEdgeLengths, ChunkGrid, ChunkKeyEncoding, DataType, EdgeRun,
    ExtensionObject, GroupMetadata, JsonMap, MetadataError, NodeMetadata, Separator, TimeUnit,
};
// The v3 JSON forms of extension objects and fill values live in the model
// (codecs use them too); re-exported here at their old public paths.
use crate::Error;
use crate::metadata::NodePath;
use crate::metadata::json::compact;
pub use crate::metadata::json::{
    extension_from_json, extension_to_json, fill_value_from_json, fill_value_to_json,
};
use crate::store::{Store, StoreError, StoreKey, StorePrefix};
use serde_json::Value;
use std::num::NonZeroU64;

// The data types with a configuration of their own (strings, structs, …).
mod strings;

/// The name of the metadata document in every node.
pub const METADATA_KEY: &str = "zarr.json";

/// The top-level fields of an array document that this module interprets.
pub const ARRAY_FIELDS: &[&str] = &[
    "zarr_format",
    "node_type",
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_key_encoding",
    "fill_value",
    "codecs",
    "storage_transformers",
    "dimension_names",
    "attributes",
];

/// The top-level fields of a group document that this module interprets.
pub const GROUP_FIELDS: &[&str] = &["zarr_format", "node_type", "attributes"];

/// Parses a `zarr.json` document.
///
/// # Errors
/// A [`MetadataError`] saying which field is wrong: [`MetadataError::Json`]
/// for bytes that are not JSON, [`MetadataError::ZarrFormat`] for a document
/// of another format, and so on. The caller adds the document's key.
pub fn parse_node(bytes: &[u8]) -> Result<NodeMetadata, MetadataError> {
    // Read leniently: writers built on Python's `json` put bare `NaN` and
    // `Infinity` tokens into fill values; they are not JSON.
    let bytes = super::v2::quote_non_finite_tokens(bytes);
    let mut value: Value = serde_json::from_slice(&bytes).map_err(MetadataError::Json)?;
    // The attributes, or a group's consolidated metadata, may be most of
    // the document (100 MB of attributes, 100,000 nodes): move them into
    // the model rather than copy them. Each leaves a stand-in that passes
    // the same checks, so the document is judged as it is.
    let attributes = match value.get_mut("attributes") {
        Some(attributes @ Value::Object(_)) => {
            Some(std::mem::replace(attributes, Value::Object(JsonMap::new())))
        }
        _ => None,
    };
    let consolidated = match value.get_mut(CONSOLIDATED_FIELD) {
        Some(field) if field.get("must_understand") == Some(&Value::Bool(false)) => {
            let stand_in = serde_json::json!({ "must_understand": false });
            Some(std::mem::replace(field, stand_in))
        }
        _ => None,
    };
    let mut node = node_from_json(&value)?;
    if let Some(Value::Object(attributes)) = attributes {
        match &mut node {
            NodeMetadata::Array(array) => array.attributes = attributes,
            NodeMetadata::Group(group) => group.attributes = attributes,
        }
    }
    if let Some(consolidated) = consolidated {
        let extra_fields = match &mut node {
            NodeMetadata::Array(array) => &mut array.extra_fields,
            NodeMetadata::Group(group) => &mut group.extra_fields,
        };
        if let Some(field) = extra_fields.get_mut(CONSOLIDATED_FIELD) {
            *field = consolidated;
        }
    }
    Ok(node)
}

/// The group field of v3 consolidated metadata (zarr-python's).
const CONSOLIDATED_FIELD: &str = "consolidated_metadata";

/// Interprets a parsed `zarr.json` document (see [`parse_node`]).
///
/// # Errors
/// As [`parse_node`], except that the input is already JSON.
pub fn node_from_json(value: &Value) -> Result<NodeMetadata, MetadataError> {
    let Value::Object(doc) = value else {
        return Err(MetadataError::NotAnObject);
    };
    let zarr_format = doc.get("zarr_format").ok_or(MetadataError::MissingField {
        field: "zarr_format",
    })?;
    // v3 core, "zarr_format": an integer, `3` here. The string `"3"` is not it.
    if zarr_format.as_u64() != Some(3) {
        return Err(MetadataError::ZarrFormat {
            expected: "3",
            found: compact(zarr_format),
        });
    }
    let node_type = doc
        .get("node_type")
        .ok_or(MetadataError::MissingField { field: "node_type" })?;
    match node_type.as_str() {
        Some("array") => array_from_json(doc).map(NodeMetadata::Array),
        Some("group") => group_from_json(doc).map(NodeMetadata::Group),
        _ => Err(MetadataError::invalid(
            "node_type",
            "`\"array\"` or `\"group\"`",
            node_type,
        )),
    }
}

/// Serialises a node to canonical `zarr.json`: pretty-printed with two-space
/// indentation, keys in the order of v3 core's "Array metadata" section.
///
/// Entries of `extra_fields` whose names are fields this module writes
/// itself are left out; the others follow `attributes` unchanged.
#[must_use]
pub fn serialize_node(metadata: &NodeMetadata) -> Vec<u8> {
    super::pretty_json(&node_to_json(metadata))
}

/// The canonical JSON document of a node (see [`serialize_node`]).
#[must_use]
pub fn node_to_json(metadata: &NodeMetadata) -> Value {
    let mut doc = JsonMap::new();
    doc.insert("zarr_format".into(), Value::from(3));
    match metadata {
        NodeMetadata::Array(array) => {
            doc.insert("node_type".into(), "array".into());
            doc.insert("shape".into(), Value::from(array.shape.clone()));
            doc.insert("data_type".into(), data_type_to_json(&array.data_type));
            doc.insert("chunk_grid".into(), chunk_grid_to_json(&array.chunk_grid));
            doc.insert(
                "chunk_key_encoding".into(),
                chunk_key_encoding_to_json(&array.chunk_key_encoding),
            );
            doc.insert(
                "fill_value".into(),
                fill_value_to_json(&array.fill_value, &array.data_type),
            );
            doc.insert(
                "codecs".into(),
                Value::Array(array.codecs.iter().map(extension_to_json).collect()),
            );
            if !array.storage_transformers.is_empty() {
                doc.insert(
                    "storage_transformers".into(),
                    Value::Array(
                        array
                            .storage_transformers
                            .iter()
                            .map(extension_to_json)
                            .collect(),
                    ),
                );
            }
            if let Some(names) = &array.dimension_names {
                doc.insert(
                    "dimension_names".into(),
                    Value::Array(
                        names
                            .iter()
                            .map(|name| name.clone().map_or(Value::Null, Value::String))
                            .collect(),
                    ),
                );
            }
            doc.insert("attributes".into(), Value::Object(array.attributes.clone()));
            insert_extra_fields(&mut doc, &array.extra_fields, ARRAY_FIELDS);
        }
        NodeMetadata::Group(group) => {
            doc.insert("node_type".into(), "group".into());
            doc.insert("attributes".into(), Value::Object(group.attributes.clone()));
            insert_extra_fields(&mut doc, &group.extra_fields, GROUP_FIELDS);
        }
    }
    Value::Object(doc)
}

fn insert_extra_fields(doc: &mut JsonMap, extra_fields: &JsonMap, reserved: &[&str]) {
    for (key, value) in extra_fields {
        // A core field in `extra_fields` would overwrite the value written
        // from the model; the model's own field wins.
        if !reserved.contains(&key.as_str()) {
            doc.insert(key.clone(), value.clone());
        }
    }
}

fn array_from_json(doc: &JsonMap) -> Result<ArrayMetadata, MetadataError> {
    let shape = shape_from_json(required(doc, "shape")?)?;
    let data_type = data_type_from_json(required(doc, "data_type")?)?;
    let chunk_grid = chunk_grid_from_json(required(doc, "chunk_grid")?)?;
    let chunk_key_encoding = chunk_key_encoding_from_json(required(doc, "chunk_key_encoding")?)?;
    let fill_value = fill_value_from_json(required(doc, "fill_value")?, &data_type)?;
    let codecs = extension_list_from_json(required(doc, "codecs")?, "codecs")?;
    let storage_transformers = match doc.get("storage_transformers") {
        None => Vec::new(),
        Some(value) => storage_transformers_from_json(value)?,
    };
    let dimension_names = match doc.get("dimension_names") {
        // Tolerated on reading, never written: icechunk and early zarr-python 3
        // releases write `"dimension_names": null` for arrays without names,
        // and zarr-python reads it as "no names".
        None | Some(Value::Null) => None,
        Some(value) => Some(dimension_names_from_json(value)?),
    };
    let attributes = attributes_from_json(doc)?;
    let extra_fields = extra_fields_from_json(doc, ARRAY_FIELDS)?;
    let metadata = ArrayMetadata {
        shape,
        data_type,
        chunk_grid,
        chunk_key_encoding,
        fill_value,
        codecs,
        storage_transformers,
        dimension_names,
        attributes,
        extra_fields,
    };
    metadata.validate()?;
    Ok(metadata)
}

fn group_from_json(doc: &JsonMap) -> Result<GroupMetadata, MetadataError> {
    let attributes = attributes_from_json(doc)?;
    // Tolerated on reading, never written: zarr-python 3.0.0 to 3.1.3 wrote
    // `"consolidated_metadata": null` into every group document. v3 core,
    // "Additional fields", only defines the object form. Only the other
    // extra fields are copied, never the whole document (whose attributes
    // may be most of it).
    let extra_fields = if doc.get("consolidated_metadata") == Some(&Value::Null) {
        let fields: JsonMap = doc
            .iter()
            .filter(|(key, _)| {
                key.as_str() != "consolidated_metadata" && !GROUP_FIELDS.contains(&key.as_str())
            })
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        extra_fields_from_json(&fields, GROUP_FIELDS)?
    } else {
        extra_fields_from_json(doc, GROUP_FIELDS)?
    };
    Ok(GroupMetadata {
        attributes,
        extra_fields,
    })
}

fn required<'a>(doc: &'a JsonMap, field: &'static str) -> Result<&'a Value, MetadataError> {
    doc.get(field).ok_or(MetadataError::MissingField { field })
}

fn attributes_from_json(doc: &JsonMap) -> Result<JsonMap, MetadataError> {
    match doc.get("attributes") {
        None => Ok(JsonMap::new()),
        Some(Value::Object(attributes)) => Ok(attributes.clone()),
        Some(other) => Err(MetadataError::invalid("attributes", "an object", other)),
    }
}

/// The fields of `doc` not in `known`, each of which must opt out with
/// `"must_understand": false`.
fn extra_fields_from_json(doc: &JsonMap, known: &[&str]) -> Result<JsonMap, MetadataError> {
    let mut extra = JsonMap::new();
    for (key, value) in doc {
        if known.contains(&key.as_str()) {
            continue;
        }
        // v3 core, "must_understand": an implementation must fail to open a
        // node with an unrecognised field unless the field is explicitly
        // `"must_understand": false`; such a field is kept so a rewrite does
        // not lose it. This also covers `consolidated_metadata` on groups.
        let ignorable = value
            .as_object()
            .and_then(|object| object.get("must_understand"))
            == Some(&Value::Bool(false));
        if !ignorable {
            return Err(MetadataError::UnknownField { field: key.clone() });
        }
        extra.insert(key.clone(), value.clone());
    }
    Ok(extra)
}

fn shape_from_json(value: &Value) -> Result<Vec<u64>, MetadataError> {
    // v3 core, "shape": an array of integers; 0-d arrays (`[]`) and
    // zero-length dimensions are allowed.
    let expected = "an array of non-negative integers";
    let items = value
        .as_array()
        .ok_or_else(|| MetadataError::invalid("shape", expected, value))?;
    items
        .iter()
        .map(|item| {
            item.as_u64()
                .ok_or_else(|| MetadataError::invalid("shape", expected, value))
        })
        .collect()
}

fn dimension_names_from_json(value: &Value) -> Result<Vec<Option<String>>, MetadataError> {
    let items = value.as_array().ok_or_else(|| {
        MetadataError::invalid("dimension_names", "an array of strings or nulls", value)
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::Null => Ok(None),
            Value::String(name) => Ok(Some(name.clone())),
            other => Err(MetadataError::invalid(
                format!("dimension_names[{i}]"),
                "a string or null",
                other,
            )),
        })
        .collect()
}

fn extension_list_from_json(
    value: &Value,
    field: &str,
) -> Result<Vec<ExtensionObject>, MetadataError> {
    let items = value
        .as_array()
        .ok_or_else(|| MetadataError::invalid(field, "an array of extension objects", value))?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| extension_from_json(item, &format!("{field}[{i}]")))
        .collect()
}

fn storage_transformers_from_json(value: &Value) -> Result<Vec<ExtensionObject>, MetadataError> {
    let transformers = extension_list_from_json(value, "storage_transformers")?;
    // Final v3 defines no storage transformers. One that may be ignored is
    // kept (the array layer ignores it); any other stops the node opening.
    if let Some(unknown) = transformers.iter().find(|t| t.must_understand) {
        return Err(MetadataError::UnsupportedExtension {
            point: "storage transformer",
            name: unknown.name.clone(),
        });
    }
    Ok(transformers)
}

/// An extension at a point where `"must_understand": false` is not allowed.
fn required_extension_from_json(
    value: &Value,
    field: &str,
) -> Result<ExtensionObject, MetadataError> {
    let extension = extension_from_json(value, field)?;
    // v3 core, "must_understand": it is not supported for the data type,
    // chunk grid and chunk key encoding extension points.
    if !extension.must_understand {
        return Err(MetadataError::invalid(
            format!("{field}.must_understand"),
            "`true` (this extension point does not allow `false`)",
            &Value::Bool(false),
        ));
    }
    Ok(extension)
}

/// Parses `data_type`: a core data type name (`"float32"`, `"r24"`), or the
/// same as an extension object (`{"name": "float32"}`, Zarr 3.1), or one of
/// the registered extension data types `bfloat16`, `complex_bfloat16`,
/// `complex_float16`, `complex_float32`/`complex_float64` (aliases read as
/// `complex64`/`complex128`), and `numpy.datetime64`/`numpy.timedelta64`
/// with their `unit` and `scale_factor` configuration.
///
/// # Errors
/// [`MetadataError::UnsupportedExtension`] for a name that is none of these,
/// [`MetadataError::MissingField`] for a `numpy.*` type without its
/// configuration or one of its members, and [`MetadataError::InvalidField`]
/// for a malformed value, a non-empty configuration on a type that takes
/// none, an unknown unit, a scale factor outside `1..=2^31-1`, another
/// member, or `"must_understand": false`.
pub fn data_type_from_json(value: &Value) -> Result<DataType, MetadataError> {
    let extension = required_extension_from_json(value, "data_type")?;
    if matches!(
        extension.name.as_str(),
        "numpy.datetime64" | "numpy.timedelta64"
    ) {
        return numpy_time_from_json(&extension.name, extension.configuration);
    }
    if let Some(data_type) =
        strings::data_type_from_parts(&extension.name, extension.configuration.as_ref())?
    {
        return Ok(data_type);
    }
    let data_type = DataType::from_name(&extension.name).ok_or_else(|| {
        MetadataError::UnsupportedExtension {
            point: "data type",
            name: extension.name.clone(),
        }
    })?;
    match extension.configuration {
        Some(configuration) if !configuration.is_empty() => Err(MetadataError::invalid(
            "data_type.configuration",
            format!("no configuration for the data type `{}`", extension.name),
            &Value::Object(configuration),
        )),
        _ => Ok(data_type),
    }
}

/// `numpy.datetime64` / `numpy.timedelta64` from their configuration
/// (extensions/data-types/numpy.datetime64, "Configuration": `unit` and
/// `scale_factor` are required, no other member is permitted).
fn numpy_time_from_json(
    name: &str,
    configuration: Option<JsonMap>,
) -> Result<DataType, MetadataError> {
    let configuration = configuration.ok_or(MetadataError::MissingField {
        field: "data_type.configuration",
    })?;
    reject_other_members(
        &configuration,
        "data_type.configuration",
        &["unit", "scale_factor"],
    )?;
    let unit_value = configuration
        .get("unit")
        .ok_or(MetadataError::MissingField {
            field: "data_type.configuration.unit",
        })?;
    let unit = unit_value
        .as_str()
        .and_then(TimeUnit::from_name)
        .ok_or_else(|| {
            MetadataError::invalid(
                "data_type.configuration.unit",
                format!("a unit of `{name}` (`Y`, `M`, `W`, `D`, `h`, `m`, `s`, `ms`, `us`, `ns`, `ps`, `fs`, `as` or `generic`)"),
                unit_value,
            )
        })?;
    let scale_value = configuration
        .get("scale_factor")
        .ok_or(MetadataError::MissingField {
            field: "data_type.configuration.scale_factor",
        })?;
    let scale_factor = scale_value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| (1..=0x7fff_ffff).contains(n))
        .ok_or_else(|| {
            MetadataError::invalid(
                "data_type.configuration.scale_factor",
                "an integer in 1..=2147483647",
                scale_value,
            )
        })?;
    Ok(if name == "numpy.datetime64" {
        DataType::NumpyDateTime64 { unit, scale_factor }
    } else {
        DataType::NumpyTimeDelta64 { unit, scale_factor }
    })
}

/// The `data_type` value of a data type: its name, or for `numpy.datetime64`
/// and `numpy.timedelta64` an object with the name and configuration.
#[must_use]
pub fn data_type_to_json(data_type: &DataType) -> Value {
    match data_type {
        DataType::NumpyDateTime64 { unit, scale_factor }
        | DataType::NumpyTimeDelta64 { unit, scale_factor } => serde_json::json!({
            "name": data_type.name(),
            "configuration": {"unit": unit.name(), "scale_factor": scale_factor},
        }),
        other => match strings::data_type_configuration(other) {
            Some(configuration) => serde_json::json!({
                "name": other.name(),
                "configuration": configuration,
            }),
            None => Value::String(other.name()),
        },
    }
}

/// Parses `chunk_grid`: the core `regular` grid, or the registered
/// `rectilinear` extension in every spelling its README allows (an integer
/// per dimension, explicit edge lengths, run-length pairs `[length, count]`,
/// and mixtures of the last two).
///
/// # Errors
/// [`MetadataError::UnsupportedExtension`] for another grid, and
/// [`MetadataError::InvalidField`] or [`MetadataError::MissingField`] for
/// a malformed grid, such as a zero chunk length.
pub fn chunk_grid_from_json(value: &Value) -> Result<ChunkGrid, MetadataError> {
    let extension = required_extension_from_json(value, "chunk_grid")?;
    if extension.name != "regular" && extension.name != "rectilinear" {
        return Err(MetadataError::UnsupportedExtension {
            point: "chunk grid",
            name: extension.name,
        });
    }
    let configuration = extension.configuration.ok_or(MetadataError::MissingField {
        field: "chunk_grid.configuration",
    })?;
    if extension.name == "rectilinear" {
        return rectilinear_from_json(&configuration);
    }
    reject_other_members(&configuration, "chunk_grid.configuration", &["chunk_shape"])?;
    let chunk_shape = configuration
        .get("chunk_shape")
        .ok_or(MetadataError::MissingField {
            field: "chunk_grid.configuration.chunk_shape",
        })?;
    // final/v3/chunk-grids/regular-grid: "Chunk sizes must be greater than zero."
    let lengths = positive_lengths(chunk_shape, "chunk_grid.configuration.chunk_shape")?;
    ChunkGrid::regular(&lengths)
}

/// A regular grid's chunk shape, `value`, which must be an array of
/// positive integers (v3 and the drafts alike); an error names `field`.
pub(crate) fn positive_lengths(value: &Value, field: &str) -> Result<Vec<u64>, MetadataError> {
    let invalid = || MetadataError::invalid(field, "an array of positive integers", value);
    value
        .as_array()
        .ok_or_else(invalid)?
        .iter()
        .map(|n| n.as_u64().filter(|&n| n > 0).ok_or_else(invalid))
        .collect()
}

/// Parses the configuration of a `rectilinear` grid
/// (`extensions/chunk-grids/rectilinear`, "Configuration").
fn rectilinear_from_json(configuration: &JsonMap) -> Result<ChunkGrid, MetadataError> {
    reject_other_members(
        configuration,
        "chunk_grid.configuration",
        &["kind", "chunk_shapes"],
    )?;
    let kind = configuration
        .get("kind")
        .ok_or(MetadataError::MissingField {
            field: "chunk_grid.configuration.kind",
        })?;
    // "This specification defines a single permitted value for the `kind`
    // field, namely the string `"inline"`."
    if kind.as_str() != Some("inline") {
        return Err(MetadataError::invalid(
            "chunk_grid.configuration.kind",
            "`\"inline\"`",
            kind,
        ));
    }
    let chunk_shapes = configuration
        .get("chunk_shapes")
        .ok_or(MetadataError::MissingField {
            field: "chunk_grid.configuration.chunk_shapes",
        })?;
    let chunk_shapes = chunk_shapes
        .as_array()
        .ok_or_else(|| {
            MetadataError::invalid(
                "chunk_grid.configuration.chunk_shapes",
                "an array with one entry per dimension",
                chunk_shapes,
            )
        })?
        .iter()
        .enumerate()
        .map(|(d, edges)| edge_lengths_from_json(edges, d))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ChunkGrid::Rectilinear { chunk_shapes })
}

/// Parses the edge lengths of dimension `d` (rectilinear, "Chunk edge
/// lengths" and "Run-length encoding"): a positive integer, or an array of
/// positive integers and `[length, count]` pairs of positive integers.
fn edge_lengths_from_json(value: &Value, d: usize) -> Result<ChunkEdgeLengths, MetadataError> {
    let field = || format!("chunk_grid.configuration.chunk_shapes[{d}]");
    let positive = |v: &Value| v.as_u64().and_then(NonZeroU64::new);
    if let Some(step) = positive(value) {
        return Ok(ChunkEdgeLengths::Regular(step));
    }
    let expected = "a positive integer, or an array of positive integers and \
                    `[length, count]` pairs of positive integers";
    let items = value
        .as_array()
        .ok_or_else(|| MetadataError::invalid(field(), expected, value))?;
    let runs = items
        .iter()
        .map(|item| {
            let run = match item {
                Value::Array(pair) => match pair.as_slice() {
                    [length, count] => positive(length)
                        .zip(positive(count))
                        .map(|(length, count)| EdgeRun { length, count }),
                    _ => None,
                },
                item => positive(item).map(|length| EdgeRun {
                    length,
                    count: NonZeroU64::MIN,
                }),
            };
            run.ok_or_else(|| MetadataError::invalid(field(), expected, item))
        })
        .collect::<Result<Vec<_>, _>>()?;
    ChunkEdgeLengths::from_runs(runs)
}

/// The `chunk_grid` value of a grid.
///
/// A `rectilinear` grid is written compactly, as zarrs writes it: an
/// integer stays an integer, and explicit edge lengths become runs, a run of
/// one chunk as its bare length and a longer run as `[length, count]`
/// (`[4, 4, 4]` is written `[[4, 3]]`).
#[must_use]
pub fn chunk_grid_to_json(chunk_grid: &ChunkGrid) -> Value {
    match chunk_grid {
        ChunkGrid::Regular { chunk_shape } => {
            let lengths: Vec<u64> = chunk_shape.iter().map(|n| n.get()).collect();
            serde_json::json!({
                "name": "regular",
                "configuration": { "chunk_shape": lengths },
            })
        }
        ChunkGrid::Rectilinear { chunk_shapes } => {
            let chunk_shapes: Vec<Value> = chunk_shapes
                .iter()
                .map(|edges| match edges {
                    ChunkEdgeLengths::Regular(step) => Value::from(step.get()),
                    ChunkEdgeLengths::Runs(runs) => runs
                        .iter()
                        .map(|run| {
                            if run.count.get() == 1 {
                                Value::from(run.length.get())
                            } else {
                                serde_json::json!([run.length.get(), run.count.get()])
                            }
                        })
                        .collect(),
                })
                .collect();
            serde_json::json!({
                "name": "rectilinear",
                "configuration": { "kind": "inline", "chunk_shapes": chunk_shapes },
            })
        }
    }
}

/// Parses `chunk_key_encoding`: `default` (separator `/` unless configured)
/// or `v2` (separator `.` unless configured).
///
/// # Errors
/// [`MetadataError::UnsupportedExtension`] for another encoding, and
/// [`MetadataError::InvalidField`] for a separator other than `/` or `.`.
pub fn chunk_key_encoding_from_json(value: &Value) -> Result<ChunkKeyEncoding, MetadataError> {
    let extension = required_extension_from_json(value, "chunk_key_encoding")?;
    let default_separator = match extension.name.as_str() {
        "default" => Separator::Slash,
        "v2" => Separator::Dot,
        _ => {
            return Err(MetadataError::UnsupportedExtension {
                point: "chunk key encoding",
                name: extension.name,
            });
        }
    };
    let configuration = extension.configuration.unwrap_or_default();
    reject_other_members(
        &configuration,
        "chunk_key_encoding.configuration",
        &["separator"],
    )?;
    let separator = match configuration.get("separator") {
        None => default_separator,
        Some(value) => value
            .as_str()
            .and_then(Separator::from_str_opt)
            .ok_or_else(|| {
                MetadataError::invalid(
                    "chunk_key_encoding.configuration.separator",
                    "`\"/\"` or `\".\"`",
                    value,
                )
            })?,
    };
    Ok(match extension.name.as_str() {
        "v2" => ChunkKeyEncoding::V2 { separator },
        _ => ChunkKeyEncoding::Default { separator },
    })
}

/// The `chunk_key_encoding` value of an encoding, with its separator
/// written out even when it is the default.
#[must_use]
pub fn chunk_key_encoding_to_json(encoding: &ChunkKeyEncoding) -> Value {
    let (name, separator) = match encoding {
        ChunkKeyEncoding::Default { separator } => ("default", separator),
        ChunkKeyEncoding::V2 { separator } => ("v2", separator),
    };
    serde_json::json!({
        "name": name,
        "configuration": { "separator": separator.as_char().to_string() },
    })
}

fn reject_other_members(
    configuration: &JsonMap,
    field: &str,
    allowed: &[&str],
) -> Result<(), MetadataError> {
    match configuration
        .iter()
        .find(|(key, _)| !allowed.contains(&key.as_str()))
    {
        Some((key, value)) => {
            let allowed: Vec<String> = allowed.iter().map(|a| format!("`{a}`")).collect();
            Err(MetadataError::invalid(
                format!("{field}.{key}"),
                format!("no member other than {}", allowed.join(", ")),
                value,
            ))
        }
        None => Ok(()),
    }
}

/// [`serialize_node`], refusing first what v3 cannot say.
///
/// # Errors
/// [`MetadataError::NotRepresentable`] for a `struct` field with a shape.
pub fn serialize_node_checked(metadata: &NodeMetadata) -> Result<Vec<u8>, MetadataError> {
    if let NodeMetadata::Array(array) = metadata {
        check_v3_struct_fields(&array.data_type)?;
    }
    Ok(serialize_node(metadata))
}

/// Whether a root `zarr.json` is a v3 draft's entry point: a JSON object
/// whose `zarr_format` is a string (a URI), where v3 has the number 3.
pub(crate) fn is_draft_entry_point(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|doc| doc.get("zarr_format").map(Value::is_string))
        .unwrap_or(false)
}

/// v3 `struct` fields are scalars (extensions/data-types/struct): a field
/// with a shape (NumPy's `[name, type, shape]`, from v2) has no v3 form.
fn check_v3_struct_fields(data_type: &DataType) -> Result<(), MetadataError> {
    if let DataType::Struct(fields) = data_type {
        for field in fields {
            if !field.shape.is_empty() {
                return Err(MetadataError::NotRepresentable {
                    format: "v3",
                    what: format!(
                        "the struct field `{}` with the shape {:?} (v3 `struct` fields are scalars)",
                        field.name, field.shape
                    ),
                });
            }
            check_v3_struct_fields(&field.data_type)?;
        }
    }
    Ok(())
}

/// Whether the node at `path` exists: v3 core, "Storage": a node exists only
/// where its `zarr.json` does (implicit groups were removed), and a root
/// `zarr.json` that is a draft's entry point is not a v3 node.
fn is_node(store: &dyn Store, path: &NodePath) -> Result<bool, Error> {
    let key = document_key(path)?;
    Ok(match store.get(&key, None)? {
        None => false,
        Some(bytes) => !(path.is_root() && is_draft_entry_point(&bytes)),
    })
}

/// The key of the document (`zarr.json`) of the node at `path` (v3 core,
/// "Storage keys"): the one place v3 forms it.
pub(crate) fn document_key(path: &NodePath) -> Result<StoreKey, StoreError> {
    path.to_prefix().key(METADATA_KEY)
}

/// Zarr v3 in the dispatch of [`super::version`]: a node is a directory
/// holding its `zarr.json`.
pub(crate) struct V3;

impl super::Version for V3 {
    fn is_document_key(&self, key: &StoreKey) -> bool {
        key.name() == METADATA_KEY
    }

    fn node_prefix(&self, path: &NodePath) -> StorePrefix {
        path.to_prefix()
    }

    fn metadata_key(&self, path: &NodePath) -> Result<StoreKey, StoreError> {
        document_key(path)
    }

    /// Reads the node at `path` (its `zarr.json`, v3 core "Storage keys"), or
    /// `None` when there is none. A root `zarr.json` whose `zarr_format` is a
    /// string is a v3 draft's entry point, not a v3 node: `None` too.
    ///
    /// # Errors
    /// [`Error::Metadata`] naming the key of an invalid document, or a store
    /// error.
    fn read_node(&self, store: &dyn Store, path: &NodePath) -> Result<Option<NodeMetadata>, Error> {
        let key = document_key(path)?;
        let Some(bytes) = store.get(&key, None)? else {
            return Ok(None);
        };
        if path.is_root() && is_draft_entry_point(&bytes) {
            return Ok(None);
        }
        let metadata = parse_node(&bytes).map_err(|source| Error::Metadata { key, source })?;
        Ok(Some(metadata))
    }

    fn serialize_node(&self, metadata: &NodeMetadata) -> Result<Vec<u8>, MetadataError> {
        serialize_node_checked(metadata)
    }

    /// What [`serialize_node_checked`] refuses, without writing the
    /// document (v3 says everything else).
    fn check_node(&self, metadata: &NodeMetadata) -> Result<(), MetadataError> {
        match metadata {
            NodeMetadata::Array(array) => check_v3_struct_fields(&array.data_type),
            NodeMetadata::Group(_) => Ok(()),
        }
    }

    /// Writes the node's `zarr.json`.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] for what v3 cannot say (see
    /// [`serialize_node_checked`]), or a store error.
    fn write_node(
        &self,
        store: &dyn Store,
        path: &NodePath,
        metadata: &NodeMetadata,
        mode: super::WriteMode,
    ) -> Result<bool, Error> {
        let key = document_key(path)?;
        let bytes = serialize_node_checked(metadata).map_err(|source| Error::InvalidMetadata {
            path: path.clone(),
            source,
        })?;
        super::put_node_document(store, &key, &bytes, mode)
    }

    /// The paths of the children of the group at `path`, sorted by name: the
    /// directories below it that hold a `zarr.json`.
    ///
    /// # Errors
    /// A store error (including a store that cannot list).
    fn children(&self, store: &dyn Store, path: &NodePath) -> Result<Vec<NodePath>, Error> {
        super::directory_children(store, path, |child| {
            Ok(store.size(&document_key(child)?)?.is_some())
        })
    }

    /// Every directory below the group: a child where it holds a
    /// `zarr.json`, which reading it finds out (below the root, a
    /// `zarr.json` is never a draft's entry point).
    fn child_candidates(
        &self,
        store: &dyn Store,
        path: &NodePath,
    ) -> Result<Option<Vec<NodePath>>, Error> {
        super::directory_children(store, path, |_| Ok(true)).map(Some)
    }

    /// Erases the node at `path` and everything below it.
    ///
    /// # Errors
    /// [`Error::NodeNotFound`] if there is no v3 node there, or a store error.
    fn erase_node(&self, store: &dyn Store, path: &NodePath) -> Result<(), Error> {
        super::erase_directory_node(store, path, is_node(store, path)?)
    }

    fn node_of_document(&self, key: &StoreKey) -> Option<NodePath> {
        super::node_of_document_named(key, &[METADATA_KEY])
    }

    fn keeps_consolidated_metadata_in_the_root(&self) -> bool {
        true
    }

    fn consolidation(&self) -> Option<&'static dyn super::consolidate::Consolidation> {
        Some(&super::consolidate::V3Consolidation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::FillValue;
    use serde_json::json;

    fn fill(value: Value, data_type: &DataType) -> Result<Vec<u8>, MetadataError> {
        fill_value_from_json(&value, data_type).map(|f| f.as_bytes().to_vec())
    }

    #[test]
    fn nan_spellings_give_the_spec_bit_patterns() {
        assert_eq!(
            fill(json!("NaN"), &DataType::Float32).unwrap(),
            0x7fc0_0000_u32.to_ne_bytes()
        );
        assert_eq!(
            fill(json!("NaN"), &DataType::Float16).unwrap(),
            0x7e00_u16.to_ne_bytes()
        );
        assert_eq!(
            fill(json!("NaN"), &DataType::Float64).unwrap(),
            0x7ff8_0000_0000_0000_u64.to_ne_bytes()
        );
        assert_eq!(
            fill(json!("0x7fc00001"), &DataType::Float32).unwrap(),
            0x7fc0_0001_u32.to_ne_bytes()
        );
        assert_eq!(
            fill(json!("0xFC00"), &DataType::Float16).unwrap(),
            0xfc00_u16.to_ne_bytes()
        );
    }

    #[test]
    fn hex_fill_values_need_exactly_two_digits_per_byte() {
        for (bad, data_type) in [
            ("0x7fc0000", DataType::Float32),
            ("0x7fc000000", DataType::Float32),
            ("0x7fc00000", DataType::Float64),
            ("0x7e00", DataType::Float32),
            ("0x+7e0", DataType::Float16),
            ("0X7e00", DataType::Float16),
            ("0x7g00", DataType::Float16),
            ("nanx", DataType::Float32),
            ("infinite", DataType::Float32),
            ("NaN0", DataType::Float32),
        ] {
            assert!(
                fill(json!(bad), &data_type).is_err(),
                "{bad} for {data_type}"
            );
        }
    }

    #[test]
    fn numbers_round_to_the_nearest_representable_float() {
        // 0.1 is not a float32; the nearest float32 is 0x3dcccccd.
        assert_eq!(
            fill(json!(0.1), &DataType::Float32).unwrap(),
            0x3dcc_cccd_u32.to_ne_bytes()
        );
        // 65520 is halfway between the largest f16 (65504) and 65536: ties
        // to even rounds up, which overflows to infinity.
        assert_eq!(
            fill(json!(65520), &DataType::Float16).unwrap(),
            0x7c00_u16.to_ne_bytes()
        );
        assert_eq!(
            fill(json!(1e300), &DataType::Float32).unwrap(),
            f32::INFINITY.to_ne_bytes()
        );
        assert_eq!(
            fill(json!(-0.0), &DataType::Float64).unwrap(),
            (-0.0f64).to_ne_bytes()
        );
    }

    #[test]
    fn integers_accept_integral_floats_in_range_only() {
        assert_eq!(
            fill(json!(5.0), &DataType::Int32).unwrap(),
            5i32.to_ne_bytes()
        );
        assert_eq!(fill(json!(-128), &DataType::Int8).unwrap(), [0x80]);
        assert_eq!(
            fill(json!(u64::MAX), &DataType::UInt64).unwrap(),
            u64::MAX.to_ne_bytes()
        );
        assert_eq!(
            fill(json!(i64::MIN), &DataType::Int64).unwrap(),
            i64::MIN.to_ne_bytes()
        );
        for (bad, data_type) in [
            (json!(5.5), DataType::Int32),
            (json!(256), DataType::UInt8),
            (json!(-1), DataType::UInt8),
            (json!(-129), DataType::Int8),
            (json!(1e30), DataType::UInt64),
            (json!(u64::MAX), DataType::Int64),
            (json!("5"), DataType::Int32),
            (json!(true), DataType::UInt8),
            (json!(null), DataType::UInt8),
        ] {
            assert!(
                fill(bad.clone(), &data_type).is_err(),
                "{bad} for {data_type}"
            );
        }
    }

    #[test]
    fn fill_value_errors_name_the_value_and_type() {
        let err = fill(json!(256), &DataType::UInt8).unwrap_err();
        assert_eq!(
            err.to_string(),
            "fill value `256` is invalid for data type `uint8`"
        );
    }

    #[test]
    fn complex_and_raw_fill_values() {
        let mut expected = f32::NEG_INFINITY.to_ne_bytes().to_vec();
        expected.extend(0x7fc0_0000_u32.to_ne_bytes());
        assert_eq!(
            fill(json!(["-Infinity", "NaN"]), &DataType::Complex64).unwrap(),
            expected
        );
        let mut expected = 1.5f64.to_ne_bytes().to_vec();
        expected.extend(0x7ff0_0000_0000_0001_u64.to_ne_bytes());
        assert_eq!(
            fill(json!([1.5, "0x7ff0000000000001"]), &DataType::Complex128).unwrap(),
            expected
        );
        assert!(fill(json!([1.5]), &DataType::Complex128).is_err());
        // Issue #9: a real number alone is `re + 0j`, as NumPy reads it
        // (zarr 1.x writes `0`); a lone hex string says no part and stays
        // refused.
        let mut expected = 1.5f64.to_ne_bytes().to_vec();
        expected.extend(0.0f64.to_ne_bytes());
        assert_eq!(fill(json!(1.5), &DataType::Complex128).unwrap(), expected);
        let mut expected = f32::NEG_INFINITY.to_ne_bytes().to_vec();
        expected.extend(0.0f32.to_ne_bytes());
        assert_eq!(
            fill(json!("-Infinity"), &DataType::Complex64).unwrap(),
            expected
        );
        assert!(fill(json!("0x7fc00000"), &DataType::Complex64).is_err());
        assert!(fill(json!(true), &DataType::Complex64).is_err());
        assert!(fill(json!([1, 2, 3]), &DataType::Complex64).is_err());
        assert_eq!(
            fill(json!([1, 2, 255]), &DataType::RawBits(24)).unwrap(),
            [1, 2, 255]
        );
        assert!(fill(json!([1, 2]), &DataType::RawBits(24)).is_err());
        assert!(fill(json!([1, 2, 256]), &DataType::RawBits(24)).is_err());
    }

    #[test]
    fn fill_values_are_written_canonically() {
        let cases = [
            (DataType::Float32, json!("NaN"), json!("NaN")),
            (DataType::Float32, json!("0x7fc00001"), json!("0x7fc00001")),
            (DataType::Float32, json!("0xffc00000"), json!("0xffc00000")),
            (DataType::Float16, json!("+Infinity"), json!("Infinity")),
            (DataType::Float64, json!("-Infinity"), json!("-Infinity")),
            (DataType::Float64, json!("0x3ff0000000000000"), json!(1.0)),
            (DataType::Float32, json!(0.1), json!(0.10000000149011612)),
            (DataType::Int32, json!(5.0), json!(5)),
            (DataType::Bool, json!(true), json!(true)),
            (DataType::Complex64, json!([1, "NaN"]), json!([1.0, "NaN"])),
            (DataType::RawBits(16), json!([0, 7]), json!([0, 7])),
        ];
        for (data_type, input, canonical) in cases {
            let fill = fill_value_from_json(&input, &data_type).unwrap();
            assert_eq!(fill_value_to_json(&fill, &data_type), canonical, "{input}");
        }
    }

    #[test]
    fn extensions_accept_both_forms() {
        assert_eq!(
            extension_from_json(&json!("crc32c"), "codecs[0]").unwrap(),
            ExtensionObject::new("crc32c")
        );
        let ext = extension_from_json(
            &json!({"name": "x", "configuration": {}, "must_understand": false}),
            "codecs[0]",
        )
        .unwrap();
        assert_eq!(ext.configuration, Some(JsonMap::new()));
        assert!(!ext.must_understand);
        assert_eq!(
            extension_to_json(&ext),
            json!({"name": "x", "configuration": {}, "must_understand": false})
        );
        assert_eq!(
            extension_to_json(&ExtensionObject::new("bytes")),
            json!({"name": "bytes"})
        );
    }

    #[test]
    fn malformed_extensions_name_the_member() {
        for (value, needle) in [
            (json!({"name": "x", "level": 1}), "`codecs[2].level`"),
            (json!({"name": 1}), "`codecs[2].name`"),
            (json!({"configuration": {}}), "`codecs[2]`"),
            (
                json!({"name": "x", "configuration": []}),
                "`codecs[2].configuration`",
            ),
            (
                json!({"name": "x", "must_understand": "no"}),
                "`codecs[2].must_understand`",
            ),
            (json!(7), "`codecs[2]`"),
        ] {
            let err = extension_from_json(&value, "codecs[2]").unwrap_err();
            assert!(err.to_string().contains(needle), "{err} for {value}");
        }
    }

    #[test]
    fn data_types_in_object_form_are_core_types() {
        assert_eq!(
            data_type_from_json(&json!({"name": "float32"})).unwrap(),
            DataType::Float32
        );
        assert_eq!(
            data_type_from_json(&json!({"name": "r16", "configuration": {}})).unwrap(),
            DataType::RawBits(16)
        );
        let err =
            data_type_from_json(&json!({"name": "int8", "configuration": {"a": 1}})).unwrap_err();
        assert!(
            err.to_string().contains("`data_type.configuration`"),
            "{err}"
        );
        let err =
            data_type_from_json(&json!({"name": "datetime64", "configuration": {}})).unwrap_err();
        assert_eq!(err.to_string(), "unsupported data type `datetime64`");
    }

    #[test]
    fn key_encodings_default_their_separators() {
        assert_eq!(
            chunk_key_encoding_from_json(&json!("default")).unwrap(),
            ChunkKeyEncoding::Default {
                separator: Separator::Slash
            }
        );
        assert_eq!(
            chunk_key_encoding_from_json(&json!({"name": "v2"})).unwrap(),
            ChunkKeyEncoding::V2 {
                separator: Separator::Dot
            }
        );
        assert_eq!(
            chunk_key_encoding_from_json(
                &json!({"name": "v2", "configuration": {"separator": "/"}})
            )
            .unwrap(),
            ChunkKeyEncoding::V2 {
                separator: Separator::Slash
            }
        );
        let err = chunk_key_encoding_from_json(
            &json!({"name": "default", "configuration": {"separator": "/", "x": 1}}),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("`chunk_key_encoding.configuration.x`"),
            "{err}"
        );
    }

    #[test]
    fn other_spellings_of_nan_and_infinity_read_as_the_canonical_values() {
        for spelling in ["nan", "NAN", "+NaN", "-nan"] {
            assert_eq!(
                fill(json!(spelling), &DataType::Float32).unwrap(),
                fill(json!("NaN"), &DataType::Float32).unwrap(),
                "{spelling}"
            );
        }
        for (spelling, canonical) in [
            ("inf", "Infinity"),
            ("+Inf", "Infinity"),
            ("INFINITY", "Infinity"),
            ("-inf", "-Infinity"),
            ("-infinity", "-Infinity"),
        ] {
            let value = fill(json!(spelling), &DataType::Float64).unwrap();
            assert_eq!(
                value,
                fill(json!(canonical), &DataType::Float64).unwrap(),
                "{spelling}"
            );
            assert_eq!(
                fill_value_to_json(&FillValue::new(value.clone()), &DataType::Float64),
                json!(canonical)
            );
        }
    }

    #[test]
    fn bare_non_finite_tokens_in_the_document_are_read() {
        let text =
            br#"{"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "float64",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": NaN,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "attributes": {"note": "NaN stays a string", "lo": -Infinity}}"#;
        let NodeMetadata::Array(array) = parse_node(text).unwrap() else {
            panic!("an array document")
        };
        assert!(f64::from_ne_bytes(array.fill_value.as_bytes().try_into().unwrap()).is_nan());
        assert_eq!(array.attributes["note"], "NaN stays a string");
        assert_eq!(array.attributes["lo"], "-Infinity");
    }

    #[test]
    fn bfloat16_fill_values_use_the_high_half_of_float32() {
        // 1.0f32 is 0x3f800000, so bfloat16 1.0 is 0x3f80 (a float16 would
        // be 0x3c00).
        assert_eq!(
            fill(json!(1.0), &DataType::BFloat16).unwrap(),
            0x3f80u16.to_ne_bytes()
        );
        assert_eq!(
            fill(json!("NaN"), &DataType::BFloat16).unwrap(),
            0x7fc0u16.to_ne_bytes()
        );
        assert_eq!(
            fill(json!("-Infinity"), &DataType::BFloat16).unwrap(),
            0xff80u16.to_ne_bytes()
        );
        assert_eq!(
            fill(json!("0x7f81"), &DataType::BFloat16).unwrap(),
            0x7f81u16.to_ne_bytes()
        );
        // 1 + 2^-8 is halfway between bfloat16 1.0 and 1 + 2^-7: ties to even.
        assert_eq!(
            fill(json!(1.00390625), &DataType::BFloat16).unwrap(),
            0x3f80u16.to_ne_bytes()
        );
        for bad in [json!("0x7fc00000"), json!("0x7f8"), json!(true), json!([1])] {
            assert!(fill(bad.clone(), &DataType::BFloat16).is_err(), "{bad}");
        }
    }

    #[test]
    fn extension_fill_values_round_trip_in_their_canonical_form() {
        let day = DataType::NumpyDateTime64 {
            unit: TimeUnit::Day,
            scale_factor: 1,
        };
        for (data_type, input, canonical) in [
            (DataType::BFloat16, json!(-2.5), json!(-2.5)),
            (DataType::BFloat16, json!("0x7fc0"), json!("NaN")),
            (DataType::BFloat16, json!("0x7fc1"), json!("0x7fc1")),
            (DataType::BFloat16, json!("+Infinity"), json!("Infinity")),
            (DataType::BFloat16, json!(0.1), json!(0.10009765625)),
            (
                DataType::ComplexBFloat16,
                json!([1, "NaN"]),
                json!([1.0, "NaN"]),
            ),
            (
                DataType::ComplexFloat16,
                json!([0.1, "-Infinity"]),
                json!([0.0999755859375, "-Infinity"]),
            ),
            (day.clone(), json!("NaT"), json!("NaT")),
            (day.clone(), json!(i64::MIN), json!("NaT")),
            (day.clone(), json!(-7), json!(-7)),
            (day.clone(), json!(i64::MAX), json!(i64::MAX)),
        ] {
            let value = fill_value_from_json(&input, &data_type).unwrap();
            assert_eq!(fill_value_to_json(&value, &data_type), canonical, "{input}");
        }
        assert_eq!(fill(json!("NaT"), &day).unwrap(), i64::MIN.to_ne_bytes());
        for bad in [
            json!(1.5),
            json!(1e3),
            json!("nat"),
            json!(u64::MAX),
            json!(null),
        ] {
            assert!(fill(bad.clone(), &day).is_err(), "{bad}");
        }
    }

    #[test]
    fn numpy_time_types_carry_unit_and_scale_factor() {
        let parsed = data_type_from_json(&json!({
            "name": "numpy.timedelta64",
            "configuration": {"unit": "\u{3bc}s", "scale_factor": 10}
        }))
        .unwrap();
        assert_eq!(
            parsed,
            DataType::NumpyTimeDelta64 {
                unit: TimeUnit::Microsecond,
                scale_factor: 10
            }
        );
        assert_eq!(
            data_type_to_json(&parsed),
            json!({"name": "numpy.timedelta64",
                   "configuration": {"unit": "us", "scale_factor": 10}})
        );
        for (bad, needle) in [
            (json!("numpy.datetime64"), "configuration"),
            (
                json!({"name": "numpy.datetime64", "configuration": {"unit": "s"}}),
                "scale_factor",
            ),
            (
                json!({"name": "numpy.datetime64", "configuration": {"unit": "sec", "scale_factor": 1}}),
                "unit",
            ),
            (
                json!({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 0}}),
                "scale_factor",
            ),
            (
                json!({"name": "numpy.datetime64",
                       "configuration": {"unit": "s", "scale_factor": 2_147_483_648u64}}),
                "scale_factor",
            ),
            (
                json!({"name": "numpy.datetime64",
                       "configuration": {"unit": "s", "scale_factor": 1, "endian": "little"}}),
                "endian",
            ),
        ] {
            let err = data_type_from_json(&bad).unwrap_err().to_string();
            assert!(err.contains(needle), "{bad}: {err}");
        }
    }

    #[test]
    fn complex_aliases_are_written_under_the_core_name() {
        let parsed = data_type_from_json(&json!("complex_float32")).unwrap();
        assert_eq!(parsed, DataType::Complex64);
        assert_eq!(data_type_to_json(&parsed), json!("complex64"));
        assert_eq!(
            data_type_from_json(&json!({"name": "complex_float64"})).unwrap(),
            DataType::Complex128
        );
        assert_eq!(
            data_type_to_json(&DataType::ComplexBFloat16),
            json!("complex_bfloat16")
        );
        assert!(
            data_type_from_json(&json!({"name": "bfloat16", "configuration": {"x": 1}})).is_err()
        );
    }

    #[test]
    fn small_float_fill_values_use_each_types_own_nan_and_infinity() {
        let t = |name| DataType::from_name(name).unwrap();
        for (name, input, bits) in [
            ("float8_e4m3", json!("NaN"), 0x7c),
            ("float8_e3m4", json!("NaN"), 0x78),
            ("float8_e5m2", json!("NaN"), 0x7e),
            ("float8_e4m3fnuz", json!("NaN"), 0x80),
            ("float8_e8m0fnu", json!("NaN"), 0xff),
            ("float8_e4m3", json!("Infinity"), 0x78),
            ("float8_e4m3", json!("-Infinity"), 0xf8),
            ("float8_e5m2", json!("+Infinity"), 0x7c),
            ("float8_e4m3", json!(1.0), 0x38),
            // 1.0625 is halfway between 1.0 (0x38) and 1.125: ties to even.
            ("float8_e4m3", json!(1.0625), 0x38),
            ("float8_e4m3fnuz", json!(-1.0), 0xc0),
            ("float8_e8m0fnu", json!(0.25), 0x7d),
            ("float6_e2m3fn", json!(-7.5), 0x3f),
            ("float4_e2m1fn", json!(6), 0x07),
            ("float4_e2m1fn", json!("0x0a"), 0x0a),
            ("int4", json!(-8), 0xf8),
            ("int4", json!(7.0), 0x07),
            ("uint4", json!(15), 0x0f),
            ("int2", json!(-1), 0xff),
            ("uint2", json!(3), 0x03),
        ] {
            assert_eq!(
                fill(input.clone(), &t(name)).unwrap(),
                [bits],
                "{name} {input}"
            );
        }
        for (name, bad) in [
            ("float8_e4m3fnuz", json!("Infinity")),
            ("float8_e8m0fnu", json!("-Infinity")),
            ("float6_e3m2fn", json!("NaN")),
            ("float4_e2m1fn", json!("Infinity")),
            ("float8_e4m3", json!("0x7c00")),
            ("float8_e4m3", json!("0xg0")),
            ("float8_e4m3", json!("nan")),
            ("float8_e4m3", json!(true)),
            ("int4", json!(8)),
            ("int4", json!(-9)),
            ("uint4", json!(16)),
            ("uint2", json!(-1)),
            ("int2", json!(2)),
            ("int2", json!(0.5)),
        ] {
            let err = fill_value_from_json(&bad, &t(name))
                .unwrap_err()
                .to_string();
            assert!(err.contains(name), "{name} {bad}: {err}");
        }
    }

    #[test]
    fn small_type_fill_values_round_trip_in_their_canonical_form() {
        let t = |name| DataType::from_name(name).unwrap();
        for (name, input, canonical) in [
            ("float8_e4m3", json!("0x7c"), json!("NaN")),
            ("float8_e4m3", json!("0x7d"), json!("0x7d")),
            ("float8_e4m3", json!("0xf8"), json!("-Infinity")),
            ("float8_e4m3", json!(0.1), json!(0.1015625)),
            ("float8_e5m2fnuz", json!("0x80"), json!("NaN")),
            ("float8_e5m2fnuz", json!(-0.0), json!(0.0)),
            ("float8_e8m0fnu", json!(3.0), json!(4.0)),
            ("float6_e3m2fn", json!(1e9), json!(28.0)),
            ("float4_e2m1fn", json!("0xf2"), json!("0xf2")),
            ("int4", json!(-3), json!(-3)),
            ("uint2", json!(2), json!(2)),
        ] {
            let value = fill_value_from_json(&input, &t(name)).unwrap();
            assert_eq!(
                fill_value_to_json(&value, &t(name)),
                canonical,
                "{name} {input}"
            );
        }
        assert_eq!(
            data_type_to_json(&t("float8_e4m3b11fnuz")),
            json!("float8_e4m3b11fnuz")
        );
        assert_eq!(
            data_type_from_json(&json!({"name": "uint4"})).unwrap(),
            DataType::SmallInt(crate::metadata::SmallInt::UInt4)
        );
        // tensorstore's `float8_e4m3fn` is not the registered `float8_e4m3`.
        assert!(data_type_from_json(&json!("float8_e4m3fn")).is_err());
    }
}
