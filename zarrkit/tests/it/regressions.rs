//! One test per fixed bug, named `issue_<n>_<what>`, each with a comment
//! saying how the bug happened.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use zarrkit::codec::sharding::ShardingCodec;
use zarrkit::codec::{Codec, bytes::BytesCodec, zstd::ZstdCodec};
use zarrkit::metadata::DataType;
use zarrkit::store::{
    ByteRange, FilesystemStore, ListDir, Store, StoreCapabilities, StoreError, StoreKey,
    StorePrefix, ValueSnapshot, ValueVersion,
};
use zarrkit::{Array, Region};

/// The layout of issue #10's reproducer: 64×64 shards of 8×8 inner chunks
/// (zstd inside, the default crc32c index), 2×2 shards, 256 inner chunks.
const SHAPE: [u64; 2] = [128, 128];
const SHARD: u64 = 64;
const INNER: u64 = 8;
const INNER_PER_ROW: u64 = SHAPE[1] / INNER;
const INNER_CHUNKS: u64 = (SHAPE[0] / INNER) * INNER_PER_ROW;

fn sharded_array(store: Arc<dyn Store>) -> Array {
    let zstd = Codec::BytesToBytes(Arc::new(ZstdCodec::new(0, false).unwrap()));
    let bytes = Codec::ArrayToBytes(Arc::new(BytesCodec::little()));
    let sharding = Codec::ArrayToBytes(Arc::new(ShardingCodec::new(
        &[INNER, INNER],
        vec![bytes, zstd],
    )));
    Array::builder(&SHAPE, DataType::UInt16, &[SHARD, SHARD])
        .codecs(vec![sharding])
        .create(store, "a")
        .unwrap()
}

fn open_array(root: &Path) -> Array {
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open_existing(root).unwrap());
    Array::open(store, "a").unwrap()
}

/// The value of element `e` (0..64) of inner chunk `c` after round `r`:
/// never the fill value 0, and different in every round, chunk and element.
fn value(c: u64, e: u64, r: u64) -> u16 {
    (1 + ((c * 64 + e) * 7 + r * 13) % 65_000) as u16
}

fn inner_region(c: u64) -> Region {
    Region::new(
        vec![(c / INNER_PER_ROW) * INNER, (c % INNER_PER_ROW) * INNER],
        vec![INNER, INNER],
    )
}

fn round_values(c: u64, r: u64) -> Vec<u16> {
    (0..INNER * INNER).map(|e| value(c, e, r)).collect()
}

/// Writes round `r` of inner chunk `c`: a partial write of its shard.
fn write_inner(array: &Array, c: u64, r: u64) {
    array
        .write_region(&inner_region(c), &round_values(c, r))
        .unwrap_or_else(|err| panic!("writing inner chunk {c} in round {r}: {err}"));
}

/// Checks that `data` is inner chunk `c` as some round left it (or never
/// written): a chunk mixed from two versions, or decoded from bytes of
/// another file, matches no round.
fn check_consistent(c: u64, data: &[u16], rounds: u64) -> Result<(), String> {
    if data.iter().all(|&v| v == 0) {
        return Ok(());
    }
    if (0..rounds).any(|r| data == round_values(c, r)) {
        return Ok(());
    }
    Err(format!(
        "inner chunk {c} holds values of no round: {data:?}"
    ))
}

/// The inner chunks whose last round is missing: the elements lost.
fn elements_lost(array: &Array, rounds: u64) -> u64 {
    let all = array.read_region::<u16>(&Region::whole(&SHAPE)).unwrap();
    let mut lost = 0;
    for c in 0..INNER_CHUNKS {
        let region = inner_region(c);
        for e in 0..INNER * INNER {
            let (i, j) = (region.start()[0] + e / INNER, region.start()[1] + e % INNER);
            if all[(i * SHAPE[1] + j) as usize] != value(c, e, rounds - 1) {
                lost += 1;
            }
        }
    }
    lost
}

/// Writer `w` of `writers`: every round, each inner chunk it owns
/// (`c % writers == w`, so every shard has inner chunks of every writer),
/// in an order that differs between writers.
fn run_writer(array: &Array, w: u64, writers: u64, rounds: u64) {
    let mine: Vec<u64> = (0..INNER_CHUNKS).filter(|c| c % writers == w).collect();
    for r in 0..rounds {
        for k in 0..mine.len() {
            // A rotation, reversed for odd writers: each chunk once per round.
            let k = if w % 2 == 0 { k } else { mine.len() - 1 - k };
            write_inner(array, mine[(k + w as usize * 5) % mine.len()], r);
        }
    }
}

/// Reads inner chunks (through the partial decoder: index, then inner
/// chunks) and whole shards until `stop` exists, checking each; returns
/// the number of reads.
fn run_reader(array: &Array, stop: &Path, rounds: u64) -> Result<u64, String> {
    let mut reads = 0u64;
    let mut c = 0;
    loop {
        let done = stop.exists();
        c = (c * 37 + 11) % INNER_CHUNKS;
        let data = array
            .read_region::<u16>(&inner_region(c))
            .map_err(|err| format!("reading inner chunk {c}: {err}"))?;
        check_consistent(c, &data, rounds)?;
        reads += 1;
        if reads % 16 == 0 {
            let shard = array
                .read_region::<u16>(&Region::new(vec![0, SHARD], vec![SHARD, SHARD]))
                .map_err(|err| format!("reading shard 0/1: {err}"))?;
            for c in (0..INNER_CHUNKS).filter(|c| {
                let r = inner_region(*c);
                r.start()[0] < SHARD && r.start()[1] >= SHARD
            }) {
                let r = inner_region(c);
                let data: Vec<u16> = (0..INNER * INNER)
                    .map(|e| {
                        let i = r.start()[0] + e / INNER;
                        let j = r.start()[1] - SHARD + e % INNER;
                        shard[(i * SHARD + j) as usize]
                    })
                    .collect();
                check_consistent(c, &data, rounds)?;
            }
        }
        if done {
            return Ok(reads);
        }
    }
}

/// The environment variable that makes this test binary a child writer or
/// reader of [`issue_10_writers_in_several_processes_lose_nothing`].
const CHILD_ROLE: &str = "ZARRKIT_IT_CHILD_ROLE";
const CHILD_ROOT: &str = "ZARRKIT_IT_CHILD_ROOT";
const TEST_NAME: &str = "regressions::issue_10_writers_in_several_processes_lose_nothing";

fn spawn_child(root: &Path, role: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([TEST_NAME, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ROLE, role)
        .env(CHILD_ROOT, root)
        .spawn()
        .unwrap()
}

/// The child's side: `writer <w> <writers> <rounds>` or `reader <rounds>`.
fn run_child(role: &str, root: &Path) {
    let array = open_array(root);
    let words: Vec<u64> = role
        .split(' ')
        .skip(1)
        .map(|w| w.parse().unwrap())
        .collect();
    if role.starts_with("writer") {
        run_writer(&array, words[0], words[1], words[2]);
    } else {
        let reads = run_reader(&array, &root.join("stop"), words[0]).unwrap_or_else(|err| {
            panic!("the reader saw a torn or undecodable inner chunk: {err}")
        });
        eprintln!("reader: {reads} reads");
        assert!(reads > 0);
    }
}

// Issue #10, item 4. A partial shard write read the shard's index and then
// its untouched inner chunks in two separate store reads, each opening the
// file anew; when another process renamed a new shard file in between, the
// writer copied bytes of the new file at the old file's offsets and stored
// them under a fresh, valid crc32c index, leaving inner chunks that no
// longer decode. And the guard against lost updates was an in-process
// generation keyed by the store object, so writers in other processes
// overwrote each other's shards and lost a quarter to a half of the
// elements in every trial. Reads and read-modify-writes now go through one
// snapshot of the shard (the file opened once), and the write is a
// compare-and-swap under a `flock` (`Store::set_if_unchanged`), retried.
//
// This test runs as the parent (several writer processes and a reader
// process on one store, several trials) and, re-invoked with
// `ZARRKIT_IT_CHILD_ROLE`, as each child. `ZARRKIT_WRITER_TRIALS`,
// `ZARRKIT_WRITERS` and `ZARRKIT_WRITER_ROUNDS` raise the load.
#[test]
fn issue_10_writers_in_several_processes_lose_nothing() {
    if let Ok(role) = std::env::var(CHILD_ROLE) {
        run_child(&role, &PathBuf::from(std::env::var_os(CHILD_ROOT).unwrap()));
        return;
    }
    let setting = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let trials = setting("ZARRKIT_WRITER_TRIALS", 3);
    let writers = setting("ZARRKIT_WRITERS", 4);
    let rounds = setting("ZARRKIT_WRITER_ROUNDS", 3);
    let mut total_lost = 0;
    for trial in 0..trials {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("store");
        let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(&root).unwrap());
        sharded_array(store);
        let reader = spawn_child(&root, &format!("reader {rounds}"));
        let children: Vec<Child> = (0..writers)
            .map(|w| spawn_child(&root, &format!("writer {w} {writers} {rounds}")))
            .collect();
        for mut child in children {
            assert!(child.wait().unwrap().success(), "a writer failed");
        }
        std::fs::write(root.join("stop"), b"").unwrap();
        let mut reader = reader;
        assert!(reader.wait().unwrap().success(), "the reader failed");
        std::fs::remove_file(root.join("stop")).unwrap();
        let array = open_array(&root);
        let lost = elements_lost(&array, rounds);
        eprintln!(
            "trial {trial}: {writers} processes x {rounds} rounds x {} inner chunks each: {lost} elements lost",
            INNER_CHUNKS / writers
        );
        total_lost += lost;
        // No lock file is left behind, and none is listed as a key.
        let keys = array.store().list().unwrap();
        assert!(
            keys.iter().all(|k| !k.as_str().contains(".zarrkit")),
            "{keys:?}"
        );
        assert_no_lock_files(&root);
    }
    assert_eq!(total_lost, 0, "elements lost over {trials} trials");
}

fn assert_no_lock_files(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        assert!(!name.starts_with(".zarrkit-"), "left behind: {name}");
        if entry.file_type().unwrap().is_dir() {
            assert_no_lock_files(&entry.path());
        }
    }
}

// Issue #10, item 4: two `FilesystemStore`s on one directory in one
// process lost updates just as two processes did, because the in-process
// guard was keyed by the store object. Each thread here has its own store.
#[test]
fn issue_10_two_filesystem_stores_on_one_directory_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    sharded_array(Arc::new(FilesystemStore::new(&root).unwrap()));
    let (writers, rounds) = (2, 3);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let array = open_array(&root);
            let mut c = 0;
            while !stop.load(Ordering::SeqCst) {
                c = (c * 37 + 11) % INNER_CHUNKS;
                let data = array.read_region::<u16>(&inner_region(c)).unwrap();
                check_consistent(c, &data, rounds).unwrap();
            }
        });
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let root = &root;
                scope.spawn(move || run_writer(&open_array(root), w, writers, rounds))
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
        stop.store(true, Ordering::SeqCst);
        reader.join().unwrap();
    });
    assert_eq!(elements_lost(&open_array(&root), rounds), 0);
}

/// A store with hooks where issue #10's failures struck: after the first
/// read of a snapshot, `other_writer` runs once when armed (another
/// process replacing the value, made deterministic); each `set` first
/// takes one from `budget`, and fails when none is left (a process killed
/// part way stops writing).
struct Hooked {
    inner: Arc<dyn Store>,
    other_writer: Box<dyn Fn() + Send + Sync>,
    armed: AtomicBool,
    budget: AtomicUsize,
}

impl Hooked {
    fn new(inner: Arc<dyn Store>) -> Self {
        Self {
            inner,
            other_writer: Box::new(|| {}),
            armed: AtomicBool::new(false),
            budget: AtomicUsize::new(usize::MAX),
        }
    }
}

impl std::fmt::Debug for Hooked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooked")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

struct HookedSnapshot<'a> {
    inner: Box<dyn ValueSnapshot + 'a>,
    store: &'a Hooked,
}

impl ValueSnapshot for HookedSnapshot<'_> {
    fn read(&self, ranges: &[Option<ByteRange>]) -> Result<Option<Vec<Vec<u8>>>, StoreError> {
        let result = self.inner.read(ranges);
        if self.store.armed.swap(false, Ordering::SeqCst) {
            (self.store.other_writer)();
        }
        result
    }

    fn version(&self) -> Option<ValueVersion> {
        self.inner.version()
    }
}

impl Store for Hooked {
    fn name(&self) -> &'static str {
        "hooked store"
    }
    fn capabilities(&self) -> StoreCapabilities {
        self.inner.capabilities()
    }
    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get(key, range)
    }
    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
        let taken = self
            .budget
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if taken.is_err() {
            return Err(StoreError::Write {
                store: "hooked store",
                key: key.clone(),
                source: std::io::Error::other("killed"),
            });
        }
        self.inner.set(key, value)
    }
    fn snapshot<'a>(&'a self, key: &StoreKey) -> Result<Box<dyn ValueSnapshot + 'a>, StoreError> {
        Ok(Box::new(HookedSnapshot {
            inner: self.inner.snapshot(key)?,
            store: self,
        }))
    }
    fn set_if_unchanged(
        &self,
        key: &StoreKey,
        value: Option<&[u8]>,
        expected: &ValueVersion,
    ) -> Result<bool, StoreError> {
        self.inner.set_if_unchanged(key, value, expected)
    }
    fn set_partial_values(&self, items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError> {
        self.inner.set_partial_values(items)
    }
    fn erase(&self, key: &StoreKey) -> Result<(), StoreError> {
        self.inner.erase(key)
    }
    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<(), StoreError> {
        self.inner.erase_prefix(prefix)
    }
    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
        self.inner.list_prefix(prefix)
    }
    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        self.inner.list_dir(prefix)
    }
}

/// A sharded array on a [`Hooked`] filesystem store whose other writer rewrites
/// every inner chunk of shard 0/0 (with round 1 values, compressing to other
/// sizes, so every offset moves) through a second store on the directory.
fn interleaved(dir: &Path) -> (Array, Arc<Hooked>) {
    let root = dir.join("store");
    let plain = sharded_array(Arc::new(FilesystemStore::new(&root).unwrap()));
    // Round 0 in every inner chunk of shard 0/0.
    for c in (0..INNER_CHUNKS).filter(|&c| inner_region(c).start().iter().all(|&s| s < SHARD)) {
        write_inner(&plain, c, 0);
    }
    let other_root = root.clone();
    let store = Arc::new(Hooked {
        other_writer: Box::new(move || {
            let other = open_array(&other_root);
            let noise: Vec<u16> = (0..SHARD * SHARD)
                .map(|i| (i.wrapping_mul(0x9e37_79b9) >> 7) as u16 | 1)
                .collect();
            other
                .write_region(&Region::new(vec![0, 0], vec![SHARD, SHARD]), &noise)
                .unwrap();
        }),
        ..Hooked::new(Arc::new(FilesystemStore::open_existing(&root).unwrap()))
    });
    let array = Array::open(store.clone(), "a").unwrap();
    (array, store)
}

// Issue #10, item 4, the read side: the partial decoder read a shard's
// index in one store read and the inner chunk in another, so a shard
// replaced in between was read at the old index's offsets (undecodable
// bytes, or another chunk's). One snapshot now serves both reads.
#[test]
fn issue_10_a_partial_read_reads_one_version_of_the_shard() {
    let dir = tempfile::tempdir().unwrap();
    let (array, store) = interleaved(dir.path());
    store.armed.store(true, Ordering::SeqCst);
    // Inner chunk 1: its bytes follow inner chunk 0's, whose length the
    // replacement changes.
    let data = array.read_region::<u16>(&inner_region(1)).unwrap();
    assert!(!store.armed.load(Ordering::SeqCst), "the replacement ran");
    assert_eq!(data, round_values(1, 0), "the version the index came from");
}

// Issue #10, item 4, the write side: a partial write that read the shard
// while another writer replaced it stored its update over the other
// writer's shard (or over bytes of both). The compare-and-swap now sees
// the shard changed, and the write reads it again and keeps both updates.
#[test]
fn issue_10_a_partial_write_racing_another_writer_keeps_both_updates() {
    let dir = tempfile::tempdir().unwrap();
    let (array, store) = interleaved(dir.path());
    store.armed.store(true, Ordering::SeqCst);
    array
        .write_region(&inner_region(1), &round_values(1, 2))
        .unwrap();
    assert!(!store.armed.load(Ordering::SeqCst), "the other writer ran");
    let shard = array
        .read_region::<u16>(&Region::new(vec![0, 0], vec![SHARD, SHARD]))
        .unwrap();
    for i in 0..SHARD {
        for j in 0..SHARD {
            let got = shard[(i * SHARD + j) as usize];
            let expected = if i < INNER && (INNER..2 * INNER).contains(&j) {
                // Ours: inner chunk 1, round 2.
                value(1, i * INNER + (j - INNER), 2)
            } else {
                // The other writer's.
                ((i * SHARD + j).wrapping_mul(0x9e37_79b9) >> 7) as u16 | 1
            };
            assert_eq!(got, expected, "element ({i}, {j})");
        }
    }
}

// Issue #10, item 5, in the library: a migration that stopped part way
// left a destination that looked complete (missing chunks read as the fill
// value), and planning it again failed on the non-empty destination. Now
// the marker makes `check_finished` (which the commands call before
// opening a store) fail, and planning again resumes, keeping the chunks
// already copied.
#[test]
fn issue_10_an_interrupted_migration_is_refused_when_opened_and_resumes() {
    use zarrkit::format::ZarrFormat;
    use zarrkit::migrate::{self, MIGRATION_MARKER, MigrateError};
    let src: Arc<dyn Store> = Arc::new(zarrkit::store::MemoryStore::new());
    let array = Array::builder(&[100, 100], DataType::Int32, &[10, 10])
        .format(ZarrFormat::V2)
        .create(Arc::clone(&src), "/")
        .unwrap();
    let values: Vec<i32> = (0..10_000).map(|i| i * 3 + 1).collect();
    array
        .write_region(&Region::whole(&[100, 100]), &values)
        .unwrap();

    let dst = Arc::new(zarrkit::store::MemoryStore::new());
    let failing: Arc<dyn Store> = Arc::new(Hooked {
        // The marker, the document, and 40 of the 100 chunks.
        budget: AtomicUsize::new(42),
        ..Hooked::new(dst.clone())
    });
    let plan = migrate::plan(Arc::clone(&src), failing, ZarrFormat::V3).unwrap();
    assert!(!plan.resumes());
    let err = migrate::migrate(&plan, &mut |_| {}).unwrap_err();
    assert!(
        err.to_string().contains("killed") || matches!(err, MigrateError::Zarr(_)),
        "{err}"
    );

    let dst: Arc<dyn Store> = dst;
    let err = migrate::check_finished(dst.as_ref()).unwrap_err();
    assert!(
        matches!(&err, zarrkit::Error::UnfinishedMigration { key } if key.as_str() == MIGRATION_MARKER),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains(&format!("`{MIGRATION_MARKER}`")) && message.contains("again to resume"),
        "{message}"
    );

    // Another target format is refused, naming the one begun.
    let err = migrate::plan(Arc::clone(&src), Arc::clone(&dst), ZarrFormat::V2).unwrap_err();
    assert!(
        matches!(&err, MigrateError::UnfinishedToOtherFormat { found, .. } if found == "v3"),
        "{err:?}"
    );

    let plan = migrate::plan(Arc::clone(&src), Arc::clone(&dst), ZarrFormat::V3).unwrap();
    assert!(plan.resumes());
    let report = migrate::migrate(&plan, &mut |_| {}).unwrap();
    assert_eq!(report.chunks_skipped, 40);
    assert_eq!(report.chunks, 60);
    assert_eq!(report.chunks_verified, 100);
    let migrated = Array::open(Arc::clone(&dst), "/").unwrap();
    assert_eq!(
        migrated
            .read_region::<i32>(&Region::whole(&[100, 100]))
            .unwrap(),
        values
    );
    assert_eq!(
        dst.get(&StoreKey::new(MIGRATION_MARKER).unwrap(), None)
            .unwrap(),
        None
    );

    // Finished, the destination is an ordinary non-empty store again.
    let err = migrate::plan(Arc::clone(&src), dst, ZarrFormat::V3).unwrap_err();
    assert!(
        matches!(err, MigrateError::DestinationNotEmpty { .. }),
        "{err:?}"
    );
}

// Issue #10, item 5: the marker must not be taken for a node by other Zarr
// readers. zarr-python 3.1 lists the destination of an interrupted
// migration with the array as its only member, and warns that the marker
// "is not recognized as a component of a Zarr hierarchy".
#[cfg(all(
    feature = "gzip",
    feature = "zstd",
    feature = "blosc",
    feature = "crc32c"
))]
#[test]
fn issue_10_zarr_python_does_not_take_the_migration_marker_for_a_node() {
    use zarrkit::format::ZarrFormat;
    use zarrkit::migrate;
    let Some(python) = super::interop::reference_python() else {
        return;
    };
    let src: Arc<dyn Store> = Arc::new(zarrkit::store::MemoryStore::new());
    zarrkit::Group::create_as(
        Arc::clone(&src),
        "/",
        ZarrFormat::V2,
        zarrkit::metadata::JsonMap::new(),
    )
    .unwrap();
    let array = Array::builder(&[40], DataType::Int32, &[10])
        .format(ZarrFormat::V2)
        .create(Arc::clone(&src), "/a")
        .unwrap();
    array
        .write_region(&Region::whole(&[40]), &(1..=40).collect::<Vec<i32>>())
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("dst.zarr");
    let dst: Arc<dyn Store> = Arc::new(Hooked {
        // The marker, two documents and two of the four chunks.
        budget: AtomicUsize::new(5),
        ..Hooked::new(Arc::new(FilesystemStore::new(&root).unwrap()))
    });
    let plan = migrate::plan(src, dst, ZarrFormat::V3).unwrap();
    migrate::migrate(&plan, &mut |_| {}).unwrap_err();
    assert!(root.join(migrate::MIGRATION_MARKER).is_file());

    let script = r#"
import sys, warnings, zarr
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    group = zarr.open_group(sys.argv[1], mode="r")
    print(sorted(name for name, _ in group.members()))
for warning in caught:
    print("warning:", warning.message)
"#;
    let output = Command::new(python)
        .args([OsStr::new("-c"), OsStr::new(script), root.as_os_str()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some("['a']"), "{stdout}");
    assert!(
        lines.any(|l| l.contains(migrate::MIGRATION_MARKER) && l.contains("not recognized")),
        "{stdout}"
    );
}
