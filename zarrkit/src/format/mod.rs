//! Zarr format versions: their documents and key layouts, mapped onto the
//! one internal model in [`crate::metadata`].
//!
//! Everything that differs between format versions lives in this module
//! and nowhere else. Code outside asks this module for a node's metadata,
//! for the key of a chunk ([`ChunkLayout`]) and to write metadata back;
//! it never asks which format a node came from.
//!
//! # Format detection
//!
//! Opening a node without naming its format probes the store in this order
//! and takes the first format whose document exists:
//!
//! 1. v3: `<path>/zarr.json` with `"zarr_format": 3`.
//! 2. v2: `<path>/.zarray` (an array), then `<path>/.zgroup` (a group); a
//!    node with both is read as the array, as zarr-python 2 does. Its
//!    attributes are in `<path>/.zattrs` (absent: none).
//!
//! Later formats (v1 and the v3 drafts) add their probes to this list.

pub mod v2;
pub mod v3;

use crate::Error;
use crate::metadata::{ChunkKeyEncoding, NodeMetadata};
use crate::node::NodePath;
use crate::store::{Store, StoreKey, StorePrefix};

/// A Zarr format version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ZarrFormat {
    /// Zarr v3 (3.0 and 3.1).
    V3,
    /// Zarr v2 (`.zarray`, `.zgroup`, `.zattrs`).
    V2,
}

impl ZarrFormat {
    /// The short name used in messages and on the command line, such as `v3`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::V3 => "v3",
            Self::V2 => "v2",
        }
    }

    /// Every format, in probe order.
    pub const ALL: &'static [ZarrFormat] = &[ZarrFormat::V3, ZarrFormat::V2];
}

impl std::fmt::Display for ZarrFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where an array's chunks live: the node's key prefix and the chunk key
/// encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkLayout {
    prefix: StorePrefix,
    encoding: ChunkKeyEncoding,
}

impl ChunkLayout {
    /// The key of the chunk at `chunk_coords`.
    ///
    /// # Errors
    /// [`crate::store::StoreError::InvalidKey`] if the key is not valid (it
    /// always is for prefixes built from a [`NodePath`]).
    pub fn chunk_key(&self, chunk_coords: &[u64]) -> Result<StoreKey, crate::store::StoreError> {
        self.prefix.key(&self.encoding.encode(chunk_coords))
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
        self.encoding.decode(suffix, ndim)
    }
}

/// The key prefix of the node at `path` in `format` (empty for the root).
#[must_use]
pub fn node_prefix(format: ZarrFormat, path: &NodePath) -> StorePrefix {
    match format {
        ZarrFormat::V3 | ZarrFormat::V2 => path.to_prefix(),
    }
}

/// The key of the node document at `path` in `format`; for v2, the array
/// document `.zarray` (a group's is [`v2::GROUP_KEY`]).
///
/// # Errors
/// [`crate::store::StoreError::InvalidKey`] if the path cannot form a key.
pub fn metadata_key(format: ZarrFormat, path: &NodePath) -> Result<StoreKey, Error> {
    match format {
        ZarrFormat::V3 => Ok(path.to_prefix().key(v3::METADATA_KEY)?),
        ZarrFormat::V2 => Ok(path.to_prefix().key(v2::ARRAY_KEY)?),
    }
}

/// The chunk key encoding a new array gets in `format` unless told
/// otherwise: v3 `default` with `/`; for v2, `v2` with `.` (v2 "Chunks").
#[must_use]
pub fn default_chunk_key_encoding(format: ZarrFormat) -> ChunkKeyEncoding {
    match format {
        ZarrFormat::V3 => ChunkKeyEncoding::default(),
        ZarrFormat::V2 => ChunkKeyEncoding::V2 {
            separator: crate::metadata::Separator::Dot,
        },
    }
}

/// The chunk layout of an array at `path` in `format`.
#[must_use]
pub fn chunk_layout(
    format: ZarrFormat,
    path: &NodePath,
    encoding: &ChunkKeyEncoding,
) -> ChunkLayout {
    match format {
        ZarrFormat::V3 | ZarrFormat::V2 => ChunkLayout {
            prefix: node_prefix(format, path),
            encoding: encoding.clone(),
        },
    }
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
    for &format in ZarrFormat::ALL {
        if let Some(metadata) = read_node_as(store, path, format)? {
            return Ok(Some((format, metadata)));
        }
    }
    Ok(None)
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
    let parse = match format {
        ZarrFormat::V3 => v3::parse_node,
        ZarrFormat::V2 => return read_v2_node(store, path),
    };
    let key = metadata_key(format, path)?;
    let Some(bytes) = store.get(&key, None)? else {
        return Ok(None);
    };
    let metadata = parse(&bytes).map_err(|source| Error::Metadata { key, source })?;
    Ok(Some(metadata))
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
    let bytes = match format {
        ZarrFormat::V3 => v3::serialize_node(metadata),
        ZarrFormat::V2 => return write_v2_node(store, path, metadata),
    };
    let key = metadata_key(format, path)?;
    store.set(&key, &bytes)?;
    Ok(())
}

/// Checks that `metadata` can be written in `format`, before anything is
/// written.
///
/// # Errors
/// [`Error::InvalidMetadata`] with [`crate::metadata::MetadataError::NotRepresentable`]
/// naming what the format cannot hold (v2: codecs other than an F-order
/// `transpose`, `bytes` and one compressor; dimension names; ...).
pub fn check_representable(
    format: ZarrFormat,
    path: &NodePath,
    metadata: &NodeMetadata,
) -> Result<(), Error> {
    match (format, metadata) {
        (ZarrFormat::V2, NodeMetadata::Array(array)) => {
            v2::array_to_json(array)
                .map(drop)
                .map_err(|source| Error::InvalidMetadata {
                    path: path.clone(),
                    source,
                })
        }
        _ => Ok(()),
    }
}

fn v2_key(path: &NodePath, name: &str) -> Result<StoreKey, Error> {
    Ok(path.to_prefix().key(name)?)
}

/// v2 "Hierarchies": a node's document is `.zarray` or `.zgroup`, its
/// attributes `.zattrs`.
fn read_v2_node(store: &dyn Store, path: &NodePath) -> Result<Option<NodeMetadata>, Error> {
    let array_key = v2_key(path, v2::ARRAY_KEY)?;
    let array = store.get(&array_key, None)?;
    let group_key = v2_key(path, v2::GROUP_KEY)?;
    let (key, bytes) = match array {
        Some(bytes) => (array_key, bytes),
        None => match store.get(&group_key, None)? {
            Some(bytes) => (group_key, bytes),
            None => return Ok(None),
        },
    };
    let attributes_key = v2_key(path, v2::ATTRIBUTES_KEY)?;
    let attributes = match store.get(&attributes_key, None)? {
        None => None,
        Some(bytes) => Some(
            v2::parse_attributes(&bytes).map_err(|source| Error::Metadata {
                key: attributes_key,
                source,
            })?,
        ),
    };
    let metadata = if key.as_str().ends_with(v2::ARRAY_KEY) {
        v2::parse_array(&bytes, attributes).map(NodeMetadata::Array)
    } else {
        v2::parse_group(&bytes, attributes).map(NodeMetadata::Group)
    }
    .map_err(|source| Error::Metadata { key, source })?;
    Ok(Some(metadata))
}

fn write_v2_node(store: &dyn Store, path: &NodePath, metadata: &NodeMetadata) -> Result<(), Error> {
    let (name, document, attributes) = match metadata {
        NodeMetadata::Array(array) => (
            v2::ARRAY_KEY,
            v2::array_to_json(array).map_err(|source| Error::InvalidMetadata {
                path: path.clone(),
                source,
            })?,
            &array.attributes,
        ),
        NodeMetadata::Group(group) => (v2::GROUP_KEY, v2::group_to_json(), &group.attributes),
    };
    // v2 "Groups": creating a node creates groups at all its ancestors.
    let mut ancestor = path.parent();
    while let Some(parent) = ancestor {
        if store.size(&v2_key(&parent, v2::GROUP_KEY)?)?.is_none()
            && store.size(&v2_key(&parent, v2::ARRAY_KEY)?)?.is_none()
            && store
                .size(&metadata_key(ZarrFormat::V3, &parent)?)?
                .is_none()
        {
            store.set(
                &v2_key(&parent, v2::GROUP_KEY)?,
                &v2::to_bytes(&v2::group_to_json()),
            )?;
        }
        ancestor = parent.parent();
    }
    // Attributes first: a reader that finds the document finds them too.
    // zarr-python writes `.zattrs` even when empty; so does this, which
    // also replaces any stale one.
    store.set(
        &v2_key(path, v2::ATTRIBUTES_KEY)?,
        &v2::to_bytes(&v2::attributes_to_json(attributes)),
    )?;
    store.set(&v2_key(path, name)?, &v2::to_bytes(&document))?;
    Ok(())
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
    match format {
        ZarrFormat::V3 | ZarrFormat::V2 => {
            let listing = store.list_dir(&node_prefix(format, path))?;
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
                // v3 core, "Storage": a node exists only where its zarr.json
                // does (implicit groups were removed); other directories,
                // such as chunk directories `c/`, are not children.
                let exists = match format {
                    ZarrFormat::V2 => {
                        // v2 "Groups": a child is a path with `.zarray` or `.zgroup`.
                        store.size(&v2_key(&child, v2::ARRAY_KEY)?)?.is_some()
                            || store.size(&v2_key(&child, v2::GROUP_KEY)?)?.is_some()
                    }
                    _ => store.size(&metadata_key(format, &child)?)?.is_some(),
                };
                if exists {
                    children.push(child);
                }
            }
            Ok(children)
        }
    }
}
