//! The registered v3 extension codecs (`bitround`, `reshape`, `packbits`,
//! `scale_offset`, `cast_value`):
//! whole arrays through the chain, metadata round trips through
//! `zarr.json`, and bad configurations refused at open.
//!
//! Interop: zarr-python 3.1.6 and tensorstore 0.1.86 implement none of
//! these codecs under their v3 extension names, so there is no
//! cross-implementation test yet.

use serde_json::{Value, json};
use std::sync::Arc;
use zarrkit::metadata::{DataType, ExtensionObject, JsonMap};
use zarrkit::store::{MemoryStore, Store, StoreKey};
use zarrkit::{Array, Region};

fn ext(name: &str, configuration: Value) -> ExtensionObject {
    let Value::Object(map) = configuration else {
        panic!("configuration must be an object");
    };
    ExtensionObject::with_configuration(name, map)
}

fn bytes_codec() -> ExtensionObject {
    let mut c = JsonMap::new();
    c.insert("endian".into(), "little".into());
    ExtensionObject::with_configuration("bytes", c)
}

fn zarr_json(store: &MemoryStore, path: &str) -> Value {
    let raw = store
        .get(&StoreKey::new(format!("{path}/zarr.json")).unwrap(), None)
        .unwrap()
        .unwrap();
    serde_json::from_slice(&raw).unwrap()
}

use crate::support::error_chain;

#[test]
fn bitround_rounds_integers_on_write_and_reopens_from_zarr_json() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[6], DataType::UInt16, &[4])
        .codecs_metadata(vec![ext("bitround", json!({"keepbits": 2})), bytes_codec()])
        .create(store.clone(), "/b")
        .unwrap();
    array
        .write_region(&Region::whole(&[6]), &[5u16, 6, 7, 1000, 1, 0])
        .unwrap();
    let reopened = Array::open(store.clone(), "/b").unwrap();
    let got: Vec<u16> = reopened.read_region(&Region::whole(&[6])).unwrap();
    // 5 = 0b101 -> 0b100 (half to even), 6 = 0b110 stays, 7 = 0b111 -> 0b1000,
    // 1000 = 0b11_1110_1000 -> 0b100_0000_0000.
    assert_eq!(got, [4, 6, 8, 1024, 1, 0]);
    assert_eq!(
        zarr_json(&store, "b")["codecs"][0],
        json!({"name": "bitround", "configuration": {"keepbits": 2}})
    );
}

#[test]
fn bitround_rounds_float_mantissas() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[3], DataType::Float64, &[3])
        .codecs_metadata(vec![ext("bitround", json!({"keepbits": 1})), bytes_codec()])
        .create(store, "/f")
        .unwrap();
    array
        .write_region(&Region::whole(&[3]), &[1.2f64, 1.3, -2.9])
        .unwrap();
    let got: Vec<f64> = array.read_region(&Region::whole(&[3])).unwrap();
    assert_eq!(got, [1.0, 1.5, -3.0]);
}

#[test]
fn reshape_then_transpose_round_trips_and_changes_the_stored_order() {
    let store = Arc::new(MemoryStore::new());
    // Chunks of [2, 3, 2] become [6, 2], then transposed to [2, 6].
    let array = Array::builder(&[2, 3, 2], DataType::UInt8, &[2, 3, 2])
        .codecs_metadata(vec![
            ext("reshape", json!({"shape": [[0, 1], [2]]})),
            ext("transpose", json!({"order": [1, 0]})),
            bytes_codec(),
        ])
        .create(store.clone(), "/r")
        .unwrap();
    let data: Vec<u8> = (0..12).collect();
    array
        .write_region(&Region::whole(&[2, 3, 2]), &data)
        .unwrap();
    let reopened = Array::open(store.clone(), "/r").unwrap();
    let got: Vec<u8> = reopened.read_region(&Region::whole(&[2, 3, 2])).unwrap();
    assert_eq!(got, data);
    let chunk = store
        .get(&StoreKey::new("r/c/0/0/0").unwrap(), None)
        .unwrap()
        .unwrap();
    // The transpose of the 6x2 matrix: even elements, then odd ones.
    assert_eq!(chunk, [0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11]);
    assert_eq!(
        zarr_json(&store, "r")["codecs"][0],
        json!({"name": "reshape", "configuration": {"shape": [[0, 1], [2]]}})
    );
}

#[test]
fn bad_extension_configurations_are_refused_naming_the_codec() {
    let store = Arc::new(MemoryStore::new());
    for (codec, why) in [
        (ext("bitround", json!({"keepbits": 0})), "bitround"),
        (ext("bitround", json!({"keepbits": "x"})), "bitround"),
        (ext("reshape", json!({"shape": [[1], [0]]})), "reshape"),
        (ext("reshape", json!({"shape": [5]})), "reshape"),
        (
            ext("packbits", json!({"first_bit": 3, "last_bit": 2})),
            "packbits",
        ),
        (ext("scale_offset", json!({"scale": "x"})), "scale_offset"),
        (ext("scale_offset", json!({"scale": 0})), "scale_offset"),
        (
            ext("cast_value", json!({"data_type": "bool"})),
            "cast_value",
        ),
        // The fill value 0 as int8 is fine; 300 is not a uint8 value.
        (
            ext(
                "cast_value",
                json!({"data_type": "int8", "scalar_map": {"encode": [[0, 300]]}}),
            ),
            "cast_value",
        ),
        // uint8 has no bit 8.
        (ext("packbits", json!({"last_bit": 8})), "packbits"),
    ] {
        let err = Array::builder(&[4, 3], DataType::UInt8, &[4, 3])
            .codecs_metadata(if codec.name == "packbits" {
                vec![codec]
            } else {
                vec![codec, bytes_codec()]
            })
            .create(store.clone(), "/bad")
            .unwrap_err();
        let chain = error_chain(&err);
        assert!(chain.contains(&format!("`{why}`")), "{why}: {chain}");
    }
}

#[test]
fn packbits_stores_int4_range_values_in_half_bytes() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[5], DataType::Int8, &[5])
        .codecs_metadata(vec![ext(
            "packbits",
            json!({"padding_encoding": "first_byte", "last_bit": 3}),
        )])
        .create(store.clone(), "/p")
        .unwrap();
    array
        .write_region(&Region::whole(&[5]), &[-1i8, 7, -8, 1, 3])
        .unwrap();
    let chunk = store
        .get(&StoreKey::new("p/c/0").unwrap(), None)
        .unwrap()
        .unwrap();
    // 20 bits: 4 padding bits, then nibbles low first: F,7 | 8,1 | 3.
    assert_eq!(chunk, [4, 0x7F, 0x18, 0x03]);
    let reopened = Array::open(store.clone(), "/p").unwrap();
    let got: Vec<i8> = reopened.read_region(&Region::whole(&[5])).unwrap();
    assert_eq!(got, [-1, 7, -8, 1, 3]);
    assert_eq!(
        zarr_json(&store, "p")["codecs"][0],
        json!({"name": "packbits", "configuration": {"padding_encoding": "first_byte", "last_bit": 3}})
    );
    // A truncated chunk is an error naming the codec, not a panic.
    store
        .set(&StoreKey::new("p/c/0").unwrap(), &[4, 0x7F])
        .unwrap();
    let err = reopened
        .read_region::<i8>(&Region::whole(&[5]))
        .unwrap_err();
    assert!(
        error_chain(&err).contains("packbits"),
        "{}",
        error_chain(&err)
    );
}

#[test]
fn packbits_packs_bools_eight_to_a_byte() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[10], DataType::Bool, &[10])
        .codecs_metadata(vec![ext("packbits", json!({}))])
        .create(store.clone(), "/q")
        .unwrap();
    let data = [
        true, false, true, true, false, false, false, false, true, true,
    ];
    array.write_region(&Region::whole(&[10]), &data).unwrap();
    let chunk = store
        .get(&StoreKey::new("q/c/0").unwrap(), None)
        .unwrap()
        .unwrap();
    assert_eq!(chunk, [0b0000_1101, 0b0000_0011]);
    let got: Vec<bool> = array.read_region(&Region::whole(&[10])).unwrap();
    assert_eq!(got, data);
}

#[test]
fn scale_offset_shifts_stored_values_and_the_fill_value() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[4], DataType::UInt16, &[2])
        .fill_value(1000u16)
        .codecs_metadata(vec![
            ext("scale_offset", json!({"offset": 1000})),
            bytes_codec(),
        ])
        .create(store.clone(), "/s")
        .unwrap();
    array
        .write_region(&Region::new(vec![0], vec![2]), &[1000u16, 1255])
        .unwrap();
    let chunk = store
        .get(&StoreKey::new("s/c/0").unwrap(), None)
        .unwrap()
        .unwrap();
    assert_eq!(chunk, [0, 0, 255, 0]);
    let reopened = Array::open(store.clone(), "/s").unwrap();
    let got: Vec<u16> = reopened.read_region(&Region::whole(&[4])).unwrap();
    assert_eq!(got, [1000, 1255, 1000, 1000]);
    // Values below the offset do not fit uint16 after subtracting it.
    let err = reopened
        .write_region(&Region::new(vec![2], vec![1]), &[5u16])
        .unwrap_err();
    assert!(
        error_chain(&err).contains("scale_offset"),
        "{}",
        error_chain(&err)
    );
    assert_eq!(
        zarr_json(&store, "s")["codecs"][0],
        json!({"name": "scale_offset", "configuration": {"offset": 1000}})
    );
}

#[test]
fn readme_uint16_range_reduction_stores_one_byte_per_element() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[3], DataType::UInt16, &[3])
        .fill_value(1000u16)
        .codecs_metadata(vec![
            ext("scale_offset", json!({"offset": 1000})),
            ext("cast_value", json!({"data_type": "uint8"})),
            bytes_codec(),
        ])
        .create(store.clone(), "/u")
        .unwrap();
    array
        .write_region(&Region::whole(&[3]), &[1000u16, 1017, 1255])
        .unwrap();
    let chunk = store
        .get(&StoreKey::new("u/c/0").unwrap(), None)
        .unwrap()
        .unwrap();
    assert_eq!(chunk, [0, 17, 255]);
    let reopened = Array::open(store.clone(), "/u").unwrap();
    let got: Vec<u16> = reopened.read_region(&Region::whole(&[3])).unwrap();
    assert_eq!(got, [1000, 1017, 1255]);
    // 1256 - 1000 = 256 does not fit uint8 and no out_of_range rule is set.
    let err = reopened
        .write_region(&Region::new(vec![0], vec![1]), &[1256u16])
        .unwrap_err();
    assert!(
        error_chain(&err).contains("cast_value"),
        "{}",
        error_chain(&err)
    );
}

#[test]
fn readme_float64_to_uint8_keeps_nan_as_zero() {
    let store = Arc::new(MemoryStore::new());
    let array = Array::builder(&[4], DataType::Float64, &[4])
        .fill_value(f64::NAN)
        .codecs_metadata(vec![
            ext("scale_offset", json!({"offset": -10, "scale": 0.1})),
            ext(
                "cast_value",
                json!({
                    "data_type": "uint8",
                    "rounding": "nearest-even",
                    "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}
                }),
            ),
            bytes_codec(),
        ])
        .create(store.clone(), "/n")
        .unwrap();
    array
        .write_region(&Region::whole(&[4]), &[0.0f64, 2540.0, f64::NAN, 1234.0])
        .unwrap();
    let chunk = store
        .get(&StoreKey::new("n/c/0").unwrap(), None)
        .unwrap()
        .unwrap();
    // (x + 10) * 0.1: 1, 255, NaN -> 0, 124.4 -> 124.
    assert_eq!(chunk, [1, 255, 0, 124]);
    let got: Vec<f64> = Array::open(store.clone(), "/n")
        .unwrap()
        .read_region(&Region::whole(&[4]))
        .unwrap();
    assert!(
        (got[0] - 0.0).abs() < 1e-9 && (got[1] - 2540.0).abs() < 1e-9,
        "{got:?}"
    );
    assert!(got[2].is_nan());
    assert!((got[3] - 1230.0).abs() < 1e-9, "{got:?}");
}
