//! Zarr v2 string, structured and object arrays: `|S<n>`,
//! `<U<n>`/`>U<n>`, structured dtypes (nested, sub-array fields, mixed byte
//! orders) and `|O` with `vlen-utf8`/`vlen-bytes`, in both orders and with
//! both separators, against zarr-python 2.18 (`ZARRKIT_PYTHON_ZARR2`, its
//! own venv from `scripts/requirements-zarr2.txt`), zarr-python 3.1 with
//! `zarr_format=2` and tensorstore (`ZARRKIT_PYTHON`; tensorstore writes
//! the `|S` and structured cases it has dtypes for).
//!
//! The script is `testdata/generate/v2_strings_interop.py`; what a peer
//! cannot read (tensorstore: `U`, `|O`, short `|S` fill values; zarr-python
//! 3.1: structured fields with a shape, and v3 `struct`) it prints as "not
//! checked", by name. Without the Pythons the tests skip, saying so, unless
//! `ZARRKIT_REQUIRE_INTEROP=1`.

use base64::Engine;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use zarrkit::format::{self, ZarrFormat, v2};
use zarrkit::metadata::{DataType, NodeMetadata};
use zarrkit::node::NodePath;
use zarrkit::store::{FilesystemStore, MemoryStore, Store};
use zarrkit::{Array, Region, migrate};

use crate::support::python;

fn zarr2() -> Option<PathBuf> {
    python(
        "ZARRKIT_PYTHON_ZARR2",
        "zarr 2.18 (scripts/requirements-zarr2.txt)",
    )
}

fn zarr3() -> Option<PathBuf> {
    python("ZARRKIT_PYTHON", "zarr 3.1 and tensorstore")
}

fn run_script(python: &Path, mode: &str, dir: &Path) -> String {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/generate/v2_strings_interop.py");
    let output = Command::new(python)
        .arg(&script)
        .arg(mode)
        .arg(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    let text = format!(
        "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "v2_strings_interop.py {mode} failed: {text}"
    );
    text
}

fn manifest(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

fn b64(text: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(text.as_str().unwrap())
        .unwrap()
}

/// Reads every array of the manifest from `store` and compares it with the
/// writer's values, element for element; returns the number checked.
fn check_reads(store: &Arc<dyn Store>, manifest: &Value) -> usize {
    let mut checked = 0;
    for entry in manifest["arrays"].as_array().unwrap() {
        let id = entry["id"].as_str().unwrap();
        let array = Array::open(store.clone(), entry["path"].as_str().unwrap())
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        let shape: Vec<u64> = serde_json::from_value(entry["shape"].clone()).unwrap();
        assert_eq!(array.shape(), shape, "{id}");
        let whole = Region::whole(&shape);
        let expected = &entry["expected"];
        match entry["kind"].as_str().unwrap() {
            "S" => {
                assert!(matches!(array.data_type(), DataType::FixedBytes(_)), "{id}");
                assert_eq!(
                    array.read_region_bytes(&whole).unwrap(),
                    b64(expected),
                    "{id}"
                );
            }
            "struct" => {
                assert!(matches!(array.data_type(), DataType::Struct(_)), "{id}");
                let mut got = array.read_region_bytes(&whole).unwrap();
                crate::support::to_little_endian(&mut got, array.data_type());
                assert_eq!(got, b64(expected), "{id}");
            }
            "U" | "str" => {
                let want: Vec<String> = serde_json::from_value(expected.clone()).unwrap();
                assert_eq!(array.read_strings(&whole).unwrap(), want, "{id}");
            }
            "bytes" => {
                assert_eq!(array.data_type(), &DataType::Bytes, "{id}");
                let want: Vec<Vec<u8>> = expected.as_array().unwrap().iter().map(b64).collect();
                assert_eq!(array.read_byte_strings(&whole).unwrap(), want, "{id}");
            }
            other => panic!("unknown kind {other}"),
        }
        checked += 1;
    }
    checked
}

fn fs(path: &Path) -> Arc<dyn Store> {
    std::fs::create_dir_all(path).unwrap();
    Arc::new(FilesystemStore::new(path).unwrap())
}

/// Rewrites every array of `src` (as listed in its manifest) into a new v2
/// store under `dst`, through zarrkit's metadata writer and chunk encoder.
fn rewrite_with_zarrkit(src: &Path, dst: &Path) {
    let manifest = manifest(src);
    let from = fs(&src.join("store"));
    let to = fs(&dst.join("store"));
    format::write_node(
        to.as_ref(),
        &NodePath::root(),
        ZarrFormat::V2,
        &NodeMetadata::Group(zarrkit::metadata::GroupMetadata::default()),
    )
    .unwrap();
    for entry in manifest["arrays"].as_array().unwrap() {
        let path = entry["path"].as_str().unwrap();
        let source = Array::open(from.clone(), path).unwrap();
        let node = NodePath::new(path).unwrap();
        format::write_node(
            to.as_ref(),
            &node,
            ZarrFormat::V2,
            &NodeMetadata::Array(source.metadata().clone()),
        )
        .unwrap();
        let target = Array::open(to.clone(), path).unwrap();
        // With a `null` fill value every chunk is stored (zarr-python 2.18
        // would read a missing chunk's elements as `None`, not as "").
        assert_eq!(
            target.write_empty_chunks(),
            target.metadata().extra_fields.get("fill_value") == Some(&Value::Null)
        );
        let whole = Region::whole(source.shape());
        if source.data_type().is_variable_length() {
            target
                .write_vlen(&whole, &source.read_vlen(&whole).unwrap())
                .unwrap();
        } else {
            target
                .write_region_bytes(&whole, &source.read_region_bytes(&whole).unwrap())
                .unwrap();
        }
    }
    std::fs::write(
        dst.join("manifest.json"),
        serde_json::to_vec(&manifest).unwrap(),
    )
    .unwrap();
}

#[test]
fn zarrkit_reads_every_string_and_struct_array_zarr_python_2_18_writes() {
    let Some(python) = zarr2() else { return };
    let dir = tempfile::tempdir().unwrap();
    run_script(&python, "write", dir.path());
    let manifest = manifest(dir.path());
    assert_eq!(manifest["writer"], "zarr-python 2.18.7");
    // 9 data types x 2 orders x 2 separators.
    assert_eq!(check_reads(&fs(&dir.path().join("store")), &manifest), 36);
    // zarr-python 2.18's documents, as zarrkit reads them back.
    let store = fs(&dir.path().join("store"));
    let utf8 = Array::open(store.clone(), "/vlen_utf8_F_dot").unwrap();
    assert_eq!(utf8.data_type(), &DataType::String);
    let mixed = Array::open(store.clone(), "/struct_nested_C_dot").unwrap();
    assert_eq!(
        mixed.metadata().codecs[0].name,
        zarrkit::codec::struct_bytes::NAME
    );
    let a: Vec<i32> = mixed.read_field(&Region::whole(&[5, 4]), "a").unwrap();
    assert_eq!(a.len(), 20);
}

#[test]
fn zarrkit_reads_every_string_and_struct_array_zarr_python_3_1_writes() {
    let Some(python) = zarr3() else { return };
    let dir = tempfile::tempdir().unwrap();
    run_script(&python, "write", dir.path());
    let manifest = manifest(dir.path());
    assert_eq!(manifest["writer"], "zarr-python 3.1.6");
    // zarr-python 3.1 cannot create the sub-array struct, and says so.
    assert_eq!(manifest["not_written"].as_array().unwrap().len(), 4);
    // 32 by zarr-python 3.1, and 4 `|S` and structured arrays by
    // tensorstore (mixed byte orders and a sub-array field among them).
    assert_eq!(check_reads(&fs(&dir.path().join("store")), &manifest), 36);
    let by_tensorstore = manifest["arrays"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["id"].as_str().unwrap().starts_with("ts_"))
        .count();
    assert_eq!(by_tensorstore, 4);
}

#[test]
fn zarr_python_2_18_reads_every_string_and_struct_array_zarrkit_writes() {
    let Some(python) = zarr2() else { return };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let dst = dir.path().join("dst");
    run_script(&python, "write", &src);
    rewrite_with_zarrkit(&src, &dst);
    // zarrkit writes every document as zarr-python 2.18 does, but for two
    // documented choices: a false zstd `checksum` is left out (as
    // zarr-python 3.1 does; tensorstore refuses the member), and blosc's
    // AUTOSHUFFLE (-1) is written resolved (bit-shuffle for the 1-byte
    // view of an object codec's output, byte-shuffle otherwise).
    let mut compared = 0;
    for entry in manifest(&src)["arrays"].as_array().unwrap() {
        let id = entry["id"].as_str().unwrap();
        let read = |dir: &Path| -> Value {
            serde_json::from_slice(
                &std::fs::read(dir.join("store").join(id).join(".zarray")).unwrap(),
            )
            .unwrap()
        };
        let (mut theirs, ours) = (read(&src), read(&dst));
        if theirs["compressor"]["checksum"] == json!(false) {
            theirs["compressor"]
                .as_object_mut()
                .unwrap()
                .remove("checksum");
        }
        if theirs["compressor"]["shuffle"] == json!(-1) {
            let one_byte = theirs["dtype"] == "|O";
            theirs["compressor"]["shuffle"] = json!(if one_byte { 2 } else { 1 });
        }
        assert_eq!(ours, theirs, "{id}");
        compared += 1;
    }
    assert_eq!(compared, 36);
    let text = run_script(&python, "read", &dst);
    assert!(text.contains("36 checks; 0 errors"), "{text}");
}

#[test]
fn zarr_python_3_1_and_tensorstore_read_every_string_and_struct_array_zarrkit_writes() {
    let (Some(python2), Some(python3)) = (zarr2(), zarr3()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let dst = dir.path().join("dst");
    run_script(&python2, "write", &src);
    rewrite_with_zarrkit(&src, &dst);
    let text = run_script(&python3, "read", &dst);
    assert!(text.contains("0 errors"), "{text}");
    // What the peers cannot read is said, by name.
    for needle in [
        "not checked: zarr-python 3.1.6 struct_nested_C_dot: zarr-python 3.1 cannot read structured fields with a shape",
        "not checked: tensorstore U3_le_C_dot: its zarr driver has no `<U3` dtype",
        "not checked: tensorstore vlen_utf8_C_dot: its zarr driver has no `|O` dtype",
        "not checked: tensorstore S5_C_dot: it needs 5 base64 bytes",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
}

#[test]
fn string_and_struct_arrays_of_zarr_python_2_18_migrate_to_v3_that_zarr_python_3_1_reads() {
    let (Some(python2), Some(python3)) = (zarr2(), zarr3()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    run_script(&python2, "write", dir.path());
    let src = fs(&dir.path().join("store"));
    let dst = fs(&dir.path().join("migrated"));
    // v3 `struct` fields are scalars: the sub-array struct is refused, by name.
    let err = migrate::plan(src.clone(), dst.clone(), ZarrFormat::V3)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("struct_nested")
            && err.contains(
                "the struct field `d` with the shape [2, 3] (v3 `struct` fields are scalars)"
            ),
        "{err}"
    );
    let mut manifest = manifest(dir.path());
    manifest["arrays"]
        .as_array_mut()
        .unwrap()
        .retain(|e| !e["id"].as_str().unwrap().starts_with("struct_nested"));
    for order in ["C", "F"] {
        for sep in ["dot", "slash"] {
            std::fs::remove_dir_all(
                dir.path()
                    .join(format!("store/struct_nested_{order}_{sep}")),
            )
            .unwrap();
        }
    }
    std::fs::write(
        dir.path().join("manifest.json"),
        serde_json::to_vec(&manifest).unwrap(),
    )
    .unwrap();
    let plan = migrate::plan(src, dst.clone(), ZarrFormat::V3).unwrap();
    migrate::migrate(&plan, &mut |_| {}).unwrap();
    assert_eq!(check_reads(&dst, &manifest), 32);
    let doc = |id: &str| -> Value {
        serde_json::from_slice(
            &std::fs::read(dir.path().join("migrated").join(id).join("zarr.json")).unwrap(),
        )
        .unwrap()
    };
    assert_eq!(doc("vlen_utf8_C_dot")["data_type"], "string");
    assert_eq!(doc("vlen_utf8_C_dot")["codecs"][0]["name"], "vlen-utf8");
    // The registered name; zarr-python 3.1.6 writes `variable_length_bytes`
    // but also reads `bytes` (read3 below reads these arrays).
    assert_eq!(doc("vlen_bytes_F_dot")["data_type"], "bytes");
    assert_eq!(
        doc("U3_be_C_dot")["data_type"],
        json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}})
    );
    assert_eq!(
        doc("S5_C_dot")["data_type"],
        json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 5}})
    );
    // A v3 struct has one byte order: fields in different byte orders are
    // re-encoded (little-endian); one byte order is kept, chunks copied.
    let mixed = doc("struct_mixed_C_dot");
    assert_eq!(mixed["data_type"]["name"], "struct");
    assert_eq!(
        mixed["codecs"][0],
        json!({"name": "bytes", "configuration": {"endian": "little"}})
    );
    let big = doc("struct_be_F_dot");
    assert_eq!(big["codecs"][0]["name"], "transpose");
    assert_eq!(
        big["codecs"][1],
        json!({"name": "bytes", "configuration": {"endian": "big"}})
    );
    let text = run_script(&python3, "read3", dir.path());
    assert!(text.contains("0 errors"), "{text}");
    assert!(
        text.contains("reads only the legacy `structured` spelling"),
        "{text}"
    );
    assert!(
        text.contains("struct_be_C_dot: not checked: zarr-python 3.1.6 reads legacy `structured` little-endian only"),
        "{text}"
    );
}

#[test]
fn struct_arrays_round_trip_in_every_byte_order_without_python() {
    for dtype in [
        json!([["a", "<i4"], ["b", "<f8"]]),
        json!([["a", ">i4"], ["b", ">f8"]]),
        json!([
            ["a", "<i4"],
            ["b", ">f8"],
            ["c", [["x", ">u2"], ["y", "|S2"]], [2]]
        ]),
    ] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let doc = json!({"zarr_format": 2, "shape": [3], "chunks": [2], "dtype": dtype,
            "compressor": null, "fill_value": null, "order": "C", "filters": null});
        let metadata = v2::parse_array(doc.to_string().as_bytes(), None).unwrap();
        let data_type = metadata.data_type.clone();
        format::write_node(
            store.as_ref(),
            &NodePath::new("/s").unwrap(),
            ZarrFormat::V2,
            &NodeMetadata::Array(metadata),
        )
        .unwrap();
        let array = Array::open(store.clone(), "/s").unwrap();
        let n = data_type.size();
        let records: Vec<u8> = (0..3 * n).map(|i| i as u8).collect();
        array
            .write_region_bytes(&Region::whole(&[3]), &records)
            .unwrap();
        assert_eq!(
            array.read_region_bytes(&Region::whole(&[3])).unwrap(),
            records
        );
        // The stored chunk has each field in its own byte order: field `b`
        // (the second unit) is reversed exactly when the dtype says `>`.
        let chunk = store
            .get(&zarrkit::store::StoreKey::new("s/0").unwrap(), None)
            .unwrap()
            .unwrap();
        let big_b = dtype[1][1] == ">f8";
        let native_b = &records[4..12];
        let mut reversed = native_b.to_vec();
        reversed.reverse();
        let expect_b = if big_b == cfg!(target_endian = "big") {
            native_b.to_vec()
        } else {
            reversed
        };
        assert_eq!(&chunk[4..12], expect_b.as_slice(), "{dtype}");
    }
}

#[test]
fn v3_refuses_struct_fields_with_a_shape_naming_the_field() {
    let data_type = DataType::Struct(vec![
        zarrkit::metadata::StructField::new("a", DataType::Int32),
        zarrkit::metadata::StructField {
            name: "m".into(),
            data_type: DataType::Float32,
            shape: vec![3],
        },
    ]);
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let err = Array::builder(&[4], data_type.clone(), &[2])
        .create(store.clone(), "/s")
        .unwrap_err();
    let text = format!(
        "{err}: {}",
        std::error::Error::source(&err)
            .map(ToString::to_string)
            .unwrap_or_default()
    );
    assert!(
        text.contains("the struct field `m` with the shape [3]"),
        "{text}"
    );
    assert!(
        store
            .list_prefix(&zarrkit::store::StorePrefix::root())
            .unwrap()
            .is_empty()
    );
    // v2 holds it.
    Array::builder(&[4], data_type, &[2])
        .format(ZarrFormat::V2)
        .create(store, "/s")
        .unwrap();
}

#[test]
fn arrays_with_a_null_fill_value_store_every_chunk() {
    // v2 "fill_value": `null` means no fill value, so a missing chunk has
    // no defined elements for other readers; zarrkit stores chunks equal to
    // its stand-in (zero, "") instead of erasing them.
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    for (name, dtype, filters) in [
        ("o", "|O", json!([{"id": "vlen-utf8"}])),
        ("i", "<i4", Value::Null),
    ] {
        let zarray = json!({
            "zarr_format": 2, "shape": [4], "chunks": [2], "dtype": dtype,
            "compressor": null, "fill_value": null, "order": "C", "filters": filters
        });
        store
            .set(
                &zarrkit::store::StoreKey::new(format!("{name}/.zarray")).unwrap(),
                &serde_json::to_vec(&zarray).unwrap(),
            )
            .unwrap();
        let array = Array::open(store.clone(), name).unwrap();
        assert!(array.write_empty_chunks(), "{name}");
        let first = Region::new(vec![0], vec![2]);
        if dtype == "|O" {
            array.write_strings(&first, &["", ""]).unwrap();
        } else {
            array.write_region(&first, &[0i32, 0]).unwrap();
        }
        let key = zarrkit::store::StoreKey::new(format!("{name}/0")).unwrap();
        assert!(store.get(&key, None).unwrap().is_some(), "{name}");
    }
}
