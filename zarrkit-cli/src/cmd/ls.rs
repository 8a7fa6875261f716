//! `zarrkit ls`: a group's children (or an array itself) in aligned columns,
//! with their stored chunks and bytes; with `--keys`, the keys under a
//! prefix with their sizes.

use super::{
    Location, NODE_DOCUMENTS, format_shape, locate, open_located, plural, product,
    warn_stale_consolidated,
};
use crate::prefetched::Prefetched;
use anyhow::Context;
use clap::Args;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use zarrkit::store::{Store, StoreKey};
use zarrkit::{Array, Group, Node, NodePath, format};

/// Groups of more arrays than this show a progress bar while their stored
/// chunks are counted (on a terminal).
const PROGRESS_THRESHOLD: u64 = 64;

/// On a remote store, one array is counted at a time per this many of the
/// store's requests in flight (so 8 at once with the default 64).
const ARRAYS_PER_REQUESTS: usize = 8;

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
Each row shows a node's kind, shape, data type, stored chunks out of the \
chunks of its grid (shards, for a sharded array), the bytes those chunks \
take in the store, and its name (a group's with a trailing `/`); rows are \
sorted by name. On an array, the row of the array itself. With -R, every \
node below is listed depth first, named by its path from the listed node \
(`weather/temperature`). The last line totals the rows. Sizes are binary \
(`1.5 KiB` = 1536 bytes); --bytes prints exact byte counts. Each array \
costs one listing of its chunk prefix, which on object storage carries the \
sizes (arrays are counted several at once there); a store that cannot list (HTTP) is \
listed from its consolidated metadata, and its chunks are found by asking \
for each position of the grid.

With --keys, STORE[/PATH] names a key prefix rather than a node (it need \
not be a node: `data.zarr/temperature/c` lists the chunk keys), and every \
key under it is printed with its size, sorted (-R is implied). The keys are \
the store's, from its root, as the format lays them out (a v3 draft keeps \
its documents under `meta/` and its chunks under `data/`).

Examples:
  zarrkit ls testdata/sample.zarr
  zarrkit ls -R --bytes testdata/sample.zarr
  zarrkit ls testdata/sample.zarr/weather/temperature
  zarrkit ls --keys testdata/sample.zarr/weather
  zarrkit ls --json s3://bucket/data.zarr | jq '.entries[].stored_bytes'

Output of the first:
  KIND   SHAPE     DATA TYPE  CHUNKS  STORED  NAME
  array  [36, 72]  uint8      4/4     906 B   labels
  group  -         -          -       -       weather/

  total: 1 array, 1 group, 4 stored chunks, 906 B

--json prints {\"path\", \"node_type\", \"format\", \"recursive\", \"entries\": \
[ENTRY, …], \"arrays\", \"groups\", \"stored_chunks\", \"stored_bytes\"} \
(the totals over the entries), where ENTRY is
  {\"name\" (the path from the listed node), \"path\", \"node_type\": \"array\",
  \"format\", \"shape\", \"data_type\", \"chunk_shape\" (null for a rectilinear
  grid), \"inner_chunk_shape\" (null unless sharded), \"chunks\" (in the grid;
  null past 2^64), \"stored_chunks\", \"stored_bytes\"} for an array,
  {\"name\", \"path\", \"node_type\": \"group\", \"format\"} for a group, and
  {\"name\", \"path\", \"error\"} for a node that cannot be opened (the exit
  status is then 1, after everything is printed).
--keys --json prints {\"prefix\", \"keys\": [{\"key\", \"size\"}, …], \"count\",
  \"bytes\"}.";

/// Arguments of `zarrkit ls`.
#[derive(Debug, Args)]
pub struct LsArgs {
    /// A store directory or URL, or a node inside it such as `my.zarr/a/b`
    /// (with --keys, a key prefix)
    #[arg(value_name = "STORE[/PATH]")]
    pub target: PathBuf,

    /// The node inside the store (`/` for the root, or `/a/b`); the first
    /// argument is then the store root itself
    #[arg(long, value_name = "NODE")]
    pub path: Option<String>,

    /// List every node below, not only the children
    #[arg(short = 'R', long)]
    pub recursive: bool,

    /// List every key under the prefix with its size instead of the nodes
    #[arg(long)]
    pub keys: bool,

    /// Print exact byte counts instead of binary sizes such as `1.5 KiB`
    #[arg(long)]
    pub bytes: bool,

    /// Print JSON (described below) instead of columns
    #[arg(long)]
    pub json: bool,
}

/// Runs `zarrkit ls`.
///
/// # Errors
/// If the store or node cannot be opened or listed, a node below cannot be
/// opened (after printing everything else), or writing to `out` fails.
pub fn run(args: &LsArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let location = locate(&args.target, args.path.as_deref())?;
    let store = open_located(&location)?;
    let Location { node, .. } = location;
    if args.keys {
        return list_keys(&store, &node, args, out);
    }
    warn_stale_consolidated(&store, &node);
    let top = Node::open(Arc::clone(&store), node.as_str())?;
    let mut listing = Listing::default();
    match &top {
        Node::Array(array) => {
            let name = if array.path().is_root() {
                "/".to_string()
            } else {
                array.path().name().to_string()
            };
            let counts = stored(array)?;
            listing.push_array(name, array, counts)?;
        }
        Node::Group(group) => listing.group(group, "", args.recursive)?,
    }
    if args.json {
        let printed = serde_json::json!({
            "path": top.path().as_str(),
            "node_type": match top {
                Node::Array(_) => "array",
                Node::Group(_) => "group",
            },
            "format": top.format().name(),
            "recursive": args.recursive,
            "entries": listing.rows.iter().map(Row::to_json).collect::<Vec<_>>(),
            "arrays": listing.arrays,
            "groups": listing.groups,
            "stored_chunks": listing.stored_chunks,
            "stored_bytes": listing.stored_bytes,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&printed)?)?;
    } else {
        listing.print(args.bytes, out)?;
    }
    match listing.first_error {
        Some(err) => Err(err),
        None => Ok(()),
    }
}

/// One listed node.
struct Row {
    /// The path from the listed node (`weather/temperature`).
    name: String,
    path: NodePath,
    entry: Entry,
}

enum Entry {
    Array(ArrayFacts),
    Group { format: &'static str },
    Invalid(String),
}

/// What a row says about an array.
struct ArrayFacts {
    format: &'static str,
    shape: Vec<u64>,
    data_type: String,
    chunk_shape: Option<Vec<u64>>,
    inner_chunk_shape: Option<Vec<u64>>,
    /// The chunks of the grid, `None` past 2^64.
    chunks: Option<u64>,
    stored_chunks: u64,
    stored_bytes: u64,
}

impl Row {
    fn to_json(&self) -> serde_json::Value {
        let (name, path) = (&self.name, self.path.as_str());
        match &self.entry {
            Entry::Array(a) => serde_json::json!({
                "name": name,
                "path": path,
                "node_type": "array",
                "format": a.format,
                "shape": a.shape,
                "data_type": a.data_type,
                "chunk_shape": a.chunk_shape,
                "inner_chunk_shape": a.inner_chunk_shape,
                "chunks": a.chunks,
                "stored_chunks": a.stored_chunks,
                "stored_bytes": a.stored_bytes,
            }),
            Entry::Group { format } => serde_json::json!({
                "name": name,
                "path": path,
                "node_type": "group",
                "format": format,
            }),
            Entry::Invalid(error) => serde_json::json!({
                "name": name,
                "path": path,
                "error": error,
            }),
        }
    }
}

/// The rows listed so far and their totals.
#[derive(Default)]
struct Listing {
    rows: Vec<Row>,
    arrays: u64,
    groups: u64,
    stored_chunks: u64,
    stored_bytes: u64,
    first_error: Option<anyhow::Error>,
}

impl Listing {
    /// Adds the row of `array`, whose stored chunks and bytes are `stored`.
    fn push_array(
        &mut self,
        name: String,
        array: &Array,
        stored: (u64, u64),
    ) -> anyhow::Result<()> {
        let (stored_chunks, stored_bytes) = stored;
        self.arrays += 1;
        self.stored_chunks += stored_chunks;
        self.stored_bytes = self.stored_bytes.saturating_add(stored_bytes);
        self.rows.push(Row {
            name,
            path: array.path().clone(),
            entry: Entry::Array(ArrayFacts {
                format: array.format().name(),
                shape: array.shape().to_vec(),
                data_type: array.data_type().to_string(),
                chunk_shape: array.regular_chunk_shape().map(<[u64]>::to_vec),
                inner_chunk_shape: super::info::inner_chunk_shape(array),
                chunks: product(&array.chunk_grid_shape()),
                stored_chunks,
                stored_bytes,
            }),
        });
        Ok(())
    }

    /// Lists the children of `group` (and with `recursive` everything
    /// below), their names prefixed by `prefix`.
    fn group(&mut self, group: &Group, prefix: &str, recursive: bool) -> anyhow::Result<()> {
        let children = children(group)?;
        let arrays: Vec<&Array> = children
            .iter()
            .filter_map(|(_, node)| match node {
                Ok(Node::Array(array)) => Some(array),
                _ => None,
            })
            .collect();
        let mut stored = stored_many(&arrays).into_iter();
        for (child, node) in children {
            let name = format!("{prefix}{}", child.name());
            match node {
                Ok(Node::Array(array)) => {
                    let counts = stored.next().context("an array was not counted")??;
                    self.push_array(name, &array, counts)?;
                }
                Ok(Node::Group(sub)) => {
                    self.groups += 1;
                    self.rows.push(Row {
                        name: format!("{name}/"),
                        path: child,
                        entry: Entry::Group {
                            format: sub.format().name(),
                        },
                    });
                    if recursive {
                        self.group(&sub, &format!("{name}/"), true)?;
                    }
                }
                Err(err) => {
                    self.rows.push(Row {
                        name,
                        path: child,
                        entry: Entry::Invalid(format!("{err:#}")),
                    });
                    self.first_error.get_or_insert(err.into());
                }
            }
        }
        Ok(())
    }

    /// The rows in aligned columns, then the totals.
    fn print(&self, exact: bool, out: &mut impl Write) -> anyhow::Result<()> {
        let size = |n: u64| if exact { n.to_string() } else { human(n) };
        let mut table: Vec<[String; 6]> = vec![[
            "KIND".into(),
            "SHAPE".into(),
            "DATA TYPE".into(),
            "CHUNKS".into(),
            "STORED".into(),
            "NAME".into(),
        ]];
        let dash = || "-".to_string();
        for row in &self.rows {
            table.push(match &row.entry {
                Entry::Array(a) => [
                    "array".into(),
                    format_shape(&a.shape),
                    a.data_type.clone(),
                    format!(
                        "{}/{}",
                        a.stored_chunks,
                        a.chunks.map_or_else(|| ">2^64".into(), |n| n.to_string())
                    ),
                    size(a.stored_bytes),
                    row.name.clone(),
                ],
                Entry::Group { .. } => [
                    "group".into(),
                    dash(),
                    dash(),
                    dash(),
                    dash(),
                    row.name.clone(),
                ],
                Entry::Invalid(error) => [
                    "?".into(),
                    dash(),
                    dash(),
                    dash(),
                    dash(),
                    format!("{} (invalid: {error})", row.name),
                ],
            });
        }
        let mut widths = [0usize; 6];
        for cells in &table {
            for (width, cell) in widths.iter_mut().zip(cells) {
                *width = (*width).max(cell.chars().count());
            }
        }
        for cells in &table {
            let mut line = String::new();
            for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
                if i + 1 == cells.len() {
                    line.push_str(cell);
                } else {
                    let pad = width - cell.chars().count();
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad + 2));
                }
            }
            writeln!(out, "{line}")?;
        }
        writeln!(out)?;
        writeln!(
            out,
            "total: {}, {}, {}, {}",
            plural(self.arrays, "array", "arrays"),
            plural(self.groups, "group", "groups"),
            plural(self.stored_chunks, "stored chunk", "stored chunks"),
            if exact {
                plural(self.stored_bytes, "byte", "bytes")
            } else {
                human(self.stored_bytes)
            }
        )?;
        Ok(())
    }
}

/// The children of `group`, each opened or the error of opening it, sorted
/// by name. They are listed from the store's documents (a store that cannot
/// list answers from the consolidated metadata). On a remote store the
/// documents that opening them reads are fetched first, all in one batch,
/// so that a group of many children costs one round of requests, not one
/// per child.
fn children(group: &Group) -> anyhow::Result<Vec<(NodePath, Result<Node, zarrkit::Error>)>> {
    let store = group.store();
    if !store.capabilities().list {
        return Ok(group
            .children()
            .with_context(|| format!("cannot list the children of `{}`", group.path()))?
            .into_iter()
            .map(|node| (node.path().clone(), Ok(node)))
            .collect());
    }
    let children = format::list_children(store.as_ref(), group.path(), group.format())
        .with_context(|| format!("cannot list the children of `{}`", group.path()))?;
    let opener: Arc<dyn Store> = if store.concurrency() > 1 && !children.is_empty() {
        Arc::new(Prefetched::new(
            Arc::clone(store),
            prefetch_documents(store.as_ref(), &children)?,
        ))
    } else {
        Arc::clone(store)
    };
    Ok(children
        .into_iter()
        .map(|child| {
            let node = Node::open(Arc::clone(&opener), child.as_str());
            (child, node)
        })
        .collect())
}

/// The node documents (and v2's and v1's attributes) of every node in
/// `nodes`, read in one batch: what opening them reads, or their absence.
fn prefetch_documents(
    store: &dyn Store,
    nodes: &[NodePath],
) -> anyhow::Result<HashMap<StoreKey, Option<Vec<u8>>>> {
    let mut requests = Vec::new();
    for node in nodes {
        let prefix = node.to_prefix();
        for document in NODE_DOCUMENTS.iter().chain(&[".zattrs", "attrs"]) {
            let key = StoreKey::new(format!("{}{document}", prefix.as_str()))?;
            requests.push((key, None));
        }
    }
    let values = store
        .get_partial_values(&requests)
        .context("cannot read the documents of the children")?;
    Ok(requests
        .into_iter()
        .map(|(key, _)| key)
        .zip(values)
        .collect())
}

/// An array's stored chunks and bytes, or why they cannot be counted.
type StoredCounts = anyhow::Result<(u64, u64)>;

/// The stored chunks and bytes of each of `arrays` ([`stored`]), in order:
/// one after another on a local store; on a remote one, where each listing
/// waits a round trip, several arrays at once.
fn stored_many(arrays: &[&Array]) -> Vec<StoredCounts> {
    let progress = super::progress::items(arrays.len() as u64, PROGRESS_THRESHOLD, "arrays");
    let stored = |array: &Array| {
        let counts = stored(array);
        if let Some(bar) = &progress {
            bar.inc(1);
        }
        counts
    };
    let concurrency = arrays.first().map_or(1, |a| a.store().concurrency());
    let workers = (concurrency / ARRAYS_PER_REQUESTS).clamp(1, arrays.len().max(1));
    let counts = if workers <= 1 {
        arrays.iter().map(|a| stored(a)).collect()
    } else {
        stored_in_parallel(arrays, workers, &stored)
    };
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    counts
}

/// `stored` of each of `arrays`, in order, counted by `workers` threads.
fn stored_in_parallel(
    arrays: &[&Array],
    workers: usize,
    stored: &(dyn Fn(&Array) -> StoredCounts + Sync),
) -> Vec<StoredCounts> {
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<StoredCounts>>> =
        arrays.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(array) = arrays.get(i) else {
                        break;
                    };
                    let counts = stored(array);
                    *results[i].lock().unwrap_or_else(PoisonError::into_inner) = Some(counts);
                }
            });
        }
    });
    results
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(PoisonError::into_inner)
                .unwrap_or_else(|| Err(anyhow::anyhow!("an array was not counted")))
        })
        .collect()
}

/// An array's stored chunks and their total size: one listing of its chunk
/// prefix, with sizes ([`Array::stored_size`]).
fn stored(array: &Array) -> StoredCounts {
    let stored = array
        .stored_size()
        .with_context(|| format!("cannot count the stored chunks of `{}`", array.path()))?;
    Ok((stored.chunks, stored.bytes))
}

/// `ls --keys`: every key under the node's prefix with its size.
fn list_keys(
    store: &Arc<dyn Store>,
    node: &NodePath,
    args: &LsArgs,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let prefix = node.to_prefix();
    let listed = store.list_prefix_sizes(&prefix).with_context(|| {
        if prefix.is_root() {
            "cannot list the keys of the store".to_string()
        } else {
            format!("cannot list the keys under `{}`", prefix.as_str())
        }
    })?;
    let total = listed
        .iter()
        .fold(0u64, |sum, (_, n)| sum.saturating_add(*n));
    if args.json {
        let printed = serde_json::json!({
            "prefix": prefix.as_str(),
            "keys": listed.iter().map(|(key, size)| serde_json::json!({
                "key": key.as_str(),
                "size": size,
            })).collect::<Vec<_>>(),
            "count": listed.len(),
            "bytes": total,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&printed)?)?;
        return Ok(());
    }
    let shown: Vec<String> = listed
        .iter()
        .map(|(_, n)| if args.bytes { n.to_string() } else { human(*n) })
        .collect();
    let width = shown.iter().map(String::len).max().unwrap_or(0).max(4);
    writeln!(out, "{:>width$}  KEY", "SIZE")?;
    for ((key, _), size) in listed.iter().zip(&shown) {
        writeln!(out, "{size:>width$}  {}", key.as_str())?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "total: {}, {}",
        plural(listed.len() as u64, "key", "keys"),
        if args.bytes {
            plural(total, "byte", "bytes")
        } else {
            human(total)
        }
    )?;
    Ok(())
}

/// A size in binary units, as `ls -lh` shows it: `512 B`, `1.5 KiB`.
pub(crate) fn human(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    #[allow(clippy::cast_precision_loss)] // A display value only.
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_ls_dash_h() {
        assert_eq!(human(0), "0 B");
        assert_eq!(human(1023), "1023 B");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(5 << 30), "5.0 GiB");
    }
}
