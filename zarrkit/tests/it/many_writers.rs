//! Issue #17, "Many writers": N processes × M threads each write an
//! interleaved pattern of partial writes into shared shards (rows of inner
//! chunks, so every inner chunk gets elements from several writers), while
//! a reader loop checks that every element it sees is the fill value or its
//! final value (never a torn chunk); then every element must be present.
//! On the filesystem (a `flock`ed compare-and-swap) and on S3 through
//! SeaweedFS (`If-Match` conditional `PUT`s, retried). And the plain case
//! stays plain: writers of disjoint whole chunks take no lock and make no
//! conditional write.
//!
//! `ZARRKIT_MANY_TRIALS`, `ZARRKIT_MANY_PROCESSES` and
//! `ZARRKIT_MANY_THREADS` raise the load.

use crate::crash::{child_role, open_spec, spawn_child};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;
use zarrkit::codec::sharding::ShardingCodec;
use zarrkit::codec::{Codec, bytes::BytesCodec, zstd::ZstdCodec};
use zarrkit::metadata::DataType;
use zarrkit::store::testing::{FaultOp, FaultStore};
use zarrkit::store::{FilesystemStore, Store};
use zarrkit::{Array, Region};

/// The array of a test: a square of `edge` elements in shards of `shard`,
/// inner chunks of `inner`.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    edge: u64,
    shard: u64,
    inner: u64,
}

impl Geometry {
    fn parse(text: &str) -> Self {
        let v: Vec<u64> = text.split('x').map(|w| w.parse().unwrap()).collect();
        Self {
            edge: v[0],
            shard: v[1],
            inner: v[2],
        }
    }

    fn spell(self) -> String {
        format!("{}x{}x{}", self.edge, self.shard, self.inner)
    }

    fn create(self, store: &Arc<dyn Store>) {
        let zstd = Codec::BytesToBytes(Arc::new(ZstdCodec::new(0, false).unwrap()));
        let bytes = Codec::ArrayToBytes(Arc::new(BytesCodec::little()));
        let sharding = ShardingCodec::new(&[self.inner, self.inner], vec![bytes, zstd]);
        Array::builder(
            &[self.edge, self.edge],
            DataType::UInt16,
            &[self.shard, self.shard],
        )
        .codecs(vec![Codec::ArrayToBytes(Arc::new(sharding))])
        .create(Arc::clone(store), "a")
        .unwrap();
    }

    /// The final value of element (i, j): never the fill value 0.
    fn value(self, i: u64, j: u64) -> u16 {
        (1 + i * self.edge + j) as u16
    }

    /// The writes of writer `w` of `writers`: each row `i` with
    /// `i % writers == w`, cut into segments one inner chunk wide (each a
    /// partial write of an inner chunk of a shard), in an order of its own.
    fn writes(self, w: u64, writers: u64) -> Vec<Region> {
        let mut mine: Vec<Region> = (0..self.edge)
            .filter(|i| i % writers == w)
            .flat_map(|i| {
                (0..self.edge / self.inner)
                    .map(move |s| Region::new(vec![i, s * self.inner], vec![1, self.inner]))
            })
            .collect();
        let n = mine.len();
        if n > 0 {
            mine.rotate_left((w as usize * 7) % n);
        }
        if w % 2 == 1 {
            mine.reverse();
        }
        mine
    }

    fn write_all(self, array: &Array, w: u64, writers: u64) {
        for region in self.writes(w, writers) {
            let (i, j0) = (region.start()[0], region.start()[1]);
            let data: Vec<u16> = (j0..j0 + self.inner).map(|j| self.value(i, j)).collect();
            array
                .write_region(&region, &data)
                .unwrap_or_else(|err| panic!("writer {w}: {region:?}: {err}"));
        }
    }

    /// Checks that every element of `data` (the box at `start` of `shape`)
    /// is 0 or its final value.
    fn check(self, data: &[u16], start: [u64; 2], shape: [u64; 2]) -> Result<(), String> {
        for (k, &v) in data.iter().enumerate() {
            let (i, j) = (
                start[0] + k as u64 / shape[1],
                start[1] + k as u64 % shape[1],
            );
            if v != 0 && v != self.value(i, j) {
                return Err(format!(
                    "element ({i}, {j}) holds {v}, neither the fill value nor its value {}",
                    self.value(i, j)
                ));
            }
        }
        Ok(())
    }

    fn lost(self, array: &Array) -> u64 {
        let all = array
            .read_region::<u16>(&Region::whole(&[self.edge, self.edge]))
            .unwrap();
        let mut lost = 0;
        for i in 0..self.edge {
            for j in 0..self.edge {
                if all[(i * self.edge + j) as usize] != self.value(i, j) {
                    lost += 1;
                }
            }
        }
        lost
    }
}

/// Reads until `stop`: inner chunks through the partial decoder and whole
/// shards, checking each; returns the number of reads.
fn read_loop(geometry: Geometry, array: &Array, stop: &AtomicBool) -> Result<u64, String> {
    let per_row = geometry.edge / geometry.inner;
    let (mut reads, mut c) = (0u64, 0u64);
    loop {
        let done = stop.load(Ordering::SeqCst);
        c = (c * 37 + 11) % (per_row * per_row);
        let start = [
            (c / per_row) * geometry.inner,
            (c % per_row) * geometry.inner,
        ];
        let shape = [geometry.inner, geometry.inner];
        let data = array
            .read_region::<u16>(&Region::new(start.to_vec(), shape.to_vec()))
            .map_err(|err| format!("reading inner chunk {start:?}: {err}"))?;
        geometry.check(&data, start, shape)?;
        if reads % 8 == 0 {
            let edge = geometry.edge;
            let all = array
                .read_region::<u16>(&Region::whole(&[edge, edge]))
                .map_err(|err| format!("reading everything: {err}"))?;
            geometry.check(&all, [0, 0], [edge, edge])?;
        }
        reads += 1;
        if done {
            return Ok(reads);
        }
    }
}

/// The child: `writer <process> <processes> <threads> <geometry>`, its
/// threads writing as writers `process * threads + t`.
fn run_writer_child(role: &str, spec: &str) {
    let words: Vec<&str> = role.split(' ').collect();
    let p: u64 = words[1].parse().unwrap();
    let processes: u64 = words[2].parse().unwrap();
    let threads: u64 = words[3].parse().unwrap();
    let geometry = Geometry::parse(words[4]);
    let store = open_spec(spec);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let store = &store;
            scope.spawn(move || {
                let array = Array::open(Arc::clone(store), "a").unwrap();
                geometry.write_all(&array, p * threads + t, processes * threads);
            });
        }
    });
}

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `trials` trials of `processes` × `threads` writers on a fresh
/// store each (`new_spec`), with a reader loop in this process; returns
/// the elements lost over all trials.
fn run_trials(
    test: &str,
    geometry: Geometry,
    new_spec: &dyn Fn() -> String,
    (trials, processes, threads): (u64, u64, u64),
) -> u64 {
    let mut total_lost = 0;
    for trial in 0..trials {
        let spec = new_spec();
        let store = open_spec(&spec);
        geometry.create(&store);
        let start = Instant::now();
        let children: Vec<_> = (0..processes)
            .map(|p| {
                let role = format!("writer {p} {processes} {threads} {}", geometry.spell());
                spawn_child(test, &role, &spec)
            })
            .collect();
        let stop = AtomicBool::new(false);
        let reads = std::thread::scope(|scope| {
            let reader = scope.spawn(|| {
                let array = Array::open(Arc::clone(&store), "a").unwrap();
                read_loop(geometry, &array, &stop)
            });
            for mut child in children {
                assert!(child.wait().unwrap().success(), "a writer process failed");
            }
            stop.store(true, Ordering::SeqCst);
            reader.join().unwrap()
        });
        let reads = reads.unwrap_or_else(|err| panic!("trial {trial}: the reader saw {err}"));
        let lost = geometry.lost(&Array::open(Arc::clone(&store), "a").unwrap());
        let writes = geometry.edge * geometry.edge / geometry.inner;
        eprintln!(
            "{}: trial {trial}: {processes} processes x {threads} threads, {writes} partial writes into {} shards, {reads} reads alongside: {lost} elements lost ({:?})",
            spec.split(':').next().unwrap(),
            (geometry.edge / geometry.shard).pow(2),
            start.elapsed()
        );
        total_lost += lost;
        store
            .erase_prefix(&zarrkit::store::StorePrefix::root())
            .unwrap();
    }
    total_lost
}

#[test]
fn writers_in_processes_and_threads_on_the_filesystem_lose_nothing_and_tear_nothing() {
    const TEST: &str = "many_writers::writers_in_processes_and_threads_on_the_filesystem_lose_nothing_and_tear_nothing";
    if let Some((role, spec)) = child_role() {
        run_writer_child(&role, &spec);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let counter = AtomicU64::new(0);
    let new_spec = || {
        let root = dir
            .path()
            .join(format!("store{}", counter.fetch_add(1, Ordering::SeqCst)));
        format!("file:{}", root.display())
    };
    let geometry = Geometry {
        edge: 64,
        shard: 32,
        inner: 8,
    };
    let load = (
        setting("ZARRKIT_MANY_TRIALS", 3),
        setting("ZARRKIT_MANY_PROCESSES", 3),
        setting("ZARRKIT_MANY_THREADS", 3),
    );
    assert_eq!(
        run_trials(TEST, geometry, &new_spec, load),
        0,
        "elements lost"
    );
    // No lock or temporary file is left behind.
    let mut left = Vec::new();
    find_leftovers(dir.path(), &mut left);
    assert_eq!(left, Vec::<String>::new());
}

fn find_leftovers(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().unwrap().is_dir() {
            find_leftovers(&entry.path(), out);
        } else if name.starts_with(".zarrkit-") {
            out.push(entry.path().display().to_string());
        }
    }
}

#[cfg(feature = "s3")]
#[test]
fn writers_in_processes_and_threads_on_s3_lose_nothing_and_tear_nothing() {
    const TEST: &str =
        "many_writers::writers_in_processes_and_threads_on_s3_lose_nothing_and_tear_nothing";
    if let Some((role, spec)) = child_role() {
        run_writer_child(&role, &spec);
        return;
    }
    let Some(endpoint) = crate::remote::server("ZARRKIT_S3_ENDPOINT") else {
        return;
    };
    let _ = endpoint;
    let new_spec = || {
        format!(
            "s3:s3://{}/{}",
            crate::remote::bucket(),
            crate::remote::unique("many-writers")
        )
    };
    let geometry = Geometry {
        edge: 32,
        shard: 16,
        inner: 8,
    };
    let load = (
        setting("ZARRKIT_MANY_TRIALS", 2),
        setting("ZARRKIT_MANY_PROCESSES", 2),
        setting("ZARRKIT_MANY_THREADS", 2),
    );
    assert_eq!(
        run_trials(TEST, geometry, &new_spec, load),
        0,
        "elements lost"
    );
}

#[cfg(all(feature = "s3", feature = "azure"))]
#[test]
fn writers_in_processes_and_threads_on_azure_lose_nothing_and_tear_nothing() {
    const TEST: &str =
        "many_writers::writers_in_processes_and_threads_on_azure_lose_nothing_and_tear_nothing";
    if let Some((role, spec)) = child_role() {
        run_writer_child(&role, &spec);
        return;
    }
    if crate::remote::server("ZARRKIT_AZURE_ENDPOINT").is_none() {
        return;
    }
    let new_spec = || {
        format!(
            "az:az://{}/{}",
            crate::remote::bucket(),
            crate::remote::unique("many-writers")
        )
    };
    let geometry = Geometry {
        edge: 32,
        shard: 16,
        inner: 8,
    };
    let load = (
        setting("ZARRKIT_MANY_TRIALS", 2),
        setting("ZARRKIT_MANY_PROCESSES", 2),
        setting("ZARRKIT_MANY_THREADS", 2),
    );
    assert_eq!(
        run_trials(TEST, geometry, &new_spec, load),
        0,
        "elements lost"
    );
}

/// Writes disjoint whole chunks (or whole shards) from `threads` threads
/// through a counting wrapper, while a watcher looks for lock files.
fn disjoint_whole_writes(array_codecs: Option<Vec<Codec>>, threads: u64) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let counting = Arc::new(FaultStore::new(Arc::new(
        FilesystemStore::new(&root).unwrap(),
    )));
    let store = Arc::clone(&counting) as Arc<dyn Store>;
    let mut builder = Array::builder(&[64, 64], DataType::UInt16, &[16, 16]);
    if let Some(codecs) = array_codecs {
        builder = builder.codecs(codecs);
    }
    let array = builder.create(Arc::clone(&store), "a").unwrap();
    counting.reset_counts();
    let stop = AtomicBool::new(false);
    let locks_seen = AtomicU64::new(0);
    let rounds = 5;
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(Ordering::SeqCst) {
                let mut left = Vec::new();
                find_leftovers(&root, &mut left);
                let locks = left.iter().filter(|p| p.contains(".zarrkit-lock.")).count();
                locks_seen.fetch_add(locks as u64, Ordering::SeqCst);
            }
        });
        let writers: Vec<_> = (0..threads)
            .map(|t| {
                let array = &array;
                scope.spawn(move || {
                    for r in 0..rounds {
                        // Chunk row `t`: whole chunks no other thread writes.
                        for c in (0..4).filter(|c| c % threads == t % threads) {
                            let region = Region::new(vec![c * 16, 0], vec![16, 64]);
                            array
                                .write_region(&region, &[(r + 1) as u16; 1024])
                                .unwrap();
                        }
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        stop.store(true, Ordering::SeqCst);
    });
    assert_eq!(
        counting.conditional_writes(),
        0,
        "a whole-chunk write made a conditional write"
    );
    assert_eq!(
        locks_seen.load(Ordering::SeqCst),
        0,
        "a whole-chunk write took a lock"
    );
    // Each write of a chunk is one plain `set`, and no chunk was read.
    assert_eq!(counting.calls(FaultOp::Set), rounds * 16);
    assert_eq!(counting.calls(FaultOp::Get), 0);
    assert_eq!(
        array.read_region::<u16>(&Region::whole(&[64, 64])).unwrap(),
        vec![rounds as u16; 4096]
    );

    // The counter sees conditional writes: a partial write makes one.
    array
        .write_region(&Region::new(vec![0, 0], vec![1, 1]), &[9u16])
        .unwrap();
    assert_eq!(counting.conditional_writes(), 1);
}

#[test]
fn disjoint_whole_chunk_writers_take_no_lock_and_make_no_conditional_write() {
    disjoint_whole_writes(None, 4);
}

#[test]
fn disjoint_whole_shard_writers_take_no_lock_and_make_no_conditional_write() {
    let bytes = Codec::ArrayToBytes(Arc::new(BytesCodec::little()));
    let sharding = ShardingCodec::new(&[4, 4], vec![bytes]);
    disjoint_whole_writes(Some(vec![Codec::ArrayToBytes(Arc::new(sharding))]), 4);
}

/// Every warning logged in this process (nextest runs each test in its own).
mod warnings {
    use std::sync::Mutex;

    static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

    struct Capture;

    impl log::Log for Capture {
        fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
            metadata.level() <= log::Level::Warn
        }

        fn log(&self, record: &log::Record<'_>) {
            if self.enabled(record.metadata()) {
                WARNINGS.lock().unwrap().push(record.args().to_string());
            }
        }

        fn flush(&self) {}
    }

    /// Starts capturing (once per process) and returns what was captured.
    pub fn take() -> Vec<String> {
        static CAPTURE: Capture = Capture;
        if log::set_logger(&CAPTURE).is_ok() {
            log::set_max_level(log::LevelFilter::Warn);
        }
        std::mem::take(&mut *WARNINGS.lock().unwrap())
    }
}

/// Object stores: which have conditional writes, and the warning of a
/// partial write where there are none (GCS here).
#[cfg(feature = "remote")]
#[test]
fn a_partial_write_where_there_are_no_conditional_writes_warns_once_naming_the_store() {
    use object_store::memory::InMemory;
    use zarrkit::store::{Backend, RemoteStore};
    warnings::take();
    let geometry = Geometry {
        edge: 16,
        shard: 8,
        inner: 4,
    };
    for (backend, conditional) in [
        (Backend::Gcs, false),
        (Backend::S3, true),
        (Backend::Azure, true),
        (Backend::Other, true),
    ] {
        let store: Arc<dyn Store> = Arc::new(
            RemoteStore::new(Arc::new(InMemory::new()), "", backend)
                .unwrap()
                .with_location(&format!("memory-{backend:?}")),
        );
        assert_eq!(
            store.capabilities().conditional_write,
            conditional,
            "{backend:?}"
        );
        geometry.create(&store);
        let array = Array::open(Arc::clone(&store), "a").unwrap();
        geometry.write_all(&array, 0, 1);
        assert_eq!(geometry.lost(&array), 0);
        let warned = warnings::take();
        if conditional {
            assert_eq!(warned, Vec::<String>::new(), "{backend:?}");
        } else {
            assert_eq!(warned.len(), 1, "{backend:?}: once per store: {warned:?}");
            assert!(
                warned[0].contains(store.name())
                    && warned[0].contains("no conditional writes")
                    && warned[0].contains("this process only"),
                "{}",
                warned[0]
            );
        }
    }
    // HTTP is read-only: no partial write to warn about.
    let http = RemoteStore::new(Arc::new(InMemory::new()), "", Backend::Http).unwrap();
    assert!(!http.capabilities().write && !http.capabilities().conditional_write);
}

/// The S3 test servers honour `If-Match` on `PUT`: a conditional write
/// over a replaced value is refused (the many-writers test relies on it on
/// SeaweedFS), and one over the current value goes through.
#[cfg(feature = "s3")]
#[test]
fn conditional_writes_on_seaweedfs_and_s3s_fs_refuse_a_stale_version() {
    use zarrkit::store::StoreKey;
    for var in ["ZARRKIT_S3_ENDPOINT", "ZARRKIT_S3S_ENDPOINT"] {
        let Some((store, _)) = crate::remote::s3_store(var, "if-match") else {
            return;
        };
        assert!(store.capabilities().conditional_write, "{var}");
        let key = StoreKey::new("k").unwrap();
        store.set(&key, b"one").unwrap();
        let snapshot = store.snapshot(&key).unwrap();
        assert_eq!(snapshot.read(&[None]).unwrap().unwrap(), [b"one".to_vec()]);
        let stale = snapshot.version().unwrap();
        store.set(&key, b"two").unwrap();
        // The snapshot cannot read the replaced version: `Changed`.
        assert!(
            matches!(
                snapshot.read(&[None]),
                Err(zarrkit::store::StoreError::Changed { .. })
            ),
            "{var}"
        );
        assert!(
            !store.set_if_unchanged(&key, Some(b"lost"), &stale).unwrap(),
            "{var}"
        );
        assert_eq!(store.get(&key, None).unwrap().unwrap(), b"two");
        let current = store.snapshot(&key).unwrap();
        current.read(&[None]).unwrap();
        let version = current.version().unwrap();
        assert!(
            store
                .set_if_unchanged(&key, Some(b"three"), &version)
                .unwrap(),
            "{var}"
        );
        assert_eq!(store.get(&key, None).unwrap().unwrap(), b"three");
        // A conditional erase: of a stale version refused, of the current done.
        assert!(
            !store.set_if_unchanged(&key, None, &version).unwrap(),
            "{var}"
        );
        let last = store.snapshot(&key).unwrap();
        last.read(&[None]).unwrap();
        assert!(
            store
                .set_if_unchanged(&key, None, &last.version().unwrap())
                .unwrap(),
            "{var}"
        );
        assert_eq!(store.get(&key, None).unwrap(), None);
    }
}
