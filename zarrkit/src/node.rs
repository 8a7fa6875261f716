//! Node paths and the hierarchy: opening any node, listing and walking.

use crate::error::{Error, NodeKind};
use crate::format::{self, ZarrFormat};
// `NodePath` lives in the model, below `error` and `format`, which both
// use it (issue #11, item 4); re-exported here at its old public path.
pub use crate::metadata::{NodePath, NodePathError};
use crate::store::{ByteRange, Store, StoreKey};

/// The key that marks a store as the unfinished destination of a
/// migration ([`crate::migrate`]): written before anything else, removed
/// once every array has been copied and verified.
///
/// It is no node document of any format (v3 `zarr.json`, v2 `.zarray`,
/// `.zgroup`, `.zattrs`, v1 `meta`, the drafts' `meta/` tree), and no chunk
/// key either, so other Zarr readers ignore it (zarr-python 3 warns that
/// the object is not part of the hierarchy).
pub const MIGRATION_MARKER: &str = "zarrkit-migration-unfinished.json";

/// The marker's key.
pub(crate) fn migration_marker() -> StoreKey {
    // A constant, valid key: one plain segment.
    StoreKey::new(MIGRATION_MARKER).unwrap_or_else(|_| unreachable!())
}

/// Refuses a store that holds the [`MIGRATION_MARKER`]: the destination of
/// a migration that has not finished, whose chunks may be missing. One
/// store request (for the marker's existence).
///
/// # Errors
/// [`Error::UnfinishedMigration`] naming the marker, or a store error.
pub fn check_finished(store: &dyn Store) -> Result<(), Error> {
    let key = migration_marker();
    // An empty suffix: asks whether the key exists without reading it.
    if store.get(&key, Some(ByteRange::Suffix(0)))?.is_some() {
        return Err(Error::UnfinishedMigration { key });
    }
    Ok(())
}

/// Whether a node exists at `path` in any format, and if so its format and
/// kind (the storage protocol's "decide whether a node exists"). In the v3
/// drafts an implicit group counts as a group. See
/// [`format::node_exists`].
///
/// # Errors
/// [`Error::NodePath`] for an invalid path, [`Error::Metadata`] naming the
/// key of a document that exists but is invalid, or a store error.
pub fn exists(store: &dyn Store, path: &str) -> Result<Option<(ZarrFormat, NodeKind)>, Error> {
    format::node_exists(store, &NodePath::new(path)?)
}

/// Erases the node at `path` (an array, or a group, explicit or implicit)
/// with everything below it, in whichever format it is, and returns that
/// format. The format is found as [`exists`] finds it; when the node's
/// document is invalid, formats are tried in the probe order of
/// [`crate::format`] by their keys alone, so a broken node can be erased
/// too. See [`format::erase_node`] for what each format erases.
///
/// # Errors
/// [`Error::NodePath`] for an invalid path, [`Error::NodeNotFound`] if no
/// format has a node there, or a store error.
pub fn erase(store: &dyn Store, path: &str) -> Result<ZarrFormat, Error> {
    format::erase_node_in_any_format(store, &NodePath::new(path)?)
}

/// Every node in the store from the root down, depth first, parents before
/// children and siblings sorted by name, each with its kind and format (the
/// storage protocol's "discover all nodes"). Empty when the store has no
/// root node; a v1 store is its one array. See [`format::list_nodes`].
///
/// # Errors
/// [`Error::Metadata`] naming the key of an invalid document, or a store
/// error (including a store that cannot list).
pub fn list_nodes(store: &dyn Store) -> Result<Vec<(NodePath, NodeKind, ZarrFormat)>, Error> {
    format::list_nodes(store)
}
