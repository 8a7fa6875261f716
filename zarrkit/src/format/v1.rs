//! Zarr v1: a store holding one array, described by `meta` and `attrs`.
//!
//! Spec: `seeds/v1-storage-spec.rst` ("Metadata", "Data type encoding",
//! "Chunks", "Attributes"). v1 has no hierarchy: the array is the store's
//! root, and only the path `/` exists. There are no groups; creating one,
//! or an array anywhere but `/`, is refused before anything is written.
//!
//! v1 is v2's ancestor, and most of its document means the same thing, so
//! this module reads a `meta` document by checking the v1 fields and
//! handing the equivalent `.zarray` to [`super::v2::parse_array`] (and
//! writes by rewriting [`super::v2::array_to_json`]'s document). The
//! mapping onto the model:
//!
//! | `meta` | model |
//! | --- | --- |
//! | `zarr_format` `1` | (checked) |
//! | `shape`, `chunks` | `shape`, a `regular` grid |
//! | `dtype` `"<i4"` | `int32`, and a `bytes` codec with `endian` `little` (as v2) |
//! | `order` `"F"` | a `transpose` codec with the reversed permutation before `bytes` (`"C"`: none) |
//! | `compression`, `compression_opts` | one bytes→bytes codec after `bytes` (below), or none for `"none"` |
//! | `fill_value` | `fill_value`, as v2 (`null` reads as zero and is written back as `null`) |
//! | other keys | `extra_fields`, written back as they were |
//! | `attrs` (must exist) | `attributes` |
//! | chunk `i.j` | the `v2` chunk key encoding with `.` |
//!
//! Data types: the fixed-size numeric NumPy type strings, as in v2 (`|b1`,
//! `|i1`…`>i8`, `|u1`…`>u8`, `<f2`…`>f8`, `<c8`, `>c16`, both byte orders).
//! Byte strings (`|S7`), Unicode strings (`<U5`, `>U5`) and structured
//! types (`[["r", "|u1"], ["g", "<U2"], ...]`, fields in any byte orders:
//! mixed ones go through `zarrkit.struct_bytes`, as in v2) are read and
//! written as the model's `FixedBytes`, `FixedUtf32` and `Struct` (see
//! `numpy_types`), with fill values as v2 writes them (base64 for `S`, `V`
//! and structures, the string for `U`). Raw bytes (`|V3`) are the model's
//! `r24`. Object arrays (`|O`) do not exist in v1 and are refused by name.
//!
//! Compression, as zarr 1.x named it, with its `compression_opts`:
//!
//! | `compression` | `compression_opts` | model codec |
//! | --- | --- | --- |
//! | `"none"` | ignored (zarr 1.x writes `null`) | none |
//! | `"zlib"` | level, an integer (`null`: 1) | `numcodecs.zlib` |
//! | `"bz2"` | level, an integer (`null`: 1) | `numcodecs.bz2` |
//! | `"lzma"` | a preset integer, or `{format, check, preset, filters}`, or `null` | `numcodecs.lzma` |
//! | `"blosc"` | `{cname, clevel, shuffle}` (shuffle 0, 1 or 2), or `null` | `blosc` |
//!
//! The model names are those of v2 (and of zarr-python 3.1's v3 metadata),
//! so a v1 array migrated to v2 or v3 keeps its chunks byte for byte. An
//! unknown `compression` is an error naming it; an option that the
//! compressor does not have is an error naming `compression_opts.<option>`.
//!
//! Fill values: as v2, including `null` and the bare `NaN`, `Infinity` and
//! `-Infinity` tokens that Python's `json` (and so zarr 1.x) writes; they
//! are written back as those bare tokens, as zarr 1.x writes them (not
//! strict JSON, but zarr-python 2.x's `migrate_1to2` passes the fill value
//! on as it finds it, and refuses the strings `"NaN"`).
//!
//! Chunk keys: the chunk indices joined by `.` ("Chunks"). The spec does
//! not say what a 0-d array's one chunk is called: joining no indices gives
//! the empty key, which is what zarr 1.1.0 reads and which no store can
//! hold, while zarr-python 2.x reads the key `0` after `migrate_1to2`.
//! zarrkit reads a 0-d chunk under `0` and refuses to write 0-d arrays,
//! naming them, as no key reads back the same everywhere.
//!
//! # F order and the zarr 1.x quirk
//!
//! The spec says an `"F"` chunk is laid out column-major, and zarrkit
//! follows it: F order reads and writes the chunk's bytes with the first
//! dimension varying fastest (a reversing `transpose`, as for v2). zarr 1.x
//! itself did so only for `blosc`: for its other compressors (`zlib`
//! notably) it compressed `ndarray.tobytes()`, which is C order whatever
//! the array's order, so F-order zlib arrays written by zarr 1.x read back
//! transposed within each chunk. The document does not say which writer
//! made it, so zarrkit does not guess; such a store can be read by opening
//! it with `order` changed to `"C"`.
//!
//! Writing is canonical and byte for byte as zarr 1.x writes: `meta` and
//! `attrs` as `json.dumps(d, indent=4, sort_keys=True, ensure_ascii=True)`
//! (ASCII only, as zarr 1.x decodes them; floats in Python's `repr`),
//! `compression_opts` spelled out. The model's
//! `extra_fields` are written back beside the v1 fields. A model that v1
//! cannot express (a codec other than those above, a second compressor,
//! a transpose other than F order, a `/` separator or the `default` chunk
//! key encoding, dimension names, storage transformers, a blosc
//! `blocksize`) is a [`MetadataError::NotRepresentable`] naming it.
//!
//! ```
//! use zarrkit::format::v1;
//! use zarrkit::metadata::DataType;
//!
//! let meta = br#"{"zarr_format": 1, "shape": [20, 20], "chunks": [10, 10],
//!     "dtype": "<i4", "compression": "zlib", "compression_opts": 1,
//!     "fill_value": 42, "order": "C"}"#;
//! let array = v1::parse_array(meta, Default::default())?;
//! assert_eq!(array.data_type, DataType::Int32);
//! assert_eq!(array.codecs[1].name, "numcodecs.zlib");
//! assert_eq!(array.chunk_key_encoding.encode(&[2, 4]), "2.4");
//! # Ok::<(), zarrkit::metadata::MetadataError>(())
//! ```

use super::{numpy_types, v2};
use crate::Error;
use crate::metadata::NodePath;
use crate::metadata::{
    ArrayMetadata, ChunkKeyEncoding, DataType, ExtensionObject, JsonMap, MetadataError,
    NodeMetadata, Separator,
};
use crate::store::{Store, StoreError, StoreKey, StorePrefix};
use serde_json::Value;

/// The key of the array's metadata document.
pub const META_KEY: &str = "meta";
/// The key of the array's attributes (it must exist, even if `{}`).
pub const ATTRIBUTES_KEY: &str = "attrs";

/// The fields of `meta` the spec requires ("Metadata": "The following keys
/// MUST be present"). Any other key is kept in `extra_fields`.
pub const META_FIELDS: &[&str] = &[
    "zarr_format",
    "shape",
    "chunks",
    "dtype",
    "compression",
    "compression_opts",
    "fill_value",
    "order",
];

/// The compressions of v1, as zarr 1.x names them.
pub const COMPRESSIONS: &[&str] = &["none", "zlib", "bz2", "lzma", "blosc"];

fn not_representable(what: impl Into<String>) -> MetadataError {
    MetadataError::NotRepresentable {
        format: "v1",
        what: what.into(),
    }
}

/// The error for anything but the root: v1 has no hierarchy.
#[must_use]
pub fn no_hierarchy(path: &NodePath) -> MetadataError {
    not_representable(format!(
        "the path `{path}` (v1 has no hierarchy: a v1 store is a single array at `/`)"
    ))
}

/// The error for a group: v1 has none.
#[must_use]
pub fn no_groups() -> MetadataError {
    not_representable("groups (v1 has no groups: a v1 store is a single array)")
}

/// Rewrites an error of the v2 helpers so that it speaks of v1: the
/// compressor's options are `compression_opts`, the extension points and
/// format are v1's.
fn as_v1_error(err: MetadataError) -> MetadataError {
    match err {
        MetadataError::InvalidField {
            field,
            expected,
            found,
        } => MetadataError::InvalidField {
            field: match field.strip_prefix("compressor") {
                Some(rest) => format!("compression_opts{rest}"),
                None => field,
            },
            expected,
            found,
        },
        MetadataError::UnsupportedExtension { point, name } => {
            MetadataError::UnsupportedExtension {
                point: match point {
                    "v2 data type" => "v1 data type",
                    "v2 compressor" => "v1 compression",
                    other => other,
                },
                name,
            }
        }
        MetadataError::NotRepresentable { what, .. } => {
            not_representable(what.replace("v2 has", "v1 has"))
        }
        other => other,
    }
}

/// Parses the `attrs` document: a JSON object.
///
/// # Errors
/// [`MetadataError::Json`] or [`MetadataError::NotAnObject`].
pub fn parse_attributes(bytes: &[u8]) -> Result<JsonMap, MetadataError> {
    v2::parse_attributes(bytes)
}

/// The data type of a v1 `dtype`: any fixed-size NumPy type (v1 "Data type
/// encoding": a typestr, or a structure as a list of `[name, typestr]`),
/// read as v2 reads it (structured fields in any byte orders); object
/// arrays (`|O`), which v1 does not have, are refused by name.
fn check_dtype(value: &Value) -> Result<DataType, MetadataError> {
    let (data_type, _) = v2::numpy_dtype_from_json(value).map_err(as_v1_error)?;
    if data_type.is_variable_length() {
        return Err(MetadataError::UnsupportedExtension {
            point: "v1 data type",
            name: compact_value(value),
        });
    }
    Ok(data_type)
}

fn compact_value(value: &Value) -> String {
    match value.as_str() {
        Some(text) => text.to_string(),
        None => value.to_string(),
    }
}

/// The v2 `compressor` object equivalent to v1's `compression` and
/// `compression_opts`.
fn compressor_from_v1(compression: &Value, opts: &Value) -> Result<Value, MetadataError> {
    let name = compression.as_str().ok_or_else(|| {
        MetadataError::invalid(
            "compression",
            "a string: `\"none\"`, `\"zlib\"`, `\"bz2\"`, `\"lzma\"` or `\"blosc\"`",
            compression,
        )
    })?;
    let mut compressor = JsonMap::new();
    match name {
        "none" => return Ok(Value::Null),
        "zlib" | "bz2" => match opts {
            Value::Null => {}
            Value::Number(n) if n.is_i64() => {
                compressor.insert("level".into(), opts.clone());
            }
            other => {
                return Err(MetadataError::invalid(
                    "compression_opts",
                    format!("an integer compression level (or null) for `{name}`"),
                    other,
                ));
            }
        },
        "lzma" => match opts {
            Value::Null => {}
            Value::Number(n) if n.is_u64() => {
                compressor.insert("preset".into(), opts.clone());
            }
            Value::Object(options) => compressor.extend(options.clone()),
            other => {
                return Err(MetadataError::invalid(
                    "compression_opts",
                    "a preset integer, an object of `format`, `check`, `preset`, `filters`, or null for `lzma`",
                    other,
                ));
            }
        },
        "blosc" => match opts {
            Value::Null => {}
            Value::Object(options) => {
                if let Some(shuffle) = options.get("shuffle")
                    && !matches!(shuffle.as_i64(), Some(0..=2))
                {
                    return Err(MetadataError::invalid(
                        "compression_opts.shuffle",
                        "0, 1 or 2",
                        shuffle,
                    ));
                }
                compressor.extend(options.clone());
            }
            other => {
                return Err(MetadataError::invalid(
                    "compression_opts",
                    "an object of `cname`, `clevel`, `shuffle`, or null for `blosc`",
                    other,
                ));
            }
        },
        other => {
            return Err(MetadataError::UnsupportedExtension {
                point: "v1 compression",
                name: other.to_string(),
            });
        }
    }
    compressor.insert("id".into(), name.into());
    Ok(Value::Object(compressor))
}

/// Parses a `meta` document, with the attributes of `attrs`.
///
/// # Errors
/// A [`MetadataError`] naming the field at fault: a missing required field,
/// a field of the wrong type, `zarr_format` other than 1, an unsupported
/// `dtype` or `compression`, an option `compression_opts` does not have.
pub fn parse_array(bytes: &[u8], attributes: JsonMap) -> Result<ArrayMetadata, MetadataError> {
    let value: Value =
        serde_json::from_slice(&v2::quote_non_finite_tokens(bytes)).map_err(MetadataError::Json)?;
    let Value::Object(doc) = value else {
        return Err(MetadataError::NotAnObject);
    };
    for &field in META_FIELDS {
        if !doc.contains_key(field) {
            return Err(MetadataError::MissingField { field });
        }
    }
    // Spec "Metadata": zarr_format is "an integer defining the version".
    if doc["zarr_format"].as_u64() != Some(1) {
        return Err(MetadataError::ZarrFormat {
            expected: "1",
            found: doc["zarr_format"].to_string(),
        });
    }
    check_dtype(&doc["dtype"])?;
    let compressor = compressor_from_v1(&doc["compression"], &doc["compression_opts"])?;
    let mut zarray = JsonMap::new();
    zarray.insert("zarr_format".into(), 2.into());
    for field in ["shape", "chunks", "dtype", "fill_value", "order"] {
        zarray.insert(field.into(), doc[field].clone());
    }
    zarray.insert("compressor".into(), compressor);
    zarray.insert("filters".into(), Value::Null);
    // Spec "Chunks": "concatenated with the period character ('.')".
    zarray.insert("dimension_separator".into(), ".".into());
    let mut array = numpy_types::parse_zarray(zarray, Some(attributes)).map_err(as_v1_error)?;
    // Spec "Metadata": "Other keys MAY be present"; they are kept.
    for (key, value) in doc {
        if !META_FIELDS.contains(&key.as_str()) {
            array.extra_fields.insert(key, value);
        }
    }
    Ok(array)
}

/// The `meta` document of an array (its attributes go to `attrs`).
///
/// # Errors
/// [`MetadataError::NotRepresentable`] naming what v1 cannot hold: a codec
/// other than an F-order `transpose`, `bytes` and one of the v1
/// compressors; a blosc `blocksize`; a chunk key encoding other than `v2`
/// with `.`; dimension names; storage transformers; a data type v1 does not
/// have in this version.
pub fn array_to_json(array: &ArrayMetadata) -> Result<Value, MetadataError> {
    match &array.chunk_key_encoding {
        ChunkKeyEncoding::V2 {
            separator: Separator::Dot,
        } => {}
        other => {
            return Err(not_representable(format!(
                "the `{}` chunk key encoding with `{}` (v1 chunk keys are `i.j`: use `v2` with `.`)",
                other.name(),
                other.separator().as_char()
            )));
        }
    }
    let raw = matches!(array.data_type, DataType::RawBits(_));
    // NumPy's datetimes are typestrs too (`<M8[ns]`), which zarr 1.x writes.
    let datetime = matches!(
        array.data_type,
        DataType::NumpyDateTime64 { .. } | DataType::NumpyTimeDelta64 { .. }
    );
    if !raw
        && ((array.data_type.is_extension()
            && !datetime
            && !numpy_types::is_numpy_string_or_struct(&array.data_type))
            || !numpy_types::is_representable(&array.data_type))
    {
        return Err(not_representable(format!(
            "the data type `{}` in this version",
            array.data_type
        )));
    }
    let mut zarray = numpy_types::zarray_of(array).map_err(as_v1_error)?;
    let (compression, opts) = match zarray.remove("compressor") {
        None | Some(Value::Null) => ("none", Value::Null),
        Some(Value::Object(mut compressor)) => {
            let id = compressor
                .remove("id")
                .and_then(|id| id.as_str().map(str::to_string))
                .unwrap_or_default();
            match id.as_str() {
                "zlib" | "bz2" => {
                    let level = compressor.remove("level").unwrap_or(Value::Null);
                    (if id == "zlib" { "zlib" } else { "bz2" }, level)
                }
                "lzma" => ("lzma", Value::Object(compressor)),
                "blosc" => {
                    match compressor.remove("blocksize") {
                        None => {}
                        Some(b) if b.as_u64() == Some(0) => {}
                        Some(b) => {
                            return Err(not_representable(format!(
                                "the blosc `blocksize` {b} (v1 blosc has no blocksize)"
                            )));
                        }
                    }
                    ("blosc", Value::Object(compressor))
                }
                other => {
                    let model = array.codecs.last().map_or("", |c| c.name.as_str());
                    return Err(not_representable(format!(
                        "the codec `{model}` (v1 compression is one of none, zlib, bz2, lzma, blosc; not `{other}`)"
                    )));
                }
            }
        }
        Some(other) => {
            return Err(not_representable(format!("the compressor `{other}`")));
        }
    };
    zarray.remove("filters");
    zarray.remove("dimension_separator");
    let mut fields: Vec<(String, Value)> = Vec::new();
    for (key, value) in zarray {
        let value = if key == "zarr_format" {
            1.into()
        } else {
            value
        };
        fields.push((key, value));
    }
    fields.push(("compression".into(), compression.into()));
    fields.push(("compression_opts".into(), opts));
    for (key, value) in &array.extra_fields {
        // The v2 null-fill marker is named `fill_value`, a v1 field: the
        // document's own `fill_value` already says it.
        if !META_FIELDS.contains(&key.as_str()) {
            fields.push((key.clone(), value.clone()));
        }
    }
    // Keys sorted, as zarr 1.x writes them.
    fields.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Value::Object(fields.into_iter().collect()))
}

/// The `meta` document of a node, as [`crate::format::write_node`] stores it.
///
/// # Errors
/// [`MetadataError::NotRepresentable`] for a group (v1 has none) or for
/// what [`array_to_json`] refuses.
pub fn serialize_node(metadata: &NodeMetadata) -> Result<Vec<u8>, MetadataError> {
    match metadata {
        NodeMetadata::Array(array) => {
            check_dimensions(array)?;
            Ok(to_bytes(&array_to_json(array)?, array.data_type.is_float()))
        }
        NodeMetadata::Group(_) => Err(no_groups()),
    }
}

/// A 0-d array has no v1 chunk key any store can hold: spec "Chunks" joins
/// the chunk's indices with `.`, which for no indices is the empty key.
/// zarr 1.1.0 does exactly that (`'.'.join(map(str, ()))`), so its
/// `DirectoryStore` cannot write the chunk (the key is the directory itself)
/// and reads the fill value, while zarr-python 2.x, after
/// `migrate_1to2`, reads the key `0`. No key reads back the same in both,
/// so 0-d arrays are refused rather than written under a key one of them
/// does not read.
fn check_dimensions(array: &ArrayMetadata) -> Result<(), MetadataError> {
    if array.shape.is_empty() {
        return Err(not_representable(
            "a 0-d array (its one chunk's v1 key, no indices joined by `.`, is the empty \
             string, which no store holds: zarr 1.x reads it as missing)",
        ));
    }
    Ok(())
}

/// A v1 document as zarr 1.x writes `meta` and `attrs` (`zarr/meta.py`,
/// `zarr/attrs.py` of zarr 1.1.0): `json.dumps(d, indent=4, sort_keys=True,
/// ensure_ascii=True)`, so ASCII only, every other character escaped as
/// `\uXXXX` (zarr 1.x and zarr-python 2.x's `migrate_1to2` decode both
/// documents as ASCII, and refuse anything else). With `non_finite_fill`,
/// a `fill_value` of `"NaN"`, `"Infinity"` or `"-Infinity"` is written as
/// the bare token Python's `json` writes for a non-finite float.
fn to_bytes(document: &Value, non_finite_fill: bool) -> Vec<u8> {
    let writer = crate::metadata::python_json::PythonJson {
        ensure_ascii: true,
        sort_keys: true,
        item_separator: ",",
        key_separator: ": ",
        indent: Some(4),
        bare_non_finite_under: non_finite_fill.then_some("fill_value"),
    };
    let mut text = String::new();
    writer.write(document, &mut text);
    text.into_bytes()
}

/// Checks that a node at `path` can be written in v1: only at the root.
///
/// # Errors
/// [`MetadataError::NotRepresentable`] naming the path.
pub fn check_path(path: &NodePath) -> Result<(), MetadataError> {
    if path.is_root() {
        Ok(())
    } else {
        Err(no_hierarchy(path))
    }
}

fn root_key(name: &str) -> Result<StoreKey, Error> {
    Ok(StoreKey::new(name)?)
}

/// Zarr v1 in the dispatch of [`super::version`]: one array at the root,
/// `meta` and `attrs`.
pub(crate) struct V1;

impl super::Version for V1 {
    /// v1 "Storage": a store holds one array, its `meta` and `attrs` at the root.
    fn is_document_key(&self, key: &StoreKey) -> bool {
        [META_KEY, ATTRIBUTES_KEY].contains(&key.as_str())
    }

    fn node_prefix(&self, path: &NodePath) -> StorePrefix {
        path.to_prefix()
    }

    fn metadata_key(&self, path: &NodePath) -> Result<StoreKey, StoreError> {
        path.to_prefix().key(META_KEY)
    }

    /// v1 "Chunks": the indices joined by `.`.
    fn default_chunk_key_encoding(&self) -> ChunkKeyEncoding {
        ChunkKeyEncoding::V2 {
            separator: Separator::Dot,
        }
    }

    /// zarr 1.x's default compression, `blosc` (`lz4`, level 5, byte
    /// shuffle); without the `blosc` feature, uncompressed (v1 has no
    /// `zstd`, the builder's default).
    fn default_codecs(&self, data_type: &DataType) -> Option<Vec<ExtensionObject>> {
        let mut bytes = JsonMap::new();
        if data_type.endian_unit() > 1 {
            bytes.insert("endian".into(), "little".into());
        }
        let mut codecs = vec![ExtensionObject::with_configuration("bytes", bytes)];
        if cfg!(feature = "blosc") {
            let mut blosc = JsonMap::new();
            blosc.insert("cname".into(), "lz4".into());
            blosc.insert("clevel".into(), 5.into());
            blosc.insert("shuffle".into(), "shuffle".into());
            blosc.insert("typesize".into(), data_type.size().into());
            blosc.insert("blocksize".into(), 0.into());
            codecs.push(ExtensionObject::with_configuration("blosc", blosc));
        }
        Some(codecs)
    }

    /// Reads the v1 array of the store: `Ok(None)` at any path but the root,
    /// or when there is no `meta`.
    ///
    /// # Errors
    /// [`Error::Metadata`] naming `meta` for an invalid document, or naming
    /// `attrs` when it is missing or invalid (spec "Attributes": "the 'attrs'
    /// key MUST be present"); a store error.
    fn read_node(&self, store: &dyn Store, path: &NodePath) -> Result<Option<NodeMetadata>, Error> {
        if !path.is_root() {
            return Ok(None);
        }
        let meta_key = root_key(META_KEY)?;
        let Some(meta) = store.get(&meta_key, None)? else {
            return Ok(None);
        };
        let attributes_key = root_key(ATTRIBUTES_KEY)?;
        let attributes = match store.get(&attributes_key, None)? {
            None => {
                return Err(Error::Metadata {
                    key: attributes_key,
                    source: MetadataError::Inconsistent(format!(
                        "a v1 array store must have an `{ATTRIBUTES_KEY}` key beside `{META_KEY}`, even if its attributes are `{{}}`"
                    )),
                });
            }
            Some(bytes) => parse_attributes(&bytes).map_err(|source| Error::Metadata {
                key: attributes_key,
                source,
            })?,
        };
        let array = parse_array(&meta, attributes).map_err(|source| Error::Metadata {
            key: meta_key,
            source,
        })?;
        Ok(Some(NodeMetadata::Array(array)))
    }

    fn serialize_node(&self, metadata: &NodeMetadata) -> Result<Vec<u8>, MetadataError> {
        serialize_node(metadata)
    }

    /// v1 has no hierarchy: only the root exists.
    fn check_path(&self, path: &NodePath) -> Result<(), MetadataError> {
        check_path(path)
    }

    /// Writes `attrs` and `meta` for the array at the root.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] for a non-root path, a group, or what v1
    /// cannot represent (nothing is written then); a store error.
    fn write_node(
        &self,
        store: &dyn Store,
        path: &NodePath,
        metadata: &NodeMetadata,
        mode: super::WriteMode,
    ) -> Result<bool, Error> {
        let invalid = |source| Error::InvalidMetadata {
            path: path.clone(),
            source,
        };
        check_path(path).map_err(invalid)?;
        let meta = serialize_node(metadata).map_err(invalid)?;
        let NodeMetadata::Array(array) = metadata else {
            return Err(invalid(no_groups()));
        };
        super::put_node_with_attributes(
            store,
            (&root_key(META_KEY)?, &meta),
            (
                &root_key(ATTRIBUTES_KEY)?,
                &to_bytes(&v2::attributes_to_json(&array.attributes), false),
            ),
            mode,
        )
    }

    /// None: v1 has no hierarchy (a v1 array is the only node).
    fn children(&self, _store: &dyn Store, _path: &NodePath) -> Result<Vec<NodePath>, Error> {
        Ok(Vec::new())
    }

    /// Erases the v1 array, which is the whole store.
    ///
    /// # Errors
    /// [`Error::NodeNotFound`] unless `path` is the root and `meta` exists, or
    /// a store error.
    fn erase_node(&self, store: &dyn Store, path: &NodePath) -> Result<(), Error> {
        if !path.is_root() || store.size(&StoreKey::new(META_KEY)?)?.is_none() {
            return Err(Error::NodeNotFound { path: path.clone() });
        }
        store.erase_prefix(&crate::store::StorePrefix::root())?;
        Ok(())
    }

    /// Each document under its key: `meta` and `attrs` (a group, which v1
    /// does not have, gives its node document's error).
    fn node_document(&self, metadata: &NodeMetadata) -> Result<Value, MetadataError> {
        match metadata {
            NodeMetadata::Array(array) => Ok(serde_json::json!({
                META_KEY: array_to_json(array)?,
                ATTRIBUTES_KEY: &array.attributes,
            })),
            NodeMetadata::Group(_) => {
                let bytes = serialize_node(metadata)?;
                serde_json::from_slice(&bytes).map_err(MetadataError::Json)
            }
        }
    }

    /// `dtype`, `order`, and `compression` with `compression_opts`.
    fn display_facts(&self, array: &ArrayMetadata) -> Vec<(String, String)> {
        let Ok(document) = array_to_json(array) else {
            return Vec::new();
        };
        let mut facts: Vec<(String, String)> = ["dtype", "order"]
            .into_iter()
            .map(|field| (format!("v1 {field}"), document[field].to_string()))
            .collect();
        facts.push((
            "v1 compression".to_string(),
            format!(
                "{}, compression_opts {}",
                document["compression"], document["compression_opts"]
            ),
        ));
        facts
    }

    fn has_groups(&self) -> bool {
        false
    }

    fn holds_mixed_byte_order_structs(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn meta(overrides: Value) -> Vec<u8> {
        let mut doc = json!({
            "zarr_format": 1, "shape": [20, 20], "chunks": [10, 10], "dtype": "<i4",
            "compression": "zlib", "compression_opts": 1, "fill_value": 42, "order": "C",
        });
        for (key, value) in overrides.as_object().unwrap() {
            if value == "__remove__" {
                doc.as_object_mut().unwrap().remove(key);
            } else {
                doc[key] = value.clone();
            }
        }
        serde_json::to_vec(&doc).unwrap()
    }

    fn parse(overrides: Value) -> Result<ArrayMetadata, MetadataError> {
        parse_array(&meta(overrides), JsonMap::new())
    }

    #[test]
    fn the_spec_example_maps_onto_the_model() {
        // Spec "Example": shape (20, 20), chunks (10, 10), '<i4', fill 42, zlib 1.
        let array = parse(json!({})).unwrap();
        assert_eq!(array.shape, [20, 20]);
        assert_eq!(array.data_type, DataType::Int32);
        assert_eq!(array.fill_value.as_bytes(), 42i32.to_ne_bytes());
        assert_eq!(array.codecs.len(), 2);
        assert_eq!(array.codecs[0].name, "bytes");
        assert_eq!(array.codecs[0].configuration_or_empty()["endian"], "little");
        assert_eq!(array.codecs[1].name, "numcodecs.zlib");
        assert_eq!(array.codecs[1].configuration_or_empty()["level"], 1);
        assert_eq!(array.chunk_key_encoding.encode(&[2, 4]), "2.4");
        assert!(array.extra_fields.is_empty());
        // And back, byte for byte the same fields.
        assert_eq!(
            array_to_json(&array).unwrap(),
            serde_json::from_slice::<Value>(&meta(json!({}))).unwrap()
        );
    }

    #[test]
    fn every_compression_and_its_options_round_trip() {
        for (compression, opts, name, configuration) in [
            ("none", json!(null), None, json!(null)),
            (
                "zlib",
                json!(5),
                Some("numcodecs.zlib"),
                json!({"level": 5}),
            ),
            ("bz2", json!(9), Some("numcodecs.bz2"), json!({"level": 9})),
            (
                "lzma",
                json!({"format": 1, "check": 0, "preset": 1, "filters": null}),
                Some("numcodecs.lzma"),
                json!({"format": 1, "check": 0, "preset": 1}),
            ),
            (
                "blosc",
                json!({"cname": "zstd", "clevel": 3, "shuffle": 2}),
                Some("blosc"),
                json!({"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0}),
            ),
            (
                "blosc",
                json!({"cname": "lz4", "clevel": 5, "shuffle": 0}),
                Some("blosc"),
                json!({"cname": "lz4", "clevel": 5, "shuffle": "noshuffle", "typesize": 4, "blocksize": 0}),
            ),
        ] {
            let array =
                parse(json!({"compression": compression, "compression_opts": opts})).unwrap();
            match name {
                None => assert_eq!(array.codecs.len(), 1, "{compression}"),
                Some(name) => {
                    assert_eq!(array.codecs[1].name, name, "{compression}");
                    assert_eq!(
                        Value::Object(array.codecs[1].configuration_or_empty()),
                        configuration
                    );
                }
            }
            let back = array_to_json(&array).unwrap();
            assert_eq!(back["compression"], compression);
            assert_eq!(back["compression_opts"], opts, "{compression}");
        }
        // An lzma preset alone is the preset.
        let preset = parse(json!({"compression": "lzma", "compression_opts": 4})).unwrap();
        assert_eq!(preset.codecs[1].configuration_or_empty()["preset"], 4);
        // null options take the compressor's defaults.
        let blosc = parse(json!({"compression": "blosc", "compression_opts": null})).unwrap();
        assert_eq!(blosc.codecs[1].configuration_or_empty()["cname"], "lz4");
    }

    #[test]
    fn bad_documents_are_errors_naming_the_key() {
        for (overrides, needle) in [
            (json!({"zarr_format": 2}), "`zarr_format` `2`"),
            (json!({"zarr_format": "__remove__"}), "`zarr_format`"),
            (json!({"shape": "__remove__"}), "`shape`"),
            (json!({"chunks": "__remove__"}), "`chunks`"),
            (json!({"dtype": "__remove__"}), "`dtype`"),
            (json!({"compression": "__remove__"}), "`compression`"),
            (
                json!({"compression_opts": "__remove__"}),
                "`compression_opts`",
            ),
            (json!({"fill_value": "__remove__"}), "`fill_value`"),
            (json!({"order": "__remove__"}), "`order`"),
            (json!({"shape": "20"}), "`shape`"),
            (json!({"chunks": [10]}), "`chunks`"),
            (json!({"dtype": 4}), "`dtype`"),
            (json!({"order": "K"}), "`order`"),
            (json!({"compression": 3}), "`compression`"),
            (json!({"compression": "snappy"}), "v1 compression `snappy`"),
            (json!({"compression_opts": "fast"}), "`compression_opts`"),
            (
                json!({"compression": "blosc", "compression_opts": {"cname": "lz4", "shuffle": 3}}),
                "`compression_opts.shuffle`",
            ),
            (
                json!({"compression": "blosc", "compression_opts": {"speed": 1}}),
                "`compression_opts.speed`",
            ),
            (
                json!({"compression": "lzma", "compression_opts": "x"}),
                "`compression_opts`",
            ),
            (json!({"fill_value": "x"}), "fill value `\"x\"`"),
        ] {
            let err = parse(overrides.clone()).unwrap_err();
            assert!(err.to_string().contains(needle), "{overrides}: {err}");
        }
        assert!(matches!(
            parse_array(b"[1]", JsonMap::new()),
            Err(MetadataError::NotAnObject)
        ));
        assert!(matches!(
            parse_array(b"{", JsonMap::new()),
            Err(MetadataError::Json(_))
        ));
    }

    #[test]
    fn string_and_structured_types_map_onto_the_model() {
        for (dtype, data_type) in [
            (json!("|S7"), DataType::FixedBytes(7)),
            (json!("<U5"), DataType::FixedUtf32(20)),
            (
                json!([["r", "|u1"], ["g", "|u1"]]),
                DataType::Struct(vec![
                    crate::metadata::StructField::new("r", DataType::UInt8),
                    crate::metadata::StructField::new("g", DataType::UInt8),
                ]),
            ),
        ] {
            let array = parse(json!({"dtype": dtype, "fill_value": null})).unwrap();
            assert_eq!(array.data_type, data_type, "{dtype}");
        }
    }

    #[test]
    fn unsupported_data_types_are_refused_by_name() {
        let err = parse(json!({"dtype": "|O", "fill_value": null})).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("unsupported") && text.contains("data type") && text.contains("`|O`"),
            "{text}"
        );
        let raw = parse(json!({"dtype": "|V3", "fill_value": null})).unwrap();
        assert_eq!(raw.data_type, DataType::RawBits(24));
    }

    #[test]
    fn fill_values_null_and_bare_non_finite_tokens() {
        let nan = parse_array(
            br#"{"zarr_format": 1, "shape": [3], "chunks": [2], "dtype": ">f8",
                "compression": "none", "compression_opts": null, "fill_value": NaN,
                "order": "C"}"#,
            JsonMap::new(),
        )
        .unwrap();
        assert!(f64::from_ne_bytes(nan.fill_value.as_bytes().try_into().unwrap()).is_nan());
        assert_eq!(nan.codecs[0].configuration_or_empty()["endian"], "big");
        for (token, expected) in [
            ("Infinity", f32::INFINITY),
            ("-Infinity", f32::NEG_INFINITY),
        ] {
            let text = format!(
                r#"{{"zarr_format": 1, "shape": [3], "chunks": [2], "dtype": "<f4",
                "compression": "none", "compression_opts": null, "fill_value": {token},
                "order": "C"}}"#
            );
            let array = parse_array(text.as_bytes(), JsonMap::new()).unwrap();
            assert_eq!(array.fill_value.as_bytes(), expected.to_ne_bytes());
            assert_eq!(array_to_json(&array).unwrap()["fill_value"], token);
        }
        let null = parse(json!({"fill_value": null})).unwrap();
        assert_eq!(null.fill_value.as_bytes(), [0; 4]);
        assert_eq!(array_to_json(&null).unwrap()["fill_value"], Value::Null);
        let boolean = parse(json!({"dtype": "|b1", "fill_value": true})).unwrap();
        assert_eq!(boolean.fill_value.as_bytes(), [1]);
    }

    #[test]
    fn extra_keys_are_kept_and_written_back() {
        let array =
            parse(json!({"creator": {"name": "zarr", "version": "1.1.0"}, "filters": 7})).unwrap();
        assert_eq!(
            array.extra_fields["creator"],
            json!({"name": "zarr", "version": "1.1.0"})
        );
        let back = array_to_json(&array).unwrap();
        assert_eq!(back["creator"], json!({"name": "zarr", "version": "1.1.0"}));
        assert_eq!(back["filters"], 7);
        let keys: Vec<&String> = back.as_object().unwrap().keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted, "keys are written sorted");
    }

    #[test]
    fn f_order_is_a_reversing_transpose() {
        let array = parse(json!({"order": "F", "shape": [4, 5, 6], "chunks": [2, 2, 2]})).unwrap();
        assert_eq!(array.codecs[0].name, "transpose");
        assert_eq!(
            array.codecs[0].configuration_or_empty()["order"],
            json!([2, 1, 0])
        );
        assert_eq!(array_to_json(&array).unwrap()["order"], "F");
        let scalar = parse(json!({"shape": [], "chunks": []})).unwrap();
        assert_eq!(scalar.chunk_key_encoding.encode(&[]), "0");
    }

    #[test]
    fn what_v1_cannot_hold_is_an_error_naming_it() {
        let array = parse(json!({})).unwrap();
        let mut gzip = array.clone();
        gzip.codecs[1] = crate::metadata::ExtensionObject::new("gzip");
        let err = array_to_json(&gzip).unwrap_err().to_string();
        assert!(
            err.starts_with("Zarr v1 cannot represent") && err.contains("`gzip`"),
            "{err}"
        );
        let mut slash = array.clone();
        slash.chunk_key_encoding = ChunkKeyEncoding::V2 {
            separator: Separator::Slash,
        };
        assert!(
            array_to_json(&slash)
                .unwrap_err()
                .to_string()
                .contains("`/`")
        );
        let mut named = array.clone();
        named.dimension_names = Some(vec![None, None]);
        assert!(
            array_to_json(&named)
                .unwrap_err()
                .to_string()
                .contains("`dimension_names`")
        );
        let mut two = array;
        two.codecs
            .push(crate::metadata::ExtensionObject::new("crc32c"));
        let err = array_to_json(&two).unwrap_err().to_string();
        assert!(err.contains("v1 has one compressor"), "{err}");
        let group = NodeMetadata::Group(crate::metadata::GroupMetadata {
            attributes: JsonMap::new(),
            extra_fields: JsonMap::new(),
        });
        assert!(
            serialize_node(&group)
                .unwrap_err()
                .to_string()
                .contains("v1 has no groups")
        );
        let path = NodePath::new("/a").unwrap();
        assert!(check_path(&path).unwrap_err().to_string().contains("`/a`"));
    }

    #[test]
    fn documents_are_written_as_zarr_1_json_dumps_writes_them() {
        // zarr 1.1.0, `json.dumps(meta, indent=4, sort_keys=True,
        // ensure_ascii=True)` of this array (run by hand, Python 3.11).
        let array = parse(json!({
            "shape": [10], "chunks": [4], "dtype": "<f8", "fill_value": "NaN",
            "compression": "zlib", "compression_opts": 1,
        }))
        .unwrap();
        let text = String::from_utf8(serialize_node(&NodeMetadata::Array(array)).unwrap()).unwrap();
        assert_eq!(
            text,
            "{\n    \"chunks\": [\n        4\n    ],\n    \"compression\": \"zlib\",\n    \
             \"compression_opts\": 1,\n    \"dtype\": \"<f8\",\n    \"fill_value\": NaN,\n    \
             \"order\": \"C\",\n    \"shape\": [\n        10\n    ],\n    \"zarr_format\": 1\n}"
        );
        // A string fill value that spells a token stays a string for a
        // string type.
        let text_fill = parse(json!({"dtype": "<U3", "fill_value": "NaN"})).unwrap();
        let text = serialize_node(&NodeMetadata::Array(text_fill)).unwrap();
        assert!(
            String::from_utf8(text)
                .unwrap()
                .contains("\"fill_value\": \"NaN\"")
        );
        // Non-ASCII escaped, UTF-16 surrogates beyond the BMP, empty
        // containers as `{}` and `[]`.
        let store = crate::store::MemoryStore::new();
        let mut attributes = JsonMap::new();
        attributes.insert("name".into(), "Zürich 🌍".into());
        attributes.insert("empty".into(), json!({"a": [], "b": {}}));
        let mut array = parse(json!({})).unwrap();
        array.attributes = attributes;
        crate::format::Version::write_node(
            &V1,
            &store,
            &NodePath::root(),
            &NodeMetadata::Array(array),
            crate::format::WriteMode::Replace,
        )
        .unwrap();
        let attrs = store
            .get(&StoreKey::new(ATTRIBUTES_KEY).unwrap(), None)
            .unwrap()
            .unwrap();
        assert_eq!(
            String::from_utf8(attrs).unwrap(),
            "{\n    \"empty\": {\n        \"a\": [],\n        \"b\": {}\n    },\n    \
             \"name\": \"Z\\u00fcrich \\ud83c\\udf0d\"\n}"
        );
    }

    #[test]
    fn zero_dimensional_arrays_are_refused_by_name() {
        let scalar = parse(json!({"shape": [], "chunks": []})).unwrap();
        let err = serialize_node(&NodeMetadata::Array(scalar))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a 0-d array") && err.contains("empty"),
            "{err}"
        );
    }

    proptest! {
        #[test]
        fn random_documents_never_panic(text in "[\\[\\]{}\",:0-9a-zA-Z<>|. -]{0,80}") {
            let _ = parse_array(text.as_bytes(), JsonMap::new());
        }

        #[test]
        fn random_field_values_never_panic(
            field in prop::sample::select(META_FIELDS.to_vec()),
            value in prop_oneof![
                Just(json!(null)),
                any::<i64>().prop_map(Value::from),
                any::<f64>().prop_map(Value::from),
                "[a-zA-Z<>|0-9]{0,6}".prop_map(Value::from),
                prop::collection::vec(any::<i32>(), 0..4).prop_map(Value::from),
                Just(json!({"shuffle": "x"})),
                Just(json!({})),
            ],
            compression in prop::sample::select(COMPRESSIONS.to_vec()),
        ) {
            let mut doc: Value = serde_json::from_slice(&meta(json!({"compression": compression})))?;
            doc[field] = value;
            let _ = parse_array(doc.to_string().as_bytes(), JsonMap::new());
        }
    }
}
