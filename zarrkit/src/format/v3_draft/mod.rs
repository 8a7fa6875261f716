//! What the v3 drafts share: the entry point (`zarr.json`) and which draft
//! it names, the key layout of metadata documents and chunks (`meta/…`,
//! `data/…`), finding, listing and erasing nodes, node names, and the
//! document fields the drafts spell alike (shape, chunk grid, memory
//! layout, codecs and compressors, attributes, extensions). Used by
//! [`draft2022`] (the 25 May 2022 draft) and [`draft2019`] (the June 2019
//! draft, its early version and zarr-python 2.x's layout); each cites its
//! draft's text where it follows one.
//!
//! The drafts' modules, all here:
//!
//! - [`draft2022`]: the 25 May 2022 draft (public as `format::v3_draft2022`);
//! - [`draft2019`]: the June 2019 draft, the early 2019 draft and
//!   zarr-python 2.x's `meta/root` layout (public as `format::v3_draft2019`);
//! - `zarr_python`: zarr-python 2.x's array documents, through the v2 mapping;
//! - [`dtypes`]: the drafts' extension data types and their `fallback`
//!   (public as `format::draft_dtypes`);
//! - `sharding`: the drafts' sharding storage transformer.

use crate::Error;
use crate::metadata::{
    ArrayMetadata, ChunkGrid, DataType, ExtensionObject, JsonMap, MetadataError, Separator,
};
use crate::metadata::{NodePath, NodePathError};
use crate::store::{Store, StoreError, StoreKey, StorePrefix};
use serde_json::Value;

pub mod draft2019;
pub mod draft2022;
pub mod dtypes;
mod sharding;
mod zarr_python;

/// The `zarr_format` of the 2022 draft's entry point.
pub const ZARR_FORMAT: &str = "https://purl.org/zarr/spec/core/3.0";

/// The key of the entry point document (all draft layouts).
pub const ENTRY_POINT_KEY: &str = "zarr.json";

/// Whether `key` is a document of a draft hierarchy: the entry point, or
/// anything under `meta/` (node documents, and zarr-python 2.x's
/// consolidated metadata); chunks are under `data/`.
pub(crate) fn is_document_key(key: &StoreKey) -> bool {
    key.as_str() == ENTRY_POINT_KEY || key.as_str().starts_with("meta/")
}

/// The metadata key suffix when the entry point does not say otherwise.
pub const DEFAULT_SUFFIX: &str = ".json";

// ---------------------------------------------------------------------------
// The entry point, the key layout, the hierarchy.
// ---------------------------------------------------------------------------

/// What the root `zarr.json` of a store says about the draft formats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum EntryPoint {
    /// There is no `zarr.json` at the root.
    Absent,
    /// `zarr.json` is not a draft entry point (a final v3 node, for example).
    NotDraft,
    /// The 2022 draft, with its metadata key suffix.
    Draft2022 {
        /// `metadata_encoding.metadata_key_suffix`.
        suffix: String,
    },
    /// A 2019 draft; a non-empty suffix is zarr-python 2.x's json-suffixed layout.
    Draft2019 {
        /// `metadata_key_suffix`, empty when absent.
        suffix: String,
        /// Whether `zarr_format` is the early draft's `http` URI, which
        /// zarrkit writes for early-draft hierarchies (the June draft and
        /// zarr-python write `https`).
        early: bool,
    },
}

/// The URIs the 2019 drafts' `zarr_format` may have: the June 2019 text and
/// zarr-python 2.x write `https`, the early 2019 text `http`.
pub(crate) const ZARR_FORMAT_2019: &[&str] = &[
    "https://purl.org/zarr/spec/protocol/core/3.0",
    "http://purl.org/zarr/spec/protocol/core/3.0",
];

/// Reads and checks the root `zarr.json` as a draft entry point.
///
/// # Errors
/// [`Error::Metadata`] naming `zarr.json` for a draft entry point that is
/// malformed, has an unknown must-understand extension or an unknown
/// `zarr_format` URI; a store error.
pub(crate) fn read_entry_point(store: &dyn Store) -> Result<EntryPoint, Error> {
    let key = StoreKey::new(ENTRY_POINT_KEY)?;
    let Some(bytes) = store.get(&key, None)? else {
        return Ok(EntryPoint::Absent);
    };
    let Ok(Value::Object(doc)) = serde_json::from_slice::<Value>(&bytes) else {
        return Ok(EntryPoint::NotDraft);
    };
    let Some(Value::String(zarr_format)) = doc.get("zarr_format") else {
        return Ok(EntryPoint::NotDraft);
    };
    let entry_point = if zarr_format == ZARR_FORMAT {
        entry_point_2022(&doc)
    } else if ZARR_FORMAT_2019.contains(&zarr_format.as_str()) {
        entry_point_2019(&doc, zarr_format.starts_with("http:"))
    } else {
        Err(MetadataError::ZarrFormat {
            expected: "a Zarr v3 draft URI",
            found: zarr_format.clone(),
        })
    };
    entry_point.map_err(|source| Error::Metadata { key, source })
}

/// Whether the store's root `zarr.json` may be a draft's entry point:
/// `false` where there is none or its `zarr_format` is not a string (a
/// final v3 document has the number 3), so that no draft holds a node and
/// probing them can stop here. Only `zarr_format` is parsed; a document it
/// cannot tell about is left to [`read_entry_point`] (`true`).
///
/// # Errors
/// A store error.
pub(crate) fn may_have_entry_point(store: &dyn Store) -> Result<bool, Error> {
    /// The one field looked at; the others are skipped unparsed.
    #[derive(serde::Deserialize)]
    struct ZarrFormatOnly {
        zarr_format: Option<Value>,
    }
    let key = StoreKey::new(ENTRY_POINT_KEY)?;
    let Some(bytes) = store.get(&key, None)? else {
        return Ok(false);
    };
    Ok(match serde_json::from_slice::<ZarrFormatOnly>(&bytes) {
        Ok(document) => matches!(document.zarr_format, Some(Value::String(_))),
        Err(_) => true,
    })
}

/// 2022 draft, "Entry point metadata".
fn entry_point_2022(doc: &JsonMap) -> Result<EntryPoint, MetadataError> {
    let encoding = doc
        .get("metadata_encoding")
        .ok_or(MetadataError::MissingField {
            field: "metadata_encoding",
        })?;
    let Value::Object(encoding) = encoding else {
        return Err(MetadataError::invalid(
            "metadata_encoding",
            "an object",
            encoding,
        ));
    };
    if let Some(extension) = encoding.get("extension") {
        return Err(MetadataError::UnsupportedExtension {
            point: "metadata encoding",
            name: extension
                .as_str()
                .map_or_else(|| extension.to_string(), str::to_string),
        });
    }
    match encoding.get("type") {
        Some(Value::String(t)) if t == "json" => {}
        Some(other) => {
            return Err(MetadataError::invalid(
                "metadata_encoding.type",
                "`\"json\"`",
                other,
            ));
        }
        None => {
            return Err(MetadataError::MissingField {
                field: "metadata_encoding.type",
            });
        }
    }
    let suffix = match encoding.get("metadata_key_suffix") {
        None => DEFAULT_SUFFIX.to_string(),
        Some(value) => suffix_from_json(value, "metadata_encoding.metadata_key_suffix")?,
    };
    check_extensions(doc.get("extensions"), "extensions")?;
    Ok(EntryPoint::Draft2022 { suffix })
}

/// June 2019 draft, "Bootstrap metadata", and zarr-python 2.x's variant
/// (whose `metadata_encoding` is the protocol URI and which adds
/// `metadata_key_suffix`).
fn entry_point_2019(doc: &JsonMap, early: bool) -> Result<EntryPoint, MetadataError> {
    match doc.get("metadata_encoding") {
        // The early 2019 draft has no bootstrap document; zarrkit writes the
        // June one for it, so an absent encoding is tolerated.
        None => {}
        Some(Value::String(s))
            if s == "application/json" || ZARR_FORMAT_2019.contains(&s.as_str()) => {}
        Some(other) => {
            return Err(MetadataError::UnsupportedExtension {
                point: "metadata encoding",
                name: other
                    .as_str()
                    .map_or_else(|| other.to_string(), str::to_string),
            });
        }
    }
    let suffix = match doc.get("metadata_key_suffix") {
        None => String::new(),
        Some(value) => suffix_from_json(value, "metadata_key_suffix")?,
    };
    check_extensions(doc.get("extensions"), "extensions")?;
    Ok(EntryPoint::Draft2019 { suffix, early })
}

fn suffix_from_json(value: &Value, field: &str) -> Result<String, MetadataError> {
    let expected = "a string of the characters `a-z`, `A-Z`, `0-9`, `-`, `_` and `.`";
    let suffix = value
        .as_str()
        .ok_or_else(|| MetadataError::invalid(field, expected, value))?;
    if !suffix.chars().all(is_name_char) {
        return Err(MetadataError::invalid(field, expected, value));
    }
    Ok(suffix.to_string())
}

/// Checks an `extensions` list (all drafts): every member is an object with
/// a string `extension` and a boolean `must_understand`; one that must be
/// understood stops processing (none is known), the others are returned so
/// they can be kept.
///
/// # Errors
/// [`MetadataError::UnsupportedExtension`] naming the URI of a
/// must-understand extension; [`MetadataError::InvalidField`] for a
/// malformed list.
pub(crate) fn check_extensions(
    value: Option<&Value>,
    field: &str,
) -> Result<Vec<Value>, MetadataError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let items = value
        .as_array()
        .ok_or_else(|| MetadataError::invalid(field, "an array of extension objects", value))?;
    let mut kept = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let uri = item
            .get("extension")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                MetadataError::invalid(
                    format!("{field}[{i}].extension"),
                    "a URI string",
                    item.get("extension").unwrap_or(item),
                )
            })?;
        match item.get("must_understand") {
            Some(Value::Bool(false)) => kept.push(item.clone()),
            Some(Value::Bool(true)) => {
                return Err(MetadataError::UnsupportedExtension {
                    point: "extension",
                    name: uri.to_string(),
                });
            }
            Some(other) => {
                return Err(MetadataError::invalid(
                    format!("{field}[{i}].must_understand"),
                    "`true` or `false`",
                    other,
                ));
            }
            None => {
                return Err(MetadataError::invalid(
                    format!("{field}[{i}]"),
                    "an extension object with `must_understand`",
                    item,
                ));
            }
        }
    }
    Ok(kept)
}

/// The key layout of a draft hierarchy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DraftKeys {
    /// `meta` (2022) or `meta/root` (2019).
    pub meta: &'static str,
    /// `data` (2022, June and early 2019) or `data/root` (zarr-python 2.x).
    pub data: &'static str,
    /// The metadata key suffix, such as `.json` or nothing.
    pub suffix: String,
    /// Whether the root's documents are `meta/array…` (2022) rather than
    /// `meta/root.array…` (2019).
    pub root_in_meta: bool,
}

/// The two kinds of node document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DocKind {
    /// `….array`.
    Array,
    /// `….group`.
    Group,
}

impl DocKind {
    fn word(self) -> &'static str {
        match self {
            Self::Array => "array",
            Self::Group => "group",
        }
    }
}

impl DraftKeys {
    /// The 2022 layout with `suffix`.
    pub fn draft2022(suffix: String) -> Self {
        Self {
            meta: "meta",
            data: "data",
            suffix,
            root_in_meta: true,
        }
    }

    /// How the key of a document of `kind` ends: `.array` or `.group`,
    /// then the metadata key suffix (`.array.json`).
    pub fn doc_ending(&self, kind: DocKind) -> String {
        format!(".{}{}", kind.word(), self.suffix)
    }

    /// The key of the document of `kind` for the node at `path`.
    pub fn doc_key(&self, path: &NodePath, kind: DocKind) -> Result<StoreKey, StoreError> {
        let (meta, ending) = (self.meta, self.doc_ending(kind));
        StoreKey::new(if path.is_root() {
            if self.root_in_meta {
                // 2022 draft, "Storage keys": `meta/group.json`, `meta/array.json`.
                format!("{meta}/{}{}", kind.word(), self.suffix)
            } else {
                // June 2019 draft, "Storage keys": `meta/root.group`.
                format!("{meta}{ending}")
            }
        } else {
            format!("{meta}{path}{ending}")
        })
    }

    /// The prefix under which every node document lies, `meta/` (2022 draft
    /// and 2019 drafts, "Storage keys").
    pub fn documents_prefix(&self) -> StorePrefix {
        let top = self.meta.split('/').next().unwrap_or(self.meta);
        // `meta` is one of this module's constants, a valid prefix.
        StorePrefix::root()
            .child(top)
            .unwrap_or_else(|_| StorePrefix::root())
    }

    /// The prefix under which the documents of the node's descendants lie.
    pub fn children_prefix(&self, path: &NodePath) -> Result<StorePrefix, StoreError> {
        StorePrefix::new(if path.is_root() {
            format!("{}/", self.meta)
        } else {
            format!("{}{path}/", self.meta)
        })
    }

    /// The prefix under which an array's chunks lie.
    pub fn data_prefix(&self, path: &NodePath) -> StorePrefix {
        let text = if path.is_root() {
            format!("{}/", self.data)
        } else {
            format!("{}{path}/", self.data)
        };
        // Node names were validated, so the prefix is valid.
        StorePrefix::new(text).unwrap_or_else(|_| StorePrefix::root())
    }
}

/// What is stored for a node in a draft layout.
#[derive(Debug)]
pub(crate) enum Found {
    /// A document of `kind` under `key`.
    Document(DocKind, StoreKey, Vec<u8>),
    /// No document, but something below: an implicit group.
    Implicit,
}

/// Finds the node at `path` (2022 draft, "Determine if a node exists"): the
/// array document, then the group document, then anything under the node's
/// children prefix, which makes an implicit group. The root always exists
/// in a store that has an entry point.
///
/// # Errors
/// A store error (a store that cannot list finds no implicit groups).
pub(crate) fn find_node(
    store: &dyn Store,
    keys: &DraftKeys,
    path: &NodePath,
) -> Result<Option<Found>, Error> {
    for kind in [DocKind::Array, DocKind::Group] {
        let key = keys.doc_key(path, kind)?;
        if let Some(bytes) = store.get(&key, None)? {
            return Ok(Some(Found::Document(kind, key, bytes)));
        }
    }
    if path.is_root() {
        return Ok(Some(Found::Implicit));
    }
    match store.list_dir(&keys.children_prefix(path)?) {
        Ok(listing) if !listing.keys.is_empty() || !listing.prefixes.is_empty() => {
            Ok(Some(Found::Implicit))
        }
        Ok(_) | Err(StoreError::Unsupported { .. }) => Ok(None),
        Err(other) => Err(other.into()),
    }
}

/// The children of the group at `path` (2022 draft, "Discover children of a
/// group"): keys ending in `.array<suffix>` or `.group<suffix>` and
/// prefixes (implicit groups) under the node's children prefix, by name,
/// each once. Names that are not valid node paths are skipped.
///
/// # Errors
/// A store error, including a store that cannot list.
pub(crate) fn list_children(
    store: &dyn Store,
    keys: &DraftKeys,
    path: &NodePath,
) -> Result<Vec<NodePath>, Error> {
    let prefix = keys.children_prefix(path)?;
    let listing = store.list_dir(&prefix)?;
    let mut names = std::collections::BTreeSet::new();
    for key in &listing.keys {
        let rest = &key.as_str()[prefix.as_str().len()..];
        for kind in [DocKind::Array, DocKind::Group] {
            if let Some(name) = rest.strip_suffix(&keys.doc_ending(kind)) {
                names.insert(name.to_string());
            }
        }
    }
    for child in &listing.prefixes {
        let name = child.as_str()[prefix.as_str().len()..].trim_end_matches('/');
        names.insert(name.to_string());
    }
    Ok(names
        .into_iter()
        .filter(|name| !name.is_empty())
        .filter_map(|name| path.child(&name).ok())
        .collect())
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// Checks the node names of `path` against a draft's rules: only `a-z`,
/// `A-Z`, `0-9`, `-`, `_` and `.` (not only periods, which [`NodePath`]
/// already refuses), and at most `max_len` characters where the draft says so.
///
/// # Errors
/// [`NodePathError`] naming the rule.
pub(crate) fn check_names(path: &NodePath, max_len: Option<usize>) -> Result<(), NodePathError> {
    for name in path.as_str().split('/').filter(|n| !n.is_empty()) {
        if !name.chars().all(is_name_char) {
            return Err(NodePathError {
                path: path.to_string(),
                reason: "the v3 drafts allow only `a-z`, `A-Z`, `0-9`, `-`, `_` and `.` in names",
            });
        }
        if max_len.is_some_and(|max| name.len() > max) {
            return Err(NodePathError {
                path: path.to_string(),
                reason: "the 2019 v3 drafts limit names to 255 characters",
            });
        }
    }
    Ok(())
}

/// A `transpose` codec that reverses `ndim` dimensions: the model's form of
/// `chunk_memory_layout` `"F"`. `None` when it would do nothing (fewer than
/// two dimensions).
pub(crate) fn f_order_transpose(ndim: usize) -> Option<ExtensionObject> {
    if ndim < 2 {
        return None;
    }
    let order: Vec<Value> = (0..ndim).rev().map(Value::from).collect();
    let mut configuration = JsonMap::new();
    configuration.insert("order".into(), Value::Array(order));
    Some(ExtensionObject::with_configuration(
        "transpose",
        configuration,
    ))
}

/// Whether `codec` is the `transpose` that [`f_order_transpose`] makes.
pub(crate) fn is_f_order_transpose(codec: &ExtensionObject, ndim: usize) -> bool {
    if codec.name != "transpose" || ndim < 2 {
        return false;
    }
    match codec.configuration.as_ref().and_then(|c| c.get("order")) {
        Some(Value::String(s)) => s == "F",
        Some(Value::Array(order)) => order
            .iter()
            .map(Value::as_u64)
            .eq((0..ndim as u64).rev().map(Some)),
        _ => false,
    }
}

/// Parses `chunk_memory_layout`: `"C"` gives `false`, `"F"` gives `true`.
pub(crate) fn memory_layout_from_json(value: &Value) -> Result<bool, MetadataError> {
    match value {
        Value::String(s) if s == "C" => Ok(false),
        Value::String(s) if s == "F" => Ok(true),
        Value::Object(object) if object.contains_key("extension") => {
            Err(MetadataError::UnsupportedExtension {
                point: "chunk memory layout",
                name: extension_uri(object),
            })
        }
        other => Err(MetadataError::invalid(
            "chunk_memory_layout",
            "`\"C\"` or `\"F\"`",
            other,
        )),
    }
}

/// The `extension` URI of an extension object, for messages.
pub(crate) fn extension_uri(object: &JsonMap) -> String {
    match object.get("extension") {
        Some(Value::String(uri)) => uri.clone(),
        Some(other) => other.to_string(),
        None => Value::Object(object.clone()).to_string(),
    }
}

/// Parses a draft `chunk_grid`: `{"type": "regular", "chunk_shape": [...],
/// "separator": "/" | "."}`. `default_separator` is used when the separator
/// is absent, and `None` makes it required.
pub(crate) fn chunk_grid_from_json(
    value: &Value,
    default_separator: Option<Separator>,
) -> Result<(ChunkGrid, Separator), MetadataError> {
    let Value::Object(grid) = value else {
        return Err(MetadataError::invalid(
            "chunk_grid",
            "an object with `type` and `chunk_shape`",
            value,
        ));
    };
    if grid.contains_key("extension") {
        return Err(MetadataError::UnsupportedExtension {
            point: "chunk grid",
            name: extension_uri(grid),
        });
    }
    match grid.get("type") {
        Some(Value::String(t)) if t == "regular" => {}
        Some(other) => {
            return Err(MetadataError::invalid(
                "chunk_grid.type",
                "`\"regular\"`",
                other,
            ));
        }
        None => {
            return Err(MetadataError::MissingField {
                field: "chunk_grid.type",
            });
        }
    }
    let chunk_shape = grid.get("chunk_shape").ok_or(MetadataError::MissingField {
        field: "chunk_grid.chunk_shape",
    })?;
    let lengths = super::v3::positive_lengths(chunk_shape, "chunk_grid.chunk_shape")?;
    let separator = match (grid.get("separator"), default_separator) {
        (Some(value), _) => value
            .as_str()
            .and_then(Separator::from_str_opt)
            .ok_or_else(|| {
                MetadataError::invalid("chunk_grid.separator", "`\"/\"` or `\".\"`", value)
            })?,
        (None, Some(default)) => default,
        (None, None) => {
            return Err(MetadataError::MissingField {
                field: "chunk_grid.separator",
            });
        }
    };
    if let Some((key, other)) = grid
        .iter()
        .find(|(k, _)| !["type", "chunk_shape", "separator"].contains(&k.as_str()))
    {
        return Err(MetadataError::invalid(
            format!("chunk_grid.{key}"),
            "no member other than `type`, `chunk_shape` and `separator`",
            other,
        ));
    }
    Ok((ChunkGrid::regular(&lengths)?, separator))
}

/// The draft `chunk_grid` of a grid and separator.
///
/// # Errors
/// [`MetadataError::UnsupportedExtension`] for a grid other than `regular`:
/// the drafts define no other.
pub(crate) fn chunk_grid_to_json(
    grid: &ChunkGrid,
    separator: Separator,
) -> Result<Value, MetadataError> {
    let lengths: Vec<u64> = grid
        .chunk_shape()
        .ok_or_else(|| MetadataError::UnsupportedExtension {
            point: "chunk grid in this format",
            name: grid.name().to_string(),
        })?
        .iter()
        .map(|n| n.get())
        .collect();
    Ok(serde_json::json!({
        "type": "regular",
        "chunk_shape": lengths,
        "separator": separator.as_char().to_string(),
    }))
}

/// Parses `shape` (all drafts, as v3).
pub(crate) fn shape_from_json(value: &Value) -> Result<Vec<u64>, MetadataError> {
    let expected = "an array of non-negative integers";
    value
        .as_array()
        .ok_or_else(|| MetadataError::invalid("shape", expected, value))?
        .iter()
        .map(|n| {
            n.as_u64()
                .ok_or_else(|| MetadataError::invalid("shape", expected, value))
        })
        .collect()
}

/// Parses `attributes`, which may be absent.
pub(crate) fn attributes_from_json(doc: &JsonMap) -> Result<JsonMap, MetadataError> {
    match doc.get("attributes") {
        None => Ok(JsonMap::new()),
        Some(Value::Object(attributes)) => Ok(attributes.clone()),
        Some(other) => Err(MetadataError::invalid("attributes", "an object", other)),
    }
}

/// The first field of `doc` not in `known`, as an error.
/// Refuses a member of a 2019 draft's `compressor` object other than `codec`
/// and `configuration` (June 2019 draft, "Array metadata"; zarr-python 2.x
/// writes the same), naming it.
///
/// # Errors
/// [`MetadataError::InvalidField`] naming `compressor.<member>`.
pub(crate) fn check_compressor_members(object: &JsonMap) -> Result<(), MetadataError> {
    if let Some((key, other)) = object
        .iter()
        .find(|(k, _)| !["codec", "configuration"].contains(&k.as_str()))
    {
        return Err(MetadataError::invalid(
            format!("compressor.{key}"),
            "no member other than `codec` and `configuration`",
            other,
        ));
    }
    Ok(())
}

/// The `extensions` of a draft array document: the ones read with it (kept
/// in the model's extra fields), else none.
pub(crate) fn extensions_to_json(array: &ArrayMetadata) -> Value {
    array
        .extra_fields
        .get("extensions")
        .cloned()
        .unwrap_or_else(|| Value::Array(Vec::new()))
}

pub(crate) fn reject_unknown_fields(doc: &JsonMap, known: &[&str]) -> Result<(), MetadataError> {
    match doc.keys().find(|k| !known.contains(&k.as_str())) {
        Some(field) => Err(MetadataError::UnknownField {
            field: field.clone(),
        }),
        None => Ok(()),
    }
}

pub(crate) fn required<'a>(
    doc: &'a JsonMap,
    field: &'static str,
) -> Result<&'a Value, MetadataError> {
    doc.get(field).ok_or(MetadataError::MissingField { field })
}

/// A `bytes` codec: little endian unless `big`, and no `endian` at all for
/// data types without byte order.
pub(crate) fn bytes_codec(data_type: &DataType, big: bool) -> ExtensionObject {
    let mut configuration = JsonMap::new();
    if data_type.endian_unit() > 1 {
        configuration.insert(
            "endian".into(),
            Value::from(if big { "big" } else { "little" }),
        );
    }
    ExtensionObject::with_configuration("bytes", configuration)
}

/// Whether a `bytes` codec writes big endian.
pub(crate) fn bytes_is_big(codec: &ExtensionObject) -> bool {
    codec
        .configuration
        .as_ref()
        .and_then(|c| c.get("endian"))
        .and_then(Value::as_str)
        == Some("big")
}

/// The blosc `shuffle` names by the integer the drafts (and numcodecs) use.
const BLOSC_SHUFFLES: &[(i64, &str)] = &[(0, "noshuffle"), (1, "shuffle"), (2, "bitshuffle")];

/// A bytes-to-bytes codec of a draft (given by its short name, such as
/// `gzip`, and its draft configuration) as a model codec. Blosc's integer
/// `shuffle` becomes its name (`-1`, automatic, is bit shuffling for 1-byte
/// elements and byte shuffling otherwise, as in c-blosc and numcodecs) and its
/// `typesize` is the element size; the other codecs keep their configuration.
pub(crate) fn compressor_from_draft(
    name: &str,
    mut configuration: JsonMap,
    data_type: &DataType,
    field: &str,
) -> Result<ExtensionObject, MetadataError> {
    if name == "blosc" {
        let shuffle = configuration.get("shuffle").cloned();
        let value = match &shuffle {
            None => "noshuffle",
            Some(value) => match value.as_i64() {
                Some(-1) if data_type.size() == 1 => "bitshuffle",
                Some(-1) => "shuffle",
                Some(n) => BLOSC_SHUFFLES
                    .iter()
                    .find(|(i, _)| *i == n)
                    .map(|(_, s)| *s)
                    .ok_or_else(|| {
                        MetadataError::invalid(format!("{field}.shuffle"), "-1, 0, 1 or 2", value)
                    })?,
                None => {
                    return Err(MetadataError::invalid(
                        format!("{field}.shuffle"),
                        "-1, 0, 1 or 2",
                        value,
                    ));
                }
            },
        };
        configuration.insert("shuffle".into(), Value::from(value));
        configuration.insert("typesize".into(), Value::from(data_type.size()));
        configuration
            .entry("blocksize")
            .or_insert_with(|| Value::from(0));
    }
    // The numcodecs compressors without a v3 codec of their own have the
    // names zarr-python 3.1 gives them (and the v2 format uses).
    let name = match name {
        "zlib" | "bz2" | "lzma" | "lz4" => format!("numcodecs.{name}"),
        other => other.to_string(),
    };
    Ok(ExtensionObject::with_configuration(name, configuration))
}

/// A model bytes-to-bytes codec as a draft short name and configuration
/// (the reverse of [`compressor_from_draft`]); `known` lists the short names
/// the draft can name.
pub(crate) fn compressor_to_draft(
    codec: &ExtensionObject,
    known: &[&str],
) -> Result<(String, JsonMap), MetadataError> {
    let short = codec.name.strip_prefix("numcodecs.").unwrap_or(&codec.name);
    if !known.contains(&short) {
        return Err(MetadataError::UnsupportedExtension {
            point: "codec in this format",
            name: codec.name.clone(),
        });
    }
    let mut configuration = codec.configuration_or_empty();
    if codec.name == "blosc" {
        let shuffle = configuration
            .get("shuffle")
            .and_then(Value::as_str)
            .and_then(|s| BLOSC_SHUFFLES.iter().find(|(_, name)| *name == s))
            .map_or(0, |(i, _)| *i);
        configuration.insert("shuffle".into(), Value::from(shuffle));
        configuration.remove("typesize");
    }
    Ok((short.to_string(), configuration))
}

/// The model codecs from a draft's parts: the F-order transpose, the other
/// array-to-array codecs, the `bytes` codec and the bytes-to-bytes codecs.
pub(crate) fn assemble_codecs(
    f_order: bool,
    ndim: usize,
    array_to_array: Vec<ExtensionObject>,
    bytes: ExtensionObject,
    bytes_to_bytes: Vec<ExtensionObject>,
) -> Vec<ExtensionObject> {
    let mut codecs = Vec::new();
    if f_order {
        codecs.extend(f_order_transpose(ndim));
    }
    codecs.extend(array_to_array);
    codecs.push(bytes);
    codecs.extend(bytes_to_bytes);
    codecs
}

/// The model codecs split into the draft's parts: whether the first is the
/// F-order transpose, the other array-to-array codecs (`transpose` only),
/// the `bytes` codec and the bytes-to-bytes codecs.
pub(crate) struct SplitCodecs<'a> {
    pub f_order: bool,
    pub array_to_array: Vec<&'a ExtensionObject>,
    pub bytes: Option<&'a ExtensionObject>,
    pub bytes_to_bytes: Vec<&'a ExtensionObject>,
}

pub(crate) fn split_codecs(codecs: &[ExtensionObject], ndim: usize) -> SplitCodecs<'_> {
    let mut split = SplitCodecs {
        f_order: false,
        array_to_array: Vec::new(),
        bytes: None,
        bytes_to_bytes: Vec::new(),
    };
    let mut rest = codecs;
    if let Some(first) = codecs.first()
        && is_f_order_transpose(first, ndim)
    {
        split.f_order = true;
        rest = &codecs[1..];
    }
    for codec in rest {
        if split.bytes.is_none() && (codec.name == "bytes" || codec.name == "endian") {
            split.bytes = Some(codec);
        } else if split.bytes.is_none() {
            split.array_to_array.push(codec);
        } else {
            split.bytes_to_bytes.push(codec);
        }
    }
    split
}

/// Writes `bytes` under the document key of `kind` for the node at `path`
/// (see [`crate::format::put_node_document`]); returns whether it wrote.
pub(crate) fn put_document(
    store: &dyn Store,
    keys: &DraftKeys,
    path: &NodePath,
    kind: DocKind,
    bytes: &[u8],
    mode: crate::format::WriteMode,
) -> Result<bool, Error> {
    crate::format::put_node_document(store, &keys.doc_key(path, kind)?, bytes, mode)
}

/// Erases the node at `path` in a draft layout and everything below it
/// (2022 draft, "Erase an array" and "Erase a group": every key under
/// `meta/<path>` and `data/<path>`): both its possible documents, the
/// prefix of its descendants' documents and the prefix of its chunks. The
/// prefixes end in `/`, so a sibling whose name only starts with the node's
/// (`ab` beside `a`) keeps its keys. Erasing the root erases the entry point
/// too, so nothing of the hierarchy is left.
///
/// # Errors
/// [`Error::NodeNotFound`] when neither a document nor anything below the
/// node exists; a store error.
pub(crate) fn erase_found(
    store: &dyn Store,
    keys: &DraftKeys,
    path: &NodePath,
) -> Result<(), Error> {
    if find_node(store, keys, path)?.is_none() {
        return Err(Error::NodeNotFound { path: path.clone() });
    }
    store.erase_values(&[
        keys.doc_key(path, DocKind::Array)?,
        keys.doc_key(path, DocKind::Group)?,
    ])?;
    store.erase_prefix(&keys.children_prefix(path)?)?;
    store.erase_prefix(&keys.data_prefix(path))?;
    if path.is_root() {
        store.erase(&StoreKey::new(ENTRY_POINT_KEY)?)?;
    }
    Ok(())
}

/// The error for writing a draft node into a store whose entry point is of
/// another format.
pub(crate) fn wrong_entry_point(
    expected: &'static str,
    found: &EntryPoint,
) -> Result<Error, Error> {
    let found = match found {
        EntryPoint::Absent => "no entry point".to_string(),
        EntryPoint::NotDraft => "a document that is not a v3 draft entry point".to_string(),
        EntryPoint::Draft2022 { .. } => format!("`{ZARR_FORMAT}`"),
        EntryPoint::Draft2019 { suffix, .. } if suffix.is_empty() => {
            "a 2019 draft entry point".to_string()
        }
        EntryPoint::Draft2019 { suffix, .. } => {
            format!("a 2019 draft entry point with metadata key suffix `{suffix}`")
        }
    };
    Ok(Error::Metadata {
        key: StoreKey::new(ENTRY_POINT_KEY)?,
        source: MetadataError::ZarrFormat { expected, found },
    })
}

/// Refuses what no draft can say: dimension names, storage transformers
/// and fields other than kept `extensions`.
pub(crate) fn check_representable(array: &ArrayMetadata) -> Result<(), MetadataError> {
    if array.chunk_grid.chunk_shape().is_none() {
        return Err(MetadataError::UnsupportedExtension {
            point: "chunk grid in this format",
            name: array.chunk_grid.name().to_string(),
        });
    }
    if array.dimension_names.is_some() {
        return Err(MetadataError::UnsupportedExtension {
            point: "field in this format",
            name: "dimension_names".into(),
        });
    }
    if let Some(transformer) = array.storage_transformers.first() {
        return Err(MetadataError::UnsupportedExtension {
            point: "storage transformer in this format",
            name: transformer.name.clone(),
        });
    }
    if let Some(field) = array.extra_fields.keys().find(|k| *k != "extensions") {
        return Err(MetadataError::UnsupportedExtension {
            point: "field in this format",
            name: field.clone(),
        });
    }
    Ok(())
}
