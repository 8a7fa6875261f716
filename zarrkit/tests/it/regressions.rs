//! One test per fixed bug, `issue_<n>_<what>`, each saying how it happened.

use crate::support::{error_chain, zarr2_python};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{DataType, JsonMap};
use zarrkit::store::{FilesystemStore, MemoryStore, Store, StoreKey};
use zarrkit::{Array, Error, Region};

fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/fixtures")
        .join(relative)
}

fn open_fixture(relative: &str, node: &str) -> Array {
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(fixture(relative)).unwrap());
    Array::open(store, node).unwrap_or_else(|e| panic!("{relative}{node}: {e}"))
}

fn memory_store(documents: &[(&str, Value)]) -> Arc<dyn Store> {
    let store = MemoryStore::new();
    for (key, document) in documents {
        store
            .set(
                &StoreKey::new(*key).unwrap(),
                document.to_string().as_bytes(),
            )
            .unwrap();
    }
    Arc::new(store)
}

fn complex64(re: f32, im: f32) -> Vec<u8> {
    let mut bytes = re.to_ne_bytes().to_vec();
    bytes.extend(im.to_ne_bytes());
    bytes
}

fn complex128(re: f64, im: f64) -> Vec<u8> {
    let mut bytes = re.to_ne_bytes().to_vec();
    bytes.extend(im.to_ne_bytes());
    bytes
}

fn read_all(array: &Array) -> Vec<u8> {
    array
        .read_region_bytes(&Region::whole(array.shape()))
        .unwrap()
}

fn zarray(dtype: &str, fill_value: Value) -> Value {
    json!({
        "zarr_format": 2, "shape": [3], "chunks": [2], "dtype": dtype,
        "compressor": null, "fill_value": fill_value, "order": "C", "filters": null
    })
}

/// Issue #9, item 1. zarr 1.x writes `"fill_value": 0` for complex arrays
/// (the NumPy scalar the user gave), and NumPy reads a real number as
/// `re + 0j`. zarrkit parsed complex fill values only as the v3 pair
/// `[re, im]` in every format, since v1, v2 and the drafts all ended in the
/// v3 parser, so these valid stores failed to open.
#[test]
fn issue_9_complex_fill_value_may_be_a_real_number() {
    // v1, as zarr 1.x wrote it (testdata/generate/v1_fixtures.py); the
    // chunk at index 1 is not stored, so it reads as the fill value.
    let array = open_fixture("v1/complex128_real_fill_zlib", "/");
    assert_eq!(array.fill_value().as_bytes(), complex128(0.0, 0.0));
    let data = read_all(&array);
    assert_eq!(data[3 * 16..6 * 16], complex128(0.0, 0.0).repeat(3));
    let array = open_fixture("v1/complex64_big_f_real_nan_fill", "/");
    let fill = array.fill_value().as_bytes();
    assert!(f32::from_ne_bytes(fill[..4].try_into().unwrap()).is_nan());
    assert_eq!(fill[4..], 0.0f32.to_ne_bytes());
    // v2, the two drafts' fixtures and v3: the same rule.
    let store = memory_store(&[(".zarray", zarray("<c16", json!(-1.5)))]);
    let array = Array::open(store, "/").unwrap();
    assert_eq!(array.fill_value().as_bytes(), complex128(-1.5, 0.0));
    assert_eq!(read_all(&array), complex128(-1.5, 0.0).repeat(3));
    let array = open_fixture("v3-draft-2022/spec-text.zarr", "/complex64_real_fill");
    assert_eq!(array.fill_value().as_bytes(), complex64(-2.5, 0.0));
    let array = open_fixture("v3-draft-2019a/spec-text.zarr", "/complex128_big_real_fill");
    assert!(f64::from_ne_bytes(array.fill_value().as_bytes()[..8].try_into().unwrap()).is_nan());
    assert_eq!(array.fill_value().as_bytes()[8..], 0.0f64.to_ne_bytes());
    let v3 = json!({
        "zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "complex64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": "Infinity",
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]
    });
    let store = memory_store(&[("zarr.json", v3)]);
    let array = Array::open(store, "/").unwrap();
    assert_eq!(array.fill_value().as_bytes(), complex64(f32::INFINITY, 0.0));
    // v3 writes keep the canonical pair.
    let written = zarrkit::format::v3::fill_value_to_json(array.fill_value(), array.data_type());
    assert_eq!(written, json!(["Infinity", 0.0]));
}

/// Issue #9, item 2. zarr-python 2.0-era arrays carry `"fill_value": 0` on
/// `|S1` and `<U4` arrays (zarr-python's own compatibility fixture).
/// zarr-python 2.18 hands the number to NumPy, which casts it to the text
/// `b"0"` / `"0"`; zarrkit expected base64 or a string and refused them.
#[test]
fn issue_9_number_fill_value_of_fixed_string_types_is_numpys_cast() {
    let store = memory_store(&[(".zarray", zarray("|S1", json!(0)))]);
    let array = Array::open(store, "/").unwrap();
    assert_eq!(array.fill_value().as_bytes(), b"0");
    assert_eq!(read_all(&array), b"000");
    // Written back as zarr-python writes `b"0"`: base64.
    let doc = zarrkit::format::v2::array_to_json(array.metadata()).unwrap();
    assert_eq!(doc["fill_value"], json!("MA=="));
    let store = memory_store(&[(".zarray", zarray("<U4", json!(0)))]);
    let array = Array::open(store, "/").unwrap();
    assert_eq!(
        array.read_strings(&Region::whole(&[3])).unwrap(),
        ["0", "0", "0"]
    );
    // NumPy truncates to the element's length: `np.array(1.5e16, "U4")`
    // is `"1.5e"`, and `np.array(12345, "S3")` is `b"123"`.
    let store = memory_store(&[(".zarray", zarray(">U4", json!(1.5e16)))]);
    let array = Array::open(store, "/").unwrap();
    assert_eq!(
        array.read_strings(&Region::whole(&[3])).unwrap(),
        ["1.5e", "1.5e", "1.5e"]
    );
    let store = memory_store(&[(".zarray", zarray("|S3", json!(12345)))]);
    let array = Array::open(store, "/").unwrap();
    assert_eq!(array.fill_value().as_bytes(), b"123");
    // v1, as zarr 1.x wrote it (testdata/generate/v1_fixtures.py).
    let array = open_fixture("v1/unicode4_number_fill_none", "/");
    assert_eq!(array.data_type(), &DataType::FixedUtf32(16));
    let strings = array.read_strings(&Region::whole(&[2, 5])).unwrap();
    // Chunk (0, 1), columns 2 and 3, is not stored.
    assert_eq!(strings[2..4], ["1234", "1234"]);
    assert_eq!(strings[7..9], ["1234", "1234"]);
    let array = open_fixture("v1/bytes1_number_fill_zlib", "/");
    assert_eq!(read_all(&array)[4..8], *b"0000");
}

/// Issue #9, item 3. The 25 May 2022 draft ("fill_value") accepts a binary
/// `0b…` string, with every leading zero of the type's size, wherever it
/// accepts `0x…`. zarrkit's draft parser left `float16` (and complex
/// parts) out of its `0b` case, so `"0b0011110000000000"` was refused; a
/// wrong length said only that the value was invalid.
#[test]
fn issue_9_binary_fill_values_of_the_2022_draft() {
    let array = open_fixture("v3-draft-2022/spec-text.zarr", "/float16_binary_fill");
    assert_eq!(array.fill_value().as_bytes(), 0x3c00u16.to_ne_bytes());
    let data = read_all(&array);
    // Chunk (1, 0) is not stored: rows 2..4, columns 0..2 are 1.0.
    for (row, col) in [(2, 0), (2, 1), (3, 0), (3, 1)] {
        let i = (row * 3 + col) * 2;
        assert_eq!(data[i..i + 2], 0x3c00u16.to_ne_bytes(), "({row}, {col})");
    }
    let array = open_fixture("v3-draft-2022/spec-text.zarr", "/float64_big_binary_fill");
    assert_eq!(array.fill_value().as_bytes(), 0.1f64.to_ne_bytes());
    let array = open_fixture(
        "v3-draft-2022/spec-text.zarr",
        "/complex128_bit_string_parts_fill",
    );
    assert_eq!(array.fill_value().as_bytes(), complex128(1.0, -2.0));

    let entry = json!({
        "zarr_format": "https://purl.org/zarr/spec/core/3.0",
        "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"},
        "extensions": []
    });
    let doc = json!({
        "shape": [2], "data_type": "float16",
        "chunk_grid": {"type": "regular", "chunk_shape": [2], "separator": "/"},
        "chunk_memory_layout": "C", "fill_value": "0b001111000000000",
        "extensions": [], "attributes": {}
    });
    let store = memory_store(&[("zarr.json", entry), ("meta/a.array.json", doc)]);
    let err = Array::open(store, "/a").unwrap_err();
    let text = error_chain(&err);
    assert!(text.contains("meta/a.array.json"), "{text}");
    assert!(
        text.contains("has 15 binary digits, but data type `float16` needs exactly 16"),
        "{text}"
    );
}

/// zarr-python 2.18 opens each of `paths` in the json-suffixed layout at
/// `theirs` (its own writing) and at `ours` (zarrkit's) and asserts the
/// same data type, fill value and elements.
const COMPARE_ZARR2_V3: &str = r#"
import os, sys
os.environ["ZARR_V3_EXPERIMENTAL_API"] = "1"
import numpy as np, zarr
from zarr._storage.v3 import DirectoryStoreV3
theirs, ours, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
for path in paths:
    a = zarr.open_array(DirectoryStoreV3(theirs), path=path, mode="r", zarr_version=3)
    b = zarr.open_array(DirectoryStoreV3(ours), path=path, mode="r", zarr_version=3)
    assert a.dtype == b.dtype, (path, a.dtype, b.dtype)
    # An undefined (null) fill value is written as zeros in this layout;
    # an `|O` array's default `0` as the element zarrkit reads for it ("0"
    # for strings, as zarr-python 3.1 and zarrkit's v2 read it).
    if a.fill_value is not None and a.dtype != object:
        assert np.array(a.fill_value, a.dtype).tobytes() == np.array(b.fill_value, b.dtype).tobytes(), path
    if a.dtype == object:
        assert [repr(x) for x in a[...]] == [repr(x) for x in b[...]], path
    else:
        assert a[...].tobytes() == b[...].tobytes(), path
    print(path, b.dtype)
"#;

/// Migrates the zarr-python 2.18 fixture store to the same layout with
/// zarrkit and has zarr-python 2.18 compare `paths` in both.
fn zarr2_reads_zarrkits_copy(paths: &[&str]) {
    zarr2_reads_zarrkits_copy_of("v3-draft-2019-json/zarr-python-2.18-ext.zarr", paths);
}

fn zarr2_reads_zarrkits_copy_of(store: &str, paths: &[&str]) {
    let Some(python) = zarr2_python() else { return };
    let theirs = fixture(store);
    let src: Arc<dyn Store> = Arc::new(FilesystemStore::new(&theirs).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let ours = dir.path().join("copy.zarr");
    let dst: Arc<dyn Store> = Arc::new(FilesystemStore::new(&ours).unwrap());
    let plan = zarrkit::migrate::plan(src, dst, ZarrFormat::V3Draft2019Json).unwrap();
    zarrkit::migrate::migrate(&plan, &mut |_| {}).unwrap();
    let output = std::process::Command::new(python)
        .arg("-c")
        .arg(COMPARE_ZARR2_V3)
        .arg(&theirs)
        .arg(&ours)
        .args(paths.iter().map(|p| p.trim_start_matches('/')))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(stdout.lines().count(), paths.len(), "{stdout}");
}

/// Issue #9, item 4. In zarr-python 2.x's experimental v3 layout the
/// `data_type` of a fixed-length string array may be the string data types
/// extension object (`http://purl.org/zarr/spec/extensions/string-dtypes/
/// 1.0`), which zarr-python 2.18 reads by its `type` alone and the other
/// drafts already read. This layout's parser knew only zarr-python's own
/// placeholder URIs and refused it as an unsupported data type.
#[test]
fn issue_9_string_dtypes_extension_in_the_zarr_python_2_v3_layout() {
    let store = "v3-draft-2019-json/zarr-python-2.18-ext.zarr";
    // Elements 0..3 written, the rest the fill value (the generator).
    let big = open_fixture(store, "/string_dtypes/unicode3_big");
    assert_eq!(big.data_type(), &DataType::FixedUtf32(12));
    assert_eq!(
        big.read_strings(&Region::whole(&[5])).unwrap(),
        ["a", "bc", "d\u{4e2d}", "z", "z"]
    );
    let little = open_fixture(store, "/string_dtypes/unicode5_little");
    assert_eq!(
        little.read_strings(&Region::whole(&[5])).unwrap(),
        ["hello", "w", "\u{e9}t\u{e9}", "", ""]
    );
    let bytes = open_fixture(store, "/string_dtypes/bytes7");
    assert_eq!(bytes.data_type(), &DataType::FixedBytes(7));
    assert_eq!(
        bytes.read_byte_strings(&Region::whole(&[5])).unwrap(),
        [&b"abc"[..], b"", b"1234567", b"pad", b"pad"].map(<[u8]>::to_vec)
    );
    // A type of the wrong kind is refused naming the field.
    let doc = json!({
        "shape": [1], "chunk_grid": {"type": "regular", "chunk_shape": [1], "separator": "/"},
        "chunk_memory_layout": "C", "fill_value": null, "extensions": [], "attributes": {},
        "data_type": {"extension": "http://purl.org/zarr/spec/extensions/string-dtypes/1.0",
                      "type": "<i4", "fallback": null}
    });
    let entry = json!({
        "zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0",
        "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0",
        "metadata_key_suffix": ".json", "extensions": []
    });
    let mem = memory_store(&[("zarr.json", entry), ("meta/root/s.array.json", doc)]);
    let err = Array::open(mem, "/s").unwrap_err();
    let text = error_chain(&err);
    assert!(text.contains("data_type.type"), "{text}");
    // Written (both byte orders): zarr-python 2.18 reads zarrkit's copy as
    // it reads its own.
    zarr2_reads_zarrkits_copy(&[
        "/string_dtypes/unicode3_big",
        "/string_dtypes/unicode5_little",
        "/string_dtypes/bytes7",
    ]);
}

/// Issue #9, item 5. zarr-python 2.18 writes a structured type whose fields
/// differ in byte order as NumPy's `descr` (`[["x", "<i4"], ["y", ">f8"]]`)
/// under its structured placeholder URI. This layout checked the type with
/// the drafts' struct parser, which holds one byte order per structure and
/// refused it as "structure with mixed byte order", though v1 and v2 read
/// the same dtype through `zarrkit.struct_bytes`.
#[test]
fn issue_9_mixed_byte_order_structures_in_the_zarr_python_2_v3_layout() {
    let store = "v3-draft-2019-json/zarr-python-2.18-ext.zarr";
    let array = open_fixture(store, "/mixed/structured_mixed_order_zlib");
    let whole = Region::whole(&[5]);
    // Written 0..3; the rest the fill value (-1, 0.5).
    assert_eq!(
        array.read_field::<i32>(&whole, "x").unwrap(),
        [1, -2, 3, -1, -1]
    );
    assert_eq!(
        array.read_field::<f64>(&whole, "y").unwrap(),
        [1.5, 2.25, -1e300, 0.5, 0.5]
    );
    let nested = open_fixture(store, "/mixed/structured_nested_mixed_order_f");
    assert_eq!(
        nested
            .read_field::<u16>(&Region::whole(&[2, 3]), "id")
            .unwrap(),
        [1, 2, 3, 4, 5, 6]
    );
    zarr2_reads_zarrkits_copy(&[
        "/mixed/structured_mixed_order_zlib",
        "/mixed/structured_nested_mixed_order_f",
    ]);
}

/// Issue #9, "the rest of the same class". zarr-python 2.18 writes `|O`
/// arrays in its experimental v3 layout as `{"extension": "TODO: object
/// array protocol URL", "type": "|O"}` with the object codec first in
/// `attributes.filters`, as v2 has it in `filters`. The layout's parser
/// knew the other placeholder URIs but not this one, so every such array
/// was refused as an unsupported data type.
#[test]
fn issue_9_object_arrays_in_the_zarr_python_2_v3_layout() {
    let store = "v3-draft-2019-json/zarr-python-2.18-objects.zarr";
    // The values testdata/generate/v3_draft2019_json_fixtures.py wrote.
    let utf8 = open_fixture(store, "/vlen_utf8");
    assert_eq!(utf8.data_type(), &DataType::String);
    assert_eq!(
        utf8.read_strings(&Region::whole(&[5])).unwrap(),
        ["a", "bc", "d\u{e9}", "", "\u{4e2d}\u{6587}"]
    );
    let bytes = open_fixture(store, "/vlen_bytes");
    assert_eq!(
        bytes.read_byte_strings(&Region::whole(&[3])).unwrap(),
        [&b"x"[..], b"", b"yz\0"].map(<[u8]>::to_vec)
    );
    let ragged = open_fixture(store, "/vlen_array_int32");
    assert_eq!(
        ragged
            .read_vlen_arrays::<i32>(&Region::whole(&[3]))
            .unwrap(),
        [vec![1, 2], vec![], vec![-3]]
    );
    let json = open_fixture(store, "/json2");
    assert_eq!(
        json.read_json(&Region::whole(&[4])).unwrap(),
        [json!(1), json!("x"), json!([1, 2]), json!({"k": null})]
    );
    // Written back under the same URI, zarr-python 2.18 reads zarrkit's
    // copy as its own.
    zarr2_reads_zarrkits_copy_of(
        store,
        &["/vlen_utf8", "/vlen_bytes", "/vlen_array_int32", "/json2"],
    );
}

fn text_at(store: &dyn Store, key: &str) -> String {
    let bytes = store
        .get(&StoreKey::new(key).unwrap(), None)
        .unwrap()
        .unwrap();
    String::from_utf8(bytes).unwrap()
}

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
    let text = error_chain(&err);
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
    let text = error_chain(&err);
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

/// Issue #10, items 4 and 5: writers of one sharded array in several
/// processes, and interrupted migrations. The sharded arrays here use zstd
/// inner chunks and a crc32c index.
#[cfg(all(feature = "zstd", feature = "crc32c"))]
mod issue_10 {
    use std::ffi::OsStr;
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use zarrkit::codec::sharding::ShardingCodec;
    use zarrkit::codec::{Codec, bytes::BytesCodec, zstd::ZstdCodec};
    use zarrkit::metadata::DataType;
    use zarrkit::store::{
        ByteRange, FilesystemStore, ListDir, Store, StoreCapabilities, StoreError, StoreKey,
        StorePrefix, ValueSnapshot, ValueVersion,
    };
    use zarrkit::{Array, Region};

    /// The layout of issue #10's reproducer: 64×64 shards of 8×8 inner chunks
    /// (zstd inside, the default crc32c index), 2×2 shards, 256 inner chunks.
    const SHAPE: [u64; 2] = [128, 128];
    const SHARD: u64 = 64;
    const INNER: u64 = 8;
    const INNER_PER_ROW: u64 = SHAPE[1] / INNER;
    const INNER_CHUNKS: u64 = (SHAPE[0] / INNER) * INNER_PER_ROW;

    fn sharded_array(store: Arc<dyn Store>) -> Array {
        let zstd = Codec::BytesToBytes(Arc::new(ZstdCodec::new(0, false).unwrap()));
        let bytes = Codec::ArrayToBytes(Arc::new(BytesCodec::little()));
        let sharding = Codec::ArrayToBytes(Arc::new(ShardingCodec::new(
            &[INNER, INNER],
            vec![bytes, zstd],
        )));
        Array::builder(&SHAPE, DataType::UInt16, &[SHARD, SHARD])
            .codecs(vec![sharding])
            .create(store, "a")
            .unwrap()
    }

    fn open_array(root: &Path) -> Array {
        let store: Arc<dyn Store> = Arc::new(FilesystemStore::open_existing(root).unwrap());
        Array::open(store, "a").unwrap()
    }

    /// The value of element `e` (0..64) of inner chunk `c` after round `r`:
    /// never the fill value 0, and different in every round, chunk and element.
    fn value(c: u64, e: u64, r: u64) -> u16 {
        (1 + ((c * 64 + e) * 7 + r * 13) % 65_000) as u16
    }

    fn inner_region(c: u64) -> Region {
        Region::new(
            vec![(c / INNER_PER_ROW) * INNER, (c % INNER_PER_ROW) * INNER],
            vec![INNER, INNER],
        )
    }

    fn round_values(c: u64, r: u64) -> Vec<u16> {
        (0..INNER * INNER).map(|e| value(c, e, r)).collect()
    }

    /// Writes round `r` of inner chunk `c`: a partial write of its shard.
    fn write_inner(array: &Array, c: u64, r: u64) {
        array
            .write_region(&inner_region(c), &round_values(c, r))
            .unwrap_or_else(|err| panic!("writing inner chunk {c} in round {r}: {err}"));
    }

    /// Checks that `data` is inner chunk `c` as some round left it (or never
    /// written): a chunk mixed from two versions, or decoded from bytes of
    /// another file, matches no round.
    fn check_consistent(c: u64, data: &[u16], rounds: u64) -> Result<(), String> {
        if data.iter().all(|&v| v == 0) {
            return Ok(());
        }
        if (0..rounds).any(|r| data == round_values(c, r)) {
            return Ok(());
        }
        Err(format!(
            "inner chunk {c} holds values of no round: {data:?}"
        ))
    }

    /// The inner chunks whose last round is missing: the elements lost.
    fn elements_lost(array: &Array, rounds: u64) -> u64 {
        let all = array.read_region::<u16>(&Region::whole(&SHAPE)).unwrap();
        let mut lost = 0;
        for c in 0..INNER_CHUNKS {
            let region = inner_region(c);
            for e in 0..INNER * INNER {
                let (i, j) = (region.start()[0] + e / INNER, region.start()[1] + e % INNER);
                if all[(i * SHAPE[1] + j) as usize] != value(c, e, rounds - 1) {
                    lost += 1;
                }
            }
        }
        lost
    }

    /// Writer `w` of `writers`: every round, each inner chunk it owns
    /// (`c % writers == w`, so every shard has inner chunks of every writer),
    /// in an order that differs between writers.
    fn run_writer(array: &Array, w: u64, writers: u64, rounds: u64) {
        let mine: Vec<u64> = (0..INNER_CHUNKS).filter(|c| c % writers == w).collect();
        for r in 0..rounds {
            for k in 0..mine.len() {
                // A rotation, reversed for odd writers: each chunk once per round.
                let k = if w.is_multiple_of(2) {
                    k
                } else {
                    mine.len() - 1 - k
                };
                write_inner(array, mine[(k + w as usize * 5) % mine.len()], r);
            }
        }
    }

    /// Reads inner chunks (through the partial decoder: index, then inner
    /// chunks) and whole shards until `stop` exists, checking each; returns
    /// the number of reads.
    fn run_reader(array: &Array, stop: &Path, rounds: u64) -> Result<u64, String> {
        let mut reads = 0u64;
        let mut c = 0;
        loop {
            let done = stop.exists();
            c = (c * 37 + 11) % INNER_CHUNKS;
            let data = array
                .read_region::<u16>(&inner_region(c))
                .map_err(|err| format!("reading inner chunk {c}: {err}"))?;
            check_consistent(c, &data, rounds)?;
            reads += 1;
            if reads.is_multiple_of(16) {
                let shard = array
                    .read_region::<u16>(&Region::new(vec![0, SHARD], vec![SHARD, SHARD]))
                    .map_err(|err| format!("reading shard 0/1: {err}"))?;
                for c in (0..INNER_CHUNKS).filter(|c| {
                    let r = inner_region(*c);
                    r.start()[0] < SHARD && r.start()[1] >= SHARD
                }) {
                    let r = inner_region(c);
                    let data: Vec<u16> = (0..INNER * INNER)
                        .map(|e| {
                            let i = r.start()[0] + e / INNER;
                            let j = r.start()[1] - SHARD + e % INNER;
                            shard[(i * SHARD + j) as usize]
                        })
                        .collect();
                    check_consistent(c, &data, rounds)?;
                }
            }
            if done {
                return Ok(reads);
            }
        }
    }

    /// The environment variable that makes this test binary a child writer or
    /// reader of [`issue_10_writers_in_several_processes_lose_nothing`].
    const CHILD_ROLE: &str = "ZARRKIT_IT_CHILD_ROLE";
    const CHILD_ROOT: &str = "ZARRKIT_IT_CHILD_ROOT";
    const TEST_NAME: &str =
        "regressions::issue_10::issue_10_writers_in_several_processes_lose_nothing";

    fn spawn_child(root: &Path, role: &str) -> Child {
        Command::new(std::env::current_exe().unwrap())
            .args([TEST_NAME, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_ROLE, role)
            .env(CHILD_ROOT, root)
            .spawn()
            .unwrap()
    }

    /// The child's side: `writer <w> <writers> <rounds>` or `reader <rounds>`.
    fn run_child(role: &str, root: &Path) {
        let array = open_array(root);
        let words: Vec<u64> = role
            .split(' ')
            .skip(1)
            .map(|w| w.parse().unwrap())
            .collect();
        if role.starts_with("writer") {
            run_writer(&array, words[0], words[1], words[2]);
        } else {
            let reads = run_reader(&array, &root.join("stop"), words[0]).unwrap_or_else(|err| {
                panic!("the reader saw a torn or undecodable inner chunk: {err}")
            });
            eprintln!("reader: {reads} reads");
            assert!(reads > 0);
        }
    }

    // Issue #10, item 4. A partial shard write read the shard's index and then
    // its untouched inner chunks in two separate store reads, each opening the
    // file anew; when another process renamed a new shard file in between, the
    // writer copied bytes of the new file at the old file's offsets and stored
    // them under a fresh, valid crc32c index, leaving inner chunks that no
    // longer decode. And the guard against lost updates was an in-process
    // generation keyed by the store object, so writers in other processes
    // overwrote each other's shards and lost a quarter to a half of the
    // elements in every trial. Reads and read-modify-writes now go through one
    // snapshot of the shard (the file opened once), and the write is a
    // compare-and-swap under a `flock` (`Store::set_if_unchanged`), retried.
    //
    // This test runs as the parent (several writer processes and a reader
    // process on one store, several trials) and, re-invoked with
    // `ZARRKIT_IT_CHILD_ROLE`, as each child. `ZARRKIT_WRITER_TRIALS`,
    // `ZARRKIT_WRITERS` and `ZARRKIT_WRITER_ROUNDS` raise the load.
    #[test]
    fn issue_10_writers_in_several_processes_lose_nothing() {
        if let Ok(role) = std::env::var(CHILD_ROLE) {
            run_child(&role, &PathBuf::from(std::env::var_os(CHILD_ROOT).unwrap()));
            return;
        }
        let setting = |name: &str, default: u64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        let trials = setting("ZARRKIT_WRITER_TRIALS", 3);
        let writers = setting("ZARRKIT_WRITERS", 4);
        let rounds = setting("ZARRKIT_WRITER_ROUNDS", 3);
        let mut total_lost = 0;
        for trial in 0..trials {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().join("store");
            let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(&root).unwrap());
            sharded_array(store);
            let reader = spawn_child(&root, &format!("reader {rounds}"));
            let children: Vec<Child> = (0..writers)
                .map(|w| spawn_child(&root, &format!("writer {w} {writers} {rounds}")))
                .collect();
            for mut child in children {
                assert!(child.wait().unwrap().success(), "a writer failed");
            }
            std::fs::write(root.join("stop"), b"").unwrap();
            let mut reader = reader;
            assert!(reader.wait().unwrap().success(), "the reader failed");
            std::fs::remove_file(root.join("stop")).unwrap();
            let array = open_array(&root);
            let lost = elements_lost(&array, rounds);
            eprintln!(
                "trial {trial}: {writers} processes x {rounds} rounds x {} inner chunks each: {lost} elements lost",
                INNER_CHUNKS / writers
            );
            total_lost += lost;
            // No lock file is left behind, and none is listed as a key.
            let keys = array.store().list().unwrap();
            assert!(
                keys.iter().all(|k| !k.as_str().contains(".zarrkit")),
                "{keys:?}"
            );
            assert_no_lock_files(&root);
        }
        assert_eq!(total_lost, 0, "elements lost over {trials} trials");
    }

    fn assert_no_lock_files(dir: &Path) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            assert!(!name.starts_with(".zarrkit-"), "left behind: {name}");
            if entry.file_type().unwrap().is_dir() {
                assert_no_lock_files(&entry.path());
            }
        }
    }

    // Issue #10, item 4: two `FilesystemStore`s on one directory in one
    // process lost updates just as two processes did, because the in-process
    // guard was keyed by the store object. Each thread here has its own store.
    #[test]
    fn issue_10_two_filesystem_stores_on_one_directory_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("store");
        sharded_array(Arc::new(FilesystemStore::new(&root).unwrap()));
        let (writers, rounds) = (2, 3);
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let reader = scope.spawn(|| {
                let array = open_array(&root);
                let mut c = 0;
                while !stop.load(Ordering::SeqCst) {
                    c = (c * 37 + 11) % INNER_CHUNKS;
                    let data = array.read_region::<u16>(&inner_region(c)).unwrap();
                    check_consistent(c, &data, rounds).unwrap();
                }
            });
            let handles: Vec<_> = (0..writers)
                .map(|w| {
                    let root = &root;
                    scope.spawn(move || run_writer(&open_array(root), w, writers, rounds))
                })
                .collect();
            for handle in handles {
                handle.join().unwrap();
            }
            stop.store(true, Ordering::SeqCst);
            reader.join().unwrap();
        });
        assert_eq!(elements_lost(&open_array(&root), rounds), 0);
    }

    /// A store with hooks where issue #10's failures struck: after the first
    /// read of a snapshot, `other_writer` runs once when armed (another
    /// process replacing the value, made deterministic); each `set` first
    /// takes one from `budget`, and fails when none is left (a process killed
    /// part way stops writing).
    struct Hooked {
        inner: Arc<dyn Store>,
        other_writer: Box<dyn Fn() + Send + Sync>,
        armed: AtomicBool,
        budget: AtomicUsize,
    }

    impl Hooked {
        fn new(inner: Arc<dyn Store>) -> Self {
            Self {
                inner,
                other_writer: Box::new(|| {}),
                armed: AtomicBool::new(false),
                budget: AtomicUsize::new(usize::MAX),
            }
        }
    }

    impl std::fmt::Debug for Hooked {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Hooked")
                .field("inner", &self.inner)
                .finish_non_exhaustive()
        }
    }

    struct HookedSnapshot<'a> {
        inner: Box<dyn ValueSnapshot + 'a>,
        store: &'a Hooked,
    }

    impl ValueSnapshot for HookedSnapshot<'_> {
        fn read(&self, ranges: &[Option<ByteRange>]) -> Result<Option<Vec<Vec<u8>>>, StoreError> {
            let result = self.inner.read(ranges);
            if self.store.armed.swap(false, Ordering::SeqCst) {
                (self.store.other_writer)();
            }
            result
        }

        fn version(&self) -> Option<ValueVersion> {
            self.inner.version()
        }
    }

    impl Store for Hooked {
        fn name(&self) -> &'static str {
            "hooked store"
        }
        fn capabilities(&self) -> StoreCapabilities {
            self.inner.capabilities()
        }
        fn get(
            &self,
            key: &StoreKey,
            range: Option<ByteRange>,
        ) -> Result<Option<Vec<u8>>, StoreError> {
            self.inner.get(key, range)
        }
        fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
            let taken = self
                .budget
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
            if taken.is_err() {
                return Err(StoreError::Write {
                    store: "hooked store",
                    key: key.clone(),
                    source: std::io::Error::other("killed"),
                });
            }
            self.inner.set(key, value)
        }
        fn snapshot<'a>(
            &'a self,
            key: &StoreKey,
        ) -> Result<Box<dyn ValueSnapshot + 'a>, StoreError> {
            Ok(Box::new(HookedSnapshot {
                inner: self.inner.snapshot(key)?,
                store: self,
            }))
        }
        fn set_if_unchanged(
            &self,
            key: &StoreKey,
            value: Option<&[u8]>,
            expected: &ValueVersion,
        ) -> Result<bool, StoreError> {
            self.inner.set_if_unchanged(key, value, expected)
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

    /// A sharded array on a [`Hooked`] filesystem store whose other writer rewrites
    /// every inner chunk of shard 0/0 (with round 1 values, compressing to other
    /// sizes, so every offset moves) through a second store on the directory.
    fn interleaved(dir: &Path) -> (Array, Arc<Hooked>) {
        let root = dir.join("store");
        let plain = sharded_array(Arc::new(FilesystemStore::new(&root).unwrap()));
        // Round 0 in every inner chunk of shard 0/0.
        for c in (0..INNER_CHUNKS).filter(|&c| inner_region(c).start().iter().all(|&s| s < SHARD)) {
            write_inner(&plain, c, 0);
        }
        let other_root = root.clone();
        let store = Arc::new(Hooked {
            other_writer: Box::new(move || {
                let other = open_array(&other_root);
                let noise: Vec<u16> = (0..SHARD * SHARD)
                    .map(|i| (i.wrapping_mul(0x9e37_79b9) >> 7) as u16 | 1)
                    .collect();
                other
                    .write_region(&Region::new(vec![0, 0], vec![SHARD, SHARD]), &noise)
                    .unwrap();
            }),
            ..Hooked::new(Arc::new(FilesystemStore::open_existing(&root).unwrap()))
        });
        let array = Array::open(store.clone(), "a").unwrap();
        (array, store)
    }

    // Issue #10, item 4, the read side: the partial decoder read a shard's
    // index in one store read and the inner chunk in another, so a shard
    // replaced in between was read at the old index's offsets (undecodable
    // bytes, or another chunk's). One snapshot now serves both reads.
    #[test]
    fn issue_10_a_partial_read_reads_one_version_of_the_shard() {
        let dir = tempfile::tempdir().unwrap();
        let (array, store) = interleaved(dir.path());
        store.armed.store(true, Ordering::SeqCst);
        // Inner chunk 1: its bytes follow inner chunk 0's, whose length the
        // replacement changes.
        let data = array.read_region::<u16>(&inner_region(1)).unwrap();
        assert!(!store.armed.load(Ordering::SeqCst), "the replacement ran");
        assert_eq!(data, round_values(1, 0), "the version the index came from");
    }

    // Issue #10, item 4, the write side: a partial write that read the shard
    // while another writer replaced it stored its update over the other
    // writer's shard (or over bytes of both). The compare-and-swap now sees
    // the shard changed, and the write reads it again and keeps both updates.
    #[test]
    fn issue_10_a_partial_write_racing_another_writer_keeps_both_updates() {
        let dir = tempfile::tempdir().unwrap();
        let (array, store) = interleaved(dir.path());
        store.armed.store(true, Ordering::SeqCst);
        array
            .write_region(&inner_region(1), &round_values(1, 2))
            .unwrap();
        assert!(!store.armed.load(Ordering::SeqCst), "the other writer ran");
        let shard = array
            .read_region::<u16>(&Region::new(vec![0, 0], vec![SHARD, SHARD]))
            .unwrap();
        for i in 0..SHARD {
            for j in 0..SHARD {
                let got = shard[(i * SHARD + j) as usize];
                let expected = if i < INNER && (INNER..2 * INNER).contains(&j) {
                    // Ours: inner chunk 1, round 2.
                    value(1, i * INNER + (j - INNER), 2)
                } else {
                    // The other writer's.
                    ((i * SHARD + j).wrapping_mul(0x9e37_79b9) >> 7) as u16 | 1
                };
                assert_eq!(got, expected, "element ({i}, {j})");
            }
        }
    }

    // Issue #10, item 5, in the library: a migration that stopped part way
    // left a destination that looked complete (missing chunks read as the fill
    // value), and planning it again failed on the non-empty destination. Now
    // the marker makes `check_finished` (which the commands call before
    // opening a store) fail, and planning again resumes, keeping the chunks
    // already copied.
    #[test]
    fn issue_10_an_interrupted_migration_is_refused_when_opened_and_resumes() {
        use zarrkit::format::ZarrFormat;
        use zarrkit::migrate::{self, MIGRATION_MARKER, MigrateError};
        let src: Arc<dyn Store> = Arc::new(zarrkit::store::MemoryStore::new());
        let array = Array::builder(&[100, 100], DataType::Int32, &[10, 10])
            .format(ZarrFormat::V2)
            .create(Arc::clone(&src), "/")
            .unwrap();
        let values: Vec<i32> = (0..10_000).map(|i| i * 3 + 1).collect();
        array
            .write_region(&Region::whole(&[100, 100]), &values)
            .unwrap();

        let dst = Arc::new(zarrkit::store::MemoryStore::new());
        let failing: Arc<dyn Store> = Arc::new(Hooked {
            // The marker, the document, and 40 of the 100 chunks.
            budget: AtomicUsize::new(42),
            ..Hooked::new(dst.clone())
        });
        let plan = migrate::plan(Arc::clone(&src), failing, ZarrFormat::V3).unwrap();
        assert!(!plan.resumes());
        let err = migrate::migrate(&plan, &mut |_| {}).unwrap_err();
        assert!(
            err.to_string().contains("killed") || matches!(err, MigrateError::Zarr(_)),
            "{err}"
        );

        let dst: Arc<dyn Store> = dst;
        let err = migrate::check_finished(dst.as_ref()).unwrap_err();
        assert!(
            matches!(&err, zarrkit::Error::UnfinishedMigration { key } if key.as_str() == MIGRATION_MARKER),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(
            message.contains(&format!("`{MIGRATION_MARKER}`"))
                && message.contains("again to resume"),
            "{message}"
        );

        // Another target format is refused, naming the one begun.
        let err = migrate::plan(Arc::clone(&src), Arc::clone(&dst), ZarrFormat::V2).unwrap_err();
        assert!(
            matches!(&err, MigrateError::UnfinishedToOtherFormat { found, .. } if found == "v3"),
            "{err:?}"
        );

        let plan = migrate::plan(Arc::clone(&src), Arc::clone(&dst), ZarrFormat::V3).unwrap();
        assert!(plan.resumes());
        let report = migrate::migrate(&plan, &mut |_| {}).unwrap();
        assert_eq!(report.chunks_skipped, 40);
        assert_eq!(report.chunks, 60);
        assert_eq!(report.chunks_verified, 100);
        let migrated = Array::open(Arc::clone(&dst), "/").unwrap();
        assert_eq!(
            migrated
                .read_region::<i32>(&Region::whole(&[100, 100]))
                .unwrap(),
            values
        );
        assert_eq!(
            dst.get(&StoreKey::new(MIGRATION_MARKER).unwrap(), None)
                .unwrap(),
            None
        );

        // Finished, the destination is an ordinary non-empty store again.
        let err = migrate::plan(Arc::clone(&src), dst, ZarrFormat::V3).unwrap_err();
        assert!(
            matches!(err, MigrateError::DestinationNotEmpty { .. }),
            "{err:?}"
        );
    }

    // Issue #10, item 5: the marker must not be taken for a node by other Zarr
    // readers. zarr-python 3.1 lists the destination of an interrupted
    // migration with the array as its only member, and warns that the marker
    // "is not recognized as a component of a Zarr hierarchy".
    #[test]
    fn issue_10_zarr_python_does_not_take_the_migration_marker_for_a_node() {
        use zarrkit::format::ZarrFormat;
        use zarrkit::migrate;
        let Some(python) = crate::support::python("ZARRKIT_PYTHON", "zarr 3.1") else {
            return;
        };
        let src: Arc<dyn Store> = Arc::new(zarrkit::store::MemoryStore::new());
        zarrkit::Group::create_as(
            Arc::clone(&src),
            "/",
            ZarrFormat::V2,
            zarrkit::metadata::JsonMap::new(),
        )
        .unwrap();
        let array = Array::builder(&[40], DataType::Int32, &[10])
            .format(ZarrFormat::V2)
            .create(Arc::clone(&src), "/a")
            .unwrap();
        array
            .write_region(&Region::whole(&[40]), &(1..=40).collect::<Vec<i32>>())
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("dst.zarr");
        let dst: Arc<dyn Store> = Arc::new(Hooked {
            // The marker, two documents and two of the four chunks.
            budget: AtomicUsize::new(5),
            ..Hooked::new(Arc::new(FilesystemStore::new(&root).unwrap()))
        });
        let plan = migrate::plan(src, dst, ZarrFormat::V3).unwrap();
        migrate::migrate(&plan, &mut |_| {}).unwrap_err();
        assert!(root.join(migrate::MIGRATION_MARKER).is_file());

        let script = r#"
import sys, warnings, zarr
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    group = zarr.open_group(sys.argv[1], mode="r")
    print(sorted(name for name, _ in group.members()))
for warning in caught:
    print("warning:", warning.message)
"#;
        let stdout = crate::support::run(
            &python,
            &[OsStr::new("-c"), OsStr::new(script), root.as_os_str()],
            &[],
        );
        let mut lines = stdout.lines();
        assert_eq!(lines.next(), Some("['a']"), "{stdout}");
        assert!(
            lines.any(|l| l.contains(migrate::MIGRATION_MARKER) && l.contains("not recognized")),
            "{stdout}"
        );
    }
}

/// A store holding the v3 array document `zarr.json` at the root, as an
/// edited (or hostile) store would.
fn store_with_document(document: serde_json::Value) -> Arc<dyn Store> {
    let store = Arc::new(MemoryStore::new());
    store
        .set(
            &StoreKey::new("zarr.json").unwrap(),
            document.to_string().as_bytes(),
        )
        .unwrap();
    store
}

/// 2^50: a byte count beyond any address space (x86-64 and AArch64 give a
/// process at most 2^48 bytes), so that if a fix regresses, the allocation
/// fails at once (an abort, which fails the test) rather than succeeding
/// lazily where memory is overcommitted and then exhausting the machine.
const BEYOND_ADDRESS_SPACE: u64 = 1 << 50;

fn uint8_array_document(shape: &[u64], chunk_shape: &[u64]) -> serde_json::Value {
    serde_json::json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": "uint8",
        "chunk_grid": { "name": "regular", "configuration": { "chunk_shape": chunk_shape } },
        "chunk_key_encoding": { "name": "default" },
        "fill_value": 7,
        "codecs": [{ "name": "bytes" }]
    })
}

// Issue #10: `read_region_bytes` allocated the region's bytes with
// `vec![0u8; n]` as soon as `n` fitted a `usize`. A row of the edited shape
// `[1000, 10^12]` is 10^12 bytes, so reading it (as `zarrkit export` did,
// one row of chunks per slab) aborted the process with "memory allocation
// failed". A read now checks its output against the array's memory budget.
#[test]
fn issue_10_a_read_larger_than_the_memory_budget_is_refused_before_allocating() {
    let columns = BEYOND_ADDRESS_SPACE;
    let store = store_with_document(uint8_array_document(&[1000, columns], &[1, 1]));
    let mut array = Array::open(store, "/").unwrap();
    assert_eq!(array.memory_budget(), zarrkit::DEFAULT_MEMORY_BUDGET);
    let row = Region::new(vec![0, 0], vec![1, columns]);
    let err = array.read_region_bytes(&row).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::MemoryBudget { needed, budget, .. }
                if *needed == columns && *budget == zarrkit::DEFAULT_MEMORY_BUDGET
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("array `/`"), "{message}");
    assert!(message.contains(&format!("[1, {columns}]")), "{message}");
    assert!(array.read_region::<u8>(&row).is_err());

    // What fits the budget reads as before: unwritten chunks are the fill value.
    let small = Region::new(vec![999, columns - 10], vec![1, 10]);
    assert_eq!(array.read_region_bytes(&small).unwrap(), vec![7u8; 10]);

    // The budget is the array's to set.
    array.set_memory_budget(5);
    let err = array.read_region_bytes(&small).unwrap_err();
    assert!(
        matches!(
            err,
            Error::MemoryBudget {
                needed: 10,
                budget: 5,
                ..
            }
        ),
        "{err:?}"
    );
}

// Issue #10: the read plan holds one piece per chunk the region touches
// (a key and three coordinate vectors), so a region of one-element chunks
// needs far more memory for its plan than for its bytes; that was never
// checked. The plan is now counted against the budget before it is built.
#[test]
fn issue_10_a_plan_of_too_many_chunks_is_refused_before_it_is_built() {
    let store = store_with_document(uint8_array_document(&[1000, BEYOND_ADDRESS_SPACE], &[1, 1]));
    let mut array = Array::open(store, "/").unwrap();
    array.set_memory_budget(1 << 20);
    // 100 000 bytes fit 1 MiB; 100 000 planned chunks do not.
    let region = Region::new(vec![0, 0], vec![1, 100_000]);
    let err = array.read_region_bytes(&region).unwrap_err();
    assert!(
        matches!(&err, Error::MemoryBudget { what, budget: 1_048_576, .. } if what.contains("100000 chunks")),
        "{err:?}"
    );
    // 1 000 chunks are well within it.
    let region = Region::new(vec![0, 0], vec![1, 1000]);
    assert_eq!(array.read_region_bytes(&region).unwrap(), vec![7u8; 1000]);
}

// Issue #10: the `sharding_indexed` decoder allocated the whole declared
// shard (`vec![0u8; repr.size_bytes()?]`) before it looked at the stored
// bytes, so a 10-byte shard under an edited chunk shape of 10^11 asked the
// allocator for 100 GB and aborted (here 2^50, see `BEYOND_ADDRESS_SPACE`). It now checks the index against the
// stored shard first, and then reserves the output fallibly.
#[test]
fn issue_10_a_shard_declared_huge_is_checked_before_its_output_is_allocated() {
    let n = BEYOND_ADDRESS_SPACE;
    let mut document = uint8_array_document(&[n], &[n]);
    document["codecs"] = serde_json::json!([{
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [16],
            "codecs": [{ "name": "bytes" }],
            "index_codecs": [{ "name": "bytes", "configuration": { "endian": "little" } }]
        }
    }]);
    let store = store_with_document(document);
    store
        .set(&StoreKey::new("c/0").unwrap(), b"0123456789")
        .unwrap();
    let mut array = Array::open(store, "/").unwrap();
    // The codec itself must not trust the shape: no budget stops it here.
    array.set_memory_budget(u64::MAX);
    let err = array.read_chunk_bytes(&[0]).unwrap_err();
    assert!(
        matches!(&err, Error::Decode { key, .. } if key.as_str() == "c/0"),
        "{err:?}"
    );
    let cause = std::error::Error::source(&err).map(ToString::to_string);
    assert!(
        cause
            .as_deref()
            .is_some_and(|c| c.contains("the shard has 10 bytes, fewer than its index")),
        "{cause:?}"
    );
    // A region inside the shard reads its index alone, which is missing.
    let err = array
        .read_region_bytes(&Region::new(vec![0], vec![10]))
        .unwrap_err();
    assert!(err.to_string().contains("c/0"), "{err}");
}

/// A filesystem store in a fresh directory, with `dir` (the parent of its
/// root `store`) to put things outside it.
#[cfg(unix)]
fn filesystem_store() -> (tempfile::TempDir, zarrkit::store::FilesystemStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = zarrkit::store::FilesystemStore::new(dir.path().join("store")).unwrap();
    (dir, store)
}

#[cfg(unix)]
fn key(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

#[cfg(unix)]
fn prefix(s: &str) -> zarrkit::store::StorePrefix {
    zarrkit::store::StorePrefix::new(s).unwrap()
}

// Issue #10: `list_dir` reported a directory link as a prefix whatever it
// pointed to, so in the v3 drafts, where every directory is an implicit
// group, `tree` descended `meta/root/l1 -> ../root` forever
// (`meta/root/l1/l1/l1/...`); and a link to itself failed the whole
// listing with "too many levels of symbolic links". Listings now skip a
// directory link to a directory containing any directory being listed,
// and unresolvable links, and record what they skipped.
#[cfg(unix)]
#[test]
fn issue_10_listings_skip_link_loops_and_report_them() {
    use std::os::unix::fs::symlink;
    use zarrkit::store::SkipReason;
    let (_dir, store) = filesystem_store();
    store.set(&key("meta/root/x.array.json"), b"{}").unwrap();
    store.set(&key("a/v"), b"1").unwrap();
    store.set(&key("c/w"), b"2").unwrap();
    let root = store.root().to_path_buf();
    symlink("../root", root.join("meta/root/l1")).unwrap();
    symlink("..", root.join("meta/root/up")).unwrap();
    symlink("self", root.join("meta/root/self")).unwrap();
    // A loop through two links: a/b -> c, c/x -> a.
    symlink("../c", root.join("a/b")).unwrap();
    symlink("../a", root.join("c/x")).unwrap();

    let listing = store.list_dir(&prefix("meta/root/")).unwrap();
    assert_eq!(listing.keys, [key("meta/root/x.array.json")]);
    assert!(listing.prefixes.is_empty(), "{:?}", listing.prefixes);
    let skipped = store.skipped_links();
    let reasons: Vec<(&str, &SkipReason)> = skipped
        .iter()
        .map(|link| (link.path.as_str(), &link.reason))
        .collect();
    assert_eq!(reasons.len(), 3, "{skipped:?}");
    assert_eq!(reasons[0], ("meta/root/l1", &SkipReason::Loop));
    assert_eq!(reasons[2].0, "meta/root/up");
    assert!(
        matches!(
            reasons[1],
            ("meta/root/self", SkipReason::Unresolvable { .. })
        ),
        "{skipped:?}"
    );
    assert!(
        skipped[0]
            .to_string()
            .contains("which contains it (a loop)"),
        "{}",
        skipped[0]
    );

    // The link between siblings is followed once, then the way back is a loop.
    let listing = store.list_dir(&prefix("a/b/")).unwrap();
    assert_eq!(listing.keys, [key("a/b/w")]);
    assert!(listing.prefixes.is_empty(), "{:?}", listing.prefixes);
    let keys = store.list().unwrap();
    assert_eq!(
        keys,
        [
            key("a/b/w"),
            key("a/v"),
            key("c/w"),
            key("c/x/v"),
            key("meta/root/x.array.json")
        ]
    );
}

// Issue #10: the store followed every symbolic link, so a store from
// elsewhere whose chunk `c/0` linked to `/etc/passwd` exported that file,
// and a directory link out of the root let erase and set reach files
// outside it. Following links out of the root is now an option, off by
// default; without it such keys are refused by name and listings skip them.
#[cfg(unix)]
#[test]
fn issue_10_links_out_of_the_root_are_refused_unless_followed() {
    use std::os::unix::fs::symlink;
    use zarrkit::store::{ByteRange, SkipReason, StoreError};
    let (dir, store) = filesystem_store();
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret"), b"secret bytes").unwrap();
    let root = store.root().to_path_buf();
    store.set(&key("a/zarr.json"), b"{}").unwrap();
    std::fs::create_dir(root.join("c")).unwrap();
    symlink(outside.join("secret"), root.join("c/0")).unwrap();
    symlink(&outside, root.join("ext")).unwrap();
    // Links that stay inside the root, relative and absolute, keep working.
    symlink("../a/zarr.json", root.join("c/1")).unwrap();
    symlink(root.join("a"), root.join("abs")).unwrap();

    let refused = |err: StoreError, name: &str| {
        assert!(
            matches!(&err, StoreError::LinkOutsideRoot { key, .. } if key == name),
            "{err:?}"
        );
        assert!(err.to_string().contains(&format!("`{name}`")), "{err}");
    };
    refused(store.get(&key("c/0"), None).unwrap_err(), "c/0");
    refused(
        store
            .get(&key("c/0"), Some(ByteRange::Suffix(5)))
            .unwrap_err(),
        "c/0",
    );
    refused(
        store.get_partial_values(&[(key("c/0"), None)]).unwrap_err(),
        "c/0",
    );
    refused(store.size(&key("c/0")).unwrap_err(), "c/0");
    refused(
        store.get(&key("ext/secret"), None).unwrap_err(),
        "ext/secret",
    );
    // Writes and erases through the link would change files outside.
    refused(store.set(&key("ext/new"), b"x").unwrap_err(), "ext/new");
    refused(store.erase(&key("ext/secret")).unwrap_err(), "ext/secret");
    refused(
        store
            .set_partial_values(&[(key("c/0"), 0, b"XX".to_vec())])
            .unwrap_err(),
        "c/0",
    );
    assert_eq!(
        std::fs::read(outside.join("secret")).unwrap(),
        b"secret bytes"
    );
    assert!(!outside.join("new").exists());

    assert_eq!(store.get(&key("c/1"), None).unwrap().unwrap(), b"{}");
    assert_eq!(
        store.get(&key("abs/zarr.json"), None).unwrap().unwrap(),
        b"{}"
    );
    assert_eq!(store.get(&key("c/2"), None).unwrap(), None);
    assert_eq!(
        store.list().unwrap(),
        [key("a/zarr.json"), key("abs/zarr.json"), key("c/1")]
    );
    let skipped = store.skipped_links();
    let paths: Vec<(&str, &SkipReason)> = skipped
        .iter()
        .map(|l| (l.path.as_str(), &l.reason))
        .collect();
    assert_eq!(
        paths,
        [
            ("c/0", &SkipReason::OutsideRoot),
            ("ext", &SkipReason::OutsideRoot)
        ]
    );

    // Asked to, the store follows them.
    let store = store.follow_links_outside_root(true);
    assert_eq!(
        store.get(&key("c/0"), None).unwrap().unwrap(),
        b"secret bytes"
    );
    assert_eq!(
        store.list().unwrap(),
        [
            key("a/zarr.json"),
            key("abs/zarr.json"),
            key("c/0"),
            key("c/1"),
            key("ext/secret")
        ]
    );
}

// Issue #10: a chunk that reaches past the array's edge was decoded whole
// even when the chain can decode part of it, so an array of 10 elements
// whose document declares shards of 10^11 allocated the whole declared
// shard (after the index check, for a shard whose index is valid). Such
// chunks now go through the partial decoder, which reads the index and
// only the inner chunks inside the array; a whole-chunk decode larger
// than the memory budget is refused.
#[test]
fn issue_10_an_edge_chunk_declared_huge_decodes_only_what_the_array_holds() {
    let mut document = uint8_array_document(&[10], &[BEYOND_ADDRESS_SPACE]);
    document["codecs"] = serde_json::json!([{
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [BEYOND_ADDRESS_SPACE],
            "codecs": [{ "name": "bytes" }],
            "index_codecs": [{ "name": "bytes", "configuration": { "endian": "little" } }]
        }
    }]);
    let store = store_with_document(document);
    // A valid shard: its one inner chunk is not stored.
    store
        .set(&StoreKey::new("c/0").unwrap(), &[0xff; 16])
        .unwrap();
    let array = Array::open(Arc::clone(&store), "/").unwrap();
    let whole = Region::whole(array.shape());
    assert_eq!(array.read_region_bytes(&whole).unwrap(), vec![7u8; 10]);

    // Decoding the whole chunk needs its declared size: over the budget.
    let err = array.read_chunk_bytes(&[0]).unwrap_err();
    assert!(
        matches!(&err, Error::MemoryBudget { needed, what, .. }
            if *needed == BEYOND_ADDRESS_SPACE && what.contains("`c/0`")),
        "{err:?}"
    );
}

/// Issue #15: migrating a v2 `|O` array to v3 failed with "invalid
/// metadata in `json/zarr.json`", a key the source does not have: the
/// planner wrote the target's document to its scratch store, and the error
/// of reading it back (v3 has no data type `object`) named that scratch key.
/// The plan now refuses the node by path, naming the source's document.
#[test]
fn issue_15_migrate_names_the_source_document_of_a_data_type_the_target_lacks() {
    let src: Arc<dyn Store> =
        Arc::new(FilesystemStore::new(fixture("v2/objects/objects.zarr")).unwrap());
    let err = zarrkit::migrate::plan(src, Arc::new(MemoryStore::new()), ZarrFormat::V3)
        .expect_err("v3 has no `object` data type");
    let text = error_chain(&err);
    assert!(
        text.starts_with(
            "`/json` cannot be migrated to v3: its data type `object` (from `json/.zarray`) \
             does not read back: "
        ),
        "{text}"
    );
    assert!(!text.contains("zarr.json"), "{text}");
}

/// Issue #15: migrating a v2 array whose `fill_value` is `null` (or `0` on
/// an object array) noted "dropped the field `fill_value`" and then wrote a
/// `fill_value`: v2 keeps that marker as an ignorable field, which v3
/// cannot hold, and the generic note for dropped fields was printed. The
/// note now says which fill value the target gets, and it is the one
/// written.
#[test]
fn issue_15_migrate_notes_the_fill_value_a_v2_marker_becomes() {
    let mut vlen = zarray("|O", json!(0));
    vlen["filters"] = json!([{ "id": "vlen-utf8" }]);
    for (name, document) in [("null", zarray("<i2", Value::Null)), ("object 0", vlen)] {
        let src = memory_store(&[(".zarray", document)]);
        let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let plan = zarrkit::migrate::plan(src, Arc::clone(&dst), ZarrFormat::V3)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let notes = &plan.nodes()[0].notes;
        assert!(
            notes.iter().all(|n| !n.contains("dropped the field")),
            "{name}: {notes:?}"
        );
        let note = notes
            .iter()
            .find_map(|n| n.strip_prefix("the v2 fill value `"))
            .unwrap_or_else(|| panic!("{name}: {notes:?}"));
        let (_, rest) = note.split_once("` becomes ").unwrap();
        let (noted, _) = rest.split_once(", which the target writes").unwrap();
        zarrkit::migrate::migrate(&plan, &mut |_| {}).unwrap();
        let written: Value = serde_json::from_slice(
            &dst.get(&StoreKey::new("zarr.json").unwrap(), None)
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(noted).unwrap(),
            written["fill_value"],
            "{name}: {notes:?}"
        );
    }
}

/// Issue #15: a migration into v3 wrote arrays that common readers cannot
/// open, in silence. `migrate::reader_warnings` names, per reader, what it
/// lacks: zarr-python 3.1 has no `struct` (it reads `structured`), and
/// tensorstore no `numcodecs.*` codec, also inside a shard.
#[test]
fn issue_15_reader_warnings_name_what_zarr_python_and_tensorstore_lack() {
    use zarrkit::metadata::{ExtensionObject, StructField};
    use zarrkit::migrate::reader_warnings;
    let path = zarrkit::NodePath::new("/a").unwrap();
    let point = DataType::Struct(vec![
        StructField::new("x", DataType::Float32),
        StructField::new("id", DataType::UInt16),
    ]);
    let records = zarrkit::ArrayBuilder::new(&[4], point, &[2])
        .build_metadata(&path)
        .unwrap();
    assert_eq!(
        reader_warnings(&records),
        ["zarr-python 3.1 cannot read the data type `struct`"]
    );
    let mut sharded = zarrkit::ArrayBuilder::new(&[4], DataType::Float64, &[4])
        .build_metadata(&path)
        .unwrap();
    let config = |v: Value| match v {
        Value::Object(map) => map,
        _ => unreachable!(),
    };
    sharded.codecs = vec![ExtensionObject::with_configuration(
        "sharding_indexed",
        config(json!({
            "chunk_shape": [2],
            "codecs": [
                { "name": "bytes", "configuration": { "endian": "little" } },
                { "name": "numcodecs.zlib", "configuration": { "level": 1 } }
            ],
            "index_codecs": [{ "name": "bytes", "configuration": { "endian": "little" } }],
            "index_location": "end"
        })),
    )];
    assert_eq!(
        reader_warnings(&sharded),
        ["tensorstore cannot read the codec `numcodecs.zlib`"]
    );
    let plain = zarrkit::ArrayBuilder::new(&[4], DataType::Float64, &[4])
        .build_metadata(&path)
        .unwrap();
    assert!(reader_warnings(&plain).is_empty());
}

/// Issue #15, `--portable`: an array whose codecs are not all core v3
/// codecs is re-encoded into `bytes` and its compressor when that is a core
/// one, and a data type that needs a non-core codec (`string` needs
/// `vlen-utf8`) keeps its chain rather than being re-encoded for nothing.
#[test]
fn issue_15_portable_plans_reencode_only_into_core_codecs() {
    use zarrkit::migrate::{Action, PlanOptions, plan_with};
    let src: Arc<dyn Store> = Arc::new(MemoryStore::new());
    zarrkit::Group::create_as(Arc::clone(&src), "/", ZarrFormat::V2, JsonMap::new()).unwrap();
    let zlib = Array::builder(&[6], DataType::Int16, &[3])
        .format(ZarrFormat::V2)
        .codecs_metadata(vec![
            zarrkit::metadata::ExtensionObject::with_configuration(
                "bytes",
                match json!({ "endian": "little" }) {
                    Value::Object(map) => map,
                    _ => unreachable!(),
                },
            ),
            zarrkit::metadata::ExtensionObject::with_configuration(
                "numcodecs.zlib",
                match json!({ "level": 1 }) {
                    Value::Object(map) => map,
                    _ => unreachable!(),
                },
            ),
        ])
        .create(Arc::clone(&src), "/zlib")
        .unwrap();
    zlib.write_region(&Region::whole(&[6]), &[1i16, 2, 3, 4, 5, 6])
        .unwrap();
    let names = Array::builder(&[2], DataType::String, &[2])
        .format(ZarrFormat::V2)
        .create(Arc::clone(&src), "/names")
        .unwrap();
    names
        .write_strings(&Region::whole(&[2]), &["a", "b"])
        .unwrap();
    let options = PlanOptions::default().portable(true);
    let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let plan = plan_with(Arc::clone(&src), Arc::clone(&dst), ZarrFormat::V3, &options).unwrap();
    let node = |path: &str| {
        plan.nodes()
            .iter()
            .find(|n| n.path.as_str() == path)
            .unwrap()
    };
    assert_eq!(
        node("/zlib").action,
        Action::ReEncode {
            reason: "--portable: not every v3 reader has the codec `numcodecs.zlib`".into(),
            codecs: vec!["bytes".into(), "zstd".into()],
        }
    );
    assert!(
        node("/zlib").warnings.is_empty(),
        "{:?}",
        node("/zlib").warnings
    );
    assert_eq!(node("/names").action, Action::CopyChunks);
    assert_eq!(
        node("/names").warnings,
        ["tensorstore cannot read the data type `string` or the codec `vlen-utf8`"]
    );
    zarrkit::migrate::migrate(&plan, &mut |_| {}).unwrap();
    let read: Vec<i16> = Array::open(dst, "/zlib")
        .unwrap()
        .read_region(&Region::whole(&[6]))
        .unwrap();
    assert_eq!(read, [1, 2, 3, 4, 5, 6]);
    // Without the option, the chain is kept, with tensorstore's warning.
    let plan = zarrkit::migrate::plan(src, Arc::new(MemoryStore::new()), ZarrFormat::V3).unwrap();
    let zlib = plan
        .nodes()
        .iter()
        .find(|n| n.path.as_str() == "/zlib")
        .unwrap();
    assert_eq!(zlib.action, Action::CopyChunks);
    assert_eq!(
        zlib.warnings,
        ["tensorstore cannot read the codec `numcodecs.zlib`"]
    );
}

/// Creating a node (an array with overwriting off, a group) checked that
/// none was there (`format::read_node`) and then wrote the node's document
/// with a plain `set`: writers that all checked before any of them wrote
/// all succeeded, each replacing the document of the one before. Reads
/// here wait 2 ms each, so every writer's check passes before the first
/// one writes; only a create that is conditional in the store itself
/// (`Store::set_if_absent`) lets exactly one of them win.
#[test]
fn issue_13_racing_creators_of_one_node_cannot_both_succeed() {
    use crate::support::{Racing, race_to_create};
    use std::time::Duration;
    use zarrkit::store::testing::LatencyStore;
    let dir = tempfile::tempdir().unwrap();
    let formats = [
        ZarrFormat::V3,
        ZarrFormat::V2,
        ZarrFormat::V1,
        ZarrFormat::V3Draft2022,
        ZarrFormat::V3Draft2019,
    ];
    for (i, format) in formats.into_iter().enumerate() {
        // A store of each kind per format: the drafts' entry points (and
        // v1's one array) leave no room for another format beside them.
        let inners: [Arc<dyn Store>; 2] = [
            Arc::new(MemoryStore::new()),
            Arc::new(FilesystemStore::new(dir.path().join(i.to_string())).unwrap()),
        ];
        for inner in inners {
            let store: Arc<dyn Store> =
                Arc::new(LatencyStore::new(inner, Duration::from_millis(2), 1));
            if format == ZarrFormat::V1 {
                // v1 has one array, at the root, and no groups.
                race_to_create(&store, format, "/", 8, Racing::Arrays);
                continue;
            }
            race_to_create(&store, format, "/a", 8, Racing::Arrays);
            race_to_create(&store, format, "/g/h", 8, Racing::Groups);
        }
    }
}

/// As above, on a plain filesystem store, with no delay to widen the gap:
/// many rounds of writers that start together.
#[test]
fn issue_13_racing_creators_on_the_filesystem_leave_one_intact_node() {
    use crate::support::{Racing, race_to_create};
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path()).unwrap());
    for round in 0..20 {
        race_to_create(
            &store,
            ZarrFormat::V3,
            &format!("/a{round}"),
            4,
            Racing::Arrays,
        );
        race_to_create(
            &store,
            ZarrFormat::V2,
            &format!("/g{round}"),
            4,
            Racing::Groups,
        );
    }
}

/// Found by the `selection` fuzz target: the parser advanced one byte per
/// whitespace character and sliced the text at a keyword's byte length,
/// so a multi-byte character there (`٣`, an ideographic space) panicked
/// with "byte index is not a char boundary". Such text is now an error
/// naming the position, and multi-byte whitespace is skipped whole.
#[test]
fn issue_17_selection_parser_on_multibyte_characters_is_an_error_not_a_panic() {
    use zarrkit::{Selection, SelectionItem};
    for text in ["20\0\0٣", "٣", "1, ٣", "[٣]", "Tru٣", "..٣", "0:٣", "N٣"] {
        assert!(Selection::parse(text).is_err(), "{text:?}");
    }
    // U+3000 (ideographic space) is whitespace of three bytes.
    let selection = Selection::parse("\u{3000}1,\u{3000}2\u{3000}").unwrap();
    assert_eq!(
        selection.items(),
        [SelectionItem::Index(1), SelectionItem::Index(2)]
    );
}

/// Found by the `selection` fuzz target's review: list literals nest by
/// recursion, so a long run of `[` would overflow the stack. More than 64
/// levels (NumPy's dimensions) is an error.
#[test]
fn issue_17_selection_parser_refuses_deeply_nested_lists() {
    use zarrkit::Selection;
    let deep = "[".repeat(100_000);
    let err = Selection::parse(&deep).unwrap_err();
    assert!(
        err.to_string().contains("nested more than 64 deep"),
        "{err}"
    );
    let ok = format!("{}0{}", "[".repeat(3), "]".repeat(3));
    Selection::parse_vectorized(&ok).unwrap();
}

/// Found by the `roundtrip` fuzz target: an array of `fixed_length_utf32`
/// with a length in bytes that is not a multiple of 4 was created (a v2
/// `.zarray` saying `>U0`, a v3 document its own parser refuses) and then
/// could not be opened. Creation now refuses such a data type, and raw
/// bits that are not whole bytes, naming the type.
#[test]
fn issue_17_creating_an_unreadable_data_type_is_refused() {
    for format in [ZarrFormat::V3, ZarrFormat::V2] {
        for data_type in [
            DataType::FixedUtf32(1),
            DataType::FixedUtf32(6),
            DataType::FixedUtf32(0),
            DataType::RawBits(12),
        ] {
            let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
            let err = Array::builder(&[2], data_type.clone(), &[2])
                .format(format)
                .create(store.clone(), "/a")
                .unwrap_err();
            let text = error_chain(&err);
            assert!(
                text.contains("multiple of 4") || text.contains("multiple of 8"),
                "{format:?} {data_type:?}: {text}"
            );
            assert!(store.list().unwrap().is_empty(), "nothing is written");
        }
    }
    // A valid length still round-trips.
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Array::builder(&[2], DataType::FixedUtf32(8), &[2])
        .format(ZarrFormat::V2)
        .create(store.clone(), "/a")
        .unwrap();
    Array::open(store, "/a").unwrap();
}

/// Found by the `v3_draft` fuzz target: a NumPy string type whose kind is
/// a multi-byte character (`"ʤ2"`, in a draft's extension data type or a
/// v2 `dtype`) was sliced at byte 1, inside the character, and panicked.
/// It is now an invalid `dtype`, named.
#[test]
fn issue_17_a_multibyte_numpy_type_kind_is_an_error_not_a_panic() {
    use zarrkit::format::{v2, v3_draft2019};
    for dtype in ["ʤ2", "<ʤ2", "|é7", ">€1"] {
        let zarray = json!({
            "zarr_format": 2, "shape": [2], "chunks": [2], "dtype": dtype,
            "compressor": null, "fill_value": null, "filters": null, "order": "C",
        });
        let err = v2::parse_array(zarray.to_string().as_bytes(), None).unwrap_err();
        assert!(err.to_string().contains("dtype"), "{dtype}: {err}");
        let numpy = v2::numpy_dtype_from_json(&json!(dtype)).unwrap_err();
        assert!(numpy.to_string().contains("dtype"), "{dtype}: {numpy}");
    }
    // The fuzzer's document: the June 2019 draft's unicode extension type.
    let draft = json!({
        "attributes": {}, "chunk_grid": {"type": "regular", "chunk_shape": [2]},
        "chunk_memory_layout": "C", "shape": [2], "compressor": null,
        "data_type": {"extension": "TODO: unicode array protocol URL", "fallback": null, "type": "ʤ2"},
        "fill_value": null, "extensions": [],
    });
    for format in [ZarrFormat::V3Draft2019, ZarrFormat::V3Draft2019Json] {
        assert!(v3_draft2019::parse_node(draft.to_string().as_bytes(), true, format).is_err());
    }
}

/// Found by the `v1_metadata` fuzz target (an out-of-memory): a v1 `meta`
/// of 300 bytes declaring `"dtype": "<U588588888"` made the fill value an
/// element of 2.35 GB. String and raw NumPy types longer than 64 MiB are
/// now an invalid `dtype`.
#[test]
fn issue_17_a_huge_numpy_string_type_is_refused_not_allocated() {
    use zarrkit::format::v1;
    let meta = json!({
        "zarr_format": 1, "shape": [4, 3], "chunks": [3, 2], "dtype": "<U588588888",
        "compression": "none", "compression_opts": null, "fill_value": "é!", "order": "C",
    });
    let err = v1::parse_array(meta.to_string().as_bytes(), JsonMap::new()).unwrap_err();
    assert!(err.to_string().contains("dtype"), "{err}");
    assert!(zarrkit::metadata::numpy::data_type_of('S', 1 << 30).is_none());
    assert!(zarrkit::metadata::numpy::data_type_of('U', 5).is_some());
}

/// Found by the Python package's property tests (#16): a 0-d mask
/// (`x[True]`, `x[np.array(False)]`, what NumPy makes of a boolean
/// scalar) was dropped: `x[True]` had `x`'s shape and `x[False]` selected
/// everything. NumPy makes it an index array of length 1 or 0 along a new
/// axis, broadcast with the other index arrays; values and shapes from
/// NumPy 2.
#[test]
fn issue_16_a_zero_dimensional_mask_is_a_new_axis_of_one_or_none() {
    use zarrkit::{Selection, SelectionItem};
    let mask = |b: bool| SelectionItem::Mask {
        shape: Vec::new(),
        values: vec![b],
    };
    let array = Array::builder(&[2, 3], DataType::Int32, &[1, 2])
        .create(Arc::new(MemoryStore::new()), "/x")
        .unwrap();
    array
        .write_region(&Region::whole(&[2, 3]), &[0, 1, 2, 3, 4, 5])
        .unwrap();
    let full = SelectionItem::full;
    // `x = np.arange(6).reshape(2, 3)`
    let cases: Vec<(Vec<SelectionItem>, &[u64], &[i32])> = vec![
        (vec![mask(true)], &[1, 2, 3], &[0, 1, 2, 3, 4, 5]),
        (vec![mask(false)], &[0, 2, 3], &[]),
        (
            vec![SelectionItem::Index(1), mask(true)],
            &[1, 3],
            &[3, 4, 5],
        ),
        (
            vec![full(), mask(true), SelectionItem::Index(2)],
            &[2, 1],
            &[2, 5],
        ),
        (
            vec![mask(true), SelectionItem::indices(vec![1, 0])],
            &[2, 3],
            &[3, 4, 5, 0, 1, 2],
        ),
        (vec![mask(false), SelectionItem::Index(0)], &[0, 3], &[]),
        (
            vec![full(), mask(true), full()],
            &[2, 1, 3],
            &[0, 1, 2, 3, 4, 5],
        ),
    ];
    for (items, shape, values) in cases {
        let selection = Selection::new(items);
        assert_eq!(
            array.selection_shape(&selection).unwrap(),
            shape,
            "{selection:?}"
        );
        assert_eq!(
            array.read_selection::<i32>(&selection).unwrap(),
            values,
            "{selection:?}"
        );
    }
    // `x[False, [0, 1]]` cannot broadcast: (0,) against (2,).
    let err = array
        .read_selection::<i32>(&Selection::new(vec![
            mask(false),
            SelectionItem::indices(vec![0, 1]),
        ]))
        .unwrap_err();
    let text = error_chain(&err);
    assert!(text.contains("broadcast"), "{text}");
    // Writes: `x[0, True] = 7`, then `x[False] = 9` changes nothing.
    array
        .write_selection_scalar(
            &Selection::new(vec![SelectionItem::Index(0), mask(true)]),
            7,
        )
        .unwrap();
    array
        .write_selection_scalar(&Selection::new(vec![mask(false)]), 9)
        .unwrap();
    assert_eq!(
        array.read_region::<i32>(&Region::whole(&[2, 3])).unwrap(),
        [7, 7, 7, 3, 4, 5]
    );
    // A 0-d array: `np.array(5)[True]` is `[5]`, `[False]` is `[]`; so
    // with `vindex`.
    let scalar = Array::builder(&[], DataType::Int32, &[])
        .create(Arc::new(MemoryStore::new()), "/s")
        .unwrap();
    scalar.write_region(&Region::whole(&[]), &[5]).unwrap();
    for selection in [
        Selection::new(vec![mask(true)]),
        Selection::vectorized(vec![mask(true)]),
    ] {
        assert_eq!(scalar.selection_shape(&selection).unwrap(), [1]);
        assert_eq!(scalar.read_selection::<i32>(&selection).unwrap(), [5]);
    }
    for selection in [
        Selection::new(vec![mask(false)]),
        Selection::vectorized(vec![mask(false)]),
    ] {
        assert_eq!(scalar.selection_shape(&selection).unwrap(), [0]);
        assert!(scalar.read_selection::<i32>(&selection).unwrap().is_empty());
    }
}
