//! The chunks an array has in its store (`Array::stored_chunks`,
//! `Array::stored_size`) in every format and key encoding, on stores that
//! can list and on one that cannot, and its key layout (`Array::key_layout`).

use super::regions::CountingStore;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use zarrkit::array::StoredSize;
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{ChunkKeyEncoding, DataType, Separator};
use zarrkit::store::{MemoryStore, Store, StoreKey};
use zarrkit::{Array, Region};

/// A store that cannot list, counting the values read (a size query reads
/// the value).
fn unlistable() -> Arc<CountingStore> {
    Arc::new(CountingStore::unlistable())
}

fn key(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

/// A 6 × 6 `uint8` array in 2 × 2 chunks at `path` in `format`, with
/// chunks (2, 1) and (0, 2) written, in that order.
fn two_chunks(
    store: Arc<dyn Store>,
    path: &str,
    format: ZarrFormat,
    encoding: Option<ChunkKeyEncoding>,
) -> Array {
    let mut builder = Array::builder(&[6, 6], DataType::UInt8, &[2, 2]).format(format);
    if let Some(encoding) = encoding {
        builder = builder.chunk_key_encoding(encoding);
    }
    let array = builder.create(store, path).unwrap();
    array
        .write_region(&Region::new(vec![4, 2], vec![2, 2]), &[1u8; 4])
        .unwrap();
    array
        .write_region(&Region::new(vec![0, 4], vec![1, 1]), &[2u8])
        .unwrap();
    array
}

/// The coordinates and keys of `array`'s stored chunks.
fn stored(array: &Array) -> Vec<(Vec<u64>, String)> {
    array
        .stored_chunks()
        .unwrap()
        .into_iter()
        .map(|chunk| (chunk.chunk_coords, chunk.key.to_string()))
        .collect()
}

#[test]
fn stored_chunks_of_every_format_and_key_encoding_come_sorted_with_their_keys() {
    use Separator::{Dot, Slash};
    use ZarrFormat::{V1, V2, V3};
    let v2 = |separator| Some(ChunkKeyEncoding::V2 { separator });
    let default = |separator| Some(ChunkKeyEncoding::Default { separator });
    let cases = [
        (V2, "/a", v2(Dot), ["a/0.2", "a/2.1"]),
        (V2, "/a", v2(Slash), ["a/0/2", "a/2/1"]),
        (V3, "/a", None, ["a/c/0/2", "a/c/2/1"]),
        (V3, "/a", default(Dot), ["a/c.0.2", "a/c.2.1"]),
        (V3, "/a", v2(Dot), ["a/0.2", "a/2.1"]),
        (V3, "/a", v2(Slash), ["a/0/2", "a/2/1"]),
        (V1, "/", None, ["0.2", "2.1"]),
    ];
    for (format, path, encoding, keys) in cases {
        let store = Arc::new(MemoryStore::new());
        let array = two_chunks(store, path, format, encoding.clone());
        let expected = vec![
            (vec![0, 2], keys[0].to_string()),
            (vec![2, 1], keys[1].to_string()),
        ];
        assert_eq!(stored(&array), expected, "{format} {encoding:?}");
    }
}

#[test]
fn stored_chunks_of_the_drafts_parse_their_own_key_layout() {
    for format in [
        ZarrFormat::V3Draft2022,
        ZarrFormat::V3Draft2019Json,
        ZarrFormat::V3Draft2019,
        ZarrFormat::V3Draft2019a,
    ] {
        let store = Arc::new(MemoryStore::new());
        let array = two_chunks(store.clone(), "/g/a", format, None);
        let layout = array.key_layout();
        let expected: Vec<(Vec<u64>, String)> = [vec![0, 2], vec![2, 1]]
            .into_iter()
            .map(|c| {
                let key = layout.chunk_key(&c).unwrap().to_string();
                (c, key)
            })
            .collect();
        assert_eq!(stored(&array), expected, "{format}");
        // The keys are in the store under the layout's prefix, which is not
        // the node's metadata prefix in the drafts.
        for (_, key) in &expected {
            assert!(key.starts_with(layout.prefix().as_str()), "{format}: {key}");
            assert!(store.size(&StoreKey::new(key).unwrap()).unwrap().is_some());
        }
        // Reopened, the array finds the same chunks.
        let reopened = Array::open(store, "/g/a").unwrap();
        assert_eq!(stored(&reopened), expected, "{format}");
    }
}

#[test]
fn keys_under_the_prefix_that_are_not_chunks_of_the_array_are_skipped() {
    let store = Arc::new(MemoryStore::new());
    let array = two_chunks(store.clone(), "/a", ZarrFormat::V3, None);
    for foreign in [
        "a/c/0",       // too few dimensions
        "a/c/0/1/2",   // too many
        "a/c/00/1",    // not the canonical spelling of (0, 1)
        "a/c/x/1",     // not a number
        "a/c/3/0",     // outside the 3 × 3 grid
        "a/c/0/99",    // outside too
        "a/c.1.1",     // another encoding's spelling
        "a/notes.txt", // not a chunk key at all
        "ab/c/1/1",    // a sibling whose name shares the prefix's text
    ] {
        store.set(&key(foreign), b"junk").unwrap();
    }
    assert_eq!(
        stored(&array),
        [
            (vec![0, 2], "a/c/0/2".to_string()),
            (vec![2, 1], "a/c/2/1".to_string()),
        ]
    );
    // v2 at the root: every key of the store is under the prefix,
    // documents included.
    let store = Arc::new(MemoryStore::new());
    let array = two_chunks(store.clone(), "/", ZarrFormat::V2, None);
    for foreign in ["0.7", "x.1", "1.1.1", "sub/0.0", ".zattrs"] {
        store.set(&key(foreign), b"{}").unwrap();
    }
    assert_eq!(
        stored(&array),
        [
            (vec![0, 2], "0.2".to_string()),
            (vec![2, 1], "2.1".to_string()),
        ]
    );
}

#[test]
fn a_store_that_cannot_list_is_probed_at_every_grid_position() {
    let store = unlistable();
    let array = two_chunks(store.clone(), "/a", ZarrFormat::V3, None);
    store.reads.store(0, Ordering::SeqCst);
    assert_eq!(
        stored(&array),
        [
            (vec![0, 2], "a/c/0/2".to_string()),
            (vec![2, 1], "a/c/2/1".to_string()),
        ]
    );
    // One probe per position of the 3 × 3 grid.
    assert_eq!(store.reads.load(Ordering::SeqCst), 9);
}

#[test]
fn stored_size_counts_the_stored_chunks_and_their_bytes() {
    let store = Arc::new(MemoryStore::new());
    let array = two_chunks(store.clone(), "/a", ZarrFormat::V3, None);
    let bytes: u64 = ["a/c/0/2", "a/c/2/1"]
        .iter()
        .map(|k| store.size(&key(k)).unwrap().unwrap())
        .sum();
    assert_eq!(
        array.stored_size().unwrap(),
        StoredSize { chunks: 2, bytes }
    );
    // A chunk outside the grid counts neither as a chunk nor its bytes.
    store.set(&key("a/c/5/5"), &[0; 100]).unwrap();
    assert_eq!(
        array.stored_size().unwrap(),
        StoredSize { chunks: 2, bytes }
    );
    let empty = Array::builder(&[0, 4], DataType::UInt8, &[2, 2])
        .create(Arc::new(MemoryStore::new()), "/e")
        .unwrap();
    assert_eq!(empty.stored_size().unwrap(), StoredSize::default());
}

#[test]
fn stored_chunks_of_a_zero_dimensional_array_is_its_one_chunk() {
    for (format, expected) in [(ZarrFormat::V3, "z/c"), (ZarrFormat::V2, "z/0")] {
        let store = Arc::new(MemoryStore::new());
        let array = Array::builder(&[], DataType::Int16, &[])
            .format(format)
            .create(store, "/z")
            .unwrap();
        assert!(array.stored_chunks().unwrap().is_empty());
        array.write_region(&Region::whole(&[]), &[5i16]).unwrap();
        assert_eq!(stored(&array), [(vec![], expected.to_string())], "{format}");
    }
}

#[test]
fn resize_without_listing_erases_the_chunks_outside_the_new_shape() {
    let store = unlistable();
    let mut array = two_chunks(store.clone(), "/a", ZarrFormat::V3, None);
    array.resize(&[4, 6]).unwrap();
    assert_eq!(store.inner.size(&key("a/c/2/1")).unwrap(), None);
    assert!(store.inner.size(&key("a/c/0/2")).unwrap().is_some());
    assert_eq!(stored(&array), [(vec![0, 2], "a/c/0/2".to_string())]);
}

#[test]
fn the_key_layout_names_and_parses_the_arrays_chunk_keys() {
    let array = two_chunks(
        Arc::new(MemoryStore::new()),
        "/g/a",
        ZarrFormat::V2,
        Some(ChunkKeyEncoding::V2 {
            separator: Separator::Slash,
        }),
    );
    let layout = array.key_layout();
    assert_eq!(layout.prefix().as_str(), "g/a/");
    assert_eq!(layout.chunk_key(&[3, 4]).unwrap(), key("g/a/3/4"));
    assert_eq!(array.chunk_key(&[3, 4]).unwrap(), key("g/a/3/4"));
    assert_eq!(layout.parse_chunk_key(&key("g/a/3/4"), 2), Some(vec![3, 4]));
    assert_eq!(layout.parse_chunk_key(&key("g/a/.zarray"), 2), None);
}

/// A memory store whose listing carries sizes (as object storage's does),
/// counting the size queries asked of it one key at a time.
#[derive(Debug, Default)]
struct SizedListing {
    inner: MemoryStore,
    size_queries: std::sync::atomic::AtomicUsize,
}

impl Store for SizedListing {
    fn name(&self) -> &'static str {
        "sized listing"
    }
    fn capabilities(&self) -> zarrkit::store::StoreCapabilities {
        self.inner.capabilities()
    }
    fn get(
        &self,
        key: &StoreKey,
        range: Option<zarrkit::store::ByteRange>,
    ) -> Result<Option<Vec<u8>>, zarrkit::store::StoreError> {
        self.inner.get(key, range)
    }
    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), zarrkit::store::StoreError> {
        self.inner.set(key, value)
    }
    fn set_partial_values(
        &self,
        items: &[(StoreKey, u64, Vec<u8>)],
    ) -> Result<(), zarrkit::store::StoreError> {
        self.inner.set_partial_values(items)
    }
    fn erase(&self, key: &StoreKey) -> Result<(), zarrkit::store::StoreError> {
        self.inner.erase(key)
    }
    fn erase_prefix(
        &self,
        prefix: &zarrkit::store::StorePrefix,
    ) -> Result<(), zarrkit::store::StoreError> {
        self.inner.erase_prefix(prefix)
    }
    fn list_prefix(
        &self,
        prefix: &zarrkit::store::StorePrefix,
    ) -> Result<Vec<StoreKey>, zarrkit::store::StoreError> {
        self.inner.list_prefix(prefix)
    }
    fn list_dir(
        &self,
        prefix: &zarrkit::store::StorePrefix,
    ) -> Result<zarrkit::store::ListDir, zarrkit::store::StoreError> {
        self.inner.list_dir(prefix)
    }
    fn list_prefix_sizes(
        &self,
        prefix: &zarrkit::store::StorePrefix,
    ) -> Result<Vec<(StoreKey, u64)>, zarrkit::store::StoreError> {
        self.inner.list_prefix_sizes(prefix)
    }
    fn size(&self, key: &StoreKey) -> Result<Option<u64>, zarrkit::store::StoreError> {
        self.size_queries.fetch_add(1, Ordering::SeqCst);
        self.inner.size(key)
    }
}

#[test]
fn stored_size_takes_the_sizes_from_one_listing_where_the_store_lists_them() {
    for (format, keys) in [
        (ZarrFormat::V3, ["a/c/0/2", "a/c/2/1"]),
        // v2's chunks lie beside its documents, which do not count.
        (ZarrFormat::V2, ["a/0.2", "a/2.1"]),
    ] {
        let store = Arc::new(SizedListing::default());
        let array = two_chunks(store.clone(), "/a", format, None);
        let bytes: u64 = keys
            .iter()
            .map(|k| store.inner.size(&key(k)).unwrap().unwrap())
            .sum();
        // A chunk outside the grid is listed but not counted.
        store
            .set(&key(&keys[0].replace('0', "7")), &[0; 50])
            .unwrap();
        store.size_queries.store(0, Ordering::SeqCst);
        assert_eq!(
            array.stored_size().unwrap(),
            StoredSize { chunks: 2, bytes },
            "{format}"
        );
        assert_eq!(store.size_queries.load(Ordering::SeqCst), 0, "{format}");
    }
}
