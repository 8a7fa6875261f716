//! Zarr v2: the library round trip, what v2 cannot hold, and interop with
//! zarr-python 3.1 (`zarr_format=2`) and tensorstore's `zarr` driver.
//!
//! `testdata/generate/v2_interop.py write` makes zarr-python write the v2
//! matrix (every fixed-size dtype in both byte orders × C/F order × `.`/`/`
//! × every compressor and its options × fill values, with chunks left
//! unwritten) and zarrkit reads every element; zarrkit writes the same kind
//! of matrix and `v2_interop.py read` checks it with zarr-python and
//! tensorstore (which lacks `lz4` and `lzma`; the script names those cases).
//!
//! Like `interop/matrix.rs`, the Python tests need `ZARRKIT_PYTHON` and skip, saying
//! so, without it, unless `ZARRKIT_REQUIRE_INTEROP=1`.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use zarrkit::format::{self, ZarrFormat, v2};
use zarrkit::metadata::{
    ChunkKeyEncoding, DataType, ExtensionObject, FillValue, JsonMap, NodeMetadata, Separator,
};
use zarrkit::store::{FilesystemStore, MemoryStore, Store, StoreKey};
use zarrkit::{Array, Error, Group, Node, Region};

fn key(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

fn json_at(store: &dyn Store, k: &str) -> Value {
    serde_json::from_slice(&store.get(&key(k), None).unwrap().unwrap()).unwrap()
}

fn codec(name: &str, configuration: Value) -> ExtensionObject {
    let Value::Object(configuration) = configuration else {
        panic!("an object")
    };
    ExtensionObject::with_configuration(name, configuration)
}

#[test]
fn builder_writes_zarray_zattrs_and_parent_groups() {
    let store = Arc::new(MemoryStore::new());
    let mut attributes = JsonMap::new();
    attributes.insert("units".into(), "K".into());
    let array = Array::builder(&[5, 4], DataType::Int16, &[2, 3])
        .format(ZarrFormat::V2)
        .attributes(attributes)
        .fill_value(-3i16)
        .create(store.clone(), "/a/b")
        .unwrap();
    let values: Vec<i16> = (0..20).collect();
    array
        .write_region(&Region::new(vec![0, 0], vec![2, 4]), &values[..8])
        .unwrap();
    assert_eq!(
        json_at(store.as_ref(), "a/b/.zarray"),
        json!({
            "chunks": [2, 3], "compressor": {"id": "zstd", "level": 0},
            "dimension_separator": ".", "dtype": "<i2", "fill_value": -3, "filters": null,
            "order": "C", "shape": [5, 4], "zarr_format": 2
        })
    );
    assert_eq!(
        json_at(store.as_ref(), "a/b/.zattrs"),
        json!({"units": "K"})
    );
    // v2 "Groups": the ancestors are groups.
    assert_eq!(
        json_at(store.as_ref(), "a/.zgroup"),
        json!({"zarr_format": 2})
    );
    assert_eq!(
        json_at(store.as_ref(), ".zgroup"),
        json!({"zarr_format": 2})
    );
    // Chunk keys are v2's: `0.0`, `0.1`.
    assert!(store.get(&key("a/b/0.1"), None).unwrap().is_some());
    assert!(store.get(&key("a/b/c/0/1"), None).unwrap().is_none());

    let array = Array::open(store.clone(), "/a/b").unwrap();
    assert_eq!(array.format(), ZarrFormat::V2);
    let read: Vec<i16> = array.read_region(&Region::whole(array.shape())).unwrap();
    let mut expected: Vec<i16> = values[..8].to_vec();
    expected.extend([-3; 12]);
    assert_eq!(read, expected);
    assert_eq!(array.attributes()["units"], "K");

    let root = Group::open(store.clone(), "/").unwrap();
    assert_eq!(root.format(), ZarrFormat::V2);
    let walked: Vec<String> = root
        .walk()
        .unwrap()
        .iter()
        .map(|n| n.path().to_string())
        .collect();
    assert_eq!(walked, ["/a", "/a/b"]);
}

#[test]
fn groups_write_zgroup_and_zattrs_and_attribute_updates_rewrite_zattrs() {
    let store = Arc::new(MemoryStore::new());
    let mut attributes = JsonMap::new();
    attributes.insert("x".into(), 1.into());
    let mut group = Group::create_as(store.clone(), "/g", ZarrFormat::V2, attributes).unwrap();
    assert_eq!(
        json_at(store.as_ref(), "g/.zgroup"),
        json!({"zarr_format": 2})
    );
    assert_eq!(json_at(store.as_ref(), "g/.zattrs"), json!({"x": 1}));
    group.set_attributes(JsonMap::new()).unwrap();
    assert_eq!(json_at(store.as_ref(), "g/.zattrs"), json!({}));
    let Node::Group(opened) = Node::open(store.clone(), "/g").unwrap() else {
        panic!("a group")
    };
    assert_eq!(opened.format(), ZarrFormat::V2);
    assert!(opened.attributes().is_empty());
}

#[test]
fn f_order_slash_keys_and_big_endian_round_trip_through_the_store_bytes() {
    let store = Arc::new(MemoryStore::new());
    let mut transpose = JsonMap::new();
    transpose.insert("order".into(), json!([1, 0]));
    let array = Array::builder(&[2, 3], DataType::UInt16, &[2, 3])
        .format(ZarrFormat::V2)
        .chunk_key_encoding(ChunkKeyEncoding::V2 {
            separator: Separator::Slash,
        })
        .codecs_metadata(vec![
            ExtensionObject::with_configuration("transpose", transpose),
            codec("bytes", json!({"endian": "big"})),
        ])
        .create(store.clone(), "/f")
        .unwrap();
    array
        .write_region(&Region::whole(array.shape()), &[1u16, 2, 3, 4, 5, 6])
        .unwrap();
    let doc = json_at(store.as_ref(), "f/.zarray");
    assert_eq!(doc["order"], "F");
    assert_eq!(doc["dtype"], ">u2");
    assert_eq!(doc["dimension_separator"], "/");
    assert_eq!(doc["compressor"], Value::Null);
    // F order: the first dimension varies fastest; big-endian elements.
    let chunk = store.get(&key("f/0/0"), None).unwrap().unwrap();
    assert_eq!(chunk, [0, 1, 0, 4, 0, 2, 0, 5, 0, 3, 0, 6]);
}

#[test]
fn what_v2_cannot_hold_is_refused_before_anything_is_written() {
    let store = Arc::new(MemoryStore::new());
    let err = Array::builder(&[4], DataType::Float32, &[2])
        .format(ZarrFormat::V2)
        .codecs_metadata(vec![
            codec("bytes", json!({"endian": "little"})),
            codec("gzip", json!({"level": 1})),
            codec("crc32c", json!({})),
        ])
        .create(store.clone(), "/x")
        .unwrap_err();
    assert!(matches!(err, Error::InvalidMetadata { .. }), "{err:?}");
    let message = format!("{err}: {}", std::error::Error::source(&err).unwrap());
    assert_eq!(
        message,
        "invalid metadata for `/x`: Zarr v2 cannot represent the codec `gzip` before the compressor (v2 has one compressor)"
    );
    assert!(
        store
            .list_prefix(&zarrkit::store::StorePrefix::root())
            .unwrap()
            .is_empty()
    );
    let err = Array::builder(&[4], DataType::Float32, &[2])
        .format(ZarrFormat::V2)
        .dimension_names(["x"])
        .create(store.clone(), "/x")
        .unwrap_err();
    assert!(
        std::error::Error::source(&err)
            .unwrap()
            .to_string()
            .contains("`dimension_names`"),
        "{err}"
    );
}

#[test]
fn a_v2_array_migrates_to_v3_with_numcodecs_names() {
    let store = Arc::new(MemoryStore::new());
    store
        .set(
            &key("m/.zarray"),
            br#"{"zarr_format": 2, "shape": [3], "chunks": [3], "dtype": ">f8",
                 "compressor": {"id": "lz4", "acceleration": 1}, "fill_value": NaN,
                 "order": "C", "filters": []}"#,
        )
        .unwrap();
    let array = Array::open(store.clone(), "/m").unwrap();
    assert_eq!(array.fill_value().as_bytes(), f64::NAN.to_ne_bytes());
    let v3 = format::v3::node_to_json(&NodeMetadata::Array(array.metadata().clone()));
    assert_eq!(
        v3["codecs"],
        json!([
            {"name": "bytes", "configuration": {"endian": "big"}},
            {"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}
        ])
    );
    assert_eq!(v3["chunk_key_encoding"]["name"], "v2");
    assert_eq!(v3["fill_value"], "NaN");
}

#[test]
fn malformed_v2_documents_are_errors_naming_the_key() {
    let store = Arc::new(MemoryStore::new());
    store
        .set(&key("bad/.zarray"), br#"{"zarr_format": 2}"#)
        .unwrap();
    let err = Array::open(store.clone(), "/bad").unwrap_err();
    assert_eq!(err.to_string(), "invalid metadata in `bad/.zarray`");
    store
        .set(
            &key("unknown/.zarray"),
            br#"{"zarr_format": 2, "shape": [3], "chunks": [3], "dtype": "<i4",
                 "compressor": {"id": "snappy"}, "fill_value": 0, "order": "C", "filters": null}"#,
        )
        .unwrap();
    let err = Array::open(store.clone(), "/unknown").unwrap_err();
    assert_eq!(
        format!("{err}: {}", std::error::Error::source(&err).unwrap()),
        "invalid metadata in `unknown/.zarray`: unsupported v2 compressor `snappy`"
    );
    store
        .set(&key("g/.zgroup"), br#"{"zarr_format": 2}"#)
        .unwrap();
    store.set(&key("g/.zattrs"), b"[1]").unwrap();
    let err = Group::open(store.clone(), "/g").unwrap_err();
    assert_eq!(err.to_string(), "invalid metadata in `g/.zattrs`");
    // An invalid codec option is caught when the chain is built, naming the array.
    store
        .set(
            &key("level/.zarray"),
            br#"{"zarr_format": 2, "shape": [3], "chunks": [3], "dtype": "<i4",
                 "compressor": {"id": "zlib", "level": 12}, "fill_value": 0, "order": "C", "filters": null}"#,
        )
        .unwrap();
    let err = Array::open(store, "/level").unwrap_err();
    assert!(err.to_string().contains("`/level`"), "{err}");
}

#[test]
fn v3_documents_win_over_v2_documents_at_the_same_path() {
    let store = Arc::new(MemoryStore::new());
    Group::create(store.clone(), "/", JsonMap::new()).unwrap();
    store
        .set(&key(".zgroup"), br#"{"zarr_format": 2}"#)
        .unwrap();
    assert_eq!(Group::open(store, "/").unwrap().format(), ZarrFormat::V3);
}

// Interop -------------------------------------------------------------------

fn reference_python() -> Option<PathBuf> {
    if let Some(python) = std::env::var_os("ZARRKIT_PYTHON").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(python));
    }
    assert!(
        std::env::var("ZARRKIT_REQUIRE_INTEROP").as_deref() != Ok("1"),
        "ZARRKIT_REQUIRE_INTEROP=1 but ZARRKIT_PYTHON is unset"
    );
    eprintln!("skipping: set ZARRKIT_PYTHON to a Python with zarr 3.1 and tensorstore");
    None
}

fn run_script(python: &Path, mode: &str, dir: &Path) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/generate/v2_interop.py");
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
        "v2_interop.py {mode} failed: {text}"
    );
    text
}

/// Native-endian element bytes to little-endian, in place.
fn to_little_endian(bytes: &mut [u8], data_type: &DataType) {
    let unit = data_type.endian_unit();
    if cfg!(target_endian = "big") && unit > 1 {
        bytes.chunks_exact_mut(unit).for_each(<[u8]>::reverse);
    }
}

#[test]
fn zarrkit_reads_every_v2_array_zarr_python_writes() {
    let Some(python) = reference_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    run_script(&python, "write", dir.path());
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("manifest.json")).unwrap()).unwrap();
    let store: Arc<dyn Store> =
        Arc::new(FilesystemStore::new(dir.path().join("zarr-python.zarr")).unwrap());
    let mut failures = Vec::new();
    let arrays = manifest["arrays"].as_array().unwrap();
    assert!(arrays.len() > 200, "the matrix has {} arrays", arrays.len());
    for entry in arrays {
        let id = entry["id"].as_str().unwrap();
        let result = (|| -> Result<(), String> {
            let array = Array::open(store.clone(), entry["path"].as_str().unwrap())
                .map_err(|e| format!("{e:#?}"))?;
            let (data_type, _) = v2::dtype_from_json(&entry["dtype"]).unwrap();
            if array.data_type() != &data_type {
                return Err(format!("data type {}", array.data_type()));
            }
            let shape: Vec<u64> = serde_json::from_value(entry["shape"].clone()).unwrap();
            if array.shape() != shape.as_slice() {
                return Err(format!("shape {:?}", array.shape()));
            }
            let mut got = array
                .read_region_bytes(&Region::whole(array.shape()))
                .map_err(|e| format!("{e:#?}"))?;
            to_little_endian(&mut got, &data_type);
            let expected =
                std::fs::read(dir.path().join(entry["expected"].as_str().unwrap())).unwrap();
            if got != expected {
                let size = data_type.size();
                let first = got
                    .chunks(size)
                    .zip(expected.chunks(size))
                    .position(|(a, b)| a != b);
                return Err(format!("values differ, first at element {first:?}"));
            }
            Ok(())
        })();
        if let Err(e) = result {
            failures.push(format!("{id}: {e}"));
        }
    }
    // The hierarchy: groups with attributes, found by walking.
    for group in manifest["groups"].as_array().unwrap() {
        let path = group["path"].as_str().unwrap();
        let opened = Group::open(store.clone(), path).unwrap();
        assert_eq!(opened.format(), ZarrFormat::V2, "{path}");
        assert_eq!(
            Value::Object(opened.attributes().clone()),
            group["attributes"],
            "{path}"
        );
        let children: Vec<String> = opened
            .children()
            .unwrap()
            .iter()
            .map(|n| n.path().name().to_string())
            .collect();
        assert_eq!(json!(children), group["children"], "{path}");
    }
    let walked = Group::open(store, "/").unwrap().walk().unwrap();
    assert_eq!(walked.len(), arrays.len() + 3);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The v2 compressors zarrkit writes, as v3 codec metadata after `bytes`.
fn compressors() -> Vec<(&'static str, Option<ExtensionObject>)> {
    let mut out = vec![("none", None)];
    for (name, cname, shuffle) in [
        ("blosc-lz4-shuffle", "lz4", "shuffle"),
        ("blosc-zstd-bitshuffle", "zstd", "bitshuffle"),
        ("blosc-blosclz-noshuffle", "blosclz", "noshuffle"),
        ("blosc-zlib-shuffle", "zlib", "shuffle"),
        ("blosc-lz4hc-bitshuffle", "lz4hc", "bitshuffle"),
    ] {
        out.push((
            name,
            Some(codec(
                "blosc",
                json!({"cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": 1, "blocksize": 0}),
            )),
        ));
    }
    out.extend([
        ("zlib", Some(codec("numcodecs.zlib", json!({"level": 6})))),
        ("gzip", Some(codec("gzip", json!({"level": 5})))),
        ("bz2", Some(codec("numcodecs.bz2", json!({"level": 9})))),
        ("lzma", Some(codec("numcodecs.lzma", json!({"format": 1, "check": -1, "preset": 1})))),
        (
            "lzma-raw",
            Some(codec(
                "numcodecs.lzma",
                json!({"format": 3, "check": -1, "filters": [{"id": 3, "dist": 2}, {"id": 33, "preset": 0}]}),
            )),
        ),
        ("zstd", Some(codec("zstd", json!({"level": 3, "checksum": true})))),
        ("lz4", Some(codec("numcodecs.lz4", json!({"acceleration": 1})))),
    ]);
    out
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Random native-endian elements (any bit pattern; 0/1 for `bool`).
fn random_elements(data_type: &DataType, n: usize, seed: u64) -> Vec<u8> {
    let size = data_type.size();
    let mut out: Vec<u8> = (0..n * size)
        .map(|i| splitmix64(seed.wrapping_mul(1_000_003).wrapping_add(i as u64)) as u8)
        .collect();
    if *data_type == DataType::Bool {
        out.iter_mut().for_each(|b| *b &= 1);
    }
    out
}

/// A fill value that a zero-filling reader gets wrong. Not a NaN: v2 writes
/// every NaN as `"NaN"`, so a payload would not survive.
fn fill_for(data_type: &DataType, seed: u64) -> Vec<u8> {
    match data_type {
        DataType::Float16 => half::f16::from_f32(-2.5).to_ne_bytes().to_vec(),
        DataType::Float32 => (-2.5f32).to_ne_bytes().to_vec(),
        DataType::Float64 => f64::NEG_INFINITY.to_ne_bytes().to_vec(),
        DataType::Complex64 => [1.5f32.to_ne_bytes(), (-0.0f32).to_ne_bytes()].concat(),
        DataType::Complex128 => [f64::INFINITY.to_ne_bytes(), 3.25f64.to_ne_bytes()].concat(),
        DataType::Bool => vec![1],
        other => random_elements(other, 1, seed ^ 0xf111),
    }
}

#[test]
fn zarr_python_and_tensorstore_read_every_v2_array_zarrkit_writes() {
    let Some(python) = reference_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("zarrkit.zarr");
    std::fs::create_dir_all(dir.path().join("expected")).unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(&root).unwrap());
    Group::create_as(store.clone(), "/", ZarrFormat::V2, {
        let mut a = JsonMap::new();
        a.insert("written_by".into(), "zarrkit".into());
        a
    })
    .unwrap();
    let types = [
        DataType::Bool,
        DataType::Int8,
        DataType::Int16,
        DataType::Int32,
        DataType::Int64,
        DataType::UInt8,
        DataType::UInt16,
        DataType::UInt32,
        DataType::UInt64,
        DataType::Float16,
        DataType::Float32,
        DataType::Float64,
        DataType::Complex64,
        DataType::Complex128,
        DataType::RawBits(24),
    ];
    let compressors = compressors();
    let mut entries = Vec::new();
    let mut case = 0usize;
    for data_type in &types {
        for big in [false, true] {
            if big && data_type.endian_unit() == 1 {
                continue;
            }
            for (f_order, slash) in [(false, false), (true, true), (false, true), (true, false)] {
                let (name, compressor) = &compressors[case % compressors.len()];
                case += 1;
                let id = format!(
                    "{}_{}_{}_{}_{name}",
                    data_type,
                    if big { "be" } else { "le" },
                    if f_order { "F" } else { "C" },
                    if slash { "slash" } else { "dot" }
                );
                entries.push(write_case(
                    &store,
                    dir.path(),
                    &id,
                    data_type,
                    big,
                    f_order,
                    slash,
                    compressor.clone(),
                    case as u64,
                ));
            }
        }
    }
    for (name, compressor) in &compressors {
        for data_type in [DataType::Int32, DataType::Float64, DataType::UInt8] {
            case += 1;
            let id = format!("comp_{name}_{data_type}");
            entries.push(write_case(
                &store,
                dir.path(),
                &id,
                &data_type,
                false,
                false,
                false,
                compressor.clone(),
                case as u64,
            ));
        }
    }
    let manifest = json!({
        "arrays": entries,
        "groups": [{"store": "zarrkit.zarr", "path": "/", "attributes": {"written_by": "zarrkit"},
                    "children": ["arrays"]},
                   {"store": "zarrkit.zarr", "path": "/arrays", "attributes": {},
                    "children": entries.iter().map(|e| e["id"].clone()).collect::<Vec<_>>()}],
    });
    std::fs::write(
        dir.path().join("manifest.json"),
        serde_json::to_vec_pretty(&manifest).unwrap(),
    )
    .unwrap();
    let output = run_script(&python, "read", dir.path());
    // Tensorstore reads everything but the compressors it lacks, which the
    // script names; it must not have skipped anything else.
    for line in output
        .lines()
        .filter(|l| l.starts_with("not checked by tensorstore"))
    {
        assert!(
            line.contains("has no lz4 compressor")
                || line.contains("has no lzma compressor")
                || line.contains("zstd `checksum`"),
            "{line}"
        );
    }
}

#[allow(clippy::too_many_arguments)]
fn write_case(
    store: &Arc<dyn Store>,
    dir: &Path,
    id: &str,
    data_type: &DataType,
    big: bool,
    f_order: bool,
    slash: bool,
    compressor: Option<ExtensionObject>,
    seed: u64,
) -> Value {
    let shape = [7u64, 5];
    let mut codecs = Vec::new();
    if f_order {
        codecs.push(codec("transpose", json!({"order": [1, 0]})));
    }
    codecs.push(if data_type.endian_unit() == 1 {
        codec("bytes", json!({}))
    } else {
        codec(
            "bytes",
            json!({"endian": if big { "big" } else { "little" }}),
        )
    });
    codecs.extend(compressor.map(|mut c| {
        if c.name == "blosc" {
            // numcodecs' typesize is the element size; the model's is explicit.
            c.configuration
                .as_mut()
                .unwrap()
                .insert("typesize".into(), data_type.size().into());
        }
        c
    }));
    let fill = fill_for(data_type, seed);
    let mut attributes = JsonMap::new();
    attributes.insert("case".into(), id.into());
    let array = Array::builder(&shape, data_type.clone(), &[3, 2])
        .format(ZarrFormat::V2)
        .chunk_key_encoding(ChunkKeyEncoding::V2 {
            separator: if slash {
                Separator::Slash
            } else {
                Separator::Dot
            },
        })
        .codecs_metadata(codecs)
        .fill_value_bytes(FillValue::new(fill.clone()))
        .attributes(attributes.clone())
        .create(store.clone(), &format!("/arrays/{id}"))
        .unwrap_or_else(|e| panic!("{id}: {e:#?}"));
    // Rows 0..4 written; rows 4..7 (the last chunk row partly, then wholly)
    // keep the fill value.
    let size = data_type.size();
    let written = Region::new(vec![0, 0], vec![4, 5]);
    let data = random_elements(data_type, 20, seed);
    array.write_region_bytes(&written, &data).unwrap();
    let mut expected = data;
    for _ in 0..15 {
        expected.extend_from_slice(&fill);
    }
    to_little_endian(&mut expected, data_type);
    assert_eq!(expected.len(), 35 * size);
    std::fs::write(dir.join("expected").join(format!("{id}.bin")), &expected).unwrap();
    json!({
        "id": id, "store": "zarrkit.zarr", "path": format!("/arrays/{id}"),
        "dtype": v2::dtype_to_string(data_type, big), "shape": shape,
        "expected": format!("expected/{id}.bin"), "attributes": attributes,
    })
}

// numcodecs vectors -----------------------------------------------------------

/// The data every vector encodes (see `testdata/generate/numcodecs_vectors.py`).
fn vector_data() -> Vec<u8> {
    (0..2000u32)
        .map(|i| (((i % 97) * 3) % 256) as u8 ^ (i / 400) as u8)
        .collect()
}

fn bytes_codec(name: &str, configuration: Value) -> Arc<dyn zarrkit::codec::BytesToBytesCodec> {
    match zarrkit::codec::codec_from_metadata(&codec(name, configuration)).unwrap() {
        zarrkit::codec::Codec::BytesToBytes(c) => c,
        other => panic!("{name} is bytes-to-bytes, got {other:?}"),
    }
}

fn numcodecs_vectors() -> Vec<(&'static str, Arc<dyn zarrkit::codec::BytesToBytesCodec>)> {
    vec![
        (
            "zlib_level1.bin",
            bytes_codec("numcodecs.zlib", json!({"level": 1})),
        ),
        (
            "zlib_level9.bin",
            bytes_codec("numcodecs.zlib", json!({"level": 9})),
        ),
        (
            "bz2_level1.bin",
            bytes_codec("numcodecs.bz2", json!({"level": 1})),
        ),
        (
            "bz2_level9.bin",
            bytes_codec("numcodecs.bz2", json!({"level": 9})),
        ),
        (
            "lzma_xz_default.bin",
            bytes_codec("numcodecs.lzma", json!({})),
        ),
        (
            "lzma_xz_preset1_sha256.bin",
            bytes_codec("numcodecs.lzma", json!({"preset": 1, "check": 10})),
        ),
        (
            "lzma_alone_preset2.bin",
            bytes_codec("numcodecs.lzma", json!({"format": 2, "preset": 2})),
        ),
        (
            "lzma_raw_delta_lzma2.bin",
            bytes_codec(
                "numcodecs.lzma",
                json!({"format": 3, "filters": [{"id": 3, "dist": 4}, {"id": 33, "preset": 1}]}),
            ),
        ),
        (
            "lz4_acceleration1.bin",
            bytes_codec("numcodecs.lz4", json!({"acceleration": 1})),
        ),
        (
            "lz4_acceleration10.bin",
            bytes_codec("numcodecs.lz4", json!({"acceleration": 10})),
        ),
    ]
}

#[test]
fn numcodecs_vectors_decode_to_their_data() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/codecs/numcodecs");
    let data = vector_data();
    for (file, codec) in numcodecs_vectors() {
        let encoded = std::fs::read(dir.join(file)).unwrap();
        assert!(encoded.len() < data.len(), "{file} compresses");
        assert_eq!(
            codec.decode(encoded.clone(), Some(data.len())).unwrap(),
            data,
            "{file}"
        );
        assert_eq!(
            codec.decode(encoded, None).unwrap(),
            data,
            "{file} without a size hint"
        );
    }
}

#[test]
fn bz2_and_lzma_encodings_are_byte_identical_to_numcodecs() {
    // bzip2 (libbz2-rs-sys, a port of libbzip2) and liblzma (the xz library
    // Python's lzma also uses) produce numcodecs' bytes exactly. zlib and
    // lz4 do not: flate2's zlib-rs backend and lz4_flex make different
    // (valid) choices than zlib and liblz4 (lz4_flex differs in how it ends
    // a block and has no acceleration), so for them each side decoding the
    // other's output is what is checked, here and in the interop tests.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/codecs/numcodecs");
    let data = vector_data();
    for (file, codec) in numcodecs_vectors() {
        if file.starts_with("zlib") || file.starts_with("lz4") {
            continue;
        }
        let expected = std::fs::read(dir.join(file)).unwrap();
        assert_eq!(codec.encode(data.clone()).unwrap(), expected, "{file}");
    }
}
