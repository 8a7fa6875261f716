//! The v3 drafts (2019 early, 19 June 2019, zarr-python 2.x's json-suffixed
//! layout, 25 May 2022): writing and reading back on both stores, the key
//! layouts, format detection, implicit groups, node name rules, and bad
//! input in each format.

use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use zarrkit::format::{self, ZarrFormat};
use zarrkit::metadata::{ChunkKeyEncoding, DataType, ExtensionObject, JsonMap, Separator};
use zarrkit::store::{
    ByteRange, FilesystemStore, ListDir, MemoryStore, ReadRequest, Store, StoreCapabilities,
    StoreError, StoreKey, StorePrefix,
};
use zarrkit::{Array, Error, Group, Node, NodeKind, Region};

const DRAFTS: [ZarrFormat; 4] = [
    ZarrFormat::V3Draft2022,
    ZarrFormat::V3Draft2019Json,
    ZarrFormat::V3Draft2019,
    ZarrFormat::V3Draft2019a,
];

/// A change to a document, for bad-input tables.
type Edit = Box<dyn Fn(&mut Value)>;

fn key(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

fn stores(dir: &Path) -> Vec<(&'static str, Arc<dyn Store>)> {
    vec![
        ("memory", Arc::new(MemoryStore::new())),
        ("filesystem", Arc::new(FilesystemStore::new(dir).unwrap())),
    ]
}

fn attrs(value: Value) -> JsonMap {
    value.as_object().unwrap().clone()
}

fn codec(name: &str, configuration: Value) -> ExtensionObject {
    ExtensionObject::with_configuration(name, attrs(configuration))
}

/// Where each format puts the document of array `/x` and its chunk (0, 1)
/// when written with the builder's default key encoding (separator `/`).
fn expected_keys(format: ZarrFormat) -> (&'static str, &'static str) {
    match format {
        // 2022 draft, "Storage keys" tables.
        ZarrFormat::V3Draft2022 => ("meta/x.array.json", "data/x/c0/1"),
        // zarr-python 2.18: `meta/root/...json`, chunks under `data/root/`.
        ZarrFormat::V3Draft2019Json => ("meta/root/x.array.json", "data/root/x/c0/1"),
        // June 2019 draft, "Storage keys": `meta/root/foo/baz.array`, `data/foo/baz/0.0`.
        _ => ("meta/root/x.array", "data/x/0/1"),
    }
}

#[test]
fn every_draft_round_trips_every_element_on_both_stores() {
    for format in DRAFTS {
        let dir = tempfile::tempdir().unwrap();
        for (backend, store) in stores(dir.path()) {
            let context = format!("{format} on the {backend} store");
            Group::create_as(
                Arc::clone(&store),
                "/",
                format,
                attrs(json!({"title": "drafts", "n": [1, 2]})),
            )
            .unwrap();

            // The 2019 drafts join indices as v2 does; the model says so.
            let encoding = match format {
                ZarrFormat::V3Draft2019 | ZarrFormat::V3Draft2019a => ChunkKeyEncoding::V2 {
                    separator: Separator::Slash,
                },
                _ => ChunkKeyEncoding::default(),
            };
            // int32 with a fill value and the format's default codecs.
            let ints = Array::builder(&[7, 9], DataType::Int32, &[3, 4])
                .chunk_key_encoding(encoding.clone())
                .fill_value(-5i32)
                .attributes(attrs(json!({"units": "m"})))
                .format(format)
                .create(Arc::clone(&store), "/x")
                .unwrap();
            let values: Vec<i32> = (0..63).map(|i| i * 1000 - 31_000).collect();
            ints.write_region(&Region::whole(&[7, 9]), &values).unwrap();

            // float64, F order, big endian, gzip, under an implicit group.
            let f_order = Array::builder(&[5, 6, 4], DataType::Float64, &[2, 4, 3])
                .fill_value(f64::NAN)
                .chunk_key_encoding(encoding.clone())
                .codecs_metadata(vec![
                    codec("transpose", json!({"order": [2, 1, 0]})),
                    codec("bytes", json!({"endian": "big"})),
                    codec("gzip", json!({"level": 1})),
                ])
                .format(format)
                .create(Arc::clone(&store), "/a/b/f64")
                .unwrap();
            let floats: Vec<f64> = (0..120).map(|i| f64::from(i) * 0.25 - 7.0).collect();
            // Leave the last chunk row unwritten: it reads as NaN.
            f_order
                .write_region(&Region::from_ranges(&[0..4, 0..6, 0..4]), &floats[..96])
                .unwrap();

            // 0-d uint16 with blosc.
            let scalar = Array::builder(&[], DataType::UInt16, &[])
                .codecs_metadata(vec![
                    codec("bytes", json!({"endian": "little"})),
                    codec(
                        "blosc",
                        json!({"cname": "zstd", "clevel": 3, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}),
                    ),
                ])
                .format(format)
                .create(Arc::clone(&store), "/scalar")
                .unwrap();
            scalar
                .write_region(&Region::whole(&[]), &[54321u16])
                .unwrap();

            // Reopen everything, finding the format.
            let root = Group::open(Arc::clone(&store), "/").unwrap();
            assert_eq!(root.format(), format, "{context}");
            assert_eq!(root.attributes()["title"], json!("drafts"), "{context}");
            let names: Vec<String> = root
                .children()
                .unwrap()
                .iter()
                .map(|n| n.path().to_string())
                .collect();
            assert_eq!(names, ["/a", "/scalar", "/x"], "{context}");

            let x = Array::open(Arc::clone(&store), "/x").unwrap();
            assert_eq!(x.format(), format, "{context}");
            assert_eq!(x.metadata(), ints.metadata(), "{context}");
            assert_eq!(
                x.read_region::<i32>(&Region::whole(&[7, 9])).unwrap(),
                values,
                "{context}"
            );
            assert_eq!(x.attributes()["units"], json!("m"), "{context}");

            let f = Array::open(Arc::clone(&store), "/a/b/f64").unwrap();
            assert_eq!(f.metadata(), f_order.metadata(), "{context}");
            let read = f.read_region::<f64>(&Region::whole(&[5, 6, 4])).unwrap();
            assert_eq!(read[..96], floats[..96], "{context}");
            assert!(read[96..].iter().all(|v| v.is_nan()), "{context}");

            let s = Array::open(Arc::clone(&store), "/scalar").unwrap();
            assert_eq!(
                s.read_region::<u16>(&Region::whole(&[])).unwrap(),
                [54321],
                "{context}"
            );

            // /a exists only because /a/b/f64 does.
            let Node::Group(a) = Node::open(Arc::clone(&store), "/a").unwrap() else {
                panic!("{context}: /a is not a group");
            };
            assert_eq!(a.format(), format, "{context}");
            assert!(a.attributes().is_empty(), "{context}");
            assert_eq!(a.walk().unwrap().len(), 2, "{context}");

            let (doc, chunk) = expected_keys(format);
            assert!(
                store.get(&key(doc), None).unwrap().is_some(),
                "{context}: {doc}"
            );
            assert!(
                store.get(&key(chunk), None).unwrap().is_some(),
                "{context}: {chunk}"
            );
            assert_eq!(x.chunk_key(&[0, 1]).unwrap().as_str(), chunk, "{context}");
        }
    }
}

#[test]
fn zero_dimensional_chunk_keys_follow_each_draft() {
    for (format, expected) in [
        // 2022 draft, "Regular grids": "the chunk key will consist of the string c".
        (ZarrFormat::V3Draft2022, "data/s/c"),
        // zarr-python 2.18 writes `c0`.
        (ZarrFormat::V3Draft2019Json, "data/root/s/c0"),
        (ZarrFormat::V3Draft2019, "data/s/0"),
    ] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let array = Array::builder(&[], DataType::Int8, &[])
            .format(format)
            .create(Arc::clone(&store), "/s")
            .unwrap();
        array.write_region(&Region::whole(&[]), &[3i8]).unwrap();
        assert!(
            store.get(&key(expected), None).unwrap().is_some(),
            "{format}"
        );
    }
}

#[test]
fn june_2019_keys_use_the_grid_separator_and_a_root_array_its_own_prefix() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::builder(&[4, 4], DataType::UInt8, &[2, 2])
        .chunk_key_encoding(ChunkKeyEncoding::V2 {
            separator: Separator::Dot,
        })
        .format(ZarrFormat::V3Draft2019)
        .create(Arc::clone(&store), "/")
        .unwrap();
    array
        .write_region(&Region::whole(&[4, 4]), &[9u8; 16])
        .unwrap();
    // "If the root node is an array, the metadata key is meta/root.array,
    // and the data keys are formed by concatenating data/ and the chunk
    // identifier."
    assert!(store.get(&key("meta/root.array"), None).unwrap().is_some());
    assert!(store.get(&key("data/1.0"), None).unwrap().is_some());
    let doc: Value =
        serde_json::from_slice(&store.get(&key("meta/root.array"), None).unwrap().unwrap())
            .unwrap();
    assert_eq!(doc["chunk_grid"]["separator"], json!("."));
    assert_eq!(
        doc["compressor"]["codec"],
        json!("https://purl.org/zarr/spec/codec/zstd/1.0")
    );
    let entry: Value =
        serde_json::from_slice(&store.get(&key("zarr.json"), None).unwrap().unwrap()).unwrap();
    assert_eq!(entry["metadata_encoding"], json!("application/json"));
}

#[test]
fn the_fixture_hierarchies_list_explicit_and_implicit_children() {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fixtures");
    for (dir, format, expected) in [
        (
            "v3-draft-2019-json/zarr-python-2.18.zarr",
            ZarrFormat::V3Draft2019Json,
            vec![
                "/bool_dot_separator",
                "/complex64_gzip",
                "/float32_zstd_f_order",
                "/float64_big_endian_raw",
                "/int16_gzip",
                "/int64_scalar",
                "/nested",
                "/sub",
                "/uint16_blosc_bitshuffle",
            ],
        ),
        (
            "v3-draft-2022/spec-text.zarr",
            ZarrFormat::V3Draft2022,
            vec![
                "/bool_scalar",
                "/complex128_bit_string_parts_fill",
                "/complex128_gzip",
                "/complex64_real_fill",
                "/float16_binary_fill",
                "/float32_plus_infinity_fill",
                "/float64_big_binary_fill",
                "/implicit",
                "/int32_gzip",
                "/int8_binary_fill",
                "/sharded",
                "/sub",
            ],
        ),
        (
            "v3-draft-2019/spec-text.zarr",
            ZarrFormat::V3Draft2019,
            vec![
                "/a",
                "/complex64_real_fill",
                "/float32_f_blosc",
                "/uint8_raw",
            ],
        ),
        (
            "v3-draft-2019a/spec-text.zarr",
            ZarrFormat::V3Draft2019a,
            vec![
                "/complex128_big_real_fill",
                "/complex64_gzip",
                "/float16_no_codecs",
                "/g",
            ],
        ),
    ] {
        let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(testdata.join(dir)).unwrap());
        let root = Group::open(Arc::clone(&store), "/").unwrap();
        assert_eq!(root.format(), format, "{dir}");
        let children: Vec<String> = root
            .children()
            .unwrap()
            .iter()
            .map(|c| c.path().to_string())
            .collect();
        assert_eq!(children, expected, "{dir}");
    }
    let store: Arc<dyn Store> = Arc::new(
        FilesystemStore::new(testdata.join("v3-draft-2019-json/zarr-python-2.18.zarr")).unwrap(),
    );
    let sub = Group::open(Arc::clone(&store), "/sub").unwrap();
    assert_eq!(sub.attributes()["kind"], json!("explicit group"));
    let root = Group::open(store, "/").unwrap();
    assert_eq!(root.attributes()["numbers"], json!([1, 2, 3]));
}

#[test]
fn early_draft_documents_are_read_under_a_june_bootstrap() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let document = json!({
        "zarr_format": "http://purl.org/zarr/spec/protocol/core/3.0",
        "shape": [2], "data_type": "<i2",
        "chunk_grid": {"type": "regular", "chunk_shape": [2]},
        "chunk_memory_layout": "C", "chunk_codecs": [], "fill_value": 7,
        "extensions": [], "attributes": {}
    });
    store
        .set(&key("meta/root/g/v.array"), document.to_string().as_bytes())
        .unwrap();
    // No bootstrap document: not a hierarchy zarrkit probes.
    assert!(matches!(
        Node::open(Arc::clone(&store), "/g/v"),
        Err(Error::NodeNotFound { .. })
    ));
    // Under the June bootstrap, the early draft's documents say what they are.
    store
        .set(
            &key("zarr.json"),
            json!({
                "zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0",
                "metadata_encoding": "application/json",
                "extensions": []
            })
            .to_string()
            .as_bytes(),
        )
        .unwrap();
    let array = Array::open(Arc::clone(&store), "/g/v").unwrap();
    assert_eq!(array.format(), ZarrFormat::V3Draft2019a);
    assert_eq!(
        array.read_region::<i16>(&Region::whole(&[2])).unwrap(),
        [7, 7]
    );
    // An implicit group follows the bootstrap.
    let root = Group::open(store, "/").unwrap();
    assert_eq!(root.format(), ZarrFormat::V3Draft2019);
    assert_eq!(root.children().unwrap()[0].path().as_str(), "/g");
}

/// A store with array `/x` (2 chunks, one garbled later) in `format`, and
/// the key of its document.
fn small_store(format: ZarrFormat) -> (Arc<dyn Store>, StoreKey) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::builder(&[4], DataType::Int16, &[2])
        .format(format)
        .create(Arc::clone(&store), "/x")
        .unwrap();
    array
        .write_region(&Region::whole(&[4]), &[1i16, 2, 3, 4])
        .unwrap();
    (store, key(expected_keys(format).0))
}

fn edit(store: &Arc<dyn Store>, key: &StoreKey, change: impl FnOnce(&mut Value)) {
    let mut doc: Value = serde_json::from_slice(&store.get(key, None).unwrap().unwrap()).unwrap();
    change(&mut doc);
    store.set(key, doc.to_string().as_bytes()).unwrap();
}

fn open_error(store: &Arc<dyn Store>) -> String {
    format!(
        "{:#}",
        anyhow_like(Array::open(Arc::clone(store), "/x").unwrap_err())
    )
}

/// The error and its sources, as `error: {err:#}` prints them.
fn anyhow_like(err: Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[test]
fn bad_documents_fail_naming_the_key_and_the_field_in_every_draft() {
    for format in DRAFTS {
        let unknown_codec = if format == ZarrFormat::V3Draft2022 {
            json!([{"type": "https://purl.org/zarr/spec/codecs/snappy/1.0", "configuration": {}}])
        } else {
            json!({"codec": "https://purl.org/zarr/spec/codec/snappy/1.0", "configuration": {}})
        };
        let codec_field = match format {
            ZarrFormat::V3Draft2022 => "codecs",
            ZarrFormat::V3Draft2019a => "chunk_codecs",
            _ => "compressor",
        };
        let unknown_codec = if format == ZarrFormat::V3Draft2019a {
            json!([{"codec": "https://purl.org/zarr/spec/codec/snappy/1.0"}])
        } else {
            unknown_codec
        };
        let cases: Vec<(Edit, &str)> = vec![
            (
                Box::new(|d| {
                    d.as_object_mut().unwrap().remove("shape");
                }),
                "missing required field `shape`",
            ),
            (
                Box::new(|d| {
                    d.as_object_mut().unwrap().remove("chunk_grid");
                }),
                "missing required field `chunk_grid`",
            ),
            (
                Box::new(|d| d["chunk_memory_layout"] = json!(5)),
                "field `chunk_memory_layout` is invalid",
            ),
            (
                Box::new(|d| d["shape"] = json!(["4"])),
                "field `shape` is invalid",
            ),
            (
                Box::new(
                    |d| d["extensions"] = json!([{"extension": "https://example.org/ext/must", "must_understand": true}]),
                ),
                "unsupported extension `https://example.org/ext/must`",
            ),
            (
                Box::new(move |d| d[codec_field] = unknown_codec.clone()),
                "unsupported codec `https://purl.org/zarr/spec/codec",
            ),
            (
                Box::new(|d| d["no_such_field"] = json!(1)),
                "unknown field `no_such_field`",
            ),
        ];
        for (change, needle) in cases {
            let (store, doc_key) = small_store(format);
            edit(&store, &doc_key, change);
            let message = open_error(&store);
            assert!(
                message.contains(&format!("`{}`", doc_key.as_str())),
                "{format}: {message}"
            );
            assert!(
                message.contains(needle),
                "{format}: {message} (wanted {needle})"
            );
        }
    }
}

#[test]
fn entry_point_extensions_that_must_be_understood_stop_every_draft() {
    for format in DRAFTS {
        let (store, _) = small_store(format);
        edit(&store, &key("zarr.json"), |d| {
            d["extensions"] =
                json!([{"extension": "https://example.org/ext/layout", "must_understand": true}]);
        });
        let message = open_error(&store);
        assert!(message.contains("`zarr.json`"), "{format}: {message}");
        assert!(
            message.contains("`https://example.org/ext/layout`"),
            "{format}: {message}"
        );
        // One that need not be understood is ignored.
        edit(&store, &key("zarr.json"), |d| {
            d["extensions"][0]["must_understand"] = json!(false);
        });
        let array = Array::open(Arc::clone(&store), "/x").unwrap();
        assert_eq!(
            array.read_region::<i16>(&Region::whole(&[4])).unwrap(),
            [1, 2, 3, 4],
            "{format}"
        );
    }
}

#[test]
fn a_chunk_that_does_not_decode_is_named_in_every_draft() {
    for format in DRAFTS {
        let (store, _) = small_store(format);
        let array = Array::open(Arc::clone(&store), "/x").unwrap();
        let chunk = array.chunk_key(&[1]).unwrap();
        store.set(&chunk, b"not a compressed chunk").unwrap();
        let err = array.read_region::<i16>(&Region::whole(&[4])).unwrap_err();
        assert!(
            err.to_string().contains(&format!("`{}`", chunk.as_str())),
            "{format}: {err}"
        );
    }
}

#[test]
fn node_names_follow_each_drafts_rules() {
    for format in DRAFTS {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let err = Group::create_as(Arc::clone(&store), "/a b", format, JsonMap::new()).unwrap_err();
        assert!(err.to_string().contains("`a-z`"), "{format}: {err}");
        Group::create_as(Arc::clone(&store), "/Foo", format, JsonMap::new()).unwrap();
        let long = format!("/{}", "n".repeat(256));
        let same_but_case = Group::create_as(Arc::clone(&store), "/foo", format, JsonMap::new());
        let too_long = Group::create_as(Arc::clone(&store), &long, format, JsonMap::new());
        if format == ZarrFormat::V3Draft2022 {
            // 2022 draft: names are case sensitive, and the 255-character
            // limit was removed (change log, PR #175).
            same_but_case.unwrap();
            too_long.unwrap();
        } else {
            // 2019 drafts, "Node names".
            let err = same_but_case.unwrap_err();
            assert!(
                err.to_string().contains("differs only in case"),
                "{format}: {err}"
            );
            let err = too_long.unwrap_err();
            assert!(err.to_string().contains("255"), "{format}: {err}");
        }
    }
}

#[test]
fn what_a_draft_cannot_say_is_refused_before_anything_is_written() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let err = Array::builder(&[4], DataType::UInt8, &[2])
        .codecs_metadata(vec![
            codec("bytes", json!({})),
            ExtensionObject::new("crc32c"),
        ])
        .format(ZarrFormat::V3Draft2022)
        .create(Arc::clone(&store), "/x")
        .unwrap_err();
    assert!(anyhow_like(err).contains("`crc32c`"));
    let err = Array::builder(&[4], DataType::RawBits(24), &[2])
        .format(ZarrFormat::V3Draft2019)
        .create(Arc::clone(&store), "/x")
        .unwrap_err();
    assert!(anyhow_like(err).contains("`r24`"));
    assert!(
        store
            .list_prefix(&zarrkit::store::StorePrefix::root())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn drafts_do_not_mix_with_other_formats_in_one_store() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Group::create(Arc::clone(&store), "/", JsonMap::new()).unwrap();
    let err = Group::create_as(
        Arc::clone(&store),
        "/g",
        ZarrFormat::V3Draft2022,
        JsonMap::new(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("`zarr.json`"), "{err}");
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Group::create_as(
        Arc::clone(&store),
        "/",
        ZarrFormat::V3Draft2019,
        JsonMap::new(),
    )
    .unwrap();
    let err = Group::create_as(
        Arc::clone(&store),
        "/g",
        ZarrFormat::V3Draft2019Json,
        JsonMap::new(),
    )
    .unwrap_err();
    assert!(anyhow_like(err).contains("metadata_key_suffix"));
    // The root of a draft store is not a v3 node, so final v3 finds nothing there.
    assert!(
        format::read_node_as(store.as_ref(), &zarrkit::NodePath::root(), ZarrFormat::V3)
            .unwrap()
            .is_none()
    );
}

#[test]
fn the_metadata_key_suffix_of_the_2022_entry_point_is_honoured() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    store
        .set(
            &key("zarr.json"),
            json!({
                "zarr_format": "https://purl.org/zarr/spec/core/3.0",
                "metadata_encoding": {"type": "json", "metadata_key_suffix": ".meta"},
                "extensions": []
            })
            .to_string()
            .as_bytes(),
        )
        .unwrap();
    Group::create_as(
        Arc::clone(&store),
        "/g",
        ZarrFormat::V3Draft2022,
        attrs(json!({"a": 1})),
    )
    .unwrap();
    assert!(
        store
            .get(&key("meta/g.group.meta"), None)
            .unwrap()
            .is_some()
    );
    let node = Node::open(store, "/g").unwrap();
    assert_eq!(node.kind(), NodeKind::Group);
    assert_eq!(node.attributes()["a"], json!(1));
}

#[test]
fn numcodecs_compressors_round_trip_through_the_2019_layouts_under_their_uris() {
    for (name, configuration) in [
        ("numcodecs.zlib", json!({"level": 3})),
        ("numcodecs.bz2", json!({"level": 5})),
        ("numcodecs.lz4", json!({"acceleration": 1})),
    ] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let array = Array::builder(&[5, 4], DataType::Int32, &[2, 3])
            .format(ZarrFormat::V3Draft2019Json)
            .codecs_metadata(vec![
                codec("bytes", json!({"endian": "little"})),
                codec(name, configuration.clone()),
            ])
            .create(store.clone(), "/n")
            .unwrap();
        let data: Vec<i32> = (0..20).map(|i| i * 37 - 300).collect();
        array.write_region(&Region::whole(&[5, 4]), &data).unwrap();
        let document: Value = serde_json::from_slice(
            &store
                .get(&key("meta/root/n.array.json"), None)
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        let short = name.trim_start_matches("numcodecs.");
        assert_eq!(
            document["compressor"]["codec"],
            json!(format!("https://purl.org/zarr/spec/codec/{short}/1.0")),
            "{name}"
        );
        let reopened = Array::open(store, "/n").unwrap();
        assert_eq!(reopened.metadata().codecs[1].name, name);
        assert_eq!(
            reopened
                .read_region::<i32>(&Region::whole(&[5, 4]))
                .unwrap(),
            data,
            "{name}"
        );
    }
}

// ---------------------------------------------------------------------------
// The sharding storage transformer, zarr-python 2.x filters, datetimes and
// consolidated metadata.
// ---------------------------------------------------------------------------

/// Records every read of the store: the key and the byte range.
#[derive(Debug)]
struct RecordingStore {
    inner: Arc<dyn Store>,
    reads: std::sync::Mutex<Vec<(String, Option<ByteRange>)>>,
}

impl RecordingStore {
    fn new(inner: Arc<dyn Store>) -> Arc<Self> {
        Arc::new(Self {
            inner,
            reads: std::sync::Mutex::new(Vec::new()),
        })
    }
    fn take(&self) -> Vec<(String, Option<ByteRange>)> {
        std::mem::take(&mut *self.reads.lock().unwrap())
    }
}

impl Store for RecordingStore {
    fn name(&self) -> &'static str {
        "recording store"
    }
    fn capabilities(&self) -> StoreCapabilities {
        self.inner.capabilities()
    }
    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        self.reads
            .lock()
            .unwrap()
            .push((key.as_str().to_string(), range));
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
    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
        self.inner.list_prefix(prefix)
    }
    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        self.inner.list_dir(prefix)
    }
}

fn fixture(relative: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/fixtures")
        .join(relative)
}

/// A copy of a fixture directory in memory, so tests may change it.
fn memory_fixture(relative: &str) -> Arc<dyn Store> {
    let root = fixture(relative);
    let source = FilesystemStore::new(&root).unwrap();
    let store = MemoryStore::new();
    for key in source.list().unwrap() {
        store
            .set(&key, &source.get(&key, None).unwrap().unwrap())
            .unwrap();
    }
    Arc::new(store)
}

/// testdata/generate/draft_common.py `pattern` for integer types.
fn int_pattern(i: u64) -> i64 {
    ((i * 2_654_435_761) % 251) as i64
}

/// The v3 sharding codec the draft transformer maps onto.
fn draft_sharding(inner: &[u64], codecs: Value, checksum: bool) -> ExtensionObject {
    let mut index = vec![json!({"name": "bytes", "configuration": {"endian": "little"}})];
    if checksum {
        index.push(json!({"name": "crc32c"}));
    }
    codec(
        "sharding_indexed",
        json!({"chunk_shape": inner, "codecs": codecs, "index_codecs": index, "index_location": "end"}),
    )
}

#[test]
fn zarr_python_sharded_arrays_read_part_of_a_shard_by_ranges() {
    let store = RecordingStore::new(Arc::new(
        FilesystemStore::new(fixture("v3-draft-2019-json/zarr-python-2.18-ext.zarr")).unwrap(),
    ));
    let array = Array::open(store.clone(), "/sharded/int32_gzip").unwrap();
    // Sharding v1.0: 2x2 chunks, 2x3 of them to a shard.
    assert_eq!(array.chunk_shape(), [4, 6]);
    assert_eq!(array.metadata().codecs[0].name, "sharding_indexed");
    assert_eq!(
        array.chunk_key(&[1, 2]).unwrap().as_str(),
        "data/root/sharded/int32_gzip/c1/2"
    );
    store.take();
    // One inner chunk of shard (1, 1): rows 4..6, columns 6..8, never written.
    let unwritten: Vec<i32> = array
        .read_region(&Region::from_ranges(&[4..6, 6..8]))
        .unwrap();
    assert_eq!(unwritten, [3, 3, 3, 3]);
    // Inner chunk (2, 0) of shard (1, 0): written.
    let written: Vec<i32> = array
        .read_region(&Region::from_ranges(&[4..6, 0..2]))
        .unwrap();
    let expected: Vec<i32> = [(4, 0), (4, 1), (5, 0), (5, 1)]
        .iter()
        .map(|&(r, c)| int_pattern(r * 13 + c) as i32)
        .collect();
    assert_eq!(written, expected);
    // Every read was ranged: the index (16 bytes × 6 chunks at the end), then
    // the one stored inner chunk; never a whole shard.
    let reads = store.take();
    assert!(!reads.is_empty());
    for (key, range) in &reads {
        assert!(
            range.is_some(),
            "`{key}` was read whole, not by range: {reads:?}"
        );
    }
    assert!(
        reads
            .iter()
            .any(|(k, r)| k.ends_with("c1/0") && *r == Some(ByteRange::Suffix(96))),
        "{reads:?}"
    );
    // The whole array: the third shard row was never written.
    let all: Vec<i32> = array.read_region(&Region::whole(&[9, 13])).unwrap();
    for r in 0..9u64 {
        for c in 0..13u64 {
            let stored = r < 4 || (r < 6 && c < 2);
            let want = if stored {
                int_pattern(r * 13 + c) as i32
            } else {
                3
            };
            assert_eq!(all[(r * 13 + c) as usize], want, "({r}, {c})");
        }
    }
}

#[test]
fn sharded_draft_arrays_round_trip_with_the_storage_transformer() {
    for (format, uri, shard_key) in [
        (
            ZarrFormat::V3Draft2022,
            "https://purl.org/zarr/spec/extensions/storage-transformers/sharding/1.0",
            "data/s/c1/0",
        ),
        (
            ZarrFormat::V3Draft2019Json,
            "https://purl.org/zarr/spec/storage_transformers/sharding/1.0",
            "data/root/s/c1/0",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        for (backend, store) in stores(dir.path()) {
            let context = format!("{format} on the {backend} store");
            let inner_codecs = json!([
                {"name": "bytes", "configuration": {"endian": "big"}},
                {"name": "gzip", "configuration": {"level": 1}}
            ]);
            let array = Array::builder(&[7, 5], DataType::Int16, &[4, 4])
                .codecs_metadata(vec![draft_sharding(&[2, 2], inner_codecs, false)])
                .fill_value(-1i16)
                .format(format)
                .create(Arc::clone(&store), "/s")
                .unwrap();
            let values: Vec<i16> = (0..35).map(|i| i * 3 - 50).collect();
            // Leave out the last row: its inner chunks stay unwritten.
            array
                .write_region(&Region::from_ranges(&[0..6, 0..5]), &values[..30])
                .unwrap();
            let (doc_key, _) = expected_keys(format);
            let doc_key = doc_key.replace("/x.", "/s.");
            let doc: Value =
                serde_json::from_slice(&store.get(&key(&doc_key), None).unwrap().unwrap()).unwrap();
            assert_eq!(doc["chunk_grid"]["chunk_shape"], json!([2, 2]), "{context}");
            assert_eq!(
                doc["storage_transformers"],
                json!([{"extension": uri, "type": "indexed",
                        "configuration": {"chunks_per_shard": [2, 2]}}]),
                "{context}"
            );
            // The shard of chunk rows 2..4, columns 0..2: chunks (2,0) and
            // (2,1) stored, (3,0) and (3,1) (array row 6) empty: both
            // `2^64 - 1` ("Binary shard format").
            let shard = store.get(&key(shard_key), None).unwrap().unwrap();
            let index: Vec<u64> = shard[shard.len() - 64..]
                .chunks(8)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
                .collect();
            assert_eq!(index[4..], [u64::MAX; 4], "{context}");
            for i in 0..2 {
                let (offset, length) = (index[2 * i], index[2 * i + 1]);
                assert!(
                    offset + length <= (shard.len() - 64) as u64,
                    "{context}: {index:?}"
                );
            }
            let reopened = Array::open(Arc::clone(&store), "/s").unwrap();
            assert_eq!(reopened.metadata(), array.metadata(), "{context}");
            let read: Vec<i16> = reopened.read_region(&Region::whole(&[7, 5])).unwrap();
            assert_eq!(read[..30], values[..30], "{context}");
            assert_eq!(read[30..], [-1; 5], "{context}");
        }
    }
}

#[test]
fn sharding_the_drafts_cannot_say_is_refused_before_writing() {
    let bytes = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
    for (format, sharding, needle) in [
        // A crc32c index: the transformer's index has no checksum.
        (
            ZarrFormat::V3Draft2022,
            draft_sharding(&[2, 2], bytes.clone(), true),
            "checksum",
        ),
        (
            ZarrFormat::V3Draft2019Json,
            draft_sharding(&[2, 2], bytes.clone(), true),
            "checksum",
        ),
        // The June 2019 draft has no storage transformers.
        (
            ZarrFormat::V3Draft2019,
            draft_sharding(&[2, 2], bytes.clone(), false),
            "sharding_indexed",
        ),
    ] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let err = Array::builder(&[8, 8], DataType::UInt8, &[4, 4])
            .codecs_metadata(vec![sharding])
            .format(format)
            .create(Arc::clone(&store), "/s")
            .unwrap_err();
        assert!(anyhow_like(err).contains(needle), "{format}");
        assert!(store.list().unwrap().is_empty(), "{format}");
    }
}

#[test]
fn a_shard_whose_index_or_chunk_does_not_decode_is_named() {
    let store = memory_fixture("v3-draft-2022/spec-text.zarr");
    let array = Array::open(Arc::clone(&store), "/sharded/int32_gzip").unwrap();
    let shard = key("data/sharded/int32_gzip/c0/0");
    let mut bytes = store.get(&shard, None).unwrap().unwrap();
    // Chunk (0, 0)'s offset now points past the end of the shard.
    let at = bytes.len() - 96;
    bytes[at..at + 8].copy_from_slice(&u64::MAX.wrapping_sub(5).to_le_bytes());
    store.set(&shard, &bytes).unwrap();
    let err = array
        .read_region::<i32>(&Region::from_ranges(&[0..2, 0..2]))
        .unwrap_err();
    assert!(
        anyhow_like(err).contains("`data/sharded/int32_gzip/c0/0`"),
        "the shard key is named"
    );
    // A stored inner chunk that is not gzip.
    let mut bytes = store.get(&shard, None).unwrap().unwrap();
    bytes[..4].copy_from_slice(b"junk");
    let at = bytes.len() - 96;
    bytes[at..at + 8].copy_from_slice(&0u64.to_le_bytes());
    store.set(&shard, &bytes).unwrap();
    let err = array
        .read_region::<i32>(&Region::from_ranges(&[0..2, 0..2]))
        .unwrap_err();
    assert!(anyhow_like(err).contains("`data/sharded/int32_gzip/c0/0`"));
}

#[test]
fn zarr_python_filters_and_datetimes_round_trip_as_it_writes_them() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let format = ZarrFormat::V3Draft2019Json;
    let delta = Array::builder(&[10], DataType::Int32, &[4])
        .codecs_metadata(vec![
            codec("numcodecs.delta", json!({"dtype": "<i4"})),
            codec("bytes", json!({"endian": "little"})),
            codec("numcodecs.zlib", json!({"level": 1})),
        ])
        .format(format)
        .create(Arc::clone(&store), "/delta")
        .unwrap();
    let values: Vec<i32> = (0..10).map(|i| i * i - 7).collect();
    delta.write_region(&Region::whole(&[10]), &values).unwrap();
    let doc: Value = serde_json::from_slice(
        &store
            .get(&key("meta/root/delta.array.json"), None)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    // zarr-python 2.x keeps filters among the attributes.
    assert_eq!(
        doc["attributes"]["filters"],
        json!([{"id": "delta", "dtype": "<i4", "astype": "<i4"}])
    );
    assert_eq!(
        doc["compressor"],
        json!({"codec": "https://purl.org/zarr/spec/codec/zlib/1.0", "configuration": {"level": 1}})
    );
    let reopened = Array::open(Arc::clone(&store), "/delta").unwrap();
    assert!(reopened.attributes().is_empty());
    assert_eq!(
        reopened.read_region::<i32>(&Region::whole(&[10])).unwrap(),
        values
    );
    let time = Array::builder(
        &[3],
        DataType::NumpyTimeDelta64 {
            unit: zarrkit::metadata::TimeUnit::Second,
            scale_factor: 1,
        },
        &[2],
    )
    .codecs_metadata(vec![codec("bytes", json!({"endian": "big"}))])
    .fill_value(5i64)
    .format(format)
    .create(Arc::clone(&store), "/time")
    .unwrap();
    time.write_region(&Region::whole(&[3]), &[i64::MIN, 0, 86_400])
        .unwrap();
    let doc: Value = serde_json::from_slice(
        &store
            .get(&key("meta/root/time.array.json"), None)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        doc["data_type"],
        json!({"extension": "https://zarr-specs.readthedocs.io/en/latest/extensions/data-types/datetime/v1.0.html",
               "type": ">m8[s]", "fallback": null})
    );
    assert_eq!(doc["fill_value"], json!(5));
    assert_eq!(
        store.get(&key("data/root/time/c0"), None).unwrap().unwrap(),
        [i64::MIN.to_be_bytes(), 0i64.to_be_bytes()].concat()
    );
    let reopened = Array::open(Arc::clone(&store), "/time").unwrap();
    assert_eq!(reopened.metadata(), time.metadata());
    assert_eq!(
        reopened.read_region::<i64>(&Region::whole(&[3])).unwrap(),
        [i64::MIN, 0, 86_400]
    );
    // An attribute named `filters` would be taken for the filters.
    let err = Array::builder(&[2], DataType::UInt8, &[2])
        .attributes(attrs(json!({"filters": []})))
        .format(format)
        .create(Arc::clone(&store), "/clash")
        .unwrap_err();
    assert!(anyhow_like(err).contains("`filters`"));
}

#[test]
fn zarr_python_filters_that_are_unknown_or_malformed_are_named() {
    let store = memory_fixture("v3-draft-2019-json/zarr-python-2.18-ext.zarr");
    let doc_key = key("meta/root/filters/int32_delta_zlib.array.json");
    for (filters, needle) in [
        (json!([{"id": "snappy_filter"}]), "`snappy_filter`"),
        (json!([{"dtype": "<i4"}]), "`filters[].id`"),
        (
            json!([{"id": "delta", "dtype": "<i4", "level": 3}]),
            "`filters[0].level`",
        ),
        (json!("delta"), "`filters`"),
    ] {
        edit(&store, &doc_key, |d| {
            d["attributes"]["filters"] = filters.clone()
        });
        let err = Array::open(Arc::clone(&store), "/filters/int32_delta_zlib").unwrap_err();
        let message = anyhow_like(err);
        assert!(message.contains(doc_key.as_str()), "{message}");
        assert!(message.contains(needle), "{message} (wanted {needle})");
    }
}

#[test]
fn zarr_python_consolidated_metadata_is_read_checked_and_rewritten() {
    let store = memory_fixture("v3-draft-2019-json/zarr-python-2.18-ext.zarr");
    let consolidated = key("meta/root/consolidated/.zmetadata");
    let original: Value =
        serde_json::from_slice(&store.get(&consolidated, None).unwrap().unwrap()).unwrap();
    // What zarr-python 2.18 wrote agrees with the documents.
    assert_eq!(
        zarrkit::consolidate::check(store.as_ref(), "/").unwrap(),
        []
    );
    let counting = RecordingStore::new(Arc::clone(&store));
    let root = Group::open(counting.clone(), "/").unwrap();
    assert!(root.is_consolidated());
    assert!(root.warnings().is_empty(), "{:?}", root.warnings());
    counting.take();
    // Implicit groups (no document, so no entry) come from the paths below.
    let names: Vec<String> = root
        .children()
        .unwrap()
        .iter()
        .map(|n| n.path().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "/consolidated",
            "/datetime",
            "/filters",
            "/mixed",
            "/sharded",
            "/string_dtypes",
            "/strings"
        ]
    );
    let Node::Array(array) = root.node("sharded/int32_gzip").unwrap() else {
        panic!("an array");
    };
    assert_eq!(array.chunk_shape(), [4, 6]);
    // Issue #9 added two implicit groups and five arrays (`/mixed`,
    // `/string_dtypes`).
    assert_eq!(root.walk().unwrap().len(), 27);
    assert_eq!(
        counting.take(),
        [],
        "answered from the consolidated metadata"
    );

    // Rewritten by zarrkit: the same entries, which `check` accepts.
    store.erase(&consolidated).unwrap();
    assert!(
        !zarrkit::consolidate::check(store.as_ref(), "/")
            .unwrap()
            .is_empty()
    );
    let report = zarrkit::consolidate::consolidate(store.as_ref(), "/").unwrap();
    assert_eq!(report.key, consolidated);
    assert_eq!(report.entries, 23);
    let written: Value =
        serde_json::from_slice(&store.get(&consolidated, None).unwrap().unwrap()).unwrap();
    assert_eq!(written, original);

    // A stale entry is reported, and the group falls back to the documents.
    edit(
        &store,
        &key("meta/root/filters/int32_delta_zlib.array.json"),
        |d| d["attributes"]["note"] = json!("changed"),
    );
    let mismatches = zarrkit::consolidate::check(store.as_ref(), "/").unwrap();
    assert_eq!(mismatches.len(), 1);
    assert_eq!(
        mismatches[0].key,
        "meta/root/filters/int32_delta_zlib.array.json"
    );
}

#[test]
fn zarrkit_creates_consolidated_metadata_for_a_new_zarr_python_hierarchy() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let format = ZarrFormat::V3Draft2019Json;
    Group::create_as(Arc::clone(&store), "/", format, attrs(json!({"a": 1}))).unwrap();
    Array::builder(&[4], DataType::Float32, &[2])
        .format(format)
        .create(Arc::clone(&store), "/g/x")
        .unwrap();
    let report = zarrkit::consolidate::consolidate(store.as_ref(), "/").unwrap();
    // zarr.json, the root, the `consolidated` group and /g/x (/g is implicit).
    assert_eq!(report.entries, 4);
    assert!(
        store
            .get(&key("meta/root/consolidated.group.json"), None)
            .unwrap()
            .is_some()
    );
    let doc: Value = serde_json::from_slice(
        &store
            .get(&key("meta/root/consolidated/.zmetadata"), None)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(doc["zarr_consolidated_format"], json!(1));
    assert_eq!(
        doc["metadata"]["meta/root.group.json"],
        json!({"attributes": {"a": 1}})
    );
    assert_eq!(
        doc["metadata"]["zarr.json"]["metadata_key_suffix"],
        json!(".json")
    );
    let root = Group::open(Arc::clone(&store), "/").unwrap();
    assert!(root.is_consolidated());
    // Below the root, or in another draft, there is no consolidated metadata.
    assert!(zarrkit::consolidate::consolidate(store.as_ref(), "/g").is_err());
    let june: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Group::create_as(
        Arc::clone(&june),
        "/",
        ZarrFormat::V3Draft2019,
        JsonMap::new(),
    )
    .unwrap();
    assert!(zarrkit::consolidate::consolidate(june.as_ref(), "/").is_err());
}

#[test]
fn zarr_python_string_and_structured_types_read_and_write_as_it_writes_them() {
    let store = memory_fixture("v3-draft-2019-json/zarr-python-2.18-ext.zarr");
    let bytes = Array::open(Arc::clone(&store), "/strings/bytes4_gzip").unwrap();
    assert_eq!(bytes.data_type(), &DataType::FixedBytes(4));
    let read = bytes.read_byte_strings(&Region::whole(&[7])).unwrap();
    // Written: 0..4; the rest the fill value `ab` (base64 `YWI=`).
    assert_eq!(
        read,
        [&b"x"[..], b"yz", b"wxyz", b"", b"ab", b"ab", b"ab"].map(<[u8]>::to_vec)
    );
    let text = Array::open(Arc::clone(&store), "/strings/unicode3_big_f").unwrap();
    assert_eq!(text.data_type(), &DataType::FixedUtf32(12));
    assert_eq!(
        text.read_strings(&Region::whole(&[3, 4])).unwrap(),
        [
            "a", "bc", "d中", "", "éé", "x", "yy", "zzz", "hé", "hé", "hé", "hé"
        ]
    );
    let big = Array::open(Arc::clone(&store), "/strings/structured_big").unwrap();
    assert_eq!(
        big.read_field::<u32>(&Region::whole(&[4]), "id").unwrap(),
        [5, 6, 1, 1]
    );
    assert_eq!(
        big.read_field::<f64>(&Region::whole(&[4]), "v").unwrap(),
        [0.5, -2.0, 2.0, 2.0]
    );

    // Rewritten by zarrkit: the documents say what zarr-python's say.
    for path in [
        "/strings/bytes4_gzip",
        "/strings/unicode3_big_f",
        "/strings/structured_big",
        "/strings/structured_blosc",
        // Issue #9: fields in different byte orders.
        "/mixed/structured_mixed_order_zlib",
        "/mixed/structured_nested_mixed_order_f",
    ] {
        let array = Array::open(Arc::clone(&store), path).unwrap();
        let copy: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let written = Array::builder(
            array.shape(),
            array.data_type().clone(),
            array.chunk_shape(),
        )
        .chunk_key_encoding(array.metadata().chunk_key_encoding.clone())
        .codecs_metadata(array.metadata().codecs.clone())
        .fill_value_bytes(array.fill_value().clone())
        .format(ZarrFormat::V3Draft2019Json)
        .create(Arc::clone(&copy), path)
        .unwrap();
        let doc_key = key(&format!("meta/root{path}.array.json"));
        let theirs: Value =
            serde_json::from_slice(&store.get(&doc_key, None).unwrap().unwrap()).unwrap();
        let ours: Value =
            serde_json::from_slice(&copy.get(&doc_key, None).unwrap().unwrap()).unwrap();
        assert_eq!(ours["data_type"], theirs["data_type"], "{path}");
        if !theirs["fill_value"].is_null() {
            assert_eq!(ours["fill_value"], theirs["fill_value"], "{path}");
        }
        assert_eq!(
            Array::open(copy, path).unwrap().metadata(),
            written.metadata(),
            "{path}"
        );
    }
    // zarr-python's structured types may mix byte orders, and are read so
    // (issue #9; they were refused as "mixed byte order"): declaring the
    // big-endian `id` little-endian reads the same stored bytes with `id`
    // swapped and `tag` and `v` unchanged.
    let before = Array::open(Arc::clone(&store), "/strings/structured_big")
        .unwrap()
        .read_region_bytes(&Region::whole(&[4]))
        .unwrap();
    let doc_key = key("meta/root/strings/structured_big.array.json");
    edit(&store, &doc_key, |d| {
        d["data_type"]["type"] = json!([["id", "<u4"], ["tag", "|S2"], ["v", ">f8"]]);
    });
    let after = Array::open(Arc::clone(&store), "/strings/structured_big")
        .unwrap()
        .read_region_bytes(&Region::whole(&[4]))
        .unwrap();
    for (old, new) in before.chunks_exact(14).zip(after.chunks_exact(14)) {
        let id = |r: &[u8]| u32::from_ne_bytes(r[..4].try_into().unwrap());
        assert_eq!(id(new), id(old).swap_bytes());
        assert_eq!(new[4..], old[4..]);
    }
}

#[test]
fn an_unknown_extension_data_type_opens_through_its_fallback_only_when_allowed() {
    use zarrkit::format::draft_dtypes::DraftReadOptions;
    let store: Arc<dyn Store> =
        Arc::new(FilesystemStore::new(fixture("v3-draft-2022/fallback-dtype.zarr")).unwrap());
    // Refused by default, naming the extension and the fallbacks on offer.
    let message =
        anyhow_like(Array::open(Arc::clone(&store), "/unknown_with_fallback").unwrap_err());
    assert!(
        message.contains("`meta/unknown_with_fallback.array.json`"),
        "{message}"
    );
    assert!(
        message.contains("`https://example.org/zarr/data-types/angle/1.0`"),
        "{message}"
    );
    assert!(message.contains("`float8`, `int16`"), "{message}");
    let err = Array::open_draft(
        Arc::clone(&store),
        "/unknown_with_fallback",
        DraftReadOptions::default(),
    )
    .unwrap_err();
    assert!(anyhow_like(err).contains("fallback"));
    // Allowed: the first known fallback, `int16` (`float8` is not a type of
    // the draft).
    let array = Array::open_draft(
        Arc::clone(&store),
        "/unknown_with_fallback",
        DraftReadOptions::allowing_fallback(),
    )
    .unwrap();
    assert_eq!(array.data_type(), &DataType::Int16);
    let expected: Vec<i16> = (0..5).map(|i| int_pattern(i) as i16).collect();
    assert_eq!(
        array.read_region::<i16>(&Region::whole(&[5])).unwrap(),
        expected
    );
    assert!(matches!(
        Array::open_draft(store, "/", DraftReadOptions::allowing_fallback()),
        Err(Error::WrongNodeKind { .. })
    ));
}

#[test]
fn string_datetime_and_struct_extension_types_round_trip_in_the_drafts() {
    use zarrkit::metadata::{StructField, TimeUnit};
    for format in [
        ZarrFormat::V3Draft2022,
        ZarrFormat::V3Draft2019,
        ZarrFormat::V3Draft2019a,
    ] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let encoding = if format == ZarrFormat::V3Draft2022 {
            ChunkKeyEncoding::default()
        } else {
            ChunkKeyEncoding::V2 {
                separator: Separator::Dot,
            }
        };
        let text = Array::builder(&[2, 2], DataType::FixedUtf32(8), &[2, 1])
            .chunk_key_encoding(encoding.clone())
            .codecs_metadata(vec![
                codec("transpose", json!({"order": [1, 0]})),
                codec("bytes", json!({"endian": "big"})),
            ])
            .format(format)
            .create(Arc::clone(&store), "/text")
            .unwrap();
        text.write_strings(&Region::whole(&[2, 2]), &["é", "ab", "", "中文"])
            .unwrap();
        let time = Array::builder(
            &[3],
            DataType::NumpyTimeDelta64 {
                unit: TimeUnit::Millisecond,
                scale_factor: 1,
            },
            &[3],
        )
        .chunk_key_encoding(encoding.clone())
        .codecs_metadata(vec![codec("bytes", json!({"endian": "little"}))])
        .fill_value(-1i64)
        .format(format)
        .create(Arc::clone(&store), "/time")
        .unwrap();
        time.write_region(&Region::whole(&[3]), &[1i64, i64::MIN, 3])
            .unwrap();
        let record = DataType::Struct(vec![
            StructField::new("id", DataType::UInt16),
            StructField::new("tag", DataType::FixedBytes(2)),
        ]);
        let structs = Array::builder(&[2], record, &[2])
            .chunk_key_encoding(encoding)
            .codecs_metadata(vec![codec("bytes", json!({"endian": "little"}))])
            .format(format)
            .create(Arc::clone(&store), "/structs")
            .unwrap();
        structs
            .write_region_bytes(
                &Region::whole(&[2]),
                &[
                    7u16.to_ne_bytes().as_slice(),
                    b"ab",
                    &9u16.to_ne_bytes(),
                    b"c\0",
                ]
                .concat(),
            )
            .unwrap();

        let doc_key = |name: &str| {
            if format == ZarrFormat::V3Draft2022 {
                key(&format!("meta/{name}.array.json"))
            } else {
                key(&format!("meta/root/{name}.array"))
            }
        };
        let doc: Value =
            serde_json::from_slice(&store.get(&doc_key("text"), None).unwrap().unwrap()).unwrap();
        assert_eq!(doc["data_type"]["type"], json!(">U2"), "{format}");
        let (string_uri, time_fallback) = if format == ZarrFormat::V3Draft2022 {
            (
                "https://purl.org/zarr/spec/extensions/data-types/string/1.0",
                json!("int64"),
            )
        } else {
            (
                "http://purl.org/zarr/spec/extensions/string-dtypes/1.0",
                json!("<i8"),
            )
        };
        assert_eq!(doc["data_type"]["extension"], json!(string_uri), "{format}");
        let doc: Value =
            serde_json::from_slice(&store.get(&doc_key("time"), None).unwrap().unwrap()).unwrap();
        assert_eq!(doc["data_type"]["type"], json!("<m8[ms]"), "{format}");
        assert_eq!(doc["data_type"]["fallback"], time_fallback, "{format}");
        let doc: Value =
            serde_json::from_slice(&store.get(&doc_key("structs"), None).unwrap().unwrap())
                .unwrap();
        assert_eq!(
            doc["data_type"]["type"],
            json!([["id", "<u2"], ["tag", "|S2"]]),
            "{format}"
        );
        // The stored chunk of `/text` column 0: big-endian UTF-32, padded.
        let chunk = store
            .get(&text.chunk_key(&[0, 0]).unwrap(), None)
            .unwrap()
            .unwrap();
        assert_eq!(
            chunk,
            [0xe9u32.to_be_bytes(), [0; 4], [0; 4], [0; 4]].concat(),
            "{format}"
        );

        let text = Array::open(Arc::clone(&store), "/text").unwrap();
        assert_eq!(
            text.read_strings(&Region::whole(&[2, 2])).unwrap(),
            ["é", "ab", "", "中文"],
            "{format}"
        );
        let time = Array::open(Arc::clone(&store), "/time").unwrap();
        assert_eq!(
            time.read_region::<i64>(&Region::whole(&[3])).unwrap(),
            [1, i64::MIN, 3],
            "{format}"
        );
        let structs = Array::open(Arc::clone(&store), "/structs").unwrap();
        assert_eq!(
            structs
                .read_field::<u16>(&Region::whole(&[2]), "id")
                .unwrap(),
            [7, 9],
            "{format}"
        );
    }
}

#[test]
fn a_2022_extension_type_whose_byte_order_contradicts_the_endian_codec_is_refused() {
    let store = memory_fixture("v3-draft-2022/extension-dtypes.zarr");
    let doc_key = key("meta/unicode3_big_f.array.json");
    edit(&store, &doc_key, |d| {
        d["codecs"][0]["configuration"]["endian"] = json!("little");
    });
    let message = anyhow_like(Array::open(Arc::clone(&store), "/unicode3_big_f").unwrap_err());
    assert!(message.contains(doc_key.as_str()), "{message}");
    assert!(message.contains("endian"), "{message}");
    // A type the string extension does not define, with no fallback.
    edit(&store, &doc_key, |d| {
        d["data_type"] = json!({"extension": "http://purl.org/zarr/spec/extensions/string-dtypes/1.0", "type": "Q3"});
    });
    let message = anyhow_like(Array::open(Arc::clone(&store), "/unicode3_big_f").unwrap_err());
    assert!(
        message.contains("`Q3`") && message.contains("no fallback"),
        "{message}"
    );
}

/// Reads each migrated array with zarr-python 3.1 (and, for core data types
/// and codecs, tensorstore) and compares it with what zarrkit read from the
/// source, as little-endian bytes. Prints the counts read.
const READ_MIGRATED: &str = r#"
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
    a = zarr.open_array(root, path=path.lstrip("/"), mode="r")
    got = le_bytes(a[...])
    assert got == want, f"zarr-python {path}: {got[:40]} differs from {want[:40]}"
    if entry["tensorstore"]:
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": os.path.join(root, path.lstrip("/"))}}, read=True).result()
        got = le_bytes(t.read().result())
        assert got == want, f"tensorstore {path}: bytes differ"
        read_ts += 1
print(len(arrays), read_ts)
"#;

fn reference_python() -> Option<std::path::PathBuf> {
    if let Some(python) = std::env::var_os("ZARRKIT_PYTHON").filter(|p| !p.is_empty()) {
        return Some(python.into());
    }
    assert!(
        std::env::var("ZARRKIT_REQUIRE_INTEROP").as_deref() != Ok("1"),
        "ZARRKIT_REQUIRE_INTEROP=1 but ZARRKIT_PYTHON is unset"
    );
    eprintln!("skipping: set ZARRKIT_PYTHON to a Python with zarr 3.1 and tensorstore");
    None
}

/// Whether a codec's JSON names only v3 core codecs, inner codecs of a
/// shard included.
fn only_core_codecs(codec: &Value) -> bool {
    let core = [
        "bytes",
        "transpose",
        "gzip",
        "zstd",
        "blosc",
        "crc32c",
        "sharding_indexed",
    ];
    let name_ok = codec["name"].as_str().is_some_and(|n| core.contains(&n));
    let inner_ok = ["codecs", "index_codecs"].iter().all(|list| {
        codec["configuration"][list]
            .as_array()
            .is_none_or(|items| items.iter().all(only_core_codecs))
    });
    name_ok && inner_ok
}

#[test]
fn zarr_python_and_tensorstore_read_migrated_sharded_filtered_datetime_and_string_arrays() {
    use zarrkit::migrate;
    let Some(python) = reference_python() else {
        return;
    };
    let mut total = (0, 0);
    for name in [
        "v3-draft-2019-json/zarr-python-2.18-ext.zarr",
        "v3-draft-2022/spec-text.zarr",
        "v3-draft-2022/extension-dtypes.zarr",
        "v3-draft-2019/extension-dtypes.zarr",
        "v1/bytes7_zlib",
        "v1/unicode5_f_bz2",
    ] {
        let src: Arc<dyn Store> = Arc::new(FilesystemStore::new(fixture(name)).unwrap());
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("migrated.zarr");
        let dst: Arc<dyn Store> = Arc::new(FilesystemStore::new(&root).unwrap());
        let plan = migrate::plan(Arc::clone(&src), dst, ZarrFormat::V3).unwrap();
        let report = migrate::migrate(&plan, &mut |_| {}).unwrap();
        // Shards, filters and compressors all carry over byte for byte;
        // only structures whose fields differ in byte order (issue #9) are
        // re-encoded, as v3 `struct` has one byte order.
        let reencoded: Vec<&str> = report
            .arrays_reencoded
            .iter()
            .map(|(path, _)| path.as_str())
            .collect();
        let mixed: &[&str] = if name.ends_with("-ext.zarr") {
            &[
                "/mixed/structured_mixed_order_zlib",
                "/mixed/structured_nested_mixed_order_f",
            ]
        } else {
            &[]
        };
        assert_eq!(reencoded, mixed, "{name}");
        std::fs::create_dir(dir.path().join("expected")).unwrap();
        let mut entries = Vec::new();
        for (path, kind, _) in format::list_nodes(src.as_ref()).unwrap() {
            if kind != NodeKind::Array {
                continue;
            }
            let array = Array::open(Arc::clone(&src), path.as_str()).unwrap();
            // zarr-python 3.1.6 reads no v3 `struct` data type.
            if matches!(array.data_type(), DataType::Struct(_)) {
                continue;
            }
            let mut bytes = array
                .read_region_bytes(&Region::whole(array.shape()))
                .unwrap();
            if cfg!(target_endian = "big") {
                for (offset, unit) in array.data_type().endian_units() {
                    for element in bytes.chunks_exact_mut(array.data_type().size()) {
                        element[offset..offset + unit].reverse();
                    }
                }
            }
            std::fs::write(
                dir.path().join(format!("expected/{}.bin", entries.len())),
                bytes,
            )
            .unwrap();
            // tensorstore: the core numeric types and core codecs.
            let core_type = !array.data_type().is_extension()
                && !matches!(array.data_type(), DataType::RawBits(_));
            let core_codecs = array
                .metadata()
                .codecs
                .iter()
                .all(|c| only_core_codecs(&zarrkit::format::v3::extension_to_json(c)));
            entries.push(json!({"path": path.as_str(), "tensorstore": core_type && core_codecs}));
        }
        std::fs::write(
            dir.path().join("expected.json"),
            serde_json::to_string(&entries).unwrap(),
        )
        .unwrap();
        let output = std::process::Command::new(&python)
            .arg("-c")
            .arg(READ_MIGRATED)
            .arg(&root)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        let counts: Vec<usize> = stdout
            .split_whitespace()
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(counts[0], entries.len(), "{name}");
        total.0 += counts[0];
        total.1 += counts[1];
    }
    // zarr-python: 16 arrays of the zarr-python 2.18 store (not its four
    // structures; three use the string data types extension, issue #9),
    // 13 of the 2022 spec-text store, 3 + 3 extension types
    // (not the 2022 structure), 2 v1 strings. tensorstore: the core ones,
    // 4 sharded zarr-python arrays (not the one with a delta filter) and
    // the 13 of the 2022 spec-text store (issue #9 added four: `0b` fill
    // values and complex fill values given as a real number or bit strings).
    assert_eq!(total, (37, 17));
}

#[test]
fn huge_chunks_per_shard_are_errors_not_panics_or_huge_allocations() {
    let store = memory_fixture("v3-draft-2022/spec-text.zarr");
    let doc_key = key("meta/sharded/int32_gzip.array.json");
    for counts in [
        json!([4_294_967_296u64, 4_294_967_296u64]),
        json!([u64::MAX, 1]),
        json!([1_000_000, 1_000_000]),
    ] {
        edit(&store, &doc_key, |d| {
            d["storage_transformers"][0]["configuration"]["chunks_per_shard"] = counts.clone();
        });
        match Array::open(Arc::clone(&store), "/sharded/int32_gzip") {
            Err(err) => {
                let message = anyhow_like(err);
                assert!(
                    message.contains(doc_key.as_str()) || message.contains("`/sharded/int32_gzip`"),
                    "{counts}: {message}"
                );
            }
            Ok(array) => {
                // Opening may succeed; reading a shard whose index would
                // not fit is an error naming it.
                let err = array
                    .read_region::<i32>(&Region::from_ranges(&[0..2, 0..2]))
                    .unwrap_err();
                assert!(
                    anyhow_like(err).contains("data/sharded/int32_gzip/c0/0"),
                    "{counts}"
                );
            }
        }
    }
}
