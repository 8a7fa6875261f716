//! `zarrkit rm`: remove a node and everything below it.

use super::attrs::consolidated_note;
use super::node_arg::{exists, locate_node, refresh_consolidated};
use super::{format_bytes, plural};
use anyhow::{Context, bail};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use zarrkit::{Group, Node, NodeKind};

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
Removes the node's documents, its chunks (for an array) and every node \
below it (for a group), in whichever format it is: for v3 and v2 every \
key under the node's prefix, for the v3 drafts the node's documents and \
its `meta/` and `data/` keys. A sibling whose name merely starts the same \
(`a` beside `ab`) is never touched. The store root is removed only with \
--root (which leaves an empty store).

When the hierarchy has consolidated metadata (v2 `.zmetadata`, v3 \
`consolidated_metadata`), it is rewritten without the node (zarr-python \
leaves it stale until `consolidate_metadata` runs again).

--dry-run lists what would be removed and removes nothing. --json prints \
{\"path\", \"dry_run\", \"removed\": [{\"path\", \"node_type\", \"stored_chunks\", \
\"stored_bytes\"}], \"nodes\", \"stored_chunks\", \"stored_bytes\", \
\"consolidated_updated\": [groups]} (the counts are of stored chunks and their \
bytes, as listed before removing).

Examples:
  zarrkit rm --dry-run data.zarr/old
  zarrkit rm data.zarr /old
  zarrkit rm --json data.zarr/scratch/run-3
  zarrkit rm --root scratch.zarr";

/// Arguments of `zarrkit rm`.
#[derive(Debug, Args)]
pub struct RmArgs {
    /// A store, or a node inside it such as `my.zarr/a/b`
    #[arg(value_name = "STORE[/PATH]")]
    pub target: PathBuf,

    /// The node inside the store (`/a/b`); the first argument is then the
    /// store root
    #[arg(value_name = "NODE")]
    pub node: Option<String>,

    /// List what would be removed, and remove nothing
    #[arg(long, short = 'n')]
    pub dry_run: bool,

    /// Allow removing the store's root node (everything in the store)
    #[arg(long)]
    pub root: bool,

    /// Print the report as JSON (described below)
    #[arg(long)]
    pub json: bool,
}

/// Removals of more stored chunks than this show a spinner on a terminal.
const SPINNER_CHUNKS: u64 = 1000;

/// One node to be removed.
struct Removed {
    path: String,
    kind: NodeKind,
    chunks: u64,
    bytes: u64,
}

/// Runs `zarrkit rm`.
///
/// # Errors
/// If the store cannot be opened, there is no node there, it is the root
/// without --root, or removing fails.
pub fn run(args: &RmArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let extra: Vec<String> = args.node.iter().cloned().collect();
    let target = locate_node(&args.target, &extra, 0, exists)?;
    let store = target.store;
    let path = target.node;
    // A node whose document is invalid (an error here) can still be removed.
    if matches!(
        zarrkit::node::exists(store.as_ref(), path.as_str()),
        Ok(None)
    ) {
        bail!(
            "there is no node at `{path}` in `{}`",
            target.location_root.display()
        );
    }
    if path.is_root() && !args.root {
        bail!(
            "`{path}` is the store's root, and removing it empties the store `{}`; pass --root to do so",
            target.location_root.display()
        );
    }
    let removed = list_removed(&store, path.as_str())
        .with_context(|| format!("cannot list what is below `{path}`"))?;
    let chunks: u64 = removed.iter().map(|r| r.chunks).sum();
    let bytes: u64 = removed.iter().map(|r| r.bytes).sum();
    let mut updated = Vec::new();
    if !args.dry_run {
        // One call erases everything below; many chunks take a while,
        // longest on object storage.
        let spinner = super::progress::spinner(
            &format!("removing `{path}` ({} chunks)", chunks),
            chunks > SPINNER_CHUNKS,
        );
        let erased = zarrkit::node::erase(store.as_ref(), path.as_str());
        if let Some(spinner) = spinner {
            spinner.finish_and_clear();
        }
        erased.with_context(|| format!("cannot remove `{path}`"))?;
        if let Some(parent) = path.parent() {
            updated = refresh_consolidated(&store, &parent)?.updated;
        }
    }
    if args.json {
        let report = serde_json::json!({
            "path": path.as_str(),
            "dry_run": args.dry_run,
            "removed": removed.iter().map(|r| serde_json::json!({
                "path": r.path,
                "node_type": kind_name(r.kind),
                "stored_chunks": r.chunks,
                "stored_bytes": r.bytes,
            })).collect::<Vec<_>>(),
            "nodes": removed.len(),
            "stored_chunks": chunks,
            "stored_bytes": bytes,
            "consolidated_updated": updated,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
        return Ok(());
    }
    if args.dry_run {
        for r in &removed {
            match r.kind {
                NodeKind::Array => writeln!(
                    out,
                    "would remove {} (array, {}, {})",
                    r.path,
                    plural(r.chunks, "stored chunk", "stored chunks"),
                    format_bytes(r.bytes)
                )?,
                NodeKind::Group => writeln!(out, "would remove {} (group)", r.path)?,
            }
        }
    }
    writeln!(
        out,
        "{} `{path}`: {}, {}, {}{}",
        if args.dry_run {
            "would remove"
        } else {
            "removed"
        },
        plural(removed.len() as u64, "node", "nodes"),
        plural(chunks, "stored chunk", "stored chunks"),
        format_bytes(bytes),
        consolidated_note(&updated)
    )?;
    Ok(())
}

fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Array => "array",
        NodeKind::Group => "group",
    }
}

/// The node at `path` and every node below it, each array with its stored
/// chunks and bytes, read from the real documents (not consolidated metadata).
fn list_removed(
    store: &Arc<dyn zarrkit::store::Store>,
    path: &str,
) -> anyhow::Result<Vec<Removed>> {
    let entry = |node: &Node| -> anyhow::Result<Removed> {
        let (chunks, bytes) = match node {
            Node::Array(array) => {
                let size = array.stored_size()?;
                (size.chunks, size.bytes)
            }
            Node::Group(_) => (0, 0),
        };
        Ok(Removed {
            path: node.path().as_str().to_string(),
            kind: node.kind(),
            chunks,
            bytes,
        })
    };
    let node = match Node::open(Arc::clone(store), path) {
        Ok(Node::Group(_)) => {
            Node::Group(Group::open_without_consolidated(Arc::clone(store), path)?)
        }
        Ok(node) => node,
        // A node whose document is invalid is still removed, whole.
        Err(_) => {
            return Ok(vec![Removed {
                path: path.to_string(),
                kind: NodeKind::Group,
                chunks: 0,
                bytes: 0,
            }]);
        }
    };
    let mut removed = vec![entry(&node)?];
    if let Node::Group(group) = &node {
        for child in group.walk()? {
            removed.push(entry(&child)?);
        }
    }
    Ok(removed)
}
