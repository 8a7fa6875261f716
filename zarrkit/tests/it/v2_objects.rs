//! Zarr v2 object arrays (issue #4): the numcodecs object codecs
//! `vlen-array`, `json2` and `msgpack2`, the `categorize` filter, and the
//! refused `pickle`, through the `Array` API (`read_vlen_arrays`,
//! `read_json`, `read_strings`) on both store backends.

use serde_json::{Value, json};
use std::sync::Arc;
use zarrkit::metadata::{DataType, ExtensionObject, FillValue, JsonMap};
use zarrkit::store::{FilesystemStore, MemoryStore, Store, StoreKey};
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

fn codec(name: &str, configuration: Value) -> ExtensionObject {
    let Value::Object(map) = configuration else {
        panic!("not an object: {configuration}")
    };
    ExtensionObject::with_configuration(name, map)
}

fn all(shape: &[u64]) -> Region {
    Region::new(vec![0; shape.len()], shape.to_vec())
}

/// The stored bytes of a chunk.
fn chunk(store: &Arc<dyn Store>, key: &str) -> Vec<u8> {
    store
        .get(&StoreKey::new(key).unwrap(), None)
        .unwrap()
        .unwrap_or_else(|| panic!("no chunk `{key}`"))
}

#[test]
fn ragged_arrays_round_trip_across_chunks_with_partial_updates() {
    for (store, _dir) in stores() {
        let array = Array::builder(&[5], DataType::VlenArray(Box::new(DataType::Int16)), &[2])
            .codecs_metadata(vec![codec("vlen-array", json!({"dtype": ">i2"}))])
            .create(store.clone(), "/ragged")
            .unwrap();
        // Nothing stored: every element is the (empty) fill value.
        assert_eq!(
            array.read_vlen_arrays::<i16>(&all(&[5])).unwrap(),
            vec![Vec::<i16>::new(); 5]
        );
        let values: Vec<Vec<i16>> =
            vec![vec![1, -2, 3], vec![], vec![i16::MAX], vec![4, 5], vec![-1]];
        array.write_vlen_arrays(&all(&[5]), &values).unwrap();
        assert_eq!(array.read_vlen_arrays::<i16>(&all(&[5])).unwrap(), values);
        // The stored chunk is numcodecs' layout with big-endian values.
        assert_eq!(
            chunk(&store, "ragged/c/0"),
            [2, 0, 0, 0, 6, 0, 0, 0, 0, 1, 0xff, 0xfe, 0, 3, 0, 0, 0, 0]
        );
        // A write into part of a chunk keeps its other element.
        array
            .write_vlen_arrays::<i16, _>(&Region::new(vec![3], vec![1]), &[vec![9, 9, 9]])
            .unwrap();
        assert_eq!(
            array
                .read_vlen_arrays::<i16>(&Region::new(vec![2], vec![3]))
                .unwrap(),
            [vec![i16::MAX], vec![9, 9, 9], vec![-1]]
        );
        // The element type is checked.
        assert!(matches!(
            array.read_vlen_arrays::<i32>(&all(&[5])),
            Err(Error::DataTypeMismatch { .. })
        ));
        assert!(matches!(
            array.read_json(&all(&[5])),
            Err(Error::DataTypeMismatch { .. })
        ));
    }
}

#[test]
fn json_and_msgpack_objects_round_trip_in_two_dimensions() {
    let values = vec![
        json!({"b": [1, 2.5], "a": null}),
        json!("é"),
        json!(null),
        json!(-7),
        json!([true, false]),
        json!({"$bin": "AP8="}),
    ];
    for name in ["json2", "msgpack2"] {
        for (store, _dir) in stores() {
            let array = Array::builder(&[2, 3], DataType::Object, &[2, 2])
                .codecs_metadata(vec![ExtensionObject::new(name), {
                    let mut zstd = JsonMap::new();
                    zstd.insert("level".into(), 1.into());
                    codec("zstd", Value::Object(zstd))
                }])
                .create(store.clone(), "/objects")
                .unwrap();
            array.write_json(&all(&[2, 3]), &values).unwrap();
            assert_eq!(array.read_json(&all(&[2, 3])).unwrap(), values, "{name}");
            // A column across both chunks of a row.
            assert_eq!(
                array
                    .read_json(&Region::new(vec![0, 1], vec![2, 2]))
                    .unwrap(),
                [
                    values[1].clone(),
                    values[2].clone(),
                    values[4].clone(),
                    values[5].clone()
                ],
                "{name}"
            );
            // Elements never written read as null.
            array
                .write_json(&Region::new(vec![0, 2], vec![2, 1]), &[json!(1), json!(2)])
                .unwrap();
            let fresh = Array::builder(&[1, 1], DataType::Object, &[1, 1])
                .codecs_metadata(vec![ExtensionObject::new(name)])
                .create(store.clone(), "/fresh")
                .unwrap();
            assert_eq!(fresh.read_json(&all(&[1, 1])).unwrap(), [Value::Null]);
        }
    }
}

#[test]
fn json2_chunks_are_numcodecs_documents() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::builder(&[2, 2], DataType::Object, &[2, 2])
        .codecs_metadata(vec![ExtensionObject::new("json2")])
        .create(store.clone(), "/j")
        .unwrap();
    array
        .write_json(
            &all(&[2, 2]),
            &[
                json!({"z": 1, "a": "é"}),
                json!(1e20),
                json!([]),
                json!("x"),
            ],
        )
        .unwrap();
    assert_eq!(
        String::from_utf8(chunk(&store, "j/c/0/0")).unwrap(),
        r#"[[{"a":"\u00e9","z":1},1e+20],[[],"x"],"|O",[2,2]]"#
    );
}

#[test]
fn categorize_maps_strings_to_labels_for_both_string_types() {
    for (store, _dir) in stores() {
        let labels = json!(["x", "yy", "é"]);
        let strings = Array::builder(&[6], DataType::String, &[4])
            .codecs_metadata(vec![
                codec(
                    "categorize",
                    json!({"labels": labels, "dtype": "|O", "astype": "|u1"}),
                ),
                codec("bytes", json!({})),
            ])
            .create(store.clone(), "/cat")
            .unwrap();
        strings
            .write_strings(&all(&[6]), &["x", "yy", "zzz", "é", "x", ""])
            .unwrap();
        assert_eq!(chunk(&store, "cat/c/0"), [1, 2, 0, 3]);
        assert_eq!(
            strings.read_strings(&all(&[6])).unwrap(),
            ["x", "yy", "", "é", "x", ""]
        );

        let fixed = Array::builder(&[3], DataType::FixedUtf32(8), &[3])
            .codecs_metadata(vec![
                codec(
                    "numcodecs.categorize",
                    json!({"labels": labels, "dtype": "<U2", "astype": "<u2"}),
                ),
                codec("bytes", json!({"endian": "big"})),
            ])
            .create(store.clone(), "/catu")
            .unwrap();
        fixed.write_strings(&all(&[3]), &["é", "no", "yy"]).unwrap();
        assert_eq!(chunk(&store, "catu/c/0"), [0, 3, 0, 0, 0, 2]);
        assert_eq!(fixed.read_strings(&all(&[3])).unwrap(), ["é", "", "yy"]);
    }
}

/// An error and its sources, as one line.
fn message(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[test]
fn object_codecs_refuse_other_data_types_and_pickle_is_refused() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let err = Array::builder(&[2], DataType::String, &[2])
        .codecs_metadata(vec![ExtensionObject::new("json2")])
        .create(store.clone(), "/a")
        .unwrap_err();
    let text = message(&err);
    assert!(
        text.contains("json2") && text.contains("`object`"),
        "{text}"
    );
    let err = Array::builder(&[2], DataType::VlenArray(Box::new(DataType::Int32)), &[2])
        .codecs_metadata(vec![codec("vlen-array", json!({"dtype": "<i8"}))])
        .create(store.clone(), "/b")
        .unwrap_err();
    let text = message(&err);
    assert!(text.contains("vlen_array<int64>"), "{text}");
    let err = Array::builder(&[2], DataType::Object, &[2])
        .fill_value_bytes(FillValue::new(Vec::new()))
        .codecs_metadata(vec![codec("pickle", json!({"protocol": 5}))])
        .create(store, "/c")
        .unwrap_err();
    let text = message(&err);
    assert!(text.contains("arbitrary Python code"), "{text}");
    assert!(text.contains("numcodecs.VLenUTF8()"), "{text}");
}
