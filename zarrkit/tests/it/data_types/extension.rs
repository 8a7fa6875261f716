//! The registered v3 extension data types: `bfloat16`,
//! `complex_bfloat16`, `complex_float16`, `complex_float32`/`complex_float64`
//! (aliases of `complex64`/`complex128`), `numpy.datetime64` and
//! `numpy.timedelta64`: round trips through the `bytes` codec in both byte
//! orders, and interop with zarr-python (datetimes) and tensorstore
//! (`bfloat16`) via `testdata/generate/ext_dtypes_interop.py`.

use half::{bf16, f16};
use num_complex::Complex;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{DataType, ExtensionObject, JsonMap, TimeUnit};
use zarrkit::store::{FilesystemStore, MemoryStore, Store, StoreKey};
use zarrkit::{Array, Region};

fn bytes_codec(endian: &str) -> Vec<ExtensionObject> {
    let mut configuration = JsonMap::new();
    configuration.insert("endian".into(), endian.into());
    vec![ExtensionObject::with_configuration("bytes", configuration)]
}

fn whole(n: u64) -> Region {
    Region::new(vec![0], vec![n])
}

#[test]
fn complex_half_types_swap_each_component_in_big_endian_chunks() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::builder(&[2], DataType::ComplexFloat16, &[2])
        .codecs_metadata(bytes_codec("big"))
        .create(store.clone(), "/c")
        .unwrap();
    let values = [
        Complex::new(f16::from_f32(1.0), f16::from_f32(-2.0)),
        Complex::new(f16::NAN, f16::INFINITY),
    ];
    array.write_region(&whole(2), &values).unwrap();
    let chunk = store
        .get(&StoreKey::new("c/c/0").unwrap(), None)
        .unwrap()
        .unwrap();
    // Per-component swap: 1.0 = 0x3c00, -2.0 = 0xc000; a whole-element swap
    // would give 00 c0 00 3c.
    assert_eq!(chunk[..4], [0x3c, 0x00, 0xc0, 0x00]);
    assert_eq!(chunk[4..], [0x7e, 0x00, 0x7c, 0x00]);
    let back: Vec<Complex<f16>> = array.read_region(&whole(2)).unwrap();
    assert_eq!(back[0], values[0]);
    assert_eq!(back[1].im, f16::INFINITY);
    assert!(back[1].re.is_nan());

    let bf = Array::builder(&[1], DataType::ComplexBFloat16, &[1])
        .codecs_metadata(bytes_codec("big"))
        .fill_value(Complex::new(bf16::from_f32(1.0), bf16::from_f32(3.0)))
        .create(store.clone(), "/b")
        .unwrap();
    let doc: Value = serde_json::from_slice(
        &store
            .get(&StoreKey::new("b/zarr.json").unwrap(), None)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(doc["data_type"], json!("complex_bfloat16"));
    assert_eq!(doc["fill_value"], json!([1.0, 3.0]));
    let reopened = Array::open(store.clone(), "/b").unwrap();
    let fill: Vec<Complex<bf16>> = reopened.read_region(&whole(1)).unwrap();
    assert_eq!(
        fill,
        [Complex::new(bf16::from_f32(1.0), bf16::from_f32(3.0))]
    );
    bf.write_region(&whole(1), &[Complex::new(bf16::from_f32(-1.0), bf16::ZERO)])
        .unwrap();
    // bfloat16 -1.0 is 0xbf80.
    let chunk = store
        .get(&StoreKey::new("b/c/0").unwrap(), None)
        .unwrap()
        .unwrap();
    assert_eq!(chunk, [0xbf, 0x80, 0x00, 0x00]);
}

#[test]
fn elements_of_another_type_are_refused() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::builder(&[2], DataType::BFloat16, &[2])
        .create(store, "/a")
        .unwrap();
    assert!(array.read_region::<f16>(&whole(2)).is_err());
    assert!(array.read_region::<u16>(&whole(2)).is_err());
}

#[test]
fn the_complex_float32_alias_reads_as_complex64() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let doc = json!({
        "zarr_format": 3, "node_type": "array", "shape": [1],
        "data_type": "complex_float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1]}},
        "chunk_key_encoding": {"name": "default"},
        "fill_value": [1.5, -0.5],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]
    });
    store
        .set(
            &StoreKey::new("a/zarr.json").unwrap(),
            &serde_json::to_vec(&doc).unwrap(),
        )
        .unwrap();
    let array = Array::open(store, "/a").unwrap();
    assert_eq!(array.data_type(), &DataType::Complex64);
    let fill: Vec<Complex<f32>> = array.read_region(&whole(1)).unwrap();
    assert_eq!(fill, [Complex::new(1.5, -0.5)]);
}

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

fn run(python: &Path, mode: &str, dir: &Path) -> String {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/generate/ext_dtypes_interop.py");
    let output = Command::new(python)
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

#[test]
fn reads_datetimes_from_zarr_python_and_bfloat16_from_tensorstore() {
    let Some(python) = reference_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    run(&python, "write", dir.path());
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path()).unwrap());

    let dt = Array::open(store.clone(), "/dt").unwrap();
    assert_eq!(
        dt.data_type(),
        &DataType::NumpyDateTime64 {
            unit: TimeUnit::Microsecond,
            scale_factor: 10
        }
    );
    let values: Vec<i64> = dt.read_region(&whole(6)).unwrap();
    assert_eq!(values, [0, 1, -5, i64::MIN, i64::MIN, i64::MIN]);

    let td = Array::open(store.clone(), "/td").unwrap();
    assert_eq!(
        td.data_type(),
        &DataType::NumpyTimeDelta64 {
            unit: TimeUnit::Second,
            scale_factor: 1
        }
    );
    let values: Vec<i64> = td.read_region(&whole(3)).unwrap();
    assert_eq!(values, [1, -2, 7]);

    let bf = Array::open(store, "/bf").unwrap();
    assert_eq!(bf.data_type(), &DataType::BFloat16);
    let values: Vec<bf16> = bf.read_region(&whole(5)).unwrap();
    let bits: Vec<u16> = values.iter().map(|v| v.to_bits()).collect();
    assert_eq!(bits, [0x3f80, 0xc020, 0x4049, 0x7f80, 0x3fc0]);
}

#[test]
fn zarr_python_and_tensorstore_read_what_zarrkit_writes() {
    let Some(python) = reference_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path()).unwrap());
    let minute = DataType::NumpyDateTime64 {
        unit: TimeUnit::Minute,
        scale_factor: 15,
    };
    let dt = Array::builder(&[3], minute, &[2])
        .codecs_metadata(bytes_codec("big"))
        .fill_value(i64::MIN)
        .create(store.clone(), "/dt")
        .unwrap();
    dt.write_region(&Region::new(vec![0], vec![2]), &[4i64, -1])
        .unwrap();
    let td = Array::builder(
        &[2],
        DataType::NumpyTimeDelta64 {
            unit: TimeUnit::Microsecond,
            scale_factor: 1,
        },
        &[2],
    )
    .fill_value(-3i64)
    .create(store.clone(), "/td")
    .unwrap();
    td.write_region(&Region::new(vec![0], vec![1]), &[i64::MIN])
        .unwrap();
    let bf = Array::builder(&[3], DataType::BFloat16, &[2])
        .codecs_metadata(bytes_codec("big"))
        .fill_value(bf16::from_bits(0x7fc0))
        .create(store, "/bf")
        .unwrap();
    bf.write_region(
        &Region::new(vec![0], vec![2]),
        &[bf16::from_bits(0x4049), bf16::from_bits(0x8001)],
    )
    .unwrap();

    let out: Value = serde_json::from_str(&run(&python, "read", dir.path())).unwrap();
    assert_eq!(
        out["dt"],
        json!({"dtype": "datetime64[15m]", "fill": i64::MIN, "values": [4, -1, i64::MIN]})
    );
    assert_eq!(
        out["td"],
        json!({"dtype": "timedelta64[us]", "fill": -3, "values": [i64::MIN, -3]})
    );
    assert_eq!(out["bf_tensorstore"], json!([0x4049, 0x8001, 0x7fc0]));
}

#[test]
fn v2_maps_datetimes_to_m8_and_refuses_bfloat16_by_name() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let dt = DataType::NumpyDateTime64 {
        unit: TimeUnit::Nanosecond,
        scale_factor: 1,
    };
    let array = Array::builder(&[2], dt.clone(), &[2])
        .format(ZarrFormat::V2)
        .fill_value(i64::MIN)
        .create(store.clone(), "/t")
        .unwrap();
    array.write_region(&whole(2), &[1i64, 2]).unwrap();
    let doc: Value = serde_json::from_slice(
        &store
            .get(&StoreKey::new("t/.zarray").unwrap(), None)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(doc["dtype"], json!("<M8[ns]"));
    // zarr-python 2 writes M8 fill values as their integer count.
    assert_eq!(doc["fill_value"], json!(i64::MIN));
    let reopened = Array::open(store.clone(), "/t").unwrap();
    assert_eq!(reopened.data_type(), &dt);
    assert_eq!(reopened.read_region::<i64>(&whole(2)).unwrap(), [1, 2]);

    for data_type in [
        DataType::BFloat16,
        DataType::ComplexFloat16,
        DataType::ComplexBFloat16,
    ] {
        let name = data_type.name();
        let err = Array::builder(&[2], data_type, &[2])
            .format(ZarrFormat::V2)
            .create(store.clone(), "/x")
            .unwrap_err();
        let mut chain = err.to_string();
        let mut source = std::error::Error::source(&err);
        while let Some(cause) = source {
            chain.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        assert!(chain.contains(&format!("`{name}`")), "{name}: {chain}");
    }
}
