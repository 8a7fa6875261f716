//! Reads of a filesystem store through the batched data path: the store
//! reads a batch's files on I/O threads of its own, and a read from
//! outside the rayon pool fetches the next batch while it decodes this
//! one (or, for uncompressed chunks and large compressed ones that wait
//! on the disk, decodes each as soon as it is read). Every value lands
//! where it belongs whatever the chunk layout and
//! region, missing chunks read as the fill value, errors name the chunk,
//! and reads from inside a rayon task (batches one after another) agree.

use std::sync::{Arc, Mutex};
use zarrkit::metadata::{DataType, ExtensionObject};
use zarrkit::store::{
    ByteRange, FilesystemStore, ListDir, ReadRequest, Store, StoreCapabilities, StoreError,
    StoreKey, StorePrefix,
};
use zarrkit::{Array, Region};

/// The chains read: the two DEFLATE codecs (libdeflate whole-buffer
/// decoding into the output) and `bytes` alone.
const CHAINS: [&str; 3] = [
    r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.zlib","configuration":{"level":1}}]"#,
    r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"gzip","configuration":{"level":6}}]"#,
    r#"[{"name":"bytes","configuration":{"endian":"little"}}]"#,
];

fn codecs(json: &str) -> Vec<ExtensionObject> {
    let list: Vec<serde_json::Value> = serde_json::from_str(json).unwrap();
    list.into_iter()
        .map(|codec| {
            let name = codec["name"].as_str().unwrap();
            match codec.get("configuration") {
                Some(serde_json::Value::Object(config)) => {
                    ExtensionObject::with_configuration(name, config.clone())
                }
                _ => ExtensionObject::new(name),
            }
        })
        .collect()
}

/// Values that compress but never repeat for long: an index hash in the
/// low bits, a smooth field in the high ones.
fn values(n: usize) -> Vec<u16> {
    (0..n as u64)
        .map(|i| {
            let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60;
            ((i / 3) as u16).wrapping_mul(16).wrapping_add(h as u16)
        })
        .collect()
}

/// The C-order elements of `region` in an array of `shape` holding `data`.
fn cut(data: &[u16], shape: &[u64; 3], region: &Region) -> Vec<u16> {
    let (s, n) = (region.start(), region.shape());
    let mut out = Vec::new();
    for z in s[0]..s[0] + n[0] {
        for y in s[1]..s[1] + n[1] {
            let row = ((z * shape[1] + y) * shape[2]) as usize;
            out.extend_from_slice(&data[row + s[2] as usize..row + (s[2] + n[2]) as usize]);
        }
    }
    out
}

/// Regions from a fixed seed, most straddling chunk boundaries.
fn regions(shape: &[u64; 3], count: usize) -> Vec<Region> {
    let mut state = 0x5EED_u64;
    let mut next = |bound: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        (state >> 33) % bound
    };
    (0..count)
        .map(|_| {
            let start: Vec<u64> = shape.iter().map(|&n| next(n)).collect();
            let len = start
                .iter()
                .zip(shape)
                .map(|(&s, &n)| 1 + next(n - s))
                .collect();
            Region::new(start, len)
        })
        .collect()
}

#[test]
fn filesystem_reads_equal_the_written_values_for_every_layout_and_region() {
    let dir = tempfile::tempdir().unwrap();
    let shape = [30u64, 21, 17];
    let whole = Region::whole(&shape);
    let data = values(shape.iter().product::<u64>() as usize);
    let in_rayon = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for (c, chain) in CHAINS.iter().enumerate() {
        for (l, chunks) in [[4u64, 4, 4], [8, 21, 17], [30, 3, 5], [16, 16, 16]]
            .iter()
            .enumerate()
        {
            let store =
                Arc::new(FilesystemStore::new(dir.path().join(format!("{c}-{l}"))).unwrap());
            let array = Array::builder(&shape, DataType::UInt16, chunks)
                .fill_value(9u16)
                .codecs_metadata(codecs(chain))
                .create(store, "/a")
                .unwrap();
            array.write_region(&whole, &data).unwrap();
            // Chunks not stored: the first, one in the middle and the last
            // (an edge chunk in most layouts).
            let grid: Vec<u64> = shape
                .iter()
                .zip(chunks)
                .map(|(n, c)| n.div_ceil(*c))
                .collect();
            let mut expected = data.clone();
            for coords in [
                [0u64, 0, 0],
                [grid[0] / 2, grid[1] / 2, grid[2] / 2],
                [grid[0] - 1, grid[1] - 1, grid[2] - 1],
            ] {
                array.erase_chunk(&coords).unwrap();
                let start: Vec<u64> = coords.iter().zip(chunks).map(|(c, n)| c * n).collect();
                let len = start
                    .iter()
                    .zip(chunks)
                    .zip(&shape)
                    .map(|((&s, &n), &end)| n.min(end - s))
                    .collect();
                let erased = Region::new(start, len);
                for z in 0..erased.shape()[0] {
                    for y in 0..erased.shape()[1] {
                        for x in 0..erased.shape()[2] {
                            let (z, y, x) = (
                                erased.start()[0] + z,
                                erased.start()[1] + y,
                                erased.start()[2] + x,
                            );
                            expected[((z * shape[1] + y) * shape[2] + x) as usize] = 9;
                        }
                    }
                }
            }
            let what = format!("chain {c}, chunks {chunks:?}");
            let got: Vec<u16> = array.read_region(&whole).unwrap();
            assert!(got == expected, "{what}: whole read differs");
            let got: Vec<u16> = in_rayon.install(|| array.read_region(&whole)).unwrap();
            assert!(
                got == expected,
                "{what}: whole read in a rayon task differs"
            );
            for region in regions(&shape, 12) {
                let got: Vec<u16> = array.read_region(&region).unwrap();
                assert!(
                    got == cut(&expected, &shape, &region),
                    "{what}: region {region} differs"
                );
            }
        }
    }
}

#[test]
fn a_bad_chunk_late_in_a_read_fetched_ahead_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(FilesystemStore::new(dir.path()).unwrap());
    let shape = [32u64, 32, 32];
    let array = Array::builder(&shape, DataType::UInt16, &[4, 8, 8])
        .codecs_metadata(codecs(CHAINS[0]))
        .create(store.clone(), "/a")
        .unwrap();
    let data = values(32 * 32 * 32);
    array.write_region(&Region::whole(&shape), &data).unwrap();
    let key = |k: &str| StoreKey::new(k).unwrap();
    // Garbage, then a truncated stream, in the last batches of 128 chunks.
    store.set(&key("a/c/7/2/3"), b"not zlib").unwrap();
    let err = array
        .read_region::<u16>(&Region::whole(&shape))
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot decode chunk `a/c/7/2/3`"),
        "{err}"
    );
    array.write_region(&Region::whole(&shape), &data).unwrap();
    let good = store.get(&key("a/c/6/3/3"), None).unwrap().unwrap();
    store
        .set(&key("a/c/6/3/3"), &good[..good.len() / 2])
        .unwrap();
    let err = array
        .read_region::<u16>(&Region::whole(&shape))
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot decode chunk `a/c/6/3/3`"),
        "{err}"
    );
}

/// A filesystem store that records the batches of whole values it is
/// asked for and the threads that ask, the requests for ranges of values,
/// and the streamed reads (their request counts); it answers `cold` as
/// every value's size when the disk is waited for.
#[derive(Debug)]
struct Recording {
    inner: FilesystemStore,
    batches: Mutex<Vec<(usize, std::thread::ThreadId)>>,
    ranged: Mutex<usize>,
    streamed: Mutex<Vec<usize>>,
    cold: Option<u64>,
}

impl Recording {
    fn new(root: &std::path::Path, cold: Option<u64>) -> Self {
        Recording {
            inner: FilesystemStore::new(root).unwrap(),
            batches: Mutex::new(Vec::new()),
            ranged: Mutex::new(0),
            streamed: Mutex::new(Vec::new()),
            cold,
        }
    }
}

impl Store for Recording {
    fn name(&self) -> &'static str {
        "recording store"
    }
    fn capabilities(&self) -> StoreCapabilities {
        self.inner.capabilities()
    }
    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get(key, range)
    }
    fn get_partial_values(
        &self,
        requests: &[ReadRequest],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let ranged = requests.iter().filter(|(_, range)| range.is_some()).count();
        *self.ranged.lock().unwrap() += ranged;
        if ranged < requests.len() {
            self.batches
                .lock()
                .unwrap()
                .push((requests.len() - ranged, std::thread::current().id()));
        }
        self.inner.get_partial_values(requests)
    }
    fn get_values_each(
        &self,
        requests: &[ReadRequest],
        batch: usize,
        each: &(dyn Fn(usize, Result<Option<Vec<u8>>, StoreError>) -> bool + Sync),
    ) {
        self.streamed.lock().unwrap().push(requests.len());
        self.inner.get_values_each(requests, batch, each);
    }
    fn cold_size(&self, _key: &StoreKey) -> Option<u64> {
        self.cold
    }
    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
        self.inner.set(key, value)
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

#[test]
fn a_large_local_read_is_fetched_ahead_in_bounded_batches() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Recording::new(dir.path(), None));
    let shape = [64u64, 64, 64];
    // 512 chunks of 8³.
    let array = Array::builder(&shape, DataType::UInt16, &[8, 8, 8])
        .codecs_metadata(codecs(CHAINS[0]))
        .create(store.clone(), "/a")
        .unwrap();
    let data = values(64 * 64 * 64);
    array.write_region(&Region::whole(&shape), &data).unwrap();
    store.batches.lock().unwrap().clear();
    let got: Vec<u16> = array.read_region(&Region::whole(&shape)).unwrap();
    assert!(got == data, "the read differs");
    let batches = store.batches.lock().unwrap().clone();
    // Every chunk fetched once, in batches that bound the memory in
    // flight (at most 32 chunks a thread, and at least 32 chunks a batch
    // by the engine's rule, so at most 64 here with up to 2 threads, and
    // more batches than one) ...
    assert_eq!(batches.iter().map(|(n, _)| n).sum::<usize>(), 512);
    let most = 32.max(16 * rayon::current_num_threads());
    assert!(batches.len() >= 2, "{batches:?}");
    assert!(batches.iter().all(|&(n, _)| n <= most), "{batches:?}");
    // ... all from one thread that is not the reader's: fetched ahead.
    let me = std::thread::current().id();
    assert!(
        batches
            .iter()
            .all(|&(_, id)| id == batches[0].1 && id != me),
        "{batches:?}"
    );
}

/// A whole read of compressed chunks is decoded in batches while the page
/// cache holds them, and one by one as they arrive when large ones wait on
/// the disk (the store's `cold_size`); small cold ones stay in batches.
/// Whole shards are read in ranges instead (the index, then the inner
/// chunks slab by slab). Every way, every value lands in place, for chunks whose elements are
/// contiguous in the result (decoded straight into it) and chunks that are
/// not (decoded into a buffer, then copied), through every kind of chain,
/// and a missing chunk reads as the fill value.
#[test]
fn a_whole_read_streams_compressed_chunks_only_when_large_ones_wait_on_the_disk() {
    let shape = [64u64, 64, 64];
    let bytes = r#"{"name":"bytes","configuration":{"endian":"little"}}"#;
    let zstd = r#"{"name":"zstd","configuration":{"level":3,"checksum":false}}"#;
    let blosc = r#"{"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":2,"blocksize":0}}"#;
    // 64 chunks either way: cubes of 16 (not contiguous in the result)
    // and planes of 1 × 64 × 64 (contiguous).
    for chunk in [[16u64, 16, 16], [1, 64, 64]] {
        let inner = [chunk[0].div_ceil(2), chunk[1] / 2, chunk[2] / 2];
        let sharded = format!(
            r#"[{{"name":"sharding_indexed","configuration":{{"chunk_shape":{inner:?},"codecs":[{bytes},{zstd}],"index_codecs":[{bytes},{{"name":"crc32c"}}],"index_location":"end"}}}}]"#
        );
        let chains = [
            CHAINS[0].to_string(),
            format!("[{bytes},{zstd}]"),
            format!("[{bytes},{blosc}]"),
            sharded,
        ];
        for chain in &chains {
            // (the size the store answers for waiting values, streamed?)
            for (cold, streamed) in [(None, false), (Some(1 << 10), false), (Some(1 << 20), true)] {
                let case = format!("{chunk:?} {chain} {cold:?}");
                let dir = tempfile::tempdir().unwrap();
                let store = Arc::new(Recording::new(dir.path(), cold));
                let array = Array::builder(&shape, DataType::UInt16, &chunk)
                    .codecs_metadata(codecs(chain))
                    .create(store.clone(), "/a")
                    .unwrap();
                let mut data = values(64 * 64 * 64);
                array.write_region(&Region::whole(&shape), &data).unwrap();
                // Chunk (1, 0, 0) erased: its box reads as the fill value, 0.
                store.erase(&StoreKey::new("a/c/1/0/0").unwrap()).unwrap();
                for z in chunk[0]..2 * chunk[0] {
                    for y in 0..chunk[1] {
                        let row = ((z * 64 + y) * 64) as usize;
                        data[row..row + chunk[2] as usize].fill(0);
                    }
                }
                store.batches.lock().unwrap().clear();
                *store.ranged.lock().unwrap() = 0;
                let got: Vec<u16> = array.read_region(&Region::whole(&shape)).unwrap();
                assert!(got == data, "the read differs: {case}");
                let batches = store.batches.lock().unwrap().clone();
                let streams = store.streamed.lock().unwrap().clone();
                if chain.contains("sharding_indexed") {
                    // Whole shards are read in ranges, cold or not: each
                    // stored one its index, then its inner chunks.
                    assert!(streams.is_empty(), "{case}: {streams:?}");
                    assert!(batches.is_empty(), "{case}: {batches:?}");
                    // 63 shards' indexes and inner chunks, and the index
                    // read of the erased one, which finds nothing.
                    let least = 63 * 2 + 1;
                    assert!(*store.ranged.lock().unwrap() >= least, "{case}");
                } else if streamed {
                    assert_eq!(streams, [64], "{case}");
                    assert!(batches.is_empty(), "{case}: {batches:?}");
                } else {
                    assert!(streams.is_empty(), "{case}: {streams:?}");
                    assert_eq!(batches.iter().map(|(n, _)| n).sum::<usize>(), 64);
                    assert!(batches.len() >= 2, "{case}: {batches:?}");
                }
                // A region inside one chunk reads it alone either way.
                store.streamed.lock().unwrap().clear();
                let region = Region::new(vec![2, 16, 16], vec![1, 16, 16]);
                let got: Vec<u16> = array.read_region(&region).unwrap();
                assert!(got == cut(&data, &shape, &region), "{case}");
                assert!(store.streamed.lock().unwrap().is_empty(), "{case}");
            }
        }
    }
}
