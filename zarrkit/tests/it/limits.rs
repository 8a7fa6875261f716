//! Resource limits (issue #17, "Faults"): a hierarchy of 100,000 nodes, a
//! sparse chunk grid of 10^12 chunks, a grid whose chunk count overflows
//! `u64`, and an attribute document of 100 MB — each in bounded work and
//! memory, or a clear error.
//!
//! Time is never asserted (the machine is shared): work is counted with a
//! store wrapper, and memory read from the kernel's high-water mark
//! (`VmHWM`); both are printed, so `--nocapture` shows the numbers.

use crate::support::error_chain;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use zarrkit::metadata::DataType;
use zarrkit::store::{
    ByteRange, FilesystemStore, ListDir, MemoryStore, ReadRequest, Store, StoreCapabilities,
    StoreError, StoreKey, StorePrefix,
};
use zarrkit::{Array, Group, Node, Region};

/// Counts the calls a store answers and the bytes it returns.
#[derive(Debug)]
struct Counting<S> {
    inner: S,
    calls: AtomicU64,
    bytes: AtomicU64,
}

impl<S: Store> Counting<S> {
    fn new(inner: S) -> Self {
        Self {
            inner,
            calls: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        }
    }

    fn count(&self, calls: u64, bytes: usize) {
        self.calls.fetch_add(calls, Ordering::Relaxed);
        self.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// (calls, bytes) since the last call, which resets them.
    fn take(&self) -> (u64, u64) {
        (
            self.calls.swap(0, Ordering::Relaxed),
            self.bytes.swap(0, Ordering::Relaxed),
        )
    }
}

impl<S: Store> Store for Counting<S> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn capabilities(&self) -> StoreCapabilities {
        self.inner.capabilities()
    }
    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        let value = self.inner.get(key, range)?;
        self.count(1, value.as_ref().map_or(0, Vec::len));
        Ok(value)
    }
    fn get_partial_values(
        &self,
        requests: &[ReadRequest],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let values = self.inner.get_partial_values(requests)?;
        let bytes = values.iter().flatten().map(Vec::len).sum();
        self.count(requests.len() as u64, bytes);
        Ok(values)
    }
    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
        self.count(1, 0);
        self.inner.set(key, value)
    }
    fn set_partial_values(&self, items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError> {
        self.count(items.len() as u64, 0);
        self.inner.set_partial_values(items)
    }
    fn erase(&self, key: &StoreKey) -> Result<(), StoreError> {
        self.count(1, 0);
        self.inner.erase(key)
    }
    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<(), StoreError> {
        self.count(1, 0);
        self.inner.erase_prefix(prefix)
    }
    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
        let keys = self.inner.list_prefix(prefix)?;
        self.count(1 + keys.len() as u64, 0);
        Ok(keys)
    }
    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        let listing = self.inner.list_dir(prefix)?;
        self.count(1 + (listing.keys.len() + listing.prefixes.len()) as u64, 0);
        Ok(listing)
    }
    fn size(&self, key: &StoreKey) -> Result<Option<u64>, StoreError> {
        self.count(1, 0);
        self.inner.size(key)
    }
}

/// The process's peak resident memory so far, in bytes (Linux `VmHWM`);
/// 0 where the kernel does not say.
fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib << 10)
        })
        .unwrap_or(0)
}

/// A directory on a memory file system when there is one (`/dev/shm`):
/// 100,000 small files are cheap there.
fn scratch_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::tempdir_in(shm)
    {
        return dir;
    }
    tempfile::tempdir().unwrap()
}

const SMALL_ARRAY: &str = r#"{"zarr_format":3,"node_type":"array","shape":[10],"data_type":"uint8","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[10]}},"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},"fill_value":0,"codecs":[{"name":"bytes"}]}"#;
const GROUP: &str = r#"{"zarr_format":3,"node_type":"group","attributes":{}}"#;

/// Writes a hierarchy of `groups` groups under the root, each holding
/// `per_group` arrays, straight to files (as another implementation would
/// have written it); returns the number of nodes below the root.
fn write_hierarchy(root: &Path, groups: usize, per_group: usize) -> usize {
    std::fs::create_dir_all(root).unwrap();
    std::fs::write(root.join("zarr.json"), GROUP).unwrap();
    for g in 0..groups {
        let group = root.join(format!("g{g}"));
        std::fs::create_dir(&group).unwrap();
        std::fs::write(group.join("zarr.json"), GROUP).unwrap();
        for a in 0..per_group {
            let array = group.join(format!("a{a}"));
            std::fs::create_dir(&array).unwrap();
            std::fs::write(array.join("zarr.json"), SMALL_ARRAY).unwrap();
        }
    }
    groups * (per_group + 1)
}

/// Rewrites the root document of a hierarchy [`write_hierarchy`] wrote
/// with inline consolidated metadata naming every node.
fn write_consolidated(root: &Path, groups: usize, per_group: usize) {
    let mut metadata = String::new();
    for g in 0..groups {
        if g > 0 {
            metadata.push(',');
        }
        write!(metadata, r#""g{g}":{GROUP}"#).unwrap();
        for a in 0..per_group {
            write!(metadata, r#","g{g}/a{a}":{SMALL_ARRAY}"#).unwrap();
        }
    }
    let document = format!(
        r#"{{"zarr_format":3,"node_type":"group","attributes":{{}},"consolidated_metadata":{{"kind":"inline","must_understand":false,"metadata":{{{metadata}}}}}}}"#
    );
    std::fs::write(root.join("zarr.json"), document).unwrap();
}

/// What walking a hierarchy cost: store calls and bytes, and nodes found.
#[derive(Debug, Clone, Copy)]
struct Walk {
    nodes: usize,
    calls: u64,
    bytes: u64,
}

fn walk(store: &Arc<Counting<FilesystemStore>>, consolidated: bool) -> Walk {
    store.take();
    let dyn_store: Arc<dyn Store> = Arc::clone(store) as Arc<dyn Store>;
    let root = Group::open(dyn_store, "/").unwrap();
    assert_eq!(root.is_consolidated(), consolidated);
    let nodes = root.walk().unwrap();
    let arrays = nodes.iter().filter(|n| matches!(n, Node::Array(_))).count();
    let (calls, bytes) = store.take();
    assert!(arrays > 0);
    Walk {
        nodes: nodes.len(),
        calls,
        bytes,
    }
}

#[test]
fn a_hierarchy_of_100_000_nodes_walks_in_linear_work() {
    let dir = scratch_dir();
    let started = Instant::now();
    let small = write_hierarchy(&dir.path().join("small"), 10, 999);
    let large = write_hierarchy(&dir.path().join("large"), 100, 999);
    assert_eq!((small, large), (10_000, 100_000));
    let written = started.elapsed();

    let open = |name: &str| {
        Arc::new(Counting::new(
            FilesystemStore::open_existing(dir.path().join(name)).unwrap(),
        ))
    };
    let (small_store, large_store) = (open("small"), open("large"));
    let rss_before = peak_rss();
    let started = Instant::now();
    let small_walk = walk(&small_store, false);
    let large_walk = walk(&large_store, false);
    let walked = started.elapsed();
    let rss_walk = peak_rss();
    assert_eq!(small_walk.nodes, small);
    assert_eq!(large_walk.nodes, large);

    // Consolidated (zarr-python's inline form in the root document, as
    // `zarr.consolidate_metadata` writes it): one document holds every
    // node, and a walk reads it alone.
    for (name, groups) in [("small", 10), ("large", 100)] {
        write_consolidated(&dir.path().join(name), groups, 999);
    }
    let consolidated_size = std::fs::metadata(dir.path().join("large/zarr.json"))
        .unwrap()
        .len();
    let started = Instant::now();
    let small_view = walk(&small_store, true);
    let large_view = walk(&large_store, true);
    let viewed = started.elapsed();
    let rss_view = peak_rss();
    assert_eq!((small_view.nodes, large_view.nodes), (small, large));

    eprintln!(
        "100k nodes: files written in {written:?}; walk of 10k: {small_walk:?}, of 100k: \
         {large_walk:?}, both in {walked:?}; consolidated document of {consolidated_size} \
         bytes for 100k; consolidated walk of 10k: {small_view:?}, of 100k: {large_view:?}, \
         both in {viewed:?}; peak RSS {} MiB before, {} MiB after the walks, {} MiB after \
         the consolidated walks",
        rss_before >> 20,
        rss_walk >> 20,
        rss_view >> 20
    );
    // Linear: ten times the nodes costs about ten times the work (a little
    // less, as the root's fixed cost is shared), never a hundred times.
    for (what, s, l) in [
        ("walk calls", small_walk.calls, large_walk.calls),
        ("walk bytes", small_walk.bytes, large_walk.bytes),
        ("consolidated bytes", small_view.bytes, large_view.bytes),
    ] {
        let ratio = l as f64 / s as f64;
        assert!(
            (8.0..=11.0).contains(&ratio),
            "{what}: {s} then {l} ({ratio:.1}×)"
        );
    }
    // A few calls per node from the documents, one read from the view.
    assert!(large_walk.calls <= 4 * large as u64, "{large_walk:?}");
    assert!(large_view.calls <= 2, "{large_view:?}");
    // Memory: a node costs a few KiB at most (the 100k walk's handles
    // included), far from anything quadratic.
    if rss_view > 0 {
        assert!(
            rss_view < 1 << 30,
            "peak RSS {} MiB for 100k nodes",
            rss_view >> 20
        );
    }
}

/// An array of 10^12 chunks of one element each (10^6 × 10^6), `uint8`.
fn trillion_chunk_array(store: Arc<dyn Store>) -> Array {
    Array::builder(&[1_000_000, 1_000_000], DataType::UInt8, &[1, 1])
        .fill_value(0u8)
        .create(store, "big")
        .unwrap()
}

#[test]
fn a_sparse_grid_of_a_trillion_chunks_costs_only_its_stored_chunks() {
    let store = Arc::new(Counting::new(MemoryStore::new()));
    let array = trillion_chunk_array(Arc::clone(&store) as Arc<dyn Store>);
    assert_eq!(array.chunk_grid_shape(), [1_000_000, 1_000_000]);
    store.take();

    // A few chunks, far apart.
    let writes = [
        (0u64, 0u64, 1u8),
        (999_999, 999_999, 2),
        (123_456, 654_321, 3),
    ];
    for (i, j, value) in writes {
        array
            .write_region(&Region::new(vec![i, j], vec![1, 1]), &[value])
            .unwrap();
    }
    let (write_calls, _) = store.take();
    assert!(
        write_calls <= 3 * 3,
        "{write_calls} calls for 3 one-chunk writes"
    );

    // Counting what is stored lists the chunk prefix once, never the grid.
    let stored = array.stored_chunks().unwrap();
    let coords: Vec<Vec<u64>> = stored.iter().map(|c| c.chunk_coords.clone()).collect();
    assert_eq!(
        coords,
        [vec![0, 0], vec![123_456, 654_321], vec![999_999, 999_999]]
    );
    assert_eq!(array.stored_size().unwrap().chunks, 3);
    let (list_calls, _) = store.take();
    // Two listings of the 4 keys (the document and 3 chunks), and a size
    // for each listed key.
    assert!(
        list_calls <= 2 * (1 + 4) + 4,
        "{list_calls} calls to count 3 chunks"
    );

    // A region reads the chunks it covers: a 3×3 box is 9 chunks.
    let values = array
        .read_region::<u8>(&Region::new(vec![123_455, 654_320], vec![3, 3]))
        .unwrap();
    assert_eq!(values, [0, 0, 0, 0, 3, 0, 0, 0, 0]);
    let (read_calls, _) = store.take();
    assert!(read_calls <= 9 + 2, "{read_calls} calls to read 9 chunks");
    eprintln!(
        "10^12 chunks: {write_calls} calls for 3 writes, {list_calls} to count, {read_calls} to read 9"
    );

    // A store that cannot list would have to ask for each of the 10^12
    // positions: refused with an error instead of running for ever.
    let unlistable: Arc<dyn Store> = Arc::new(NoList(MemoryStore::new()));
    let array = trillion_chunk_array(Arc::clone(&unlistable));
    let err = array.stored_chunks().unwrap_err();
    let message = error_chain(&err);
    assert!(
        message.contains("[1000000, 1000000] grid") && message.contains("`/big`"),
        "{message}"
    );
}

/// A store that cannot list (as plain HTTP).
#[derive(Debug)]
struct NoList(MemoryStore);

impl Store for NoList {
    fn name(&self) -> &'static str {
        "unlistable store"
    }
    fn capabilities(&self) -> StoreCapabilities {
        StoreCapabilities {
            list: false,
            ..self.0.capabilities()
        }
    }
    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.get(key, range)
    }
    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
        self.0.set(key, value)
    }
    fn set_partial_values(&self, items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError> {
        self.0.set_partial_values(items)
    }
    fn erase(&self, key: &StoreKey) -> Result<(), StoreError> {
        self.0.erase(key)
    }
    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<(), StoreError> {
        self.0.erase_prefix(prefix)
    }
    fn list_prefix(&self, _prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
        Err(StoreError::Unsupported {
            store: "unlistable store",
            operation: "listing",
        })
    }
    fn list_dir(&self, _prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        Err(StoreError::Unsupported {
            store: "unlistable store",
            operation: "listing",
        })
    }
}

/// A grid of 2^80 chunks: more than `u64` counts. zarr-python opens it,
/// and so does zarrkit (point selections address it; see
/// `selections::tables`): what needs the count is a clear error instead.
#[test]
fn a_chunk_count_past_u64_opens_and_what_needs_the_count_is_a_clear_error() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let n = 1u64 << 40;
    let array = Array::builder(&[n, n], DataType::UInt8, &[1, 1])
        .fill_value(0u8)
        .create(Arc::clone(&store), "huge")
        .unwrap();
    assert_eq!(array.chunk_grid_shape(), [n, n]);
    array
        .write_region(&Region::new(vec![n - 1, n - 1], vec![1, 1]), &[5u8])
        .unwrap();
    let corner = array
        .read_region::<u8>(&Region::new(vec![n - 2, n - 2], vec![2, 2]))
        .unwrap();
    assert_eq!(corner, [0, 0, 0, 5]);
    // Listing finds the stored chunk without counting the grid.
    let stored = array.stored_chunks().unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].chunk_coords, [n - 1, n - 1]);
    assert_eq!(stored[0].key.as_str(), "huge/c/1099511627775/1099511627775");
    // Probing every position (a store that cannot list) is refused.
    let unlistable: Arc<dyn Store> = Arc::new(NoList(MemoryStore::new()));
    let array = Array::builder(&[n, n], DataType::UInt8, &[1, 1])
        .create(unlistable, "huge")
        .unwrap();
    let message = error_chain(&array.stored_chunks().unwrap_err());
    eprintln!("2^80 chunks, unlistable: {message}");
    assert!(
        message.contains("`/huge`") && message.contains("[1099511627776, 1099511627776] grid"),
        "{message}"
    );
}

#[test]
fn an_attribute_document_of_100_mb_opens_in_bounded_memory() {
    let dir = scratch_dir();
    let store = Arc::new(FilesystemStore::new(dir.path()).unwrap());
    // 100 MB of attributes as a real one might be: a long list of records
    // (a table of contents, per-frame metadata) and a long string.
    let mut document = String::with_capacity(101 << 20);
    document.push_str(r#"{"zarr_format":3,"node_type":"group","attributes":{"frames":["#);
    let mut i = 0u64;
    while document.len() < 20 << 20 {
        if i > 0 {
            document.push(',');
        }
        write!(document, r#"{{"t":{i},"name":"frame{i:08}","ok":true}}"#).unwrap();
        i += 1;
    }
    document.push_str(r#"],"notes":""#);
    let notes = 100_000_000 - document.len() - 3;
    document.push_str(&"x".repeat(notes));
    document.push_str(r#""}}"#);
    assert_eq!(document.len(), 100_000_000);
    std::fs::write(dir.path().join("zarr.json"), &document).unwrap();
    drop(document);

    let before = peak_rss();
    let started = Instant::now();
    let group = Group::open(Arc::clone(&store) as Arc<dyn Store>, "/").unwrap();
    let opened = started.elapsed();
    let after = peak_rss();
    let frames = group.attributes()["frames"].as_array().unwrap();
    assert_eq!(frames.len() as u64, i);
    assert_eq!(frames[12_345]["name"], "frame00012345");
    assert_eq!(group.attributes()["notes"].as_str().unwrap().len(), notes);
    let grown = after.saturating_sub(before);
    eprintln!(
        "100 MB attributes: {i} records, opened in {opened:?}, peak RSS {} MiB before, {} MiB \
         after (+{} MiB)",
        before >> 20,
        after >> 20,
        grown >> 20
    );
    if after > 0 {
        // The bytes read, the parsed values and the group's copy: a small
        // multiple of the document, never an explosion.
        assert!(grown < 6 * 100_000_000, "+{} MiB", grown >> 20);
    }
}
