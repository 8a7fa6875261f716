//! Sharded arrays: whole-shard writes and reads, and partial reads and
//! writes that touch only the bytes they need.
//!
//! A `uint16` array of 128³ in one 128³ shard of 32³ inner chunks (64 of
//! them), `bytes` + `zstd` inside, `bytes` + `crc32c` index at the end,
//! in a `MemoryStore` behind a counter. The partial benches report, besides
//! time, the bytes and requests they read from the store per iteration
//! (`bytes` and `items` counters), which stay proportional to the region:
//! compare them with the shard's size printed by `shard_size`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use zarrkit::codec::sharding::ShardingCodec;
use zarrkit::codec::{Codec, bytes::BytesCodec, zstd::ZstdCodec};
use zarrkit::metadata::DataType;
use zarrkit::store::{
    ByteRange, ListDir, MemoryStore, ReadRequest, Store, StoreCapabilities, StoreError, StoreKey,
    StorePrefix,
};
use zarrkit::{Array, Region};

fn main() {
    divan::main();
}

const SIDE: u64 = 128;
const INNER: u64 = 32;

/// A memory store that counts the chunk bytes and requests it serves.
#[derive(Debug, Default)]
struct CountingStore {
    inner: MemoryStore,
    bytes: AtomicU64,
    requests: AtomicU64,
}

impl CountingStore {
    fn take(&self) -> (u64, u64) {
        (
            self.bytes.swap(0, Ordering::SeqCst),
            self.requests.swap(0, Ordering::SeqCst),
        )
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
            self.requests.fetch_add(1, Ordering::SeqCst);
            let n = value.as_ref().map_or(0, Vec::len);
            self.bytes.fetch_add(n as u64, Ordering::SeqCst);
        }
        Ok(value)
    }
    fn get_partial_values(
        &self,
        requests: &[ReadRequest],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        requests.iter().map(|(k, r)| self.get(k, *r)).collect()
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

fn data() -> Vec<u16> {
    let n = (SIDE * SIDE * SIDE) as usize;
    (0..n)
        .map(|i| {
            let (x, y, z) = (i % 128, (i / 128) % 128, i / (128 * 128));
            ((x + 2 * y + 3 * z) / 4) as u16
        })
        .collect()
}

fn sharded_array() -> (Arc<CountingStore>, Array) {
    let store = Arc::new(CountingStore::default());
    let inner = vec![
        Codec::ArrayToBytes(Arc::new(BytesCodec::little())),
        Codec::BytesToBytes(Arc::new(ZstdCodec::new(0, false).unwrap())),
    ];
    let sharding = ShardingCodec::new(&[INNER; 3], inner);
    let array = Array::builder(&[SIDE; 3], DataType::UInt16, &[SIDE; 3])
        .codecs(vec![Codec::ArrayToBytes(Arc::new(sharding))])
        .create(store.clone(), "/s")
        .unwrap();
    array
        .write_region(&Region::whole(&[SIDE; 3]), &data())
        .unwrap();
    store.take();
    (store, array)
}

/// The store bytes and requests one call of `f` reads.
fn measure(store: &CountingStore, f: impl FnOnce()) -> (u64, u64) {
    store.take();
    f();
    store.take()
}

#[divan::bench]
fn shard_size(bencher: divan::Bencher) {
    let (store, array) = sharded_array();
    let (bytes, requests) = measure(&store, || {
        array
            .read_region::<u16>(&Region::whole(&[SIDE; 3]))
            .unwrap();
    });
    bencher
        .counter(divan::counter::BytesCount::new(bytes))
        .counter(divan::counter::ItemsCount::new(requests))
        .bench(|| {
            array
                .read_region::<u16>(&Region::whole(&[SIDE; 3]))
                .unwrap()
        });
}

#[divan::bench]
fn write_whole_shard(bencher: divan::Bencher) {
    let (_, array) = sharded_array();
    let values = data();
    bencher
        .counter(divan::counter::BytesCount::new(values.len() * 2))
        .bench(|| {
            array
                .write_region(&Region::whole(&[SIDE; 3]), &values)
                .unwrap()
        });
}

/// Reads a region of `edge`³ inside one inner chunk, or straddling eight
/// when `edge` is 32: counters are the store bytes and requests per read.
#[divan::bench(args = [4, 32])]
fn read_region_partially(bencher: divan::Bencher, edge: u64) {
    let (store, array) = sharded_array();
    let start = if edge == INNER { INNER / 2 } else { INNER + 3 };
    let region = Region::new(vec![start; 3], vec![edge; 3]);
    let (bytes, requests) = measure(&store, || {
        array.read_region::<u16>(&region).unwrap();
    });
    bencher
        .counter(divan::counter::BytesCount::new(bytes))
        .counter(divan::counter::ItemsCount::new(requests))
        .bench(|| array.read_region::<u16>(&region).unwrap());
}

/// Rewrites a 4³ region inside one inner chunk: reads the index and the
/// other inner chunks' stored bytes, decodes and encodes one inner chunk.
#[divan::bench]
fn write_region_partially(bencher: divan::Bencher) {
    let (store, array) = sharded_array();
    let region = Region::new(vec![INNER + 3; 3], vec![4; 3]);
    let values = vec![7u16; 64];
    let (bytes, requests) = measure(&store, || array.write_region(&region, &values).unwrap());
    bencher
        .counter(divan::counter::BytesCount::new(bytes))
        .counter(divan::counter::ItemsCount::new(requests))
        .bench(|| array.write_region(&region, &values).unwrap());
}
