//! Zarr v1: round trips through both stores for every numeric data type,
//! byte order, order and compression; what v1 cannot hold; bad stores.
//!
//! The fixtures in `testdata/fixtures/v1/` (hand-made from the spec text by
//! `testdata/generate/v1_fixtures.py`) are checked by the corpus test.

use base64::Engine as _;
use serde_json::{Value, json};
use std::sync::Arc;
use zarrkit::format::{ZarrFormat, v2};
use zarrkit::metadata::{DataType, ExtensionObject, FillValue, JsonMap};
use zarrkit::store::{FilesystemStore, MemoryStore, Store, StoreKey};
use zarrkit::{Array, Error, Group, Node, Region};

fn key(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

/// The document under `k`, with bare `NaN`/`Infinity` tokens (which v1
/// writes, as zarr 1.x does) read as strings.
fn json_at(store: &dyn Store, k: &str) -> Value {
    let bytes = store.get(&key(k), None).unwrap().unwrap();
    serde_json::from_slice(&v2::quote_non_finite_tokens(&bytes)).unwrap()
}

fn codec(name: &str, configuration: Value) -> ExtensionObject {
    let Value::Object(configuration) = configuration else {
        panic!("an object")
    };
    ExtensionObject::with_configuration(name, configuration)
}

/// The error and its sources, joined by `: `.
fn chain(err: &Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

fn keys(store: &dyn Store) -> Vec<String> {
    let mut keys: Vec<String> = store
        .list()
        .unwrap()
        .into_iter()
        .map(|k| k.as_str().to_string())
        .collect();
    keys.sort();
    keys
}

const NUMERIC: &[DataType] = &[
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
];

/// The model codec for a v1 compression and the `compression_opts` it is
/// written as.
fn compression(name: &str, data_type: &DataType) -> (Option<ExtensionObject>, Value) {
    match name {
        "none" => (None, Value::Null),
        "zlib" => (Some(codec("numcodecs.zlib", json!({"level": 1}))), json!(1)),
        "bz2" => (Some(codec("numcodecs.bz2", json!({"level": 2}))), json!(2)),
        "lzma" => (
            Some(codec(
                "numcodecs.lzma",
                json!({"format": 1, "check": -1, "preset": 1}),
            )),
            json!({"format": 1, "check": -1, "preset": 1, "filters": null}),
        ),
        "blosc" => (
            Some(codec(
                "blosc",
                json!({"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle",
                       "typesize": data_type.size(), "blocksize": 0}),
            )),
            json!({"cname": "zstd", "clevel": 3, "shuffle": 2}),
        ),
        other => panic!("{other}"),
    }
}

/// Deterministic element bytes (native endian); `bool` elements are 0 or 1.
fn values(data_type: &DataType, n: usize) -> Vec<u8> {
    let size = data_type.size();
    (0..n * size)
        .map(|i| {
            if *data_type == DataType::Bool {
                u8::from(i % 3 == 0)
            } else {
                (i * 37 % 251) as u8
            }
        })
        .collect()
}

#[test]
fn every_numeric_dtype_byte_order_order_and_compression_round_trips_on_both_stores() {
    let dir = tempfile::tempdir().unwrap();
    let shape = [5u64, 7];
    let chunks = [2u64, 3];
    // The written region leaves chunks (2, *) partly and (*, 2) partly
    // unwritten, so the fill value shows there.
    let written = Region::new(vec![0, 0], vec![4, 5]);
    let mut cases = 0;
    for data_type in NUMERIC {
        let byte_orders: &[bool] = if data_type.endian_unit() > 1 {
            &[false, true]
        } else {
            &[false]
        };
        for &big in byte_orders {
            for f_order in [false, true] {
                for name in ["none", "zlib", "bz2", "lzma", "blosc"] {
                    let id = format!(
                        "{data_type}-{}-{}-{name}",
                        if big { "big" } else { "little" },
                        if f_order { "F" } else { "C" }
                    );
                    let (compressor, opts) = compression(name, data_type);
                    let mut codecs = Vec::new();
                    if f_order {
                        codecs.push(codec("transpose", json!({"order": [1, 0]})));
                    }
                    codecs.push(if data_type.endian_unit() > 1 {
                        codec(
                            "bytes",
                            json!({"endian": if big { "big" } else { "little" }}),
                        )
                    } else {
                        codec("bytes", json!({}))
                    });
                    codecs.extend(compressor);
                    let fill = vec![1u8; data_type.size()];
                    let stores: Vec<(&str, Arc<dyn Store>)> = vec![
                        ("memory", Arc::new(MemoryStore::new())),
                        (
                            "filesystem",
                            Arc::new(FilesystemStore::new(dir.path().join(&id)).unwrap()),
                        ),
                    ];
                    for (backend, store) in stores {
                        let context = format!("{id} on the {backend} store");
                        let array = Array::builder(&shape, data_type.clone(), &chunks)
                            .format(ZarrFormat::V1)
                            .codecs_metadata(codecs.clone())
                            .fill_value_bytes(FillValue::new(fill.clone()))
                            .create(store.clone(), "/")
                            .unwrap_or_else(|e| panic!("{context}: {}", chain(&e)));
                        let data = values(data_type, 20);
                        array.write_region_bytes(&written, &data).unwrap();
                        let meta = json_at(store.as_ref(), "meta");
                        assert_eq!(meta["zarr_format"], 1, "{context}");
                        assert_eq!(
                            meta["dtype"],
                            v2::dtype_to_string(data_type, big),
                            "{context}"
                        );
                        assert_eq!(meta["order"], if f_order { "F" } else { "C" });
                        assert_eq!(meta["compression"], name, "{context}");
                        assert_eq!(meta["compression_opts"], opts, "{context}");
                        assert_eq!(meta["shape"], json!(shape));
                        assert_eq!(meta["chunks"], json!(chunks));
                        assert_eq!(json_at(store.as_ref(), "attrs"), json!({}));
                        // Chunks (0..2, 0..2) are written: `i.j` keys.
                        assert_eq!(
                            keys(store.as_ref()),
                            ["0.0", "0.1", "1.0", "1.1", "attrs", "meta"],
                            "{context}"
                        );
                        let reopened = Array::open(store.clone(), "/").unwrap();
                        assert_eq!(reopened.format(), ZarrFormat::V1, "{context}");
                        assert_eq!(reopened.data_type(), data_type, "{context}");
                        let got = reopened.read_region_bytes(&Region::whole(&shape)).unwrap();
                        let size = data_type.size();
                        for row in 0..5usize {
                            for col in 0..7usize {
                                let at = (row * 7 + col) * size;
                                let expected = if row < 4 && col < 5 {
                                    &data[(row * 5 + col) * size..][..size]
                                } else {
                                    &fill[..]
                                };
                                assert_eq!(
                                    &got[at..at + size],
                                    expected,
                                    "{context} [{row},{col}]"
                                );
                            }
                        }
                        cases += 1;
                    }
                }
            }
        }
    }
    // 14 types, 11 of them with two byte orders, × 2 orders × 5 compressions × 2 stores.
    assert_eq!(cases, (3 + 11 * 2) * 2 * 5 * 2);
}

#[test]
fn uncompressed_chunks_are_laid_out_as_the_spec_says() {
    // Spec "Chunks": the raw bytes of the chunk; "order" F: the first
    // dimension varies fastest.
    for (order, expected) in [("C", [1u16, 2, 3, 4, 5, 6]), ("F", [1, 4, 2, 5, 3, 6])] {
        let store = Arc::new(MemoryStore::new());
        let mut codecs = Vec::new();
        if order == "F" {
            codecs.push(codec("transpose", json!({"order": [1, 0]})));
        }
        codecs.push(codec("bytes", json!({"endian": "big"})));
        let array = Array::builder(&[2, 3], DataType::UInt16, &[2, 3])
            .format(ZarrFormat::V1)
            .codecs_metadata(codecs)
            .create(store.clone(), "/")
            .unwrap();
        array
            .write_region(&Region::whole(&[2, 3]), &[1u16, 2, 3, 4, 5, 6])
            .unwrap();
        let chunk = store.get(&key("0.0"), None).unwrap().unwrap();
        let want: Vec<u8> = expected.iter().flat_map(|v| v.to_be_bytes()).collect();
        assert_eq!(chunk, want, "order {order}");
        assert_eq!(json_at(store.as_ref(), "meta")["dtype"], ">u2");
    }
}

#[test]
fn the_builder_writes_meta_and_attrs_with_zarr_1_defaults() {
    let store = Arc::new(MemoryStore::new());
    let mut attributes = JsonMap::new();
    attributes.insert("foo".into(), 42.into());
    let array = Array::builder(&[20, 20], DataType::Int32, &[10, 10])
        .format(ZarrFormat::V1)
        .attributes(attributes)
        .fill_value(42i32)
        .create(store.clone(), "/")
        .unwrap();
    assert_eq!(
        json_at(store.as_ref(), "meta"),
        json!({
            "chunks": [10, 10], "compression": "blosc",
            "compression_opts": {"clevel": 5, "cname": "lz4", "shuffle": 1},
            "dtype": "<i4", "fill_value": 42, "order": "C", "shape": [20, 20],
            "zarr_format": 1
        })
    );
    assert_eq!(json_at(store.as_ref(), "attrs"), json!({"foo": 42}));
    let text = String::from_utf8(store.get(&key("meta"), None).unwrap().unwrap()).unwrap();
    let keys_in_order: Vec<usize> = ["chunks", "compression\"", "dtype", "zarr_format"]
        .iter()
        .map(|k| text.find(k).unwrap())
        .collect();
    assert!(keys_in_order.is_sorted(), "keys sorted: {text}");
    array
        .write_region(&Region::new(vec![0, 0], vec![10, 10]), &[1i32; 100])
        .unwrap();
    assert_eq!(keys(store.as_ref()), ["0.0", "attrs", "meta"]);
    let node = Node::open(store.clone(), "/").unwrap();
    assert_eq!(node.format(), ZarrFormat::V1);
    assert_eq!(node.format().name(), "v1");
    let read: Vec<i32> = Array::open(store, "")
        .unwrap()
        .read_region(&Region::new(vec![9, 9], vec![2, 2]))
        .unwrap();
    assert_eq!(read, [1, 42, 42, 42]);
}

/// Reading a 0-d v1 array takes its chunk from the key `0` (as zarr-python
/// 2.x does after `migrate_1to2`); writing one is refused, naming it,
/// since zarr 1.x would look for the empty key (issue #9, item 9).
#[test]
fn zero_dimensional_arrays_read_the_chunk_key_0_and_are_not_written() {
    let store = Arc::new(MemoryStore::new());
    let err = Array::builder(&[], DataType::Float64, &[])
        .format(ZarrFormat::V1)
        .create(store.clone(), "/")
        .unwrap_err();
    assert!(chain(&err).contains("a 0-d array"), "{}", chain(&err));
    assert!(keys(store.as_ref()).is_empty());
    store
        .set(
            &key("meta"),
            br#"{"chunks": [], "compression": "none", "compression_opts": null,
                "dtype": "<f8", "fill_value": 0, "order": "C", "shape": [], "zarr_format": 1}"#,
        )
        .unwrap();
    store.set(&key("attrs"), b"{}").unwrap();
    store.set(&key("0"), &2.5f64.to_le_bytes()).unwrap();
    let read: Vec<f64> = Array::open(store, "/")
        .unwrap()
        .read_region(&Region::whole(&[]))
        .unwrap();
    assert_eq!(read, [2.5]);
}

#[test]
fn what_v1_cannot_hold_is_refused_before_anything_is_written() {
    let builder = || Array::builder(&[4], DataType::UInt8, &[2]).format(ZarrFormat::V1);
    let cases: Vec<(&str, zarrkit::ArrayBuilder, &str)> = vec![
        ("/a", builder(), "`/a`"),
        (
            "/",
            builder().codecs_metadata(vec![
                codec("bytes", json!({})),
                codec("gzip", json!({"level": 1})),
            ]),
            "`gzip`",
        ),
        (
            "/",
            builder().codecs_metadata(vec![
                codec("bytes", json!({})),
                codec("zstd", json!({"level": 1, "checksum": false})),
            ]),
            "`zstd`",
        ),
        ("/", builder().dimension_names(["x"]), "`dimension_names`"),
        (
            "/",
            builder().chunk_key_encoding(zarrkit::metadata::ChunkKeyEncoding::default()),
            "chunk key encoding",
        ),
    ];
    for (path, builder, needle) in cases {
        let store = Arc::new(MemoryStore::new());
        let err = builder.create(store.clone(), path).unwrap_err();
        let text = chain(&err);
        assert!(
            text.contains("Zarr v1 cannot represent") && text.contains(needle),
            "{text}"
        );
        assert!(keys(store.as_ref()).is_empty(), "{needle}: nothing written");
    }
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let err = Group::create_as(store.clone(), "/", ZarrFormat::V1, JsonMap::new()).unwrap_err();
    assert!(chain(&err).contains("v1 has no groups"), "{}", chain(&err));
    assert!(keys(store.as_ref()).is_empty());
}

#[test]
fn a_v1_store_has_one_array_and_no_groups() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Array::builder(&[4], DataType::UInt8, &[2])
        .format(ZarrFormat::V1)
        .create(store.clone(), "/")
        .unwrap();
    let err = Group::open(store.clone(), "/").unwrap_err();
    assert!(chain(&err).contains("v1 has no groups"), "{}", chain(&err));
    assert!(matches!(
        Array::open(store.clone(), "/meta"),
        Err(Error::NodeNotFound { .. })
    ));
    assert!(matches!(Node::open(store, "/"), Ok(Node::Array(_))));
}

/// A valid v1 store (the spec's example) with `meta` replaced by `meta`.
fn store_with(meta: &[u8], attrs: Option<&[u8]>) -> Arc<dyn Store> {
    let store = MemoryStore::new();
    store.set(&key("meta"), meta).unwrap();
    if let Some(attrs) = attrs {
        store.set(&key("attrs"), attrs).unwrap();
    }
    Arc::new(store)
}

fn example_meta(overrides: Value) -> Vec<u8> {
    let mut doc = json!({
        "chunks": [10, 10], "compression": "zlib", "compression_opts": 1, "dtype": "<i4",
        "fill_value": 42, "order": "C", "shape": [20, 20], "zarr_format": 1
    });
    for (k, v) in overrides.as_object().unwrap() {
        if v == "__remove__" {
            doc.as_object_mut().unwrap().remove(k);
        } else {
            doc[k] = v.clone();
        }
    }
    serde_json::to_vec_pretty(&doc).unwrap()
}

#[test]
fn bad_stores_are_errors_naming_the_key() {
    // Spec "Attributes": "the 'attrs' key MUST be present".
    let err = Array::open(store_with(&example_meta(json!({})), None), "/").unwrap_err();
    let text = chain(&err);
    assert!(text.starts_with("invalid metadata in `attrs`"), "{text}");
    let err = Array::open(store_with(&example_meta(json!({})), Some(b"[]")), "/").unwrap_err();
    assert!(chain(&err).starts_with("invalid metadata in `attrs`"));
    for (overrides, needle) in [
        (
            json!({"compression_opts": "__remove__"}),
            "missing required field `compression_opts`",
        ),
        (
            json!({"order": "__remove__"}),
            "missing required field `order`",
        ),
        (json!({"shape": {"a": 1}}), "field `shape` is invalid"),
        (
            json!({"compression": ["zlib"]}),
            "field `compression` is invalid",
        ),
        (
            json!({"compression": "snappy"}),
            "unsupported v1 compression `snappy`",
        ),
        (
            json!({"dtype": "|O", "fill_value": null}),
            "unsupported v1 data type `|O`",
        ),
        (
            json!({"dtype": [["a", "<i4"], ["a", "<i2"]], "fill_value": null}),
            "field `dtype[1][0]` is invalid",
        ),
        // A number is NumPy's cast (`"5"`, issue #9); `true` is no string.
        (
            json!({"dtype": "<U3", "fill_value": true}),
            "fill value `true` is invalid for data type `\"<U3\"`",
        ),
        (json!({"zarr_format": 2}), "`zarr_format` `2`"),
    ] {
        let store = store_with(&example_meta(overrides.clone()), Some(b"{}"));
        let err = Array::open(store, "/").unwrap_err();
        let text = chain(&err);
        assert!(
            text.starts_with("invalid metadata in `meta`") && text.contains(needle),
            "{overrides}: {text}"
        );
    }
    // A chunk that does not decode names its key.
    let store = store_with(&example_meta(json!({})), Some(b"{}"));
    store.set(&key("1.0"), b"not zlib").unwrap();
    let array = Array::open(store, "/").unwrap();
    let err = array
        .read_region::<i32>(&Region::whole(&[20, 20]))
        .unwrap_err();
    assert!(
        matches!(&err, Error::Decode { key, .. } if key.as_str() == "1.0"),
        "{}",
        chain(&err)
    );
}

#[test]
fn bare_nan_fill_values_and_extra_keys_survive_a_rewrite() {
    let meta = br#"{
    "chunks": [2], "compression": "none", "compression_opts": null,
    "creator": {"library": "zarr", "version": "1.1.0"},
    "dtype": ">f8", "fill_value": NaN, "order": "C", "shape": [3], "zarr_format": 1
}"#;
    let store = store_with(meta, Some(b"{}"));
    let mut array = Array::open(store.clone(), "/").unwrap();
    let read: Vec<f64> = array.read_region(&Region::whole(&[3])).unwrap();
    assert!(read.iter().all(|v| v.is_nan()), "{read:?}");
    let mut attributes = JsonMap::new();
    attributes.insert("units".into(), "m".into());
    array.set_attributes(attributes).unwrap();
    let meta = json_at(store.as_ref(), "meta");
    assert_eq!(
        meta["creator"],
        json!({"library": "zarr", "version": "1.1.0"})
    );
    assert_eq!(meta["fill_value"], "NaN");
    // Written back as zarr 1.x writes it: the bare token (issue #9, item 8).
    let text = String::from_utf8(store.get(&key("meta"), None).unwrap().unwrap()).unwrap();
    assert!(text.contains("\"fill_value\": NaN,"), "{text}");
    assert_eq!(meta["dtype"], ">f8");
    assert_eq!(json_at(store.as_ref(), "attrs"), json!({"units": "m"}));
}

#[test]
fn the_spec_example_fixture_holds_the_spec_values() {
    // testdata/fixtures/v1/spec_example_int32_zlib is the spec's "Example":
    // z[0:10, 0:10] = 1, z[0:10, 10:20] = 2, z[10:20, :] = 3, fill 42.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/fixtures/v1/spec_example_int32_zlib");
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(root).unwrap());
    let array = Array::open(store, "/").unwrap();
    assert_eq!(array.format(), ZarrFormat::V1);
    assert_eq!(array.metadata().codecs[1].name, "numcodecs.zlib");
    assert_eq!(array.attributes()["fixture"], "spec_example_int32_zlib");
    let values: Vec<i32> = array.read_region(&Region::whole(&[20, 20])).unwrap();
    for (i, value) in values.iter().enumerate() {
        let (row, col) = (i / 20, i % 20);
        let expected = match (row < 10, col < 10) {
            (true, true) => 1,
            (true, false) => 2,
            (false, _) => 3,
        };
        assert_eq!(*value, expected, "[{row}, {col}]");
    }
}

#[test]
fn byte_unicode_and_structured_types_round_trip_with_the_numpy_layout() {
    use zarrkit::metadata::StructField;
    let dir = tempfile::tempdir().unwrap();
    let backends: Vec<(&str, Arc<dyn Store>)> = vec![
        ("memory", Arc::new(MemoryStore::new())),
        (
            "filesystem",
            Arc::new(FilesystemStore::new(dir.path()).unwrap()),
        ),
    ];
    for (backend, store) in backends {
        // `|S3`, uncompressed: each element zero-padded to 3 bytes
        // (string dtypes extension, "Fixed length byte strings").
        let bytes = Array::builder(&[4], DataType::FixedBytes(3), &[4])
            .codecs_metadata(vec![codec("bytes", json!({}))])
            .fill_value_bytes(FillValue::new(b"zz\0".to_vec()))
            .format(ZarrFormat::V1)
            .create(Arc::clone(&store), "/")
            .unwrap();
        bytes
            .write_byte_strings(&Region::whole(&[4]), &[&b"a"[..], b"bcd", b"", b"ef"])
            .unwrap();
        let meta = json_at(store.as_ref(), "meta");
        assert_eq!(meta["dtype"], json!("|S3"), "{backend}");
        assert_eq!(meta["fill_value"], json!("eno="), "{backend}");
        assert_eq!(
            store.get(&key("0"), None).unwrap().unwrap(),
            b"a\0\0bcd\0\0\0ef\0",
            "{backend}"
        );
        let reopened = Array::open(Arc::clone(&store), "/").unwrap();
        assert_eq!(reopened.metadata(), bytes.metadata(), "{backend}");
        assert_eq!(
            reopened.read_byte_strings(&Region::whole(&[4])).unwrap(),
            [b"a".to_vec(), b"bcd".to_vec(), Vec::new(), b"ef".to_vec()],
            "{backend}"
        );
        store
            .erase_prefix(&zarrkit::store::StorePrefix::root())
            .unwrap();

        // `>U2`: big-endian UTF-32, zero-padded, fill value the string.
        let text = Array::builder(&[3], DataType::FixedUtf32(8), &[2])
            .codecs_metadata(vec![codec("bytes", json!({"endian": "big"}))])
            .fill_value_bytes(FillValue::new(
                "é".chars()
                    .flat_map(|c| (c as u32).to_ne_bytes())
                    .chain([0; 4])
                    .collect(),
            ))
            .format(ZarrFormat::V1)
            .create(Arc::clone(&store), "/")
            .unwrap();
        text.write_strings(&Region::new(vec![0], vec![2]), &["中", "ab"])
            .unwrap();
        let meta = json_at(store.as_ref(), "meta");
        assert_eq!(meta["dtype"], json!(">U2"), "{backend}");
        assert_eq!(meta["fill_value"], json!("é"), "{backend}");
        let mut chunk = 0x4e2d_u32.to_be_bytes().to_vec();
        chunk.extend([0; 4]);
        chunk.extend(u32::from(b'a').to_be_bytes());
        chunk.extend(u32::from(b'b').to_be_bytes());
        assert_eq!(
            store.get(&key("0"), None).unwrap().unwrap(),
            chunk,
            "{backend}"
        );
        let reopened = Array::open(Arc::clone(&store), "/").unwrap();
        assert_eq!(
            reopened.read_strings(&Region::whole(&[3])).unwrap(),
            ["中", "ab", "é"],
            "{backend}"
        );
        store
            .erase_prefix(&zarrkit::store::StorePrefix::root())
            .unwrap();

        // A structure, big endian, F order: `[["id", ">u2"], ["tag", "|S2"]]`.
        let record = DataType::Struct(vec![
            StructField::new("id", DataType::UInt16),
            StructField::new("tag", DataType::FixedBytes(2)),
        ]);
        let structs = Array::builder(&[2, 2], record, &[2, 2])
            .codecs_metadata(vec![
                codec("transpose", json!({"order": [1, 0]})),
                codec("bytes", json!({"endian": "big"})),
            ])
            .format(ZarrFormat::V1)
            .create(Arc::clone(&store), "/")
            .unwrap();
        let elements: Vec<u8> = [(1u16, b"ab"), (2, b"cd"), (3, b"ef"), (4, b"gh")]
            .iter()
            .flat_map(|(id, tag)| id.to_ne_bytes().into_iter().chain(tag.iter().copied()))
            .collect();
        structs
            .write_region_bytes(&Region::whole(&[2, 2]), &elements)
            .unwrap();
        let meta = json_at(store.as_ref(), "meta");
        assert_eq!(
            meta["dtype"],
            json!([["id", ">u2"], ["tag", "|S2"]]),
            "{backend}"
        );
        assert_eq!(meta["order"], json!("F"), "{backend}");
        // Column-major, each id big endian.
        assert_eq!(
            store.get(&key("0.0"), None).unwrap().unwrap(),
            b"\0\x01ab\0\x03ef\0\x02cd\0\x04gh",
            "{backend}"
        );
        let reopened = Array::open(Arc::clone(&store), "/").unwrap();
        assert_eq!(
            reopened
                .read_field::<u16>(&Region::whole(&[2, 2]), "id")
                .unwrap(),
            [1, 2, 3, 4],
            "{backend}"
        );
        store
            .erase_prefix(&zarrkit::store::StorePrefix::root())
            .unwrap();
    }
}

#[test]
fn structured_types_with_mixed_byte_order_read_and_write_back() {
    // v1 "Data type encoding": each field of a structured type has its own
    // byte order. Field `a` little-endian i4, `b` big-endian i2, no
    // compression, one chunk of 3 records written by hand.
    let meta = json!({
        "chunks": [3], "compression": "none", "compression_opts": null,
        "dtype": [["a", "<i4"], ["b", ">i2"]], "fill_value": null, "order": "C",
        "shape": [3], "zarr_format": 1
    });
    let mut chunk = Vec::new();
    for (a, b) in [(1i32, 300i16), (-2, -1), (70000, 7)] {
        chunk.extend(a.to_le_bytes());
        chunk.extend(b.to_be_bytes());
    }
    let store = store_with(&serde_json::to_vec(&meta).unwrap(), Some(b"{}"));
    store.set(&key("0"), &chunk).unwrap();
    let array = Array::open(store.clone(), "/").unwrap();
    let all = Region::new(vec![0], vec![3]);
    assert_eq!(array.read_field::<i32>(&all, "a").unwrap(), [1, -2, 70000]);
    assert_eq!(array.read_field::<i16>(&all, "b").unwrap(), [300, -1, 7]);
    // Writing keeps each field's byte order, and the document says so.
    array
        .write_region_bytes(
            &Region::new(vec![1], vec![1]),
            &[5i32.to_ne_bytes().as_slice(), 9i16.to_ne_bytes().as_slice()].concat(),
        )
        .unwrap();
    let stored = store.get(&key("0"), None).unwrap().unwrap();
    assert_eq!(stored[6..12], [5, 0, 0, 0, 0, 9]);
    let doc: Value =
        serde_json::from_slice(&store.get(&key("meta"), None).unwrap().unwrap()).unwrap();
    assert_eq!(doc["dtype"], json!([["a", "<i4"], ["b", ">i2"]]));
}

/// NumPy datetimes are v1 typestrs (`<M8[ns]`, `<m8[s]`), as zarr 1.x
/// writes them: zarrkit writes such arrays, and zarr 1.1.0 reads them.
#[test]
fn datetime_arrays_are_written_as_numpy_typestrs_that_zarr_1_reads() {
    let Some(zarr1) = crate::support::python("ZARRKIT_PYTHON_ZARR1", "zarr 1.1.0") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    use zarrkit::metadata::TimeUnit;
    let cases = [
        (
            "dt",
            DataType::NumpyDateTime64 {
                unit: TimeUnit::Nanosecond,
                scale_factor: 1,
            },
            "<M8[ns]",
        ),
        (
            "td",
            DataType::NumpyTimeDelta64 {
                unit: TimeUnit::Second,
                scale_factor: 1,
            },
            "<m8[s]",
        ),
    ];
    for (name, data_type, typestr) in cases {
        let array = Array::builder(&[5], data_type, &[2])
            .format(ZarrFormat::V1)
            .create(fs_store(&dir.path().join(name)), "/")
            .unwrap();
        let values: Vec<i64> = vec![1_600_000_000, -3, i64::MIN, 0, 42];
        array.write_region(&Region::whole(&[5]), &values).unwrap();
        let doc = json_at(fs_store(&dir.path().join(name)).as_ref(), "meta");
        assert_eq!(doc["dtype"], json!(typestr), "{name}");
        let reopened = Array::open(fs_store(&dir.path().join(name)), "/").unwrap();
        assert_eq!(
            reopened.read_region::<i64>(&Region::whole(&[5])).unwrap(),
            values
        );
        let code = format!(
            "import collections, collections.abc\n\
             collections.MutableMapping = collections.abc.MutableMapping\n\
             import zarr\n\
             z = zarr.open({path:?}, mode='r')\n\
             print(z.dtype.str, [int(v) for v in z[:].view('i8')])",
            path = dir.path().join(name).to_str().unwrap()
        );
        let out = crate::support::run(&zarr1, &["-c", code.as_str()], &[]);
        assert_eq!(
            out.trim(),
            format!("{typestr} [1600000000, -3, {}, 0, 42]", i64::MIN),
            "{name}"
        );
    }
}

/// Runs `testdata/generate/v1_interop.py MODE DIR`; returns its stdout.
fn v1_interop(python: &std::path::Path, mode: &str, dir: &std::path::Path) -> String {
    let script = crate::support::script("v1_interop.py");
    crate::support::run(
        python,
        &[script.as_os_str(), mode.as_ref(), dir.as_os_str()],
        &[],
    )
}

fn fs_store(path: &std::path::Path) -> Arc<dyn Store> {
    Arc::new(FilesystemStore::new(path).unwrap())
}

/// zarr 1.1.0 writes arrays with non-finite fill values (bare `NaN`,
/// `Infinity`, `-Infinity`) and non-ASCII attributes (`\uXXXX`); zarrkit
/// reads every element, the attributes and the fill value. Then zarrkit
/// writes them twice, rewritten through the model (a v1 → v1 migration,
/// whose `meta` and `attrs` must be byte for byte zarr 1.1.0's) and anew
/// with the builder (its own chunks), and zarr 1.1.0 and zarr-python 2.18
/// (through `migrate_1to2`) read both back equal (issue #9, items 7-8).
#[test]
fn zarr_1_1_and_zarr_2_18_read_the_v1_arrays_zarrkit_writes_and_zarrkit_reads_theirs() {
    let (Some(zarr1), Some(zarr2)) = (
        crate::support::python("ZARRKIT_PYTHON_ZARR1", "zarr 1.1.0"),
        crate::support::python("ZARRKIT_PYTHON_ZARR2", "zarr 2.18"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let written = dir.path().join("zarr1");
    let migrated = dir.path().join("migrated");
    let built = dir.path().join("built");
    for d in [&written, &migrated, &built] {
        std::fs::create_dir(d).unwrap();
    }
    v1_interop(&zarr1, "zarr1-write", &written);
    let manifest_bytes = std::fs::read(written.join("manifest.json")).unwrap();
    let manifest: Value = serde_json::from_slice(&manifest_bytes).unwrap();
    let manifest = manifest.as_array().unwrap();
    assert_eq!(manifest.len(), 6);
    for entry in manifest {
        let name = entry["name"].as_str().unwrap();
        let source = Array::open(fs_store(&written.join(name)), "/").unwrap();
        let whole = Region::whole(source.shape());
        let values = source.read_region_bytes(&whole).unwrap();
        let expected = base64::engine::general_purpose::STANDARD
            .decode(entry["values"].as_str().unwrap())
            .unwrap();
        assert_eq!(values, expected, "{name}: values");
        assert_eq!(
            Value::Object(source.attributes().clone()),
            entry["attributes"],
            "{name}: attributes"
        );
        let fill = source.fill_value().as_bytes();
        let fill = match source.data_type() {
            DataType::Int16 => f64::from(i16::from_ne_bytes(fill.try_into().unwrap())),
            DataType::UInt32 => f64::from(u32::from_ne_bytes(fill.try_into().unwrap())),
            DataType::Float32 => f64::from(f32::from_ne_bytes(fill.try_into().unwrap())),
            DataType::Float64 => f64::from_ne_bytes(fill.try_into().unwrap()),
            other => panic!("{name}: no case for {other}"),
        };
        let shown = match fill {
            f if f.is_nan() => json!("NaN"),
            f if f == f64::INFINITY => json!("Infinity"),
            f if f == f64::NEG_INFINITY => json!("-Infinity"),
            f => json!(f as i64),
        };
        assert_eq!(shown, entry["fill_value"], "{name}: fill value");

        // Rewritten through the model: the documents are zarr 1.1.0's bytes.
        let dst = fs_store(&migrated.join(name));
        let plan = zarrkit::migrate::plan(
            fs_store(&written.join(name)),
            Arc::clone(&dst),
            ZarrFormat::V1,
        )
        .unwrap();
        zarrkit::migrate::migrate(&plan, &mut |_| {}).unwrap();
        for document in ["meta", "attrs"] {
            assert_eq!(
                String::from_utf8(std::fs::read(migrated.join(name).join(document)).unwrap())
                    .unwrap(),
                String::from_utf8(std::fs::read(written.join(name).join(document)).unwrap())
                    .unwrap(),
                "{name}/{document}"
            );
        }

        // Written anew by zarrkit: the first half of the first dimension.
        let metadata = source.metadata();
        let array = Array::builder(
            source.shape(),
            source.data_type().clone(),
            source.chunk_shape(),
        )
        .format(ZarrFormat::V1)
        .codecs_metadata(metadata.codecs.clone())
        .fill_value_bytes(source.fill_value().clone())
        .attributes(source.attributes().clone())
        .create(fs_store(&built.join(name)), "/")
        .unwrap();
        let mut start = vec![0; source.ndim()];
        let mut shape = source.shape().to_vec();
        shape[0] /= 2;
        start[0] = 0;
        let half = Region::new(start, shape);
        array
            .write_region_bytes(&half, &source.read_region_bytes(&half).unwrap())
            .unwrap();
    }
    for d in [&migrated, &built] {
        std::fs::write(d.join("manifest.json"), &manifest_bytes).unwrap();
        let read = v1_interop(&zarr1, "zarr1-read", d);
        assert_eq!(read.lines().count(), manifest.len(), "{read}");
        let read = v1_interop(&zarr2, "zarr2-read", d);
        assert_eq!(
            read.matches("after migrate_1to2").count(),
            manifest.len(),
            "{read}"
        );
    }
}
