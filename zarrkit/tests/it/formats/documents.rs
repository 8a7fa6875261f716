//! Format documents ↔ the internal model: real documents, every error case,
//! round-trip properties and never panicking on bad input.

use proptest::prelude::*;
use serde_json::{Value, json};
use std::path::PathBuf;
use zarrkit::format::v3;
use zarrkit::metadata::{
    ArrayMetadata, ChunkGrid, ChunkKeyEncoding, DataType, ExtensionObject, FillValue,
    GroupMetadata, JsonMap, MetadataError, NodeMetadata, Separator,
};

/// A valid array document to break one field at a time.
fn array_document() -> Value {
    json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": [10, 20],
        "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 5]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": [{"name": "bytes"}],
    })
}

fn parse(document: &Value) -> Result<NodeMetadata, MetadataError> {
    v3::parse_node(document.to_string().as_bytes())
}

fn parse_array(document: &Value) -> ArrayMetadata {
    match parse(document) {
        Ok(NodeMetadata::Array(array)) => array,
        other => panic!("expected an array, got {other:?}"),
    }
}

fn parse_group(document: &Value) -> GroupMetadata {
    match parse(document) {
        Ok(NodeMetadata::Group(group)) => group,
        other => panic!("expected a group, got {other:?}"),
    }
}

/// The error message for `document` with `field` set to `value`.
fn error_with(field: &str, value: Value) -> String {
    let mut document = array_document();
    document[field] = value;
    match parse(&document) {
        Ok(node) => panic!("`{field}`: expected an error, parsed {node:?}"),
        Err(err) => err.to_string(),
    }
}

fn assert_contains(message: &str, needle: &str) {
    assert!(
        message.contains(needle),
        "`{message}` does not contain `{needle}`"
    );
}

fn as_json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("serialize_node writes JSON")
}

// ---------------------------------------------------------------------------
// Documents written by zarr-python and tensorstore

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/metadata/v3")
}

fn fixture(name: &str) -> NodeMetadata {
    let bytes = std::fs::read(fixture_dir().join(format!("{name}.json"))).unwrap();
    v3::parse_node(&bytes).unwrap_or_else(|err| panic!("{name}: {err}"))
}

fn fixture_array(name: &str) -> ArrayMetadata {
    match fixture(name) {
        NodeMetadata::Array(array) => array,
        NodeMetadata::Group(_) => panic!("{name} is a group"),
    }
}

#[test]
fn every_reference_document_parses_and_round_trips() {
    let mut count = 0;
    for entry in std::fs::read_dir(fixture_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let node = v3::parse_node(&std::fs::read(&path).unwrap())
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        let written = v3::serialize_node(&node);
        assert_eq!(v3::parse_node(&written).unwrap(), node, "{name}");
        // `<writer>-<data type>-default-fill`: the data type is in the name
        // and the fill value is zero.
        if let Some(stem) = name.strip_suffix("-default-fill") {
            let NodeMetadata::Array(array) = &node else {
                panic!("{name} is a group");
            };
            let data_type = stem.split_once('-').unwrap().1;
            assert_eq!(array.data_type.name(), data_type, "{name}");
            assert_eq!(
                array.fill_value,
                FillValue::zero(&array.data_type),
                "{name}"
            );
        }
        count += 1;
    }
    // 14 core types from each writer, plus the special cases.
    assert!(count >= 40, "only {count} documents found");
}

#[test]
fn reference_fill_values_have_the_expected_bits() {
    let cases: [(&str, Vec<u8>); 9] = [
        (
            "zarr_python-float32-nan",
            0x7fc0_0000_u32.to_ne_bytes().to_vec(),
        ),
        (
            "zarr_python-float64-infinity",
            f64::INFINITY.to_ne_bytes().to_vec(),
        ),
        (
            "zarr_python-float16-negative-infinity",
            0xfc00_u16.to_ne_bytes().to_vec(),
        ),
        (
            "zarr_python-float32-one-tenth",
            0.1f32.to_ne_bytes().to_vec(),
        ),
        (
            "zarr_python-float64-negative-zero",
            (-0.0f64).to_ne_bytes().to_vec(),
        ),
        ("zarr_python-bool-true", vec![1]),
        (
            "zarr_python-uint64-maximum",
            u64::MAX.to_ne_bytes().to_vec(),
        ),
        ("zarr_python-int64-minimum", i64::MIN.to_ne_bytes().to_vec()),
        (
            "tensorstore-float64-nan-payload",
            0x7ff0_0000_0000_0001_u64.to_ne_bytes().to_vec(),
        ),
    ];
    for (name, bytes) in cases {
        assert_eq!(fixture_array(name).fill_value.as_bytes(), bytes, "{name}");
    }
    for name in [
        "zarr_python-complex128-nan-negative-infinity",
        "tensorstore-complex128-nan-negative-infinity",
    ] {
        let mut bytes = 0x7ff8_0000_0000_0000_u64.to_ne_bytes().to_vec();
        bytes.extend(f64::NEG_INFINITY.to_ne_bytes());
        assert_eq!(fixture_array(name).fill_value.as_bytes(), bytes, "{name}");
    }
    let mut bytes = 1.0f32.to_ne_bytes().to_vec();
    bytes.extend(2.0f32.to_ne_bytes());
    assert_eq!(
        fixture_array("zarr_python-complex64-one-two")
            .fill_value
            .as_bytes(),
        bytes
    );
}

#[test]
fn a_nan_payload_is_written_back_as_hex() {
    let array = fixture_array("tensorstore-float64-nan-payload");
    let written = as_json(&v3::serialize_node(&NodeMetadata::Array(array)));
    assert_eq!(written["fill_value"], json!("0x7ff0000000000001"));
}

#[test]
fn reference_documents_keep_names_keys_codecs_and_attributes() {
    let array = fixture_array("zarr_python-dimension-names-with-null");
    assert_eq!(
        array.dimension_names,
        Some(vec![Some("z".to_string()), None, Some("x".to_string())])
    );
    assert_eq!(array.attributes["nested"], json!({"a": [1, 2.5, null]}));
    assert_eq!(array.shape, [3, 4, 5]);

    let array = fixture_array("zarr_python-zero-dimensional-v2-keys");
    assert!(array.shape.is_empty());
    assert_eq!(
        array.chunk_key_encoding,
        ChunkKeyEncoding::V2 {
            separator: Separator::Dot
        }
    );
    assert_eq!(array.fill_value.as_bytes(), 1.5f64.to_ne_bytes());

    let array = fixture_array("tensorstore-v2-keys-dimension-names");
    // tensorstore writes `{"name": "v2"}` with no configuration: `.` by default.
    assert_eq!(
        array.chunk_key_encoding,
        ChunkKeyEncoding::V2 {
            separator: Separator::Dot
        }
    );

    let array = fixture_array("zarr_python-zero-length-dimension");
    assert_eq!(array.shape, [0, 7]);
    assert_eq!(array.chunk_grid, ChunkGrid::regular(&[3, 7]).unwrap());

    let array = fixture_array("zarr_python-sharded-gzip");
    assert_eq!(array.codecs.len(), 1);
    assert_eq!(array.codecs[0].name, "sharding_indexed");
    let inner = &array.codecs[0].configuration.as_ref().unwrap()["codecs"];
    assert_eq!(
        inner[1],
        json!({"name": "gzip", "configuration": {"level": 3}})
    );
    assert!(array.storage_transformers.is_empty());

    let array = fixture_array("tensorstore-zero-dimensional-sharded");
    assert_eq!(array.codecs[0].name, "sharding_indexed");
    assert_eq!(array.chunk_grid.ndim(), 0);
}

#[test]
fn consolidated_metadata_is_kept_and_written_back() {
    let NodeMetadata::Group(group) = fixture("zarr_python-group-consolidated") else {
        panic!("not a group");
    };
    assert_eq!(group.attributes["title"], json!("example"));
    let consolidated = group.extra_fields["consolidated_metadata"].clone();
    assert_eq!(consolidated["kind"], json!("inline"));
    assert_eq!(
        consolidated["metadata"]["child"]["data_type"],
        json!("uint8")
    );
    let written = as_json(&v3::serialize_node(&NodeMetadata::Group(group)));
    assert_eq!(written["consolidated_metadata"], consolidated);
}

// ---------------------------------------------------------------------------
// Canonical writing

#[test]
fn arrays_are_written_in_canonical_key_order() {
    let mut document = array_document();
    document["dimension_names"] = json!(["y", null]);
    document["attributes"] = json!({"b": 1, "a": 2});
    document["storage_transformers"] = json!([]);
    document["zz_extension"] = json!({"must_understand": false, "x": 1});
    let node = parse(&document).unwrap();
    let written = String::from_utf8(v3::serialize_node(&node)).unwrap();
    let expected = r#"{
  "zarr_format": 3,
  "node_type": "array",
  "shape": [
    10,
    20
  ],
  "data_type": "uint8",
  "chunk_grid": {
    "name": "regular",
    "configuration": {
      "chunk_shape": [
        5,
        5
      ]
    }
  },
  "chunk_key_encoding": {
    "name": "default",
    "configuration": {
      "separator": "/"
    }
  },
  "fill_value": 0,
  "codecs": [
    {
      "name": "bytes"
    }
  ],
  "dimension_names": [
    "y",
    null
  ],
  "attributes": {
    "b": 1,
    "a": 2
  },
  "zz_extension": {
    "must_understand": false,
    "x": 1
  }
}"#;
    assert_eq!(written, expected);
}

#[test]
fn groups_always_write_attributes() {
    let node = parse(&json!({"node_type": "group", "zarr_format": 3})).unwrap();
    assert_eq!(
        String::from_utf8(v3::serialize_node(&node)).unwrap(),
        "{\n  \"zarr_format\": 3,\n  \"node_type\": \"group\",\n  \"attributes\": {}\n}"
    );
}

// ---------------------------------------------------------------------------
// Accepted variations

#[test]
fn short_hand_and_object_forms_are_accepted() {
    let mut document = array_document();
    document["data_type"] = json!({"name": "uint8"});
    document["chunk_key_encoding"] = json!("v2");
    document["codecs"] = json!(["bytes", {"name": "crc32c", "must_understand": true}]);
    let array = parse_array(&document);
    assert_eq!(array.data_type, DataType::UInt8);
    assert_eq!(
        array.chunk_key_encoding,
        ChunkKeyEncoding::V2 {
            separator: Separator::Dot
        }
    );
    assert_eq!(
        array.codecs,
        [
            ExtensionObject::new("bytes"),
            ExtensionObject::new("crc32c")
        ]
    );
}

#[test]
fn null_dimension_names_mean_no_names() {
    let mut document = array_document();
    document["dimension_names"] = Value::Null;
    assert_eq!(parse_array(&document).dimension_names, None);
}

#[test]
fn null_consolidated_metadata_on_a_group_is_dropped() {
    // zarr-python 3.0.0 to 3.1.3 wrote this into every group.
    let group = parse_group(&json!({
        "attributes": {},
        "zarr_format": 3,
        "consolidated_metadata": null,
        "node_type": "group",
    }));
    assert!(group.extra_fields.is_empty());
}

#[test]
fn ignorable_top_level_fields_are_kept_and_written_back() {
    let mut document = array_document();
    let field = json!({"must_understand": false, "data": [1, 2]});
    document["my_extension"] = field.clone();
    let array = parse_array(&document);
    assert_eq!(array.extra_fields["my_extension"], field);
    let written = as_json(&v3::serialize_node(&NodeMetadata::Array(array)));
    assert_eq!(written["my_extension"], field);

    let group = parse_group(&json!({
        "zarr_format": 3, "node_type": "group", "other": {"must_understand": false}
    }));
    assert_eq!(
        group.extra_fields["other"],
        json!({"must_understand": false})
    );
}

#[test]
fn ignorable_storage_transformers_are_kept() {
    let mut document = array_document();
    document["storage_transformers"] = json!([{"name": "cache", "must_understand": false}]);
    let array = parse_array(&document);
    assert_eq!(array.storage_transformers.len(), 1);
    assert!(!array.storage_transformers[0].must_understand);
    let written = as_json(&v3::serialize_node(&NodeMetadata::Array(array)));
    assert_eq!(
        written["storage_transformers"],
        json!([{"name": "cache", "must_understand": false}])
    );
}

#[test]
fn integral_float_fill_values_are_accepted_for_integer_types() {
    let mut document = array_document();
    document["fill_value"] = json!(5.0);
    assert_eq!(parse_array(&document).fill_value.as_bytes(), [5]);
}

// ---------------------------------------------------------------------------
// Errors

#[test]
fn invalid_json_is_reported() {
    let err = v3::parse_node(b"{\"zarr_format\": 3,").unwrap_err();
    assert!(matches!(err, MetadataError::Json(_)));
    assert_eq!(err.to_string(), "invalid JSON");
}

#[test]
fn deeply_nested_json_is_an_error_not_a_stack_overflow() {
    let mut bytes = vec![b'['; 100_000];
    bytes.extend(vec![b']'; 100_000]);
    assert!(matches!(
        v3::parse_node(&bytes),
        Err(MetadataError::Json(_))
    ));
}

#[test]
fn a_document_that_is_not_an_object_is_rejected() {
    for document in [json!([]), json!(3), json!("zarr"), json!(null)] {
        assert_eq!(
            parse(&document).unwrap_err().to_string(),
            "the document is not a JSON object"
        );
    }
}

#[test]
fn each_missing_required_field_is_named() {
    for field in [
        "zarr_format",
        "node_type",
        "shape",
        "data_type",
        "chunk_grid",
        "chunk_key_encoding",
        "fill_value",
        "codecs",
    ] {
        let mut document = array_document();
        document.as_object_mut().unwrap().remove(field);
        let message = parse(&document).unwrap_err().to_string();
        assert_eq!(message, format!("missing required field `{field}`"));
    }
}

#[test]
fn other_zarr_formats_are_rejected() {
    assert_eq!(
        error_with("zarr_format", json!(2)),
        "unsupported `zarr_format` `2` (expected 3)"
    );
    assert_eq!(
        error_with("zarr_format", json!("3")),
        "unsupported `zarr_format` `\"3\"` (expected 3)"
    );
}

#[test]
fn an_unknown_node_type_is_rejected() {
    let message = error_with("node_type", json!("Array"));
    assert_contains(&message, "`node_type`");
    assert_contains(&message, "`\"Array\"`");
}

#[test]
fn negative_and_fractional_shapes_are_rejected() {
    for shape in [json!([-1, 4]), json!([1.5, 4]), json!("10"), json!([null])] {
        assert_contains(&error_with("shape", shape), "field `shape` is invalid");
    }
}

#[test]
fn a_chunk_shape_of_another_length_is_rejected() {
    let message = error_with(
        "chunk_grid",
        json!({"name": "regular", "configuration": {"chunk_shape": [5]}}),
    );
    assert_eq!(message, "`chunk_grid` has 1 dimensions but `shape` has 2");
}

#[test]
fn zero_and_missing_chunk_lengths_are_rejected() {
    let message = error_with(
        "chunk_grid",
        json!({"name": "regular", "configuration": {"chunk_shape": [5, 0]}}),
    );
    assert_contains(&message, "`chunk_grid.configuration.chunk_shape`");
    assert_contains(&message, "positive integers");
    assert_eq!(
        error_with(
            "chunk_grid",
            json!({"name": "regular", "configuration": {}})
        ),
        "missing required field `chunk_grid.configuration.chunk_shape`"
    );
    assert_eq!(
        error_with("chunk_grid", json!("regular")),
        "missing required field `chunk_grid.configuration`"
    );
}

#[test]
fn unknown_extensions_are_unsupported() {
    assert_eq!(
        error_with("data_type", json!("float128")),
        "unsupported data type `float128`"
    );
    assert_eq!(
        error_with(
            "data_type",
            json!({"name": "float8_e4m3fn", "configuration": {"unit": "s"}})
        ),
        // tensorstore's `float8_e4m3fn` is not the registered `float8_e4m3`.
        "unsupported data type `float8_e4m3fn`"
    );
    // A supported extension data type with a bad configuration says what is wrong.
    assert_eq!(
        error_with(
            "data_type",
            json!({"name": "numpy.datetime64", "configuration": {"unit": "s"}})
        ),
        "missing required field `data_type.configuration.scale_factor`"
    );
    assert_eq!(
        error_with(
            "chunk_grid",
            json!({"name": "variable", "configuration": {}})
        ),
        "unsupported chunk grid `variable`"
    );
    // A supported grid with a bad configuration says what is missing.
    assert_eq!(
        error_with(
            "chunk_grid",
            json!({"name": "rectilinear", "configuration": {}})
        ),
        "missing required field `chunk_grid.configuration.kind`"
    );
    assert_eq!(
        error_with("chunk_key_encoding", json!({"name": "v1"})),
        "unsupported chunk key encoding `v1`"
    );
    assert_eq!(
        error_with("storage_transformers", json!([{"name": "sharding"}])),
        "unsupported storage transformer `sharding`"
    );
}

#[test]
fn a_bad_separator_is_rejected() {
    let message = error_with(
        "chunk_key_encoding",
        json!({"name": "default", "configuration": {"separator": "-"}}),
    );
    assert_contains(&message, "`chunk_key_encoding.configuration.separator`");
    assert_contains(&message, "`\"-\"`");
}

#[test]
fn out_of_range_fill_values_are_rejected() {
    assert_eq!(
        error_with("fill_value", json!(256)),
        "fill value `256` is invalid for data type `uint8`"
    );
    assert_eq!(
        error_with("fill_value", json!(-1)),
        "fill value `-1` is invalid for data type `uint8`"
    );
    let mut document = array_document();
    document["data_type"] = json!("int32");
    document["fill_value"] = json!(5.5);
    assert_eq!(
        parse(&document).unwrap_err().to_string(),
        "fill value `5.5` is invalid for data type `int32`"
    );
}

#[test]
fn hex_fill_values_of_the_wrong_width_are_rejected() {
    let mut document = array_document();
    document["data_type"] = json!("float32");
    document["fill_value"] = json!("0x7ff8000000000000");
    assert_eq!(
        parse(&document).unwrap_err().to_string(),
        "fill value `\"0x7ff8000000000000\"` is invalid for data type `float32`"
    );
    document["fill_value"] = json!("0x7fc00000");
    assert!(parse(&document).is_ok());
}

#[test]
fn unknown_top_level_fields_must_opt_out() {
    for value in [
        json!(1),
        json!({"x": 1}),
        json!({"must_understand": true}),
        json!({"must_understand": "false"}),
    ] {
        assert_eq!(
            error_with("my_extension", value),
            "unknown field `my_extension` (it does not say `\"must_understand\": false`)"
        );
    }
    let err = parse(&json!({
        "zarr_format": 3, "node_type": "group",
        "consolidated_metadata": {"kind": "inline", "metadata": {}}
    }))
    .unwrap_err();
    assert_contains(&err.to_string(), "unknown field `consolidated_metadata`");
}

#[test]
fn must_understand_false_is_refused_where_the_spec_forbids_it() {
    for (field, value) in [
        (
            "data_type",
            json!({"name": "uint8", "must_understand": false}),
        ),
        (
            "chunk_grid",
            json!({"name": "regular", "configuration": {"chunk_shape": [5, 5]}, "must_understand": false}),
        ),
        (
            "chunk_key_encoding",
            json!({"name": "default", "must_understand": false}),
        ),
    ] {
        let message = error_with(field, value);
        assert_contains(&message, &format!("`{field}.must_understand`"));
    }
}

#[test]
fn dimension_names_must_match_the_shape() {
    assert_eq!(
        error_with("dimension_names", json!(["x"])),
        "`dimension_names` has 1 entries but `shape` has 2 dimensions"
    );
    assert_contains(
        &error_with("dimension_names", json!(["x", 3])),
        "`dimension_names[1]`",
    );
    assert_contains(
        &error_with("dimension_names", json!("x")),
        "`dimension_names`",
    );
}

#[test]
fn malformed_codecs_and_attributes_are_named() {
    assert_eq!(
        error_with("codecs", json!([])),
        "`codecs` is empty: it must hold an array-to-bytes codec"
    );
    assert_contains(&error_with("codecs", json!({"name": "bytes"})), "`codecs`");
    assert_contains(
        &error_with(
            "codecs",
            json!([{"name": "bytes"}, {"name": "gzip", "level": 1}]),
        ),
        "`codecs[1].level`",
    );
    assert_contains(
        &error_with("attributes", json!([1])),
        "field `attributes` is invalid",
    );
}

// ---------------------------------------------------------------------------
// Properties

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |x| serde_json::Number::from_f64(x)
            .map(Value::Number)),
        "[a-z \u{e9}\"\\\\]{0,8}".prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,6}", inner), 0..4)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

fn json_map() -> impl Strategy<Value = JsonMap> {
    prop::collection::vec(("[a-z_]{1,6}", json_value()), 0..4)
        .prop_map(|entries| entries.into_iter().collect())
}

fn data_type() -> impl Strategy<Value = DataType> {
    prop_oneof![
        Just(DataType::Bool),
        Just(DataType::Int8),
        Just(DataType::Int16),
        Just(DataType::Int32),
        Just(DataType::Int64),
        Just(DataType::UInt8),
        Just(DataType::UInt16),
        Just(DataType::UInt32),
        Just(DataType::UInt64),
        Just(DataType::Float16),
        Just(DataType::Float32),
        Just(DataType::Float64),
        Just(DataType::Complex64),
        Just(DataType::Complex128),
        (1usize..=8).prop_map(|n| DataType::RawBits(8 * n)),
    ]
}

/// A float of `width` bytes: any bits, or a NaN with a random payload.
fn float_bytes(width: usize) -> BoxedStrategy<Vec<u8>> {
    let (exponent, mantissa): (u64, u64) = match width {
        2 => (0x7c00, 0x03ff),
        4 => (0x7f80_0000, 0x007f_ffff),
        _ => (0x7ff0_0000_0000_0000, 0x000f_ffff_ffff_ffff),
    };
    prop_oneof![
        prop::collection::vec(any::<u8>(), width),
        (any::<bool>(), 1..=mantissa).prop_map(move |(negative, payload)| {
            let sign = if negative { 1u64 << (8 * width - 1) } else { 0 };
            let bits = sign | exponent | payload;
            match width {
                2 => u16::try_from(bits).unwrap().to_ne_bytes().to_vec(),
                4 => u32::try_from(bits).unwrap().to_ne_bytes().to_vec(),
                _ => bits.to_ne_bytes().to_vec(),
            }
        }),
    ]
    .boxed()
}

fn fill_value(data_type: &DataType) -> BoxedStrategy<FillValue> {
    match data_type {
        DataType::Bool => any::<bool>()
            .prop_map(|b| FillValue::new(vec![u8::from(b)]))
            .boxed(),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => float_bytes(data_type.size())
            .prop_map(FillValue::new)
            .boxed(),
        DataType::Complex64 | DataType::Complex128 => {
            let half = data_type.size() / 2;
            (float_bytes(half), float_bytes(half))
                .prop_map(|(mut re, im)| {
                    re.extend(im);
                    FillValue::new(re)
                })
                .boxed()
        }
        other => prop::collection::vec(any::<u8>(), other.size())
            .prop_map(FillValue::new)
            .boxed(),
    }
}

fn extension(
    must_understand: impl Strategy<Value = bool>,
) -> impl Strategy<Value = ExtensionObject> {
    (
        "[a-z][a-z0-9_.]{0,10}",
        prop::option::of(json_map()),
        must_understand,
    )
        .prop_map(|(name, configuration, must_understand)| ExtensionObject {
            name,
            configuration,
            must_understand,
        })
}

/// Fields outside `reserved` that may be ignored, so they survive a rewrite.
fn extra_fields(reserved: &'static [&'static str]) -> impl Strategy<Value = JsonMap> {
    prop::collection::vec(("[a-z_]{1,8}", json_map()), 0..3).prop_map(move |entries| {
        entries
            .into_iter()
            .filter(|(key, _)| !reserved.contains(&key.as_str()))
            .map(|(key, mut value)| {
                value.insert("must_understand".into(), Value::Bool(false));
                (key, Value::Object(value))
            })
            .collect()
    })
}

fn array_metadata() -> impl Strategy<Value = ArrayMetadata> {
    (0usize..4, data_type())
        .prop_flat_map(|(ndim, data_type)| {
            let length = prop_oneof![0u64..1000, any::<u64>()];
            (
                prop::collection::vec(length, ndim),
                prop::collection::vec(1u64..100, ndim),
                fill_value(&data_type),
                Just(data_type),
                any::<(bool, bool)>(),
                prop::collection::vec(extension(any::<bool>()), 1..4),
                prop::collection::vec(extension(Just(false)), 0..2),
                prop::option::of(prop::collection::vec(prop::option::of("[a-z]{0,5}"), ndim)),
                json_map(),
                extra_fields(v3::ARRAY_FIELDS),
            )
        })
        .prop_map(
            |(
                shape,
                chunk_shape,
                fill_value,
                data_type,
                (v2, slash),
                codecs,
                storage_transformers,
                dimension_names,
                attributes,
                extra_fields,
            )| {
                let separator = if slash {
                    Separator::Slash
                } else {
                    Separator::Dot
                };
                ArrayMetadata {
                    shape,
                    data_type,
                    chunk_grid: ChunkGrid::regular(&chunk_shape).unwrap(),
                    chunk_key_encoding: if v2 {
                        ChunkKeyEncoding::V2 { separator }
                    } else {
                        ChunkKeyEncoding::Default { separator }
                    },
                    fill_value,
                    codecs,
                    storage_transformers,
                    dimension_names,
                    attributes,
                    extra_fields,
                }
            },
        )
}

fn group_metadata() -> impl Strategy<Value = GroupMetadata> {
    (json_map(), extra_fields(v3::GROUP_FIELDS)).prop_map(|(attributes, extra_fields)| {
        GroupMetadata {
            attributes,
            extra_fields,
        }
    })
}

fn node_metadata() -> impl Strategy<Value = NodeMetadata> {
    prop_oneof![
        array_metadata().prop_map(NodeMetadata::Array),
        group_metadata().prop_map(NodeMetadata::Group),
    ]
}

/// Paths into an array document where a mutation is most likely to reach
/// deep into the parser.
const MUTATION_POINTERS: &[&str] = &[
    "/zarr_format",
    "/node_type",
    "/shape",
    "/shape/0",
    "/data_type",
    "/chunk_grid",
    "/chunk_grid/name",
    "/chunk_grid/configuration",
    "/chunk_grid/configuration/chunk_shape",
    "/chunk_grid/configuration/chunk_shape/0",
    "/chunk_key_encoding",
    "/chunk_key_encoding/configuration",
    "/chunk_key_encoding/configuration/separator",
    "/fill_value",
    "/codecs",
    "/codecs/0",
    "/codecs/0/name",
    "/codecs/0/configuration",
    "/attributes",
];

proptest! {
    #[test]
    fn model_to_document_to_model_is_the_identity(node in node_metadata()) {
        let written = v3::serialize_node(&node);
        let parsed = v3::parse_node(&written);
        prop_assert!(parsed.is_ok(), "{:?} for {}", parsed, String::from_utf8_lossy(&written));
        prop_assert_eq!(parsed.unwrap(), node);
    }

    #[test]
    fn rewriting_a_parsed_document_is_canonical(node in node_metadata()) {
        let written = v3::serialize_node(&node);
        let rewritten = v3::serialize_node(&v3::parse_node(&written).unwrap());
        prop_assert_eq!(String::from_utf8(rewritten).unwrap(), String::from_utf8(written).unwrap());
    }

    #[test]
    fn fill_values_round_trip_bit_for_bit(
        (data_type, fill) in data_type().prop_flat_map(|dt| (Just(dt.clone()), fill_value(&dt)))
    ) {
        let json = v3::fill_value_to_json(&fill, &data_type);
        prop_assert_eq!(v3::fill_value_from_json(&json, &data_type).unwrap(), fill);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = v3::parse_node(&bytes);
    }

    #[test]
    fn random_json_never_panics(value in json_value(), node_type in prop_oneof![Just("array"), Just("group")]) {
        let _ = parse(&value);
        // Also with a valid header, so the walk reaches the other fields.
        if let Value::Object(mut object) = value {
            object.insert("zarr_format".into(), json!(3));
            object.insert("node_type".into(), json!(node_type));
            let _ = parse(&Value::Object(object));
        }
    }

    #[test]
    fn mutated_documents_never_panic(
        node in array_metadata(),
        pointer in prop::sample::select(MUTATION_POINTERS),
        replacement in prop::option::of(json_value()),
    ) {
        let mut document = as_json(&v3::serialize_node(&NodeMetadata::Array(node)));
        if let Some(target) = document.pointer_mut(pointer) {
            match replacement {
                Some(value) => *target = value,
                None => *target = Value::Null,
            }
        }
        let _ = parse(&document);
    }
}
