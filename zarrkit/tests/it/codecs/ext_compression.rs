//! The registered v3 extension codecs `conditional`, `n5_default` and
//! `zfp`: whole arrays through the chain, the extensions' README examples
//! as fixtures, and bad configurations refused at open naming the codec and
//! the nested codec's position.
//!
//! Interop: tensorstore 0.1.86's `n5` driver writes and reads the block
//! format of `n5_default` (testdata/generate/n5_default_interop.py);
//! zarr-python 3.1.6 and tensorstore implement neither `conditional` nor
//! the v3 `zfp` codec, so those are tested against the spec's byte layout
//! and round trips.

use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use zarrkit::metadata::{ChunkKeyEncoding, DataType, ExtensionObject, Separator};
use zarrkit::store::{FilesystemStore, MemoryStore, Store, StoreKey};
use zarrkit::{Array, Region};

fn ext(value: Value) -> ExtensionObject {
    let name = value["name"].as_str().unwrap().to_string();
    match value.get("configuration") {
        Some(Value::Object(map)) => ExtensionObject::with_configuration(name, map.clone()),
        _ => ExtensionObject::new(name),
    }
}

fn get(store: &dyn Store, key: &str) -> Vec<u8> {
    store
        .get(&StoreKey::new(key).unwrap(), None)
        .unwrap()
        .unwrap()
        .to_vec()
}

use crate::support::error_chain;

// --- conditional -----------------------------------------------------------

/// The `conditional` configuration of the README's Example 1.
fn readme_example_1() -> Value {
    json!({
        "name": "conditional",
        "configuration": {
            "codecs": [
                { "name": "numcodecs.shuffle", "configuration": { "elementsize": 4 } },
                { "name": "zstd", "configuration": { "level": 5 } }
            ]
        }
    })
}

#[cfg(feature = "zstd")]
#[test]
fn conditional_readme_example_stores_raw_chunks_behind_a_zero_header_by_default() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[4], DataType::Float32, &[4])
        .codecs_metadata(vec![
            ext(json!({"name": "bytes", "configuration": {"endian": "little"}})),
            ext(readme_example_1()),
        ])
        .create(store.clone(), "/c")
        .unwrap();
    array
        .write_region(&Region::whole(&[4]), &[1.0f32, 2.0, -0.5, 8.0])
        .unwrap();
    // Spec, "Implementation", phase 1: with no mask set, every codec is
    // skipped: one header byte of 0, then the little-endian floats.
    let chunk = get(store.as_ref(), "c/c/0");
    let mut expected = vec![0u8];
    for v in [1.0f32, 2.0, -0.5, 8.0] {
        expected.extend(v.to_le_bytes());
    }
    assert_eq!(chunk, expected);
    let doc: Value = serde_json::from_slice(&get(store.as_ref(), "c/zarr.json")).unwrap();
    // The canonical form spells out zstd's `checksum`.
    let mut canonical = readme_example_1();
    canonical["configuration"]["codecs"][1]["configuration"]["checksum"] = json!(false);
    assert_eq!(doc["codecs"][1], canonical);
    let reopened = Array::open(store.clone(), "/c").unwrap();
    let got: Vec<f32> = reopened.read_region(&Region::whole(&[4])).unwrap();
    assert_eq!(got, [1.0, 2.0, -0.5, 8.0]);
}

#[cfg(feature = "zstd")]
#[test]
fn conditional_compress_if_smaller_compresses_only_the_chunks_it_shrinks() {
    use zarrkit::codec::conditional::{ConditionalCodec, ConditionalDecision};
    use zarrkit::codec::{ChunkRepr, Codec, CodecChain, codec_from_metadata};
    use zarrkit::metadata::FillValue;
    let nested: Vec<Codec> = readme_example_1()["configuration"]["codecs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| codec_from_metadata(&ext(v.clone())).unwrap())
        .collect();
    let conditional = ConditionalCodec::new(nested, None)
        .unwrap()
        .with_decision(ConditionalDecision::CompressIfSmaller);
    let bytes = codec_from_metadata(&ext(
        json!({"name": "bytes", "configuration": {"endian": "little"}}),
    ))
    .unwrap();
    // The decision is a runtime setting, not metadata, so it lives on the
    // resolved codec: the chain here is what an array's chain holds.
    let repr = ChunkRepr {
        shape: vec![1024],
        data_type: DataType::UInt32,
        fill_value: FillValue::zero(&DataType::UInt32),
    };
    let chain = CodecChain::new(
        vec![bytes, Codec::BytesToBytes(Arc::new(conditional))],
        &repr,
    )
    .unwrap();
    // One chunk all 7 (compresses well), one of pseudo-random noise.
    let mut state = 0x2545_f491_u32;
    let smooth_values = vec![7u32; 1024];
    let noise_values: Vec<u32> = (0..1024)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        })
        .collect();
    let as_bytes = |v: &[u32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_ne_bytes()).collect() };
    let smooth = chain.encode(as_bytes(&smooth_values), &repr).unwrap();
    let noise = chain.encode(as_bytes(&noise_values), &repr).unwrap();
    // Shuffle never shrinks (same size), so bit 0 stays clear; zstd shrinks
    // the constant chunk (bit 1) and not the noise.
    assert_eq!(smooth[0], 0b10);
    assert!(smooth.len() < 100, "{}", smooth.len());
    assert_eq!(noise[0], 0b00);
    assert_eq!(noise.len(), 1 + 4096);
    assert_eq!(
        chain.decode(smooth, &repr).unwrap(),
        as_bytes(&smooth_values)
    );
    assert_eq!(chain.decode(noise, &repr).unwrap(), as_bytes(&noise_values));
}

#[cfg(feature = "zstd")]
#[test]
fn an_array_writes_with_the_conditional_decision_attached_to_it() {
    use zarrkit::codec::conditional::{ConditionalCodec, ConditionalDecision};
    use zarrkit::codec::{Codec, codec_from_metadata};
    let store = Arc::new(MemoryStore::new());
    let bytes = ext(json!({"name": "bytes", "configuration": {"endian": "little"}}));
    Array::builder(&[2048], DataType::UInt32, &[1024])
        .codecs_metadata(vec![bytes.clone(), ext(readme_example_1())])
        .create(store.clone(), "/a")
        .unwrap();
    // Spec, "Implementation", phase 2: a reopened array takes a decision
    // (here the phase 3 heuristic by its keyword) for its writes.
    let mut array = Array::open(store.clone(), "/a").unwrap();
    let nested = readme_example_1()["configuration"]["codecs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| codec_from_metadata(&ext(v.clone())).unwrap())
        .collect();
    let decision: ConditionalDecision = "compress_if_smaller".parse().unwrap();
    let conditional = ConditionalCodec::new(nested, None)
        .unwrap()
        .with_decision(decision);
    array
        .set_codecs(vec![
            codec_from_metadata(&bytes).unwrap(),
            Codec::BytesToBytes(Arc::new(conditional)),
        ])
        .unwrap();
    let mut state = 0x2545_f491_u32;
    let mut data = vec![7u32; 1024];
    data.extend((0..1024).map(|_| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    }));
    array.write_region(&Region::whole(&[2048]), &data).unwrap();
    // The constant chunk is zstd-compressed (bit 1), the noise stored raw.
    assert_eq!(get(store.as_ref(), "a/c/0")[0], 0b10);
    assert_eq!(get(store.as_ref(), "a/c/1").len(), 1 + 4096);
    let reread: Vec<u32> = Array::open(store.clone(), "/a")
        .unwrap()
        .read_region(&Region::whole(&[2048]))
        .unwrap();
    assert_eq!(reread, data);
    // Codecs whose metadata is not the array's are refused, naming one.
    let err = array
        .set_codecs(vec![codec_from_metadata(&bytes).unwrap()])
        .unwrap_err();
    let chain = error_chain(&err);
    assert!(
        chain.contains("codec `conditional` at position 1 differs from the array's metadata"),
        "{chain}"
    );
}

#[test]
fn bad_conditional_configurations_name_the_codec_and_position() {
    let store = Arc::new(MemoryStore::new());
    for (conditional, why) in [
        (
            json!({"name": "conditional", "configuration": {"codecs": [
                {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
                {"name": "no_such_codec"}]}}),
            "codec `no_such_codec` at position 1 of `codecs`: unknown codec `no_such_codec`",
        ),
        (
            json!({"name": "conditional", "configuration": {"codecs": [
                {"name": "transpose", "configuration": {"order": [0]}}]}}),
            "codec `transpose` at position 0 of `codecs` is not bytes-to-bytes",
        ),
        (
            json!({"name": "conditional", "configuration": {"codecs": [
                {"name": "numcodecs.shuffle", "configuration": {"elementsize": "four"}}]}}),
            "at position 0 of `codecs`",
        ),
        // The README defines no conditions in the metadata: the decision is
        // the writer's, so a `condition` field is unknown.
        (
            json!({"name": "conditional", "configuration": {"codecs": [],
                "condition": "compress_if_smaller"}}),
            "unknown field `condition`",
        ),
        (
            json!({"name": "conditional", "configuration": {"codecs": [], "header_bits": 12}}),
            "`header_bits` 12 is not a multiple of 8",
        ),
    ] {
        let err = Array::builder(&[4], DataType::UInt8, &[4])
            .codecs_metadata(vec![ext(json!({"name": "bytes"})), ext(conditional)])
            .create(store.clone(), "/bad")
            .unwrap_err();
        let chain = error_chain(&err);
        assert!(chain.contains("`conditional`"), "{chain}");
        assert!(chain.contains(why), "{why}: {chain}");
    }
}

/// A fixture store under `testdata/codecs/`.
fn fixture(path: &str) -> Arc<dyn Store> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/codecs")
        .join(path);
    Arc::new(FilesystemStore::new(dir).unwrap())
}

#[cfg(feature = "zstd")]
#[test]
fn conditional_reads_hand_made_chunks_of_the_readme_example() {
    // testdata/generate/codecs_ext2_fixtures.py: chunk 0 shuffled and
    // zstd-compressed (mask 0b11), chunk 1 raw (0b00), chunk 2 zstd only
    // (0b10); then one chunk shuffled only behind a 2-byte header.
    for (path, ncols) in [
        ("conditional/readme_example_1", 12),
        ("conditional/header_bits_16", 4),
    ] {
        let array = Array::open(fixture(path), "/").unwrap();
        let got: Vec<f32> = array.read_region(&Region::whole(&[2, ncols])).unwrap();
        let expected: Vec<f32> = (0..2 * ncols).map(|i| i as f32 * 0.25 - 2.0).collect();
        assert_eq!(got, expected, "{path}");
    }
    let store = fixture("conditional/readme_example_1");
    let headers: Vec<u8> = (0..3)
        .map(|j| get(store.as_ref(), &format!("c/0/{j}"))[0])
        .collect();
    assert_eq!(headers, [0b11, 0b00, 0b10]);
}

// --- n5_default --------------------------------------------------------------

/// The README's example configuration for a 2-d array, with the N5
/// compression `zstd` replaced by `compression` (or left out).
fn n5_codec(ndim: usize, compression: Option<Value>) -> ExtensionObject {
    let order: Vec<usize> = (0..ndim).rev().collect();
    let mut codecs = vec![
        json!({"name": "transpose", "configuration": {"order": order}}),
        json!({"name": "bytes", "configuration": {"endian": "big"}}),
    ];
    codecs.extend(compression);
    ext(json!({"name": "n5_default", "configuration": {"codecs": codecs}}))
}

#[cfg(feature = "zstd")]
#[test]
fn n5_default_readme_example_writes_a_header_then_zstd_data() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[3, 2], DataType::UInt16, &[3, 2])
        .chunk_key_encoding(ChunkKeyEncoding::V2 {
            separator: Separator::Slash,
        })
        .codecs_metadata(vec![n5_codec(
            2,
            Some(json!({"name": "zstd", "configuration": {"level": 0, "checksum": false}})),
        )])
        .create(store.clone(), "/n")
        .unwrap();
    array
        .write_region(&Region::whole(&[3, 2]), &[1u16, 2, 3, 4, 5, 6])
        .unwrap();
    let block = get(store.as_ref(), "n/0/0");
    // Mode 0, 2 dimensions, shape [3, 2], all big endian.
    assert_eq!(block[..12], [0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 2]);
    let data = zstd::decode_all(&block[12..]).unwrap();
    // Column-major, big endian: 1, 3, 5, 2, 4, 6.
    assert_eq!(data, [0, 1, 0, 3, 0, 5, 0, 2, 0, 4, 0, 6]);
    let reopened = Array::open(store.clone(), "/n").unwrap();
    let got: Vec<u16> = reopened.read_region(&Region::whole(&[3, 2])).unwrap();
    assert_eq!(got, [1, 2, 3, 4, 5, 6]);
}

#[test]
fn n5_default_reads_a_java_style_truncated_edge_block() {
    // A [3, 5] int32 array in [2, 4] chunks; the edge block (1, 1) holds
    // only the one element [2, 4] and says so in its header.
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[3, 5], DataType::Int32, &[2, 4])
        .chunk_key_encoding(ChunkKeyEncoding::V2 {
            separator: Separator::Slash,
        })
        .fill_value(-1i32)
        .codecs_metadata(vec![n5_codec(2, None)])
        .create(store.clone(), "/t")
        .unwrap();
    let mut block = vec![0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1];
    block.extend(42i32.to_be_bytes());
    store.set(&StoreKey::new("t/1/1").unwrap(), &block).unwrap();
    let got: Vec<i32> = array.read_region(&Region::whole(&[3, 5])).unwrap();
    let mut expected = vec![-1; 15];
    expected[2 * 5 + 4] = 42;
    assert_eq!(got, expected);
}

#[test]
fn bad_n5_default_configurations_name_the_codec_and_position() {
    let store = Arc::new(MemoryStore::new());
    for (codec, why) in [
        (
            ext(json!({"name": "n5_default", "configuration": {"codecs": [
                {"name": "transpose", "configuration": {"order": [0, 1]}},
                {"name": "bytes", "configuration": {"endian": "big"}}]}})),
            "must have order [1, 0]",
        ),
        (
            ext(json!({"name": "n5_default", "configuration": {"codecs": [
                {"name": "transpose", "configuration": {"order": [1, 0]}},
                {"name": "bytes", "configuration": {"endian": "big"}},
                {"name": "gzip", "configuration": {"level": 99}}]}})),
            "at position 2 of `codecs`",
        ),
        (
            ext(json!({"name": "n5_default", "configuration": {}})),
            "missing field `codecs`",
        ),
    ] {
        let err = Array::builder(&[4, 3], DataType::UInt16, &[4, 3])
            .codecs_metadata(vec![codec])
            .create(store.clone(), "/bad")
            .unwrap_err();
        let chain = error_chain(&err);
        assert!(chain.contains("`n5_default`"), "{chain}");
        assert!(chain.contains(why), "{why}: {chain}");
    }
}

/// One case of `n5_default_interop.py`.
#[cfg(feature = "gzip")]
type N5Case = (
    &'static str,
    Vec<u64>,
    Vec<u64>,
    DataType,
    Option<Value>,
    f64,
    f64,
);

#[cfg(feature = "gzip")]
#[test]
fn n5_default_reads_the_n5_array_tensorstore_wrote_in_the_fixtures() {
    let store = fixture("n5_default/tensorstore_uint16_gzip");
    let array = Array::open(store.clone(), "/").unwrap();
    let got: Vec<u16> = array.read_region(&Region::whole(&[5, 7])).unwrap();
    let expected: Vec<u16> = (0..35).map(|i| i * 3 + 1).collect();
    assert_eq!(got, expected);
    // tensorstore pads edge blocks: block (2, 2) says [2, 3] though only
    // [1, 1] of it lies in the array.
    let block = get(store.as_ref(), "2/2");
    assert_eq!(block[..12], [0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 3]);
}

/// The cases of `n5_default_interop.py`: name, shape, chunk shape, data
/// type, N5 compression as a nested codec, step and offset of the values.
#[cfg(feature = "gzip")]
fn n5_cases() -> Vec<N5Case> {
    vec![
        (
            "uint16_raw",
            vec![5, 7],
            vec![2, 3],
            DataType::UInt16,
            None,
            1.0,
            0.0,
        ),
        (
            "float32_gzip",
            vec![4, 6],
            vec![3, 4],
            DataType::Float32,
            Some(json!({"name": "gzip", "configuration": {"level": 5}})),
            0.5,
            -3.0,
        ),
        (
            "int64_raw_1d",
            vec![9],
            vec![4],
            DataType::Int64,
            None,
            -1_000_000_007.0,
            5.0,
        ),
    ]
}

/// `arange(n) * step + offset` as the script computes it, as JSON numbers.
#[cfg(feature = "gzip")]
fn n5_values(n: u64, step: f64, offset: f64) -> Vec<f64> {
    (0..n).map(|i| i as f64 * step + offset).collect()
}

#[cfg(feature = "gzip")]
fn read_as_f64(array: &Array, shape: &[u64]) -> Vec<f64> {
    let region = Region::whole(shape);
    match array.data_type() {
        DataType::UInt16 => array
            .read_region::<u16>(&region)
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect(),
        DataType::Float32 => array
            .read_region::<f32>(&region)
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect(),
        DataType::Int64 => array
            .read_region::<i64>(&region)
            .unwrap()
            .into_iter()
            .map(|v| v as f64)
            .collect(),
        other => panic!("no case uses {other}"),
    }
}

fn reference_python() -> Option<std::path::PathBuf> {
    if let Some(python) = std::env::var_os("ZARRKIT_PYTHON").filter(|p| !p.is_empty()) {
        return Some(python.into());
    }
    assert!(
        std::env::var("ZARRKIT_REQUIRE_INTEROP").as_deref() != Ok("1"),
        "ZARRKIT_REQUIRE_INTEROP=1 but ZARRKIT_PYTHON is unset"
    );
    eprintln!("skipping: set ZARRKIT_PYTHON to a Python with tensorstore (scripts/test.sh does)");
    None
}

fn run(python: &Path, script: &str, mode: &str, dir: &Path) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/generate")
        .join(script);
    let output = std::process::Command::new(python)
        .arg(&script)
        .arg(mode)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{} {mode} failed:\n{}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[cfg(feature = "gzip")]
fn n5_zarr_json(
    shape: &[u64],
    chunks: &[u64],
    data_type: &DataType,
    compression: Option<Value>,
) -> Value {
    let codec = n5_codec(shape.len(), compression);
    json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": data_type.to_string(),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": [{"name": codec.name, "configuration": codec.configuration}],
    })
}

#[cfg(feature = "gzip")]
#[test]
fn n5_default_reads_the_blocks_tensorstore_writes() {
    let Some(python) = reference_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    run(&python, "n5_default_interop.py", "write", dir.path());
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path()).unwrap());
    for (name, shape, chunks, data_type, compression, step, offset) in n5_cases() {
        // Spec, "Compatibility notes", "Storage": a zarr.json beside the
        // N5 attributes.json makes the N5 array a Zarr array.
        let doc = n5_zarr_json(&shape, &chunks, &data_type, compression);
        std::fs::write(dir.path().join(name).join("zarr.json"), doc.to_string()).unwrap();
        let array = Array::open(store.clone(), &format!("/{name}")).unwrap();
        let n = shape.iter().product();
        assert_eq!(
            read_as_f64(&array, &shape),
            n5_values(n, step, offset),
            "{name}"
        );
    }
}

#[cfg(feature = "gzip")]
#[test]
fn tensorstore_reads_the_blocks_zarrkit_writes() {
    let Some(python) = reference_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path()).unwrap());
    for (name, shape, chunks, data_type, compression, step, offset) in n5_cases() {
        let n5_compression = match &compression {
            None => json!({"type": "raw"}),
            Some(c) => json!({"type": "gzip", "level": c["configuration"]["level"]}),
        };
        let array = Array::builder(&shape, data_type.clone(), &chunks)
            .chunk_key_encoding(ChunkKeyEncoding::V2 {
                separator: Separator::Slash,
            })
            .codecs_metadata(vec![n5_codec(shape.len(), compression)])
            .create(store.clone(), &format!("/{name}"))
            .unwrap();
        let n: u64 = shape.iter().product();
        let values = n5_values(n, step, offset);
        let region = Region::whole(&shape);
        match data_type {
            DataType::UInt16 => {
                let v: Vec<u16> = values.iter().map(|&x| x as u16).collect();
                array.write_region(&region, &v).unwrap();
            }
            DataType::Float32 => {
                let v: Vec<f32> = values.iter().map(|&x| x as f32).collect();
                array.write_region(&region, &v).unwrap();
            }
            DataType::Int64 => {
                let v: Vec<i64> = values.iter().map(|&x| x as i64).collect();
                array.write_region(&region, &v).unwrap();
            }
            ref other => panic!("no case uses {other}"),
        }
        let attributes = json!({
            "dimensions": shape,
            "blockSize": chunks,
            "dataType": data_type.to_string(),
            "compression": n5_compression,
        });
        std::fs::write(
            dir.path().join(name).join("attributes.json"),
            attributes.to_string(),
        )
        .unwrap();
    }
    let read: Value =
        serde_json::from_str(&run(&python, "n5_default_interop.py", "read", dir.path())).unwrap();
    for (name, shape, _, _, _, step, offset) in n5_cases() {
        let got: Vec<f64> = serde_json::from_value(read[name].clone()).unwrap();
        assert_eq!(
            got,
            n5_values(shape.iter().product(), step, offset),
            "{name}"
        );
    }
}

// --- zfp ---------------------------------------------------------------------

/// Little-endian element bytes to native-endian ones.
#[cfg(feature = "zfp")]
fn le_to_native(bytes: &[u8], size: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if cfg!(target_endian = "big") {
        out.chunks_exact_mut(size).for_each(<[u8]>::reverse);
    }
    out
}

#[cfg(feature = "zfp")]
#[test]
fn zfp_matches_the_streams_zfpy_writes_byte_for_byte() {
    use zarrkit::codec::{ChunkRepr, Codec, codec_from_metadata};
    use zarrkit::metadata::FillValue;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/codecs/zfp");
    let cases: Value =
        serde_json::from_slice(&std::fs::read(dir.join("cases.json")).unwrap()).unwrap();
    let cases = cases.as_object().unwrap();
    assert_eq!(cases.len(), 5);
    for (name, case) in cases {
        let data_type: DataType = match case["data_type"].as_str().unwrap() {
            "float32" => DataType::Float32,
            "float64" => DataType::Float64,
            "int32" => DataType::Int32,
            "int64" => DataType::Int64,
            other => panic!("no case uses {other}"),
        };
        let repr = ChunkRepr {
            shape: serde_json::from_value(case["shape"].clone()).unwrap(),
            fill_value: FillValue::zero(&data_type),
            data_type: data_type.clone(),
        };
        let Codec::ArrayToBytes(codec) = codec_from_metadata(&ext(
            json!({"name": "zfp", "configuration": case["configuration"]}),
        ))
        .unwrap() else {
            panic!("zfp is array-to-bytes")
        };
        let read = |ext: &str| std::fs::read(dir.join(format!("{name}.{ext}"))).unwrap();
        let size = data_type.size();
        let input = le_to_native(&read("input"), size);
        let stream = read("zfp");
        assert_eq!(codec.encode(input.into(), &repr).unwrap(), stream, "{name}");
        assert_eq!(
            codec.decode(stream, &repr).unwrap(),
            le_to_native(&read("decoded"), size),
            "{name}"
        );
    }
}

#[cfg(feature = "zfp")]
#[test]
fn zfp_arrays_round_trip_within_the_tolerance_and_reopen_from_zarr_json() {
    let store = Arc::new(MemoryStore::new());
    let config = json!({"mode": "fixed_accuracy", "tolerance": 0.01});
    let array = Array::builder(&[20, 30], DataType::Float32, &[8, 16])
        .codecs_metadata(vec![ext(json!({"name": "zfp", "configuration": config}))])
        .create(store.clone(), "/z")
        .unwrap();
    let values: Vec<f32> = (0..600).map(|i| (i as f32 * 0.05).cos() * 10.0).collect();
    array
        .write_region(&Region::whole(&[20, 30]), &values)
        .unwrap();
    let doc: Value = serde_json::from_slice(&get(store.as_ref(), "z/zarr.json")).unwrap();
    assert_eq!(doc["codecs"][0]["configuration"], config);
    let reopened = Array::open(store.clone(), "/z").unwrap();
    let got: Vec<f32> = reopened.read_region(&Region::whole(&[20, 30])).unwrap();
    let worst = values
        .iter()
        .zip(&got)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(worst <= 0.01, "{worst}");
    // uint16 goes through zfp's int32 promotion and back, losslessly in
    // reversible mode.
    let array = Array::builder(&[50], DataType::UInt16, &[16])
        .codecs_metadata(vec![ext(
            json!({"name": "zfp", "configuration": {"mode": "reversible"}}),
        )])
        .create(store.clone(), "/r")
        .unwrap();
    let ints: Vec<u16> = (0..50).map(|i| (i * 1311) as u16).collect();
    array.write_region(&Region::whole(&[50]), &ints).unwrap();
    let got: Vec<u16> = array.read_region(&Region::whole(&[50])).unwrap();
    assert_eq!(got, ints);
}

#[cfg(not(feature = "zfp"))]
#[test]
fn zfp_without_its_feature_names_the_feature() {
    let err = Array::builder(&[4], DataType::Float32, &[4])
        .codecs_metadata(vec![ext(
            json!({"name": "zfp", "configuration": {"mode": "reversible"}}),
        )])
        .create(Arc::new(MemoryStore::new()), "/z")
        .unwrap_err();
    assert!(
        error_chain(&err).contains("`zfp` feature"),
        "{}",
        error_chain(&err)
    );
}

/// A compressor after a codec whose output can be larger than the decoded
/// chunk (an N5 block has a header, a shard its index; zfp's `reversible`
/// stream of noise is larger than the noise) must still decode: the chain
/// may not bound the decompressor by the decoded chunk's size, as it did.
#[cfg(all(feature = "zfp", feature = "gzip", feature = "zlib"))]
#[test]
fn compressors_after_growing_array_to_bytes_codecs_decode() {
    let store = Arc::new(MemoryStore::new());
    // zlib bounds its output by the size the chain expects.
    let zlib = ext(json!({"name": "numcodecs.zlib", "configuration": {"level": 1}}));
    let mut state = 0x9e37_79b9_u32;
    let noise: Vec<f32> = (0..256)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            f32::from_bits(state & 0x3fff_ffff)
        })
        .collect();
    let sharded = ext(json!({"name": "sharding_indexed", "configuration": {
        "chunk_shape": [64],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}));
    for (name, codec) in [
        ("n5", n5_codec(1, None)),
        // A full shard of uncompressed inner chunks is its data plus the index.
        ("sharded", sharded),
        // Every bit kept, plus the padding byte.
        (
            "packbits",
            ext(json!({"name": "packbits", "configuration": {"padding_encoding": "first_byte"}})),
        ),
        (
            "zfp",
            ext(json!({"name": "zfp", "configuration": {"mode": "reversible"}})),
        ),
    ] {
        let array = Array::builder(&[256], DataType::Float32, &[256])
            .codecs_metadata(vec![codec, zlib.clone()])
            .create(store.clone(), &format!("/{name}"))
            .unwrap();
        array.write_region(&Region::whole(&[256]), &noise).unwrap();
        let got: Vec<f32> = array.read_region(&Region::whole(&[256])).unwrap();
        assert_eq!(got, noise, "{name}");
    }
}
