//! Consolidated metadata: v2 `.zmetadata` and the v3 root
//! `consolidated_metadata` field, written as zarr-python writes them, read so
//! that opening a hierarchy costs one read, checked against the documents,
//! and exchanged with zarr-python 3.1
//! (`testdata/generate/consolidated_interop.py`).

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use zarrkit::consolidate::{self, Mismatch, MismatchKind};
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{DataType, JsonMap};
use zarrkit::store::{
    ByteRange, FilesystemStore, ListDir, MemoryStore, ReadRequest, Store, StoreCapabilities,
    StoreError, StoreKey, StorePrefix,
};
use zarrkit::{Array, Error, Group, Node, Region};

/// Counts every operation that reads the store: gets, sizes and listings.
#[derive(Debug)]
struct CountingStore {
    inner: Arc<dyn Store>,
    reads: AtomicUsize,
}

impl CountingStore {
    fn new(inner: Arc<dyn Store>) -> Arc<Self> {
        Arc::new(Self {
            inner,
            reads: AtomicUsize::new(0),
        })
    }
    fn take(&self) -> usize {
        self.reads.swap(0, Ordering::SeqCst)
    }
    fn count(&self) {
        self.reads.fetch_add(1, Ordering::SeqCst);
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
        self.count();
        self.inner.get(key, range)
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
    fn list(&self) -> Result<Vec<StoreKey>, StoreError> {
        self.count();
        self.inner.list()
    }
    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
        self.count();
        self.inner.list_prefix(prefix)
    }
    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        self.count();
        self.inner.list_dir(prefix)
    }
    fn size(&self, key: &StoreKey) -> Result<Option<u64>, StoreError> {
        self.count();
        self.inner.size(key)
    }
}

fn key(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

fn json_at(store: &dyn Store, k: &str) -> Value {
    serde_json::from_slice(&store.get(&key(k), None).unwrap().unwrap()).unwrap()
}

fn attrs(value: Value) -> JsonMap {
    value.as_object().unwrap().clone()
}

/// Root (attributes `title`), array `a` (int32 [6] in chunks of 4, 0..5),
/// group `g` (attributes `k`), array `g/b` (float64 [2, 3], 0.5 * i).
fn hierarchy(store: Arc<dyn Store>, format: ZarrFormat) {
    Group::create_as(store.clone(), "/", format, attrs(json!({"title": "t"}))).unwrap();
    let a = Array::builder(&[6], DataType::Int32, &[4])
        .format(format)
        .create(store.clone(), "/a")
        .unwrap();
    a.write_region(&Region::whole(&[6]), &(0..6).collect::<Vec<i32>>())
        .unwrap();
    Group::create_as(store.clone(), "/g", format, attrs(json!({"k": 1}))).unwrap();
    let b = Array::builder(&[2, 3], DataType::Float64, &[2, 2])
        .format(format)
        .create(store, "/g/b")
        .unwrap();
    let values: Vec<f64> = (0..6).map(|i| f64::from(i) * 0.5).collect();
    b.write_region(&Region::whole(&[2, 3]), &values).unwrap();
}

fn paths(nodes: &[Node]) -> Vec<String> {
    nodes.iter().map(|n| n.path().to_string()).collect()
}

fn mismatch(kind: MismatchKind, key: &str) -> Mismatch {
    Mismatch {
        kind,
        key: key.to_string(),
    }
}

#[test]
fn v3_consolidation_writes_zarr_pythons_inline_field_and_keeps_other_fields() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    hierarchy(store.clone(), ZarrFormat::V3);
    // An extension field the library does not interpret must survive.
    let mut root = json_at(store.as_ref(), "zarr.json");
    root["my_extension"] = json!({"must_understand": false, "x": [1, 2]});
    store
        .set(&key("zarr.json"), &serde_json::to_vec(&root).unwrap())
        .unwrap();

    let report = consolidate::consolidate(store.as_ref(), "/").unwrap();
    assert_eq!(report.format, ZarrFormat::V3);
    assert_eq!(report.key.as_str(), "zarr.json");
    assert_eq!(report.entries, 3);

    let root = json_at(store.as_ref(), "zarr.json");
    assert_eq!(root["attributes"], json!({"title": "t"}));
    assert_eq!(root["node_type"], "group");
    assert_eq!(root["my_extension"]["x"], json!([1, 2]));
    let field = &root["consolidated_metadata"];
    assert_eq!(field["kind"], "inline");
    assert_eq!(field["must_understand"], false);
    let entries = field["metadata"].as_object().unwrap();
    assert_eq!(
        entries.keys().collect::<Vec<_>>(),
        ["a", "g", "g/b"],
        "flat, keyed by relative path"
    );
    assert_eq!(entries["a"], json_at(store.as_ref(), "a/zarr.json"));
    assert_eq!(entries["g/b"], json_at(store.as_ref(), "g/b/zarr.json"));
    // zarr-python 3.1 gives nested groups an empty consolidated_metadata.
    assert_eq!(
        entries["g"]["consolidated_metadata"],
        json!({"kind": "inline", "must_understand": false, "metadata": {}})
    );
    assert_eq!(entries["g"]["attributes"], json!({"k": 1}));
    assert!(consolidate::check(store.as_ref(), "/").unwrap().is_empty());
}

#[test]
fn v2_consolidation_writes_zmetadata_with_every_document() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    hierarchy(store.clone(), ZarrFormat::V2);
    let report = consolidate::consolidate(store.as_ref(), "/").unwrap();
    assert_eq!(report.format, ZarrFormat::V2);
    assert_eq!(report.key.as_str(), ".zmetadata");
    assert_eq!(report.entries, 8);

    let doc = json_at(store.as_ref(), ".zmetadata");
    assert_eq!(doc["zarr_consolidated_format"], 1);
    let entries = doc["metadata"].as_object().unwrap();
    let keys = [
        ".zattrs",
        ".zgroup",
        "a/.zarray",
        "a/.zattrs",
        "g/.zattrs",
        "g/.zgroup",
        "g/b/.zarray",
        "g/b/.zattrs",
    ];
    assert_eq!(entries.keys().collect::<Vec<_>>(), keys);
    for k in keys {
        assert_eq!(entries[k], json_at(store.as_ref(), k), "{k}");
    }
    assert_eq!(entries[".zattrs"], json!({"title": "t"}));
    assert_eq!(entries["g/.zgroup"], json!({"zarr_format": 2}));
    assert!(consolidate::check(store.as_ref(), "/").unwrap().is_empty());
}

#[test]
fn opening_a_consolidated_v3_hierarchy_costs_one_read() {
    let counting = CountingStore::new(Arc::new(MemoryStore::new()));
    let store: Arc<dyn Store> = counting.clone();
    hierarchy(store.clone(), ZarrFormat::V3);

    // Without consolidated metadata, walking reads the store.
    let group = Group::open(store.clone(), "/").unwrap();
    assert!(!group.is_consolidated());
    counting.take();
    group.walk().unwrap();
    assert!(counting.take() > 0);

    consolidate::consolidate(store.as_ref(), "/").unwrap();
    counting.take();
    let group = Group::open(store.clone(), "/").unwrap();
    assert_eq!(counting.take(), 1, "one read of the root zarr.json");
    assert!(group.is_consolidated());
    assert!(group.warnings().is_empty());

    let nodes = group.walk().unwrap();
    assert_eq!(paths(&nodes), ["/a", "/g", "/g/b"]);
    assert_eq!(paths(&group.children().unwrap()), ["/a", "/g"]);
    let Node::Array(b) = group.node("g/b").unwrap() else {
        panic!("g/b is an array")
    };
    assert_eq!(b.shape(), [2, 3]);
    let Node::Group(g) = &nodes[1] else {
        panic!("g is a group")
    };
    assert_eq!(g.attributes()["k"], 1);
    assert_eq!(paths(&g.children().unwrap()), ["/g/b"]);
    assert_eq!(counting.take(), 0, "no reads after opening the root");

    // Node::open of the root uses the consolidated metadata too.
    let Node::Group(root) = Node::open(store.clone(), "/").unwrap() else {
        panic!("the root is a group")
    };
    counting.take();
    root.walk().unwrap();
    assert_eq!(counting.take(), 0);

    // The data read through a consolidated node is the real data.
    let got: Vec<f64> = b.read_region(&Region::whole(&[2, 3])).unwrap();
    assert_eq!(got, [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]);
}

#[test]
fn opening_a_consolidated_v2_hierarchy_reads_only_the_root_documents() {
    let counting = CountingStore::new(Arc::new(MemoryStore::new()));
    let store: Arc<dyn Store> = counting.clone();
    hierarchy(store.clone(), ZarrFormat::V2);
    consolidate::consolidate(store.as_ref(), "/").unwrap();
    counting.take();
    let group = Group::open(store.clone(), "/").unwrap();
    // zarr.json (absent), .zarray (absent), .zgroup, .zattrs, .zmetadata.
    assert_eq!(counting.take(), 5);
    assert!(group.is_consolidated());
    let nodes = group.walk().unwrap();
    assert_eq!(paths(&nodes), ["/a", "/g", "/g/b"]);
    assert_eq!(nodes[1].attributes()["k"], 1);
    let Node::Array(a) = group.node("/a").unwrap() else {
        panic!("a is an array")
    };
    assert_eq!(a.format(), ZarrFormat::V2);
    assert_eq!(counting.take(), 0, "no reads after opening the root");
    let got: Vec<i32> = a.read_region(&Region::whole(&[6])).unwrap();
    assert_eq!(got, [0, 1, 2, 3, 4, 5]);
}

#[test]
fn check_reports_missing_extra_and_differing_entries_in_v3() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    hierarchy(store.clone(), ZarrFormat::V3);
    consolidate::consolidate(store.as_ref(), "/").unwrap();
    // Change g's attributes, add `late`, remove g/b's document.
    Group::open_without_consolidated(store.clone(), "/g")
        .unwrap()
        .set_attributes(attrs(json!({"k": 2})))
        .unwrap();
    Array::builder(&[1], DataType::UInt8, &[1])
        .create(store.clone(), "/late")
        .unwrap();
    store.erase(&key("g/b/zarr.json")).unwrap();
    assert_eq!(
        consolidate::check(store.as_ref(), "/").unwrap(),
        [
            mismatch(MismatchKind::Differs, "g"),
            mismatch(MismatchKind::Extra, "g/b"),
            mismatch(MismatchKind::Missing, "late"),
        ]
    );
    // Consolidating again makes them agree.
    consolidate::consolidate(store.as_ref(), "/").unwrap();
    assert!(consolidate::check(store.as_ref(), "/").unwrap().is_empty());
}

#[test]
fn check_reports_mismatches_by_v2_key() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    hierarchy(store.clone(), ZarrFormat::V2);
    // Before consolidating, every document is missing.
    assert_eq!(consolidate::check(store.as_ref(), "/").unwrap().len(), 8);
    consolidate::consolidate(store.as_ref(), "/").unwrap();
    store.set(&key("a/.zattrs"), br#"{"new": true}"#).unwrap();
    store.erase(&key("g/b/.zattrs")).unwrap();
    let mismatches = consolidate::check(store.as_ref(), "/").unwrap();
    assert_eq!(
        mismatches,
        [
            mismatch(MismatchKind::Differs, "a/.zattrs"),
            mismatch(MismatchKind::Extra, "g/b/.zattrs"),
        ]
    );
    assert_eq!(
        mismatches[0].to_string(),
        "`a/.zattrs` in the consolidated metadata differs from the real document"
    );
}

#[test]
fn a_stale_consolidated_node_falls_back_to_the_real_documents_with_a_warning() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    hierarchy(store.clone(), ZarrFormat::V3);
    consolidate::consolidate(store.as_ref(), "/").unwrap();
    let mut real_a = Array::open(store.clone(), "/a").unwrap();
    real_a
        .set_attributes(attrs(json!({"changed": true})))
        .unwrap();
    Array::builder(&[1], DataType::UInt8, &[1])
        .create(store.clone(), "/late")
        .unwrap();

    let mut group = Group::open(store.clone(), "/").unwrap();
    // The consolidated view is what it is: stale.
    assert!(group.node("a").unwrap().attributes().is_empty());
    assert_eq!(paths(&group.children().unwrap()), ["/a", "/g"]);
    // An agreeing node changes nothing.
    group.open_node_checked("g").unwrap();
    assert!(group.is_consolidated());
    assert!(group.warnings().is_empty());

    let a = group.open_node_checked("a").unwrap();
    assert_eq!(a.attributes()["changed"], true);
    assert!(!group.is_consolidated());
    assert_eq!(group.warnings().len(), 1);
    assert!(
        group.warnings()[0].contains("`/a`"),
        "{:?}",
        group.warnings()
    );
    // From now on the group reads the real documents.
    assert_eq!(paths(&group.children().unwrap()), ["/a", "/g", "/late"]);
    assert_eq!(group.node("a").unwrap().attributes()["changed"], true);
}

#[test]
fn a_node_the_consolidated_metadata_lacks_is_read_from_the_store() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    hierarchy(store.clone(), ZarrFormat::V2);
    consolidate::consolidate(store.as_ref(), "/").unwrap();
    Array::builder(&[1], DataType::UInt8, &[1])
        .format(ZarrFormat::V2)
        .create(store.clone(), "/late")
        .unwrap();
    let mut group = Group::open(store.clone(), "/").unwrap();
    assert_eq!(group.node("late").unwrap().path().as_str(), "/late");
    assert!(matches!(
        group.node("nothing"),
        Err(Error::NodeNotFound { .. })
    ));
    group.open_node_checked("late").unwrap();
    assert_eq!(group.warnings().len(), 1);
    assert!(!group.is_consolidated());
}

#[test]
fn invalid_consolidated_metadata_is_ignored_with_a_warning() {
    let bad_v2: [&[u8]; 6] = [
        b"{not json",
        b"[]",
        br#"{"zarr_consolidated_format": 2, "metadata": {}}"#,
        br#"{"zarr_consolidated_format": 1, "metadata": 5}"#,
        br#"{"zarr_consolidated_format": 1, "metadata": {"a/.zarray": {"zarr_format": 2}}}"#,
        // Disagrees with the root's own `.zattrs`.
        br#"{"zarr_consolidated_format": 1, "metadata": {".zgroup": {"zarr_format": 2}, ".zattrs": {"title": "other"}}}"#,
    ];
    for bytes in bad_v2 {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        hierarchy(store.clone(), ZarrFormat::V2);
        store.set(&key(".zmetadata"), bytes).unwrap();
        let group = Group::open(store.clone(), "/").unwrap();
        let text = String::from_utf8_lossy(bytes);
        assert!(!group.is_consolidated(), "{text}");
        assert_eq!(group.warnings().len(), 1, "{text}");
        assert_eq!(paths(&group.walk().unwrap()), ["/a", "/g", "/g/b"]);
        // check() names the invalid document or lists the disagreement.
        match consolidate::check(store.as_ref(), "/") {
            Err(err) => assert!(err.to_string().contains(".zmetadata"), "{text}: {err}"),
            Ok(mismatches) => assert!(!mismatches.is_empty(), "{text}"),
        }
    }
    let bad_v3 = [
        json!({"kind": "remote", "must_understand": false, "metadata": {}}),
        json!({"kind": "inline", "must_understand": false, "metadata": []}),
        json!({"kind": "inline", "must_understand": false, "metadata": {"a": {"zarr_format": 3}}}),
        json!({"kind": "inline", "must_understand": false, "metadata": {"__bad": {"zarr_format": 3, "node_type": "group"}}}),
    ];
    for field in bad_v3 {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        hierarchy(store.clone(), ZarrFormat::V3);
        let mut root = json_at(store.as_ref(), "zarr.json");
        root["consolidated_metadata"] = field.clone();
        store
            .set(&key("zarr.json"), &serde_json::to_vec(&root).unwrap())
            .unwrap();
        let group = Group::open(store.clone(), "/").unwrap();
        assert!(!group.is_consolidated(), "{field}");
        assert_eq!(group.warnings().len(), 1, "{field}");
        assert_eq!(paths(&group.walk().unwrap()), ["/a", "/g", "/g/b"]);
    }
    // Without `"must_understand": false` the field is one v3 core says a
    // reader must refuse (format/v3.rs keeps it as an extension field).
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    hierarchy(store.clone(), ZarrFormat::V3);
    let mut root = json_at(store.as_ref(), "zarr.json");
    root["consolidated_metadata"] = json!(5);
    store
        .set(&key("zarr.json"), &serde_json::to_vec(&root).unwrap())
        .unwrap();
    let err = Group::open(store.clone(), "/").unwrap_err();
    assert!(
        format!("{:?}", err).contains("consolidated_metadata"),
        "{err:?}"
    );
}

#[test]
fn consolidating_refuses_what_has_no_consolidated_metadata() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    hierarchy(store.clone(), ZarrFormat::V3);
    assert!(matches!(
        consolidate::consolidate(store.as_ref(), "/a"),
        Err(Error::WrongNodeKind { .. })
    ));
    assert!(matches!(
        consolidate::consolidate(store.as_ref(), "/missing"),
        Err(Error::NodeNotFound { .. })
    ));
    let v1: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Array::builder(&[2], DataType::UInt8, &[2])
        .format(ZarrFormat::V1)
        .codecs_metadata(vec![
            zarrkit::metadata::ExtensionObject::with_configuration("bytes", JsonMap::new()),
        ])
        .create(v1.clone(), "/")
        .unwrap();
    assert!(matches!(
        consolidate::consolidate(v1.as_ref(), "/"),
        Err(Error::WrongNodeKind { .. } | Error::InvalidMetadata { .. })
    ));
}

#[test]
fn a_nested_group_can_hold_its_own_consolidated_metadata() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    hierarchy(store.clone(), ZarrFormat::V3);
    let report = consolidate::consolidate(store.as_ref(), "/g").unwrap();
    assert_eq!(report.entries, 1);
    assert_eq!(report.key.as_str(), "g/zarr.json");
    let g = Group::open(store.clone(), "/g").unwrap();
    assert!(g.is_consolidated());
    assert_eq!(paths(&g.walk().unwrap()), ["/g/b"]);
    assert!(consolidate::check(store.as_ref(), "/g").unwrap().is_empty());
}

// Interop with zarr-python 3.1.

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

fn run_script(python: &Path, mode: &str, dir: &Path) -> String {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/generate/consolidated_interop.py");
    let output = Command::new(python)
        .arg(&script)
        .arg(mode)
        .arg(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "consolidated_interop.py {mode} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn zarrkit_reads_the_consolidated_metadata_zarr_python_writes() {
    let Some(python) = reference_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    run_script(&python, "write", dir.path());
    for (name, format) in [("v2.zarr", ZarrFormat::V2), ("v3.zarr", ZarrFormat::V3)] {
        let fs: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path().join(name)).unwrap());
        // zarrkit agrees that zarr-python's consolidated metadata is current.
        assert_eq!(consolidate::check(fs.as_ref(), "/").unwrap(), [], "{name}");
        let counting = CountingStore::new(fs);
        let store: Arc<dyn Store> = counting.clone();
        let group = Group::open(store.clone(), "/").unwrap();
        assert!(group.is_consolidated(), "{name}");
        assert_eq!(group.format(), format);
        assert_eq!(group.attributes()["title"], "t");
        counting.take();
        let nodes = group.walk().unwrap();
        assert_eq!(counting.take(), 0, "{name}: walking reads nothing");
        assert_eq!(paths(&nodes), ["/a", "/g", "/g/b"], "{name}");
        assert_eq!(nodes[1].attributes()["k"], 1, "{name}");
        let Node::Array(b) = &nodes[2] else {
            panic!("{name}: g/b is an array")
        };
        let got: Vec<f64> = b.read_region(&Region::whole(&[2, 3])).unwrap();
        assert_eq!(got, [0.0, 0.5, 1.0, 1.5, 2.0, 2.5], "{name}");
        let Node::Array(a) = &nodes[0] else {
            panic!("{name}: a is an array")
        };
        let got: Vec<i32> = a.read_region(&Region::whole(&[6])).unwrap();
        assert_eq!(got, [0, 1, 2, 3, 4, 5], "{name}");
    }
}

#[test]
fn zarr_python_reads_the_consolidated_metadata_zarrkit_writes() {
    let Some(python) = reference_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, format) in [("v2.zarr", ZarrFormat::V2), ("v3.zarr", ZarrFormat::V3)] {
        let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path().join(name)).unwrap());
        hierarchy(store.clone(), format);
        consolidate::consolidate(store.as_ref(), "/").unwrap();
        // Created after consolidating: zarr-python reading the consolidated
        // metadata does not see it, which proves it read that.
        Array::builder(&[1], DataType::UInt8, &[1])
            .format(format)
            .create(store, "/late")
            .unwrap();
    }
    let out: Value = serde_json::from_str(&run_script(&python, "read", dir.path())).unwrap();
    for version in ["v2", "v3"] {
        let found = &out[version];
        assert_eq!(found["attributes"], json!({"title": "t"}), "{version}");
        let nodes = found["nodes"].as_object().unwrap();
        assert_eq!(
            nodes.keys().collect::<Vec<_>>(),
            ["a", "g", "g/b"],
            "{version}: zarr-python lists the consolidated nodes only"
        );
        assert_eq!(nodes["a"]["values"], json!([0, 1, 2, 3, 4, 5]), "{version}");
        assert_eq!(nodes["a"]["dtype"], "int32", "{version}");
        assert_eq!(
            nodes["g/b"]["values"],
            json!([0.0, 0.5, 1.0, 1.5, 2.0, 2.5]),
            "{version}"
        );
        assert_eq!(nodes["g"]["attributes"], json!({"k": 1}), "{version}");
    }
}
