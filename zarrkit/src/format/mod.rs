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
//!
//! Later formats (v2, v1 and the v3 drafts) add their probes to this list.

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
}

impl ZarrFormat {
    /// The short name used in messages and on the command line, such as `v3`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::V3 => "v3",
        }
    }

    /// Every format, in probe order.
    pub const ALL: &'static [ZarrFormat] = &[ZarrFormat::V3];
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
        ZarrFormat::V3 => path.to_prefix(),
    }
}

/// The key of the node document at `path` in `format`.
///
/// # Errors
/// [`crate::store::StoreError::InvalidKey`] if the path cannot form a key.
pub fn metadata_key(format: ZarrFormat, path: &NodePath) -> Result<StoreKey, Error> {
    match format {
        ZarrFormat::V3 => Ok(path.to_prefix().key(v3::METADATA_KEY)?),
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
        ZarrFormat::V3 => ChunkLayout {
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
    let key = metadata_key(format, path)?;
    let Some(bytes) = store.get(&key, None)? else {
        return Ok(None);
    };
    let metadata = match format {
        ZarrFormat::V3 => v3::parse_node(&bytes),
    }
    .map_err(|source| Error::Metadata { key, source })?;
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
    let key = metadata_key(format, path)?;
    let bytes = match format {
        ZarrFormat::V3 => v3::serialize_node(metadata),
    };
    store.set(&key, &bytes)?;
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
        ZarrFormat::V3 => {
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
                if store.size(&metadata_key(format, &child)?)?.is_some() {
                    children.push(child);
                }
            }
            Ok(children)
        }
    }
}
