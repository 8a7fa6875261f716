//! Store backends: whole, ranged and batched reads, atomic writes and listing.

use divan::Bencher;
use divan::counter::{BytesCount, ItemsCount};
use zarrkit::store::{ByteRange, FilesystemStore, MemoryStore, ReadRequest, Store, StoreKey};

fn main() {
    divan::main();
}

const LENS: [usize; 2] = [4 << 10, 1 << 20];

fn sample_bytes(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i.wrapping_mul(31) % 251) as u8).collect()
}

fn key(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

fn filesystem_store() -> (tempfile::TempDir, FilesystemStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = FilesystemStore::new(dir.path().join("bench.zarr")).unwrap();
    (dir, store)
}

#[divan::bench(args = LENS)]
fn memory_set(bencher: Bencher, len: usize) {
    let store = MemoryStore::new();
    let (k, value) = (key("a/c/0/0"), sample_bytes(len));
    bencher
        .counter(BytesCount::new(len))
        .bench(|| store.set(&k, divan::black_box(&value)).unwrap());
}

#[divan::bench(args = LENS)]
fn memory_get(bencher: Bencher, len: usize) {
    let store = MemoryStore::new();
    let k = key("a/c/0/0");
    store.set(&k, &sample_bytes(len)).unwrap();
    bencher
        .counter(BytesCount::new(len))
        .bench(|| store.get(divan::black_box(&k), None).unwrap());
}

#[divan::bench(args = LENS)]
fn filesystem_set(bencher: Bencher, len: usize) {
    let (_dir, store) = filesystem_store();
    let (k, value) = (key("a/c/0/0"), sample_bytes(len));
    bencher
        .counter(BytesCount::new(len))
        .bench(|| store.set(&k, divan::black_box(&value)).unwrap());
}

#[divan::bench(args = LENS)]
fn filesystem_get(bencher: Bencher, len: usize) {
    let (_dir, store) = filesystem_store();
    let k = key("a/c/0/0");
    store.set(&k, &sample_bytes(len)).unwrap();
    bencher
        .counter(BytesCount::new(len))
        .bench(|| store.get(divan::black_box(&k), None).unwrap());
}

/// A shard index read: 16 bytes from the end of a large value. The time
/// should not grow with the value's length.
#[divan::bench(args = [1 << 20, 32 << 20])]
fn filesystem_get_suffix(bencher: Bencher, len: usize) {
    let (_dir, store) = filesystem_store();
    let k = key("a/c/0/0");
    store.set(&k, &sample_bytes(len)).unwrap();
    bencher.counter(BytesCount::new(16usize)).bench(|| {
        store
            .get(&k, divan::black_box(Some(ByteRange::Suffix(16))))
            .unwrap()
    });
}

/// 64 inner chunks of 4 KiB read from one 1 MiB shard in one batch.
#[divan::bench]
fn filesystem_get_partial_values(bencher: Bencher) {
    let (_dir, store) = filesystem_store();
    let k = key("a/c/0/0");
    store.set(&k, &sample_bytes(1 << 20)).unwrap();
    let requests: Vec<ReadRequest> = (0..64u64)
        .map(|i| (k.clone(), Some(ByteRange::new(i * (16 << 10), 4 << 10))))
        .collect();
    bencher
        .counter(BytesCount::new(64usize * (4 << 10)))
        .bench(|| {
            store
                .get_partial_values(divan::black_box(&requests))
                .unwrap()
        });
}

/// Listing 1000 chunk keys spread over 10 directories.
#[divan::bench]
fn filesystem_list(bencher: Bencher) {
    let (_dir, store) = filesystem_store();
    for i in 0..10 {
        for j in 0..100 {
            store.set(&key(&format!("a/c/{i}/{j}")), b"x").unwrap();
        }
    }
    bencher
        .counter(ItemsCount::new(1000usize))
        .bench(|| store.list().unwrap());
}
