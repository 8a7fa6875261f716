//! Reading and writing regions: planning, fill values, read-modify-write,
//! empty chunks, resize, and the errors of each.

use proptest::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use zarrkit::metadata::{DataType, ExtensionObject, JsonMap};
use zarrkit::store::{
    ByteRange, ListDir, MemoryStore, ReadRequest, Store, StoreCapabilities, StoreError, StoreKey,
    StorePrefix,
};
use zarrkit::{Array, Error, Group, Node, Region};

/// A store that counts the values read and written, to check what the
/// planner touches; with `unlistable`, it cannot list.
#[derive(Debug, Default)]
pub(super) struct CountingStore {
    pub(super) inner: MemoryStore,
    pub(super) reads: AtomicUsize,
    sets: AtomicUsize,
    unlistable: bool,
}

impl CountingStore {
    /// A counting store that cannot list.
    pub(super) fn unlistable() -> Self {
        Self {
            unlistable: true,
            ..Self::default()
        }
    }

    fn unlisted(&self, operation: &'static str) -> Result<(), StoreError> {
        if self.unlistable {
            return Err(StoreError::Unsupported {
                store: "counting store",
                operation,
            });
        }
        Ok(())
    }
}

impl Store for CountingStore {
    fn name(&self) -> &'static str {
        "counting store"
    }
    fn capabilities(&self) -> StoreCapabilities {
        StoreCapabilities {
            list: !self.unlistable,
            ..self.inner.capabilities()
        }
    }
    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        // Metadata documents of every format (creating a node probes for
        // them) are not chunk reads.
        let metadata = ["zarr.json", ".zarray", ".zgroup", ".zattrs"];
        if !metadata.iter().any(|name| key.as_str().ends_with(name)) {
            self.reads.fetch_add(1, Ordering::SeqCst);
        }
        self.inner.get(key, range)
    }
    fn get_partial_values(
        &self,
        requests: &[ReadRequest],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        requests.iter().map(|(k, r)| self.get(k, *r)).collect()
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
        self.unlisted("listing by prefix")?;
        self.inner.list_prefix(prefix)
    }
    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        self.unlisted("listing")?;
        self.inner.list_dir(prefix)
    }
}

fn key(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

fn iota_u16(n: usize) -> Vec<u16> {
    (0..n)
        .map(|i| (i as u16).wrapping_mul(7).wrapping_add(3))
        .collect()
}

#[test]
fn missing_chunks_read_as_the_fill_value() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[5, 5], DataType::Int32, &[2, 2])
        .fill_value(-7i32)
        .create(store.clone(), "/a")
        .unwrap();
    array
        .write_region(&Region::new(vec![0, 0], vec![1, 1]), &[42i32])
        .unwrap();
    let all: Vec<i32> = array.read_region(&Region::whole(&[5, 5])).unwrap();
    assert_eq!(all[0], 42);
    assert!(all[1..].iter().all(|&v| v == -7), "{all:?}");
    // Only the one chunk that was written is stored.
    let chunks: Vec<_> = store
        .list_prefix(&StorePrefix::new("a/c/").unwrap())
        .unwrap();
    assert_eq!(chunks, vec![key("a/c/0/0")]);
}

#[test]
fn region_reads_cross_chunk_boundaries_and_edge_chunks() {
    let store = Arc::new(MemoryStore::new());
    let shape = [7u64, 11, 5];
    let array = Array::builder(&shape, DataType::UInt16, &[3, 4, 2])
        .create(store, "/")
        .unwrap();
    let n = shape.iter().product::<u64>() as usize;
    let data = iota_u16(n);
    array.write_region(&Region::whole(&shape), &data).unwrap();
    let region = Region::new(vec![2, 3, 1], vec![5, 7, 4]);
    let got: Vec<u16> = array.read_region(&region).unwrap();
    let mut expected = Vec::new();
    for i in 2..7 {
        for j in 3..10 {
            for k in 1..5 {
                expected.push(data[(i * 11 + j) * 5 + k]);
            }
        }
    }
    assert_eq!(got, expected);
}

#[test]
fn partial_chunk_write_is_a_read_modify_write() {
    let store = Arc::new(CountingStore::default());
    let array = Array::builder(&[4, 4], DataType::UInt8, &[4, 4])
        .create(store.clone(), "/x")
        .unwrap();
    array
        .write_region(&Region::whole(&[4, 4]), &(1..=16).collect::<Vec<u8>>())
        .unwrap();
    array
        .write_region(&Region::new(vec![1, 1], vec![2, 2]), &[0u8, 0, 0, 0])
        .unwrap();
    let got: Vec<u8> = array.read_region(&Region::whole(&[4, 4])).unwrap();
    assert_eq!(
        got,
        vec![1, 2, 3, 4, 5, 0, 0, 8, 9, 0, 0, 12, 13, 14, 15, 16]
    );
}

#[test]
fn writing_whole_chunks_never_reads_them() {
    let store = Arc::new(CountingStore::default());
    let array = Array::builder(&[10, 10], DataType::UInt16, &[5, 5])
        .create(store.clone(), "/w")
        .unwrap();
    array
        .write_region(&Region::whole(&[10, 10]), &iota_u16(100))
        .unwrap();
    array
        .write_region(&Region::new(vec![0, 5], vec![5, 5]), &iota_u16(25))
        .unwrap();
    assert_eq!(store.reads.load(Ordering::SeqCst), 0);
    // A partial write reads exactly the one chunk it touches.
    array
        .write_region(&Region::new(vec![1, 1], vec![2, 2]), &[9u16; 4])
        .unwrap();
    assert_eq!(store.reads.load(Ordering::SeqCst), 1);
}

#[test]
fn edge_chunks_covered_within_the_array_are_not_read() {
    let store = Arc::new(CountingStore::default());
    let array = Array::builder(&[7], DataType::UInt8, &[4])
        .fill_value(9u8)
        .create(store.clone(), "/e")
        .unwrap();
    array
        .write_region(&Region::new(vec![4], vec![3]), &[1u8, 2, 3])
        .unwrap();
    assert_eq!(store.reads.load(Ordering::SeqCst), 0);
    // The part of the edge chunk past the array holds the fill value.
    assert_eq!(
        array.read_chunk_bytes(&[1]).unwrap().unwrap(),
        vec![1, 2, 3, 9]
    );
}

#[test]
fn chunks_equal_to_the_fill_value_are_erased_unless_asked_to_keep_them() {
    let store = Arc::new(MemoryStore::new());
    let mut array = Array::builder(&[4], DataType::Float32, &[2])
        .fill_value(1.5f32)
        .create(store.clone(), "/f")
        .unwrap();
    array
        .write_region(&Region::whole(&[4]), &[1.0f32, 2.0, 3.0, 4.0])
        .unwrap();
    assert!(store.get(&key("f/c/0"), None).unwrap().is_some());
    array
        .write_region(&Region::new(vec![0], vec![2]), &[1.5f32, 1.5])
        .unwrap();
    assert!(
        store.get(&key("f/c/0"), None).unwrap().is_none(),
        "an all-fill chunk is erased"
    );
    assert_eq!(
        array.read_region::<f32>(&Region::whole(&[4])).unwrap(),
        vec![1.5, 1.5, 3.0, 4.0]
    );

    array.set_write_empty_chunks(true);
    array
        .write_region(&Region::new(vec![0], vec![2]), &[1.5f32, 1.5])
        .unwrap();
    assert!(
        store.get(&key("f/c/0"), None).unwrap().is_some(),
        "write_empty_chunks keeps it"
    );
}

#[test]
fn zero_dimensional_arrays_hold_one_element_in_chunk_c() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[], DataType::Float64, &[])
        .create(store.clone(), "/s")
        .unwrap();
    array.write_region(&Region::whole(&[]), &[3.25f64]).unwrap();
    assert!(store.get(&key("s/c"), None).unwrap().is_some());
    let array = Array::open(store, "/s").unwrap();
    assert_eq!(
        array.read_region::<f64>(&Region::whole(&[])).unwrap(),
        vec![3.25]
    );
}

#[test]
fn zero_length_dimensions_read_and_write_nothing() {
    let store = Arc::new(CountingStore::default());
    let array = Array::builder(&[0, 5], DataType::Int8, &[2, 2])
        .create(store.clone(), "/z")
        .unwrap();
    let sets_before = store.sets.load(Ordering::SeqCst);
    array
        .write_region::<i8>(&Region::whole(&[0, 5]), &[])
        .unwrap();
    assert!(
        array
            .read_region::<i8>(&Region::whole(&[0, 5]))
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.sets.load(Ordering::SeqCst), sets_before);
}

#[test]
fn type_mismatch_is_an_error_not_a_reinterpretation() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[4], DataType::Int32, &[2])
        .create(store, "/t")
        .unwrap();
    let err = array.read_region::<f32>(&Region::whole(&[4])).unwrap_err();
    assert!(matches!(err, Error::DataTypeMismatch { .. }));
    assert_eq!(
        err.to_string(),
        "array `/t` has data type `int32`, which cannot be read or written as `f32`"
    );
    assert!(
        array
            .write_region(&Region::whole(&[4]), &[0u32; 4])
            .is_err()
    );
}

#[test]
fn out_of_bounds_regions_and_wrong_buffers_are_errors() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[4, 4], DataType::UInt8, &[2, 2])
        .create(store, "/b")
        .unwrap();
    let err = array
        .read_region::<u8>(&Region::new(vec![3, 0], vec![2, 1]))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "region [3..5, 0..1] is out of bounds for array `/b` of shape [4, 4]"
    );
    let err = array
        .read_region::<u8>(&Region::new(vec![0], vec![1]))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("region has 1 dimensions but array `/b` has 2")
    );
    let err = array
        .write_region(&Region::whole(&[4, 4]), &[0u8; 15])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "buffer for array `/b` has 15 bytes, the region needs 16"
    );
    let err = array
        .read_region::<u8>(&Region::new(vec![u64::MAX, 0], vec![2, 1]))
        .unwrap_err();
    assert!(matches!(err, Error::OutOfBounds { .. }));
}

#[test]
fn corrupt_and_truncated_chunks_are_errors_naming_the_key() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[4], DataType::UInt16, &[2])
        .create(store.clone(), "/c")
        .unwrap();
    array
        .write_region(&Region::whole(&[4]), &[1u16, 2, 3, 4])
        .unwrap();
    // Not zstd at all.
    store.set(&key("c/c/0"), b"definitely not zstd").unwrap();
    let err = array.read_region::<u16>(&Region::whole(&[4])).unwrap_err();
    assert!(
        err.to_string().starts_with("cannot decode chunk `c/c/0`"),
        "{err}"
    );
    // A truncated valid chunk.
    let good = store.get(&key("c/c/1"), None).unwrap().unwrap();
    store.set(&key("c/c/1"), &good[..good.len() - 3]).unwrap();
    let err = array
        .read_region::<u16>(&Region::new(vec![2], vec![2]))
        .unwrap_err();
    assert!(
        err.to_string().starts_with("cannot decode chunk `c/c/1`"),
        "{err}"
    );
}

#[test]
fn a_chunk_that_decodes_to_the_wrong_size_is_an_error() {
    let store = Arc::new(MemoryStore::new());
    let bytes = vec![ExtensionObject::with_configuration(
        "bytes",
        serde_json::from_str(r#"{"endian":"little"}"#).unwrap(),
    )];
    let array = Array::builder(&[4], DataType::UInt16, &[4])
        .codecs_metadata(bytes)
        .create(store.clone(), "/u")
        .unwrap();
    store.set(&key("u/c/0"), &[0u8; 6]).unwrap();
    let err = array.read_region::<u16>(&Region::whole(&[4])).unwrap_err();
    let chain: Vec<String> =
        std::iter::successors(Some(&err as &dyn std::error::Error), |e| e.source())
            .map(|e| e.to_string())
            .collect();
    assert_eq!(
        chain,
        vec![
            "cannot decode chunk `u/c/0`",
            "decoded to 6 bytes, expected 8"
        ]
    );
}

#[test]
fn bool_arrays_reject_stored_bytes_other_than_zero_and_one() {
    let store = Arc::new(MemoryStore::new());
    let raw = vec![ExtensionObject::new("bytes")];
    let array = Array::builder(&[3], DataType::Bool, &[3])
        .codecs_metadata(raw)
        .create(store.clone(), "/q")
        .unwrap();
    array
        .write_region(&Region::whole(&[3]), &[true, false, true])
        .unwrap();
    assert_eq!(
        array.read_region::<bool>(&Region::whole(&[3])).unwrap(),
        vec![true, false, true]
    );
    store.set(&key("q/c/0"), &[1, 5, 0]).unwrap();
    let err = array.read_region::<bool>(&Region::whole(&[3])).unwrap_err();
    assert!(
        err.to_string().contains("byte `5` is neither 0 nor 1"),
        "{err}"
    );
}

#[test]
fn resize_erases_chunks_outside_the_new_shape_and_rewrites_the_document() {
    let store = Arc::new(MemoryStore::new());
    let mut attributes = JsonMap::new();
    attributes.insert("units".into(), "m".into());
    let mut array = Array::builder(&[6, 6], DataType::UInt8, &[2, 2])
        .attributes(attributes)
        .create(store.clone(), "/r")
        .unwrap();
    array
        .write_region(&Region::whole(&[6, 6]), &[1u8; 36])
        .unwrap();
    array.resize(&[3, 8]).unwrap();
    let keys: Vec<String> = store
        .list_prefix(&StorePrefix::new("r/c/").unwrap())
        .unwrap()
        .iter()
        .map(|k| k.to_string())
        .collect();
    // Rows of chunks 0 and 1 (elements 0..4) remain; chunk row 2 is outside 3 rows.
    assert!(keys.contains(&"r/c/1/2".to_string()));
    assert!(!keys.iter().any(|k| k.starts_with("r/c/2/")), "{keys:?}");
    let reopened = Array::open(store, "/r").unwrap();
    assert_eq!(reopened.shape(), &[3, 8]);
    assert_eq!(reopened.attributes()["units"], "m");
    let got: Vec<u8> = reopened.read_region(&Region::whole(&[3, 8])).unwrap();
    let expected: Vec<u8> = (0..24).map(|i| if i % 8 < 6 { 1 } else { 0 }).collect();
    assert_eq!(got, expected);
}

#[test]
fn attribute_updates_keep_every_other_field() {
    let store = Arc::new(MemoryStore::new());
    let mut array = Array::builder(&[3], DataType::Int64, &[2])
        .dimension_names(["t"])
        .fill_value(-1i64)
        .create(store.clone(), "/k")
        .unwrap();
    let mut attributes = JsonMap::new();
    attributes.insert("a".into(), serde_json::json!({"nested": [1, 2]}));
    array.set_attributes(attributes).unwrap();
    let reopened = Array::open(store, "/k").unwrap();
    assert_eq!(reopened.attributes()["a"]["nested"][1], 2);
    assert_eq!(
        reopened.metadata().dimension_names,
        Some(vec![Some("t".to_string())])
    );
    assert_eq!(reopened.fill_value().as_bytes(), &(-1i64).to_ne_bytes());
}

#[test]
fn opening_the_wrong_kind_of_node_says_what_is_there() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Group::create(store.clone(), "/", JsonMap::new()).unwrap();
    Group::create(store.clone(), "/g", JsonMap::new()).unwrap();
    Array::builder(&[1], DataType::UInt8, &[1])
        .create(store.clone(), "/g/a")
        .unwrap();
    let err = Array::open(store.clone(), "/g").unwrap_err();
    assert_eq!(err.to_string(), "`/g` is a group, not an array");
    let err = Group::open(store.clone(), "g/a").unwrap_err();
    assert_eq!(err.to_string(), "`/g/a` is an array, not a group");
    let err = Node::open(store.clone(), "/nothing").unwrap_err();
    assert_eq!(err.to_string(), "no array or group at `/nothing`");
    let err = Array::builder(&[1], DataType::UInt8, &[1])
        .create(store.clone(), "/g")
        .unwrap_err();
    assert_eq!(err.to_string(), "`/g` already exists (a group)");
}

/// Creating on the filesystem reads the documents every format keeps at
/// the path in one batch (and the root `zarr.json`, for the drafts): a node
/// of any format there, or a document that does not read, is in the way;
/// stray files in the node's directory are not, and creating beside them,
/// in a directory that exists, or in a nested group works.
#[test]
fn creating_on_the_filesystem_finds_every_node_in_the_way() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(zarrkit::store::FilesystemStore::new(dir.path()).unwrap());
    Group::create(store.clone(), "/", JsonMap::new()).unwrap();
    let put = |k: &str, v: &[u8]| store.set(&StoreKey::new(k).unwrap(), v).unwrap();
    put("v2a/.zarray", br#"{"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": "|u1", "compressor": null, "fill_value": 0, "order": "C", "filters": null}"#);
    put("v2g/.zgroup", br#"{"zarr_format": 2}"#);
    put("broken/zarr.json", b"{ not json");
    put("stray/c/0", b"\x01");
    Group::create(store.clone(), "/g", JsonMap::new()).unwrap();
    let builder = Array::builder(&[1], DataType::UInt8, &[1]);
    for (path, message) in [
        ("/v2a", "`/v2a` already exists (an array)"),
        ("/v2g", "`/v2g` already exists (a group)"),
        ("/broken", "`/broken` already exists (an array)"),
        ("/g", "`/g` already exists (a group)"),
    ] {
        let err = builder.create(store.clone(), path).unwrap_err();
        assert_eq!(err.to_string(), message);
        let err = Group::create(store.clone(), path, JsonMap::new()).unwrap_err();
        assert!(matches!(err, Error::NodeExists { .. }), "{path}: {err}");
    }
    // Nothing was written over what is there.
    assert_eq!(
        store
            .get(&StoreKey::new("broken/zarr.json").unwrap(), None)
            .unwrap()
            .unwrap(),
        b"{ not json"
    );
    for path in ["/stray", "/g/a", "/new"] {
        let array = builder.create(store.clone(), path).unwrap();
        array.write_region(&Region::whole(&[1]), &[7u8]).unwrap();
        let reopened = Array::open(store.clone(), path).unwrap();
        assert_eq!(
            reopened.read_region::<u8>(&Region::whole(&[1])).unwrap(),
            [7]
        );
        let err = builder.create(store.clone(), path).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("`{path}` already exists (an array)")
        );
    }
}

#[test]
fn groups_list_children_and_walk_the_hierarchy() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut attributes = JsonMap::new();
    attributes.insert("title".into(), "root ✓".into());
    let root = Group::create(store.clone(), "/", attributes).unwrap();
    Group::create(store.clone(), "/b", JsonMap::new()).unwrap();
    Group::create(store.clone(), "/b/inner", JsonMap::new()).unwrap();
    let a = Array::builder(&[4], DataType::UInt8, &[2])
        .create(store.clone(), "/a")
        .unwrap();
    a.write_region(&Region::whole(&[4]), &[1u8, 2, 3, 4])
        .unwrap();
    Array::builder(&[2], DataType::Float32, &[2])
        .create(store.clone(), "/b/inner/x")
        .unwrap();
    let children: Vec<String> = root
        .children()
        .unwrap()
        .iter()
        .map(|n| n.path().to_string())
        .collect();
    assert_eq!(
        children,
        vec!["/a", "/b"],
        "chunk directories are not children"
    );
    let walk: Vec<String> = root
        .walk()
        .unwrap()
        .iter()
        .map(|n| format!("{} {:?}", n.path(), n.kind()))
        .collect();
    assert_eq!(
        walk,
        vec!["/a Array", "/b Group", "/b/inner Group", "/b/inner/x Array"]
    );
    assert_eq!(
        Group::open(store, "/").unwrap().attributes()["title"],
        "root ✓"
    );
}

#[cfg(feature = "ndarray")]
#[test]
fn ndarray_round_trip_including_non_standard_layout() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[3, 4], DataType::Float64, &[2, 3])
        .create(store, "/n")
        .unwrap();
    let data = ndarray::Array2::from_shape_fn((4, 3), |(i, j)| (i * 10 + j) as f64);
    array.write_ndarray(&[0, 0], data.t().into_dyn()).unwrap();
    let back = array.read_ndarray::<f64>(&Region::whole(&[3, 4])).unwrap();
    assert_eq!(back, data.t().into_dyn());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Random writes then random reads agree with a plain in-memory model.
    #[test]
    fn random_writes_and_reads_match_a_reference_model(
        shape in prop::collection::vec(1u64..9, 1..4),
        chunk in prop::collection::vec(1u64..5, 3),
        writes in prop::collection::vec((prop::collection::vec(0u64..9, 3), prop::collection::vec(1u64..9, 3), any::<u16>()), 1..6),
        read in (prop::collection::vec(0u64..9, 3), prop::collection::vec(1u64..9, 3)),
    ) {
        let ndim = shape.len();
        let chunk = &chunk[..ndim];
        let store = Arc::new(MemoryStore::new());
        let array = Array::builder(&shape, DataType::UInt16, chunk).fill_value(7u16).create(store, "/p").unwrap();
        let n = shape.iter().product::<u64>() as usize;
        let mut model = vec![7u16; n];
        let clip = |start: &[u64], len: &[u64]| {
            let start: Vec<u64> = (0..ndim).map(|d| start[d] % shape[d]).collect();
            let len: Vec<u64> = (0..ndim).map(|d| len[d].min(shape[d] - start[d])).collect();
            Region::new(start, len)
        };
        let index = |idx: &[u64]| idx.iter().zip(&shape).fold(0u64, |acc, (i, s)| acc * s + i) as usize;
        let each = |region: &Region, f: &mut dyn FnMut(usize, usize)| {
            let count = region.num_elements().unwrap() as usize;
            for flat in 0..count {
                let mut rem = flat;
                let mut idx = vec![0u64; ndim];
                for d in (0..ndim).rev() {
                    idx[d] = region.start()[d] + (rem as u64 % region.shape()[d]);
                    rem /= region.shape()[d] as usize;
                }
                f(flat, index(&idx));
            }
        };
        for (start, len, seed) in &writes {
            let region = clip(start, len);
            let count = region.num_elements().unwrap() as usize;
            let data: Vec<u16> = (0..count).map(|i| seed.wrapping_add(i as u16 * 31)).collect();
            array.write_region(&region, &data).unwrap();
            each(&region, &mut |flat, at| model[at] = data[flat]);
        }
        let region = clip(&read.0, &read.1);
        let got: Vec<u16> = array.read_region(&region).unwrap();
        let mut expected = vec![0u16; got.len()];
        each(&region, &mut |flat, at| expected[flat] = model[at]);
        prop_assert_eq!(got, expected);
    }
}

#[test]
fn old_transpose_order_names_are_rewritten_as_permutations() {
    let store = Arc::new(MemoryStore::new());
    let codecs: Vec<ExtensionObject> = serde_json::from_str::<Vec<serde_json::Value>>(
        r#"[{"name": "transpose", "configuration": {"order": "F"}}, {"name": "bytes", "configuration": {"endian": "little"}}]"#,
    )
    .unwrap()
    .iter()
    .map(|v| zarrkit::format::v3::extension_from_json(v, "codecs").unwrap())
    .collect();
    let mut array = Array::builder(&[2, 3, 4], DataType::UInt8, &[2, 3, 4])
        .codecs_metadata(codecs)
        .create(store.clone(), "/t")
        .unwrap();
    let data: Vec<u8> = (0..24).collect();
    array
        .write_region(&Region::whole(&[2, 3, 4]), &data)
        .unwrap();
    // "F" reverses the axes: stored element (k, j, i) is logical (i, j, k).
    let stored = store.get(&key("t/c/0/0/0"), None).unwrap().unwrap();
    assert_eq!(&stored[..4], &[0, 12, 4, 16]);
    array.set_attributes(JsonMap::new()).unwrap();
    let document: serde_json::Value =
        serde_json::from_slice(&store.get(&key("t/zarr.json"), None).unwrap().unwrap()).unwrap();
    assert_eq!(
        document["codecs"][0]["configuration"]["order"],
        serde_json::json!([2, 1, 0])
    );
    assert_eq!(
        Array::open(store, "/t")
            .unwrap()
            .read_region::<u8>(&Region::whole(&[2, 3, 4]))
            .unwrap(),
        data
    );
}

#[test]
fn a_crc32c_mismatch_is_an_error_naming_the_chunk() {
    let store = Arc::new(MemoryStore::new());
    let codecs: Vec<ExtensionObject> = vec![
        ExtensionObject::with_configuration(
            "bytes",
            serde_json::from_str(r#"{"endian":"little"}"#).unwrap(),
        ),
        ExtensionObject::new("crc32c"),
    ];
    let array = Array::builder(&[4], DataType::UInt32, &[4])
        .codecs_metadata(codecs)
        .create(store.clone(), "/sum")
        .unwrap();
    array
        .write_region(&Region::whole(&[4]), &[10u32, 20, 30, 40])
        .unwrap();
    let mut stored = store.get(&key("sum/c/0"), None).unwrap().unwrap();
    stored[2] ^= 0x40;
    store.set(&key("sum/c/0"), &stored).unwrap();
    let err = array.read_region::<u32>(&Region::whole(&[4])).unwrap_err();
    assert_eq!(err.to_string(), "cannot decode chunk `sum/c/0`");
    let cause = std::error::Error::source(&err).unwrap().to_string();
    assert!(
        cause.starts_with("crc32c checksum mismatch (stored 0x"),
        "{cause}"
    );
}

#[test]
fn contiguous_whole_chunks_decode_straight_into_the_output_in_either_byte_order() {
    for endian in ["little", "big"] {
        let store = Arc::new(MemoryStore::new());
        let codecs = vec![
            ExtensionObject::with_configuration(
                "bytes",
                serde_json::from_str(&format!(r#"{{"endian":"{endian}"}}"#)).unwrap(),
            ),
            ExtensionObject::with_configuration(
                "zstd",
                serde_json::from_str(r#"{"level":1,"checksum":true}"#).unwrap(),
            ),
        ];
        // Chunks of whole rows: each chunk is one contiguous run of the output.
        let array = Array::builder(&[6, 5], DataType::Int16, &[2, 5])
            .fill_value(-9i16)
            .codecs_metadata(codecs)
            .create(store.clone(), "/d")
            .unwrap();
        let data: Vec<i16> = (0..30).map(|i| i * 1000 - 15000).collect();
        array
            .write_region(&Region::new(vec![0, 0], vec![4, 5]), &data[..20])
            .unwrap();
        let got: Vec<i16> = array.read_region(&Region::whole(&[6, 5])).unwrap();
        assert_eq!(&got[..20], &data[..20], "{endian}");
        assert!(
            got[20..].iter().all(|&v| v == -9),
            "{endian}: the missing chunk reads as fill"
        );
        // A region that is not chunk-aligned goes through the staged path.
        let got: Vec<i16> = array
            .read_region(&Region::new(vec![1, 1], vec![2, 3]))
            .unwrap();
        assert_eq!(
            got,
            vec![data[6], data[7], data[8], data[11], data[12], data[13]],
            "{endian}"
        );
    }
}
