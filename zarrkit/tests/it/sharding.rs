//! Sharded arrays: round trips, edge shards, missing inner chunks, partial
//! reads and writes that touch only what they need, nested sharding,
//! corrupt shards, and concurrent writes to one shard.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use zarrkit::codec::sharding::{IndexLocation, ShardingCodec};
use zarrkit::codec::{Codec, bytes::BytesCodec, zstd::ZstdCodec};
use zarrkit::metadata::DataType;
use zarrkit::store::{
    ByteRange, ListDir, MemoryStore, ReadRequest, Store, StoreCapabilities, StoreError, StoreKey,
    StorePrefix,
};
use zarrkit::{Array, Error, Region};

/// A store that counts chunk read requests, the bytes they return, and sets.
#[derive(Debug, Default)]
pub struct CountingStore {
    inner: MemoryStore,
    pub requests: AtomicU64,
    pub bytes: AtomicU64,
    pub batches: AtomicU64,
    pub sets: AtomicU64,
}

impl CountingStore {
    pub fn reset(&self) {
        for counter in [&self.requests, &self.bytes, &self.batches, &self.sets] {
            counter.store(0, Ordering::SeqCst);
        }
    }

    /// (batches, requests, bytes) read since the last reset.
    pub fn reads(&self) -> (u64, u64, u64) {
        (
            self.batches.load(Ordering::SeqCst),
            self.requests.load(Ordering::SeqCst),
            self.bytes.load(Ordering::SeqCst),
        )
    }

    fn count(&self, key: &StoreKey, value: &Option<Vec<u8>>) {
        if !key.as_str().ends_with("zarr.json") {
            self.requests.fetch_add(1, Ordering::SeqCst);
            let n = value.as_ref().map_or(0, Vec::len) as u64;
            self.bytes.fetch_add(n, Ordering::SeqCst);
        }
    }
}

impl Store for CountingStore {
    fn name(&self) -> &'static str {
        "counting store"
    }
    fn capabilities(&self) -> StoreCapabilities {
        self.inner.capabilities()
    }
    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        let value = self.inner.get(key, range)?;
        if !key.as_str().ends_with("zarr.json") {
            self.batches.fetch_add(1, Ordering::SeqCst);
        }
        self.count(key, &value);
        Ok(value)
    }
    fn get_partial_values(
        &self,
        requests: &[ReadRequest],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.batches.fetch_add(1, Ordering::SeqCst);
        requests
            .iter()
            .map(|(k, r)| {
                let value = self.inner.get(k, *r)?;
                self.count(k, &value);
                Ok(value)
            })
            .collect()
    }
    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
        self.sets.fetch_add(1, Ordering::SeqCst);
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

fn zstd_sharding(inner: &[u64]) -> Codec {
    let zstd = Codec::BytesToBytes(Arc::new(ZstdCodec::new(0, false).unwrap()));
    let bytes = Codec::ArrayToBytes(Arc::new(BytesCodec::little()));
    Codec::ArrayToBytes(Arc::new(ShardingCodec::new(inner, vec![bytes, zstd])))
}

fn bytes_sharding(inner: &[u64], location: IndexLocation) -> Codec {
    let bytes = Codec::ArrayToBytes(Arc::new(BytesCodec::little()));
    Codec::ArrayToBytes(Arc::new(
        ShardingCodec::new(inner, vec![bytes]).with_index_location(location),
    ))
}

/// Values that do not compress, so byte counts reflect element counts.
fn noise(n: usize, seed: u64) -> Vec<u16> {
    (0..n as u64)
        .map(|i| {
            let mut x = (i ^ seed.rotate_left(17)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            x ^= x >> 29;
            (x.wrapping_mul(0xbf58_476d_1ce4_e5b9) >> 40) as u16
        })
        .collect()
}

/// Reads every element of `array` (2-d) one at a time and compares with `expected`.
fn check_elementwise(array: &Array, expected: &[u16]) {
    let shape = array.shape().to_vec();
    for i in 0..shape[0] {
        for j in 0..shape[1] {
            let got: Vec<u16> = array
                .read_region(&Region::new(vec![i, j], vec![1, 1]))
                .unwrap();
            assert_eq!(
                got[0],
                expected[(i * shape[1] + j) as usize],
                "element ({i}, {j})"
            );
        }
    }
}

#[test]
fn sharded_arrays_round_trip_with_edge_shards_and_missing_inner_chunks() {
    for location in [IndexLocation::Start, IndexLocation::End] {
        let store = Arc::new(MemoryStore::new());
        let array = Array::builder(&[10, 13], DataType::UInt16, &[4, 8])
            .fill_value(5u16)
            .codecs(vec![bytes_sharding(&[2, 4], location)])
            .create(store.clone(), "/a")
            .unwrap();
        // Only a 3x6 block: most inner chunks stay missing.
        let block = noise(18, 1);
        array
            .write_region(&Region::new(vec![3, 6], vec![3, 6]), &block)
            .unwrap();
        let mut expected = vec![5u16; 130];
        for i in 0..3 {
            for j in 0..6 {
                expected[(3 + i) * 13 + 6 + j] = block[i * 6 + j];
            }
        }
        let all: Vec<u16> = array.read_region(&Region::whole(&[10, 13])).unwrap();
        assert_eq!(all, expected);
        check_elementwise(&array, &expected);
        // Whole-array writes reach the edge shards too.
        let data = noise(130, 2);
        array
            .write_region(&Region::whole(&[10, 13]), &data)
            .unwrap();
        check_elementwise(&array, &data);
        let reopened = Array::open(store, "/a").unwrap();
        assert_eq!(
            reopened
                .read_region::<u16>(&Region::whole(&[10, 13]))
                .unwrap(),
            data
        );
    }
}

#[test]
fn region_reads_of_compressed_shards_on_disk_place_every_inner_chunk() {
    // Regions of one to nine 4×4 inner chunks, some of them missing: the
    // inner chunks a region needs are read as ranges of the shard file,
    // adjacent ones coalesced into one range (each then copied out of it)
    // and lone ones moved out whole, read through a filesystem store's
    // snapshot of the shard file.
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(zarrkit::store::FilesystemStore::new(dir.path()).unwrap());
    let array = Array::builder(&[16, 24], DataType::UInt16, &[16, 24])
        .fill_value(9u16)
        .codecs(vec![zstd_sharding(&[4, 4])])
        .create(store, "/a")
        .unwrap();
    let data = noise(16 * 24, 7);
    array
        .write_region(&Region::whole(&[16, 24]), &data)
        .unwrap();
    // The inner chunk at (1, 2) and (2, 2) back to the fill value: not stored.
    let fill = vec![9u16; 4 * 4];
    for start in [[4, 8], [8, 8]] {
        array
            .write_region(&Region::new(start.to_vec(), vec![4, 4]), &fill)
            .unwrap();
    }
    let expected = |i: u64, j: u64| {
        if (4..12).contains(&i) && (8..12).contains(&j) {
            9
        } else {
            data[(i * 24 + j) as usize]
        }
    };
    for (start, shape) in [
        ([1, 1], [2, 2]),
        ([1, 1], [3, 9]),
        ([3, 6], [6, 7]),
        ([0, 0], [16, 24]),
        ([5, 9], [6, 13]),
        ([12, 20], [4, 4]),
        ([2, 3], [11, 5]),
    ] {
        let region = Region::new(start.to_vec(), shape.to_vec());
        let got: Vec<u16> = array.read_region(&region).unwrap();
        let want: Vec<u16> = (start[0]..start[0] + shape[0])
            .flat_map(|i| (start[1]..start[1] + shape[1]).map(move |j| (i, j)))
            .map(|(i, j)| expected(i, j))
            .collect();
        assert_eq!(got, want, "region at {start:?} of {shape:?}");
    }
}

#[test]
fn whole_shards_inside_a_larger_region_encode_straight_from_it() {
    // Shards 4x8 in a 12x16 array; the region rows 2..11 covers shard row
    // 1 (rows 4..8) entirely, at a non-zero offset within the region, and
    // shard rows 0 and 2 in part. Shard (1, 1) is all fill: not stored.
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[12, 16], DataType::UInt16, &[4, 8])
        .fill_value(5u16)
        .codecs(vec![zstd_sharding(&[2, 4])])
        .create(store.clone(), "/w")
        .unwrap();
    let mut data = noise(9 * 16, 3);
    for r in 2..6 {
        for c in 8..16 {
            data[r * 16 + c] = 5;
        }
    }
    array
        .write_region(&Region::new(vec![2, 0], vec![9, 16]), &data)
        .unwrap();
    let mut expected = vec![5u16; 12 * 16];
    expected[2 * 16..11 * 16].copy_from_slice(&data);
    check_elementwise(&array, &expected);
    assert!(
        store
            .get(&array.chunk_key(&[1, 0]).unwrap(), None)
            .unwrap()
            .is_some()
    );
    assert!(
        store
            .get(&array.chunk_key(&[1, 1]).unwrap(), None)
            .unwrap()
            .is_none()
    );
}

#[test]
fn whole_shards_read_into_a_larger_region_place_each_inner_chunk() {
    // Whole shards that are not contiguous in the region decode each inner
    // chunk straight into its place there: with many slabs of inner chunks
    // (each slab in turn on one thread, contiguous inner chunks decoded in
    // place) and with one (its inner chunks decoded in parallel). Inner
    // chunks equal to the fill value and one whole shard are missing.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let shape = [16u64, 24, 20];
    for (shard, inner) in [
        ([16u64, 8, 10], [1u64, 4, 5]),
        ([16, 8, 20], [1, 2, 20]),
        ([8, 12, 10], [8, 4, 5]),
    ] {
        let store = Arc::new(MemoryStore::new());
        let array = Array::builder(&shape, DataType::UInt16, &shard)
            .fill_value(7u16)
            .codecs(vec![zstd_sharding(&inner)])
            .create(store.clone(), "/p")
            .unwrap();
        let n = shape.iter().product::<u64>() as usize;
        let mut expected = noise(n, 11);
        // Every third inner chunk (by its first element) is all fill.
        for (i, v) in expected.iter_mut().enumerate() {
            let c = [
                i as u64 / (shape[1] * shape[2]),
                i as u64 / shape[2] % shape[1],
                i as u64 % shape[2],
            ];
            let inner_id: u64 = (0..3).map(|d| c[d] / inner[d]).sum();
            if inner_id.is_multiple_of(3) {
                *v = 7;
            }
        }
        array
            .write_region(&Region::whole(&shape), &expected)
            .unwrap();
        // The last shard is erased: all fill.
        let last: Vec<u64> = (0..3).map(|d| shape[d] / shard[d] - 1).collect();
        store.erase(&array.chunk_key(&last).unwrap()).unwrap();
        for (i, v) in expected.iter_mut().enumerate() {
            let c = [
                i as u64 / (shape[1] * shape[2]),
                i as u64 / shape[2] % shape[1],
                i as u64 % shape[2],
            ];
            if (0..3).all(|d| c[d] / shard[d] == last[d]) {
                *v = 7;
            }
        }
        let whole: Vec<u16> = pool
            .install(|| array.read_region(&Region::whole(&shape)))
            .unwrap();
        assert!(
            whole == expected,
            "shards {shard:?} of {inner:?}: whole read"
        );
        // A region holding whole shards at an offset within it.
        let region = Region::new(vec![0, 8, 0], vec![16, 16, 20]);
        let part: Vec<u16> = pool.install(|| array.read_region(&region)).unwrap();
        let want: Vec<u16> = (0..16u64)
            .flat_map(|i| (8..24u64).flat_map(move |j| (0..20u64).map(move |k| (i, j, k))))
            .map(|(i, j, k)| expected[(i * 24 * 20 + j * 20 + k) as usize])
            .collect();
        assert!(part == want, "shards {shard:?} of {inner:?}: region");
    }
}

#[test]
fn inner_chunks_equal_to_the_fill_value_are_not_stored() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[8], DataType::UInt16, &[8])
        .codecs(vec![bytes_sharding(&[2], IndexLocation::End)])
        .create(store.clone(), "/f")
        .unwrap();
    array
        .write_region(&Region::whole(&[8]), &[0u16, 0, 1, 2, 0, 0, 0, 3])
        .unwrap();
    let shard = store
        .get(&array.chunk_key(&[0]).unwrap(), None)
        .unwrap()
        .unwrap();
    // Two inner chunks of 4 bytes, and an index of 4 x 16 bytes with a crc32c.
    assert_eq!(shard.len(), 8 + 64 + 4);
    let index = &shard[8..];
    assert_eq!(&index[..16], &[0xff; 16]);
    assert_eq!(u64::from_le_bytes(index[16..24].try_into().unwrap()), 0);
    assert_eq!(u64::from_le_bytes(index[24..32].try_into().unwrap()), 4);
    // Writing the fill value everywhere erases the shard.
    array
        .write_region(&Region::whole(&[8]), &[0u16; 8])
        .unwrap();
    assert!(
        store
            .get(&array.chunk_key(&[0]).unwrap(), None)
            .unwrap()
            .is_none()
    );
}

#[test]
fn reading_a_small_region_reads_bytes_proportional_to_the_region_not_the_shard() {
    for location in [IndexLocation::End, IndexLocation::Start] {
        let store = Arc::new(CountingStore::default());
        // One 256x256 shard of 16x16 inner chunks (256 of them).
        let array = Array::builder(&[256, 256], DataType::UInt16, &[256, 256])
            .codecs(vec![bytes_sharding(&[16, 16], location)])
            .create(store.clone(), "/p")
            .unwrap();
        let data = noise(256 * 256, 3);
        array
            .write_region(&Region::whole(&[256, 256]), &data)
            .unwrap();
        let shard_len = store
            .get(&array.chunk_key(&[0, 0]).unwrap(), None)
            .unwrap()
            .unwrap()
            .len() as u64;
        store.reset();
        // A 4x4 region inside one inner chunk.
        let got: Vec<u16> = array
            .read_region(&Region::new(vec![33, 70], vec![4, 4]))
            .unwrap();
        for i in 0..4 {
            for j in 0..4 {
                assert_eq!(got[i * 4 + j], data[(33 + i) * 256 + 70 + j]);
            }
        }
        let index_size = 256 * 16 + 4;
        let (batches, requests, bytes) = store.reads();
        assert_eq!((batches, requests), (2, 2), "{location:?}");
        assert_eq!(bytes, index_size + 16 * 16 * 2, "{location:?}");
        assert!(bytes * 20 < shard_len);
        // A 20x20 region straddling four inner chunks: one more batch, and
        // the four inner chunks (0, 1, 16 and 17 in the shard, 512 bytes
        // each) are read as one range, the 14 between them included: their
        // gap is under `COALESCE_GAP`.
        store.reset();
        let region = Region::new(vec![10, 10], vec![20, 20]);
        let got: Vec<u16> = array.read_region(&region).unwrap();
        assert_eq!(got[0], data[10 * 256 + 10]);
        assert_eq!(got[399], data[29 * 256 + 29]);
        let (batches, requests, bytes) = store.reads();
        assert_eq!(batches, 2);
        assert_eq!(requests, 2, "{location:?}");
        assert_eq!(bytes, index_size + 18 * 16 * 16 * 2, "{location:?}");
        assert!(bytes * 10 < shard_len);
    }
}

#[test]
fn uncompressed_chunks_serve_ranged_reads_of_the_region() {
    let store = Arc::new(CountingStore::default());
    let array = Array::builder(&[512, 512], DataType::UInt16, &[512, 512])
        .codecs(vec![Codec::ArrayToBytes(Arc::new(BytesCodec::little()))])
        .create(store.clone(), "/raw")
        .unwrap();
    let data = noise(512 * 512, 4);
    array
        .write_region(&Region::whole(&[512, 512]), &data)
        .unwrap();
    store.reset();
    let got: Vec<u16> = array
        .read_region(&Region::new(vec![100, 200], vec![8, 8]))
        .unwrap();
    assert_eq!(got[9], data[101 * 256 * 2 + 201]);
    let (batches, _, bytes) = store.reads();
    assert_eq!(batches, 1);
    // Rows are 1 KiB apart, so the 8 runs of 16 bytes coalesce into one
    // range from the first to the last: 7 rows and one run.
    assert_eq!(bytes, 7 * 1024 + 16);
}

#[test]
fn writing_part_of_a_shard_reads_it_once_and_stores_it_once() {
    let store = Arc::new(CountingStore::default());
    let array = Array::builder(&[64, 64], DataType::UInt16, &[64, 64])
        .codecs(vec![zstd_sharding(&[8, 8])])
        .create(store.clone(), "/w")
        .unwrap();
    // Creating probes for documents of other formats; count from here.
    store.reset();
    let data = noise(64 * 64, 5);
    array
        .write_region(&Region::whole(&[64, 64]), &data)
        .unwrap();
    // A whole-shard write never reads.
    assert_eq!(store.reads(), (0, 0, 0));
    store.reset();
    array
        .write_region(&Region::new(vec![9, 9], vec![2, 3]), &[1u16, 2, 3, 4, 5, 6])
        .unwrap();
    let (batches, _, _) = store.reads();
    // The index, then one batch of the inner chunks it keeps or updates.
    assert_eq!(batches, 2);
    assert_eq!(store.sets.load(Ordering::SeqCst), 1);
    let mut expected = data;
    for (k, (i, j)) in [(9, 9), (9, 10), (9, 11), (10, 9), (10, 10), (10, 11)]
        .into_iter()
        .enumerate()
    {
        expected[i * 64 + j] = k as u16 + 1;
    }
    assert_eq!(
        array.read_region::<u16>(&Region::whole(&[64, 64])).unwrap(),
        expected
    );
}

#[test]
fn nested_sharding_reads_and_writes_through_the_inner_chain() {
    let store = Arc::new(MemoryStore::new());
    let inner = zstd_sharding(&[2, 2]);
    let outer = Codec::ArrayToBytes(Arc::new(ShardingCodec::new(&[4, 4], vec![inner])));
    let array = Array::builder(&[12, 12], DataType::UInt16, &[8, 8])
        .codecs(vec![outer])
        .create(store.clone(), "/n")
        .unwrap();
    let data = noise(144, 6);
    array
        .write_region(&Region::whole(&[12, 12]), &data)
        .unwrap();
    array
        .write_region(&Region::new(vec![5, 3], vec![1, 2]), &[7u16, 8])
        .unwrap();
    let mut expected = data;
    expected[5 * 12 + 3] = 7;
    expected[5 * 12 + 4] = 8;
    check_elementwise(&array, &expected);
    let reopened = Array::open(store, "/n").unwrap();
    let codecs = serde_json::to_string(&reopened.metadata().codecs[0].configuration).unwrap();
    assert!(codecs.contains("sharding_indexed"), "{codecs}");
}

#[test]
fn corrupt_shards_are_errors_naming_the_chunk() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[8, 8], DataType::UInt16, &[8, 8])
        .codecs(vec![zstd_sharding(&[4, 4])])
        .create(store.clone(), "/c")
        .unwrap();
    array
        .write_region(&Region::whole(&[8, 8]), &noise(64, 7))
        .unwrap();
    let key = array.chunk_key(&[0, 0]).unwrap();
    let mut shard = store.get(&key, None).unwrap().unwrap();
    let n = shard.len();
    // Flip an index byte: the crc32c catches it.
    shard[n - 10] ^= 0x40;
    store.set(&key, &shard).unwrap();
    for region in [Region::whole(&[8, 8]), Region::new(vec![1, 1], vec![2, 2])] {
        let err = array.read_region::<u16>(&region).unwrap_err();
        assert!(matches!(err, Error::Decode { .. }), "{err}");
        assert!(err.to_string().contains("`c/c/0/0`"), "{err}");
    }
    // A truncated shard.
    store.set(&key, &[1, 2, 3]).unwrap();
    assert!(array.read_region::<u16>(&Region::whole(&[8, 8])).is_err());
    assert!(
        array
            .read_region::<u16>(&Region::new(vec![0, 0], vec![1, 1]))
            .is_err()
    );
    assert!(
        array
            .write_region(&Region::new(vec![0, 0], vec![1, 1]), &[1u16])
            .is_err()
    );
}

#[test]
fn shard_shape_not_a_multiple_of_the_inner_chunk_shape_is_rejected() {
    let err = Array::builder(&[10], DataType::UInt16, &[6])
        .codecs(vec![bytes_sharding(&[4], IndexLocation::End)])
        .create(Arc::new(MemoryStore::new()), "/bad")
        .unwrap_err();
    let message = format!("{:?}", err);
    assert!(message.contains("sharding_indexed"), "{message}");
}

#[test]
fn metadata_is_written_canonically() {
    let store = Arc::new(MemoryStore::new());
    let document = r#"{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2],
            "codecs": ["bytes"], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]}"#;
    store
        .set(&StoreKey::new("m/zarr.json").unwrap(), document.as_bytes())
        .unwrap();
    let array = Array::open(store, "/m").unwrap();
    let codec = &array.metadata().codecs[0];
    let configuration = codec.configuration.as_ref().unwrap();
    assert_eq!(configuration["index_location"], "end");
    assert_eq!(
        configuration["codecs"],
        serde_json::json!([{"name": "bytes", "configuration": {}}])
    );
    array
        .write_region(&Region::whole(&[4]), &[1u8, 2, 3, 4])
        .unwrap();
    assert_eq!(
        array
            .read_region::<u8>(&Region::new(vec![1], vec![2]))
            .unwrap(),
        vec![2, 3]
    );
}

/// Eight threads each write their own column band, which cuts across
/// inner chunks and shares every shard with the others, 50 times over:
/// no write may be lost.
fn concurrent_writes_lose_nothing(codecs: Vec<Codec>) {
    const THREADS: u64 = 8;
    const ROUNDS: u64 = 50;
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[24, 3 + 8 * THREADS], DataType::UInt32, &[16, 32])
        .fill_value(u32::MAX)
        .codecs(codecs)
        .create(store, "/t")
        .unwrap();
    let value = |t: u64, round: u64, i: u64, j: u64| ((round * 1000 + t) << 16 | i << 8 | j) as u32;
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let array = array.clone();
            scope.spawn(move || {
                let region = Region::new(vec![0, 3 + t * 8], vec![24, 8]);
                for round in 0..ROUNDS {
                    let data: Vec<u32> = (0..24 * 8)
                        .map(|k| value(t, round, k / 8, 3 + t * 8 + k % 8))
                        .collect();
                    array.write_region(&region, &data).unwrap();
                }
            });
        }
    });
    let all: Vec<u32> = array.read_region(&Region::whole(array.shape())).unwrap();
    let width = 3 + 8 * THREADS;
    for i in 0..24 {
        for j in 0..width {
            let expected = if j < 3 {
                u32::MAX
            } else {
                value((j - 3) / 8, ROUNDS - 1, i, j)
            };
            assert_eq!(
                all[(i * width + j) as usize],
                expected,
                "element ({i}, {j})"
            );
        }
    }
}

#[test]
fn concurrent_writes_to_inner_chunks_of_one_shard_lose_nothing() {
    concurrent_writes_lose_nothing(vec![zstd_sharding(&[4, 4])]);
}

#[test]
fn concurrent_writes_to_parts_of_one_chunk_lose_nothing() {
    concurrent_writes_lose_nothing(vec![
        Codec::ArrayToBytes(Arc::new(BytesCodec::little())),
        Codec::BytesToBytes(Arc::new(ZstdCodec::new(0, false).unwrap())),
    ]);
}

/// The Python with zarr-python and tensorstore, or `None` to skip (see
/// `interop.rs`; `ZARRKIT_REQUIRE_INTEROP=1` makes a missing one fail).
fn reference_python() -> Option<std::path::PathBuf> {
    if let Some(python) = std::env::var_os("ZARRKIT_PYTHON").filter(|p| !p.is_empty()) {
        return Some(python.into());
    }
    assert!(
        std::env::var("ZARRKIT_REQUIRE_INTEROP").as_deref() != Ok("1"),
        "ZARRKIT_REQUIRE_INTEROP=1 but ZARRKIT_PYTHON is unset"
    );
    eprintln!(
        "skipping: set ZARRKIT_PYTHON to a Python with zarr 3.1 and tensorstore (scripts/test.sh does this)"
    );
    None
}

fn run_sharding_script(python: &std::path::Path, mode: &str, dir: &std::path::Path) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/generate/interop_sharding.py");
    let output = std::process::Command::new(python)
        .arg(&script)
        .arg(mode)
        .arg(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    assert!(
        output.status.success(),
        "interop_sharding.py {mode} failed: {}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Little-endian element bytes to native ones.
fn le_to_native(mut bytes: Vec<u8>, unit: usize) -> Vec<u8> {
    if cfg!(target_endian = "big") && unit > 1 {
        bytes.chunks_exact_mut(unit).for_each(<[u8]>::reverse);
    }
    bytes
}

fn hex_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn zarr_python_and_tensorstore_shards_read_here_and_ours_read_there() {
    use zarrkit::format::v3::extension_from_json;
    use zarrkit::metadata::FillValue;
    use zarrkit::store::FilesystemStore;

    let Some(python) = reference_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    run_sharding_script(&python, "write", dir.path());
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("manifest.json")).unwrap()).unwrap();
    let cases = manifest["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 7);
    let u64s = |v: &serde_json::Value| -> Vec<u64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect()
    };
    let out_store: Arc<dyn Store> =
        Arc::new(FilesystemStore::new(dir.path().join("zarrkit")).unwrap());
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let shape = u64s(&case["shape"]);
        let chunk_shape = u64s(&case["chunk_shape"]);
        let expected_le = std::fs::read(dir.path().join(format!("expected/{name}.bin"))).unwrap();
        for writer in ["zarr_python", "tensorstore"] {
            let store: Arc<dyn Store> =
                Arc::new(FilesystemStore::new(dir.path().join(writer)).unwrap());
            let array = Array::open(store, &format!("/{name}"))
                .unwrap_or_else(|e| panic!("{writer}/{name}: {e:#?}"));
            assert_eq!(array.shape(), shape.as_slice(), "{writer}/{name}");
            assert_eq!(
                array.chunk_shape(),
                chunk_shape.as_slice(),
                "{writer}/{name}"
            );
            assert_eq!(
                array.data_type().name(),
                case["data_type"].as_str().unwrap()
            );
            let size = array.data_type().size();
            let expected = le_to_native(expected_le.clone(), array.data_type().endian_unit());
            let all = array.read_region_bytes(&Region::whole(&shape)).unwrap();
            assert!(all == expected, "{writer}/{name}: whole-array read differs");
            // Element by element: every read is a partial read of a shard.
            for i in 0..shape[0] {
                for j in 0..shape[1] {
                    let one = array
                        .read_region_bytes(&Region::new(vec![i, j], vec![1, 1]))
                        .unwrap_or_else(|e| panic!("{writer}/{name} ({i}, {j}): {e:#?}"));
                    let at = ((i * shape[1] + j) as usize) * size;
                    assert_eq!(one, &expected[at..at + size], "{writer}/{name} ({i}, {j})");
                }
            }
        }
        // zarrkit writes the same array: the same codecs, fill value and regions.
        let codecs = case["codecs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| extension_from_json(c, "codecs").unwrap())
            .collect();
        let data_type = DataType::from_name(case["data_type"].as_str().unwrap()).unwrap();
        let fill = le_to_native(
            hex_bytes(case["fill_value_hex"].as_str().unwrap()),
            data_type.endian_unit(),
        );
        let array = Array::builder(&shape, data_type, &chunk_shape)
            .codecs_metadata(codecs)
            .fill_value_bytes(FillValue::new(fill))
            .create(out_store.clone(), &format!("/{name}"))
            .unwrap();
        let expected = le_to_native(expected_le, array.data_type().endian_unit());
        let size = array.data_type().size();
        for region in case["written"].as_array().unwrap() {
            let ranges: Vec<std::ops::Range<u64>> = region
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let r = u64s(r);
                    r[0]..r[1]
                })
                .collect();
            let region = Region::from_ranges(&ranges);
            let mut data = Vec::new();
            for i in ranges[0].clone() {
                let row = (i * shape[1]) as usize;
                data.extend_from_slice(
                    &expected[(row + ranges[1].start as usize) * size
                        ..(row + ranges[1].end as usize) * size],
                );
            }
            array.write_region_bytes(&region, &data).unwrap();
        }
        assert!(array.read_region_bytes(&Region::whole(&shape)).unwrap() == expected);
    }
    run_sharding_script(&python, "read", dir.path());
}

#[test]
fn inner_chunks_can_be_read_one_by_one_touching_only_their_bytes() {
    let store = Arc::new(CountingStore::default());
    let array = Array::builder(&[10, 13], DataType::UInt16, &[8, 8])
        .codecs(vec![zstd_sharding(&[4, 4])])
        .create(store.clone(), "/i")
        .unwrap();
    let data = noise(130, 8);
    array
        .write_region(&Region::whole(&[10, 13]), &data)
        .unwrap();
    assert_eq!(array.inner_chunk_shape(), Some(vec![4, 4]));
    assert_eq!(array.inner_chunk_grid_shape(), Some(vec![3, 4]));
    for i in 0..3 {
        for j in 0..4 {
            store.reset();
            let region = array.inner_chunk_region(&[i, j]).unwrap();
            let got: Vec<u16> = array.read_inner_chunk(&[i, j]).unwrap();
            // The edge inner chunks are clipped to the array.
            assert_eq!(
                region.shape(),
                &[if i == 2 { 2 } else { 4 }, if j == 3 { 1 } else { 4 }]
            );
            let mut expected = Vec::new();
            for r in region.start()[0]..region.start()[0] + region.shape()[0] {
                for c in region.start()[1]..region.start()[1] + region.shape()[1] {
                    expected.push(data[(r * 13 + c) as usize]);
                }
            }
            assert_eq!(got, expected, "inner chunk ({i}, {j})");
            // The index, then that one inner chunk.
            assert_eq!(store.reads().1, 2, "inner chunk ({i}, {j})");
        }
    }
    assert!(array.read_inner_chunk::<u16>(&[3, 0]).is_err());
    let plain = Array::builder(&[4], DataType::UInt8, &[2])
        .create(Arc::new(MemoryStore::new()), "/plain")
        .unwrap();
    assert_eq!(plain.inner_chunk_shape(), None);
    assert!(plain.read_inner_chunk::<u8>(&[0]).is_err());
}

fn string_sharding(inner: &[u64]) -> Codec {
    let zstd = Codec::BytesToBytes(Arc::new(ZstdCodec::new(0, false).unwrap()));
    let utf8 = Codec::ArrayToBytes(Arc::new(zarrkit::codec::vlen::VlenCodec::utf8()));
    Codec::ArrayToBytes(Arc::new(ShardingCodec::new(inner, vec![utf8, zstd])))
}

/// The `(offset, nbytes)` entries of a shard's index (at the end, with a
/// crc32c: `ShardingCodec::new`'s default).
fn index_entries(shard: &[u8], n: usize) -> Vec<(u64, u64)> {
    let index = &shard[shard.len() - 16 * n - 4..shard.len() - 4];
    index
        .chunks_exact(16)
        .map(|e| {
            (
                u64::from_le_bytes(e[..8].try_into().unwrap()),
                u64::from_le_bytes(e[8..].try_into().unwrap()),
            )
        })
        .collect()
}

#[test]
fn partial_writes_of_sharded_strings_keep_the_other_inner_chunks() {
    let store = Arc::new(CountingStore::default());
    let array = Array::builder(&[6, 8], DataType::String, &[4, 4])
        .codecs(vec![string_sharding(&[2, 2])])
        .fill_value_bytes(zarrkit::metadata::FillValue::new("·".as_bytes().to_vec()))
        .create(store.clone(), "/s")
        .unwrap();
    let shard_key = StoreKey::new("s/c/0/0").unwrap();
    store.reset();
    // One element of inner chunk (1, 1) of shard (0, 0): the other three
    // inner chunks are all fill value, so they are not stored.
    array
        .write_strings(&Region::new(vec![3, 2], vec![1, 1]), &["é"])
        .unwrap();
    assert_eq!(store.sets.load(Ordering::SeqCst), 1);
    let shard = store.get(&shard_key, None).unwrap().unwrap();
    let entries = index_entries(&shard, 4);
    assert_eq!(entries[..3], [(u64::MAX, u64::MAX); 3]);
    assert_eq!(entries[3].0, 0);

    let mut model = vec!["·".to_string(); 48];
    model[3 * 8 + 2] = "é".into();
    let values: Vec<String> = (0..16).map(|i| format!("s{i}")).collect();
    array
        .write_strings(&Region::new(vec![0, 0], vec![4, 4]), &values)
        .unwrap();
    for r in 0..4 {
        for c in 0..4 {
            model[r * 8 + c] = values[r * 4 + c].clone();
        }
    }
    store.reset();
    // A partial write to the same shard reads its index, then the inner
    // chunks it does not cover (one batch), stores it once, and keeps
    // every inner chunk it does not touch.
    array
        .write_strings(&Region::new(vec![1, 1], vec![2, 2]), &["a", "b", "c", "d"])
        .unwrap();
    assert_eq!(store.sets.load(Ordering::SeqCst), 1);
    assert_eq!(store.reads().0, 2);
    for (k, (r, c)) in [(1, 1), (1, 2), (2, 1), (2, 2)].into_iter().enumerate() {
        model[r * 8 + c] = ["a", "b", "c", "d"][k].to_string();
    }
    assert_eq!(array.read_strings(&Region::whole(&[6, 8])).unwrap(), model);
    // The edge shards (row 4..6) were never written: not stored.
    assert!(
        store
            .get(&StoreKey::new("s/c/1/0").unwrap(), None)
            .unwrap()
            .is_none()
    );
    // Writing the fill value over a whole inner chunk drops it from the
    // index; the shard stays.
    array
        .write_strings(&Region::new(vec![0, 0], vec![2, 2]), &["·"; 4])
        .unwrap();
    let shard = store.get(&shard_key, None).unwrap().unwrap();
    assert_eq!(index_entries(&shard, 4)[0], (u64::MAX, u64::MAX));
    for r in 0..2 {
        for c in 0..2 {
            model[r * 8 + c] = "·".into();
        }
    }
    assert_eq!(array.read_strings(&Region::whole(&[6, 8])).unwrap(), model);
    // And the fill value everywhere erases the shard.
    array
        .write_strings(&Region::new(vec![0, 0], vec![4, 4]), &["·"; 16])
        .unwrap();
    assert!(store.get(&shard_key, None).unwrap().is_none());
}

#[test]
fn concurrent_string_writes_to_one_shard_lose_nothing() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::builder(&[64], DataType::String, &[64])
        .codecs(vec![string_sharding(&[8])])
        .create(store, "/c")
        .unwrap();
    std::thread::scope(|scope| {
        for t in 0..8u64 {
            let array = array.clone();
            scope.spawn(move || {
                for i in (t..64).step_by(8) {
                    array
                        .write_strings(&Region::new(vec![i], vec![1]), &[format!("v{i}")])
                        .unwrap();
                }
            });
        }
    });
    let expected: Vec<String> = (0..64).map(|i| format!("v{i}")).collect();
    assert_eq!(array.read_strings(&Region::whole(&[64])).unwrap(), expected);
}

#[test]
fn reading_a_few_strings_reads_their_inner_chunks_not_the_shard() {
    let store = Arc::new(CountingStore::default());
    let array = Array::builder(&[64, 64], DataType::String, &[64, 64])
        .codecs(vec![string_sharding(&[8, 8])])
        .create(store.clone(), "/r")
        .unwrap();
    // Strings that do not compress much: their bytes dominate the shard.
    let values: Vec<String> = noise(64 * 64, 9)
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{i}:{v:x}{:x}", v.wrapping_mul(40503)))
        .collect();
    array
        .write_strings(&Region::whole(&[64, 64]), &values)
        .unwrap();
    let shard_len = store
        .get(&StoreKey::new("r/c/0/0").unwrap(), None)
        .unwrap()
        .unwrap()
        .len() as u64;
    store.reset();
    // Two elements in inner chunk (1, 1), one in (1, 2).
    let got = array
        .read_strings(&Region::new(vec![9, 14], vec![1, 3]))
        .unwrap();
    assert_eq!(got, values[9 * 64 + 14..9 * 64 + 17]);
    let (batches, _, bytes) = store.reads();
    // The index (a suffix read), then one batch of two inner chunks.
    assert_eq!(batches, 2);
    let index_len = 64 * 16 + 4;
    assert!(
        bytes < index_len + 2 * shard_len / 64 * 2,
        "{bytes} bytes of a {shard_len}-byte shard"
    );
    // The whole array still reads back, through the same path.
    assert_eq!(
        array.read_strings(&Region::whole(&[64, 64])).unwrap(),
        values
    );
}
