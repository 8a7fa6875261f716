//! Groups and the hierarchy: create, open, list children and walk.

use crate::array::Array;
use crate::error::{Error, NodeKind};
use crate::format::consolidate::{self, View};
use crate::format::{self, ZarrFormat};
use crate::metadata::{GroupMetadata, JsonMap, NodeMetadata};
use crate::node::NodePath;
use crate::store::Store;
use std::sync::Arc;

mod hierarchy;
pub use hierarchy::{NewNode, create_hierarchy};

/// A group in a store.
#[derive(Clone, Debug)]
pub struct Group {
    store: Arc<dyn Store>,
    path: NodePath,
    format: ZarrFormat,
    metadata: GroupMetadata,
    /// The consolidated view this group answers from, shared with the
    /// groups opened through it.
    consolidated: Option<Arc<View>>,
    warnings: Vec<String>,
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
    ///
    /// A group opened this way uses its consolidated metadata as
    /// [`Group::open`] does.
    pub fn open(store: Arc<dyn Store>, path: &str) -> Result<Self, Error> {
        let path = NodePath::new(path)?;
        let mut node = Self::open_path(store, path)?;
        if let Self::Group(group) = &mut node {
            group.load_consolidated();
        }
        Ok(node)
    }

    fn open_path(store: Arc<dyn Store>, path: NodePath) -> Result<Self, Error> {
        match format::read_node(store.as_ref(), &path)? {
            None => Err(Error::NodeNotFound { path }),
            Some((format, NodeMetadata::Group(metadata))) => Ok(Self::Group(Group {
                store,
                path,
                format,
                metadata,
                consolidated: None,
                warnings: Vec::new(),
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
    /// The group's document is created only if none is there, in one
    /// atomic step where the store has
    /// [`StoreCapabilities::conditional_create`](crate::store::StoreCapabilities::conditional_create):
    /// of several writers creating one group at once exactly one succeeds
    /// (see [`format::create_node`]). Elsewhere the store is checked and
    /// then written, which two writers can both pass.
    ///
    /// # Errors
    /// [`Error::NodeExists`] if a node is already there (or another writer
    /// created one meanwhile), or a store error.
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
        if let Some(found) = format::node_in_the_way(store.as_ref(), &path, NodeKind::Group)? {
            return Err(Error::NodeExists { path, found });
        }
        let metadata = GroupMetadata {
            attributes,
            extra_fields: JsonMap::new(),
        };
        // Another writer may create a node between the check above and
        // this write: create the document only if it is still absent,
        // atomically where the store can.
        format::create_node(
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
            consolidated: None,
            warnings: Vec::new(),
        })
    }

    /// Opens the group at `path`. If it holds consolidated metadata (v2
    /// `.zmetadata`, v3 `consolidated_metadata`, see [`crate::format::consolidate`]),
    /// [`Group::children`], [`Group::walk`] and [`Group::node`] answer from
    /// it without reading the store. Consolidated metadata that is invalid,
    /// or that disagrees with the group's own document, is ignored with a
    /// warning in [`Group::warnings`].
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
            Some((format, NodeMetadata::Array(_))) if !format.has_groups() => {
                Err(Error::InvalidMetadata {
                    path,
                    source: format::v1::no_groups(),
                })
            }
            Some((_, NodeMetadata::Array(_))) => Err(Error::WrongNodeKind {
                path,
                expected: NodeKind::Group,
                found: NodeKind::Array,
            }),
            Some((format, NodeMetadata::Group(metadata))) => {
                let mut group = Self {
                    store,
                    path,
                    format,
                    metadata,
                    consolidated: None,
                    warnings: Vec::new(),
                };
                group.load_consolidated();
                Ok(group)
            }
        }
    }

    /// Loads the group's consolidated metadata, if it has any; invalid
    /// consolidated metadata leaves a warning instead.
    fn load_consolidated(&mut self) {
        // Lent to the view as a node and taken back, not copied: a group's
        // attributes can be large.
        let node = NodeMetadata::Group(std::mem::take(&mut self.metadata));
        let loaded = consolidate::load_view(self.store.as_ref(), &self.path, self.format, &node);
        if let NodeMetadata::Group(metadata) = node {
            self.metadata = metadata;
        }
        match loaded {
            Ok(view) => self.consolidated = view.map(Arc::new),
            Err(warning) => {
                self.consolidated = None;
                self.warnings.push(warning);
            }
        }
    }

    /// Opens the group at `path` from its real documents only, ignoring
    /// any consolidated metadata.
    ///
    /// # Errors
    /// As [`Group::open`].
    pub fn open_without_consolidated(store: Arc<dyn Store>, path: &str) -> Result<Self, Error> {
        let mut group = Self::open(store, path)?;
        group.consolidated = None;
        group.warnings.clear();
        Ok(group)
    }

    /// Whether the group answers from consolidated metadata.
    #[must_use]
    pub fn is_consolidated(&self) -> bool {
        self.consolidated.is_some()
    }

    /// Warnings about consolidated metadata met so far: invalid, or
    /// disagreeing with the real documents (which were then used instead).
    #[must_use]
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The node at `path` relative to this group (`a/b`), from the
    /// consolidated metadata when the group has it (no store reads), else
    /// from the store. A node that the consolidated metadata lacks is looked
    /// up in the store.
    ///
    /// # Errors
    /// [`Error::NodeNotFound`] if there is no such node, or the errors of
    /// opening it.
    pub fn node(&self, path: &str) -> Result<Node, Error> {
        let path = self.descendant(path)?;
        if let Some(view) = &self.consolidated
            && let Some(metadata) = view.nodes.get(&path)
        {
            return self.node_from_view(view, path, metadata.clone());
        }
        Node::open_path(Arc::clone(&self.store), path)
    }

    /// Opens the node at `path` relative to this group from its real
    /// document, and compares that with the consolidated metadata. If they
    /// disagree (or the consolidated metadata lacks or invents the node),
    /// the group stops using the consolidated metadata, falls back to the
    /// real documents for everything after, and records a warning.
    ///
    /// # Errors
    /// As [`Group::node`].
    pub fn open_node_checked(&mut self, path: &str) -> Result<Node, Error> {
        let path = self.descendant(path)?;
        let real = format::read_node(self.store.as_ref(), &path)?;
        if let Some(view) = &self.consolidated {
            let agrees = match (view.nodes.get(&path), &real) {
                (Some(entry), Some((_, real))) => {
                    consolidate::without_consolidated(entry)
                        == consolidate::without_consolidated(real)
                }
                (None, None) => true,
                _ => false,
            };
            if !agrees {
                self.warnings.push(format!(
                    "the consolidated metadata of `{}` disagrees with the document of `{path}`; \
                     reading the real documents",
                    self.path
                ));
                self.consolidated = None;
            }
        }
        match real {
            None => Err(Error::NodeNotFound { path }),
            Some((format, NodeMetadata::Group(metadata))) => Ok(Node::Group(Self {
                store: Arc::clone(&self.store),
                path,
                format,
                metadata,
                consolidated: None,
                warnings: Vec::new(),
            })),
            Some((format, NodeMetadata::Array(metadata))) => Ok(Node::Array(Array::from_metadata(
                Arc::clone(&self.store),
                path,
                format,
                metadata,
            )?)),
        }
    }

    fn descendant(&self, path: &str) -> Result<NodePath, Error> {
        let joined = format!(
            "{}/{}",
            self.path.as_str().trim_end_matches('/'),
            path.trim_start_matches('/')
        );
        Ok(NodePath::new(&joined)?)
    }

    fn node_from_view(
        &self,
        view: &Arc<View>,
        path: NodePath,
        metadata: NodeMetadata,
    ) -> Result<Node, Error> {
        let format = view.format.unwrap_or(self.format);
        match metadata {
            NodeMetadata::Group(metadata) => Ok(Node::Group(Self {
                store: Arc::clone(&self.store),
                path,
                format,
                metadata,
                consolidated: Some(Arc::clone(view)),
                warnings: Vec::new(),
            })),
            NodeMetadata::Array(metadata) => Ok(Node::Array(Array::from_metadata(
                Arc::clone(&self.store),
                path,
                format,
                metadata,
            )?)),
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

    /// The children of the group (arrays and groups), sorted by name; from
    /// the consolidated metadata, without reading the store, when the group
    /// has it.
    ///
    /// # Errors
    /// A store error, or the error of opening a child whose document is invalid.
    pub fn children(&self) -> Result<Vec<Node>, Error> {
        if let Some(view) = &self.consolidated {
            return view
                .children(&self.path)
                .into_iter()
                .map(|(path, metadata)| self.node_from_view(view, path.clone(), metadata.clone()))
                .collect();
        }
        let store = self.store.as_ref();
        let Some(batch) = format::child_batch(store, &self.path, self.format)? else {
            let children = format::list_children(store, &self.path, self.format)?;
            let open = |child| Node::open_path(Arc::clone(&self.store), child);
            return self.open_all(children, open);
        };
        // Each candidate's document is in the batch: a candidate is a child
        // where it holds a node of the group's format.
        let open = |child: &NodePath| -> Result<Option<Node>, Error> {
            let Some(metadata) = batch.read(child)? else {
                return Ok(None);
            };
            Ok(Some(match metadata {
                NodeMetadata::Group(metadata) => Node::Group(Self {
                    store: Arc::clone(&self.store),
                    path: child.clone(),
                    format: self.format,
                    metadata,
                    consolidated: None,
                    warnings: Vec::new(),
                }),
                NodeMetadata::Array(metadata) => Node::Array(Array::from_metadata(
                    Arc::clone(&self.store),
                    child.clone(),
                    self.format,
                    metadata,
                )?),
            }))
        };
        let opened = self.open_all(batch.candidates(), open)?;
        Ok(opened.into_iter().flatten().collect())
    }

    /// `open` applied to every child, at once rather than one after
    /// another: on a remote store each child's documents are a round trip
    /// (on the remote pool); on a local one, parsing a document and
    /// preparing an array's codecs keeps a thread busy (on the threads
    /// array reads use).
    fn open_all<I: rayon::iter::IntoParallelIterator + Send, T: Send>(
        &self,
        children: I,
        open: impl Fn(I::Item) -> Result<T, Error> + Sync + Send,
    ) -> Result<Vec<T>, Error> {
        use rayon::prelude::*;
        let all = || children.into_par_iter().map(open).collect();
        match crate::array::remote_pool(self.store.concurrency()) {
            Some(pool) => pool.install(all),
            None => all(),
        }
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
