//! numcodecs filters and checksums in Zarr v2, with zarr-python 3.1.
//!
//! `testdata/generate/v2_filters_interop.py write` makes zarr-python write
//! one `zarr_format=2` array per filter case (each filter, filters with a
//! compressor, checksums as compressor and as filters, chains of several);
//! zarrkit reads every element, then rewrites each array from its parsed
//! metadata (so the `.zarray` goes through zarrkit's writer) with the
//! values zarr-python read, and `read` checks them with zarr-python, and
//! for uncompressed cases that zarrkit's chunk files equal zarr-python's.
//! The same runs for v3 arrays with zarr-python 3.1's `numcodecs.<id>`
//! codecs (written back through zarrkit's builder).
//! Needs `ZARRKIT_PYTHON`; skips, saying so, unless `ZARRKIT_REQUIRE_INTEROP=1`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use zarrkit::format::v2;
use zarrkit::metadata::DataType;
use zarrkit::store::{FilesystemStore, Store};
use zarrkit::{Array, Region};

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
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/generate/v2_filters_interop.py");
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
        "v2_filters_interop.py {mode} failed: {text}"
    );
    text
}

/// Native-endian element bytes to little-endian, or back, in place.
fn swap_to_little_endian(bytes: &mut [u8], data_type: &DataType) {
    let unit = data_type.endian_unit();
    if cfg!(target_endian = "big") && unit > 1 {
        bytes.chunks_exact_mut(unit).for_each(<[u8]>::reverse);
    }
}

#[test]
fn filters_round_trip_between_zarr_python_and_zarrkit() {
    let Some(python) = reference_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    run_script(&python, "write", dir.path());
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("manifest.json")).unwrap()).unwrap();
    let py: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path().join("py.zarr")).unwrap());
    let py3: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path().join("py3.zarr")).unwrap());
    let rk_root = dir.path().join("rk.zarr");
    let rk: Arc<dyn Store> = Arc::new(FilesystemStore::new(&rk_root).unwrap());
    let rk3: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path().join("rk3.zarr")).unwrap());
    let cases = manifest.as_array().unwrap();
    assert!(cases.len() >= 25, "{} cases", cases.len());
    let mut failures = Vec::new();
    for entry in cases {
        let id = entry["id"].as_str().unwrap();
        let v3 = entry["format"] == 3;
        let result = (|| -> Result<(), String> {
            let source = if v3 { &py3 } else { &py };
            let array = Array::open(source.clone(), id).map_err(|e| format!("open: {e:#}"))?;
            let mut got = array
                .read_region_bytes(&Region::whole(array.shape()))
                .map_err(|e| format!("read: {e:#}"))?;
            swap_to_little_endian(&mut got, array.data_type());
            let expected = std::fs::read(dir.path().join("expected").join(format!("{id}.bin")))
                .map_err(|e| e.to_string())?;
            if got != expected {
                return Err("values differ from zarr-python's".to_string());
            }
            if v3 {
                // Rewrite through zarrkit's builder and v3 writer.
                let chunks = array.chunk_shape().to_vec();
                let written = Array::builder(array.shape(), array.data_type().clone(), &chunks)
                    .codecs_metadata(array.metadata().codecs.clone())
                    .create(rk3.clone(), id)
                    .map_err(|e| format!("create: {e:#}"))?;
                let mut native = expected.clone();
                swap_to_little_endian(&mut native, written.data_type());
                return written
                    .write_region_bytes(&Region::whole(written.shape()), &native)
                    .map_err(|e| format!("write: {e:#}"));
            }
            // Rewrite through zarrkit's v2 writer.
            let document = v2::array_to_json(array.metadata()).map_err(|e| e.to_string())?;
            let path = rk_root.join(id);
            std::fs::create_dir_all(&path).unwrap();
            std::fs::write(path.join(".zarray"), v2::to_bytes(&document)).unwrap();
            let written = Array::open(rk.clone(), id).map_err(|e| format!("reopen: {e:#}"))?;
            let mut native = expected.clone();
            swap_to_little_endian(&mut native, written.data_type());
            written
                .write_region_bytes(&Region::whole(written.shape()), &native)
                .map_err(|e| format!("write: {e:#}"))?;
            // The rewritten document has the same codecs; a byte filter
            // last in the list with no compressor is written as the
            // compressor (documented in format/v2.rs), which reads the same.
            let original: Value = serde_json::from_slice(
                &std::fs::read(dir.path().join("py.zarr").join(id).join(".zarray")).unwrap(),
            )
            .unwrap();
            let count = |doc: &Value| {
                doc["filters"].as_array().map_or(0, Vec::len)
                    + usize::from(!doc["compressor"].is_null())
            };
            if count(&original) != count(&document) || original["dtype"] != document["dtype"] {
                return Err(format!("{original} written as {document}"));
            }
            Ok(())
        })();
        if let Err(e) = result {
            failures.push(format!("{id}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let output = run_script(&python, "read", dir.path());
    assert!(
        output.contains(&format!("checked {} arrays", cases.len())),
        "{output}"
    );
}

#[test]
fn categorize_and_misordered_filters_are_refused_naming_them() {
    let doc = |filters: &str| {
        format!(
            r#"{{"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i4", "compressor": null,
                "fill_value": 0, "order": "C", "filters": {filters}}}"#
        )
    };
    // `categorize` takes strings (tests/it/data_types/objects.rs): on an `<i4`
    // array the codec chain refuses it, naming it.
    let metadata = v2::parse_array(
        doc(r#"[{"id": "categorize", "labels": ["a"], "dtype": "<U1", "astype": "|u1"}]"#)
            .as_bytes(),
        None,
    )
    .unwrap();
    let err = Array::from_metadata(
        Arc::new(zarrkit::store::MemoryStore::new()),
        zarrkit::node::NodePath::new("/c").unwrap(),
        zarrkit::format::ZarrFormat::V2,
        metadata,
    )
    .unwrap_err();
    let source = std::error::Error::source(&err).map(ToString::to_string);
    assert!(
        source
            .as_deref()
            .is_some_and(|s| s.contains("numcodecs.categorize") && s.contains("int32")),
        "{err}: {source:?}"
    );
    let err = v2::parse_array(
        doc(r#"[{"id": "crc32"}, {"id": "delta", "dtype": "<i4"}]"#).as_bytes(),
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("`delta`"), "{err}");
    let err =
        v2::parse_array(doc(r#"[{"id": "delta", "dtype": ">i4"}]"#).as_bytes(), None).unwrap_err();
    assert!(err.to_string().contains(">i4"), "{err}");
    let err = v2::parse_array(
        doc(r#"[{"id": "delta", "dtype": "<i4", "level": 1}]"#).as_bytes(),
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("filters[0].level"), "{err}");
    let ok = v2::parse_array(
        doc(r#"[{"id": "astype", "encode_dtype": ">i8", "decode_dtype": "<i4"}, {"id": "crc32"}]"#)
            .as_bytes(),
        None,
    )
    .unwrap();
    let names: Vec<&str> = ok.codecs.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["numcodecs.astype", "bytes", "numcodecs.crc32"]);
    assert_eq!(
        ok.codecs[1].configuration.as_ref().unwrap()["endian"],
        "big"
    );
}

/// The vectors of `testdata/generate/numcodecs_filter_vectors.py`: each
/// codec, in a chain with `bytes`, encodes numcodecs' input to numcodecs'
/// bytes exactly and decodes them to numcodecs' decoding.
#[test]
fn every_codec_matches_the_numcodecs_vectors_byte_for_byte() {
    use zarrkit::codec::{ChunkRepr, CodecChain};
    use zarrkit::metadata::{ExtensionObject, FillValue, JsonMap};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/codecs/numcodecs/filters");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(root.join("manifest.json")).unwrap()).unwrap();
    let vectors = manifest.as_array().unwrap();
    assert!(vectors.len() >= 40, "{} vectors", vectors.len());
    let mut failures = Vec::new();
    for vector in vectors {
        let name = vector["name"].as_str().unwrap();
        let read = |suffix: &str| std::fs::read(root.join(format!("{name}.{suffix}.bin"))).unwrap();
        let (data_type, _) = v2::dtype_from_json(&vector["dtype"]).unwrap();
        let repr = ChunkRepr {
            shape: serde_json::from_value(vector["shape"].clone()).unwrap(),
            fill_value: FillValue::zero(&data_type),
            data_type: data_type.clone(),
        };
        let codec = ExtensionObject::with_configuration(
            vector["codec"]["name"].as_str().unwrap(),
            vector["codec"]["configuration"]
                .as_object()
                .unwrap()
                .clone(),
        );
        let bytes_codec = |endian: &str| {
            let mut configuration = JsonMap::new();
            configuration.insert("endian".into(), endian.into());
            ExtensionObject::with_configuration("bytes", configuration)
        };
        let chain = match vector["encoded_dtype"].as_str() {
            None => vec![bytes_codec("little"), codec],
            Some(encoded) => vec![
                codec,
                bytes_codec(if encoded.starts_with('>') {
                    "big"
                } else {
                    "little"
                }),
            ],
        };
        let result = (|| -> Result<(), String> {
            let chain = CodecChain::from_metadata(&chain, &repr).map_err(|e| e.to_string())?;
            let mut input = read("in");
            swap_to_little_endian(&mut input, &data_type);
            let encoded = chain
                .encode(input, &repr)
                .map_err(|e| format!("encode: {e}"))?;
            let expected = read("out");
            if encoded != expected {
                let first = encoded.iter().zip(&expected).position(|(a, b)| a != b);
                return Err(format!(
                    "encoding differs ({} vs {} bytes, first at byte {first:?})",
                    encoded.len(),
                    expected.len()
                ));
            }
            let mut decoded = vec![0u8; repr.size_bytes().unwrap()];
            chain
                .decode_into(expected, &repr, &mut decoded)
                .map_err(|e| format!("decode: {e}"))?;
            swap_to_little_endian(&mut decoded, &data_type);
            if decoded != read("back") {
                return Err("decoding differs".to_string());
            }
            // Truncated, extended and corrupted encodings are errors or
            // decode to something; they never panic.
            let expected = read("out");
            let mut bad = vec![
                Vec::new(),
                expected[..1].to_vec(),
                expected[..expected.len() / 2].to_vec(),
                expected[..expected.len() - 1].to_vec(),
                [expected.as_slice(), &[0]].concat(),
            ];
            let mut flipped = expected.clone();
            flipped[0] ^= 0xff;
            bad.push(flipped);
            for data in bad {
                let len = data.len();
                let result = chain.decode_into(data, &repr, &mut decoded);
                if len != expected.len() && vector["encoded_dtype"].is_string() && result.is_ok() {
                    return Err(format!("{len} bytes decoded without error"));
                }
            }
            Ok(())
        })();
        if let Err(e) = result {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

mod untrusted {
    use super::*;
    use proptest::prelude::*;
    use zarrkit::codec::{ChunkRepr, CodecChain};

    fn option_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            (-3i64..70).prop_map(Value::from),
            (-1e3f64..1e3).prop_map(Value::from),
            prop::sample::select(vec![
                "<i4", ">i2", "|u1", "<f8", "<f4", "|b1", "<U2", "x", "end"
            ])
            .prop_map(Value::from),
        ]
    }

    fn filter() -> impl Strategy<Value = Value> {
        let ids = vec![
            "delta",
            "fixedscaleoffset",
            "quantize",
            "bitround",
            "astype",
            "packbits",
            "shuffle",
            "crc32",
            "adler32",
            "fletcher32",
            "jenkins_lookup3",
            "crc32c",
            "categorize",
        ];
        let keys = vec![
            "dtype",
            "astype",
            "offset",
            "scale",
            "digits",
            "keepbits",
            "encode_dtype",
            "decode_dtype",
            "elementsize",
            "location",
            "initval",
            "prefix",
        ];
        (
            prop::sample::select(ids),
            prop::collection::vec((prop::sample::select(keys), option_value()), 0..4),
        )
            .prop_map(|(id, options)| {
                let mut object = serde_json::Map::new();
                object.insert("id".into(), id.into());
                for (key, value) in options {
                    object.insert(key.into(), value);
                }
                Value::Object(object)
            })
    }

    proptest! {
        /// Random filter lists parse or fail with an error; when they build a
        /// chain, decoding random bytes fails or succeeds, never panics.
        #[test]
        fn random_filter_lists_never_panic(
            filters in prop::collection::vec(filter(), 0..4),
            dtype in prop::sample::select(vec!["<i4", "<f8", "|b1", ">u2", "<f4"]),
            data in prop::collection::vec(any::<u8>(), 0..64),
        ) {
            let doc = json_doc(&Value::Array(filters), dtype);
            if let Ok(array) = v2::parse_array(doc.as_bytes(), None) {
                let repr = ChunkRepr {
                    shape: vec![3, 2],
                    data_type: array.data_type.clone(),
                    fill_value: array.fill_value.clone(),
                };
                if let Ok(chain) = CodecChain::from_metadata(&array.codecs, &repr) {
                    let mut out = vec![0u8; repr.size_bytes().unwrap()];
                    let _ = chain.decode_into(data, &repr, &mut out);
                    let _ = chain.encode(out, &repr);
                }
                let _ = v2::array_to_json(&array);
            }
        }
    }

    fn json_doc(filters: &Value, dtype: &str) -> String {
        format!(
            r#"{{"zarr_format": 2, "shape": [6, 4], "chunks": [3, 2], "dtype": "{dtype}",
                "compressor": null, "fill_value": 0, "order": "F", "filters": {filters}}}"#
        )
    }
}
