//! What the commands that read or edit one node share (`get`, `set`,
//! `attrs`, `rm`, `resize`): telling a NODE argument from the arguments
//! after it, opening the node, and keeping consolidated metadata true
//! after an edit.

use super::{Location, locate, open_located};
use anyhow::Context;
use std::path::Path;
use std::sync::Arc;
use zarrkit::consolidate;
use zarrkit::store::Store;
use zarrkit::{Group, NodePath};

/// The help text on how STORE[/PATH] [NODE] is read by these commands.
pub const NODE_ARG_HELP: &str = "\
The node is named as in the other commands, `STORE[/PATH]` (`data.zarr/a/b`), \
or by the store root and a NODE argument after it (`data.zarr /a/b`). An \
argument after STORE[/PATH] is taken as the NODE when it starts with `/`, or \
when STORE[/PATH] does not already name the kind of node the command works \
on (for `get` and `set`, an array; for `attrs`, any node, so that \
`attrs get data.zarr units` reads the root's `units`); otherwise it is the next argument \
(the selection, or the attribute key). For `rm` and `resize` it is always \
the NODE.";

/// A located node, the store opened, and the arguments after the node.
pub struct Target {
    pub store: Arc<dyn Store>,
    pub location_root: std::path::PathBuf,
    pub node: NodePath,
    /// The arguments that followed the node.
    pub rest: Vec<String>,
}

/// Locates the node `target` names, taking the first of `extra` as the
/// NODE when it starts with `/`, or when `target` alone does not name a
/// node that `names_wanted` accepts (`names_wanted(store, node)`); the
/// remaining arguments are returned in [`Target::rest`]. `max_rest` is how
/// many arguments may follow the node: with more, the first is the NODE.
///
/// # Errors
/// If the store cannot be located or opened.
pub fn locate_node(
    target: &Path,
    extra: &[String],
    max_rest: usize,
    names_wanted: impl Fn(&Arc<dyn Store>, &NodePath) -> bool,
) -> anyhow::Result<Target> {
    let explicit = match extra.first() {
        Some(first) if first.starts_with('/') || extra.len() > max_rest => Some(first.clone()),
        _ => None,
    };
    let open = |node: Option<&str>| -> anyhow::Result<(Location, Arc<dyn Store>)> {
        let location = locate(target, node)?;
        let store = open_located(&location)?;
        Ok((location, store))
    };
    let (location, store, rest) = if let Some(node) = explicit {
        let (location, store) = open(Some(&node))?;
        (location, store, extra[1..].to_vec())
    } else {
        let (location, store) = open(None)?;
        // `data.zarr/missing 0`: the target names a node that is not there;
        // keep it, so that the error names it.
        let missing = !location.node.is_root() && !exists(&store, &location.node);
        if extra.is_empty() || missing || names_wanted(&store, &location.node) {
            (location, store, extra.to_vec())
        } else {
            // `data.zarr a …`: the store root, then the node (named from
            // the store root, as `export STORE NODE` names it).
            let location = Location {
                node: NodePath::new(&extra[0])?,
                ..location
            };
            (location, store, extra[1..].to_vec())
        }
    };
    Ok(Target {
        store,
        location_root: location.root,
        node: location.node,
        rest,
    })
}

/// Whether `node` is an array (opening only its document).
pub fn is_array(store: &Arc<dyn Store>, node: &NodePath) -> bool {
    matches!(
        zarrkit::node::exists(store.as_ref(), node.as_str()),
        Ok(Some((_, zarrkit::NodeKind::Array)))
    )
}

/// Whether a node of any kind is at `node`.
pub fn exists(store: &Arc<dyn Store>, node: &NodePath) -> bool {
    matches!(
        zarrkit::node::exists(store.as_ref(), node.as_str()),
        Ok(Some(_))
    )
}

/// What happened to the consolidated metadata after an edit.
#[derive(Debug, Default)]
pub struct Consolidated {
    /// The groups whose consolidated metadata was rewritten (`/`, `/a`).
    pub updated: Vec<String>,
}

/// Rewrites the consolidated metadata of every group from the root down to
/// `node`'s parent that has some (zarr-python's `consolidate_metadata`
/// leaves it stale until run again; zarrkit keeps it true), after `node`
/// was edited or removed. `node` itself is rewritten too when it is a
/// group that has some.
///
/// # Errors
/// If a group's consolidated metadata cannot be written; the edit itself
/// is done, and the message says to run `zarrkit consolidate`.
pub fn refresh_consolidated(
    store: &Arc<dyn Store>,
    node: &NodePath,
) -> anyhow::Result<Consolidated> {
    let mut report = Consolidated::default();
    let mut chain = vec![NodePath::root()];
    let mut path = NodePath::root();
    for name in node.as_str().split('/').filter(|s| !s.is_empty()) {
        let Ok(child) = path.child(name) else { break };
        chain.push(child.clone());
        path = child;
    }
    for group in chain {
        let Ok(opened) = Group::open(Arc::clone(store), group.as_str()) else {
            continue;
        };
        // A group whose consolidated metadata is present but stale or
        // invalid says so in a warning rather than through is_consolidated.
        if !opened.is_consolidated() && opened.warnings().is_empty() {
            continue;
        }
        consolidate::consolidate(store.as_ref(), group.as_str()).with_context(|| {
            format!(
                "the edit is done, but the consolidated metadata of `{group}` could not be rewritten; run `zarrkit consolidate` on it"
            )
        })?;
        report.updated.push(group.as_str().to_string());
    }
    Ok(report)
}
