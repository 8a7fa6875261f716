//! Groups and the hierarchy: create, open, list children and walk.

use crate::array::Array;
use crate::error::{Error, NodeKind};
use crate::format::{self, ZarrFormat};
use crate::metadata::{GroupMetadata, JsonMap, NodeMetadata};
use crate::node::NodePath;
use crate::store::Store;
use std::sync::Arc;

/// A group in a store.
#[derive(Clone, Debug)]
pub struct Group {
    store: Arc<dyn Store>,
    path: NodePath,
    format: ZarrFormat,
    metadata: GroupMetadata,
}

/// Any node: an array or a group.
// Nodes are opened a handful at a time, never stored in bulk, so the size
// difference between the variants costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Node {
    /// An array.
    Array(Array),
    /// A group.
    Group(Group),
}

impl Node {
    /// Opens whatever node is at `path`, finding its format.
    ///
    /// # Errors
    /// [`Error::NodeNotFound`] if nothing is there, or the errors of opening
    /// an array or group.
    pub fn open(store: Arc<dyn Store>, path: &str) -> Result<Self, Error> {
        let path = NodePath::new(path)?;
        Self::open_path(store, path)
    }

    fn open_path(store: Arc<dyn Store>, path: NodePath) -> Result<Self, Error> {
        match format::read_node(store.as_ref(), &path)? {
            None => Err(Error::NodeNotFound { path }),
            Some((format, NodeMetadata::Group(metadata))) => Ok(Self::Group(Group {
                store,
                path,
                format,
                metadata,
            })),
            Some((format, NodeMetadata::Array(metadata))) => Ok(Self::Array(Array::from_metadata(
                store, path, format, metadata,
            )?)),
        }
    }

    /// Erases the node and everything below it from its store (see
    /// [`format::erase_node`] for what each format erases).
    ///
    /// # Errors
    /// [`Error::NodeNotFound`] if the node has already gone, or a store error.
    pub fn erase(self) -> Result<(), Error> {
        let (store, format) = match &self {
            Self::Array(a) => (a.store(), a.format()),
            Self::Group(g) => (g.store(), g.format()),
        };
        format::erase_node(store.as_ref(), self.path(), format)
    }

    /// The node's path.
    #[must_use]
    pub fn path(&self) -> &NodePath {
        match self {
            Self::Array(a) => a.path(),
            Self::Group(g) => g.path(),
        }
    }

    /// Whether it is an array or a group.
    #[must_use]
    pub fn kind(&self) -> NodeKind {
        match self {
            Self::Array(_) => NodeKind::Array,
            Self::Group(_) => NodeKind::Group,
        }
    }

    /// The node's format.
    #[must_use]
    pub fn format(&self) -> ZarrFormat {
        match self {
            Self::Array(a) => a.format(),
            Self::Group(g) => g.format(),
        }
    }

    /// The node's attributes.
    #[must_use]
    pub fn attributes(&self) -> &JsonMap {
        match self {
            Self::Array(a) => a.attributes(),
            Self::Group(g) => g.attributes(),
        }
    }
}

impl Group {
    /// Creates a group at `path` in final v3 with `attributes`.
    ///
    /// # Errors
    /// [`Error::NodeExists`] if a node is already there, or a store error.
    pub fn create(store: Arc<dyn Store>, path: &str, attributes: JsonMap) -> Result<Self, Error> {
        Self::create_as(store, path, ZarrFormat::V3, attributes)
    }

    /// Creates a group at `path` in the given format.
    ///
    /// # Errors
    /// As [`Group::create`].
    pub fn create_as(
        store: Arc<dyn Store>,
        path: &str,
        format: ZarrFormat,
        attributes: JsonMap,
    ) -> Result<Self, Error> {
        let path = NodePath::new(path)?;
        if let Some((_, existing)) = format::read_node(store.as_ref(), &path)? {
            return Err(Error::NodeExists {
                path,
                found: match existing {
                    NodeMetadata::Array(_) => NodeKind::Array,
                    NodeMetadata::Group(_) => NodeKind::Group,
                },
            });
        }
        let metadata = GroupMetadata {
            attributes,
            extra_fields: JsonMap::new(),
        };
        format::write_node(
            store.as_ref(),
            &path,
            format,
            &NodeMetadata::Group(metadata.clone()),
        )?;
        Ok(Self {
            store,
            path,
            format,
            metadata,
        })
    }

    /// Opens the group at `path`.
    ///
    /// # Errors
    /// [`Error::NodeNotFound`] if nothing is there, [`Error::WrongNodeKind`]
    /// for an array ([`Error::InvalidMetadata`] saying that v1 has no groups
    /// for a v1 store), or [`Error::Metadata`] for an invalid document.
    pub fn open(store: Arc<dyn Store>, path: &str) -> Result<Self, Error> {
        let path = NodePath::new(path)?;
        match format::read_node(store.as_ref(), &path)? {
            None => Err(Error::NodeNotFound { path }),
            // v1 has no groups: say so rather than that `/` is an array.
            Some((ZarrFormat::V1, NodeMetadata::Array(_))) => Err(Error::InvalidMetadata {
                path,
                source: format::v1::no_groups(),
            }),
            Some((_, NodeMetadata::Array(_))) => Err(Error::WrongNodeKind {
                path,
                expected: NodeKind::Group,
                found: NodeKind::Array,
            }),
            Some((format, NodeMetadata::Group(metadata))) => Ok(Self {
                store,
                path,
                format,
                metadata,
            }),
        }
    }

    /// The group's path.
    #[must_use]
    pub fn path(&self) -> &NodePath {
        &self.path
    }

    /// The group's format.
    #[must_use]
    pub fn format(&self) -> ZarrFormat {
        self.format
    }

    /// The group's metadata.
    #[must_use]
    pub fn metadata(&self) -> &GroupMetadata {
        &self.metadata
    }

    /// The user attributes.
    #[must_use]
    pub fn attributes(&self) -> &JsonMap {
        &self.metadata.attributes
    }

    /// The store holding the group.
    #[must_use]
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Replaces the user attributes and rewrites the document, keeping every
    /// other field.
    ///
    /// # Errors
    /// A store error.
    pub fn set_attributes(&mut self, attributes: JsonMap) -> Result<(), Error> {
        let mut metadata = self.metadata.clone();
        metadata.attributes = attributes;
        format::write_node(
            self.store.as_ref(),
            &self.path,
            self.format,
            &NodeMetadata::Group(metadata.clone()),
        )?;
        self.metadata = metadata;
        Ok(())
    }

    /// Erases the child `name` (an array, or a group with everything below
    /// it, explicit or implicit in the v3 drafts).
    ///
    /// # Errors
    /// [`Error::NodePath`] if `name` is not one valid node name,
    /// [`Error::NodeNotFound`] if the group has no such child, or a store
    /// error.
    pub fn erase_child(&self, name: &str) -> Result<(), Error> {
        let child = self.path.child(name)?;
        format::erase_node(self.store.as_ref(), &child, self.format)
    }

    /// The children of the group (arrays and groups), sorted by name.
    ///
    /// # Errors
    /// A store error, or the error of opening a child whose document is invalid.
    pub fn children(&self) -> Result<Vec<Node>, Error> {
        format::list_children(self.store.as_ref(), &self.path, self.format)?
            .into_iter()
            .map(|child| Node::open_path(Arc::clone(&self.store), child))
            .collect()
    }

    /// Every node below the group, depth first, parents before children and
    /// siblings sorted by name (the group itself is not included).
    ///
    /// # Errors
    /// As [`Group::children`].
    pub fn walk(&self) -> Result<Vec<Node>, Error> {
        let mut out = Vec::new();
        self.walk_into(&mut out)?;
        Ok(out)
    }

    fn walk_into(&self, out: &mut Vec<Node>) -> Result<(), Error> {
        for child in self.children()? {
            let group = match &child {
                Node::Group(g) => Some(g.clone()),
                Node::Array(_) => None,
            };
            out.push(child);
            if let Some(group) = group {
                group.walk_into(out)?;
            }
        }
        Ok(())
    }
}
