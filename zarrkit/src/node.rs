//! Node paths and the hierarchy: opening any node, listing and walking.

use crate::error::{Error, NodeKind};
use crate::format::{self, ZarrFormat};
use crate::store::{ByteRange, Store, StoreKey, StorePrefix};
use std::fmt;

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
    let path = NodePath::new(path)?;
    match format::node_exists(store, &path) {
        Ok(Some((found, _))) => {
            format::erase_node(store, &path, found)?;
            return Ok(found);
        }
        Ok(None) => return Err(Error::NodeNotFound { path }),
        Err(Error::Metadata { .. }) => {}
        Err(other) => return Err(other),
    }
    for &candidate in ZarrFormat::ALL {
        match format::erase_node(store, &path, candidate) {
            Ok(()) => return Ok(candidate),
            Err(Error::NodeNotFound { .. }) => {}
            Err(other) => return Err(other),
        }
    }
    Err(Error::NodeNotFound { path })
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

/// The path of a node in a hierarchy: `/` for the root, `/a/b` below it.
///
/// v3 core, "Node names": names are non-empty, contain no `/`, are not only
/// periods, and do not start with `__`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodePath(String);

/// Errors in a node path.
#[derive(Debug, thiserror::Error)]
#[error("invalid node path `{path}`: {reason}")]
pub struct NodePathError {
    /// The rejected path.
    pub path: String,
    /// Which rule it breaks.
    pub reason: &'static str,
}

impl NodePath {
    /// The root node `/`.
    #[must_use]
    pub fn root() -> Self {
        Self("/".to_string())
    }

    /// Parses a path; the leading `/` is optional and a trailing `/` is
    /// ignored, so `a/b`, `/a/b` and `/a/b/` are the same node.
    ///
    /// # Errors
    /// [`NodePathError`] if a name breaks the v3 node name rules.
    pub fn new(path: &str) -> Result<Self, NodePathError> {
        let trimmed = path.trim_start_matches('/').trim_end_matches('/');
        if trimmed.is_empty() {
            return Ok(Self::root());
        }
        let error = |reason| NodePathError {
            path: path.escape_debug().to_string(),
            reason,
        };
        for name in trimmed.split('/') {
            if name.is_empty() {
                return Err(error("it has an empty name"));
            }
            if name.chars().all(|c| c == '.') {
                return Err(error("a name consists only of periods"));
            }
            if name.starts_with("__") {
                return Err(error("a name starts with the reserved prefix `__`"));
            }
            if name == "zarr.json" {
                return Err(error("a name is `zarr.json`"));
            }
            if name.contains('\\') || name.contains('\0') {
                return Err(error("a name contains a backslash or NUL"));
            }
        }
        Ok(Self(format!("/{trimmed}")))
    }

    /// The path as a string, starting with `/`.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the root.
    #[must_use]
    pub fn is_root(&self) -> bool {
        self.0 == "/"
    }

    /// The node's name (empty for the root).
    #[must_use]
    pub fn name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or_default()
    }

    /// The parent path, or `None` for the root.
    #[must_use]
    pub fn parent(&self) -> Option<Self> {
        if self.is_root() {
            return None;
        }
        let i = self.0.rfind('/').unwrap_or(0);
        Some(if i == 0 {
            Self::root()
        } else {
            Self(self.0[..i].to_string())
        })
    }

    /// The child `name` of this node.
    ///
    /// # Errors
    /// [`NodePathError`] if `name` is not a valid node name.
    pub fn child(&self, name: &str) -> Result<Self, NodePathError> {
        if name.is_empty() || name.contains('/') {
            return Err(NodePathError {
                path: format!("{}/{}", self.0.trim_end_matches('/'), name.escape_debug()),
                reason: "a child name must be one non-empty name without `/`",
            });
        }
        Self::new(&format!("{}/{name}", self.0.trim_end_matches('/')))
    }

    /// The key prefix of this path in a v3-style layout: `""` for the root,
    /// `a/b/` for `/a/b`.
    #[must_use]
    pub fn to_prefix(&self) -> StorePrefix {
        if self.is_root() {
            return StorePrefix::root();
        }
        // Names were validated in `new`, so the prefix is always valid.
        StorePrefix::new(format!("{}/", &self.0[1..])).unwrap_or_else(|_| StorePrefix::root())
    }
}

impl fmt::Display for NodePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for NodePath {
    type Err = NodePathError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalise_slashes() {
        assert_eq!(NodePath::new("a/b").unwrap().as_str(), "/a/b");
        assert_eq!(NodePath::new("/a/b/").unwrap().as_str(), "/a/b");
        assert!(NodePath::new("").unwrap().is_root());
        assert_eq!(NodePath::new("/a/b").unwrap().to_prefix().as_str(), "a/b/");
        assert_eq!(
            NodePath::new("/a/b").unwrap().parent().unwrap().as_str(),
            "/a"
        );
        assert!(NodePath::new("/a").unwrap().parent().unwrap().is_root());
    }

    #[test]
    fn invalid_names_are_rejected() {
        for bad in ["a//b", "/a/../b", "/.", "/__x", "a/zarr.json", "a\\b"] {
            assert!(NodePath::new(bad).is_err(), "{bad}");
        }
    }
}
