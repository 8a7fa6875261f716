//! Migrating hierarchies between formats: every committed fixture store to
//! v3 (and to every other format that can hold it), v3 → v2 → v3 round
//! trips, re-encoding what the target cannot hold, refusals, verification,
//! and zarr-python 3.1 reading migrated stores.

use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{DataType, ExtensionObject, JsonMap};
use zarrkit::migrate::{self, Action, MigrateError, Phase};
use zarrkit::store::{
    ByteRange, FilesystemStore, ListDir, MemoryStore, Store, StoreCapabilities, StoreError,
    StoreKey, StorePrefix,
};
use zarrkit::{Array, Group, Node, Region};

#[derive(Debug, Deserialize)]
struct Manifest {
    fixture: Vec<Fixture>,
}

#[derive(Debug, Deserialize)]
struct Fixture {
    store: String,
    node: String,
    sha256: String,
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata")
}

/// The fixtures, grouped by store directory.
fn fixture_stores() -> BTreeMap<String, Vec<Fixture>> {
    let text = std::fs::read_to_string(testdata().join("fixtures.toml")).unwrap();
    let manifest: Manifest = toml::from_str(&text).unwrap();
    let mut stores: BTreeMap<String, Vec<Fixture>> = BTreeMap::new();
    for fixture in manifest.fixture {
        stores
            .entry(fixture.store.clone())
            .or_default()
            .push(fixture);
    }
    stores
}

fn open_fixture(store: &str) -> Arc<dyn Store> {
    Arc::new(FilesystemStore::open_existing(testdata().join(store)).unwrap())
}

/// The SHA-256 of the values as little-endian C-order bytes, as the
/// fixture generators computed it.
fn digest(array: &Array) -> String {
    let mut bytes = array
        .read_region_bytes(&Region::whole(array.shape()))
        .unwrap();
    if cfg!(target_endian = "big") {
        let unit = match array.data_type().name().as_str() {
            "complex64" => 4,
            "complex128" => 8,
            _ => array.data_type().size(),
        };
        bytes.chunks_exact_mut(unit).for_each(<[u8]>::reverse);
    }
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every node of a hierarchy, the root first; for a store without a root
/// node (as tensorstore writes), every node found by its document.
fn all_nodes(store: &Arc<dyn Store>) -> Vec<Node> {
    let root = match Node::open(Arc::clone(store), "/") {
        Ok(root) => root,
        Err(zarrkit::Error::NodeNotFound { .. }) => {
            return zarrkit::format::find_nodes(store.as_ref())
                .unwrap()
                .into_iter()
                .map(|path| Node::open(Arc::clone(store), path.as_str()).unwrap())
                .collect();
        }
        Err(e) => panic!("{e}"),
    };
    let mut nodes = vec![root.clone()];
    if let Node::Group(group) = &root {
        nodes.extend(group.walk().unwrap());
    }
    nodes
}

fn object(value: serde_json::Value) -> JsonMap {
    match value {
        serde_json::Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn codec(name: &str, configuration: serde_json::Value) -> ExtensionObject {
    ExtensionObject::with_configuration(name, object(configuration))
}

/// Checks that `b`, migrated to `to`, holds the values and fill value of
/// `a` bit for bit, except that where `to` spells every NaN `"NaN"` (v2, v1,
/// the 2019 drafts; issue #9 item 10) a NaN with a payload may have become
/// the plain NaN, and nothing else may differ.
fn assert_same_values(a: &Array, b: &Array, to: ZarrFormat) {
    if digest(a) == digest(b) && a.fill_value() == b.fill_value() {
        return;
    }
    assert!(
        !matches!(to, ZarrFormat::V3 | ZarrFormat::V3Draft2022),
        "{} → {to}: the values differ",
        a.path()
    );
    let is_nan = |element: &[u8]| match *element {
        [a, b, c, d] => f32::from_ne_bytes([a, b, c, d]).is_nan(),
        [a, b, c, d, e, f, g, h] => f64::from_ne_bytes([a, b, c, d, e, f, g, h]).is_nan(),
        _ => false,
    };
    let size = match a.data_type() {
        DataType::Float32 => 4,
        DataType::Float64 => 8,
        other => panic!(
            "{} → {to}: the values of a `{other:?}` array differ",
            a.path()
        ),
    };
    let same = |x: &[u8], y: &[u8]| {
        x.len() == y.len()
            && x.chunks(size)
                .zip(y.chunks(size))
                .all(|(p, q)| p == q || (is_nan(p) && is_nan(q)))
    };
    let read = |x: &Array| x.read_region_bytes(&Region::whole(x.shape())).unwrap();
    assert!(
        same(&read(a), &read(b)),
        "{} → {to}: the values differ beyond NaN payloads",
        a.path()
    );
    assert!(
        same(a.fill_value().as_bytes(), b.fill_value().as_bytes()),
        "{} → {to}: the fill values differ beyond NaN payloads",
        a.path()
    );
}

/// Checks that `dst` holds every node of `src` in `to`, with the same kind,
/// attributes (plus `extra` for arrays), and values.
fn assert_same_hierarchy(src: &Arc<dyn Store>, dst: &Arc<dyn Store>, to: ZarrFormat) {
    let nodes = all_nodes(src);
    let mut migrated = all_nodes(dst);
    // A source without a root node gets the groups above its nodes, empty.
    migrated.retain(|after| {
        let in_source = nodes.iter().any(|n| n.path() == after.path());
        if !in_source {
            assert_eq!(after.kind(), zarrkit::NodeKind::Group, "{}", after.path());
            assert!(after.attributes().is_empty(), "{}", after.path());
        }
        in_source
    });
    let paths = |n: &[Node]| n.iter().map(|n| n.path().clone()).collect::<Vec<_>>();
    assert_eq!(paths(&migrated), paths(&nodes));
    for (before, after) in nodes.iter().zip(&migrated) {
        assert_eq!(after.format(), to, "{}", after.path());
        assert_eq!(after.kind(), before.kind(), "{}", after.path());
        for (name, value) in before.attributes() {
            // xarray's dimension names move into v3's `dimension_names`.
            if let (Node::Array(b), "_ARRAY_DIMENSIONS") = (after, name.as_str())
                && b.metadata().dimension_names.is_some()
            {
                let names = b.metadata().dimension_names.clone().unwrap();
                assert_eq!(json!(names), *value, "{}", after.path());
                assert!(!after.attributes().contains_key(name), "{}", after.path());
                continue;
            }
            assert_eq!(
                after.attributes().get(name),
                Some(value),
                "attribute {name} of {}",
                after.path()
            );
        }
        if let (Node::Array(a), Node::Array(b)) = (before, after) {
            assert_same_values(a, b, to);
            assert_eq!(a.chunk_shape(), b.chunk_shape(), "{}", a.path());
        }
    }
}

#[test]
fn every_fixture_store_migrates_to_v3_with_the_same_values_and_attributes() {
    let stores = fixture_stores();
    assert!(
        stores.len() >= 8,
        "the manifest lists {} stores",
        stores.len()
    );
    for (name, fixtures) in &stores {
        let src = open_fixture(name);
        let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let plan = migrate::plan(Arc::clone(&src), Arc::clone(&dst), ZarrFormat::V3)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let report = migrate::migrate(&plan, &mut |_| {}).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Every format's codecs can be said in v3: nothing is re-encoded
        // but structures whose fields differ in byte order (zarr-python
        // 2.18's, issue #9), as a v3 `struct` has one byte order.
        for (path, reason) in &report.arrays_reencoded {
            let source = Array::open(Arc::clone(&src), path.as_str()).unwrap();
            assert!(
                matches!(source.data_type(), DataType::Struct(_))
                    && reason.contains("differ in byte order"),
                "{name} {path}: {reason}"
            );
        }
        assert_eq!(report.chunks, plan.total_chunks(), "{name}");
        for fixture in fixtures {
            let array = Array::open(Arc::clone(&dst), &fixture.node).unwrap();
            assert_eq!(array.format(), ZarrFormat::V3, "{name} {}", fixture.node);
            assert_eq!(digest(&array), fixture.sha256, "{name} {}", fixture.node);
        }
        assert_same_hierarchy(&src, &dst, ZarrFormat::V3);
    }
}

#[test]
fn every_fixture_store_migrates_to_every_format_that_can_hold_it() {
    let mut migrated = 0;
    for name in fixture_stores().keys() {
        let src = open_fixture(name);
        for &to in ZarrFormat::ALL {
            let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
            let plan = match migrate::plan(Arc::clone(&src), Arc::clone(&dst), to) {
                Ok(plan) => plan,
                Err(MigrateError::NotRepresentable { path, what, .. }) => {
                    // A refusal names a feature; nothing has been written.
                    assert!(!what.is_empty(), "{name} → {to} {path}");
                    assert_eq!(dst.list().unwrap(), [], "{name} → {to}");
                    continue;
                }
                Err(e) => panic!("{name} → {to}: {e}"),
            };
            migrate::migrate(&plan, &mut |_| {}).unwrap_or_else(|e| panic!("{name} → {to}: {e}"));
            assert_same_hierarchy(&src, &dst, to);
            migrated += 1;
        }
    }
    // Every store goes at least to v3 and to its own format.
    assert!(migrated >= 2 * fixture_stores().len(), "{migrated}");
}

/// A v3 store: a group with attributes, a named 2-d array with gzip and a
/// partial edge chunk and a missing chunk, and a subgroup with a float array.
fn sample_v3() -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Group::create(Arc::clone(&store), "/", object(json!({"title": "sample"}))).unwrap();
    let named = Array::builder(&[5, 7], DataType::Int32, &[2, 3])
        .dimension_names(["y", "x"])
        .fill_value(-1i32)
        .codecs_metadata(vec![
            codec("bytes", json!({"endian": "little"})),
            codec("gzip", json!({"level": 1})),
        ])
        .attributes(object(json!({"units": "m"})))
        .create(Arc::clone(&store), "/named")
        .unwrap();
    // Rows 0..4 only: the chunks of the last chunk row are never written.
    let values: Vec<i32> = (0..28).collect();
    named
        .write_region(&Region::new(vec![0, 0], vec![4, 7]), &values)
        .unwrap();
    Group::create(Arc::clone(&store), "/sub", object(json!({"kind": "group"}))).unwrap();
    let floats = Array::builder(&[6], DataType::Float64, &[4])
        .codecs_metadata(vec![codec("bytes", json!({"endian": "big"}))])
        .create(Arc::clone(&store), "/sub/floats")
        .unwrap();
    floats
        .write_region(
            &Region::whole(&[6]),
            &[0.5f64, 1.5, 2.5, f64::NAN, -0.0, 1e300],
        )
        .unwrap();
    store
}

#[test]
fn v3_to_v2_and_back_copies_chunks_and_keeps_dimension_names_as_an_attribute() {
    let src = sample_v3();
    let v2: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let plan = migrate::plan(Arc::clone(&src), Arc::clone(&v2), ZarrFormat::V2).unwrap();
    let named = plan
        .nodes()
        .iter()
        .find(|n| n.path.as_str() == "/named")
        .unwrap();
    assert_eq!(named.action, Action::CopyChunks);
    // Rows 0..4 of a [5, 7] array in [2, 3] chunks: 2 × 3 chunks stored.
    assert_eq!(named.chunks, 6);
    assert!(
        named.notes.iter().any(|n| n.contains("_ARRAY_DIMENSIONS")),
        "{:?}",
        named.notes
    );
    assert!(
        named.notes.iter().any(|n| n.contains("chunk key encoding")),
        "{:?}",
        named.notes
    );
    let report = migrate::migrate(&plan, &mut |_| {}).unwrap();
    assert_eq!(report.arrays_copied, 2);
    assert_eq!(report.groups, 2);
    assert_eq!(report.chunks, 6 + 2);
    assert_eq!(report.bytes_read, report.bytes_written);
    assert_same_hierarchy(&src, &v2, ZarrFormat::V2);

    let in_v2 = Array::open(Arc::clone(&v2), "/named").unwrap();
    assert_eq!(in_v2.metadata().dimension_names, None);
    assert_eq!(in_v2.attributes()["_ARRAY_DIMENSIONS"], json!(["y", "x"]));
    assert_eq!(in_v2.attributes()["units"], json!("m"));
    // The bytes are the same, under v2 keys.
    let source = Array::open(Arc::clone(&src), "/named").unwrap();
    let key_v3 = source.chunk_key(&[1, 2]).unwrap();
    let key_v2 = in_v2.chunk_key(&[1, 2]).unwrap();
    assert_eq!(key_v3.as_str(), "named/c/1/2");
    // `default` with `/` becomes `v2` with `/`.
    assert_eq!(key_v2.as_str(), "named/1/2");
    assert_eq!(
        src.get(&key_v3, None).unwrap().unwrap(),
        v2.get(&key_v2, None).unwrap().unwrap()
    );
    assert_eq!(
        v2.get(&in_v2.chunk_key(&[2, 0]).unwrap(), None).unwrap(),
        None
    );

    // And back to v3: the attribute becomes the dimension names again.
    let back: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let plan = migrate::plan(Arc::clone(&v2), Arc::clone(&back), ZarrFormat::V3).unwrap();
    migrate::migrate(&plan, &mut |_| {}).unwrap();
    assert_same_hierarchy(&src, &back, ZarrFormat::V3);
    let again = Array::open(back, "/named").unwrap();
    assert_eq!(
        again.metadata().dimension_names,
        Some(vec![Some("y".into()), Some("x".into())])
    );
    assert!(!again.attributes().contains_key("_ARRAY_DIMENSIONS"));
    assert_eq!(again.attributes()["units"], json!("m"));
    assert_eq!(
        again.read_region::<i32>(&Region::whole(&[5, 7])).unwrap()[..8],
        [0, 1, 2, 3, 4, 5, 6, 7]
    );
    assert_eq!(
        again
            .read_region::<i32>(&Region::new(vec![4, 6], vec![1, 1]))
            .unwrap(),
        [-1]
    );
}

#[test]
fn a_chain_the_target_cannot_hold_is_re_encoded_and_reported() {
    let src: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::builder(&[10], DataType::UInt16, &[4])
        .codecs_metadata(vec![
            codec("bytes", json!({"endian": "little"})),
            codec("zstd", json!({"level": 3, "checksum": false})),
            codec("crc32c", json!({})),
        ])
        .create(Arc::clone(&src), "/")
        .unwrap();
    let values: Vec<u16> = (100..110).collect();
    array.write_region(&Region::whole(&[10]), &values).unwrap();

    let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let plan = migrate::plan(Arc::clone(&src), Arc::clone(&dst), ZarrFormat::V2).unwrap();
    let Action::ReEncode { reason, codecs } = &plan.nodes()[0].action else {
        panic!("{:?}", plan.nodes()[0].action);
    };
    // v2 holds a checksum as its compressor, but not a compressor before it.
    assert!(reason.contains("`zstd` before the compressor"), "{reason}");
    // bytes and the source's compressor, which v2 can hold.
    assert_eq!(codecs, &["bytes", "zstd"]);
    let mut phases = Vec::new();
    let report = migrate::migrate(&plan, &mut |p| phases.push((p.phase, p.chunks_done))).unwrap();
    assert_eq!(report.arrays_copied, 0);
    assert_eq!(report.arrays_reencoded.len(), 1);
    assert_eq!(report.arrays_reencoded[0].0.as_str(), "/");
    assert_eq!(report.chunks, 3);
    assert_eq!(report.chunks_verified, 3);
    assert_eq!(phases, [(Phase::Copy, 3), (Phase::Verify, 3)]);
    let migrated = Array::open(dst, "/").unwrap();
    assert_eq!(migrated.format(), ZarrFormat::V2);
    let names: Vec<String> = migrated
        .metadata()
        .codecs
        .iter()
        .map(|c| c.name.clone())
        .collect();
    assert_eq!(names, ["bytes", "zstd"]);
    assert_eq!(
        migrated.read_region::<u16>(&Region::whole(&[10])).unwrap(),
        values
    );
}

#[test]
fn partly_named_dimensions_into_v2_are_refused_naming_the_node() {
    let src: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Group::create(Arc::clone(&src), "/", JsonMap::new()).unwrap();
    Array::builder(&[2, 2], DataType::Int8, &[2, 2])
        .dimension_names_opt(vec![Some("y".into()), None])
        .create(Arc::clone(&src), "/half")
        .unwrap();
    let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let error = migrate::plan(src, Arc::clone(&dst), ZarrFormat::V2).unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(&error, MigrateError::NotRepresentable { path, format: ZarrFormat::V2, .. } if path.as_str() == "/half"),
        "{message}"
    );
    assert!(message.contains("`/half`"), "{message}");
    assert!(message.contains("unnamed"), "{message}");
    assert_eq!(dst.list().unwrap(), []);
}

#[test]
fn a_destination_that_is_not_empty_is_refused() {
    let src = sample_v3();
    let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
    dst.set(&StoreKey::new("keep.txt").unwrap(), b"mine")
        .unwrap();
    let error = migrate::plan(src, Arc::clone(&dst), ZarrFormat::V3).unwrap_err();
    assert!(
        matches!(&error, MigrateError::DestinationNotEmpty { key } if key.as_str() == "keep.txt"),
        "{error}"
    );
    assert_eq!(dst.list().unwrap().len(), 1);
}

/// A store that either cannot list by prefix, or flips the last byte of
/// the first byte of the value it is given under `corrupt`.
#[derive(Debug, Default)]
struct Quirky {
    inner: MemoryStore,
    no_list_prefix: bool,
    corrupt: Option<&'static str>,
}

impl Store for Quirky {
    fn name(&self) -> &'static str {
        "quirky store"
    }
    fn capabilities(&self) -> StoreCapabilities {
        self.inner.capabilities()
    }
    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get(key, range)
    }
    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
        let mut value = value.to_vec();
        if self.corrupt.is_some_and(|k| key.as_str() == k)
            && let Some(first) = value.first_mut()
        {
            *first ^= 0x01;
        }
        self.inner.set(key, &value)
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
        if self.no_list_prefix {
            return Err(StoreError::Unsupported {
                store: "quirky store",
                operation: "listing by prefix",
            });
        }
        self.inner.list_prefix(prefix)
    }
    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        self.inner.list_dir(prefix)
    }
}

#[test]
fn a_chunk_that_reads_back_differently_fails_verification_naming_it() {
    let src = sample_v3();
    // The uncompressed big-endian float chunk: a flipped bit still decodes,
    // to another value of element 4.
    let dst: Arc<dyn Store> = Arc::new(Quirky {
        corrupt: Some("sub/floats/c/1"),
        ..Quirky::default()
    });
    let plan = migrate::plan(src, dst, ZarrFormat::V3).unwrap();
    let error = migrate::migrate(&plan, &mut |_| {}).unwrap_err();
    assert!(
        matches!(&error, MigrateError::Mismatch { path, chunk_coords, .. }
            if path.as_str() == "/sub/floats" && chunk_coords == &[1]),
        "{error}"
    );
    assert!(error.to_string().contains("[4..6]"), "{error}");
}

#[test]
fn a_source_that_cannot_list_is_probed_chunk_by_chunk() {
    let quirky = Quirky {
        no_list_prefix: true,
        ..Quirky::default()
    };
    let src: Arc<dyn Store> = Arc::new(quirky);
    let array = Array::builder(&[9], DataType::Int16, &[2])
        .format(ZarrFormat::V2)
        .create(Arc::clone(&src), "/")
        .unwrap();
    array
        .write_region(&Region::new(vec![2], vec![3]), &[7i16, 8, 9])
        .unwrap();
    let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let plan = migrate::plan(src, Arc::clone(&dst), ZarrFormat::V3).unwrap();
    // Elements 2..5 lie in chunks 1 and 2.
    assert_eq!(plan.total_chunks(), 2);
    migrate::migrate(&plan, &mut |_| {}).unwrap();
    let migrated = Array::open(dst, "/").unwrap();
    assert_eq!(
        migrated.read_region::<i16>(&Region::whole(&[9])).unwrap(),
        [0, 0, 7, 8, 9, 0, 0, 0, 0]
    );
}

/// The Python with zarr-python 3.1, or `None` to skip (see `interop.rs`).
fn reference_python() -> Option<PathBuf> {
    if let Some(python) = std::env::var_os("ZARRKIT_PYTHON").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(python));
    }
    assert!(
        std::env::var("ZARRKIT_REQUIRE_INTEROP").as_deref() != Ok("1"),
        "ZARRKIT_REQUIRE_INTEROP=1 but ZARRKIT_PYTHON is unset"
    );
    eprintln!("skipping: set ZARRKIT_PYTHON to a Python with zarr 3.1");
    None
}

/// zarr-python reads every array of the store, and tensorstore those whose
/// codecs are core v3 ones (it has no numcodecs codecs), and both compare
/// the values, as little-endian C-order bytes, with `expected/<n>.bin`.
/// Prints how many arrays each read.
const READ_BACK: &str = r#"
import json, os, sys, zarr, numpy as np, tensorstore as ts
root = sys.argv[1]
arrays = json.load(open(root + "/../expected.json"))
def le_bytes(values):
    values = np.asarray(values)
    dt = values.dtype.newbyteorder("<") if values.dtype.byteorder not in "|=" else values.dtype
    return np.ascontiguousarray(values.astype(dt)).tobytes()
read_ts = 0
for i, entry in enumerate(arrays):
    path = entry["path"]
    want = open(f"{root}/../expected/{i}.bin", "rb").read()
    a = zarr.open_array(root, path=path.lstrip("/"), mode="r") if path != "/" else zarr.open_array(root, mode="r")
    assert a.metadata.zarr_format == 3, path
    got = le_bytes(a[...])
    assert got == want, f"zarr-python {path}: {len(got)} bytes differ from {len(want)}"
    if entry["core_codecs"]:
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": os.path.join(root, path.lstrip("/"))}}, read=True).result()
        got = le_bytes(t.read().result())
        assert got == want, f"tensorstore {path}: {len(got)} bytes differ from {len(want)}"
        read_ts += 1
print(len(arrays), read_ts)
"#;

/// Codecs of the v3 core spec, which tensorstore reads.
const CORE_CODECS: &[&str] = &[
    "bytes",
    "transpose",
    "gzip",
    "zstd",
    "blosc",
    "crc32c",
    "sharding_indexed",
];

#[test]
fn zarr_python_and_tensorstore_read_migrated_v1_v2_and_draft_stores_as_zarrkit_reads_the_sources() {
    let Some(python) = reference_python() else {
        return;
    };
    let mut tensorstore_total = 0;
    for name in [
        "fixtures/v2/zarr-python.zarr",
        "fixtures/v3-draft-2019-json/zarr-python-2.18.zarr",
        "fixtures/v3-draft-2022/spec-text.zarr",
        "fixtures/v1/float32_blosc_zstd_neg_inf",
        "fixtures/v1/spec_example_int32_zlib",
    ] {
        let src = open_fixture(name);
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("migrated.zarr");
        let dst: Arc<dyn Store> = Arc::new(FilesystemStore::new(&root).unwrap());
        let plan = migrate::plan(Arc::clone(&src), dst, ZarrFormat::V3).unwrap();
        migrate::migrate(&plan, &mut |_| {}).unwrap();
        let mut paths = Vec::new();
        let mut tensorstore = 0;
        std::fs::create_dir(dir.path().join("expected")).unwrap();
        for node in all_nodes(&src) {
            let Node::Array(array) = node else { continue };
            // zarr-python 3.1 has no v3 raw-bits types (`r24`): it refuses
            // to open such arrays at all.
            if array.data_type().name().starts_with('r') {
                continue;
            }
            let mut bytes = array
                .read_region_bytes(&Region::whole(array.shape()))
                .unwrap();
            if cfg!(target_endian = "big") {
                let unit = array.data_type().endian_unit().max(1);
                bytes.chunks_exact_mut(unit).for_each(<[u8]>::reverse);
            }
            std::fs::write(
                dir.path().join(format!("expected/{}.bin", paths.len())),
                bytes,
            )
            .unwrap();
            let core_codecs = array
                .metadata()
                .codecs
                .iter()
                .all(|c| CORE_CODECS.contains(&c.name.as_str()));
            paths.push(json!({"path": array.path().as_str(), "core_codecs": core_codecs}));
            tensorstore += usize::from(core_codecs);
        }
        std::fs::write(
            dir.path().join("expected.json"),
            serde_json::to_string(&paths).unwrap(),
        )
        .unwrap();
        let output = std::process::Command::new(&python)
            .arg("-c")
            .arg(READ_BACK)
            .arg(&root)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{name}: zarr-python failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            stdout.trim(),
            format!("{} {tensorstore}", paths.len()),
            "{name}"
        );
        assert!(!paths.is_empty(), "{name}");
        tensorstore_total += tensorstore;
    }
    assert!(tensorstore_total >= 5, "{tensorstore_total}");
}

#[test]
fn a_sharded_array_is_copied_into_v3_and_re_encoded_shard_by_shard_into_v2() {
    let src: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::builder(&[10], DataType::UInt16, &[4])
        .codecs_metadata(vec![codec(
            "sharding_indexed",
            json!({
                "chunk_shape": [2],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                           {"name": "gzip", "configuration": {"level": 1}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                 {"name": "crc32c"}],
                "index_location": "end"
            }),
        )])
        .create(Arc::clone(&src), "/")
        .unwrap();
    let values: Vec<u16> = (500..510).collect();
    array.write_region(&Region::whole(&[10]), &values).unwrap();

    let v3: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let plan = migrate::plan(Arc::clone(&src), Arc::clone(&v3), ZarrFormat::V3).unwrap();
    assert_eq!(plan.nodes()[0].action, Action::CopyChunks);
    // Three shards of four elements.
    assert_eq!(plan.total_chunks(), 3);
    migrate::migrate(&plan, &mut |_| {}).unwrap();
    assert_eq!(
        src.get(&StoreKey::new("c/1").unwrap(), None).unwrap(),
        v3.get(&StoreKey::new("c/1").unwrap(), None).unwrap()
    );

    let v2: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let plan = migrate::plan(Arc::clone(&src), Arc::clone(&v2), ZarrFormat::V2).unwrap();
    let Action::ReEncode { reason, codecs } = &plan.nodes()[0].action else {
        panic!("{:?}", plan.nodes()[0].action);
    };
    assert!(reason.contains("sharding_indexed"), "{reason}");
    assert_eq!(codecs, &["bytes", "zstd"]);
    let report = migrate::migrate(&plan, &mut |_| {}).unwrap();
    assert_eq!(report.chunks, 3);
    let migrated = Array::open(v2, "/").unwrap();
    // Each shard becomes one v2 chunk.
    assert_eq!(migrated.chunk_shape(), [4]);
    assert_eq!(
        migrated.read_region::<u16>(&Region::whole(&[10])).unwrap(),
        values
    );
}

#[test]
fn fields_the_target_would_not_read_back_are_dropped_with_a_note() {
    // v1 keeps unknown keys such as `creator`; v3 would refuse to read a
    // field without `"must_understand": false`.
    let src = open_fixture("fixtures/v1/uint16_big_bz2_extra_keys");
    let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let plan = migrate::plan(src, Arc::clone(&dst), ZarrFormat::V3).unwrap();
    let notes = &plan.nodes()[0].notes;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("`creator`") && n.contains("\"library\"")),
        "{notes:?}"
    );
    migrate::migrate(&plan, &mut |_| {}).unwrap();
    let migrated = Array::open(dst, "/").unwrap();
    assert!(migrated.metadata().extra_fields.is_empty());
}

#[test]
fn a_hierarchy_with_groups_is_refused_by_a_format_without_groups() {
    let src = sample_v3();
    let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let error = migrate::plan(src, Arc::clone(&dst), ZarrFormat::V1).unwrap_err();
    assert!(
        matches!(&error, MigrateError::NotRepresentable { path, format: ZarrFormat::V1, .. } if path.is_root()),
        "{error}"
    );
    assert!(error.to_string().contains("groups"), "{error}");
    assert_eq!(dst.list().unwrap(), []);
}

/// Runs `script` with `python` and `args`; returns its stdout.
fn run_python(python: &Path, script: &str, args: &[&Path], envs: &[(&str, &str)]) -> String {
    let mut all = vec![std::ffi::OsStr::new("-c"), script.as_ref()];
    all.extend(args.iter().map(|a| a.as_os_str()));
    crate::support::run(python, &all, envs)
}

/// Reads the array at the root of argv[1] (v2 or, with
/// `ZARR_V3_EXPERIMENTAL_API=1` and argv[2] `v3`, zarr-python 2.x's
/// experimental v3 layout) and prints its fill value and elements.
const READ_NAN_FILL: &str = r#"
import sys, types
sys.modules["zarr.tests.test_storage_v3"] = types.ModuleType("zarr.tests.test_storage_v3")
sys.modules["zarr.tests.test_storage_v3"].DummyStorageTransfomer = type("D", (), {"extension_uri": None})
import zarr, numpy as np
if len(sys.argv) > 2:
    from zarr._storage.v3 import DirectoryStoreV3
    a = zarr.open_array(DirectoryStoreV3(sys.argv[1]), mode="r", path="a", zarr_version=3)
else:
    a = zarr.open_array(sys.argv[1], mode="r")
fill = np.float32(a.fill_value)
values = a[...]
assert np.isnan(fill), fill
assert values.dtype == np.float32, values.dtype
assert values[:2].tolist() == [1.0, 2.0], values
assert np.isnan(values[2:]).all(), values
print("ok", hex(fill.view(np.uint32)))
"#;

/// Item 10 of issue #9: a v3 `float32` array whose fill value is a NaN
/// with a payload, migrated to v2 and to zarr-python 2.x's experimental v3
/// layout (which spell every NaN `"NaN"`): zarr-python 3.1 and 2.18 read
/// the v2 result, zarr-python 2.18 the 2019 layout, with a NaN fill value.
#[test]
fn zarr_python_reads_a_nan_payload_fill_value_migrated_to_v2_and_the_2019_layout() {
    let Some((zarr3, zarr2)) = crate::support::zarr3_and_zarr2() else {
        return;
    };
    let src: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Group::create(Arc::clone(&src), "/", JsonMap::new()).unwrap();
    let a = Array::builder(&[6], DataType::Float32, &[2])
        .fill_value(f32::from_bits(0x7fc0_0001))
        .create(Arc::clone(&src), "/a")
        .unwrap();
    a.write_region(&Region::new(vec![0], vec![2]), &[1.0f32, 2.0])
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for to in [ZarrFormat::V2, ZarrFormat::V3Draft2019Json] {
        let root = dir.path().join(to.name());
        let dst: Arc<dyn Store> = Arc::new(FilesystemStore::new(&root).unwrap());
        let plan = migrate::plan(Arc::clone(&src), dst, to).unwrap();
        assert!(
            plan.nodes()[1]
                .notes
                .iter()
                .any(|n| n.contains("plain NaN")),
            "{:?}",
            plan.nodes()[1].notes
        );
        migrate::migrate(&plan, &mut |_| {}).unwrap();
        if to == ZarrFormat::V2 {
            let array = root.join("a");
            for python in [&zarr3, &zarr2] {
                let out = run_python(python, READ_NAN_FILL, &[&array], &[]);
                assert_eq!(out.trim(), "ok 0x7fc00000", "{}", python.display());
            }
        } else {
            let out = run_python(
                &zarr2,
                READ_NAN_FILL,
                &[&root, Path::new("v3")],
                &[("ZARR_V3_EXPERIMENTAL_API", "1")],
            );
            assert_eq!(out.trim(), "ok 0x7fc00000");
        }
    }
}

/// Opens argv[1] as a hierarchy (`zarr.open_group`) in zarr-python, and
/// prints the group members it lists and the sum of every array's elements.
const OPEN_HIERARCHY: &str = r#"
import sys, zarr, numpy as np
root = zarr.open_group(sys.argv[1], mode="r")
paths = []
total = 0.0
def visit(group, prefix):
    global total
    for name in sorted(group.group_keys()):
        paths.append(prefix + name + "/")
        visit(group[name], prefix + name + "/")
    for name in sorted(group.array_keys()):
        paths.append(prefix + name)
        total += float(np.asarray(group[name][...], dtype=np.float64).sum())
visit(root, "")
print(" ".join(paths), round(total, 6))
"#;

/// Item 6 of issue #9: tensorstore's stores with arrays at `/a` and `/b/c`
/// and no group documents (testdata/fixtures/no-root/) migrate with the
/// groups `/` and `/b` created, and zarr-python (3.1 for v3 and v2, 2.18
/// for v2) opens the result as one hierarchy with every array.
#[test]
fn zarr_python_opens_a_store_without_a_root_node_as_a_hierarchy_after_migration() {
    let Some((zarr3, zarr2)) = crate::support::zarr3_and_zarr2() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for source in ["fixtures/no-root/v2.zarr", "fixtures/no-root/v3.zarr"] {
        let src = open_fixture(source);
        let mut expected_total = 0.0;
        for path in ["/a", "/b/c"] {
            let array = Array::open(Arc::clone(&src), path).unwrap();
            let region = Region::whole(array.shape());
            expected_total += match array.data_type() {
                DataType::Int32 => array
                    .read_region::<i32>(&region)
                    .unwrap()
                    .iter()
                    .map(|&v| f64::from(v))
                    .sum::<f64>(),
                _ => array.read_region::<f64>(&region).unwrap().iter().sum(),
            };
        }
        for to in [ZarrFormat::V3, ZarrFormat::V2] {
            let root = dir
                .path()
                .join(format!("{}-{}", source.replace('/', "_"), to.name()));
            let dst: Arc<dyn Store> = Arc::new(FilesystemStore::new(&root).unwrap());
            let plan = migrate::plan(Arc::clone(&src), Arc::clone(&dst), to).unwrap();
            let created: Vec<&str> = plan
                .nodes()
                .iter()
                .filter(|n| n.notes.iter().any(|note| note.starts_with("created")))
                .map(|n| n.path.as_str())
                .collect();
            assert_eq!(created, ["/", "/b"], "{source} → {to}");
            let report = migrate::migrate(&plan, &mut |_| {}).unwrap();
            assert_eq!(report.groups, 2, "{source} → {to}");
            assert_eq!(report.arrays_copied, 2, "{source} → {to}");
            let pythons: &[&PathBuf] = if to == ZarrFormat::V2 {
                &[&zarr3, &zarr2]
            } else {
                &[&zarr3]
            };
            for python in pythons {
                let out = run_python(python, OPEN_HIERARCHY, &[&root], &[]);
                assert_eq!(
                    out.trim(),
                    format!("b/ b/c a {}", (expected_total * 1e6).round() / 1e6),
                    "{source} → {to} read by {}",
                    python.display()
                );
            }
        }
    }
}

/// Runs `testdata/generate/xarray_interop.py MODE PATH FORMAT CONSOLIDATED`.
fn xarray(python: &Path, mode: &str, path: &Path, format: u8, consolidated: bool) {
    let script = crate::support::script("xarray_interop.py");
    let format = format.to_string();
    let args = [
        script.as_os_str(),
        mode.as_ref(),
        path.as_os_str(),
        format.as_ref(),
        (if consolidated { "1" } else { "0" }).as_ref(),
    ];
    let stdout = crate::support::run(python, &args, &[]);
    assert_eq!(
        stdout.trim(),
        "ok",
        "xarray_interop.py {mode} {}",
        path.display()
    );
}

/// Item 11 of issue #9: xarray writes a dataset as v2 (with and without
/// consolidated metadata), zarrkit migrates it to v3, and xarray opens the
/// result as v3 (`consolidated=True` when the source had `.zmetadata`) and
/// finds it identical (`xr.testing.assert_identical`): the dimension names
/// moved from `_ARRAY_DIMENSIONS` into `dimension_names`, the fill value
/// into xarray's `_FillValue`, the consolidated metadata rewritten. And
/// back: xarray's v3 dataset migrated to v2 opens identical in xarray.
#[test]
fn xarray_opens_its_v2_dataset_migrated_to_v3_and_back_identical() {
    let Some(python) = reference_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for consolidated in [true, false] {
        for (from, to, to_format) in [(2u8, 3u8, ZarrFormat::V3), (3, 2, ZarrFormat::V2)] {
            let name = format!("{from}-to-{to}-{consolidated}");
            let src_path = dir.path().join(format!("{name}-src.zarr"));
            let dst_path = dir.path().join(format!("{name}-dst.zarr"));
            xarray(&python, "write", &src_path, from, consolidated);
            let src: Arc<dyn Store> = Arc::new(FilesystemStore::new(&src_path).unwrap());
            let dst: Arc<dyn Store> = Arc::new(FilesystemStore::new(&dst_path).unwrap());
            let plan = migrate::plan(src, dst, to_format).unwrap();
            assert_eq!(plan.writes_consolidated(), consolidated, "{name}");
            let temp = plan
                .nodes()
                .iter()
                .find(|n| n.path.as_str() == "/temp")
                .unwrap();
            assert!(
                temp.notes.iter().any(|n| n.contains("_ARRAY_DIMENSIONS")),
                "{name}: {:?}",
                temp.notes
            );
            migrate::migrate(&plan, &mut |_| {}).unwrap();
            let migrated =
                Array::open(Arc::new(FilesystemStore::new(&dst_path).unwrap()), "/temp").unwrap();
            if to_format == ZarrFormat::V3 {
                assert_eq!(
                    migrated.metadata().dimension_names,
                    Some(vec![
                        Some("time".into()),
                        Some("y".into()),
                        Some("x".into())
                    ]),
                    "{name}"
                );
            } else {
                assert_eq!(
                    migrated.attributes()["_ARRAY_DIMENSIONS"],
                    json!(["time", "y", "x"]),
                    "{name}"
                );
            }
            xarray(&python, "check", &dst_path, to, consolidated);
        }
    }
}

/// Prints the attributes of the array at argv[1], as JSON with ASCII
/// escapes and sorted keys.
const READ_ATTRIBUTES: &str = r#"
import json, sys, zarr
print(json.dumps(dict(zarr.open_array(sys.argv[1], mode="r").attrs), sort_keys=True))
"#;

/// Issue #9, item 7, for v2 and v3: zarr-python 2.x writes `.zattrs` with
/// `ensure_ascii=True` and 3.x `zarr.json` with `json.dumps`'s default
/// (also ASCII), but both read UTF-8 (`json_loads(ensure_text(s,
/// "utf-8"))` in 2.18, `json.loads(bytes)` in 3.1), so zarrkit's UTF-8
/// documents need no escaping there: zarr-python 2.18 reads v2, 3.1 reads
/// v2 and v3 arrays whose attributes are not ASCII.
#[test]
fn zarr_python_reads_the_non_ascii_attributes_zarrkit_writes_in_v2_and_v3() {
    let Some((zarr3, zarr2)) = crate::support::zarr3_and_zarr2() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut attributes = JsonMap::new();
    attributes.insert("ort".into(), "Zürich 🌍".into());
    attributes.insert("ünits".into(), json!(["°C"]));
    let expected = r#"{"ort": "Z\u00fcrich \ud83c\udf0d", "\u00fcnits": ["\u00b0C"]}"#;
    for (format, pythons) in [
        (ZarrFormat::V2, vec![&zarr2, &zarr3]),
        (ZarrFormat::V3, vec![&zarr3]),
    ] {
        let root = dir.path().join(format.name());
        let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(&root).unwrap());
        Array::builder(&[2], DataType::UInt8, &[2])
            .format(format)
            .attributes(attributes.clone())
            .create(store, "/")
            .unwrap();
        for python in pythons {
            let out = run_python(python, READ_ATTRIBUTES, &[&root], &[]);
            assert_eq!(
                out.trim(),
                expected,
                "{format} read by {}",
                python.display()
            );
        }
    }
}
