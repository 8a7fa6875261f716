//! Creating many nodes at once: [`create_hierarchy`], after zarr-python
//! 3's `zarr.create_hierarchy(store=, nodes=, overwrite=)`.

use super::{Group, Node};
use crate::array::ArrayBuilder;
use crate::error::{Error, HierarchyProblem, NodeKind};
use crate::format::{self, ZarrFormat};
use crate::metadata::{GroupMetadata, JsonMap, NodeMetadata};
use crate::node::NodePath;
use crate::store::{Store, StoreError};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// One node for [`create_hierarchy`]: a group, an array as an
/// [`ArrayBuilder`] describes it, or either from its metadata (a parsed
/// document, such as [`Array::metadata`](crate::Array::metadata) gives).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum NewNode {
    /// A group with these attributes, in `format`.
    Group {
        /// The format to write.
        format: ZarrFormat,
        /// The user attributes.
        attributes: JsonMap,
    },
    /// An array as the builder would create it, in the builder's format
    /// (the batch's `overwrite` applies, not the builder's).
    Array(ArrayBuilder),
    /// A node from its metadata, in `format`.
    Metadata {
        /// The format to write.
        format: ZarrFormat,
        /// The node's metadata.
        metadata: NodeMetadata,
    },
}

impl NewNode {
    /// A Zarr v3 group with these attributes.
    #[must_use]
    pub fn group(attributes: JsonMap) -> Self {
        Self::Group {
            format: ZarrFormat::V3,
            attributes,
        }
    }
}

impl From<ArrayBuilder> for NewNode {
    fn from(builder: ArrayBuilder) -> Self {
        Self::Array(builder)
    }
}

/// A node of the batch, checked and ready to write.
struct Planned {
    format: ZarrFormat,
    metadata: NodeMetadata,
    node: Node,
    /// A parent group no node given names, added to complete the hierarchy.
    implicit: bool,
    /// Whether to write it: not an implicit group already there.
    write: bool,
}

/// Creates many nodes in `store` at once: each of `nodes` (a path and what
/// to create there), and a group (empty attributes, the nodes' format) at
/// every ancestor of theirs that none of `nodes` names and the store does
/// not hold yet, the root included. Returns the nodes written, sorted by
/// path (parents before children).
///
/// What it checks, before it writes anything: that every node is valid
/// (as [`ArrayBuilder::create`] and [`Group::create_as`] check), that no
/// path is given twice, that no node lies below an array, and that all
/// nodes have one format (as zarr-python's `create_hierarchy` requires);
/// then that no node is at any of the paths given, in any format
/// (v3 `zarr.json`, v2 `.zarray` or `.zgroup`, v1 `meta`, the drafts'
/// documents; one whose documents do not read counts too), as creating
/// one node checks. An ancestor added as a group may be a group already
/// (of any format: it is kept), but not an array.
///
/// With `overwrite` off, a node at a given path refuses the whole batch
/// with [`Error::NodeExists`] naming the first such path, and nothing is
/// written. With `overwrite` on, each node at a given path is erased with
/// everything below it (as zarr-python does) before anything is written;
/// an array where a parent group is to be added still refuses the batch,
/// since it was not named.
///
/// The existence check costs one listing per parent directory, not probes
/// per node: only names the listing shows are probed (where the store
/// cannot list, or its root `zarr.json` is a v3 draft's entry point, every
/// path is probed). The documents are then written level by level,
/// parents before children, each level in parallel (on rayon's threads on
/// a local store; on a remote store many requests in flight), each one
/// atomically and created only where none is, as [`ArrayBuilder::create`]
/// writes it: the same bytes, and a node another writer creates meanwhile
/// fails the batch with [`Error::NodeExists`] rather than being replaced
/// (an implicit parent group another writer created is taken as it is).
///
/// On an error while writing, the nodes written before it stay, each a
/// whole, valid document (with the parents they need); nothing is rolled
/// back. The error names the node path or the document's key.
///
/// ```
/// use std::sync::Arc;
/// use zarrkit::{Array, Group, NewNode, create_hierarchy, metadata::{DataType, JsonMap}};
/// use zarrkit::store::MemoryStore;
///
/// let store = Arc::new(MemoryStore::new());
/// let nodes = (0..3).map(|i| {
///     let array = Array::builder(&[64, 64], DataType::UInt16, &[32, 32]);
///     (format!("/data/a{i}"), NewNode::from(array))
/// });
/// let created = create_hierarchy(store.clone(), nodes, false)?;
/// // The root and `/data` were added as groups.
/// let paths: Vec<_> = created.iter().map(|n| n.path().to_string()).collect();
/// assert_eq!(paths, ["/", "/data", "/data/a0", "/data/a1", "/data/a2"]);
/// assert_eq!(Group::open(store, "/data")?.children()?.len(), 3);
/// # Ok::<(), zarrkit::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidHierarchy`] for nodes that do not form a hierarchy,
/// [`Error::InvalidMetadata`] or [`Error::Codecs`] for an invalid node,
/// [`Error::NodePath`] for an invalid path, [`Error::NodeExists`] for a
/// node in the way, or a store error; each naming the node or key.
pub fn create_hierarchy<P: AsRef<str>>(
    store: Arc<dyn Store>,
    nodes: impl IntoIterator<Item = (P, NewNode)>,
    overwrite: bool,
) -> Result<Vec<Node>, Error> {
    let mut planned = plan(&store, nodes)?;
    if planned.is_empty() {
        return Ok(Vec::new());
    }
    let paths: Vec<NodePath> = planned.keys().cloned().collect();
    let kinds: Vec<NodeKind> = planned.values().map(|entry| entry.node.kind()).collect();
    let found = find_existing(store.as_ref(), &paths, &kinds)?;
    let mut erase: Vec<(&NodePath, ZarrFormat)> = Vec::new();
    for ((path, entry), found) in paths.iter().zip(planned.values_mut()).zip(found) {
        let Some(found) = found else { continue };
        if entry.implicit {
            if found == NodeKind::Array {
                return Err(Error::NodeExists {
                    path: path.clone(),
                    found,
                });
            }
            entry.write = false;
        } else if overwrite {
            erase.push((path, entry.format));
        } else {
            return Err(Error::NodeExists {
                path: path.clone(),
                found,
            });
        }
    }
    // Erasing a node erases what is below it, an implicit parent group
    // found there too: write that one after all.
    for (erased, _) in &erase {
        // The paths starting with `/g` follow it in order, `/g-x` (which
        // is not below it) among them.
        let starting_with = planned
            .range_mut((*erased).clone()..)
            .take_while(|(path, _)| path.as_str().starts_with(erased.as_str()));
        for (path, entry) in starting_with {
            if is_below_or_at(path, erased) {
                entry.write = true;
            }
        }
    }
    // A node below one erased goes with it (`erase` is sorted: parents
    // come first).
    let mut prefixes: Vec<(&NodePath, _)> = Vec::new();
    for (path, format) in erase {
        if !prefixes
            .iter()
            .any(|(above, _)| is_below_or_at(path, above))
        {
            prefixes.push((path, format::node_prefix(format, path)));
        }
    }
    let erase_one =
        |(_, prefix): &(&NodePath, crate::store::StorePrefix)| store.erase_prefix(prefix);
    match crate::array::remote_pool(store.concurrency()) {
        Some(pool) if prefixes.len() > 1 => {
            pool.install(|| prefixes.par_iter().try_for_each(erase_one))?;
        }
        _ => prefixes.iter().try_for_each(erase_one)?,
    }
    write_levels(store.as_ref(), &planned, overwrite)?;
    Ok(planned
        .into_values()
        .filter(|entry| entry.write)
        .map(|entry| entry.node)
        .collect())
}

/// Whether `path` is `ancestor` or lies below it.
fn is_below_or_at(path: &NodePath, ancestor: &NodePath) -> bool {
    ancestor.is_root()
        || path == ancestor
        || path
            .as_str()
            .strip_prefix(ancestor.as_str())
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Checks every node (in parallel: resolving an array's codecs is most of
/// the work before the store is touched) and adds the implicit parent
/// groups.
fn plan<P: AsRef<str>>(
    store: &Arc<dyn Store>,
    nodes: impl IntoIterator<Item = (P, NewNode)>,
) -> Result<BTreeMap<NodePath, Planned>, Error> {
    let given: Vec<(NodePath, NewNode)> = nodes
        .into_iter()
        .map(|(path, new)| Ok((NodePath::new(path.as_ref())?, new)))
        .collect::<Result<_, Error>>()?;
    let prepared: Vec<Result<(NodePath, Planned), Error>> = given
        .into_par_iter()
        .map(|(path, new)| {
            let planned = prepare(store, &path, new)?;
            Ok((path, planned))
        })
        .collect();
    // The error of the first node given that fails, whichever thread saw
    // it first.
    let prepared = prepared.into_iter().collect::<Result<Vec<_>, Error>>()?;
    let Some(first) = prepared.first().map(|(_, p)| p.format) else {
        return Ok(BTreeMap::new());
    };
    let mut planned = BTreeMap::new();
    for (path, entry) in prepared {
        if entry.format != first {
            return Err(Error::InvalidHierarchy {
                path,
                problem: HierarchyProblem::MixedFormats {
                    format: entry.format.name(),
                    first: first.name(),
                },
            });
        }
        if planned.contains_key(&path) {
            return Err(Error::InvalidHierarchy {
                path,
                problem: HierarchyProblem::Duplicate,
            });
        }
        planned.insert(path, entry);
    }
    let mut implicit: BTreeSet<NodePath> = BTreeSet::new();
    for path in planned.keys() {
        let mut ancestor = path.parent();
        while let Some(parent) = ancestor {
            match planned.get(&parent) {
                Some(entry) if entry.node.kind() == NodeKind::Array => {
                    return Err(Error::InvalidHierarchy {
                        path: parent,
                        problem: HierarchyProblem::ArrayWithChildren {
                            child: path.clone(),
                        },
                    });
                }
                // Its own ancestors are seen to from it.
                Some(_) => break,
                None => {}
            }
            ancestor = parent.parent();
            implicit.insert(parent);
        }
    }
    for path in implicit {
        let new = NewNode::Group {
            format: first,
            attributes: JsonMap::new(),
        };
        let mut entry = prepare(store, &path, new)?;
        entry.implicit = true;
        planned.insert(path, entry);
    }
    Ok(planned)
}

/// Checks one node, as creating it alone would.
fn prepare(store: &Arc<dyn Store>, path: &NodePath, new: NewNode) -> Result<Planned, Error> {
    let (format, metadata) = match new {
        NewNode::Array(builder) => {
            let (array, metadata) = builder.prepare(Arc::clone(store), path)?;
            return Ok(Planned {
                format: array.format(),
                metadata,
                node: Node::Array(array),
                implicit: false,
                write: true,
            });
        }
        NewNode::Group { format, attributes } => (
            format,
            NodeMetadata::Group(GroupMetadata {
                attributes,
                extra_fields: JsonMap::new(),
            }),
        ),
        NewNode::Metadata { format, metadata } => (format, metadata),
    };
    format::check_representable(format, path, &metadata)?;
    let node = match &metadata {
        NodeMetadata::Array(array) => Node::Array(crate::Array::from_metadata(
            Arc::clone(store),
            path.clone(),
            format,
            array.clone(),
        )?),
        NodeMetadata::Group(group) => Node::Group(Group {
            store: Arc::clone(store),
            path: path.clone(),
            format,
            metadata: group.clone(),
            consolidated: None,
            warnings: Vec::new(),
        }),
    };
    Ok(Planned {
        format,
        metadata,
        node,
        implicit: false,
        write: true,
    })
}

/// What is at each of `paths` (sorted), where nodes of `kinds` are to be
/// created: the kind of node in the way, as creating one node finds it,
/// probing only where [`may_hold_nodes`] says a node may be; the probes
/// run at once on a remote store.
fn find_existing(
    store: &dyn Store,
    paths: &[NodePath],
    kinds: &[NodeKind],
) -> Result<Vec<Option<NodeKind>>, Error> {
    let may_hold = may_hold_nodes(store, paths)?;
    let probe = |((path, kind), may_hold): ((&NodePath, &NodeKind), bool)| {
        if !may_hold {
            return Ok(None);
        }
        format::node_in_the_way(store, path, *kind)
    };
    let pairs = paths.iter().zip(kinds).zip(may_hold);
    match crate::array::remote_pool(store.concurrency()) {
        Some(pool) => pool.install(|| {
            pairs
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(probe)
                .collect()
        }),
        None => pairs.map(probe).collect(),
    }
}

/// For each of `paths` (sorted, each one's ancestors among them or
/// not), whether a node may be there: `false` where the listing of its
/// parent directory lacks its name (see
/// [`format::nodes_are_listed_by_directory`]). One listing per parent
/// directory, parents of one depth at once on a remote store; a
/// directory its own parent's listing lacks is not listed (it holds
/// nothing), so a new subtree costs one listing. Every path answers
/// `true` where listings cannot tell, and the root always does.
fn may_hold_nodes(store: &dyn Store, paths: &[NodePath]) -> Result<Vec<bool>, Error> {
    if !format::nodes_are_listed_by_directory(store)? {
        return Ok(vec![true; paths.len()]);
    }
    let mut by_depth: BTreeMap<usize, Vec<NodePath>> = BTreeMap::new();
    for parent in paths
        .iter()
        .filter_map(NodePath::parent)
        .collect::<BTreeSet<_>>()
    {
        by_depth.entry(depth(&parent)).or_default().push(parent);
    }
    let mut listed: HashMap<NodePath, HashSet<String>> = HashMap::new();
    for parents in by_depth.into_values() {
        let to_list: Vec<NodePath> = parents
            .into_iter()
            .filter(|parent| {
                let absent = parent
                    .parent()
                    .and_then(|grandparent| listed.get(&grandparent))
                    .is_some_and(|names| !names.contains(parent.name()));
                if absent {
                    listed.insert(parent.clone(), HashSet::new());
                }
                !absent
            })
            .collect();
        let list = |parent: &NodePath| -> Result<HashSet<String>, StoreError> {
            let listing = store.list_dir(&parent.to_prefix())?;
            Ok(listing
                .prefixes
                .iter()
                .filter_map(|prefix| {
                    let name = prefix.as_str().trim_end_matches('/').rsplit('/').next()?;
                    Some(name.to_string())
                })
                .collect())
        };
        let listings: Vec<Result<HashSet<String>, StoreError>> =
            match crate::array::remote_pool(store.concurrency()) {
                Some(pool) if to_list.len() > 1 => {
                    pool.install(|| to_list.par_iter().map(list).collect())
                }
                _ => to_list.iter().map(list).collect(),
            };
        for (parent, names) in to_list.into_iter().zip(listings) {
            match names {
                Ok(names) => listed.insert(parent, names),
                Err(StoreError::Unsupported { .. }) => return Ok(vec![true; paths.len()]),
                Err(err) => return Err(err.into()),
            };
        }
    }
    Ok(paths
        .iter()
        .map(|path| match path.parent() {
            None => true,
            Some(parent) => listed
                .get(&parent)
                .is_none_or(|names| names.contains(path.name())),
        })
        .collect())
}

/// The number of names in `path` (0 for the root).
fn depth(path: &NodePath) -> usize {
    path.as_str().matches('/').count() - usize::from(path.is_root())
}

/// Writes the documents of `planned` level by level (parents first), each
/// level in parallel; the first error (in path order) of a level stops
/// the batch once the level's writes in flight are done.
fn write_levels(
    store: &dyn Store,
    planned: &BTreeMap<NodePath, Planned>,
    overwrite: bool,
) -> Result<(), Error> {
    let mut levels: BTreeMap<usize, Vec<(&NodePath, &Planned)>> = BTreeMap::new();
    for (path, entry) in planned.iter().filter(|(_, entry)| entry.write) {
        levels.entry(depth(path)).or_default().push((path, entry));
    }
    let write = |(path, entry): &(&NodePath, &Planned)| -> Result<(), Error> {
        if overwrite && !entry.implicit {
            // Erased above, as the builder erases a node it replaces.
            return format::write_node(store, path, entry.format, &entry.metadata);
        }
        match format::create_node(store, path, entry.format, &entry.metadata) {
            // Another writer created the parent group meanwhile: it is there.
            Err(Error::NodeExists {
                found: NodeKind::Group,
                ..
            }) if entry.implicit => Ok(()),
            result => result,
        }
    };
    let pool = crate::array::remote_pool(store.concurrency());
    for level in levels.values() {
        let results: Vec<Result<(), Error>> = match pool {
            _ if level.len() < 2 => level.iter().map(write).collect(),
            Some(pool) => pool.install(|| level.par_iter().map(write).collect()),
            None => level.par_iter().map(write).collect(),
        };
        results.into_iter().collect::<Result<(), Error>>()?;
    }
    Ok(())
}
