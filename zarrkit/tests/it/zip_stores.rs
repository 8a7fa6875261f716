//! Zip archives as stores (`store::ZipStore`, `store::ZipStoreWriter`):
//! hierarchies (groups, arrays, sharded arrays, consolidated metadata)
//! written into a zip and read back, reads by ranges only from a zip inside
//! another store, and interop with zarr-python 3.1's `ZipStore`
//! (`testdata/generate/zip_interop.py`).

use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use zarrkit::codec::sharding::{IndexLocation, ShardingCodec};
use zarrkit::codec::{Codec, bytes::BytesCodec, zstd::ZstdCodec};
use zarrkit::consolidate;
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{DataType, JsonMap};
use zarrkit::store::testing::CountingStore;
use zarrkit::store::{
    FilesystemStore, MemoryStore, Store, StoreKey, StorePrefix, ZipStore, ZipStoreWriter,
};
use zarrkit::{Array, Group, Region};

fn key(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

fn attributes(value: Value) -> JsonMap {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("attributes are an object"),
    }
}

/// An array of the test hierarchy: path, data type, shape, and its values
/// as raw little-endian bytes (the same values as `zip_interop.py`).
struct Expected {
    path: &'static str,
    data_type: DataType,
    shape: Vec<u64>,
    bytes: Vec<u8>,
}

fn sharding(inner: &[u64]) -> Codec {
    let zstd = Codec::BytesToBytes(Arc::new(ZstdCodec::new(0, false).unwrap()));
    let bytes = Codec::ArrayToBytes(Arc::new(BytesCodec::little()));
    Codec::ArrayToBytes(Arc::new(
        ShardingCodec::new(inner, vec![bytes, zstd]).with_index_location(IndexLocation::End),
    ))
}

/// Writes the hierarchy of `zip_interop.py` (root attributes, `a`, `g/b`,
/// and in v3 the sharded `s`), consolidated, and returns its arrays.
fn hierarchy(store: &Arc<dyn Store>, format: ZarrFormat) -> Vec<Expected> {
    Group::create_as(
        store.clone(),
        "/",
        format,
        attributes(json!({"title": "zip"})),
    )
    .unwrap();
    Group::create_as(store.clone(), "/g", format, attributes(json!({"k": 1}))).unwrap();
    let a: Vec<u16> = (0..40 * 30u32).map(|i| (i * 7 % 65536) as u16).collect();
    let b: Vec<f64> = (0..7).map(|i| f64::from(i) * 0.5).collect();
    let array = Array::builder(&[40, 30], DataType::UInt16, &[16, 8])
        .format(format)
        .create(store.clone(), "/a")
        .unwrap();
    array.write_region(&Region::whole(&[40, 30]), &a).unwrap();
    let array = Array::builder(&[7], DataType::Float64, &[3])
        .format(format)
        .create(store.clone(), "/g/b")
        .unwrap();
    array.write_region(&Region::whole(&[7]), &b).unwrap();
    let mut expected = vec![
        Expected {
            path: "a",
            data_type: DataType::UInt16,
            shape: vec![40, 30],
            bytes: a.iter().flat_map(|v| v.to_le_bytes()).collect(),
        },
        Expected {
            path: "g/b",
            data_type: DataType::Float64,
            shape: vec![7],
            bytes: b.iter().flat_map(|v| v.to_le_bytes()).collect(),
        },
    ];
    if format == ZarrFormat::V3 {
        let s: Vec<i32> = (0..64 * 64).map(|i| i * -3).collect();
        let array = Array::builder(&[64, 64], DataType::Int32, &[32, 32])
            .codecs(vec![sharding(&[8, 8])])
            .create(store.clone(), "/s")
            .unwrap();
        array.write_region(&Region::whole(&[64, 64]), &s).unwrap();
        expected.push(Expected {
            path: "s",
            data_type: DataType::Int32,
            shape: vec![64, 64],
            bytes: s.iter().flat_map(|v| v.to_le_bytes()).collect(),
        });
    }
    consolidate::consolidate(store.as_ref(), "/").unwrap();
    expected
}

/// Checks that `store` holds the hierarchy, with consolidated metadata.
fn check_hierarchy(store: &Arc<dyn Store>, expected: &[Expected], what: &str) {
    let root = Group::open(store.clone(), "/").unwrap();
    assert!(root.is_consolidated(), "{what}");
    assert_eq!(root.attributes()["title"], "zip", "{what}");
    for array in expected {
        let opened = Array::open(store.clone(), &format!("/{}", array.path)).unwrap();
        assert_eq!(
            opened.data_type(),
            &array.data_type,
            "{what} {}",
            array.path
        );
        assert_eq!(opened.shape(), array.shape, "{what} {}", array.path);
        let mut bytes = opened
            .read_region_bytes(&Region::whole(&array.shape))
            .unwrap();
        crate::support::to_little_endian(&mut bytes, &array.data_type);
        assert!(bytes == array.bytes, "{what} {}: values differ", array.path);
    }
}

#[test]
fn zip_hierarchies_written_with_the_writer_read_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    for format in [ZarrFormat::V2, ZarrFormat::V3] {
        let path = dir.path().join(format!("{format:?}.zip"));
        let writer: Arc<dyn Store> = Arc::new(ZipStoreWriter::create(&path).unwrap());
        let expected = hierarchy(&writer, format);
        // The writer reads back what it holds before it is finished.
        check_hierarchy(&writer, &expected, "writer");
        drop(writer);
        let zip: Arc<dyn Store> = Arc::new(ZipStore::open_path(&path).unwrap());
        check_hierarchy(&zip, &expected, &format!("{format:?}"));
    }
}

#[test]
fn zip_in_a_memory_store_reads_the_hierarchy_with_a_prefix() {
    // Zip the hierarchy under `image.zarr/`, as `zip -r` of a folder does.
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let expected = hierarchy(&memory, ZarrFormat::V3);
    let target = Arc::new(MemoryStore::new());
    let writer = ZipStoreWriter::create_in(target.clone(), key("data.zip")).unwrap();
    for k in memory.list().unwrap() {
        let value = memory.get(&k, None).unwrap().unwrap();
        writer
            .set(&key(&format!("image.zarr/{k}")), &value)
            .unwrap();
    }
    writer.finish().unwrap();
    let zip = ZipStore::open(target, key("data.zip"))
        .unwrap()
        .with_prefix(&StorePrefix::new("image.zarr/").unwrap());
    let zip: Arc<dyn Store> = Arc::new(zip);
    check_hierarchy(&zip, &expected, "prefixed");
}

#[test]
fn zip_in_a_filesystem_store_reads_one_chunk_by_ranges_only() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path()).unwrap());
    let writer: Arc<dyn Store> = Arc::new(ZipStoreWriter::create_in(fs, key("image.zip")).unwrap());
    let values: Vec<u16> = (0..512 * 512u32).map(|i| (i % 65521) as u16).collect();
    let plain = Array::builder(&[512, 512], DataType::UInt16, &[64, 64])
        .create(writer.clone(), "/plain")
        .unwrap();
    plain
        .write_region(&Region::whole(&[512, 512]), &values)
        .unwrap();
    let bytes = Codec::ArrayToBytes(Arc::new(BytesCodec::little()));
    let sharded = Array::builder(&[512, 512], DataType::UInt16, &[256, 256])
        .codecs(vec![Codec::ArrayToBytes(Arc::new(ShardingCodec::new(
            &[32, 32],
            vec![bytes],
        )))])
        .create(writer.clone(), "/sharded")
        .unwrap();
    sharded
        .write_region(&Region::whole(&[512, 512]), &values)
        .unwrap();
    drop((plain, sharded, writer));
    let archive_len = std::fs::metadata(dir.path().join("image.zip"))
        .unwrap()
        .len();

    let counting = Arc::new(CountingStore::new(
        FilesystemStore::open_existing(dir.path()).unwrap(),
    ));
    let zip: Arc<dyn Store> = Arc::new(ZipStore::open(counting.clone(), key("image.zip")).unwrap());
    for (path, chunk_bytes) in [("/plain", 64 * 64 * 2), ("/sharded", 32 * 32 * 2)] {
        let before = counting.bytes_read();
        let array = Array::open(zip.clone(), path).unwrap();
        let region = Region::new(vec![64, 96], vec![32, 32]);
        let got: Vec<u16> = array.read_region(&region).unwrap();
        let values = &values;
        let want: Vec<u16> = (64..96)
            .flat_map(|i| (96..128).map(move |j| values[i * 512 + j]))
            .collect();
        assert_eq!(got, want, "{path}");
        let read = counting.bytes_read() - before;
        // The chunk (or inner chunk), its local header, the metadata and,
        // for the shard, its index: a few KiB of a 1 MiB archive.
        assert!(
            read < chunk_bytes + 8 * 1024 + 8 * 1024,
            "{path}: read {read} bytes of a {archive_len}-byte archive"
        );
    }
    assert_eq!(counting.whole_reads(), 0, "no value is read whole");
    assert!(counting.bytes_read() < archive_len / 4);
}

/// Runs `zip_interop.py MODE DIR` and returns what it printed.
fn run_script(python: &Path, mode: &str, dir: &Path) -> String {
    let args = [
        crate::support::script("zip_interop.py"),
        mode.into(),
        dir.to_path_buf(),
    ];
    crate::support::run(python, &args, &[])
}

#[test]
fn zip_interop_zarrkit_reads_the_zips_zarr_python_writes() {
    let Some(python) = crate::support::python("ZARRKIT_PYTHON", "zarr 3.1") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    run_script(&python, "write", dir.path());
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("manifest.json")).unwrap()).unwrap();
    for (zip_name, arrays_of, prefix) in [
        ("v2.zip", "v2.zip", ""),
        ("v3.zip", "v3.zip", ""),
        ("deflated.zip", "v3.zip", ""),
        ("zip64.zip", "v3.zip", ""),
        ("prefixed.zip", "v3.zip", "image.zarr/"),
    ] {
        let zip = ZipStore::open_path(dir.path().join(zip_name))
            .unwrap()
            .with_prefix(&StorePrefix::new(prefix).unwrap());
        assert_eq!(zip.skipped_members(), [], "{zip_name}");
        let zip: Arc<dyn Store> = Arc::new(zip);
        let expected: Vec<Expected> = manifest["arrays"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|entry| entry["zip"] == arrays_of)
            .map(|entry| {
                let path = entry["path"].as_str().unwrap();
                Expected {
                    path: match path {
                        "a" => "a",
                        "g/b" => "g/b",
                        "s" => "s",
                        other => panic!("unexpected array `{other}`"),
                    },
                    data_type: match entry["dtype"].as_str().unwrap() {
                        "<u2" => DataType::UInt16,
                        "<f8" => DataType::Float64,
                        "<i4" => DataType::Int32,
                        other => panic!("unexpected dtype `{other}`"),
                    },
                    shape: serde_json::from_value(entry["shape"].clone()).unwrap(),
                    bytes: std::fs::read(
                        dir.path()
                            .join("expected")
                            .join(entry["expected"].as_str().unwrap()),
                    )
                    .unwrap(),
                }
            })
            .collect();
        assert!(!expected.is_empty());
        check_hierarchy(&zip, &expected, zip_name);
    }
}

#[test]
fn zip_interop_zarr_python_reads_the_zips_zarrkit_writes() {
    let Some(python) = crate::support::python("ZARRKIT_PYTHON", "zarr 3.1") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("expected")).unwrap();
    let mut arrays = Vec::new();
    let mut groups = Vec::new();
    for (zip_name, format) in [("v2.zip", ZarrFormat::V2), ("v3.zip", ZarrFormat::V3)] {
        let writer: Arc<dyn Store> =
            Arc::new(ZipStoreWriter::create(dir.path().join(zip_name)).unwrap());
        let expected = hierarchy(&writer, format);
        drop(writer);
        for array in expected {
            let bin = format!("{zip_name}-{}.bin", array.path.replace('/', "_"));
            std::fs::write(dir.path().join("expected").join(&bin), &array.bytes).unwrap();
            let dtype = match array.data_type {
                DataType::UInt16 => "<u2",
                DataType::Float64 => "<f8",
                DataType::Int32 => "<i4",
                _ => unreachable!("the hierarchy has no other data types"),
            };
            arrays.push(json!({
                "zip": zip_name, "path": array.path, "dtype": dtype,
                "shape": array.shape, "expected": bin,
            }));
        }
        groups.push(json!({
            "zip": zip_name, "attributes": {"title": "zip"}, "consolidated": true,
        }));
    }
    let manifest = json!({"arrays": arrays, "groups": groups});
    std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).unwrap();
    let out = run_script(&python, "read", dir.path());
    assert_eq!(out.trim(), "ok 7");
}

#[test]
fn zip_migrate_from_and_into_a_zip() {
    // A v2 hierarchy migrated into a new zip as v3, then out of that zip
    // into a memory store as v2: the values survive both ways.
    let v2: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let expected = hierarchy(&v2, ZarrFormat::V2);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("migrated.zip");
    let writer = Arc::new(ZipStoreWriter::create(&path).unwrap());
    let plan = zarrkit::migrate::plan(v2, writer.clone(), ZarrFormat::V3).unwrap();
    zarrkit::migrate::migrate(&plan, &mut |_| {}).unwrap();
    drop(plan);
    writer.finish().unwrap();
    let zip: Arc<dyn Store> = Arc::new(ZipStore::open_path(&path).unwrap());
    check_hierarchy(&zip, &expected, "migrated into a zip");
    assert_eq!(
        Array::open(zip.clone(), "/a").unwrap().format(),
        ZarrFormat::V3
    );

    let back: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let plan = zarrkit::migrate::plan(zip, back.clone(), ZarrFormat::V2).unwrap();
    zarrkit::migrate::migrate(&plan, &mut |_| {}).unwrap();
    check_hierarchy(&back, &expected, "migrated out of a zip");
}
