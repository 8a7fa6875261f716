//! One test per fixed bug, named `issue_<n>_<what>`, each saying how the
//! bug happened.

use std::sync::Arc;
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{DataType, JsonMap};
use zarrkit::store::{MemoryStore, Store, StoreKey};
use zarrkit::{Array, Region};

fn text_at(store: &dyn Store, key: &str) -> String {
    let bytes = store
        .get(&StoreKey::new(key).unwrap(), None)
        .unwrap()
        .unwrap();
    String::from_utf8(bytes).unwrap()
}

use crate::support::error_chain as chain;

/// v1 `meta` and `attrs` were written with v2's writer, as raw UTF-8;
/// zarr 1.1.0 (and zarr-python 2.x's `migrate_1to2`) decode them as ASCII,
/// so one non-ASCII attribute made the array unreadable there. They are now
/// written as zarr 1.x's `json.dumps(indent=4, sort_keys=True,
/// ensure_ascii=True)`.
#[test]
fn issue_9_v1_documents_are_ascii_as_zarr_1_writes_them() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut attributes = JsonMap::new();
    attributes.insert("ort".into(), "Zürich".into());
    attributes.insert("ﬁeld".into(), serde_json::json!(["🌍"]));
    let array = Array::builder(&[3], DataType::UInt8, &[2])
        .format(ZarrFormat::V1)
        .attributes(attributes.clone())
        .create(Arc::clone(&store), "/")
        .unwrap();
    let attrs = text_at(store.as_ref(), "attrs");
    assert!(attrs.is_ascii(), "{attrs}");
    assert_eq!(
        attrs,
        "{\n    \"ort\": \"Z\\u00fcrich\",\n    \"\\ufb01eld\": [\n        \"\\ud83c\\udf0d\"\n    ]\n}"
    );
    assert!(text_at(store.as_ref(), "meta").is_ascii());
    drop(array);
    assert_eq!(Array::open(store, "/").unwrap().attributes(), &attributes);
}

/// v1 non-finite fill values were written as the JSON strings `"NaN"`,
/// `"Infinity"`, `"-Infinity"` (v2's spelling); zarr 1.x writes the bare
/// tokens Python's `json` writes, and zarr-python 2.x's `migrate_1to2`
/// passes the strings on to NumPy, which fails (`ufunc 'isnan' not
/// supported`). They are now the bare tokens, and still read back.
#[test]
fn issue_9_v1_non_finite_fill_values_are_bare_tokens() {
    for (fill, token) in [
        (f32::NAN, "NaN"),
        (f32::INFINITY, "Infinity"),
        (f32::NEG_INFINITY, "-Infinity"),
    ] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        Array::builder(&[3], DataType::Float32, &[2])
            .format(ZarrFormat::V1)
            .fill_value(fill)
            .create(Arc::clone(&store), "/")
            .unwrap();
        let meta = text_at(store.as_ref(), "meta");
        assert!(
            meta.contains(&format!("\n    \"fill_value\": {token},\n")),
            "{meta}"
        );
        let read: Vec<f32> = Array::open(store, "/")
            .unwrap()
            .read_region(&Region::whole(&[3]))
            .unwrap();
        assert_eq!(read[2].to_bits(), fill.to_bits(), "{token}");
    }
}

/// A 0-d v1 array was written with its chunk under `0`, v2's key; zarr
/// 1.1.0 reads the empty key (the spec's indices joined by `.`, of which a
/// 0-d array has none), found nothing and read the fill value instead, and
/// the empty key cannot be stored (it is the store's directory). Writing a
/// 0-d v1 array is now refused by name, before anything is written.
#[test]
fn issue_9_v1_zero_dimensional_arrays_are_refused_by_name() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let err = Array::builder(&[], DataType::Int32, &[])
        .format(ZarrFormat::V1)
        .create(Arc::clone(&store), "/")
        .unwrap_err();
    let text = chain(&err);
    assert!(text.contains("a 0-d array"), "{text}");
    assert!(store.list().unwrap().is_empty());
    // Migrating one into v1 is refused at planning, naming the node.
    let src: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Array::builder(&[], DataType::Int32, &[])
        .create(Arc::clone(&src), "/")
        .unwrap()
        .write_region(&Region::whole(&[]), &[5i32])
        .unwrap();
    let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let err = zarrkit::migrate::plan(src, Arc::clone(&dst), ZarrFormat::V1).unwrap_err();
    let text = chain(&err);
    assert!(
        text.contains("`/` cannot be migrated to") && text.contains("a 0-d array"),
        "{text}"
    );
    assert!(dst.list().unwrap().is_empty());
}

/// A v3 `float32` array with a NaN-with-payload fill value (`"0x7fc00001"`)
/// migrated to v2 or a 2019 draft: planning checked only that the document
/// could be written, the target wrote `"NaN"` (which reads back as the plain
/// NaN `0x7fc00000`), and the migration failed at verification, after
/// writing everything. The plan now reads the fill value back before
/// writing: a lost NaN payload is a note, and verification expects the
/// plain NaN; the 2022 draft and v3, which spell it in hex, keep it.
#[test]
fn issue_9_a_nan_payload_fill_value_is_decided_before_writing() {
    let src: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::builder(&[6], DataType::Float32, &[2])
        .fill_value(f32::from_bits(0x7fc0_0001))
        .create(Arc::clone(&src), "/")
        .unwrap();
    array
        .write_region(&Region::new(vec![0], vec![2]), &[1.0f32, 2.0])
        .unwrap();
    for (to, kept) in [
        (ZarrFormat::V2, false),
        (ZarrFormat::V1, false),
        (ZarrFormat::V3Draft2019Json, false),
        (ZarrFormat::V3Draft2019, false),
        (ZarrFormat::V3Draft2019a, false),
        (ZarrFormat::V3Draft2022, true),
        (ZarrFormat::V3, true),
    ] {
        let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let plan = zarrkit::migrate::plan(Arc::clone(&src), Arc::clone(&dst), to).unwrap();
        let notes = plan.nodes()[0].notes.join("; ");
        assert_eq!(
            notes.contains("\"0x7fc00001\" (a NaN with a payload) becomes the plain NaN \"NaN\""),
            !kept,
            "{to}: {notes}"
        );
        let report = zarrkit::migrate::migrate(&plan, &mut |_| {}).unwrap();
        assert_eq!(report.chunks_verified, 1, "{to}");
        let migrated = Array::open(dst, "/").unwrap();
        let fill = f32::from_ne_bytes(migrated.fill_value().as_bytes().try_into().unwrap());
        let expected = if kept { 0x7fc0_0001 } else { 0x7fc0_0000 };
        assert_eq!(fill.to_bits(), expected, "{to}");
        let read: Vec<f32> = migrated.read_region(&Region::whole(&[6])).unwrap();
        assert_eq!(read[..2], [1.0, 2.0], "{to}");
        assert!(read[2..].iter().all(|v| v.to_bits() == expected), "{to}");
    }
}

/// `migrate` opened the source's root node and walked down from it; a
/// store with arrays but no root node (tensorstore writes arrays at `/a`
/// and `/b/c` and no group documents, as it has no groups) stopped with
/// ``no array or group at `/` ``. The plan now finds every node by its
/// document and creates the groups above them that the source lacks,
/// noting each.
#[test]
fn issue_9_a_store_without_a_root_node_is_migrated_with_its_groups_created() {
    let src: Arc<dyn Store> = Arc::new(MemoryStore::new());
    for (path, value) in [("/a", 1i32), ("/b/c", 2), ("/b/d/e", 3)] {
        Array::builder(&[2], DataType::Int32, &[2])
            .format(ZarrFormat::V2)
            .create(Arc::clone(&src), path)
            .unwrap()
            .write_region(&Region::whole(&[2]), &[value, value])
            .unwrap();
    }
    // The builder wrote the groups above the arrays: take them away, as
    // tensorstore never writes them.
    for key in src.list().unwrap() {
        if key.name() == ".zgroup" {
            src.erase(&key).unwrap();
        }
    }
    let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let plan = zarrkit::migrate::plan(src, Arc::clone(&dst), ZarrFormat::V3).unwrap();
    let nodes: Vec<(&str, bool)> = plan
        .nodes()
        .iter()
        .map(|n| {
            let created = n.notes.iter().any(|note| note.starts_with("created"));
            (n.path.as_str(), created)
        })
        .collect();
    assert_eq!(
        nodes,
        [
            ("/", true),
            ("/a", false),
            ("/b", true),
            ("/b/c", false),
            ("/b/d", true),
            ("/b/d/e", false)
        ]
    );
    let report = zarrkit::migrate::migrate(&plan, &mut |_| {}).unwrap();
    assert_eq!((report.groups, report.arrays_copied), (3, 3));
    let root = zarrkit::Group::open(Arc::clone(&dst), "/").unwrap();
    let walked: Vec<String> = root
        .walk()
        .unwrap()
        .iter()
        .map(|n| n.path().as_str().to_string())
        .collect();
    assert_eq!(walked, ["/a", "/b", "/b/c", "/b/d", "/b/d/e"]);
    let e: Vec<i32> = Array::open(dst, "/b/d/e")
        .unwrap()
        .read_region(&Region::whole(&[2]))
        .unwrap();
    assert_eq!(e, [3, 3]);
    // An empty store still has nothing to migrate.
    let err = zarrkit::migrate::plan(
        Arc::new(MemoryStore::new()),
        Arc::new(MemoryStore::new()),
        ZarrFormat::V3,
    )
    .unwrap_err();
    assert!(err.to_string().contains("`/`"), "{err}");
}

/// xarray keeps a v2 variable's dimension names in the attribute
/// `_ARRAY_DIMENSIONS`; `migrate` to v3 copied the attributes as they were
/// and wrote no `dimension_names`, so `xarray.open_zarr` refused the result
/// (``Zarr object is missing the dimension_names metadata``), and the
/// source's `.zmetadata` was dropped, so `consolidated=True` failed. The
/// attribute now becomes `dimension_names` (the fill value xarray's
/// `_FillValue`), and consolidated metadata is written anew.
#[test]
fn issue_9_xarray_dimension_names_and_consolidated_metadata_reach_v3() {
    let src: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut root_attributes = JsonMap::new();
    root_attributes.insert("title".into(), "t".into());
    zarrkit::Group::create_as(Arc::clone(&src), "/", ZarrFormat::V2, root_attributes).unwrap();
    let mut attributes = JsonMap::new();
    attributes.insert("_ARRAY_DIMENSIONS".into(), serde_json::json!(["y", "x"]));
    attributes.insert("units".into(), "K".into());
    Array::builder(&[2, 3], DataType::Float32, &[2, 3])
        .format(ZarrFormat::V2)
        .fill_value(f32::NAN)
        .attributes(attributes)
        .create(Arc::clone(&src), "/temp")
        .unwrap()
        .write_region(&Region::whole(&[2, 3]), &[1.0f32; 6])
        .unwrap();
    zarrkit::consolidate::consolidate(src.as_ref(), "/").unwrap();

    let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let plan = zarrkit::migrate::plan(src, Arc::clone(&dst), ZarrFormat::V3).unwrap();
    assert!(plan.writes_consolidated());
    zarrkit::migrate::migrate(&plan, &mut |_| {}).unwrap();
    let temp = Array::open(Arc::clone(&dst), "/temp").unwrap();
    assert_eq!(
        temp.metadata().dimension_names,
        Some(vec![Some("y".into()), Some("x".into())])
    );
    let mut expected = JsonMap::new();
    expected.insert("units".into(), "K".into());
    // xarray's `FillValueCoder.encode(np.nan, float32)`: the little-endian
    // float64 NaN, base64.
    expected.insert("_FillValue".into(), "AAAAAAAA+H8=".into());
    assert_eq!(temp.attributes(), &expected);
    assert!(
        zarrkit::consolidate::check(dst.as_ref(), "/")
            .unwrap()
            .is_empty()
    );
    let root = text_at(dst.as_ref(), "zarr.json");
    assert!(root.contains("\"consolidated_metadata\""), "{root}");
}
