//! Migrating a whole hierarchy from any Zarr format into another.
//!
//! [`plan`] walks the source hierarchy and decides, node by node, what the
//! target format gets; [`migrate`] carries the plan out and then verifies
//! that every array of the destination reads back identical to the source.
//!
//! ```
//! use std::sync::Arc;
//! use zarrkit::format::ZarrFormat;
//! use zarrkit::store::{MemoryStore, Store};
//! use zarrkit::{Array, Region, metadata::DataType, migrate};
//!
//! let src: Arc<dyn Store> = Arc::new(MemoryStore::new());
//! let array = Array::builder(&[4], DataType::Int32, &[2])
//!     .format(ZarrFormat::V2)
//!     .create(src.clone(), "/")?;
//! array.write_region(&Region::whole(&[4]), &[1, 2, 3, 4])?;
//!
//! let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
//! let plan = migrate::plan(src, dst.clone(), ZarrFormat::V3)?;
//! let report = migrate::migrate(&plan, &mut |_| {})?;
//! assert_eq!(report.arrays_copied, 1);
//! let migrated = Array::open(dst, "/")?;
//! assert_eq!(migrated.format(), ZarrFormat::V3);
//! assert_eq!(migrated.read_region::<i32>(&Region::whole(&[4]))?, [1, 2, 3, 4]);
//! # Ok::<(), migrate::MigrateError>(())
//! ```
//!
//! # What each array gets
//!
//! Everything the model holds is carried over: shape, data type, chunk
//! grid, fill value, codecs, dimension names, attributes and the fields an
//! implementation may ignore. Where the target cannot hold a feature, the
//! plan adapts it, and says so in the node's notes:
//!
//! - **Chunk key encoding**: if the target cannot use the source's, the
//!   array gets the `v2` encoding with the same separator if the target
//!   can use that, else the target's default (v3 `default` with `/` into v2
//!   becomes `v2` with `/`). Only the keys change; the chunks are copied.
//! - **Dimension names**: a target without them (v2, the v3 drafts) gets
//!   them in the attribute `_ARRAY_DIMENSIONS`, as xarray stores them in v2.
//!   That needs every dimension to be named and no other
//!   `_ARRAY_DIMENSIONS` attribute; otherwise the migration is refused.
//!   Into a target with dimension names (v3), an `_ARRAY_DIMENSIONS`
//!   attribute of one name per dimension becomes the dimension names, as
//!   xarray writes them in v3 (it reads v3 dimensions only from
//!   `dimension_names`), so v2 → v3 → v2 round trips.
//! - **Consolidated metadata**: a source whose root group has consolidated
//!   metadata (v2 `.zmetadata`, v3 `consolidated_metadata`, zarr-python
//!   2.x's) gets it rewritten from the target's documents after copying,
//!   into v2 or v3; into another format the plan notes that it is not
//!   carried over.
//! - **Missing groups**: a source with nodes but no root node (tensorstore,
//!   which has no groups, writes arrays at `/a` and `/b/c` and nothing
//!   else) gets the groups above its nodes (`/`, `/b`), empty, so that the
//!   target opens as one hierarchy; each is noted as created.
//! - **Fill value**: the target's document is read back before anything
//!   is written. A NaN with a payload that the target cannot spell (v2, v1
//!   and the 2019 drafts write every NaN as `"NaN"`) becomes the plain NaN,
//!   and verification expects it; any other fill value that would read
//!   back differently is refused.
//! - **Ignorable fields** (`"must_understand": false` fields of v3, the
//!   v2 `"fill_value": null` marker, the 2022 draft's `extensions`, v1's
//!   extra keys) that the target cannot hold, or would not read back (v3
//!   refuses a field that does not say `"must_understand": false`, v2 does
//!   not write unknown keys), are dropped.
//! - **Codecs**: if the target can hold the source's codec chain, and
//!   writes and reads it back as the same canonical chain, the chunks are
//!   copied byte for byte under their new keys. Otherwise every stored
//!   chunk is decoded and re-encoded with a chain the target can hold:
//!   `bytes` and the source's first bytes-to-bytes codec that the target
//!   can hold, else the target's default chain (`bytes` + `zstd`, for the
//!   2022 draft `gzip`), else `bytes` alone. The reason is in
//!   [`Action::ReEncode`].
//!
//! - **Strings, byte strings and structs** (v2 `|S`, `U`, `|O` with
//!   `vlen-utf8`/`vlen-bytes`, structured dtypes) keep their data type,
//!   which v3 names as zarr-python 3.1 does (`null_terminated_bytes`,
//!   `fixed_length_utf32`, `string` with `vlen-utf8`, `bytes` with
//!   `vlen-bytes`, `struct`); variable-length chunks are copied, or
//!   re-encoded and verified element by element through the
//!   variable-length path. A v2 struct whose fields differ in byte order
//!   is re-encoded with one byte order (v3 `struct` has one `endian` for
//!   all fields); a struct with a sub-array field (NumPy `[name, type,
//!   shape]`) is refused for v3, whose `struct` fields are scalars.
//!
//! What cannot be adapted (a data type, fill value, storage transformer or
//! attribute the target cannot hold, or dimension names that cannot become
//! `_ARRAY_DIMENSIONS`) is refused by [`plan`] with
//! [`MigrateError::NotRepresentable`], naming the node and the feature,
//! before anything is written.
//!
//! # Memory and parallelism
//!
//! Stored chunks are found by listing the array's chunk prefix (or, on a
//! store that cannot list, by probing every position of the chunk grid),
//! then copied, re-encoded and verified in batches of at most 64 chunks and
//! about 256 MiB of decoded data, each batch in parallel with rayon.
//!
//! # Interrupted migrations
//!
//! [`migrate`] writes the key [`MIGRATION_MARKER`] into the destination
//! before anything else and erases it only after every array has been
//! copied and verified. While it is there, [`check_finished`] fails with
//! [`Error::UnfinishedMigration`] (the `zarrkit` commands call it before
//! opening a store), so a destination left by a killed or failed migration
//! is never taken for a complete one (its missing chunks would read as the
//! fill value). [`Array::open`] and [`Group::open`](crate::Group::open) do
//! not look for the marker, which would cost every open another store
//! request; call [`check_finished`] first where a store may be an
//! interrupted migration. Planning the same
//! migration again ([`plan`] into a destination that holds the marker, with
//! the same target format) resumes it: documents are rewritten, chunks
//! already in the destination that match the source (byte for byte, or
//! element for element when re-encoded) are skipped and counted in
//! [`MigrationReport::chunks_skipped`], the rest are copied, everything is
//! verified, and the marker goes. Each chunk is written atomically by the
//! stores that promise it (the filesystem store renames a finished file
//! into place), so a chunk is there whole or not at all.

use crate::array::{Array, ArrayBuilder, Region};
use crate::codec::{Codec, CodecChain};
use crate::copy::{self, Cast, CopyError, Relayout};
use crate::error::{Error, NodeKind};
use crate::format::{self, ZarrFormat};
use crate::group::Node;
use crate::metadata::{
    ArrayMetadata, ChunkKeyEncoding, DataType, ExtensionObject, FillValue, GroupMetadata, JsonMap,
    NodeMetadata,
};
pub use crate::node::{MIGRATION_MARKER, check_finished};
use crate::node::{NodePath, migration_marker};
use crate::store::{MemoryStore, Store, StoreError, StoreKey, StorePrefix};
use rayon::prelude::*;
use std::sync::Arc;

/// The most chunks handled at once.
const MAX_BATCH_CHUNKS: usize = 64;

/// The decoded bytes a batch aims to stay under.
const BATCH_BYTES: u64 = 256 << 20;

/// The attribute xarray keeps dimension names in, in v2.
pub const DIMENSIONS_ATTRIBUTE: &str = "_ARRAY_DIMENSIONS";

/// Errors of planning, running or verifying a migration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MigrateError {
    /// Reading the source or writing the destination failed.
    #[error(transparent)]
    Zarr(#[from] Error),

    /// The destination already holds something.
    #[error("the destination is not empty: it holds `{key}` (migrate into an empty store)")]
    DestinationNotEmpty {
        /// One key found in the destination.
        key: StoreKey,
    },

    /// The destination is an unfinished migration to another format.
    #[error(
        "the destination is an unfinished migration to {found} (marked by `{key}`), not to {to}: resume it with the same target format, or delete the destination"
    )]
    UnfinishedToOtherFormat {
        /// The marker key.
        key: StoreKey,
        /// The target format the marker names (as written in it).
        found: String,
        /// The target format asked for now.
        to: ZarrFormat,
    },

    /// A node has a feature the target format cannot represent.
    #[error("`{path}` cannot be migrated to {format}: {what}")]
    NotRepresentable {
        /// The node.
        path: NodePath,
        /// The target format.
        format: ZarrFormat,
        /// The feature, and why.
        what: String,
    },

    /// The destination is an unfinished copy with other options.
    #[error(
        "the destination is an unfinished copy with other options (marked by `{key}`): resume it with the same options, or delete the destination"
    )]
    UnfinishedWithOtherOptions {
        /// The marker key.
        key: StoreKey,
    },

    /// Copying an array into its new layout failed.
    #[error(transparent)]
    Copy(Box<CopyError>),

    /// An array of the destination reads back differently from the source.
    #[error(
        "verification failed: array `{path}` reads back differently from the source in chunk {chunk_coords:?} (elements {region})"
    )]
    Mismatch {
        /// The array.
        path: NodePath,
        /// The chunk whose region differs.
        chunk_coords: Vec<u64>,
        /// The region, as `[start..end, ...]`.
        region: String,
    },
}

impl From<CopyError> for MigrateError {
    fn from(error: CopyError) -> Self {
        Self::Copy(Box::new(error))
    }
}

impl From<StoreError> for MigrateError {
    fn from(error: StoreError) -> Self {
        Self::Zarr(error.into())
    }
}

/// What the migration does with a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Write the group's document.
    CreateGroup,
    /// Write the array's document and copy its stored chunks byte for byte
    /// under their keys in the target.
    CopyChunks,
    /// Write the array's document and decode and re-encode every stored
    /// chunk with a chain the target can hold.
    ReEncode {
        /// Why the chunks cannot be copied.
        reason: String,
        /// The codecs the target array gets, by name.
        codecs: Vec<String>,
    },
    /// Write the array's document and stream every element into the new
    /// layout a [`Layout`](crate::copy::Layout) asks for (chunk grid, codecs, data type or fill
    /// value), write unit by write unit (see [`crate::copy`]).
    Rewrite {
        /// What changes, as `chunk grid [64, 64] → [256, 256]`.
        changes: Vec<String>,
    },
}

impl Action {
    /// A short name: `create`, `copy`, `re-encode` or `rewrite`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::CreateGroup => "create",
            Self::CopyChunks => "copy",
            Self::ReEncode { .. } => "re-encode",
            Self::Rewrite { .. } => "rewrite",
        }
    }
}

/// The plan for one node.
#[derive(Clone, Debug)]
pub struct NodePlan {
    /// The node's path in the source.
    pub path: NodePath,
    /// Its path in the destination: the same, or, when copying the node
    /// [`PlanOptions::root`] names, the path below it.
    pub target_path: NodePath,
    /// Array or group.
    pub kind: NodeKind,
    /// The node's format in the source.
    pub source_format: ZarrFormat,
    /// What the migration does.
    pub action: Action,
    /// What was adapted for the target (a changed chunk key encoding,
    /// dimension names moved to an attribute, dropped fields).
    pub notes: Vec<String>,
    /// Which common readers cannot open what the target gets (see
    /// [`reader_warnings`]); empty for groups and outside v3.
    pub warnings: Vec<String>,
    /// The number of stored chunks in the source (0 for a group).
    pub chunks: u64,
    /// Their total stored size in bytes.
    pub bytes: u64,
    /// For [`Action::Rewrite`], the destination's write units (shards, or
    /// chunks), which the copy walks; 0 otherwise.
    pub write_units: u64,
    /// `None` for a group the source lacks (see [`plan`]).
    source: Option<Node>,
    target: NodeMetadata,
}

/// A planned migration: every node of the source, parents before children.
#[derive(Clone, Debug)]
pub struct MigrationPlan {
    src: Arc<dyn Store>,
    dst: Arc<dyn Store>,
    to: ZarrFormat,
    nodes: Vec<NodePlan>,
    resume: bool,
    /// Whether to write consolidated metadata at the root after copying.
    consolidate: bool,
    options: PlanOptions,
}

impl MigrationPlan {
    /// The number of arrays planned, and how many of them are re-encoded
    /// or rewritten into a new layout.
    #[must_use]
    pub fn count_arrays(&self) -> (usize, usize) {
        let arrays = self.nodes.iter().filter(|n| n.kind == NodeKind::Array);
        let reencoded = arrays
            .clone()
            .filter(|n| matches!(n.action, Action::ReEncode { .. } | Action::Rewrite { .. }))
            .count();
        (arrays.count(), reencoded)
    }

    /// The plan as a JSON object, the form `zarrkit migrate --dry-run
    /// --json` prints and the Python package's `migrate(dry_run=True)`
    /// returns: `source` and `destination` (as given), `to`,
    /// `writes_consolidated`, each node (`path`, `node_type`,
    /// `source_format`, `action`, `reason`, `codecs`, `notes`, `warnings`,
    /// `chunks`, `bytes`) and the totals.
    #[must_use]
    pub fn to_json(&self, source: &str, destination: Option<&str>) -> serde_json::Value {
        let nodes: Vec<serde_json::Value> = self
            .nodes
            .iter()
            .map(|node| {
                let (reason, codecs) = match &node.action {
                    Action::ReEncode { reason, codecs } => (Some(reason.clone()), Some(codecs)),
                    Action::Rewrite { changes } => (Some(changes.join(", ")), None),
                    _ => (None, None),
                };
                serde_json::json!({
                    "path": node.path.as_str(),
                    "node_type": match node.kind {
                        NodeKind::Array => "array",
                        NodeKind::Group => "group",
                    },
                    "source_format": node.source_format.name(),
                    "action": node.action.name(),
                    "reason": reason,
                    "codecs": codecs,
                    "notes": node.notes,
                    "warnings": node.warnings,
                    "chunks": node.chunks,
                    "bytes": node.bytes,
                })
            })
            .collect();
        let (arrays, reencoded) = self.count_arrays();
        serde_json::json!({
            "source": source,
            "destination": destination,
            "to": self.to().name(),
            "writes_consolidated": self.writes_consolidated(),
            "nodes": nodes,
            "total": {
                "nodes": self.nodes.len(),
                "groups": self.nodes.len() - arrays,
                "arrays": arrays,
                "reencoded": reencoded,
                "chunks": self.total_chunks(),
                "bytes": self.total_bytes(),
            },
        })
    }

    /// Whether the destination holds an unfinished migration of the same
    /// kind, which [`migrate`] resumes.
    #[must_use]
    pub fn resumes(&self) -> bool {
        self.resume
    }

    /// The target format.
    #[must_use]
    pub fn to(&self) -> ZarrFormat {
        self.to
    }

    /// The store migrated from.
    #[must_use]
    pub fn source(&self) -> &Arc<dyn Store> {
        &self.src
    }

    /// The store migrated into.
    #[must_use]
    pub fn destination(&self) -> &Arc<dyn Store> {
        &self.dst
    }

    /// Whether the destination gets consolidated metadata at its root (the
    /// source's root group has it and the target is v2 or v3).
    #[must_use]
    pub fn writes_consolidated(&self) -> bool {
        self.consolidate
    }

    /// The nodes, the root first, parents before children.
    #[must_use]
    pub fn nodes(&self) -> &[NodePlan] {
        &self.nodes
    }

    /// The number of stored chunks of all arrays.
    #[must_use]
    pub fn total_chunks(&self) -> u64 {
        self.nodes.iter().map(|n| n.chunks).sum()
    }

    /// The chunks [`migrate`] handles: the stored chunks of the arrays it
    /// copies or re-encodes and the write units of those it rewrites.
    #[must_use]
    pub fn total_work(&self) -> u64 {
        self.nodes.iter().map(NodePlan::work).sum()
    }

    /// Whether [`migrate`] reads everything back and compares it.
    #[must_use]
    pub fn verifies(&self) -> bool {
        !self.options.skip_verification
    }

    /// Their total stored size in bytes.
    #[must_use]
    pub fn total_bytes(&self) -> u64 {
        self.nodes.iter().map(|n| n.bytes).sum()
    }
}

/// Which part of the migration a [`Progress`] report is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Copying or re-encoding chunks.
    Copy,
    /// Reading source and destination back and comparing.
    Verify,
}

/// A progress report, sent after each batch of chunks.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Copying or verifying.
    pub phase: Phase,
    /// The array being worked on.
    pub path: NodePath,
    /// Chunks done in this phase so far, over all arrays.
    pub chunks_done: u64,
    /// Chunks this phase handles in all (for [`Phase::Verify`], the stored
    /// chunks of the source; the destination may store a few more or fewer
    /// when chunks equal to the fill value are stored in one and not the other).
    pub chunks_total: u64,
    /// Encoded bytes read from the source so far in this phase.
    pub bytes_done: u64,
}

impl NodePlan {
    /// The chunks [`migrate`] handles for this node.
    #[must_use]
    pub fn work(&self) -> u64 {
        match self.action {
            Action::Rewrite { .. } => self.write_units,
            _ => self.chunks,
        }
    }
}

/// What a migration did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MigrationReport {
    /// Groups written.
    pub groups: u64,
    /// Arrays whose chunks were copied byte for byte.
    pub arrays_copied: u64,
    /// Arrays whose chunks were re-encoded (by their path in the
    /// destination), with the reason.
    pub arrays_reencoded: Vec<(NodePath, String)>,
    /// Arrays streamed into a new layout (by their path in the
    /// destination), with what changed.
    pub arrays_rewritten: Vec<(NodePath, String)>,
    /// Chunks written.
    pub chunks: u64,
    /// Encoded bytes read from the source's chunks.
    pub bytes_read: u64,
    /// Encoded bytes written to the destination's chunks (for an array
    /// rewritten into a new layout, all it stores).
    pub bytes_written: u64,
    /// Chunk regions compared in verification.
    pub chunks_verified: u64,
    /// Chunks a resumed migration found already copied (and matching the
    /// source), so did not write again.
    pub chunks_skipped: u64,
}

impl MigrationReport {
    /// The report of `plan`'s migration as a JSON object, the form
    /// `zarrkit migrate --json` prints and the Python package's `migrate`
    /// returns: `source`, `destination` (as given), `format`, `resumed`,
    /// the counts, the re-encoded arrays with their reasons, and the
    /// plan's notes by node.
    #[must_use]
    pub fn to_json(
        &self,
        plan: &MigrationPlan,
        source: &str,
        destination: &str,
        resumed: bool,
    ) -> serde_json::Value {
        serde_json::json!({
            "source": source,
            "destination": destination,
            "format": plan.to().name(),
            "resumed": resumed,
            "groups": self.groups,
            "arrays_copied": self.arrays_copied,
            "arrays_reencoded": self.arrays_reencoded.iter().map(|(path, reason)| {
                serde_json::json!({ "path": path.to_string(), "reason": reason })
            }).collect::<Vec<_>>(),
            "notes": plan.nodes().iter().flat_map(|node| node.notes.iter().map(|note| {
                serde_json::json!({ "path": node.path.as_str(), "note": note })
            })).collect::<Vec<_>>(),
            "chunks_written": self.chunks,
            "chunks_skipped": self.chunks_skipped,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "chunks_verified": self.chunks_verified,
        })
    }
}

/// Plans the migration of the whole hierarchy in `src` into `to` in `dst`.
///
/// Reads every node's metadata and lists every array's stored chunks;
/// writes nothing. A source without a root node (arrays at `/a`, `/b/c`
/// and no group documents, as tensorstore writes them) is migrated node by
/// node as found by listing, and the groups above them that it lacks are
/// created, each with a note.
///
/// A destination that holds the [`MIGRATION_MARKER`] of a migration to the
/// same format is accepted, and [`migrate`] resumes it.
///
/// # Errors
/// [`MigrateError::DestinationNotEmpty`] if `dst` holds any key and no
/// marker, [`MigrateError::UnfinishedToOtherFormat`] if its marker names
/// another format (with [`plan_with`], [`MigrateError::UnfinishedWithOtherOptions`]
/// if it records other options), [`MigrateError::NotRepresentable`] naming the first
/// node with a feature `to` cannot hold, [`Error::NodeNotFound`] if `src`
/// has no node at all, or a store or metadata error naming the key.
pub fn plan(
    src: Arc<dyn Store>,
    dst: Arc<dyn Store>,
    to: ZarrFormat,
) -> Result<MigrationPlan, MigrateError> {
    plan_with(src, dst, to, &PlanOptions::default())
}

/// Options of [`plan_with`].
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct PlanOptions {
    /// Re-encode into codecs every current v3 reader has (see
    /// [`PlanOptions::portable`]).
    pub portable: bool,
    /// Copy this node of the source and what is below it, as the root of
    /// the destination (`None`: the whole hierarchy).
    pub root: Option<NodePath>,
    /// Changes to every array (see [`PlanOptions::layout`]).
    pub layout: Option<Arc<dyn Relayout>>,
    /// Do not read the destination back and compare it with the source.
    pub skip_verification: bool,
    /// The memory budget of rewriting an array, in bytes (`None`:
    /// [`DEFAULT_COPY_BUDGET`]).
    pub memory_budget: Option<u64>,
    /// The command the marker tells a user to run again to resume.
    pub command: Option<String>,
}

/// The default memory budget of rewriting an array (see [`crate::copy`]).
pub const DEFAULT_COPY_BUDGET: u64 = 256 << 20;

impl PlanOptions {
    /// Copies the node at `root` (and everything below it) as the
    /// destination's root, instead of the whole hierarchy.
    #[must_use]
    pub fn root(mut self, root: NodePath) -> Self {
        self.root = Some(root);
        self
    }

    /// Changes every array as `layout` says: an array whose chunk grid,
    /// codecs, data type or fill value change is planned as
    /// [`Action::Rewrite`] and streamed into its new layout; one whose
    /// chunk key encoding alone changes keeps its chunks' bytes.
    #[must_use]
    pub fn layout(mut self, layout: Arc<dyn Relayout>) -> Self {
        self.layout = Some(layout);
        self
    }

    /// Whether [`migrate`] verifies the copy (the default) or not.
    #[must_use]
    pub fn verify(mut self, verify: bool) -> Self {
        self.skip_verification = !verify;
        self
    }

    /// The memory budget of rewriting an array (see [`crate::copy`]).
    #[must_use]
    pub fn memory_budget(mut self, bytes: u64) -> Self {
        self.memory_budget = Some(bytes);
        self
    }

    /// The command the marker of an unfinished copy tells a user to run
    /// again (default `zarrkit migrate SRC DST`).
    #[must_use]
    pub fn command(mut self, command: impl Into<String>) -> Self {
        self.command = Some(command.into());
        self
    }

    /// What a resumed copy must have the same: the node copied and the layout.
    fn fingerprint(&self) -> Option<String> {
        if self.root.is_none() && self.layout.is_none() {
            return None;
        }
        Some(format!(
            "root {:?}; layout {}",
            self.root.as_ref().map(NodePath::as_str),
            self.layout
                .as_ref()
                .map(|layout| layout.describe())
                .unwrap_or_default()
        ))
    }

    /// Into v3, re-encode every array whose codec chain has a codec outside
    /// [`PORTABLE_CODECS`] (v3 core's codecs and `sharding_indexed`, which
    /// zarr-python 3.1 and tensorstore both read) with `bytes` and the
    /// source's compressor if it is one of them, else the default `zstd`.
    /// Data types are not changed: one that a reader lacks stays, with a
    /// warning (see [`reader_warnings`]). Other targets ignore it.
    #[must_use]
    pub fn portable(mut self, portable: bool) -> Self {
        self.portable = portable;
        self
    }
}

/// As [`plan`], with options.
///
/// # Errors
/// As [`plan`].
pub fn plan_with(
    src: Arc<dyn Store>,
    dst: Arc<dyn Store>,
    to: ZarrFormat,
    options: &PlanOptions,
) -> Result<MigrationPlan, MigrateError> {
    let fingerprint = options.fingerprint();
    let resume = unfinished(dst.as_ref(), to, fingerprint.as_deref())?;
    if !resume {
        check_empty(dst.as_ref())?;
    }
    let root = options.root.clone().unwrap_or_else(NodePath::root);
    let sources = source_nodes(&src, &root)?;
    // Each node's document is written to a scratch store and read back, so
    // the plan knows what the target will really hold.
    let scratch: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut nodes = Vec::with_capacity(sources.len());
    for source in sources {
        nodes.push(match source {
            Source::Node(node) => plan_node(*node, &root, to, &scratch, options)?,
            Source::MissingGroup { path, format } => {
                plan_missing_group(path, format, to, &scratch)?
            }
        });
    }
    let consolidate = plan_consolidated(&mut nodes, to);
    Ok(MigrationPlan {
        src,
        dst,
        to,
        nodes,
        resume,
        consolidate,
        options: options.clone(),
    })
}

/// `path` below `root`, as a path from the root: `/a/b/c` below `/a` is `/b/c`.
fn below(path: &NodePath, root: &NodePath) -> NodePath {
    if root.is_root() {
        return path.clone();
    }
    let rest = path.as_str().strip_prefix(root.as_str()).unwrap_or("");
    NodePath::new(rest).unwrap_or_else(|_| NodePath::root())
}

/// Whether the destination gets consolidated metadata: when the source's
/// root group has it (and the target can hold it; else a note says so).
fn plan_consolidated(nodes: &mut [NodePlan], to: ZarrFormat) -> bool {
    let Some(root) = nodes.first_mut() else {
        return false;
    };
    let consolidated = matches!(&root.source, Some(Node::Group(group)) if group.is_consolidated());
    if !consolidated || !root.path.is_root() {
        return false;
    }
    // The formats whose consolidated metadata [`migrate`] writes: v2's
    // `.zmetadata` and v3's `consolidated_metadata`, where zarr-python (and
    // xarray's `consolidated=True`) look for it. zarr-python 2.x's
    // experimental v3 keeps it in an extra group, which would add a node.
    if to.keeps_consolidated_metadata_in_the_root() {
        root.notes.push(
            "consolidated metadata: written anew from the migrated documents, as the source has it"
                .into(),
        );
        true
    } else {
        root.notes.push(format!(
            "the source's consolidated metadata is not carried over: zarrkit writes it for v2 \
             and v3, not {to}"
        ));
        false
    }
}

/// A node of the source hierarchy, or a group it lacks.
enum Source {
    Node(Box<Node>),
    /// A group with no document in the source, above nodes that have one.
    MissingGroup {
        path: NodePath,
        format: ZarrFormat,
    },
}

/// Every node of `src`, parents before children: the root and everything
/// below it, or, in a store without a root node (tensorstore writes arrays
/// at `/a`, `/b/c` and no groups, as it has none), every node found by its
/// document, with the groups above them that have no document.
fn source_nodes(src: &Arc<dyn Store>, root: &NodePath) -> Result<Vec<Source>, MigrateError> {
    let not_found = match Node::open(Arc::clone(src), root.as_str()) {
        Ok(root) => {
            let mut sources = vec![Source::Node(Box::new(root.clone()))];
            if let Node::Group(group) = &root {
                sources.extend(
                    group
                        .walk()?
                        .into_iter()
                        .map(|node| Source::Node(Box::new(node))),
                );
            }
            return Ok(sources);
        }
        Err(error @ Error::NodeNotFound { .. }) if root.is_root() => error,
        Err(error) => return Err(error.into()),
    };
    let found = format::find_nodes(src.as_ref())?;
    let mut sources: Vec<(NodePath, Source)> = Vec::new();
    for path in &found {
        let node = Node::open(Arc::clone(src), path.as_str())?;
        // Its ancestors without a document, from the root down.
        let mut missing = Vec::new();
        let mut parent = path.parent();
        while let Some(p) = parent {
            if found.binary_search(&p).is_err() && !sources.iter().any(|(s, _)| *s == p) {
                missing.push(p.clone());
            }
            parent = p.parent();
        }
        for p in missing.into_iter().rev() {
            let format = node.format();
            sources.push((p.clone(), Source::MissingGroup { path: p, format }));
        }
        sources.push((path.clone(), Source::Node(Box::new(node))));
    }
    if sources.is_empty() {
        return Err(not_found.into());
    }
    // Sorted paths put every parent before its children.
    sources.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(sources.into_iter().map(|(_, source)| source).collect())
}

/// The plan for a group the source lacks: an empty group the target gets
/// so that the hierarchy opens there (v3 core "Storage" and v2
/// "Hierarchies" have no implicit groups; zarr-python opens a hierarchy
/// only from group documents).
fn plan_missing_group(
    path: NodePath,
    source_format: ZarrFormat,
    to: ZarrFormat,
    scratch: &Arc<dyn Store>,
) -> Result<NodePlan, MigrateError> {
    let mut notes = vec![
        "created: the source has no group here, only nodes below it (as tensorstore, which \
         has no groups, writes arrays)"
            .to_string(),
    ];
    let empty = GroupMetadata {
        attributes: JsonMap::new(),
        extra_fields: JsonMap::new(),
    };
    let target = plan_group(&path, &path, &empty, to, &mut notes)?;
    format::write_node(scratch.as_ref(), &path, to, &target)?;
    Ok(NodePlan {
        target_path: path.clone(),
        path,
        kind: NodeKind::Group,
        source_format,
        action: Action::CreateGroup,
        notes,
        warnings: Vec::new(),
        chunks: 0,
        bytes: 0,
        write_units: 0,
        source: None,
        target,
    })
}

/// The marker's document: what it is and what to do, for whoever finds it.
fn marker_document(to: ZarrFormat, options: &PlanOptions) -> Vec<u8> {
    let command = options
        .command
        .clone()
        .unwrap_or_else(|| "zarrkit migrate SRC DST".into());
    let mut document = serde_json::json!({
        "zarrkit_migration": {
            "state": "unfinished",
            "to": to.name(),
            "help": format!("zarrkit is copying a hierarchy into this store, and has not finished: \
                     it was interrupted, failed, or is still running. Chunks may be missing. \
                     Run the same `{command}` again to resume (it skips what is \
                     already copied and verified), or delete this store to start over.")
        }
    });
    if let Some(fingerprint) = options.fingerprint() {
        document["zarrkit_migration"]["options"] = fingerprint.into();
    }
    let mut bytes = serde_json::to_vec_pretty(&document).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Whether `dst` holds the marker of an unfinished migration to `to`.
///
/// # Errors
/// [`MigrateError::UnfinishedToOtherFormat`] if the marker names another
/// format (or none that can be read),
/// [`MigrateError::UnfinishedWithOtherOptions`] if it records other copy
/// options (another node or layout), or a store error.
fn unfinished(
    dst: &dyn Store,
    to: ZarrFormat,
    fingerprint: Option<&str>,
) -> Result<bool, MigrateError> {
    let key = migration_marker();
    let Some(bytes) = dst.get(&key, None)? else {
        return Ok(false);
    };
    let document = serde_json::from_slice::<serde_json::Value>(&bytes).ok();
    let field = |name: &str| {
        document.as_ref().and_then(|doc| {
            doc.pointer(&format!("/zarrkit_migration/{name}"))
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        })
    };
    let found = field("to").unwrap_or_else(|| "an unreadable format".to_string());
    if found != to.name() {
        return Err(MigrateError::UnfinishedToOtherFormat { key, found, to });
    }
    if field("options").as_deref() != fingerprint {
        return Err(MigrateError::UnfinishedWithOtherOptions { key });
    }
    Ok(true)
}

fn check_empty(dst: &dyn Store) -> Result<(), MigrateError> {
    if let Some(key) = dst.list_prefix(&StorePrefix::root())?.into_iter().next() {
        return Err(MigrateError::DestinationNotEmpty { key });
    }
    Ok(())
}

fn plan_node(
    source: Node,
    root: &NodePath,
    to: ZarrFormat,
    scratch: &Arc<dyn Store>,
    options: &PlanOptions,
) -> Result<NodePlan, MigrateError> {
    let path = source.path().clone();
    let target_path = below(&path, root);
    let source_format = source.format();
    let kind = source.kind();
    let mut notes = Vec::new();
    let (target, action, chunks, bytes) = match &source {
        Node::Group(group) => {
            let target = plan_group(&path, &target_path, group.metadata(), to, &mut notes)?;
            (target, Action::CreateGroup, 0, 0)
        }
        Node::Array(array) => {
            let (target, action) = plan_array(array, &target_path, to, scratch, &mut notes)?;
            let (target, action) = if options.portable && to.is_v3() {
                make_portable(array, target, action)?
            } else {
                (target, action)
            };
            let (target, action) = match &options.layout {
                Some(layout) => apply_layout(array, layout.as_ref(), to, target, action)?,
                None => (target, action),
            };
            let stored = array.stored_size()?;
            (target, action, stored.chunks, stored.bytes)
        }
    };
    format::write_node(scratch.as_ref(), &target_path, to, &target)?;
    // What is written must read back.
    if let Err(error) = format::read_node_as(scratch.as_ref(), &target_path, to) {
        return Err(MigrateError::NotRepresentable {
            path,
            format: to,
            what: format!("its document would not read back: {}", describe(&error)),
        });
    }
    let warnings = match (&target, to) {
        (NodeMetadata::Array(array), to) if to.is_v3() => reader_warnings(array),
        _ => Vec::new(),
    };
    let write_units = match (&action, &target) {
        (Action::Rewrite { .. }, NodeMetadata::Array(metadata)) => copy::write_units(metadata),
        _ => 0,
    };
    Ok(NodePlan {
        path,
        target_path,
        kind,
        source_format,
        action,
        notes,
        warnings,
        chunks,
        bytes,
        write_units,
        source: Some(source),
        target,
    })
}

/// The plan of an array with `layout`'s changes on top of what the target
/// format gets: [`Action::Rewrite`] when the chunk grid, codecs, data type
/// or fill value change.
fn apply_layout(
    array: &Array,
    layout: &dyn Relayout,
    to: ZarrFormat,
    target: NodeMetadata,
    action: Action,
) -> Result<(NodeMetadata, Action), MigrateError> {
    let NodeMetadata::Array(planned) = target else {
        return Ok((target, action));
    };
    let path = array.path();
    let refuse = |what: String| MigrateError::NotRepresentable {
        path: path.clone(),
        format: to,
        what,
    };
    let changed = layout.relayout(&planned).map_err(&refuse)?;
    let changes = copy::changes(array.metadata(), &changed);
    let rewrite = changed.chunk_grid != planned.chunk_grid
        || changed.codecs != planned.codecs
        || changed.data_type != planned.data_type
        || changed.fill_value != planned.fill_value;
    representable(to, path, &NodeMetadata::Array(changed.clone())).map_err(&refuse)?;
    // The codecs must make a chain for the new chunks.
    let repr = crate::codec::ChunkRepr {
        shape: changed
            .chunk_grid
            .chunk_shape()
            .map(|s| s.iter().map(|n| n.get()).collect())
            .unwrap_or_else(|| array.chunk_shape().to_vec()),
        data_type: changed.data_type.clone(),
        fill_value: changed.fill_value.clone(),
    };
    CodecChain::from_metadata(&changed.codecs, &repr).map_err(|e| {
        refuse(format!(
            "its new codecs: {}",
            describe(&Error::Codecs {
                path: path.clone(),
                source: e
            })
        ))
    })?;
    let action = if rewrite {
        Action::Rewrite { changes }
    } else {
        action
    };
    Ok((NodeMetadata::Array(changed), action))
}

/// The message of a representability check's error, with its causes.
fn describe(error: &Error) -> String {
    let mut text = String::new();
    let mut cause: Option<&dyn std::error::Error> = Some(error);
    let mut first = true;
    while let Some(c) = cause {
        let message = c.to_string();
        // `InvalidMetadata` says only "invalid metadata for `path`"; the
        // cause says what the format cannot hold.
        if !(first && matches!(error, Error::InvalidMetadata { .. })) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&message);
        }
        first = false;
        cause = c.source();
    }
    text
}

fn representable(to: ZarrFormat, path: &NodePath, metadata: &NodeMetadata) -> Result<(), String> {
    format::check_representable(to, path, metadata).map_err(|e| describe(&e))
}

/// Whether `metadata`, written in `to` into an empty store at the root,
/// reads back with the same ignorable fields.
fn fields_round_trip(to: ZarrFormat, metadata: &NodeMetadata) -> bool {
    let store = MemoryStore::new();
    let root = NodePath::root();
    if format::write_node(&store, &root, to, metadata).is_err() {
        return false;
    }
    let fields = |m: &NodeMetadata| match m {
        NodeMetadata::Array(a) => a.extra_fields.clone(),
        NodeMetadata::Group(g) => g.extra_fields.clone(),
    };
    match format::read_node_as(&store, &root, to) {
        Ok(Some(read)) => fields(&read) == fields(metadata),
        _ => false,
    }
}

fn plan_group(
    source_path: &NodePath,
    path: &NodePath,
    source: &GroupMetadata,
    to: ZarrFormat,
    notes: &mut Vec<String>,
) -> Result<NodeMetadata, MigrateError> {
    let refuse = |what: String| MigrateError::NotRepresentable {
        path: source_path.clone(),
        format: to,
        what,
    };
    let baseline = GroupMetadata {
        attributes: JsonMap::new(),
        extra_fields: JsonMap::new(),
    };
    let group = |m: &GroupMetadata| NodeMetadata::Group(m.clone());
    representable(to, path, &group(&baseline)).map_err(refuse)?;
    let mut target = baseline.clone();
    target.attributes = source.attributes.clone();
    representable(to, path, &group(&target)).map_err(|e| refuse(format!("its attributes: {e}")))?;
    target.extra_fields = keep_fields(&source.extra_fields, notes, |fields| {
        let mut probe = baseline.clone();
        probe.extra_fields = fields;
        representable(to, path, &group(&probe)).is_ok() && fields_round_trip(to, &group(&probe))
    });
    representable(to, path, &group(&target)).map_err(refuse)?;
    Ok(group(&target))
}

/// The ignorable fields the target can hold (write and read back); the
/// others are dropped with a note.
fn keep_fields(
    fields: &JsonMap,
    notes: &mut Vec<String>,
    fits: impl Fn(JsonMap) -> bool,
) -> JsonMap {
    let mut kept = JsonMap::new();
    for (name, value) in fields {
        let mut one = JsonMap::new();
        one.insert(name.clone(), value.clone());
        if fits(one) {
            kept.insert(name.clone(), value.clone());
        } else {
            let mut shown = value.to_string();
            if shown.len() > 60 {
                shown = format!("{}…", shown.chars().take(60).collect::<String>());
            }
            notes.push(format!(
                "dropped the field `{name}` ({shown}), which the target format cannot hold"
            ));
        }
    }
    kept
}

fn plan_array(
    array: &Array,
    path: &NodePath,
    to: ZarrFormat,
    scratch: &Arc<dyn Store>,
    notes: &mut Vec<String>,
) -> Result<(NodeMetadata, Action), MigrateError> {
    // `path` is where the target gets the array (checked and written to
    // the scratch store there); errors name the source's path.
    let source_path = array.path();
    let source = array.metadata();
    let refuse = |what: String| MigrateError::NotRepresentable {
        path: source_path.clone(),
        format: to,
        what,
    };
    let wrap = |m: &ArrayMetadata| NodeMetadata::Array(m.clone());
    let fits = |m: &ArrayMetadata| representable(to, path, &wrap(m));

    // The target's own defaults for this shape, data type and chunk shape:
    // each feature of the source is tried on top of it alone, so each
    // decision is about that feature.
    let baseline = ArrayBuilder::new(
        array.shape(),
        array.data_type().clone(),
        array.chunk_shape(),
    )
    // The grid itself, so a `rectilinear` one is kept or refused by name.
    .chunk_grid(array.chunk_grid().clone())
    .format(to)
    .build_metadata(path)?;
    fits(&baseline).map_err(refuse)?;
    let with = |change: &dyn Fn(&mut ArrayMetadata)| {
        let mut m = baseline.clone();
        change(&mut m);
        m
    };

    let mut target = baseline.clone();
    target.fill_value = source.fill_value.clone();
    fits(&target).map_err(|e| refuse(format!("its fill value: {e}")))?;
    target.fill_value = plan_fill_value(scratch, path, to, &target, notes)?;

    // The source's encoding, else the `v2` encoding with its separator,
    // else the target's default.
    let candidates = [
        source.chunk_key_encoding.clone(),
        ChunkKeyEncoding::V2 {
            separator: source.chunk_key_encoding.separator(),
        },
    ];
    if let Some(encoding) = candidates
        .into_iter()
        .find(|encoding| fits(&with(&|m| m.chunk_key_encoding = encoding.clone())).is_ok())
    {
        target.chunk_key_encoding = encoding;
    }
    if target.chunk_key_encoding != source.chunk_key_encoding {
        notes.push(format!(
            "chunk key encoding `{}` (separator `{}`) becomes `{}` (separator `{}`)",
            source.chunk_key_encoding.name(),
            source.chunk_key_encoding.separator().as_char(),
            target.chunk_key_encoding.name(),
            target.chunk_key_encoding.separator().as_char(),
        ));
    }

    if !source.storage_transformers.is_empty() {
        target.storage_transformers = source.storage_transformers.clone();
        fits(&with(&|m| {
            m.storage_transformers = source.storage_transformers.clone();
        }))
        .map_err(|e| refuse(format!("its storage transformers: {e}")))?;
    }

    target.attributes = source.attributes.clone();
    let mut xarray_variable = None;
    if let Some(names) = &source.dimension_names {
        if fits(&with(&|m| m.dimension_names = Some(names.clone()))).is_ok() {
            target.dimension_names = Some(names.clone());
        } else {
            move_dimension_names(names, &mut target.attributes, notes).map_err(refuse)?;
            xarray_variable = Some(XarrayDirection::ToAttribute);
        }
    } else if let Some(names) = xarray_dimension_names(&source.attributes, array.ndim(), notes)
        && fits(&with(&|m| m.dimension_names = Some(names.clone()))).is_ok()
    {
        let value = target.attributes.remove(DIMENSIONS_ATTRIBUTE);
        notes.push(format!(
            "the attribute `{DIMENSIONS_ATTRIBUTE}` {} becomes the dimension names (as xarray \
             keeps them in v3)",
            value.unwrap_or_default()
        ));
        target.dimension_names = Some(names);
        xarray_variable = Some(XarrayDirection::ToDimensionNames);
    }
    fits(&with(&|m| m.attributes = target.attributes.clone()))
        .map_err(|e| refuse(format!("its attributes: {e}")))?;

    let mut field_notes = Vec::new();
    target.extra_fields = keep_fields(&source.extra_fields, &mut field_notes, |fields| {
        let probe = with(&|m| m.extra_fields = fields.clone());
        fits(&probe).is_ok() && fields_round_trip(to, &wrap(&probe))
    });
    // v2's `fill_value` marker (`null`, or `0` on an object array) is not
    // dropped: the target writes the fill value the model holds for it.
    // Say which, rather than that a `fill_value` was dropped and then
    // writing one.
    let marker = format::v2::NULL_FILL_VALUE_FIELD;
    for note in field_notes {
        match source.extra_fields.get(marker) {
            Some(value)
                if !target.extra_fields.contains_key(marker)
                    && note.starts_with(&format!("dropped the field `{marker}` ")) =>
            {
                notes.push(format!(
                    "the v2 fill value `{value}` becomes {}, which the target writes for it \
                     (as zarr-python 3.1 reads it)",
                    format::v3::fill_value_to_json(&target.fill_value, &target.data_type)
                ));
            }
            _ => notes.push(note),
        }
    }
    match xarray_variable {
        Some(XarrayDirection::ToDimensionNames) => {
            xarray_fill_to_attribute(source, &mut target, notes)
        }
        Some(XarrayDirection::ToAttribute) => {
            let holds_null = |m: &ArrayMetadata| {
                let mut probe = m.clone();
                format::set_fill_value_undefined(&mut probe);
                fits(&probe).is_ok() && fields_round_trip(to, &wrap(&probe))
            };
            // Only into formats with v2's `null` (v2, v1): xarray reads
            // neither the drafts nor their fill values.
            if holds_null(&baseline) {
                xarray_fill_from_attribute(&mut target, notes);
            }
        }
        None => {}
    }

    // Codecs: keep the chain if the target holds it and reads it back the
    // same; otherwise re-encode.
    let keep = fits(&with(&|m| m.codecs = source.codecs.clone()))
        .and_then(|()| struct_byte_order(to, source));
    let action = match keep {
        Ok(()) => {
            target.codecs = source.codecs.clone();
            fits(&target).map_err(refuse)?;
            // A document the target writes but cannot read back (v3 spells
            // v2's `|O` as the data type `object`, which no v3 reader,
            // zarrkit's included, knows) is refused naming the node and the
            // source's document: the error of reading it back names the
            // scratch store's key (`json/zarr.json`), which the source does
            // not have.
            let read = read_back_codecs(scratch, path, to, &target).map_err(|error| {
                let cause = match &error {
                    MigrateError::Zarr(Error::Metadata { source, .. }) => source.to_string(),
                    MigrateError::Zarr(error) => describe(error),
                    other => other.to_string(),
                };
                let document = format::metadata_key(array.format(), path)
                    .map_or_else(|_| path.to_string(), |key| key.to_string());
                refuse(format!(
                    "its data type `{}` (from `{document}`) does not read back: {cause}",
                    array.data_type()
                ))
            })?;
            match read {
                Some(read) if read == source.codecs => Action::CopyChunks,
                read => {
                    let reason = format!(
                        "the target reads the codecs back as {}, not {}",
                        read.as_deref()
                            .map_or_else(|| "nothing".into(), codec_names),
                        codec_names(&source.codecs)
                    );
                    target.codecs = reencode_codecs(array, path, &baseline, to)?;
                    reencode(reason, &target.codecs)
                }
            }
        }
        Err(reason) => {
            target.codecs = reencode_codecs(array, path, &baseline, to)?;
            reencode(reason, &target.codecs)
        }
    };
    fits(&target).map_err(refuse)?;
    Ok((NodeMetadata::Array(target), action))
}

/// The fill value the target holds, decided before anything is written:
/// `metadata`'s document is written to the scratch store and read back. A
/// NaN whose payload the target cannot spell (v2, v1 and the 2019 drafts
/// write every NaN as `"NaN"`, which reads back as the plain NaN; only the
/// 2022 draft and v3 have the hexadecimal spelling, v3 core "fill_value")
/// becomes that plain NaN, with a note, and verification expects it; any
/// other fill value that would read back differently is refused, naming it.
fn plan_fill_value(
    scratch: &Arc<dyn Store>,
    path: &NodePath,
    to: ZarrFormat,
    metadata: &ArrayMetadata,
    notes: &mut Vec<String>,
) -> Result<FillValue, MigrateError> {
    let wanted = &metadata.fill_value;
    let read = match read_back(scratch, path, to, metadata) {
        Ok(Some(read)) if read.fill_value == *wanted => return Ok(read.fill_value),
        Ok(Some(read)) => read.fill_value,
        // The target's default chain alone may not make a document that
        // reads back (an object array needs the object codec chosen below);
        // `plan_node` reads the whole document back, and verification
        // compares the values.
        Ok(None) | Err(_) => return Ok(wanted.clone()),
    };
    let shown = |fill: &FillValue| format::v3::fill_value_to_json(fill, &metadata.data_type);
    if nan_payload_only(&metadata.data_type, wanted.as_bytes(), read.as_bytes()) {
        notes.push(format!(
            "the fill value {} (a NaN with a payload) becomes the plain NaN {}: the target \
             format writes every NaN as `\"NaN\"`",
            shown(wanted),
            shown(&read)
        ));
        return Ok(read);
    }
    Err(MigrateError::NotRepresentable {
        path: path.clone(),
        format: to,
        what: format!(
            "its fill value {} would read back as {}",
            shown(wanted),
            shown(&read)
        ),
    })
}

/// Whether `a` and `b`, fill values of `data_type`, differ only in NaN
/// payloads: every float component is bit-equal or NaN in both.
fn nan_payload_only(data_type: &DataType, a: &[u8], b: &[u8]) -> bool {
    // (component size, exponent mask, mantissa mask) of IEEE 754 types.
    let (size, exponent, mantissa): (usize, u64, u64) = match data_type {
        DataType::Float16 | DataType::ComplexFloat16 => (2, 0x7c00, 0x03ff),
        DataType::BFloat16 | DataType::ComplexBFloat16 => (2, 0x7f80, 0x007f),
        DataType::Float32 | DataType::Complex64 => (4, 0x7f80_0000, 0x007f_ffff),
        DataType::Float64 | DataType::Complex128 => {
            (8, 0x7ff0_0000_0000_0000, 0x000f_ffff_ffff_ffff)
        }
        _ => return false,
    };
    // The model holds elements in native byte order.
    let is_nan = |bytes: &[u8]| {
        let bits = match *bytes {
            [a, b] => u64::from(u16::from_ne_bytes([a, b])),
            [a, b, c, d] => u64::from(u32::from_ne_bytes([a, b, c, d])),
            [a, b, c, d, e, f, g, h] => u64::from_ne_bytes([a, b, c, d, e, f, g, h]),
            _ => return false,
        };
        bits & exponent == exponent && bits & mantissa != 0
    };
    a.len() == b.len()
        && a.chunks(size)
            .zip(b.chunks(size))
            .all(|(x, y)| x == y || (is_nan(x) && is_nan(y)))
}

/// Writes `metadata` into the scratch store and reads it back, or `None`
/// if the target reads back something else than an array.
fn read_back(
    scratch: &Arc<dyn Store>,
    path: &NodePath,
    to: ZarrFormat,
    metadata: &ArrayMetadata,
) -> Result<Option<ArrayMetadata>, MigrateError> {
    format::write_node(
        scratch.as_ref(),
        path,
        to,
        &NodeMetadata::Array(metadata.clone()),
    )?;
    match format::read_node_as(scratch.as_ref(), path, to)? {
        Some(NodeMetadata::Array(read)) => Ok(Some(read)),
        _ => Ok(None),
    }
}

/// A v3 `struct` has one byte order for all its fields (the `bytes`
/// codec's `endian`, extensions/data-types/struct "Endianness"): a struct
/// whose fields differ in byte order (the internal `zarrkit.struct_bytes`
/// codec) is re-encoded unless the target spells NumPy's `descr` (v1, v2,
/// zarr-python 2.x's experimental v3).
fn struct_byte_order(to: ZarrFormat, source: &ArrayMetadata) -> Result<(), String> {
    if to.holds_mixed_byte_order_structs()
        || !source
            .codecs
            .iter()
            .any(|c| c.name == crate::codec::struct_bytes::NAME)
    {
        return Ok(());
    }
    Err(
        "its struct fields differ in byte order, and outside v1, v2 and v3-draft-2019-json a \
         struct has one byte order for all fields"
            .into(),
    )
}

fn reencode(reason: String, codecs: &[ExtensionObject]) -> Action {
    Action::ReEncode {
        reason,
        codecs: codecs.iter().map(|c| c.name.clone()).collect(),
    }
}

fn codec_names(codecs: &[ExtensionObject]) -> String {
    let names: Vec<&str> = codecs.iter().map(|c| c.name.as_str()).collect();
    format!("[{}]", names.join(", "))
}

/// Which way an xarray variable's dimension names move.
#[derive(Clone, Copy)]
enum XarrayDirection {
    /// From `_ARRAY_DIMENSIONS` into `dimension_names` (v2 → v3).
    ToDimensionNames,
    /// From `dimension_names` into `_ARRAY_DIMENSIONS` (v3 → v2).
    ToAttribute,
}

/// The attribute in which xarray keeps a v3 variable's missing-value
/// marker; in v2 xarray takes the array's `fill_value` as that marker
/// (`null`: none).
const XARRAY_FILL_ATTRIBUTE: &str = "_FillValue";

/// `fill` as xarray 2026.9's `FillValueCoder.encode` writes `_FillValue`
/// in v3 (`xarray/backends/zarr.py`): `bool` and integers as JSON
/// numbers, floats as the base64 of the value as a little-endian `float64`,
/// complex numbers as two of those; `None` for other types.
fn xarray_fill_attribute(fill: &FillValue, data_type: &DataType) -> Option<serde_json::Value> {
    use base64::Engine as _;
    let b64 = |x: f64| {
        serde_json::Value::from(base64::engine::general_purpose::STANDARD.encode(x.to_le_bytes()))
    };
    let bytes = fill.as_bytes();
    let float = |b: &[u8]| -> Option<f64> {
        Some(match b.len() {
            2 => half::f16::from_bits(u16::from_ne_bytes(b.try_into().ok()?)).to_f64(),
            4 => f64::from(f32::from_ne_bytes(b.try_into().ok()?)),
            8 => f64::from_ne_bytes(b.try_into().ok()?),
            _ => return None,
        })
    };
    let int = |signed: bool| -> Option<serde_json::Value> {
        let mut word = [0u8; 8];
        let n = bytes.len();
        if n > 8 {
            return None;
        }
        if cfg!(target_endian = "little") {
            word[..n].copy_from_slice(bytes);
            if signed && bytes[n - 1] & 0x80 != 0 {
                word[n..].fill(0xff);
            }
        } else {
            word[8 - n..].copy_from_slice(bytes);
            if signed && bytes[0] & 0x80 != 0 {
                word[..8 - n].fill(0xff);
            }
        }
        Some(if signed {
            i64::from_ne_bytes(word).into()
        } else {
            u64::from_ne_bytes(word).into()
        })
    };
    match data_type {
        DataType::Bool => Some(serde_json::Value::Bool(bytes.first()? != &0)),
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => int(true),
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => int(false),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => Some(b64(float(bytes)?)),
        DataType::Complex64 | DataType::Complex128 => {
            let (re, im) = bytes.split_at(bytes.len() / 2);
            Some(serde_json::Value::Array(vec![
                b64(float(re)?),
                b64(float(im)?),
            ]))
        }
        _ => None,
    }
}

/// v2 → v3 of an xarray variable: xarray masks a v2 array's `fill_value`
/// (unless `null`) but in v3 only its `_FillValue` attribute, so the fill
/// value becomes that attribute, as xarray writes it in v3.
fn xarray_fill_to_attribute(
    source: &ArrayMetadata,
    target: &mut ArrayMetadata,
    notes: &mut Vec<String>,
) {
    let null = format::fill_value_is_undefined(source);
    if null || target.attributes.contains_key(XARRAY_FILL_ATTRIBUTE) {
        return;
    }
    if let Some(value) = xarray_fill_attribute(&source.fill_value, &source.data_type) {
        notes.push(format!(
            "the fill value becomes xarray's attribute `{XARRAY_FILL_ATTRIBUTE}` {value} (xarray \
             masks it in v2, and in v3 only that attribute)"
        ));
        target
            .attributes
            .insert(XARRAY_FILL_ATTRIBUTE.into(), value);
    }
}

/// v3 → v2 of an xarray variable: a `_FillValue` attribute equal to the
/// fill value goes (v2's `fill_value` says it, as xarray writes v2); with
/// none, a zero fill value is written as `null`, as xarray writes v2 arrays
/// without a missing value (it would mask the zeros otherwise).
fn xarray_fill_from_attribute(target: &mut ArrayMetadata, notes: &mut Vec<String>) {
    let encoded = xarray_fill_attribute(&target.fill_value, &target.data_type);
    match target.attributes.get(XARRAY_FILL_ATTRIBUTE) {
        Some(value) if Some(value) == encoded.as_ref() => {
            notes.push(format!(
                "xarray's attribute `{XARRAY_FILL_ATTRIBUTE}` {value} goes: the fill value says it \
                 in the target, as xarray writes it"
            ));
            target.attributes.remove(XARRAY_FILL_ATTRIBUTE);
        }
        Some(_) => {}
        None if encoded.is_some() && target.fill_value == FillValue::zero(&target.data_type) => {
            notes.push(format!(
                "the fill value 0 is written as `null`: xarray would take it as the missing value, \
                 and the variable has no `{XARRAY_FILL_ATTRIBUTE}`"
            ));
            format::set_fill_value_undefined(target);
        }
        None => {}
    }
}

/// The dimension names xarray keeps in the attribute `_ARRAY_DIMENSIONS`
/// of a v2 array (one string per dimension; xarray's "Zarr encoding
/// specification"), or `None` if there is no such attribute. An attribute
/// of another shape is kept as it is, with a note.
fn xarray_dimension_names(
    attributes: &JsonMap,
    ndim: usize,
    notes: &mut Vec<String>,
) -> Option<Vec<Option<String>>> {
    let value = attributes.get(DIMENSIONS_ATTRIBUTE)?;
    let names: Option<Vec<Option<String>>> = value.as_array().and_then(|items| {
        items
            .iter()
            .map(|item| item.as_str().map(|name| Some(name.to_string())))
            .collect()
    });
    match names {
        Some(names) if names.len() == ndim => Some(names),
        _ => {
            notes.push(format!(
                "kept the attribute `{DIMENSIONS_ATTRIBUTE}` {value} as it is: it is not one \
                 name per dimension ({ndim})"
            ));
            None
        }
    }
}

/// The dimension names as xarray's `_ARRAY_DIMENSIONS` attribute.
fn move_dimension_names(
    names: &[Option<String>],
    attributes: &mut JsonMap,
    notes: &mut Vec<String>,
) -> Result<(), String> {
    let Some(names): Option<Vec<String>> = names.iter().cloned().collect() else {
        return Err(format!(
            "the target format has no dimension names, and they cannot become the attribute \
             `{DIMENSIONS_ATTRIBUTE}` because some dimensions are unnamed"
        ));
    };
    let value = serde_json::Value::from(names);
    match attributes.get(DIMENSIONS_ATTRIBUTE) {
        Some(existing) if *existing != value => {
            return Err(format!(
                "the target format has no dimension names, and the attribute \
                 `{DIMENSIONS_ATTRIBUTE}` already holds {existing}, not the dimension names {value}"
            ));
        }
        _ => {}
    }
    attributes.insert(DIMENSIONS_ATTRIBUTE.into(), value.clone());
    notes.push(format!(
        "dimension names {value} go to the attribute `{DIMENSIONS_ATTRIBUTE}` (the target format has none)"
    ));
    Ok(())
}

/// The v3 codecs that zarr-python 3.1 and tensorstore 0.1.86 both read:
/// v3 core's (v3 core "Codecs": `bytes`, `transpose`, `gzip`, `zstd`,
/// `blosc`, `crc32c`) and `sharding_indexed`. Checked against both by
/// `migrate --portable`'s interop test.
pub const PORTABLE_CODECS: &[&str] = &[
    "bytes",
    "transpose",
    "gzip",
    "zstd",
    "blosc",
    "crc32c",
    "sharding_indexed",
];

/// The v3 core data types (v3 core "Data types") that both zarr-python
/// 3.1.6 and tensorstore 0.1.86 read; `r*` raw types neither reads.
const CORE_DATA_TYPES: &[&str] = &[
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
];

/// The extension data types zarr-python 3.1.6 reads besides the core ones
/// (its data type registry: the string and bytes types, NumPy datetimes;
/// its struct type is `structured`, not the registered `struct`).
const ZARR_PYTHON_DATA_TYPES: &[&str] = &[
    "string",
    "bytes",
    "variable_length_bytes",
    "fixed_length_utf32",
    "null_terminated_bytes",
    "numpy.datetime64",
    "numpy.timedelta64",
];

/// The extension data types tensorstore 0.1.86 reads besides the core ones
/// (its `zarr3` driver: `bfloat16`, the small types it names alike, and
/// `struct`; no string, bytes or datetime types).
const TENSORSTORE_DATA_TYPES: &[&str] = &[
    "bfloat16",
    "int2",
    "int4",
    "float4_e2m1fn",
    "float8_e4m3fnuz",
    "float8_e4m3b11fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "struct",
];

/// A common v3 reader, and what it reads.
struct Reader {
    name: &'static str,
    data_types: &'static [&'static str],
    reads_codec: fn(&str) -> bool,
}

/// zarr-python 3.1 (which also registers numcodecs' codecs as
/// `numcodecs.<id>` and the `vlen-*` string codecs) and tensorstore.
const READERS: [Reader; 2] = [
    Reader {
        name: "zarr-python 3.1",
        data_types: ZARR_PYTHON_DATA_TYPES,
        reads_codec: |name| {
            PORTABLE_CODECS.contains(&name)
                || name.starts_with("numcodecs.")
                || name.starts_with("vlen-")
        },
    },
    Reader {
        name: "tensorstore",
        data_types: TENSORSTORE_DATA_TYPES,
        reads_codec: |name| PORTABLE_CODECS.contains(&name),
    },
];

/// The names of every codec in a v3 codec list, nested ones (inside
/// `sharding_indexed`'s `codecs` and `index_codecs`) included.
fn codec_names_deep(codecs: &serde_json::Value, names: &mut Vec<String>) {
    for codec in codecs.as_array().into_iter().flatten() {
        let Some(name) = codec.get("name").and_then(|n| n.as_str()) else {
            continue;
        };
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
        if let Some(configuration) = codec.get("configuration") {
            for nested in ["codecs", "index_codecs"] {
                if let Some(list) = configuration.get(nested) {
                    codec_names_deep(list, names);
                }
            }
        }
    }
}

/// What common v3 readers cannot open in `metadata` written as v3:
/// zarr-python 3.1 reads neither the data type `struct` (it reads
/// `structured`) nor the raw `r*` and small types; tensorstore reads no
/// `numcodecs.*` codec (zarr-python 3.1 registers numcodecs' codecs under
/// those names), no `vlen-*` codec and no string, bytes or datetime type.
/// One message per reader, naming what it lacks; empty when both read it.
/// The v3 core spec leaves codecs and data types beyond its own to
/// extensions, which readers need not implement; these lists follow what
/// zarr-python 3.1.6 and tensorstore 0.1.86 register.
#[must_use]
pub fn reader_warnings(metadata: &ArrayMetadata) -> Vec<String> {
    let Ok(document) = format::v3_document(&NodeMetadata::Array(metadata.clone())) else {
        return Vec::new();
    };
    let data_type = match &document["data_type"] {
        serde_json::Value::String(name) => name.clone(),
        other => other
            .get("name")
            .and_then(|n| n.as_str())
            .unwrap_or_default()
            .to_string(),
    };
    let mut codecs = Vec::new();
    codec_names_deep(&document["codecs"], &mut codecs);
    let mut warnings = Vec::new();
    for Reader {
        name: reader,
        data_types,
        reads_codec,
    } in READERS
    {
        let mut lacks = Vec::new();
        let data_type_read =
            |name: &str| CORE_DATA_TYPES.contains(&name) || data_types.contains(&name);
        if !data_type_read(&data_type) {
            lacks.push(format!("the data type `{data_type}`"));
        }
        let missing: Vec<String> = codecs
            .iter()
            .filter(|name| !reads_codec(name))
            .map(|name| format!("`{name}`"))
            .collect();
        if !missing.is_empty() {
            lacks.push(format!(
                "the {} {}",
                if missing.len() == 1 {
                    "codec"
                } else {
                    "codecs"
                },
                missing.join(", ")
            ));
        }
        if !lacks.is_empty() {
            warnings.push(format!("{reader} cannot read {}", lacks.join(" or ")));
        }
    }
    warnings
}

/// `--portable` into v3: the array re-encoded with [`PORTABLE_CODECS`]
/// when its chain has any other codec.
fn make_portable(
    array: &Array,
    target: NodeMetadata,
    action: Action,
) -> Result<(NodeMetadata, Action), MigrateError> {
    let NodeMetadata::Array(mut metadata) = target else {
        return Ok((target, action));
    };
    let document = serde_json::to_value(
        metadata
            .codecs
            .iter()
            .map(|c| serde_json::json!({ "name": c.name, "configuration": c.configuration }))
            .collect::<Vec<_>>(),
    )
    .unwrap_or_default();
    let mut names = Vec::new();
    codec_names_deep(&document, &mut names);
    let foreign: Vec<String> = names
        .iter()
        .filter(|n| !PORTABLE_CODECS.contains(&n.as_str()))
        .map(|n| format!("`{n}`"))
        .collect();
    if foreign.is_empty() {
        return Ok((NodeMetadata::Array(metadata), action));
    }
    let baseline = ArrayBuilder::new(
        array.shape(),
        array.data_type().clone(),
        array.chunk_shape(),
    )
    // The builder's default format is v3.
    .chunk_grid(array.chunk_grid().clone())
    .build_metadata(array.path())?;
    let portable_compressor = array
        .codecs()
        .codecs()
        .iter()
        .find_map(|codec| match codec {
            Codec::BytesToBytes(c) if PORTABLE_CODECS.contains(&c.metadata().name.as_str()) => {
                Some(c.metadata())
            }
            _ => None,
        });
    let mut candidates = Vec::new();
    if let (Some(compressor), Some(bytes)) = (portable_compressor, baseline.codecs.first()) {
        candidates.push(vec![bytes.clone(), compressor]);
    }
    candidates.push(baseline.codecs.clone());
    // Only a chain of portable codecs is worth re-encoding into: a data
    // type that needs another codec (`string` needs `vlen-utf8`) keeps its
    // chain, and its warning.
    let Some(codecs) = candidates.into_iter().find(|codecs| {
        codecs
            .iter()
            .all(|c| PORTABLE_CODECS.contains(&c.name.as_str()))
            && CodecChain::from_metadata(codecs, &chunk_repr(array)).is_ok()
    }) else {
        return Ok((NodeMetadata::Array(metadata), action));
    };
    metadata.codecs = codecs;
    let action = reencode(
        format!(
            "--portable: not every v3 reader has the {} {}",
            if foreign.len() == 1 {
                "codec"
            } else {
                "codecs"
            },
            foreign.join(", ")
        ),
        &metadata.codecs,
    );
    Ok((NodeMetadata::Array(metadata), action))
}

/// Writes `metadata` into the scratch store and reads its canonical codecs
/// back, or `None` if the target reads back something else than an array.
fn read_back_codecs(
    scratch: &Arc<dyn Store>,
    path: &NodePath,
    to: ZarrFormat,
    metadata: &ArrayMetadata,
) -> Result<Option<Vec<ExtensionObject>>, MigrateError> {
    let Some(read) = read_back(scratch, path, to, metadata)? else {
        return Ok(None);
    };
    let array = Array::from_metadata(Arc::clone(scratch), path.clone(), to, read)?;
    Ok(Some(array.metadata().codecs.clone()))
}

/// A codec chain the target can hold for re-encoded chunks.
fn reencode_codecs(
    array: &Array,
    path: &NodePath,
    baseline: &ArrayMetadata,
    to: ZarrFormat,
) -> Result<Vec<ExtensionObject>, MigrateError> {
    let bytes = baseline
        .codecs
        .first()
        .cloned()
        .unwrap_or_else(|| ExtensionObject::new("bytes"));
    let mut candidates: Vec<Vec<ExtensionObject>> = array
        .codecs()
        .codecs()
        .iter()
        .filter_map(|codec| match codec {
            Codec::BytesToBytes(c) => Some(vec![bytes.clone(), c.metadata()]),
            _ => None,
        })
        .collect();
    candidates.push(baseline.codecs.clone());
    candidates.push(vec![bytes]);
    for codecs in candidates {
        let mut probe = baseline.clone();
        probe.codecs = codecs;
        let repr_ok = CodecChain::from_metadata(&probe.codecs, &chunk_repr(array)).is_ok();
        if repr_ok && representable(to, path, &NodeMetadata::Array(probe.clone())).is_ok() {
            return Ok(probe.codecs);
        }
    }
    Err(MigrateError::NotRepresentable {
        path: array.path().clone(),
        format: to,
        what: "no codec chain the target can hold encodes its chunks".into(),
    })
}

fn chunk_repr(array: &Array) -> crate::codec::ChunkRepr {
    crate::codec::ChunkRepr {
        shape: array.chunk_shape().to_vec(),
        data_type: array.data_type().clone(),
        fill_value: array.fill_value().clone(),
    }
}

/// The coordinates of the stored chunks of `array`, sorted: those of
/// [`Array::stored_chunks`].
///
/// # Errors
/// A store error.
pub fn stored_chunks(array: &Array) -> Result<Vec<Vec<u64>>, Error> {
    Ok(array
        .stored_chunks()?
        .into_iter()
        .map(|chunk| chunk.chunk_coords)
        .collect())
}

/// How many chunks of `array` a batch holds.
fn batch_len(array: &Array) -> usize {
    let chunk_bytes = array
        .chunk_shape()
        .iter()
        .try_fold(array.data_type().size() as u64, |acc, &n| {
            acc.checked_mul(n)
        })
        .unwrap_or(u64::MAX)
        .max(1);
    usize::try_from(BATCH_BYTES / chunk_bytes)
        .unwrap_or(MAX_BATCH_CHUNKS)
        .clamp(1, MAX_BATCH_CHUNKS)
}

/// Carries out `plan`: writes every node's document, copies or re-encodes
/// every stored chunk, then verifies that every array of the destination
/// reads back identical to the source. `progress` is called after each
/// batch of chunks.
///
/// The destination holds [`MIGRATION_MARKER`] from the first write until
/// verification passes; a plan that resumes skips the chunks already
/// copied.
///
/// # Errors
/// [`MigrateError::DestinationNotEmpty`] if something was written to the
/// destination since planning, [`MigrateError::Mismatch`] naming the array
/// and chunk if verification fails, or a store, decode or encode error
/// naming the key. The destination is left as far as the migration got.
pub fn migrate(
    plan: &MigrationPlan,
    progress: &mut dyn FnMut(Progress),
) -> Result<MigrationReport, MigrateError> {
    let mut report = copy(plan, progress)?;
    if plan.verifies() {
        report.chunks_verified = verify(plan, progress)?;
    }
    finish(plan)?;
    Ok(report)
}

/// The first step of [`migrate`]: writes the marker, every node's document
/// and every chunk, and leaves the marker there (see [`verify`] and
/// [`finish`]).
///
/// # Errors
/// As [`migrate`], but for verification.
pub fn copy(
    plan: &MigrationPlan,
    progress: &mut dyn FnMut(Progress),
) -> Result<MigrationReport, MigrateError> {
    let resume = plan.resume
        && unfinished(
            plan.dst.as_ref(),
            plan.to,
            plan.options.fingerprint().as_deref(),
        )?;
    if !resume {
        check_empty(plan.dst.as_ref())?;
    }
    // The marker goes first and stays until everything is verified: an
    // interrupted migration is then recognisable (and resumable), never
    // taken for a complete one.
    let marker = migration_marker();
    plan.dst
        .set(&marker, &marker_document(plan.to, &plan.options))?;
    let budget = plan.options.memory_budget.unwrap_or(DEFAULT_COPY_BUDGET);
    let cast = plan
        .options
        .layout
        .as_ref()
        .map_or(Cast::Strict, |layout| layout.cast());
    let mut report = MigrationReport::default();
    let mut targets = Vec::new();
    for node in &plan.nodes {
        format::write_node(plan.dst.as_ref(), &node.target_path, plan.to, &node.target)?;
        match (&node.source, &node.target) {
            (Some(Node::Array(source)), NodeMetadata::Array(metadata)) => {
                let mut target = Array::from_metadata(
                    Arc::clone(&plan.dst),
                    node.target_path.clone(),
                    plan.to,
                    metadata.clone(),
                )?;
                // Keep the source's set of stored chunks, even those equal to
                // the fill value everywhere; a rewritten array stores none
                // (its chunks are new).
                target.set_write_empty_chunks(!matches!(node.action, Action::Rewrite { .. }));
                targets.push((node, source, target));
            }
            _ => report.groups += 1,
        }
    }

    let total = plan.total_work();
    let mut done = 0u64;
    for &(node, source, ref target) in &targets {
        if let Action::Rewrite { changes } = &node.action {
            let stats = copy::copy_array(source, target, cast, budget, resume, &mut |n| {
                done += n;
                progress(Progress {
                    phase: Phase::Copy,
                    path: node.path.clone(),
                    chunks_done: done,
                    chunks_total: total,
                    bytes_done: 0,
                });
            })?;
            report.chunks += stats.written;
            report.chunks_skipped += stats.skipped;
            // Everything the source stores is read; what the target
            // stores now was written (by this run or, resumed, before).
            report.bytes_read += node.bytes;
            report.bytes_written += target.stored_size()?.bytes;
            report
                .arrays_rewritten
                .push((node.target_path.clone(), changes.join(", ")));
            continue;
        }
        let coords = stored_chunks(source)?;
        for batch in coords.chunks(batch_len(source)) {
            let reencode = matches!(node.action, Action::ReEncode { .. });
            let results: Vec<Result<Option<(u64, u64)>, Error>> = batch
                .par_iter()
                .map(|c| {
                    if resume && already_copied(source, target, c, reencode)? {
                        return Ok(None);
                    }
                    if reencode {
                        reencode_chunk(source, target, c).map(Some)
                    } else {
                        copy_chunk(source, target, c).map(Some)
                    }
                })
                .collect();
            for result in results {
                match result? {
                    Some((read, written)) => {
                        report.bytes_read += read;
                        report.bytes_written += written;
                        report.chunks += 1;
                    }
                    None => report.chunks_skipped += 1,
                }
            }
            done += batch.len() as u64;
            progress(Progress {
                phase: Phase::Copy,
                path: node.path.clone(),
                chunks_done: done,
                chunks_total: total,
                bytes_done: report.bytes_read,
            });
        }
        match &node.action {
            Action::ReEncode { reason, .. } => report
                .arrays_reencoded
                .push((node.target_path.clone(), reason.clone())),
            _ => report.arrays_copied += 1,
        }
    }

    Ok(report)
}

/// The second step of [`migrate`] (which runs it unless the plan says not
/// to verify): reads every array of the destination back and compares it
/// with the source; returns the number of chunk regions compared.
///
/// # Errors
/// [`MigrateError::Mismatch`] or [`CopyError::Mismatch`] naming the array
/// and chunk that differ, or a read error.
pub fn verify(
    plan: &MigrationPlan,
    progress: &mut dyn FnMut(Progress),
) -> Result<u64, MigrateError> {
    let budget = plan.options.memory_budget.unwrap_or(DEFAULT_COPY_BUDGET);
    let cast = plan
        .options
        .layout
        .as_ref()
        .map_or(Cast::Strict, |layout| layout.cast());
    let total = plan.total_work();
    let mut done = 0u64;
    for node in &plan.nodes {
        let (Some(Node::Array(source)), NodeMetadata::Array(planned)) =
            (&node.source, &node.target)
        else {
            continue;
        };
        let target = Array::open(Arc::clone(&plan.dst), node.target_path.as_str())?;
        if matches!(node.action, Action::Rewrite { .. }) {
            copy::verify_array(source, &target, cast, budget, &mut |n| {
                done += n;
                progress(Progress {
                    phase: Phase::Verify,
                    path: node.path.clone(),
                    chunks_done: done,
                    chunks_total: total,
                    bytes_done: 0,
                });
            })?;
            continue;
        }
        // The planned fill value: the source's, or a plain NaN for a NaN
        // whose payload the target cannot spell (noted in the plan).
        done += verify_array(source, &target, &planned.fill_value, done, total, progress)?;
    }
    Ok(done)
}

/// The last step of [`migrate`]: writes the consolidated metadata if the
/// plan says so, then erases the marker, so the destination opens as a
/// finished store.
///
/// # Errors
/// A store error.
pub fn finish(plan: &MigrationPlan) -> Result<(), MigrateError> {
    let marker = migration_marker();
    if plan.consolidate {
        crate::format::consolidate::consolidate(plan.dst.as_ref(), "/")?;
    }
    // Last: until here the destination is marked unfinished.
    plan.dst.erase(&marker)?;
    Ok(())
}

/// Whether a resumed migration already wrote chunk `coords` of `target`
/// as the source has it: the same bytes when copied, the same elements
/// when re-encoded. A chunk that does not decode is written again.
fn already_copied(
    source: &Array,
    target: &Array,
    coords: &[u64],
    reencode: bool,
) -> Result<bool, Error> {
    let Some(stored) = target.store().get(&target.chunk_key(coords)?, None)? else {
        return Ok(false);
    };
    if !reencode {
        let original = source.store().get(&source.chunk_key(coords)?, None)?;
        return Ok(original.as_deref() == Some(stored.as_slice()));
    }
    match region_matches(source, target, &source.chunk_region(coords)) {
        Err(Error::Decode { .. }) => Ok(false),
        matches => matches,
    }
}

/// Whether `region` reads the same from `source` and `target`.
fn region_matches(source: &Array, target: &Array, region: &Region) -> Result<bool, Error> {
    if source.data_type().is_variable_length() {
        Ok(source.read_vlen(region)? == target.read_vlen(region)?)
    } else {
        Ok(source.read_region_bytes(region)? == target.read_region_bytes(region)?)
    }
}

/// Copies one chunk's bytes; returns (bytes read, bytes written).
fn copy_chunk(source: &Array, target: &Array, coords: &[u64]) -> Result<(u64, u64), Error> {
    let key = source.chunk_key(coords)?;
    let Some(bytes) = source.store().get(&key, None)? else {
        return Ok((0, 0));
    };
    target.store().set(&target.chunk_key(coords)?, &bytes)?;
    let n = bytes.len() as u64;
    Ok((n, n))
}

/// Decodes one chunk's region and writes it with the target's chain.
fn reencode_chunk(source: &Array, target: &Array, coords: &[u64]) -> Result<(u64, u64), Error> {
    let read = source
        .store()
        .size(&source.chunk_key(coords)?)?
        .unwrap_or(0);
    let region = source.chunk_region(coords);
    if source.data_type().is_variable_length() {
        target.write_vlen(&region, &source.read_vlen(&region)?)?;
    } else {
        let data = source.read_region_bytes(&region)?;
        target.write_region_bytes(&region, &data)?;
    }
    let written = target
        .store()
        .size(&target.chunk_key(coords)?)?
        .unwrap_or(0);
    Ok((read, written))
}

/// Compares `source` and `target` chunk region by chunk region over the
/// chunks stored in either; returns the number of regions compared.
fn verify_array(
    source: &Array,
    target: &Array,
    expected_fill: &FillValue,
    done_before: u64,
    total: u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<u64, MigrateError> {
    let path = source.path();
    let mismatch = |coords: &[u64]| MigrateError::Mismatch {
        path: path.clone(),
        chunk_coords: coords.to_vec(),
        region: copy::region_text(&source.chunk_region(coords)),
    };
    if source.shape() != target.shape()
        || source.chunk_grid() != target.chunk_grid()
        || source.data_type() != target.data_type()
    {
        return Err(MigrateError::Mismatch {
            path: path.clone(),
            chunk_coords: Vec::new(),
            region: format!(
                "the whole array: shape, chunk shape or data type differ ({:?} {:?} {} vs {:?} {:?} {})",
                source.shape(),
                source.chunk_shape(),
                source.data_type(),
                target.shape(),
                target.chunk_shape(),
                target.data_type()
            ),
        });
    }
    // Chunks stored in neither read as the fill value in both, if the fill
    // values agree (up to a NaN payload the plan noted).
    if target.fill_value() != expected_fill {
        return Err(MigrateError::Mismatch {
            path: path.clone(),
            chunk_coords: Vec::new(),
            region: "the fill value".into(),
        });
    }
    let mut coords = stored_chunks(source)?;
    coords.extend(stored_chunks(target)?);
    coords.sort_unstable();
    coords.dedup();
    let mut done = 0u64;
    for batch in coords.chunks(batch_len(source)) {
        let results: Vec<Result<bool, Error>> = batch
            .par_iter()
            .map(|c| region_matches(source, target, &source.chunk_region(c)))
            .collect();
        for (c, result) in batch.iter().zip(results) {
            if !result? {
                return Err(mismatch(c));
            }
        }
        done += batch.len() as u64;
        progress(Progress {
            phase: Phase::Verify,
            path: path.clone(),
            chunks_done: done_before + done,
            chunks_total: total,
            bytes_done: 0,
        });
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_values_encode_as_xarray_fill_value_coder_does() {
        use serde_json::json;
        // Expected: xarray 2026.9.0, `FillValueCoder.encode(value, dtype)`.
        let f = |bytes: Vec<u8>, data_type: DataType| {
            xarray_fill_attribute(&FillValue::new(bytes), &data_type)
        };
        assert_eq!(
            f(1.5f32.to_ne_bytes().to_vec(), DataType::Float32),
            Some(json!("AAAAAAAA+D8="))
        );
        assert_eq!(
            f(f64::NAN.to_ne_bytes().to_vec(), DataType::Float64),
            Some(json!("AAAAAAAA+H8="))
        );
        assert_eq!(
            f(
                half::f16::from_f32(-2.0).to_ne_bytes().to_vec(),
                DataType::Float16
            ),
            Some(json!("AAAAAAAAAMA="))
        );
        assert_eq!(
            f((-7i16).to_ne_bytes().to_vec(), DataType::Int16),
            Some(json!(-7))
        );
        assert_eq!(
            f(u64::MAX.to_ne_bytes().to_vec(), DataType::UInt64),
            Some(json!(18_446_744_073_709_551_615u64))
        );
        assert_eq!(f(vec![1], DataType::Bool), Some(json!(true)));
        let mut complex = 1.0f32.to_ne_bytes().to_vec();
        complex.extend(f32::NEG_INFINITY.to_ne_bytes());
        assert_eq!(
            f(complex, DataType::Complex64),
            Some(json!(["AAAAAAAA8D8=", "AAAAAAAA8P8="]))
        );
        assert_eq!(f(vec![0; 3], DataType::FixedBytes(3)), None);
    }

    #[test]
    fn only_nan_payloads_may_differ() {
        let f32_bytes = |bits: u32| bits.to_ne_bytes().to_vec();
        assert!(nan_payload_only(
            &DataType::Float32,
            &f32_bytes(0x7fc0_0001),
            &f32_bytes(0x7fc0_0000)
        ));
        assert!(!nan_payload_only(
            &DataType::Float32,
            &f32_bytes(0x7f80_0000),
            &f32_bytes(0x7fc0_0000)
        ));
        assert!(!nan_payload_only(
            &DataType::Int32,
            &f32_bytes(1),
            &f32_bytes(2)
        ));
        let mut a = 1.0f64.to_ne_bytes().to_vec();
        a.extend(0x7ff0_0000_0000_0001u64.to_ne_bytes());
        let mut b = 1.0f64.to_ne_bytes().to_vec();
        b.extend(f64::NAN.to_ne_bytes());
        assert!(nan_payload_only(&DataType::Complex128, &a, &b));
        let mut c = 2.0f64.to_ne_bytes().to_vec();
        c.extend(f64::NAN.to_ne_bytes());
        assert!(!nan_payload_only(&DataType::Complex128, &a, &c));
    }

    #[test]
    fn dimension_names_become_the_xarray_attribute_only_when_all_are_named() {
        let mut attributes = JsonMap::new();
        let mut notes = Vec::new();
        move_dimension_names(
            &[Some("y".into()), Some("x".into())],
            &mut attributes,
            &mut notes,
        )
        .unwrap();
        assert_eq!(
            attributes[DIMENSIONS_ATTRIBUTE],
            serde_json::json!(["y", "x"])
        );
        assert_eq!(notes.len(), 1);
        let error =
            move_dimension_names(&[Some("y".into()), None], &mut JsonMap::new(), &mut notes)
                .unwrap_err();
        assert!(error.contains("unnamed"), "{error}");
        let mut clashing = JsonMap::new();
        clashing.insert(DIMENSIONS_ATTRIBUTE.into(), serde_json::json!(["a"]));
        let error =
            move_dimension_names(&[Some("y".into())], &mut clashing, &mut notes).unwrap_err();
        assert!(error.contains("already holds"), "{error}");
    }

    #[test]
    fn a_node_of_a_hierarchy_is_copied_in_a_new_layout_as_the_root_and_resumed() {
        use crate::copy::Layout;
        use crate::migrate;
        use crate::store::MemoryStore;
        let src: Arc<dyn Store> = Arc::new(MemoryStore::new());
        crate::Group::create(src.clone(), "/", JsonMap::new()).unwrap();
        let mut attributes = JsonMap::new();
        attributes.insert("title".into(), "g".into());
        crate::Group::create(src.clone(), "/g", attributes).unwrap();
        let a = Array::builder(&[10, 10], DataType::Float32, &[5, 5])
            .create(src.clone(), "/g/a")
            .unwrap();
        let values: Vec<f32> = (0..100u8).map(f32::from).collect();
        a.write_region(&Region::whole(&[10, 10]), &values).unwrap();

        let layout = Layout {
            chunk_shape: Some(vec![10, 2]),
            ..Layout::default()
        };
        let options = PlanOptions::default()
            .root(NodePath::new("/g").unwrap())
            .layout(Arc::new(layout))
            .verify(true);
        let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let plan = migrate::plan_with(
            src.clone(),
            dst.clone(),
            crate::format::ZarrFormat::V3,
            &options,
        )
        .unwrap();
        let paths: Vec<(&str, &str)> = plan
            .nodes()
            .iter()
            .map(|n| (n.path.as_str(), n.target_path.as_str()))
            .collect();
        assert_eq!(paths, [("/g", "/"), ("/g/a", "/a")]);
        assert!(
            matches!(&plan.nodes()[1].action, Action::Rewrite { changes } if changes[0] == "chunk grid [5, 5] → [10, 2]")
        );
        assert_eq!(plan.total_work(), 5);
        // Interrupted after the copy, before the marker goes.
        let report = migrate::copy(&plan, &mut |_| {}).unwrap();
        assert_eq!(report.chunks, 5);
        assert!(crate::node::check_finished(dst.as_ref()).is_err());
        // Planned again, the same copy resumes; another layout does not.
        let plan = migrate::plan_with(
            src.clone(),
            dst.clone(),
            crate::format::ZarrFormat::V3,
            &options,
        )
        .unwrap();
        assert!(plan.resumes());
        let other = PlanOptions::default()
            .root(NodePath::new("/g").unwrap())
            .layout(Arc::new(Layout::default()));
        assert!(matches!(
            migrate::plan_with(
                src.clone(),
                dst.clone(),
                crate::format::ZarrFormat::V3,
                &other
            ),
            Err(migrate::MigrateError::UnfinishedWithOtherOptions { .. })
        ));
        let report = migrate::migrate(&plan, &mut |_| {}).unwrap();
        assert_eq!(
            (report.chunks, report.chunks_skipped, report.chunks_verified),
            (0, 5, 5)
        );
        crate::node::check_finished(dst.as_ref()).unwrap();
        let root = crate::Group::open(dst.clone(), "/").unwrap();
        assert_eq!(root.attributes()["title"], "g");
        let copied = Array::open(dst, "/a").unwrap();
        assert_eq!(copied.chunk_shape(), [10, 2]);
        assert_eq!(
            copied
                .read_region::<f32>(&Region::whole(&[10, 10]))
                .unwrap(),
            values
        );
    }
}
