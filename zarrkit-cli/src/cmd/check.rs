//! `zarrkit check`: validate a hierarchy's documents, decode every stored
//! chunk, and find stray keys and stale consolidated metadata.

use super::{Location, format_bytes, locate, open_located, plural, product};
use anyhow::bail;
use clap::Args;
use rayon::prelude::*;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use zarrkit::consolidate::{self, MismatchKind};
use zarrkit::format::{self, ZarrFormat};
use zarrkit::metadata::NodeMetadata;
use zarrkit::store::{Store, StoreKey, StorePrefix};
use zarrkit::{Array, Error, Group, NodePath};

/// Chunks to decode before a progress bar is worth showing.
const PROGRESS_THRESHOLD: u64 = 64;

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
Examples:
  zarrkit check data.zarr
  zarrkit check data.zarr/weather --json
  zarrkit check --metadata-only s3://bucket/data.zarr
  zarrkit check archive.zip

What is checked, below the node given (the whole hierarchy for a store root):
  invalid_metadata     a document that its format's rules reject (bad JSON, \
a missing or wrong field, an unknown codec or data type), or invalid \
consolidated metadata; the key is the document's
  undecodable_chunk    a stored chunk that does not decode: truncated or \
corrupt data, a `crc32c` checksum or a shard index that does not match, a \
decoded size that is wrong; every inner chunk of a shard is decoded too
  unreadable           a key the store fails to read or list
  too_large            a chunk that would decode to more than \
--memory-budget (default 8 GiB), so it was not decoded
  orphan_key           a key that belongs to no node: not a document, and \
not the key of a chunk of an array (left by a crashed writer, or a chunk \
under another spelling of its key)
  outside_grid         a chunk key of an array at coordinates outside its \
chunk grid (left by a shrinking resize)
  chunk_count          an array with more keys parsed as its chunks than its \
grid has chunks
  stale_consolidated   consolidated metadata that disagrees with the \
documents (as `zarrkit consolidate --check` reports it)
  leftover_file        in a local directory, a temporary file \
(`.zarrkit-tmp.*`) or lock file (`.zarrkit-lock.*`) of a zarrkit writer \
that was killed part way (or is writing now); it is never read as a key, \
and can be removed once no writer is running
Stray keys are looked for only where the store can list (not over plain \
HTTP; the report says `\"listed\": false`). Over a store that cannot \
list, the nodes below a group are those its consolidated metadata names, \
each checked against its own document.

Chunks are decoded in parallel (--threads), one chunk per thread in memory \
at a time (a chunk that would decode to more than --memory-budget is \
reported, not decoded); a progress bar on stderr counts them. --metadata-only skips the \
decoding.

Exit status: 0 when nothing is wrong, 1 when a problem is found or the \
store cannot be opened, 2 on a usage error.

--json prints one object:
  store, path, format   the store as given, the node checked, its format \
(null when the node's own document is invalid)
  listed                whether the store was listed for stray keys
  ok                    true when no problem was found
  notes                 what could not be checked, which is no problem (a \
group whose children a store cannot list, with no consolidated metadata \
naming them); each is also printed on stderr as a warning
  totals                {nodes, groups, arrays, chunks (stored chunks found), \
chunks_decoded, stored_bytes (of the chunks), problems}
  problems              [{kind, node (the node's path, or null), key (the \
store key, or null), message}], kinds as listed above";

/// Arguments of `zarrkit check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A store directory, URL or zip archive, or a node inside it such as
    /// `my.zarr/a` (only the nodes below it are checked)
    #[arg(value_name = "STORE[/PATH]")]
    pub target: PathBuf,

    /// The node inside the store (`/` for the root, or `/a/b`); the first
    /// argument is then the store root itself
    #[arg(long, value_name = "NODE")]
    pub path: Option<String>,

    /// Check documents, keys and consolidated metadata, but decode no chunk
    #[arg(long)]
    pub metadata_only: bool,

    /// Print the report as JSON (described below)
    #[arg(long)]
    pub json: bool,
    /// The most memory one read or chunk decode may hold, such as `512MiB`
    /// or `2G` (default 8 GiB); larger ones fail with an error naming them
    #[arg(long, value_name = "BYTES", value_parser = super::export::parse_size)]
    pub memory_budget: Option<u64>,
}

/// One thing found wrong.
#[derive(Debug)]
struct Problem {
    kind: &'static str,
    node: Option<NodePath>,
    key: Option<String>,
    message: String,
}

impl Problem {
    fn new(
        kind: &'static str,
        node: Option<&NodePath>,
        key: Option<&str>,
        message: String,
    ) -> Self {
        Self {
            kind,
            node: node.cloned(),
            key: key.map(ToString::to_string),
            message,
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "kind": self.kind,
            "node": self.node.as_ref().map(NodePath::as_str),
            "key": self.key,
            "message": self.message,
        })
    }
}

/// What the walk of the hierarchy found.
#[derive(Default)]
struct Walk {
    groups: Vec<NodePath>,
    arrays: Vec<Array>,
    /// Key prefixes of nodes whose documents are invalid: their keys are not
    /// reported again as orphans.
    broken: Vec<StorePrefix>,
    problems: Vec<Problem>,
    /// What could not be checked, which is no problem of the data (a
    /// store that cannot list a group's children).
    notes: Vec<String>,
    /// `--memory-budget`, for each array.
    memory_budget: Option<u64>,
}

/// The message of an error with its causes, as `main` prints errors.
fn message(err: impl Into<anyhow::Error>) -> String {
    format!("{:#}", err.into())
}

/// The key an error names when it is about one document.
fn error_key(err: &Error) -> Option<String> {
    match err {
        Error::Metadata { key, .. } => Some(key.as_str().to_string()),
        _ => None,
    }
}

impl Walk {
    /// Reads the node at `path` (in `format`, or probing every format for
    /// the first node) and everything below it, recording what is invalid.
    fn visit(
        &mut self,
        store: &Arc<dyn Store>,
        path: &NodePath,
        format: Option<ZarrFormat>,
    ) -> anyhow::Result<Option<ZarrFormat>> {
        let found = match format {
            None => format::read_node(store.as_ref(), path),
            Some(f) => format::read_node_as(store.as_ref(), path, f).map(|m| m.map(|m| (f, m))),
        };
        let (format, metadata) = match found {
            Ok(Some(found)) => found,
            Ok(None) if format.is_none() => bail!("no array or group at `{path}`"),
            // A listed child whose document went away meanwhile.
            Ok(None) => return Ok(format),
            Err(err) => {
                if let Some(f) = format {
                    self.broken.push(format::node_prefix(f, path));
                } else if path.is_root() {
                    self.broken.push(StorePrefix::root());
                }
                let kind = if error_key(&err).is_some() {
                    "invalid_metadata"
                } else {
                    "unreadable"
                };
                let key = error_key(&err);
                self.problems
                    .push(Problem::new(kind, Some(path), key.as_deref(), message(err)));
                return Ok(format);
            }
        };
        match metadata {
            NodeMetadata::Array(metadata) => self.add_array(store, path, format, metadata),
            NodeMetadata::Group(_) if !store.capabilities().list => {
                self.groups.push(path.clone());
                // Over plain HTTP the children are known only from
                // consolidated metadata: check the real document of each
                // node it names.
                let group = Group::open(Arc::clone(store), path.as_str())
                    .ok()
                    .filter(Group::is_consolidated);
                match group.map(|g| (g.walk(), g)) {
                    Some((Ok(nodes), mut group)) => {
                        for node in nodes {
                            self.visit_one(store, node.path(), format)?;
                            // Records a warning when the entry and the
                            // document disagree.
                            let _ = group.open_node_checked(node.path().as_str());
                        }
                        for warning in group.warnings() {
                            self.problems.push(Problem::new(
                                "stale_consolidated",
                                Some(path),
                                None,
                                warning.clone(),
                            ));
                        }
                    }
                    Some((Err(err), _)) => self.problems.push(Problem::new(
                        "invalid_metadata",
                        Some(path),
                        error_key(&err).as_deref(),
                        format!("invalid consolidated metadata: {}", message(err)),
                    )),
                    None => self.notes.push(format!(
                        "the store cannot list the children of group `{path}` and it has no \
                         consolidated metadata: the nodes below it were not checked"
                    )),
                }
            }
            NodeMetadata::Group(_) => {
                self.groups.push(path.clone());
                match format::list_children(store.as_ref(), path, format) {
                    Ok(children) => {
                        for child in children {
                            self.visit(store, &child, Some(format))?;
                        }
                    }
                    Err(err) => self.problems.push(Problem::new(
                        "unreadable",
                        Some(path),
                        None,
                        format!("cannot list the children: {}", message(err)),
                    )),
                }
            }
        }
        Ok(Some(format))
    }

    /// Reads the node at `path` in `format` alone (its descendants come
    /// from consolidated metadata).
    fn visit_one(
        &mut self,
        store: &Arc<dyn Store>,
        path: &NodePath,
        format: ZarrFormat,
    ) -> anyhow::Result<()> {
        match format::read_node_as(store.as_ref(), path, format) {
            Ok(Some(NodeMetadata::Group(_))) => self.groups.push(path.clone()),
            Ok(Some(NodeMetadata::Array(metadata))) => {
                self.add_array(store, path, format, metadata);
            }
            Ok(None) => self.problems.push(Problem::new(
                "stale_consolidated",
                Some(path),
                format::metadata_key(format, path)
                    .ok()
                    .map(|k| k.as_str().to_string())
                    .as_deref(),
                format!("`{path}` is in the consolidated metadata but does not exist"),
            )),
            Err(err) => {
                let key = error_key(&err);
                let kind = if key.is_some() {
                    "invalid_metadata"
                } else {
                    "unreadable"
                };
                self.problems
                    .push(Problem::new(kind, Some(path), key.as_deref(), message(err)));
            }
        }
        Ok(())
    }

    /// Records the array at `path`, or its invalid metadata.
    fn add_array(
        &mut self,
        store: &Arc<dyn Store>,
        path: &NodePath,
        format: ZarrFormat,
        metadata: zarrkit::metadata::ArrayMetadata,
    ) {
        match Array::from_metadata(Arc::clone(store), path.clone(), format, metadata) {
            Ok(mut array) => {
                if let Some(budget) = self.memory_budget {
                    array.set_memory_budget(budget);
                }
                self.arrays.push(array);
            }
            Err(err) => {
                self.broken.push(format::node_prefix(format, path));
                let key = format::metadata_key(format, path)
                    .ok()
                    .map(|k| k.as_str().to_string());
                self.problems.push(Problem::new(
                    "invalid_metadata",
                    Some(path),
                    key.as_deref(),
                    message(err),
                ));
            }
        }
    }
}

/// A chunk to decode: the array (an index into `Walk::arrays`), its
/// coordinates and key.
struct ToDecode {
    array: usize,
    chunk_coords: Vec<u64>,
    key: StoreKey,
}

/// Runs `zarrkit check`.
///
/// # Errors
/// If the store cannot be opened or has no node at the path, if any
/// problem is found, or if writing to `out` fails.
pub fn run(args: &CheckArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let location = locate(&args.target, args.path.as_deref())?;
    let store = open_located(&location)?;
    let local_root = super::is_local_dir(&location.root).then(|| location.root.clone());
    let Location { node, .. } = location;
    let display = args.target.display().to_string();

    let mut walk = Walk {
        memory_budget: args.memory_budget,
        ..Walk::default()
    };
    // `None` when the node's own document is invalid: its keys are then
    // not sorted (they would all be strays).
    let format = walk.visit(&store, &node, None)?;
    for group in walk.groups.clone() {
        check_consolidated(&store, &group, &mut walk.problems);
    }

    // Every key under the node, sorted into documents, chunks and strays.
    let listed = store.capabilities().list;
    let mut to_decode = Vec::new();
    if listed {
        if let Some(format) = format {
            find_keys(&store, &node, format, &mut walk, &mut to_decode);
        }
    } else {
        for (index, array) in walk.arrays.iter().enumerate() {
            match array.stored_chunks() {
                Ok(chunks) => to_decode.extend(chunks.into_iter().map(|c| ToDecode {
                    array: index,
                    chunk_coords: c.chunk_coords,
                    key: c.key,
                })),
                Err(err) => walk.problems.push(Problem::new(
                    "unreadable",
                    Some(array.path()),
                    None,
                    message(err),
                )),
            }
        }
    }

    if let Some(root) = &local_root {
        find_leftover_files(root, &node, &mut walk.problems);
    }

    let stored_bytes = AtomicU64::new(0);
    let decoded = AtomicU64::new(0);
    if !args.metadata_only {
        let bar = super::progress::items(to_decode.len() as u64, PROGRESS_THRESHOLD, "chunks");
        let failed: Vec<Problem> = super::on_io_pool(store.as_ref(), || {
            to_decode
                .par_iter()
                .filter_map(|chunk| {
                    let array = &walk.arrays[chunk.array];
                    let result = array.verify_chunk(&chunk.chunk_coords);
                    if let Some(bar) = &bar {
                        bar.inc(1);
                    }
                    match result {
                        Ok(Some(verified)) => {
                            stored_bytes.fetch_add(verified.stored_bytes, Ordering::Relaxed);
                            decoded.fetch_add(1, Ordering::Relaxed);
                            None
                        }
                        // Erased since the listing.
                        Ok(None) => None,
                        Err(err) => {
                            let kind = match err {
                                Error::Decode { .. } => "undecodable_chunk",
                                Error::MemoryBudget { .. } => "too_large",
                                _ => "unreadable",
                            };
                            Some(Problem::new(
                                kind,
                                Some(array.path()),
                                Some(chunk.key.as_str()),
                                message(err),
                            ))
                        }
                    }
                })
                .collect()
        });
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        walk.problems.extend(failed);
    }
    let problems = &walk.problems;
    let totals = json!({
        "nodes": walk.groups.len() + walk.arrays.len(),
        "groups": walk.groups.len(),
        "arrays": walk.arrays.len(),
        "chunks": to_decode.len(),
        "chunks_decoded": decoded.load(Ordering::Relaxed),
        "stored_bytes": stored_bytes.load(Ordering::Relaxed),
        "problems": problems.len(),
    });
    if args.json {
        let printed = json!({
            "store": display,
            "path": node.as_str(),
            "format": format.map(ZarrFormat::name),
            "listed": listed,
            "ok": problems.is_empty(),
            "notes": walk.notes,
            "totals": totals,
            "problems": problems.iter().map(Problem::to_json).collect::<Vec<_>>(),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&printed)?)?;
    } else {
        writeln!(
            out,
            "checked `{display}` ({}): {} ({}, {}), {} ({} decoded, {})",
            format.map_or("format unknown", ZarrFormat::name),
            plural(
                (walk.groups.len() + walk.arrays.len()) as u64,
                "node",
                "nodes"
            ),
            plural(walk.groups.len() as u64, "group", "groups"),
            plural(walk.arrays.len() as u64, "array", "arrays"),
            plural(to_decode.len() as u64, "stored chunk", "stored chunks"),
            decoded.load(Ordering::Relaxed),
            format_bytes(stored_bytes.load(Ordering::Relaxed)),
        )?;
        if !listed {
            writeln!(
                out,
                "note: the store cannot list its keys, so stray keys were not looked for"
            )?;
        }
        for problem in problems {
            let at = match (&problem.key, &problem.node) {
                (Some(key), _) => format!(" `{key}`"),
                (None, Some(node)) => format!(" at `{node}`"),
                (None, None) => String::new(),
            };
            writeln!(out, "{}{at}: {}", problem.kind, problem.message)?;
        }
        if problems.is_empty() {
            writeln!(out, "no problems found")?;
        }
    }
    out.flush()?;
    for note in &walk.notes {
        eprintln!("warning: {note}");
    }
    if !problems.is_empty() {
        bail!(
            "`{display}`: found {}",
            plural(problems.len() as u64, "problem", "problems")
        );
    }
    Ok(())
}

/// Compares the consolidated metadata of `group`, if it has any, with the
/// documents.
fn check_consolidated(store: &Arc<dyn Store>, group: &NodePath, problems: &mut Vec<Problem>) {
    // Comparing needs a listing (the documents it lacks); a store that
    // cannot list had each entry compared with its document in the walk.
    if !store.capabilities().list {
        return;
    }
    // As `consolidate --check`: a group without consolidated metadata is
    // not stale, and would otherwise list every document as missing.
    let has = Group::open(Arc::clone(store), group.as_str())
        .is_ok_and(|g| g.is_consolidated() || !g.warnings().is_empty());
    if !has {
        return;
    }
    match consolidate::check(store.as_ref(), group.as_str()) {
        Ok(mismatches) => problems.extend(mismatches.into_iter().map(|m| {
            let what = match m.kind {
                MismatchKind::Missing => "missing",
                MismatchKind::Extra => "extra",
                MismatchKind::Differs => "differs",
            };
            Problem::new(
                "stale_consolidated",
                Some(group),
                Some(&m.key),
                format!("the consolidated metadata of `{group}` is stale ({what}): {m}"),
            )
        })),
        Err(err) => {
            let key = error_key(&err);
            problems.push(Problem::new(
                "invalid_metadata",
                Some(group),
                key.as_deref(),
                format!("invalid consolidated metadata: {}", message(err)),
            ));
        }
    }
}

/// Lists every key under `node` and sorts each into a document (skipped),
/// a chunk inside its array's grid (to decode), a chunk outside it, or a
/// key that belongs to no node.
fn find_keys(
    store: &Arc<dyn Store>,
    node: &NodePath,
    format: ZarrFormat,
    walk: &mut Walk,
    to_decode: &mut Vec<ToDecode>,
) {
    let prefix = if node.is_root() {
        StorePrefix::root()
    } else {
        format::node_prefix(format, node)
    };
    let keys = match store.list_prefix(&prefix) {
        Ok(keys) => keys,
        Err(err) => {
            walk.problems.push(Problem::new(
                "unreadable",
                Some(node),
                None,
                format!("cannot list the store: {}", message(err)),
            ));
            return;
        }
    };
    // Chunk keys parsed per array, inside the grid or not.
    let mut parsed = vec![0u64; walk.arrays.len()];
    let by_prefix: HashMap<&str, usize> = walk
        .arrays
        .iter()
        .enumerate()
        .map(|(index, array)| (array.key_layout().prefix().as_str(), index))
        .collect();
    let mut found = Vec::new();
    for key in keys {
        if format::is_document_key(format, &key)
            || walk.broken.iter().any(|prefix| key.has_prefix(prefix))
        {
            continue;
        }
        // The array whose chunk prefix is the longest one holding the key:
        // the key's own prefixes, longest first, looked up (a hierarchy of
        // many arrays is not searched once per key).
        let text = key.as_str();
        let owner = text
            .rmatch_indices('/')
            .map(|(at, _)| &text[..=at])
            .chain([""])
            .find_map(|prefix| by_prefix.get(prefix).copied())
            .map(|index| (index, &walk.arrays[index]));
        let Some((index, array)) = owner else {
            found.push(Problem::new(
                "orphan_key",
                None,
                Some(key.as_str()),
                "belongs to no node of the hierarchy".to_string(),
            ));
            continue;
        };
        let path = array.path();
        let Some(chunk_coords) = array.key_layout().parse_chunk_key(&key, array.ndim()) else {
            found.push(Problem::new(
                "orphan_key",
                Some(path),
                Some(key.as_str()),
                format!("lies under array `{path}` but is neither a document nor a chunk key"),
            ));
            continue;
        };
        parsed[index] += 1;
        let grid = array.chunk_grid_shape();
        if chunk_coords.iter().zip(&grid).any(|(c, n)| c >= n) {
            found.push(Problem::new(
                "outside_grid",
                Some(path),
                Some(key.as_str()),
                format!(
                    "chunk {chunk_coords:?} lies outside the chunk grid {grid:?} of array `{path}`"
                ),
            ));
            continue;
        }
        match array.chunk_key(&chunk_coords) {
            Ok(own) if own == key => to_decode.push(ToDecode {
                array: index,
                chunk_coords,
                key,
            }),
            own => found.push(Problem::new(
                "orphan_key",
                Some(path),
                Some(key.as_str()),
                format!(
                    "names chunk {chunk_coords:?} of array `{path}`, whose key is {}; readers ignore it",
                    own.map_or_else(message, |k| format!("`{k}`"))
                ),
            )),
        }
    }
    for (array, &n) in walk.arrays.iter().zip(&parsed) {
        let grid = product(&array.chunk_grid_shape()).unwrap_or(u64::MAX);
        if n > grid {
            walk.problems.push(Problem::new(
                "chunk_count",
                Some(array.path()),
                None,
                format!(
                    "{} parse as chunks of array `{}`, but its grid has {}",
                    plural(n, "key", "keys"),
                    array.path(),
                    plural(grid, "chunk", "chunks")
                ),
            ));
        }
    }
    walk.problems.extend(found);
}

/// Reports the temporary and lock files of killed writers under `node` of
/// the filesystem store at `root`: listings skip them, so they are found
/// by walking the directory.
fn find_leftover_files(root: &std::path::Path, node: &NodePath, problems: &mut Vec<Problem>) {
    let store = match zarrkit::store::FilesystemStore::open_existing(root) {
        Ok(store) => store,
        Err(_) => return,
    };
    let files = match store.leftover_files() {
        Ok(files) => files,
        Err(err) => {
            problems.push(Problem::new("unreadable", None, None, message(err)));
            return;
        }
    };
    let under = node.as_str().trim_start_matches('/');
    for file in files {
        let text = file.display().to_string();
        if !under.is_empty() && !text.starts_with(&format!("{under}/")) {
            continue;
        }
        problems.push(Problem::new(
            "leftover_file",
            None,
            Some(&text),
            "a temporary or lock file of a zarrkit writer that was killed part way (or is \
             writing now); it is never read as a key, and can be removed once no writer runs"
                .to_string(),
        ));
    }
}
