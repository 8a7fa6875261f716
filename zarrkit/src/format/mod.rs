//! Zarr format versions: their documents and key layouts, mapped onto the
//! one internal model in [`crate::metadata`].
//!
//! Everything that differs between format versions lives in this module
//! and nowhere else. Code outside asks this module for a node's metadata,
//! for the key of a chunk ([`ChunkLayout`]) and to write metadata back;
//! it never asks which format a node came from.
//!
//! # One shape, one dispatch
//!
//! Each version is a module with the same shape: reading, serialising and
//! writing a node's documents, listing a group's children, erasing a node,
//! the node's key prefix, its document's key, the chunk layout, and the
//! defaults a new array gets (chunk key encoding, codecs), plus the facts
//! [`ZarrFormat`] answers (groups, mixed byte order structures, where
//! consolidated metadata lives) and what the CLI shows of a node.
//!
//! | format | module |
//! |---|---|
//! | v3 | [`v3`] (its configured data types in `v3/strings.rs`) |
//! | v2 | [`v2`] |
//! | v1 | [`v1`] |
//! | v3 draft 2022 | `v3_draft/draft2022.rs`, public as [`v3_draft2022`] |
//! | the 2019 drafts and zarr-python 2.x's layout | `v3_draft/draft2019.rs`, public as [`v3_draft2019`]; zarr-python 2.x's array documents in `v3_draft/zarr_python.rs` |
//!
//! The drafts' extension data types (`v3_draft/dtypes.rs`, public as
//! [`draft_dtypes`]), sharding transformer (`v3_draft/sharding.rs`) and
//! shared code (entry point, key layout, common fields: `v3_draft/mod.rs`)
//! are in `v3_draft/` too. Each version implements one crate-private trait,
//! and one function picks the implementation for a [`ZarrFormat`]: the
//! only `match` over formats for these operations. The public functions
//! here ([`read_node_as`], [`write_node`], [`chunk_layout`], …) delegate to
//! it in one line. Names and descriptions of formats, a table, stay on
//! [`ZarrFormat`]. Consolidated metadata is in [`consolidate`], where each
//! format's way of keeping it (v2, v3, zarr-python 2.x's experimental v3) is
//! reached through the same dispatch. Store keys of documents and chunks
//! come only from the versions' key layouts.
//!
//! # Format detection
//!
//! Opening a node without naming its format probes the store in this order
//! and takes the first format whose document exists:
//!
//! 1. v3: `<path>/zarr.json` with `"zarr_format": 3`. A root `zarr.json`
//!    whose `zarr_format` is a string is a draft entry point, not a v3 node,
//!    and the probe moves on.
//! 2. v2: `<path>/.zarray` (an array), then `<path>/.zgroup` (a group); a
//!    node with both is read as the array, as zarr-python 2 does. Its
//!    attributes are in `<path>/.zattrs` (absent: none).
//! 3. v1 ([`v1`]): at the root only (v1 has no hierarchy), the key `meta`;
//!    its attributes are in `attrs`, which must exist.
//! 4. v3 draft 2022 ([`v3_draft2022`]): the root `zarr.json` has
//!    `"zarr_format": "https://purl.org/zarr/spec/core/3.0"`; then
//!    `meta/<path>.array.json`, `meta/<path>.group.json`, and a listing of
//!    `meta/<path>/` for an implicit group (`meta/array.json` and
//!    `meta/group.json` for the root, which always exists).
//! 5. v3 draft 2019, zarr-python 2.x layout ([`v3_draft2019`]): the root
//!    `zarr.json` has the 2019 protocol URI and a `metadata_key_suffix`; then
//!    `meta/root/<path>.array.json`, `.group.json`, implicit groups.
//! 6. v3 draft 19 June 2019: the same entry point without a suffix, and
//!    `meta/root/<path>.array` / `.group` documents without `zarr_format`.
//! 7. v3 early 2019 draft: the same entry point and keys, documents that
//!    carry `zarr_format` (implicit groups belong to it when the entry
//!    point has that draft's `http` URI, which zarrkit writes for it).
//!
//! v2 comes before the drafts because it is by far the more common; each
//! draft probe costs one read of the root `zarr.json` in a store that is
//! not a draft hierarchy, and a store of the drafts needs that entry point.
//! v1 comes before the drafts too: its probe is one read of `meta`, and only
//! at the root (the drafts' `meta/...` documents are below a `meta/` prefix,
//! never at the key `meta` itself).

pub mod consolidate;
mod display;
mod numpy_types;
pub mod v1;
pub mod v2;
pub mod v3;
mod v3_draft;

pub use v3_draft::{draft2019 as v3_draft2019, draft2022 as v3_draft2022, dtypes as draft_dtypes};

use crate::Error;
use crate::metadata::NodePath;
use crate::metadata::{
    ArrayMetadata, ChunkKeyEncoding, DataType, ExtensionObject, MetadataError, NodeMetadata,
};
use crate::store::{Store, StoreError, StoreKey, StorePrefix};
pub use display::{
    array_display_facts, fill_value_as_stored, node_document, v2_array_document, v3_document,
};
use serde_json::Value;

/// The names of the node documents that formats keep in the node's own
/// directory, v3's first: v3 `zarr.json` (v3 core, "Storage keys"), v2
/// `.zarray` and `.zgroup` (v2 spec, "Storage"), v1 `meta` (v1 spec,
/// "Storage"; a v1 store is a single array). A directory holding one of
/// them is a node. The v3 drafts keep documents under `meta/` instead.
pub const NODE_DOCUMENT_NAMES: &[&str] =
    &[v3::METADATA_KEY, v2::ARRAY_KEY, v2::GROUP_KEY, v1::META_KEY];

/// A Zarr format version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ZarrFormat {
    /// Zarr v3 (3.0 and 3.1).
    V3,
    /// Zarr v2 (`.zarray`, `.zgroup`, `.zattrs`).
    V2,
    /// Zarr v1: a single array, `meta` and `attrs` (see [`v1`]).
    V1,
    /// The v3 core draft of 25 May 2022 (see [`v3_draft2022`]).
    V3Draft2022,
    /// zarr-python 2.x's experimental v3: the June 2019 draft with
    /// `.json`-suffixed documents (see [`v3_draft2019`]).
    V3Draft2019Json,
    /// The v3 core protocol draft of 19 June 2019 (see [`v3_draft2019`]).
    V3Draft2019,
    /// The early 2019 v3 core protocol draft (see [`v3_draft2019`]).
    V3Draft2019a,
}

impl ZarrFormat {
    /// The short name used in messages and on the command line, such as `v3`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::V3 => "v3",
            Self::V2 => "v2",
            Self::V1 => "v1",
            Self::V3Draft2022 => "v3-draft-2022",
            Self::V3Draft2019Json => "v3-draft-2019-json",
            Self::V3Draft2019 => "v3-draft-2019",
            Self::V3Draft2019a => "v3-draft-2019a",
        }
    }

    /// Whether this is one of the v3 drafts.
    #[must_use]
    pub fn is_v3_draft(self) -> bool {
        matches!(
            self,
            Self::V3Draft2022 | Self::V3Draft2019Json | Self::V3Draft2019 | Self::V3Draft2019a
        )
    }

    /// Whether this format spells a structured data type as NumPy's
    /// `descr`, whose fields may each have their own byte order (v2 "Data
    /// type encoding", v1 "Data type encoding", and zarr-python 2.x's
    /// experimental v3 layout, which writes the same `descr`): the model's
    /// `zarrkit.struct_bytes` codec. v3 and the other drafts give a
    /// structure one byte order.
    #[must_use]
    pub fn holds_mixed_byte_order_structs(self) -> bool {
        version(self).holds_mixed_byte_order_structs()
    }

    /// What the format is, in a few words, for help texts.
    #[must_use]
    pub fn description(self) -> &'static str {
        match self {
            Self::V3 => "Zarr v3 (3.0, 3.1), the default",
            Self::V2 => "Zarr v2 (`.zarray`, `.zgroup`, `.zattrs`)",
            Self::V1 => "Zarr v1 (`meta`, `attrs`): a single array",
            Self::V3Draft2022 => "the v3 draft of 2022-05-25",
            Self::V3Draft2019Json => "zarr-python 2.x's experimental v3 (`meta/root/….json`)",
            Self::V3Draft2019 => "the v3 draft of 2019-06-19",
            Self::V3Draft2019a => "the early 2019 v3 draft",
        }
    }

    /// Whether this is Zarr v3 proper (3.0, 3.1), not one of its drafts:
    /// the format whose core codecs every v3 reader has (v3 core spec,
    /// "Codecs"), which the migration's portability checks are about.
    #[must_use]
    pub fn is_v3(self) -> bool {
        self == Self::V3
    }

    /// Whether the format has groups. v1 has none: a v1 store is one array
    /// (v1 spec, "Storage").
    #[must_use]
    pub fn has_groups(self) -> bool {
        version(self).has_groups()
    }

    /// Whether consolidated metadata lives with the root group itself, where
    /// zarr-python (and xarray's `consolidated=True`) look for it: v2's
    /// `.zmetadata` and v3's `consolidated_metadata`. zarr-python 2.x's
    /// experimental v3 keeps it in an extra group (a node of its own); the
    /// other drafts and v1 have none. Neither spec defines consolidated
    /// metadata; this follows zarr-python.
    #[must_use]
    pub fn keeps_consolidated_metadata_in_the_root(self) -> bool {
        version(self).keeps_consolidated_metadata_in_the_root()
    }

    /// Every format, in probe order.
    pub const ALL: &'static [ZarrFormat] = &[
        ZarrFormat::V3,
        ZarrFormat::V2,
        ZarrFormat::V1,
        ZarrFormat::V3Draft2022,
        ZarrFormat::V3Draft2019Json,
        ZarrFormat::V3Draft2019,
        ZarrFormat::V3Draft2019a,
    ];
}

impl std::fmt::Display for ZarrFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether the array's document leaves its fill value undefined: v2's
/// `"fill_value": null` (v2 spec, "Metadata": "`null` … no fill value"), as
/// v1 and the drafts that follow v2 also say it, kept in the model as the
/// extra field [`v2::NULL_FILL_VALUE_FIELD`] set to `null` beside a stand-in
/// zero. v3 has no such fill value (v3 core, "fill_value" is required).
#[must_use]
pub fn fill_value_is_undefined(metadata: &ArrayMetadata) -> bool {
    metadata.extra_fields.get(v2::NULL_FILL_VALUE_FIELD) == Some(&serde_json::Value::Null)
}

/// Marks the array's fill value undefined (see [`fill_value_is_undefined`]):
/// formats that can say so write `null` while the model's fill value is the
/// stand-in zero (another fill value is written as itself).
pub fn set_fill_value_undefined(metadata: &mut ArrayMetadata) {
    metadata
        .extra_fields
        .insert(v2::NULL_FILL_VALUE_FIELD.into(), serde_json::Value::Null);
}

/// Where an array's chunks live: the node's key prefix and the chunk key
/// encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkLayout {
    prefix: StorePrefix,
    encoding: ChunkKeyEncoding,
    /// The v3 drafts' `c`-prefixed keys (`c0/1`): `c` glued to the first
    /// index, the encoding's separator between indices, and this key for a
    /// 0-d array's one chunk. `None`: the encoding's own keys.
    glued: Option<&'static str>,
}

impl ChunkLayout {
    /// The key of the chunk at `chunk_coords`.
    ///
    /// # Errors
    /// [`crate::store::StoreError::InvalidKey`] if the key is not valid (it
    /// always is for prefixes built from a [`NodePath`]).
    pub fn chunk_key(&self, chunk_coords: &[u64]) -> Result<StoreKey, crate::store::StoreError> {
        match self.glued {
            None => self.prefix.key(&self.encoding.encode(chunk_coords)),
            Some(scalar) if chunk_coords.is_empty() => self.prefix.key(scalar),
            Some(_) => {
                // 2022 draft, "Regular grids": "the identifier for chunk
                // with grid index (1, 23, 45) is the string c1/23/45".
                let joined = ChunkKeyEncoding::V2 {
                    separator: self.encoding.separator(),
                }
                .encode(chunk_coords);
                self.prefix.key(&format!("c{joined}"))
            }
        }
    }

    /// The key prefix under which the chunks lie.
    #[must_use]
    pub fn prefix(&self) -> &StorePrefix {
        &self.prefix
    }

    /// The chunk coordinates of `key`, or `None` if it is not a chunk key of
    /// this layout for an array of `ndim` dimensions.
    #[must_use]
    pub fn parse_chunk_key(&self, key: &StoreKey, ndim: usize) -> Option<Vec<u64>> {
        let suffix = key.as_str().strip_prefix(self.prefix.as_str())?;
        match self.glued {
            None => self.encoding.decode(suffix, ndim),
            Some(scalar) if ndim == 0 => (suffix == scalar).then(Vec::new),
            Some(_) => ChunkKeyEncoding::V2 {
                separator: self.encoding.separator(),
            }
            .decode(suffix.strip_prefix('c')?, ndim),
        }
    }
}

/// What every format version provides, in the same shape: its key layout
/// (node prefix, document key, chunk layout), its defaults for new arrays,
/// reading, serialising and writing a node's documents, listing a group's
/// children and erasing a node, and the facts about it that code outside
/// `format/` asks through [`ZarrFormat`]. Each version module has one
/// implementation ([`v3::V3`], [`v2::V2`], [`v1::V1`],
/// [`v3_draft::draft2022::Draft2022`], [`v3_draft::draft2019::Draft2019`]),
/// and [`version`] is the one place that picks it for a [`ZarrFormat`].
pub(crate) trait Version: Sync {
    /// The key prefix of the node at `path` (empty for the root in v3, v2
    /// and v1); in the v3 drafts, which keep documents and chunks apart,
    /// the prefix of the array's chunks (`data/…/`).
    fn node_prefix(&self, path: &NodePath) -> StorePrefix;

    /// The key of the node's (array) document, with the format's default
    /// metadata key suffix where the entry point may change it.
    fn metadata_key(&self, path: &NodePath) -> Result<StoreKey, StoreError>;

    /// The chunk key encoding a new array gets unless told otherwise: v3's
    /// `default` with `/` unless the version says otherwise.
    fn default_chunk_key_encoding(&self) -> ChunkKeyEncoding {
        ChunkKeyEncoding::default()
    }

    /// Where the chunks of the array at `path` lie and how they are named:
    /// the encoding's own keys under [`Version::node_prefix`] unless the
    /// version says otherwise.
    fn chunk_layout(&self, path: &NodePath, encoding: &ChunkKeyEncoding) -> ChunkLayout {
        ChunkLayout {
            prefix: self.node_prefix(path),
            encoding: encoding.clone(),
            glued: None,
        }
    }

    /// The codecs a new array gets when none are given, or `None` for the
    /// builder's own default (`bytes` + `zstd`).
    fn default_codecs(&self, _data_type: &DataType) -> Option<Vec<ExtensionObject>> {
        None
    }

    /// Reads and parses the node at `path`; `Ok(None)` when this format has
    /// no node there.
    fn read_node(&self, store: &dyn Store, path: &NodePath) -> Result<Option<NodeMetadata>, Error>;

    /// The node's document as [`Version::write_node`] stores it (for the v3
    /// drafts, without the entry point; for v2 and v1, without the
    /// attributes' document).
    fn serialize_node(&self, metadata: &NodeMetadata) -> Result<Vec<u8>, MetadataError>;

    /// Checks that the version can say everything in `metadata`:
    /// [`Version::serialize_node`] succeeds, unless the version checks it
    /// without writing the document.
    fn check_node(&self, metadata: &NodeMetadata) -> Result<(), MetadataError> {
        self.serialize_node(metadata).map(drop)
    }

    /// Checks that a node can be written at `path` (every path can, unless
    /// the version says otherwise).
    fn check_path(&self, _path: &NodePath) -> Result<(), MetadataError> {
        Ok(())
    }

    /// Writes the node's documents at `path`. Under [`WriteMode::Create`]
    /// the document that makes the node a node goes first, through
    /// [`put_node_document`], and nothing else is written when it finds
    /// one there: returns whether it wrote (always `true` under
    /// [`WriteMode::Replace`]).
    fn write_node(
        &self,
        store: &dyn Store,
        path: &NodePath,
        metadata: &NodeMetadata,
        mode: WriteMode,
    ) -> Result<bool, Error>;

    /// The paths of the children of the group at `path`, sorted by name.
    fn children(&self, store: &dyn Store, path: &NodePath) -> Result<Vec<NodePath>, Error>;

    /// The paths that may be children of the group at `path`, sorted by
    /// name, for a version whose children are the candidates that hold a
    /// node of this version and nothing else, and whose
    /// [`Version::read_node`] reads only the [`Version::metadata_key`]
    /// below a candidate: so [`child_batch`] reads every candidate's
    /// document in one batch, where [`Version::children`] and then
    /// reading the children would look twice. `None` (the default) where
    /// the children are only what [`Version::children`] says.
    fn child_candidates(
        &self,
        _store: &dyn Store,
        _path: &NodePath,
    ) -> Result<Option<Vec<NodePath>>, Error> {
        Ok(None)
    }

    /// Erases the node at `path` and everything below it (see [`erase_node`]).
    fn erase_node(&self, store: &dyn Store, path: &NodePath) -> Result<(), Error>;

    /// The node whose document is stored under `key`, for the versions whose
    /// nodes are directories holding documents of fixed names (v3, v2), so
    /// that [`find_nodes`] can find them by listing; `None` for other keys.
    fn node_of_document(&self, _key: &StoreKey) -> Option<NodePath> {
        None
    }

    /// Whether `key` is a document of this format (a node's document, its
    /// attributes, consolidated metadata, an entry point) rather than a
    /// chunk, wherever it lies; see [`is_document_key`].
    fn is_document_key(&self, key: &StoreKey) -> bool;

    /// The node's documents for display (see [`node_document`]): the node
    /// document as JSON unless the version keeps more than one document.
    fn node_document(&self, metadata: &NodeMetadata) -> Result<Value, MetadataError> {
        let bytes = self.serialize_node(metadata)?;
        serde_json::from_slice(&bytes).map_err(MetadataError::Json)
    }

    /// The array's own document as JSON (v2 `.zarray`, v1 `meta`, the
    /// others' node document), or `None` if it cannot be written.
    fn array_document(&self, array: &ArrayMetadata) -> Option<Value> {
        let bytes = self
            .serialize_node(&NodeMetadata::Array(array.clone()))
            .ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// The fields of the array's document that the model spells differently,
    /// for display (see [`array_display_facts`]); none unless the version
    /// says otherwise.
    fn display_facts(&self, _array: &ArrayMetadata) -> Vec<(String, String)> {
        Vec::new()
    }

    /// See [`ZarrFormat::has_groups`].
    fn has_groups(&self) -> bool {
        true
    }

    /// See [`ZarrFormat::holds_mixed_byte_order_structs`].
    fn holds_mixed_byte_order_structs(&self) -> bool {
        false
    }

    /// See [`ZarrFormat::keeps_consolidated_metadata_in_the_root`].
    fn keeps_consolidated_metadata_in_the_root(&self) -> bool {
        false
    }

    /// How the format keeps consolidated metadata ([`consolidate`]), or
    /// `None` if it has none.
    fn consolidation(&self) -> Option<&'static dyn consolidate::Consolidation> {
        None
    }
}

/// How [`Version::write_node`] writes a node's documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WriteMode {
    /// Over whatever is there (rewriting a node's metadata).
    Replace,
    /// Only where the node's document is not there yet (creating a node).
    Create,
}

/// Writes `bytes` under `key`, a document that makes a node a node (v3
/// `zarr.json`, v2 `.zarray` or `.zgroup`, v1 `meta`, the drafts'
/// `.array.json` or `.group.json`, an entry point): under
/// [`WriteMode::Replace`] over whatever is there; under
/// [`WriteMode::Create`] only if nothing is, with [`Store::set_if_absent`]
/// where the store has [`StoreCapabilities::conditional_create`], so that
/// of two writers creating it exactly one succeeds. Elsewhere (or where the
/// store turns out not to offer it) it writes with [`Store::set`]: the
/// caller has checked that nothing is there, which is not atomic. Returns
/// whether it wrote.
///
/// [`StoreCapabilities::conditional_create`]: crate::store::StoreCapabilities::conditional_create
///
/// # Errors
/// A store error.
pub(crate) fn put_node_document(
    store: &dyn Store,
    key: &StoreKey,
    bytes: &[u8],
    mode: WriteMode,
) -> Result<bool, Error> {
    if mode == WriteMode::Create && store.capabilities().conditional_create {
        match store.set_if_absent(key, bytes) {
            Err(StoreError::Unsupported { .. }) => {}
            result => return Ok(result?),
        }
    }
    store.set(key, bytes)?;
    Ok(true)
}

/// Writes a node's document and the separate document of its attributes
/// (v2 `.zattrs`, v1 `attrs`); returns whether it wrote (see
/// [`put_node_document`]). Over an existing node the attributes go first,
/// so that a reader that finds the new document finds them too. Creating
/// a node, the document goes first, so that a writer that loses the race
/// to create the node writes nothing; a reader may then see the new node
/// without its attributes for a moment.
///
/// # Errors
/// A store error.
pub(crate) fn put_node_with_attributes(
    store: &dyn Store,
    (document_key, document): (&StoreKey, &[u8]),
    (attributes_key, attributes): (&StoreKey, &[u8]),
    mode: WriteMode,
) -> Result<bool, Error> {
    match mode {
        WriteMode::Replace => {
            store.set(attributes_key, attributes)?;
            store.set(document_key, document)?;
        }
        WriteMode::Create => {
            if !put_node_document(store, document_key, document, mode)? {
                return Ok(false);
            }
            store.set(attributes_key, attributes)?;
        }
    }
    Ok(true)
}

/// `value` as serde_json's pretty printer writes it (two spaces): what
/// `format!("{value:#}")` writes, without going through `fmt`, which took
/// as long as building the document.
pub(crate) fn pretty_json(value: &Value) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(512);
    // Cannot fail: a `Value`'s map keys are strings, and a `Vec` takes
    // every write.
    let _ = serde_json::to_writer_pretty(&mut bytes, value);
    bytes
}

/// The implementation of `format`: the one `match` over formats for what
/// differs between them (names and descriptions, a table, stay on
/// [`ZarrFormat`]).
pub(crate) fn version(format: ZarrFormat) -> &'static dyn Version {
    match format {
        ZarrFormat::V3 => &v3::V3,
        ZarrFormat::V2 => &v2::V2,
        ZarrFormat::V1 => &v1::V1,
        ZarrFormat::V3Draft2022 => &v3_draft::draft2022::Draft2022,
        ZarrFormat::V3Draft2019Json => &v3_draft::draft2019::Draft2019::ZARR_PYTHON,
        ZarrFormat::V3Draft2019 => &v3_draft::draft2019::Draft2019::JUNE,
        ZarrFormat::V3Draft2019a => &v3_draft::draft2019::Draft2019::EARLY,
    }
}

/// The key prefix of the node at `path` in `format` (empty for the v3
/// root). In the v3 drafts, which keep metadata and chunks apart, it is the
/// prefix of the array's chunks (`data/…/`).
#[must_use]
pub fn node_prefix(format: ZarrFormat, path: &NodePath) -> StorePrefix {
    version(format).node_prefix(path)
}

/// The key of the node document at `path` in `format`; for v2, the array
/// document `.zarray` (a group's is [`v2::GROUP_KEY`]). In the v3 drafts,
/// where arrays and groups have differently named documents and the entry
/// point may change the suffix, it is the array document's key with the
/// default suffix.
///
/// # Errors
/// [`crate::store::StoreError::InvalidKey`] if the path cannot form a key.
pub fn metadata_key(format: ZarrFormat, path: &NodePath) -> Result<StoreKey, Error> {
    Ok(version(format).metadata_key(path)?)
}

/// Whether `key` is a document of `format` (v3 `zarr.json`; v2 `.zarray`,
/// `.zgroup`, `.zattrs`, `.zmetadata`; v1 `meta` and `attrs`; in the v3
/// drafts the entry point and everything under `meta/`) rather than a chunk
/// or a stray key. `zarrkit check` uses it to tell a hierarchy's documents
/// from keys that belong to no node.
///
/// ```
/// use zarrkit::format::{ZarrFormat, is_document_key};
/// use zarrkit::store::StoreKey;
/// let key = |k: &str| StoreKey::new(k).unwrap();
/// assert!(is_document_key(ZarrFormat::V2, &key("a/.zattrs")));
/// assert!(!is_document_key(ZarrFormat::V2, &key("a/0.0")));
/// assert!(is_document_key(ZarrFormat::V3, &key("a/zarr.json")));
/// assert!(is_document_key(ZarrFormat::V3Draft2022, &key("meta/a.array.json")));
/// assert!(!is_document_key(ZarrFormat::V3Draft2022, &key("data/a/c0")));
/// ```
#[must_use]
pub fn is_document_key(format: ZarrFormat, key: &StoreKey) -> bool {
    version(format).is_document_key(key)
}

/// The chunk key encoding a new array gets in `format` unless told
/// otherwise: v3 `default` with `/`; for v2 and v1, `v2` with `.` (v2 and
/// v1 "Chunks").
/// The drafts derive their key forms from the chunk layout and take the v3
/// default.
#[must_use]
pub fn default_chunk_key_encoding(format: ZarrFormat) -> ChunkKeyEncoding {
    version(format).default_chunk_key_encoding()
}

/// The chunk layout of an array at `path` in `format`.
#[must_use]
pub fn chunk_layout(
    format: ZarrFormat,
    path: &NodePath,
    encoding: &ChunkKeyEncoding,
) -> ChunkLayout {
    version(format).chunk_layout(path, encoding)
}

/// Reads and parses the node at `path`, probing formats in the documented
/// order. `Ok(None)` when no format has a document there.
///
/// # Errors
/// [`Error::Metadata`] naming the document's key if it exists but is invalid,
/// or a store error.
pub fn read_node(
    store: &dyn Store,
    path: &NodePath,
) -> Result<Option<(ZarrFormat, NodeMetadata)>, Error> {
    if store.concurrency() > 1 {
        // A remote store: each format's documents would be one round trip
        // after another (`zarr.json`, then `.zarray`, `.zgroup`,
        // `.zattrs`); ask for all of them at once.
        return read_node_in(&Prefetched::new(store, path)?, path);
    }
    // Several formats read the same document (each v3 draft reads the
    // root's `zarr.json` to see whether it is a draft's entry point, and
    // at the root v3 has read it first): read each once.
    read_node_in(&Prefetched::lazy(store), path)
}

fn read_node_in(
    store: &dyn Store,
    path: &NodePath,
) -> Result<Option<(ZarrFormat, NodeMetadata)>, Error> {
    // Whether the root `zarr.json` may be a draft's entry point, found once
    // for the four drafts (without one, none of them has a node anywhere).
    let mut drafts = None;
    for &format in ZarrFormat::ALL {
        if format.is_v3_draft() {
            let possible = match drafts {
                Some(possible) => possible,
                None => *drafts.insert(v3_draft::may_have_entry_point(store)?),
            };
            if !possible {
                continue;
            }
        }
        if let Some(metadata) = read_node_as(store, path, format)? {
            return Ok(Some((format, metadata)));
        }
    }
    Ok(None)
}

/// A store whose node documents at one path were read in one batch: reads
/// of those keys are answered from the batch, the rest go to the store.
/// Lazy, it keeps every whole value it reads, for the probes of one node.
#[derive(Debug)]
struct Prefetched<'a> {
    store: &'a dyn Store,
    values: std::collections::HashMap<StoreKey, Option<Vec<u8>>>,
    /// The whole values read since (lazy only).
    read: Option<std::sync::Mutex<std::collections::HashMap<StoreKey, Option<Vec<u8>>>>>,
}

impl<'a> Prefetched<'a> {
    /// Reads the documents every format keeps beside a node at `path`.
    fn new(store: &'a dyn Store, path: &NodePath) -> Result<Self, Error> {
        let names = NODE_DOCUMENT_NAMES
            .iter()
            .chain(&[v2::ATTRIBUTES_KEY, v1::ATTRIBUTES_KEY]);
        let keys = names
            .map(|name| v2::node_key(path, name))
            .collect::<Result<Vec<_>, _>>()?;
        Self::of_keys(store, keys)
    }

    /// Reads `keys` in one batch.
    fn of_keys(store: &'a dyn Store, keys: Vec<StoreKey>) -> Result<Self, Error> {
        let requests: Vec<_> = keys.iter().map(|k| (k.clone(), None)).collect();
        let values = store.get_partial_values(&requests)?;
        Ok(Self::of_values(store, keys, values))
    }

    /// The values of `keys`, read already, and nothing read afterwards.
    fn of_values(store: &'a dyn Store, keys: Vec<StoreKey>, values: Vec<Option<Vec<u8>>>) -> Self {
        Self {
            store,
            values: keys.into_iter().zip(values).collect(),
            read: None,
        }
    }

    /// Reads, in one batch, the documents the formats' probes of a path
    /// where no node is read (v3 `zarr.json`, v2 `.zarray` and `.zgroup`,
    /// and the root `zarr.json` for the drafts; v1 `meta` at the root), and
    /// keeps whatever else it reads afterwards, as [`Prefetched::lazy`].
    fn probes(store: &'a dyn Store, path: &NodePath) -> Result<Self, Error> {
        let mut names = vec![v3::METADATA_KEY, v2::ARRAY_KEY, v2::GROUP_KEY];
        if path.is_root() {
            names.push(v1::META_KEY);
        }
        let mut keys = names
            .into_iter()
            .map(|name| v2::node_key(path, name))
            .collect::<Result<Vec<_>, _>>()?;
        if !path.is_root() {
            keys.push(StoreKey::new(v3_draft::ENTRY_POINT_KEY)?);
        }
        let values = store.get_small_values(&keys)?;
        Ok(Self {
            store,
            values: keys.into_iter().zip(values).collect(),
            read: Some(std::sync::Mutex::default()),
        })
    }

    /// Reads nothing ahead, and keeps whatever whole value it reads.
    fn lazy(store: &'a dyn Store) -> Self {
        Self {
            store,
            values: std::collections::HashMap::new(),
            read: Some(std::sync::Mutex::default()),
        }
    }
}

impl Store for Prefetched<'_> {
    fn name(&self) -> &'static str {
        self.store.name()
    }

    fn capabilities(&self) -> crate::store::StoreCapabilities {
        self.store.capabilities()
    }

    fn concurrency(&self) -> usize {
        self.store.concurrency()
    }

    fn cold_size(&self, key: &StoreKey) -> Option<u64> {
        self.store.cold_size(key)
    }

    fn get(
        &self,
        key: &StoreKey,
        range: Option<crate::store::ByteRange>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        match (self.values.get(key), range, &self.read) {
            (Some(value), None, _) => Ok(value.clone()),
            (None, None, Some(read)) => {
                let read_before = read
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .get(key)
                    .cloned();
                if let Some(value) = read_before {
                    return Ok(value);
                }
                let value = self.store.get(key, None)?;
                read.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(key.clone(), value.clone());
                Ok(value)
            }
            _ => self.store.get(key, range),
        }
    }

    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
        self.store.set(key, value)
    }

    fn set_if_absent(&self, key: &StoreKey, value: &[u8]) -> Result<bool, StoreError> {
        self.store.set_if_absent(key, value)
    }

    fn set_partial_values(&self, items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError> {
        self.store.set_partial_values(items)
    }

    fn erase(&self, key: &StoreKey) -> Result<(), StoreError> {
        self.store.erase(key)
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<(), StoreError> {
        self.store.erase_prefix(prefix)
    }

    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
        self.store.list_prefix(prefix)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<crate::store::ListDir, StoreError> {
        self.store.list_dir(prefix)
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>, StoreError> {
        match self.values.get(key) {
            Some(value) => Ok(value.as_ref().map(|v| v.len() as u64)),
            None => self.store.size(key),
        }
    }
}

/// Reads and parses the node at `path` in the given format.
///
/// # Errors
/// As [`read_node`].
pub fn read_node_as(
    store: &dyn Store,
    path: &NodePath,
    format: ZarrFormat,
) -> Result<Option<NodeMetadata>, Error> {
    version(format).read_node(store, path)
}

/// The document of a node in `format`, as [`write_node`] would store it
/// (for the v3 drafts, without the entry point).
///
/// # Errors
/// [`MetadataError::UnsupportedExtension`] for what the format cannot say,
/// such as a codec the v3 drafts cannot name.
pub fn serialize_node(
    format: ZarrFormat,
    metadata: &NodeMetadata,
) -> Result<Vec<u8>, MetadataError> {
    version(format).serialize_node(metadata)
}

/// The codecs a new array in `format` gets when none are given, or `None`
/// for the builder's own default (`bytes` + `zstd`). The 2022 draft names no
/// `zstd` codec, so its arrays get `gzip` (level 5) when that feature is on; v1
/// arrays get zarr 1.x's default, `blosc` (`lz4`, level 5, byte shuffle).
#[must_use]
pub fn default_codecs(format: ZarrFormat, data_type: &DataType) -> Option<Vec<ExtensionObject>> {
    version(format).default_codecs(data_type)
}

/// Writes the document of the node at `path` in `format`.
///
/// # Errors
/// A store error.
pub fn write_node(
    store: &dyn Store,
    path: &NodePath,
    format: ZarrFormat,
    metadata: &NodeMetadata,
) -> Result<(), Error> {
    version(format)
        .write_node(store, path, metadata, WriteMode::Replace)
        .map(drop)
}

/// Writes the documents of a new node at `path` in `format`, failing if
/// another writer has created the node's document meanwhile.
///
/// The caller checks first that no node is at `path` ([`read_node`]); this
/// closes the gap between that check and the write where the store has
/// [`StoreCapabilities::conditional_create`]: the document that makes the
/// node a node (v3 `zarr.json`, v2 `.zarray` or `.zgroup`, v1 `meta`, the
/// drafts' `.array.json` or `.group.json`) is written first with
/// [`Store::set_if_absent`], and the other documents (v2 `.zattrs`, v1
/// `attrs`) only after it succeeded. So of two writers creating one node
/// at once exactly one succeeds, and the node holds that writer's
/// documents; the other gets [`Error::NodeExists`] and writes nothing.
/// Where the store lacks the capability the document is written with
/// [`Store::set`], and two writers can both succeed, the later one's
/// document replacing the earlier one's.
///
/// In the formats that name an array's and a group's documents differently
/// (v2, the drafts), the condition covers one key: writers creating an
/// array and a group at one path at once are not kept apart.
///
/// [`StoreCapabilities::conditional_create`]: crate::store::StoreCapabilities::conditional_create
///
/// # Errors
/// [`Error::NodeExists`] naming what is there when the node's document
/// already exists, [`Error::InvalidMetadata`] for what `format` cannot say,
/// or a store error.
pub fn create_node(
    store: &dyn Store,
    path: &NodePath,
    format: ZarrFormat,
    metadata: &NodeMetadata,
) -> Result<(), Error> {
    if version(format).write_node(store, path, metadata, WriteMode::Create)? {
        return Ok(());
    }
    // Read the node the other writer created, to say what it is; should it
    // be gone again already, what blocked this one was a node of the kind
    // being created.
    let creating = kind_of(metadata);
    let found = node_in_the_way(store, path, creating)?.unwrap_or(creating);
    Err(Error::NodeExists {
        path: path.clone(),
        found,
    })
}

/// What a creator of a `creating` node at `path` finds there: the kind of the
/// node [`read_node`] finds; or, where documents are there that do not
/// read as a node, the kind being created, since the path is taken either
/// way. That is a node another creator is writing, between its documents
/// (v1 `meta` before `attrs`: creators that start together each find the
/// winner's node half written), or a broken node, which creating would
/// not repair.
///
/// # Errors
/// A store error.
pub(crate) fn node_in_the_way(
    store: &dyn Store,
    path: &NodePath,
    creating: crate::NodeKind,
) -> Result<Option<crate::NodeKind>, Error> {
    let found = if store.concurrency() > 1 {
        read_node(store, path)
    } else {
        // A creator expects nothing there, so every probe of a local store
        // would be a miss, each opening the store's root again: read the
        // documents the probes ask for first (each format's at `path`, and
        // the root `zarr.json` that tells whether a v3 draft may have nodes)
        // in one batch, which opens the root once.
        Prefetched::probes(store, path).and_then(|documents| read_node_in(&documents, path))
    };
    match found {
        Ok(found) => Ok(found.map(|(_, existing)| kind_of(&existing))),
        Err(Error::Metadata { .. }) => Ok(Some(creating)),
        Err(err) => Err(err),
    }
}

/// Whether a listing of a directory of `store` shows every node below it:
/// v3, v2 and v1 keep a node's documents in the node's own directory (v3
/// core, "Storage keys"; v2 and v1, "Storage"), so a path other than the
/// root whose directory its parent's listing lacks holds no node of
/// theirs. The drafts keep documents under `meta/`, and have none
/// anywhere unless the root `zarr.json` is their entry point (one read).
/// `false` for a store that cannot list or whose root `zarr.json` may be
/// a draft's entry point: each path must be probed there.
///
/// # Errors
/// A store error.
pub(crate) fn nodes_are_listed_by_directory(store: &dyn Store) -> Result<bool, Error> {
    Ok(store.capabilities().list && !v3_draft::may_have_entry_point(store)?)
}

/// Checks that `metadata` can be written in `format`, before anything is
/// written.
///
/// # Errors
/// [`Error::InvalidMetadata`] with [`crate::metadata::MetadataError::NotRepresentable`]
/// naming what the format cannot hold (v2: codecs other than an F-order
/// `transpose`, `bytes` and one compressor; dimension names; ...; v1: the
/// same, and any path but the root, and groups).
pub fn check_representable(
    format: ZarrFormat,
    path: &NodePath,
    metadata: &NodeMetadata,
) -> Result<(), Error> {
    // Serialising is the check (unless the format has a cheaper one): each
    // format refuses what it cannot say (v2 a codec beyond
    // transpose/bytes/one compressor, the drafts a codec they cannot name).
    let version = version(format);
    let invalid = |source| Error::InvalidMetadata {
        path: path.clone(),
        source,
    };
    version.check_path(path).map_err(invalid)?;
    version.check_node(metadata).map_err(invalid)
}

/// The paths of the children of the group at `path` (arrays and groups) in
/// `format`, sorted by name.
///
/// # Errors
/// A store error (including a store that cannot list).
pub fn list_children(
    store: &dyn Store,
    path: &NodePath,
    format: ZarrFormat,
) -> Result<Vec<NodePath>, Error> {
    version(format).children(store, path)
}

/// The candidate children of a group with their documents, read in one
/// batch (see [`child_batch`]).
pub(crate) struct ChildBatch<'a> {
    format: ZarrFormat,
    candidates: Vec<NodePath>,
    documents: Prefetched<'a>,
}

impl ChildBatch<'_> {
    /// The paths that may be children, sorted by name.
    pub(crate) fn candidates(&self) -> &[NodePath] {
        &self.candidates
    }

    /// The node at the candidate `child`, from the batch; `None` where it
    /// is not a child.
    ///
    /// # Errors
    /// As [`read_node_as`].
    pub(crate) fn read(&self, child: &NodePath) -> Result<Option<NodeMetadata>, Error> {
        version(self.format).read_node(&self.documents, child)
    }
}

/// The children of the group at `path` in `format` with their documents,
/// for a format whose children are the candidates that hold a node of the
/// format (v3: every directory below the group, a child where it holds a
/// `zarr.json`): the candidates are listed, and their documents read in one
/// [`Store::get_small_values`] (concurrent on a remote store; on the
/// filesystem, one open each, where finding and then reading every child
/// took several). `None` for the other formats: their children are found
/// with [`list_children`], each then opened.
///
/// # Errors
/// A store error (including a store that cannot list).
pub(crate) fn child_batch<'a>(
    store: &'a dyn Store,
    path: &NodePath,
    format: ZarrFormat,
) -> Result<Option<ChildBatch<'a>>, Error> {
    let version = version(format);
    let Some(candidates) = version.child_candidates(store, path)? else {
        return Ok(None);
    };
    let keys = candidates
        .iter()
        .map(|child| version.metadata_key(child))
        .collect::<Result<Vec<_>, _>>()?;
    // Documents: small values (a filesystem store then need not ask each
    // file's length before reading it).
    let values = store.get_small_values(&keys)?;
    Ok(Some(ChildBatch {
        format,
        candidates,
        documents: Prefetched::of_values(store, keys, values),
    }))
}

/// The node whose document is `key` in a format whose nodes are
/// directories holding documents named `names` (v3, v2): the directory's
/// node (the inverse of [`NodePath::to_prefix`]). `None` for a key of
/// another name or whose directory is not a valid node path.
fn node_of_document_named(key: &StoreKey, names: &[&str]) -> Option<NodePath> {
    if !names.contains(&key.name()) {
        return None;
    }
    NodePath::new(key.parent().as_str()).ok()
}

/// Erases the node at `path` in a format whose nodes are directories (v3,
/// v2): every key under its prefix, if `exists`.
///
/// # Errors
/// [`Error::NodeNotFound`] if not `exists`, or a store error (including a
/// store that cannot erase by prefix).
fn erase_directory_node(store: &dyn Store, path: &NodePath, exists: bool) -> Result<(), Error> {
    if !exists {
        return Err(Error::NodeNotFound { path: path.clone() });
    }
    store.erase_prefix(&path.to_prefix())?;
    Ok(())
}

/// The children of the node at `path` in a format whose nodes are
/// directories (v3, v2): the subdirectories of the node's prefix that
/// `is_node` accepts (other directories, such as v3's chunk directory `c/`,
/// are not children).
fn directory_children(
    store: &dyn Store,
    path: &NodePath,
    is_node: impl Fn(&NodePath) -> Result<bool, Error>,
) -> Result<Vec<NodePath>, Error> {
    let listing = store.list_dir(&path.to_prefix())?;
    let mut children = Vec::new();
    for prefix in listing.prefixes {
        let name = prefix
            .as_str()
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or_default();
        let Ok(child) = path.child(name) else {
            continue;
        };
        if is_node(&child)? {
            children.push(child);
        }
    }
    Ok(children)
}

/// Whether a node exists at `path`, and if so in which format and of which
/// kind, probing formats in the documented order (2022 draft, "Determine if
/// a node exists"). In the v3 drafts an implicit group (no document, but
/// something below it) is a group; in final v3 and v2 a node exists only
/// where its document does; in v1 only the root array exists.
///
/// # Errors
/// [`Error::Metadata`] naming the key of a document that exists but is
/// invalid, or a store error.
pub fn node_exists(
    store: &dyn Store,
    path: &NodePath,
) -> Result<Option<(ZarrFormat, crate::NodeKind)>, Error> {
    Ok(read_node(store, path)?.map(|(format, metadata)| (format, kind_of(&metadata))))
}

fn kind_of(metadata: &NodeMetadata) -> crate::NodeKind {
    match metadata {
        NodeMetadata::Array(_) => crate::NodeKind::Array,
        NodeMetadata::Group(_) => crate::NodeKind::Group,
    }
}

/// Erases the node at `path` in whichever format it is, and returns that
/// format (see [`crate::node::erase`]): the format [`node_exists`] finds,
/// or, when the node's document is invalid, the first format in probe
/// order that has the node's keys, so a broken node can be erased too.
///
/// # Errors
/// [`Error::NodeNotFound`] if no format has a node there, or a store error.
pub fn erase_node_in_any_format(store: &dyn Store, path: &NodePath) -> Result<ZarrFormat, Error> {
    match node_exists(store, path) {
        Ok(Some((found, _))) => {
            erase_node(store, path, found)?;
            return Ok(found);
        }
        Ok(None) => {
            return Err(Error::NodeNotFound { path: path.clone() });
        }
        Err(Error::Metadata { .. }) => {}
        Err(other) => return Err(other),
    }
    for &candidate in ZarrFormat::ALL {
        match erase_node(store, path, candidate) {
            Ok(()) => return Ok(candidate),
            Err(Error::NodeNotFound { .. }) => {}
            Err(other) => return Err(other),
        }
    }
    Err(Error::NodeNotFound { path: path.clone() })
}

/// Erases the node at `path` in `format` and everything below it: its
/// documents, its chunks and its descendants. Siblings whose names share a
/// prefix with the node's (`a` and `ab`) are not touched. Whether the node
/// exists is decided from its keys alone, so a node with an invalid document
/// can be erased.
///
/// - v3 and v2 (v3 core, "Storage"; v2 "Storage"): every key under the
///   node's prefix `<path>/`; for the root, every key in the store.
/// - v1: the store holds one array, so erasing it erases every key.
/// - the v3 drafts (2022 draft, "Erase an array", "Erase a group"): the
///   node's documents, every key under `meta/<path>/` and under
///   `data/<path>/` (each draft's own layout); erasing the root also erases
///   the entry point `zarr.json`, leaving an empty store.
///
/// # Errors
/// [`Error::NodeNotFound`] if there is no node at `path` in `format` (for
/// the drafts, neither a document nor anything below it), or a store error
/// (including a store that cannot erase by prefix).
pub fn erase_node(store: &dyn Store, path: &NodePath, format: ZarrFormat) -> Result<(), Error> {
    version(format).erase_node(store, path)
}

/// Every node in the store, from the root down: depth first, parents before
/// children, siblings sorted by name, each with its kind and format (the
/// format of the root; a hierarchy is of one format). Empty when the store
/// has no root node. A v1 store is its root array alone.
///
/// # Errors
/// [`Error::Metadata`] naming the key of an invalid document, or a store
/// error (including a store that cannot list, when the root is a group).
pub fn list_nodes(
    store: &dyn Store,
) -> Result<Vec<(NodePath, crate::NodeKind, ZarrFormat)>, Error> {
    let root = NodePath::root();
    let Some((format, metadata)) = read_node(store, &root)? else {
        return Ok(Vec::new());
    };
    let mut out = vec![(root.clone(), kind_of(&metadata), format)];
    if matches!(metadata, NodeMetadata::Group(_)) {
        list_below(store, &root, format, &mut out)?;
    }
    Ok(out)
}

/// The paths of every node whose document is in the store, sorted (so
/// parents come before children), found by listing the whole store: the
/// keys named `zarr.json` (v3), `.zarray` or `.zgroup` (v2). This finds the
/// nodes of a store that has no root node, as tensorstore writes arrays
/// (it has no groups): v2 "Hierarchies" and v3 core "Storage" both say a
/// node exists where its document is, whether or not its parents do.
/// Documents at paths that are not valid node paths are skipped.
///
/// # Errors
/// A store error (including a store that cannot list).
pub fn find_nodes(store: &dyn Store) -> Result<Vec<NodePath>, Error> {
    let directories = [version(ZarrFormat::V3), version(ZarrFormat::V2)];
    let mut found = Vec::new();
    for key in store.list_prefix(&StorePrefix::root())? {
        found.extend(
            directories
                .iter()
                .find_map(|version| version.node_of_document(&key)),
        );
    }
    found.sort();
    found.dedup();
    Ok(found)
}

fn list_below(
    store: &dyn Store,
    path: &NodePath,
    format: ZarrFormat,
    out: &mut Vec<(NodePath, crate::NodeKind, ZarrFormat)>,
) -> Result<(), Error> {
    for child in list_children(store, path, format)? {
        // A listed child whose document has gone (a concurrent erase) is skipped.
        let Some(metadata) = read_node_as(store, &child, format)? else {
            continue;
        };
        let kind = kind_of(&metadata);
        out.push((child.clone(), kind, format));
        if kind == crate::NodeKind::Group {
            list_below(store, &child, format, out)?;
        }
    }
    Ok(())
}

// Shared with the fill values of `metadata::json`, where they live.
pub(crate) use crate::metadata::json::{base64_decode, base64_encode};

#[cfg(test)]
mod base64_tests {
    #[test]
    fn base64_matches_the_rfc_examples() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(super::base64_encode(plain.as_bytes()), encoded);
            assert_eq!(super::base64_decode(encoded).unwrap(), plain.as_bytes());
        }
        for bad in ["Zg=", "Z===", "Zg==Zg==", "Zm9*", "===="] {
            assert_eq!(super::base64_decode(bad), None, "{bad}");
        }
    }
}
