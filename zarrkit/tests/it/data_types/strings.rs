//! Strings, byte strings and structs in the model:
//! variable-length `string`/`bytes` through the planned vlen path,
//! fixed-length `fixed_length_utf32`/`null_terminated_bytes`, and `struct`
//! fields, on both store backends.

use proptest::prelude::*;
use serde_json::{Value, json};
use std::sync::Arc;
use zarrkit::codec::vlen::VlenChunk;
use zarrkit::metadata::{DataType, ExtensionObject, FillValue, JsonMap, StructField};
use zarrkit::store::{FilesystemStore, MemoryStore, Store, StoreKey, StorePrefix};
use zarrkit::{Array, Error, Region};

fn stores() -> Vec<(Arc<dyn Store>, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().unwrap();
    vec![
        (Arc::new(MemoryStore::new()), None),
        (
            Arc::new(FilesystemStore::new(dir.path()).unwrap()),
            Some(dir),
        ),
    ]
}

use crate::support::error_chain as message;

fn doc(store: &Arc<dyn Store>, key: &str) -> Value {
    serde_json::from_slice(
        &store
            .get(&StoreKey::new(key).unwrap(), None)
            .unwrap()
            .unwrap(),
    )
    .unwrap()
}

#[test]
fn strings_round_trip_across_chunks_with_partial_updates() {
    for (store, _dir) in stores() {
        let array = Array::builder(&[5, 7], DataType::String, &[2, 3])
            .fill_value_bytes(FillValue::new(b"-".to_vec()))
            .create(store.clone(), "/s")
            .unwrap();
        let d = doc(&store, "s/zarr.json");
        assert_eq!(d["data_type"], json!("string"));
        assert_eq!(d["fill_value"], json!("-"));
        assert_eq!(d["codecs"][0]["name"], json!("vlen-utf8"));

        let mut model: Vec<String> = vec!["-".into(); 35];
        // Nothing stored yet: everything is the fill value.
        assert_eq!(
            array
                .read_strings(&Region::new(vec![0, 0], vec![5, 7]))
                .unwrap(),
            model
        );
        let region = Region::new(vec![1, 2], vec![3, 4]);
        let values: Vec<String> = (0..12).map(|i| format!("é{i}{}", "x".repeat(i))).collect();
        array.write_strings(&region, &values).unwrap();
        for r in 0..3 {
            for c in 0..4 {
                model[(1 + r) * 7 + 2 + c] = values[r * 4 + c].clone();
            }
        }
        assert_eq!(
            array
                .read_strings(&Region::new(vec![0, 0], vec![5, 7]))
                .unwrap(),
            model
        );
        // A second, overlapping write keeps the first one's other elements.
        array
            .write_strings(
                &Region::new(vec![2, 0], vec![1, 7]),
                &["a", "", "b", "c", "d", "e", "f"],
            )
            .unwrap();
        for (c, v) in ["a", "", "b", "c", "d", "e", "f"].iter().enumerate() {
            model[2 * 7 + c] = (*v).to_string();
        }
        assert_eq!(
            array
                .read_strings(&Region::new(vec![0, 0], vec![5, 7]))
                .unwrap(),
            model
        );
        let sub = array
            .read_strings(&Region::new(vec![1, 3], vec![2, 2]))
            .unwrap();
        assert_eq!(
            sub,
            [
                model[10].clone(),
                model[11].clone(),
                model[17].clone(),
                model[18].clone()
            ]
        );
        // Chunk (2, 0) (row 4) was never touched: not stored.
        assert!(
            store
                .get(&StoreKey::new("s/c/2/0").unwrap(), None)
                .unwrap()
                .is_none()
        );
        assert!(
            store
                .get(&StoreKey::new("s/c/1/0").unwrap(), None)
                .unwrap()
                .is_some()
        );
        // Writing the fill value everywhere erases chunks again.
        array
            .write_strings(&Region::new(vec![0, 0], vec![5, 7]), &vec!["-"; 35])
            .unwrap();
        assert!(
            store
                .list_prefix(&StorePrefix::new("s/c/").unwrap())
                .unwrap()
                .is_empty()
        );
    }
}

#[test]
fn byte_strings_keep_arbitrary_bytes_and_strings_reject_invalid_utf8() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let bytes = Array::builder(&[4], DataType::Bytes, &[3])
        .create(store.clone(), "/b")
        .unwrap();
    let values: Vec<Vec<u8>> = vec![vec![0xff, 0], vec![], vec![1, 2, 3], vec![0]];
    bytes
        .write_byte_strings(&Region::new(vec![0], vec![4]), &values)
        .unwrap();
    assert_eq!(
        bytes
            .read_byte_strings(&Region::new(vec![0], vec![4]))
            .unwrap(),
        values
    );
    assert_eq!(doc(&store, "b/zarr.json")["data_type"], json!("bytes"));

    let strings = Array::builder(&[2], DataType::String, &[2])
        .create(store.clone(), "/s")
        .unwrap();
    let err = strings
        .write_byte_strings(&Region::new(vec![0], vec![2]), &[&b"ok"[..], &[0xff]])
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput { .. }), "{err}");
    assert!(err.to_string().contains("element 1"), "{err}");
    // Fixed-size reads of a variable-length array are refused, not garbage.
    assert!(
        strings
            .read_region_bytes(&Region::new(vec![0], vec![2]))
            .is_err()
    );
    assert!(bytes.read_strings(&Region::new(vec![0], vec![1])).is_err());
}

#[test]
fn corrupt_vlen_chunk_names_its_key() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let codecs = vec![ExtensionObject::with_configuration(
        "vlen-utf8",
        JsonMap::new(),
    )];
    let array = Array::builder(&[2], DataType::String, &[2])
        .codecs_metadata(codecs)
        .create(store.clone(), "/s")
        .unwrap();
    let corrupt = [2, 0, 0, 0, 9, 0, 0, 0, b'a', 0, 0, 0, 0];
    store
        .set(&StoreKey::new("s/c/0").unwrap(), &corrupt)
        .unwrap();
    let err = message(
        &array
            .read_strings(&Region::new(vec![0], vec![2]))
            .unwrap_err(),
    );
    assert!(err.contains("s/c/0") && err.contains("runs past"), "{err}");
    // A partial write over the corrupt chunk fails and leaves it as it was.
    assert!(
        array
            .write_strings(&Region::new(vec![0], vec![1]), &["z"])
            .is_err()
    );
    assert_eq!(
        store
            .get(&StoreKey::new("s/c/0").unwrap(), None)
            .unwrap()
            .unwrap(),
        corrupt
    );
}

#[test]
fn transpose_moves_strings_like_numbers() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut order = JsonMap::new();
    order.insert("order".into(), json!([1, 0]));
    let codecs = vec![
        ExtensionObject::with_configuration("transpose", order),
        ExtensionObject::with_configuration("vlen-utf8", JsonMap::new()),
    ];
    let array = Array::builder(&[2, 3], DataType::String, &[2, 3])
        .codecs_metadata(codecs)
        .create(store.clone(), "/t")
        .unwrap();
    let values = ["a", "b", "c", "d", "e", "f"];
    array
        .write_strings(&Region::new(vec![0, 0], vec![2, 3]), &values)
        .unwrap();
    let raw = store
        .get(&StoreKey::new("t/c/0/0").unwrap(), None)
        .unwrap()
        .unwrap();
    // Stored in the transposed (column-major) order: a d b e c f.
    let stored: Vec<u8> = raw.iter().copied().filter(u8::is_ascii_lowercase).collect();
    assert_eq!(stored, b"adbecf");
    assert_eq!(
        array
            .read_strings(&Region::new(vec![0, 0], vec![2, 3]))
            .unwrap(),
        values
    );
    // A codec that looks at element bytes cannot apply to strings.
    let bad = vec![
        ExtensionObject::with_configuration("bitround", {
            let mut c = JsonMap::new();
            c.insert("keepbits".into(), json!(3));
            c
        }),
        ExtensionObject::with_configuration("vlen-utf8", JsonMap::new()),
    ];
    let err = Array::builder(&[2], DataType::String, &[2])
        .codecs_metadata(bad)
        .create(store.clone(), "/bad")
        .unwrap_err();
    let err = message(&err);
    assert!(err.contains("variable-length"), "{err}");
}

#[test]
fn fixed_length_strings_pad_and_refuse_overflow() {
    for (store, _dir) in stores() {
        let u = Array::builder(&[3], DataType::FixedUtf32(12), &[2])
            .create(store.clone(), "/u")
            .unwrap();
        let d = doc(&store, "u/zarr.json");
        assert_eq!(
            d["data_type"],
            json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}})
        );
        assert_eq!(d["codecs"][0]["configuration"]["endian"], json!("little"));
        u.write_strings(&Region::new(vec![0], vec![3]), &["Hi", "😀é", ""])
            .unwrap();
        assert_eq!(
            u.read_strings(&Region::new(vec![0], vec![3])).unwrap(),
            ["Hi", "😀é", ""]
        );
        let raw = u.read_region_bytes(&Region::new(vec![0], vec![1])).unwrap();
        assert_eq!(
            raw[..8],
            [u32::from('H').to_ne_bytes(), u32::from('i').to_ne_bytes()].concat()
        );
        assert_eq!(raw[8..], [0; 4]);
        let err = u
            .write_strings(&Region::new(vec![0], vec![1]), &["abcd"])
            .unwrap_err();
        assert!(err.to_string().contains("more than 3 code points"), "{err}");

        let s = Array::builder(&[2], DataType::FixedBytes(3), &[2])
            .create(store.clone(), "/s")
            .unwrap();
        s.write_byte_strings(&Region::new(vec![0], vec![2]), &[&b"ab"[..], b"xyz"])
            .unwrap();
        assert_eq!(
            s.read_region_bytes(&Region::new(vec![0], vec![2])).unwrap(),
            b"ab\0xyz"
        );
        assert_eq!(
            s.read_byte_strings(&Region::new(vec![0], vec![2])).unwrap(),
            [b"ab".to_vec(), b"xyz".to_vec()]
        );
        assert!(
            s.write_byte_strings(&Region::new(vec![0], vec![1]), &[b"abcd"])
                .is_err()
        );
    }
}

#[test]
fn struct_fields_read_by_name_in_both_byte_orders() {
    let dt = DataType::Struct(vec![
        StructField::new("id", DataType::UInt16),
        StructField::new("x", DataType::Float64),
        StructField::new("tag", DataType::FixedBytes(2)),
    ]);
    for endian in ["little", "big"] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let mut c = JsonMap::new();
        c.insert("endian".into(), endian.into());
        let array = Array::builder(&[3], dt.clone(), &[2])
            .codecs_metadata(vec![ExtensionObject::with_configuration("bytes", c)])
            .create(store.clone(), "/r")
            .unwrap();
        let mut records = Vec::new();
        for i in 0..3u16 {
            records.extend(i.wrapping_mul(300).to_ne_bytes());
            records.extend((f64::from(i) * 1.5 - 1.0).to_ne_bytes());
            records.extend([b'a' + i as u8, 0]);
        }
        array
            .write_region_bytes(&Region::new(vec![0], vec![3]), &records)
            .unwrap();
        let chunk = store
            .get(&StoreKey::new("r/c/0").unwrap(), None)
            .unwrap()
            .unwrap();
        // Each field is swapped on its own: `id` 300 = 0x012c.
        let id1 = &chunk[12..14];
        assert_eq!(
            id1,
            if endian == "big" {
                [0x01, 0x2c]
            } else {
                [0x2c, 0x01]
            }
        );
        let all = Region::new(vec![0], vec![3]);
        assert_eq!(array.read_field::<u16>(&all, "id").unwrap(), [0, 300, 600]);
        assert_eq!(
            array.read_field::<f64>(&all, "x").unwrap(),
            [-1.0, 0.5, 2.0]
        );
        assert!(array.read_field::<f32>(&all, "x").is_err());
        let err = array
            .read_field::<u16>(&all, "nope")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`id`, `x`, `tag`"), "{err}");
        assert_eq!(array.read_region_bytes(&all).unwrap(), records);
        let d = doc(&store, "r/zarr.json");
        assert_eq!(d["data_type"]["name"], json!("struct"));
        assert_eq!(d["fill_value"], json!({"id": 0, "x": 0.0, "tag": ""}));
        // Reopening reads the same document back.
        let again = Array::open(store.clone(), "/r").unwrap();
        assert_eq!(again.data_type(), &dt);
    }
}

#[test]
fn concurrent_string_writes_to_shared_chunks_lose_nothing() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::builder(&[64], DataType::String, &[16])
        .create(store.clone(), "/c")
        .unwrap();
    std::thread::scope(|scope| {
        for t in 0..8u64 {
            let array = array.clone();
            scope.spawn(move || {
                // Thread t writes elements t, t+8, t+16, ...: every chunk is
                // shared by all threads.
                for i in (t..64).step_by(8) {
                    array
                        .write_strings(&Region::new(vec![i], vec![1]), &[format!("v{i}")])
                        .unwrap();
                }
            });
        }
    });
    let expected: Vec<String> = (0..64).map(|i| format!("v{i}")).collect();
    assert_eq!(
        array.read_strings(&Region::new(vec![0], vec![64])).unwrap(),
        expected
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn vlen_writes_match_an_in_memory_model(
        shape in (1u64..9, 1u64..9),
        chunks in (1u64..5, 1u64..5),
        writes in prop::collection::vec(((0u64..9, 0u64..9), (1u64..5, 1u64..5), any::<u8>()), 1..5),
    ) {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let array = Array::builder(&[shape.0, shape.1], DataType::Bytes, &[chunks.0, chunks.1])
            .create(store, "/p")
            .unwrap();
        let mut model: Vec<Vec<u8>> = vec![Vec::new(); (shape.0 * shape.1) as usize];
        for ((r0, c0), (h, w), seed) in writes {
            let (r0, c0) = (r0 % shape.0, c0 % shape.1);
            let (h, w) = (h.min(shape.0 - r0), w.min(shape.1 - c0));
            let mut data = Vec::new();
            for r in 0..h {
                for c in 0..w {
                    let v = vec![seed; ((r * w + c + u64::from(seed)) % 4) as usize];
                    model[((r0 + r) * shape.1 + c0 + c) as usize] = v.clone();
                    data.push(v);
                }
            }
            let region = Region::new(vec![r0, c0], vec![h, w]);
            array.write_vlen(&region, &VlenChunk::from_items(&data)).unwrap();
        }
        let all = array.read_byte_strings(&Region::new(vec![0, 0], vec![shape.0, shape.1])).unwrap();
        prop_assert_eq!(all, model);
    }
}
