//! What the format layer answers about a node for display and for code
//! outside `format/` (issue #11, item 3): a node's documents in its own
//! format, the fields a format spells differently from the model, the fill
//! value as stored, and the per-format capabilities on `ZarrFormat`. The
//! expected values are the documents these tests store themselves.

use serde_json::{Value, json};
use std::sync::Arc;
use zarrkit::format::{self, ZarrFormat};
use zarrkit::metadata::NodeMetadata;
use zarrkit::store::{MemoryStore, Store, StoreKey};
use zarrkit::{Array, Group};

fn put(store: &dyn Store, key: &str, document: &Value) {
    store
        .set(
            &StoreKey::new(key).unwrap(),
            document.to_string().as_bytes(),
        )
        .unwrap();
}

/// A v2 array `/a` ([2, 3] big-endian int16 in [1, 3] chunks, zlib, order F,
/// `null` fill value) with attributes `{"units": "m"}`.
fn v2_array() -> Array {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    put(store.as_ref(), ".zgroup", &json!({"zarr_format": 2}));
    put(
        store.as_ref(),
        "a/.zarray",
        &json!({
            "zarr_format": 2, "shape": [2, 3], "chunks": [1, 3], "dtype": ">i2",
            "compressor": {"id": "zlib", "level": 1}, "fill_value": null,
            "order": "F", "filters": null,
        }),
    );
    put(store.as_ref(), "a/.zattrs", &json!({"units": "m"}));
    Array::open(store, "/a").unwrap()
}

/// A v1 array ([4] float64 in [2] chunks, zlib level 1, fill 0.5).
fn v1_array() -> Array {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    put(
        store.as_ref(),
        "meta",
        &json!({
            "zarr_format": 1, "shape": [4], "chunks": [2], "dtype": "<f8",
            "compression": "zlib", "compression_opts": 1, "fill_value": 0.5,
            "order": "C",
        }),
    );
    put(store.as_ref(), "attrs", &json!({"k": [1, 2]}));
    Array::open(store, "/").unwrap()
}

#[test]
fn node_document_gives_v2_and_v1_documents_under_their_keys() {
    let array = v2_array();
    let metadata = NodeMetadata::Array(array.metadata().clone());
    let document = format::node_document(array.format(), &metadata).unwrap();
    let object = document.as_object().unwrap();
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, [".zarray", ".zattrs"]);
    assert_eq!(document[".zattrs"], json!({"units": "m"}));
    let zarray = &document[".zarray"];
    assert_eq!(zarray["zarr_format"], 2);
    assert_eq!(zarray["dtype"], ">i2");
    assert_eq!(zarray["order"], "F");
    assert_eq!(zarray["fill_value"], Value::Null);
    assert_eq!(zarray["compressor"]["id"], "zlib");

    let array = v1_array();
    let metadata = NodeMetadata::Array(array.metadata().clone());
    let document = format::node_document(array.format(), &metadata).unwrap();
    assert_eq!(document["attrs"], json!({"k": [1, 2]}));
    assert_eq!(document["meta"]["zarr_format"], 1);
    assert_eq!(document["meta"]["dtype"], "<f8");
    assert_eq!(document["meta"]["compression"], "zlib");
    assert_eq!(document["meta"]["fill_value"], 0.5);
}

#[test]
fn node_document_gives_the_v3_document_itself() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let group = Group::create(
        store,
        "/",
        serde_json::Map::from_iter([("x".into(), json!(3))]),
    )
    .unwrap();
    let metadata = NodeMetadata::Group(group.metadata().clone());
    let document = format::node_document(group.format(), &metadata).unwrap();
    assert_eq!(
        document,
        json!({"zarr_format": 3, "node_type": "group", "attributes": {"x": 3}})
    );
    assert_eq!(format::v3_document(&metadata).unwrap(), document);
}

#[test]
fn display_facts_are_the_fields_the_own_document_spells_differently() {
    let array = v2_array();
    let facts = format::array_display_facts(array.format(), array.metadata());
    let labels: Vec<&str> = facts.iter().map(|(label, _)| label.as_str()).collect();
    assert_eq!(
        labels,
        ["v2 dtype", "v2 order", "v2 filters", "v2 compressor"]
    );
    assert_eq!(facts[0].1, "\">i2\"");
    assert_eq!(facts[1].1, "\"F\"");
    assert_eq!(facts[2].1, "null");
    assert!(facts[3].1.contains("\"zlib\""), "{}", facts[3].1);
    let document = format::v2_array_document(array.format(), array.metadata()).unwrap();
    assert_eq!(document["dtype"], ">i2");

    let array = v1_array();
    let facts = format::array_display_facts(array.format(), array.metadata());
    assert_eq!(
        facts,
        [
            ("v1 dtype".to_string(), "\"<f8\"".to_string()),
            ("v1 order".to_string(), "\"C\"".to_string()),
            (
                "v1 compression".to_string(),
                "\"zlib\", compression_opts 1".to_string()
            ),
        ]
    );
    assert_eq!(
        format::v2_array_document(array.format(), array.metadata()),
        None
    );

    let v3 = Array::builder(&[4], zarrkit::metadata::DataType::UInt8, &[2])
        .create(Arc::new(MemoryStore::new()), "/")
        .unwrap();
    assert!(format::array_display_facts(v3.format(), v3.metadata()).is_empty());
}

#[test]
fn fill_value_as_stored_and_an_undefined_fill_value() {
    let array = v1_array();
    assert_eq!(
        format::fill_value_as_stored(array.format(), array.metadata()),
        json!(0.5)
    );
    assert!(!format::fill_value_is_undefined(array.metadata()));

    // v2's `null` fill value: undefined, with a stand-in zero in the model.
    let array = v2_array();
    assert!(format::fill_value_is_undefined(array.metadata()));
    // Marking a zero fill value undefined writes v2's `null`; another fill
    // value is written as itself.
    let zero = Array::builder(&[4], zarrkit::metadata::DataType::UInt8, &[2])
        .format(ZarrFormat::V2)
        .create(Arc::new(MemoryStore::new()), "/")
        .unwrap();
    let mut metadata = zero.metadata().clone();
    assert!(!format::fill_value_is_undefined(&metadata));
    let v2_fill = |metadata: &zarrkit::metadata::ArrayMetadata| {
        let node = NodeMetadata::Array(metadata.clone());
        format::node_document(ZarrFormat::V2, &node).unwrap()[".zarray"]["fill_value"].clone()
    };
    assert_eq!(v2_fill(&metadata), json!(0));
    format::set_fill_value_undefined(&mut metadata);
    assert!(format::fill_value_is_undefined(&metadata));
    assert_eq!(v2_fill(&metadata), Value::Null);
    let mut metadata = v1_array().metadata().clone();
    format::set_fill_value_undefined(&mut metadata);
    assert_eq!(v2_fill(&metadata), json!(0.5));
}

#[test]
fn format_capabilities() {
    for &format in ZarrFormat::ALL {
        assert_eq!(format.is_v3(), format == ZarrFormat::V3, "{format}");
        assert_eq!(format.has_groups(), format != ZarrFormat::V1, "{format}");
        assert_eq!(
            format.keeps_consolidated_metadata_in_the_root(),
            matches!(format, ZarrFormat::V2 | ZarrFormat::V3),
            "{format}"
        );
    }
    let mut descriptions: Vec<&str> = ZarrFormat::ALL.iter().map(|f| f.description()).collect();
    descriptions.sort_unstable();
    descriptions.dedup();
    assert_eq!(descriptions.len(), ZarrFormat::ALL.len());
    assert!(ZarrFormat::V2.description().contains(".zarray"));
    assert_eq!(format::NODE_DOCUMENT_NAMES[0], "zarr.json");
    assert!(format::NODE_DOCUMENT_NAMES.contains(&".zgroup"));
}

#[test]
fn a_node_with_an_invalid_document_is_erased_in_its_format() {
    let store = MemoryStore::new();
    store
        .set(&StoreKey::new("a/.zarray").unwrap(), b"{not json")
        .unwrap();
    store.set(&StoreKey::new("a/0").unwrap(), b"chunk").unwrap();
    store
        .set(&StoreKey::new("b/.zgroup").unwrap(), b"{}")
        .unwrap();
    let path = zarrkit::NodePath::new("/a").unwrap();
    assert_eq!(
        format::erase_node_in_any_format(&store, &path).unwrap(),
        ZarrFormat::V2
    );
    assert_eq!(
        store
            .get(&StoreKey::new("a/.zarray").unwrap(), None)
            .unwrap(),
        None
    );
    assert_eq!(
        store.get(&StoreKey::new("a/0").unwrap(), None).unwrap(),
        None
    );
    assert!(
        store
            .get(&StoreKey::new("b/.zgroup").unwrap(), None)
            .unwrap()
            .is_some()
    );
    let missing = zarrkit::NodePath::new("/c").unwrap();
    assert!(matches!(
        format::erase_node_in_any_format(&store, &missing),
        Err(zarrkit::Error::NodeNotFound { .. })
    ));
}
