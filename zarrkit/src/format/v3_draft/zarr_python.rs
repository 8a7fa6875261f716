//! zarr-python 2.x's experimental v3 array documents
//! ([`ZarrFormat::V3Draft2019Json`](crate::format::ZarrFormat::V3Draft2019Json)) ↔
//! the internal model, through the v2 mapping.
//!
//! zarr-python 2.18 writes these documents from the same array description
//! as its v2 `.zarray` (`zarr/meta.py`, `Metadata3`): a NumPy `dtype`, one
//! numcodecs compressor, numcodecs `filters` (kept in `attributes.filters`),
//! C or F order and a fill value encoded as v2 encodes it. So a document is
//! turned into the `.zarray` it stands for and read by [`crate::format::v2`], which
//! gives every filter, compressor and data type v2 supports the same meaning
//! here, and written the other way round:
//!
//! | zarr-python 2.x v3 | v2 |
//! |---|---|
//! | `data_type` `"<i4"`, `"bool"`, `"u1"` | `dtype` `"<i4"`, `"\|b1"`, `"\|u1"` |
//! | `data_type` `{"extension": <complex URI>, "type": "<c8"}` | `"<c8"` |
//! | `data_type` `{"extension": <datetime URI>, "type": "<M8[ns]"}` | `"<M8[ns]"` |
//! | `data_type` `{"extension": "TODO: bytestring array protocol URL", "type": "\|S4"}` (also `unicode`, `structured`, whose fields may differ in byte order) | `"\|S4"`, `"<U3"`, `[["a", "<i4"], ["b", ">f8"]]` (see `numpy_types`) |
//! | `data_type` `{"extension": "TODO: object array protocol URL", "type": "\|O"}`, `attributes.filters` `[{"id": "vlen-utf8"}, …]` | `"\|O"` and its object codec first in `filters` (see `v2`) |
//! | `data_type` `{"extension": "http://purl.org/zarr/spec/extensions/string-dtypes/1.0", "type": ">U3"}` (and the drafts' other string, datetime and struct URIs; read, written back with zarr-python's placeholders) | `">U3"`, `"\|S7"`, … |
//! | `compressor` `{"codec": ".../codec/gzip/1.0", "configuration": {...}}` | `{"id": "gzip", ...}` |
//! | `attributes.filters` | `filters` |
//! | `chunk_memory_layout` | `order` |
//! | `chunk_grid.chunk_shape`, `.separator` | `chunks`, `dimension_separator` |
//! | `fill_value` (`null`: undefined, read as zero) | `fill_value` |
//!
//! The chunk keys are the drafts' `c`-prefixed ones, so the model's chunk key
//! encoding is `default` with the grid's separator; the sharding storage
//! transformer is handled by the caller.

use super as shared;
use super::draft2019::{CODECS, COMPLEX_EXTENSION, codec_short_name, numpy_name, numpy_type};
use super::dtypes;
use crate::format::{numpy_types, v2};
use crate::metadata::{
    ArrayMetadata, ChunkKeyEncoding, DataType, JsonMap, MetadataError, Separator,
};
use serde_json::Value;

/// The extension URI zarr-python 2.x gives `M8`/`m8` data types.
pub const DATETIME_EXTENSION: &str =
    "https://zarr-specs.readthedocs.io/en/latest/extensions/data-types/datetime/v1.0.html";

/// The URI prefix of zarr-python 2.x's codecs (`…/codec/gzip/1.0`).
const CODEC_URI_PREFIX: &str = "https://purl.org/zarr/spec/codec/";

/// The name of the format in messages.
const FORMAT: &str = "v3-draft-2019-json";

/// The extension URIs zarr-python 2.x writes for NumPy `S`, `U` and
/// structured types: placeholders, never replaced before the layout was
/// dropped (`zarr/meta.py`, `get_extended_dtype_info`).
pub const BYTES_EXTENSION: &str = "TODO: bytestring array protocol URL";
/// See [`BYTES_EXTENSION`].
pub const UNICODE_EXTENSION: &str = "TODO: unicode array protocol URL";
/// See [`BYTES_EXTENSION`].
pub const STRUCTURED_EXTENSION: &str = "TODO: structured array protocol URL";
/// See [`BYTES_EXTENSION`]: NumPy's `|O`, whose elements the object codec
/// first in `attributes.filters` serialises, as in v2.
pub const OBJECT_EXTENSION: &str = "TODO: object array protocol URL";

/// The v2 `dtype` of a zarr-python 2.x `data_type`.
fn dtype_from_json(value: &Value) -> Result<Value, MetadataError> {
    let unsupported = |name: String| MetadataError::UnsupportedExtension {
        point: "data type",
        name,
    };
    match value {
        // The core types: NumPy strings with their byte order, `bool`, `i1`
        // and `u1` without one.
        Value::String(s) => {
            let (data_type, big) = numpy_type(s).ok_or_else(|| unsupported(s.clone()))?;
            Ok(Value::String(v2::dtype_to_string(&data_type, big)))
        }
        Value::Object(object) => {
            let uri = shared::extension_uri(object);
            let type_value = || {
                object.get("type").ok_or(MetadataError::MissingField {
                    field: "data_type.type",
                })
            };
            let of_kind = |type_value: &Value| {
                MetadataError::invalid(
                    "data_type.type",
                    "a NumPy type of the extension's kind",
                    type_value,
                )
            };
            match uri.as_str() {
                // zarr-python 2.18 (`Metadata3.decode_dtype`) reads any
                // extension object by its `type` alone, so the string data
                // types extension (`seeds/v3-ext-string-dtypes-2022-03-02-
                // draft.rst`, read by the other drafts) means the same here
                // as its own placeholder (issue #9). `type` is `S7`/`|S7`,
                // `<U5`/`>U5`; the v2 spelling is NumPy's `dtype.str`.
                BYTES_EXTENSION
                | UNICODE_EXTENSION
                | dtypes::STRING_URI
                | dtypes::STRING_URI_2022_03 => {
                    let type_value = type_value()?;
                    let bytes_only = uri == BYTES_EXTENSION;
                    let unicode_only = uri == UNICODE_EXTENSION;
                    return match numpy_types::from_json(type_value, "data_type.type")? {
                        Some((data_type @ DataType::FixedBytes(_), _)) if !unicode_only => {
                            Ok(numpy_types::to_json(&data_type, false).unwrap_or_default())
                        }
                        Some((data_type @ DataType::FixedUtf32(_), big)) if !bytes_only => {
                            Ok(numpy_types::to_json(&data_type, big == Some(true))
                                .unwrap_or_default())
                        }
                        _ => Err(of_kind(type_value)),
                    };
                }
                // NumPy's `descr`, whose fields may each have their own byte
                // order, as zarr-python 2.18 writes `[["x", "<i4"], ["y",
                // ">f8"]]` (issue #9); v2 reads them through
                // `zarrkit.struct_bytes`.
                STRUCTURED_EXTENSION | dtypes::STRUCT_URI => {
                    let type_value = type_value()?;
                    if !type_value.is_array() {
                        return Err(of_kind(type_value));
                    }
                    return match v2::numpy_dtype_from_json_at(type_value, "data_type.type") {
                        Ok((DataType::Struct(_), _)) => Ok(type_value.clone()),
                        Ok(_) => Err(of_kind(type_value)),
                        Err(err) => Err(err),
                    };
                }
                // zarr-python 2.18 writes `|O` arrays (`vlen-utf8`,
                // `vlen-bytes`, `json2`, ... first in `attributes.filters`,
                // which become v2's `filters`) under this URI (issue #9).
                OBJECT_EXTENSION => {
                    let type_value = type_value()?;
                    return if type_value.as_str() == Some("|O") {
                        Ok(type_value.clone())
                    } else {
                        Err(of_kind(type_value))
                    };
                }
                _ => {}
            }
            let kind_ok: fn(&DataType) -> bool = match uri.as_str() {
                COMPLEX_EXTENSION => |d| matches!(d, DataType::Complex64 | DataType::Complex128),
                DATETIME_EXTENSION | dtypes::DATETIME_URI | dtypes::DATETIME_URI_2019 => |d| {
                    matches!(
                        d,
                        DataType::NumpyDateTime64 { .. } | DataType::NumpyTimeDelta64 { .. }
                    )
                },
                _ => return Err(unsupported(uri)),
            };
            let type_value = object.get("type").ok_or(MetadataError::MissingField {
                field: "data_type.type",
            })?;
            let expected = "a NumPy type string of the extension's kind";
            let text = type_value
                .as_str()
                .ok_or_else(|| MetadataError::invalid("data_type.type", expected, type_value))?;
            match v2::dtype_from_json(type_value) {
                Ok((data_type, _)) if kind_ok(&data_type) => Ok(Value::String(text.to_string())),
                _ => Err(MetadataError::invalid(
                    "data_type.type",
                    expected,
                    type_value,
                )),
            }
        }
        other => Err(MetadataError::invalid(
            "data_type",
            "a type string such as `\"<f8\"` or an extension data type object",
            other,
        )),
    }
}

/// The v2 compressor object of a zarr-python 2.x `compressor`.
fn compressor_from_json(value: Option<&Value>) -> Result<Value, MetadataError> {
    let object = match value {
        None | Some(Value::Null) => return Ok(Value::Null),
        Some(Value::Object(object)) => object,
        Some(other) => {
            return Err(MetadataError::invalid(
                "compressor",
                "a codec object or null",
                other,
            ));
        }
    };
    shared::check_compressor_members(object)?;
    let uri = match object.get("codec") {
        Some(Value::String(uri)) => uri,
        Some(other) => {
            return Err(MetadataError::invalid(
                "compressor.codec",
                "a codec URI",
                other,
            ));
        }
        None => {
            return Err(MetadataError::MissingField {
                field: "compressor.codec",
            });
        }
    };
    let name = codec_short_name(uri).ok_or_else(|| MetadataError::UnsupportedExtension {
        point: "codec",
        name: uri.clone(),
    })?;
    let mut v2 = JsonMap::new();
    v2.insert("id".into(), name.into());
    match object.get("configuration") {
        None => {}
        Some(Value::Object(configuration)) => {
            v2.extend(
                configuration
                    .iter()
                    .filter(|(k, _)| *k != "id")
                    .map(|(k, v)| (k.clone(), v.clone())),
            );
        }
        Some(other) => {
            return Err(MetadataError::invalid(
                "compressor.configuration",
                "an object",
                other,
            ));
        }
    }
    Ok(Value::Object(v2))
}

/// Parses a zarr-python 2.x array document whose fields were checked
/// against the known ones, without its storage transformers.
///
/// # Errors
/// A [`MetadataError`] naming the field (filters as v2 names them,
/// `filters[i]…`, which are in `attributes.filters` here).
pub(crate) fn array_from_json(doc: &JsonMap) -> Result<ArrayMetadata, MetadataError> {
    let shape = shared::shape_from_json(shared::required(doc, "shape")?)?;
    let dtype = dtype_from_json(shared::required(doc, "data_type")?)?;
    // zarr-python 2.18 writes the separator (default `/`).
    let (chunk_grid, separator) =
        shared::chunk_grid_from_json(shared::required(doc, "chunk_grid")?, Some(Separator::Slash))?;
    let f_order = shared::memory_layout_from_json(shared::required(doc, "chunk_memory_layout")?)?;
    // June 2019 draft: `null` means undefined; v2 reads it as zero (its
    // marker for writing `null` back is dropped below).
    let fill_value = shared::required(doc, "fill_value")?.clone();
    let compressor = compressor_from_json(doc.get("compressor"))?;
    let mut attributes = shared::attributes_from_json(doc)?;
    // zarr-python 2.x keeps the numcodecs filters among the attributes.
    let filters = attributes.remove("filters").unwrap_or(Value::Null);
    // The drafts have only regular grids: the parser above builds one.
    let chunks: Vec<u64> = chunk_grid
        .chunk_shape()
        .unwrap_or_default()
        .iter()
        .map(|n| n.get())
        .collect();
    let zarray = serde_json::json!({
        "zarr_format": 2,
        "shape": shape,
        "chunks": chunks,
        "dtype": dtype,
        "compressor": compressor,
        "fill_value": fill_value,
        "order": if f_order { "F" } else { "C" },
        "filters": filters,
        "dimension_separator": separator.as_char().to_string(),
    });
    let Value::Object(zarray) = zarray else {
        return Err(MetadataError::NotAnObject);
    };
    let mut array = numpy_types::parse_zarray(zarray, Some(attributes))?;
    array.chunk_key_encoding = ChunkKeyEncoding::Default { separator };
    array.extra_fields.remove(v2::NULL_FILL_VALUE_FIELD);
    Ok(array)
}

/// The zarr-python 2.x document of an array (without its storage
/// transformers and `extensions`).
///
/// # Errors
/// [`MetadataError::NotRepresentable`] or
/// [`MetadataError::UnsupportedExtension`] for what the layout cannot hold:
/// whatever v2 cannot hold, a compressor other than the seven zarr-python
/// 2.x names, a data type other than the core numeric, complex and datetime
/// types, and an attribute named `filters` (zarr-python would take it for
/// the filters).
pub(crate) fn array_to_json(array: &ArrayMetadata) -> Result<JsonMap, MetadataError> {
    if array.attributes.contains_key("filters") {
        return Err(MetadataError::NotRepresentable {
            format: FORMAT,
            what: "an attribute named `filters` (zarr-python 2.x keeps the filters there)".into(),
        });
    }
    let separator = array.chunk_key_encoding.separator();
    let mut as_v2 = array.clone();
    as_v2.chunk_key_encoding = ChunkKeyEncoding::V2 { separator };
    as_v2.extra_fields.clear();
    if numpy_types::is_numpy_string_or_struct(&array.data_type)
        && !numpy_types::is_representable(&array.data_type)
    {
        return Err(MetadataError::UnsupportedExtension {
            point: "data type in this format",
            name: array.data_type.name(),
        });
    }
    let mut zarray = numpy_types::zarray_of(&as_v2).map_err(|err| match err {
        MetadataError::NotRepresentable { what, .. } => MetadataError::NotRepresentable {
            format: FORMAT,
            what,
        },
        other => other,
    })?;
    let mut take = |key: &str| zarray.remove(key).unwrap_or(Value::Null);
    let dtype = take("dtype");
    let (compressor, filters, fill_value, order) = (
        take("compressor"),
        take("filters"),
        take("fill_value"),
        take("order"),
    );
    let dtype_text = dtype.as_str().unwrap_or_default();
    let numpy = |uri: &str| serde_json::json!({"extension": uri, "type": dtype, "fallback": null});
    let data_type = match &array.data_type {
        DataType::FixedBytes(_) => numpy(BYTES_EXTENSION),
        DataType::FixedUtf32(_) => numpy(UNICODE_EXTENSION),
        DataType::Struct(_) => numpy(STRUCTURED_EXTENSION),
        // v2 wrote `|O` and the object codec among the filters.
        DataType::String | DataType::Bytes | DataType::VlenArray(_) | DataType::Object
            if dtype_text == "|O" =>
        {
            numpy(OBJECT_EXTENSION)
        }
        DataType::Complex64 | DataType::Complex128 => serde_json::json!({
            "extension": COMPLEX_EXTENSION, "type": dtype_text, "fallback": null,
        }),
        DataType::NumpyDateTime64 { .. } | DataType::NumpyTimeDelta64 { .. } => serde_json::json!({
            "extension": DATETIME_EXTENSION, "type": dtype_text, "fallback": null,
        }),
        other => {
            let big = dtype_text.starts_with('>');
            Value::String(numpy_name(other, big).ok_or_else(|| {
                MetadataError::UnsupportedExtension {
                    point: "data type in this format",
                    name: other.name(),
                }
            })?)
        }
    };
    let mut doc = JsonMap::new();
    doc.insert("shape".into(), Value::from(array.shape.clone()));
    doc.insert("data_type".into(), data_type);
    doc.insert(
        "chunk_grid".into(),
        shared::chunk_grid_to_json(&array.chunk_grid, separator)?,
    );
    doc.insert("chunk_memory_layout".into(), order);
    if let Value::Object(mut compressor) = compressor {
        let id = compressor
            .remove("id")
            .and_then(|id| id.as_str().map(str::to_string))
            .unwrap_or_default();
        if !CODECS.contains(&id.as_str()) {
            return Err(MetadataError::UnsupportedExtension {
                point: "compressor in this format",
                name: id,
            });
        }
        doc.insert(
            "compressor".into(),
            serde_json::json!({"codec": format!("{CODEC_URI_PREFIX}{id}/1.0"), "configuration": compressor}),
        );
    }
    // zarr-python 2.x leaves `compressor` out when there is none.
    doc.insert("fill_value".into(), fill_value);
    let mut attributes = array.attributes.clone();
    if !filters.is_null() {
        attributes.insert("filters".into(), filters);
    }
    doc.insert("attributes".into(), Value::Object(attributes));
    Ok(doc)
}
