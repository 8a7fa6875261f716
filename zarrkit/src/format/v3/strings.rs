//! v3 data types with a configuration of their own, and their fill values:
//! the string and byte-string types (`string`, `bytes`,
//! `fixed_length_utf32`, and zarr-python 3.1's `null_terminated_bytes`,
//! `variable_length_bytes` and `raw_bytes`), `struct` (and its legacy
//! spelling `structured`), and the `complex_float8/6/4_*` types.
//!
//! Spec: `extensions/data-types/{string,bytes,fixed_length_utf32,struct,
//! structured}` and the `complex_*` READMEs. zarr-python 3.1 writes
//! `null_terminated_bytes` for NumPy `|S<n>`, `variable_length_bytes` for
//! `bytes` and `raw_bytes` for `|V<n>`: they are not registered, so we read
//! them (as zarr-python and zarrs do) and write `null_terminated_bytes`
//! (the only spelling any reader knows for `|S<n>`), `bytes` and `r<8n>`.
//!
//! Their fill values' JSON forms live with the other v3 fill values in
//! [`crate::metadata::json`].

use super::{data_type_from_json, data_type_to_json};
use crate::metadata::{DataType, JsonMap, MetadataError, StructField};
use serde_json::Value;

/// Parses the data types this module knows, from their name and
/// configuration; `Ok(None)` when `name` is none of them.
///
/// # Errors
/// [`MetadataError::MissingField`] or [`MetadataError::InvalidField`] for
/// a missing or malformed configuration.
pub(super) fn data_type_from_parts(
    name: &str,
    configuration: Option<&JsonMap>,
) -> Result<Option<DataType>, MetadataError> {
    Ok(Some(match name {
        "fixed_length_utf32" => {
            let n = length_bytes(configuration)?;
            // extensions/data-types/fixed_length_utf32: "positive integer,
            // multiple of 4".
            if n % 4 != 0 {
                return Err(MetadataError::invalid(
                    "data_type.configuration.length_bytes",
                    "a positive multiple of 4",
                    &Value::from(n),
                ));
            }
            DataType::FixedUtf32(n)
        }
        "null_terminated_bytes" => DataType::FixedBytes(length_bytes(configuration)?),
        "raw_bytes" => DataType::RawBits(length_bytes(configuration)?.saturating_mul(8)),
        // zarr-python 3.1 writes `variable_length_bytes`; zarrs once wrote
        // `binary` (it still reads it). Both are exactly `bytes`.
        "variable_length_bytes" | "binary" => DataType::Bytes,
        "struct" | "structured" => DataType::Struct(struct_fields(configuration)?),
        _ => return Ok(None),
    }))
}

fn length_bytes(configuration: Option<&JsonMap>) -> Result<usize, MetadataError> {
    let value =
        configuration
            .and_then(|c| c.get("length_bytes"))
            .ok_or(MetadataError::MissingField {
                field: "data_type.configuration.length_bytes",
            })?;
    value
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n > 0 && n <= u32::MAX as usize)
        .ok_or_else(|| {
            MetadataError::invalid(
                "data_type.configuration.length_bytes",
                "a positive integer",
                value,
            )
        })
}

/// The fields of `struct` (objects with `name` and `data_type`) or of the
/// legacy `structured` (also `[name, data_type]` pairs).
fn struct_fields(configuration: Option<&JsonMap>) -> Result<Vec<StructField>, MetadataError> {
    const FIELD: &str = "data_type.configuration.fields";
    let value = configuration
        .and_then(|c| c.get("fields"))
        .ok_or(MetadataError::MissingField { field: FIELD })?;
    let items = value
        .as_array()
        .filter(|items| !items.is_empty())
        .ok_or_else(|| MetadataError::invalid(FIELD, "a non-empty array of fields", value))?;
    let mut fields: Vec<StructField> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let (name, data_type) = match item {
            Value::Object(object) => (object.get("name"), object.get("data_type")),
            Value::Array(pair) if pair.len() == 2 => (pair.first(), pair.get(1)),
            other => {
                return Err(MetadataError::invalid(
                    format!("{FIELD}[{i}]"),
                    "an object with `name` and `data_type` (or a `[name, data_type]` pair)",
                    other,
                ));
            }
        };
        let name = name
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| {
                MetadataError::invalid(format!("{FIELD}[{i}].name"), "a non-empty string", item)
            })?;
        if fields.iter().any(|f| f.name == name) {
            return Err(MetadataError::invalid(
                format!("{FIELD}[{i}].name"),
                "a name unique within the struct",
                &Value::from(name),
            ));
        }
        let data_type = data_type.ok_or_else(|| {
            MetadataError::invalid(format!("{FIELD}[{i}]"), "a `data_type`", item)
        })?;
        let data_type = data_type_from_json(data_type).map_err(|err| match err {
            MetadataError::InvalidField {
                field,
                expected,
                found,
            } => MetadataError::InvalidField {
                field: format!("{FIELD}[{i}].{field}"),
                expected,
                found,
            },
            other => other,
        })?;
        if data_type.is_variable_length() {
            // extensions/data-types/struct: variable-length types "MUST NOT
            // be used as field types".
            return Err(MetadataError::invalid(
                format!("{FIELD}[{i}].data_type"),
                "a fixed-size data type",
                &data_type_to_json(&data_type),
            ));
        }
        fields.push(StructField::new(name, data_type));
    }
    Ok(fields)
}

/// The configuration written for the data types of this module, or `None`
/// for a type written by name alone.
pub(super) fn data_type_configuration(data_type: &DataType) -> Option<Value> {
    Some(match data_type {
        DataType::FixedUtf32(n) | DataType::FixedBytes(n) => {
            serde_json::json!({ "length_bytes": n })
        }
        DataType::Struct(fields) => {
            let fields: Vec<Value> = fields
                .iter()
                .map(|f| serde_json::json!({"name": f.name, "data_type": data_type_to_json(&f.data_type)}))
                .collect();
            serde_json::json!({ "fields": fields })
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::v3::{data_type_from_json, fill_value_from_json, fill_value_to_json};
    use serde_json::json;

    #[test]
    fn zarr_python_spellings_read_and_registered_names_are_written() {
        let cases = [
            (json!("string"), DataType::String, json!("string")),
            (json!("bytes"), DataType::Bytes, json!("bytes")),
            (
                json!("variable_length_bytes"),
                DataType::Bytes,
                json!("bytes"),
            ),
            (
                json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}}),
                DataType::FixedUtf32(12),
                json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}}),
            ),
            (
                json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 4}}),
                DataType::FixedBytes(4),
                json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 4}}),
            ),
            (
                json!({"name": "raw_bytes", "configuration": {"length_bytes": 3}}),
                DataType::RawBits(24),
                json!("r24"),
            ),
            (
                json!({"name": "structured", "configuration": {"fields": [["a", "int32"], ["b", "float64"]]}}),
                DataType::Struct(vec![
                    StructField::new("a", DataType::Int32),
                    StructField::new("b", DataType::Float64),
                ]),
                json!({"name": "struct", "configuration": {"fields": [
                    {"name": "a", "data_type": "int32"}, {"name": "b", "data_type": "float64"}]}}),
            ),
            (
                json!("complex_float8_e5m2"),
                DataType::ComplexSmallFloat(crate::metadata::SmallFloat::Float8E5M2),
                json!("complex_float8_e5m2"),
            ),
        ];
        for (input, data_type, written) in cases {
            assert_eq!(data_type_from_json(&input).unwrap(), data_type, "{input}");
            assert_eq!(data_type_to_json(&data_type), written, "{input}");
        }
    }

    #[test]
    fn bad_configurations_name_the_field() {
        for (input, field) in [
            (
                json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 6}}),
                "length_bytes",
            ),
            (
                json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 0}}),
                "length_bytes",
            ),
            (json!({"name": "fixed_length_utf32"}), "length_bytes"),
            (
                json!({"name": "struct", "configuration": {"fields": []}}),
                "fields",
            ),
            (
                json!({"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "string"}]}}),
                "fields[0].data_type",
            ),
            (
                json!({"name": "struct", "configuration": {"fields": [["a", "int8"], ["a", "int8"]]}}),
                "fields[1].name",
            ),
            (
                json!({"name": "struct", "configuration": {"fields": [["a", "nope"]]}}),
                "nope",
            ),
        ] {
            let err = data_type_from_json(&input).unwrap_err().to_string();
            assert!(err.contains(field), "{input}: {err}");
        }
    }

    #[test]
    fn fill_values_follow_each_extension() {
        let u = DataType::FixedUtf32(12);
        let fill = fill_value_from_json(&json!("Hi"), &u).unwrap();
        let mut expected = Vec::new();
        for c in ['H', 'i', '\0'] {
            expected.extend((c as u32).to_ne_bytes());
        }
        assert_eq!(fill.as_bytes(), expected);
        assert_eq!(fill_value_to_json(&fill, &u), json!("Hi"));
        assert!(fill_value_from_json(&json!("abcd"), &u).is_err());

        let s = DataType::FixedBytes(4);
        let fill = fill_value_from_json(&json!("cQ=="), &s).unwrap();
        assert_eq!(fill.as_bytes(), b"q\0\0\0");
        // Written without the zero padding, as zarr-python writes it.
        assert_eq!(fill_value_to_json(&fill, &s), json!("cQ=="));
        assert!(fill_value_from_json(&json!("cXFxcXE="), &s).is_err());

        let b = DataType::Bytes;
        assert_eq!(
            fill_value_from_json(&json!([1, 2, 3]), &b)
                .unwrap()
                .as_bytes(),
            [1, 2, 3]
        );
        assert_eq!(
            fill_value_from_json(&json!("AQID"), &b).unwrap().as_bytes(),
            [1, 2, 3]
        );
        assert!(fill_value_from_json(&json!([256]), &b).is_err());

        let st = DataType::Struct(vec![
            StructField::new("a", DataType::Int32),
            StructField::new("b", DataType::Float64),
        ]);
        let fill = fill_value_from_json(&json!({"a": -2, "b": "NaN"}), &st).unwrap();
        assert_eq!(&fill.as_bytes()[..4], (-2i32).to_ne_bytes());
        assert_eq!(fill_value_to_json(&fill, &st), json!({"a": -2, "b": "NaN"}));
        let legacy = fill_value_from_json(&json!("AQAAAAAAAAAAAPA/"), &st).unwrap();
        assert_eq!(&legacy.as_bytes()[..4], 1i32.to_ne_bytes());
        assert_eq!(&legacy.as_bytes()[4..], 1.0f64.to_ne_bytes());
        assert!(fill_value_from_json(&json!({"a": 1}), &st).is_err());
        assert!(fill_value_from_json(&json!({"a": 1, "b": 2, "c": 3}), &st).is_err());

        let s = DataType::String;
        let fill = fill_value_from_json(&json!("foo"), &s).unwrap();
        assert_eq!(fill.as_bytes(), b"foo");
        assert_eq!(fill_value_to_json(&fill, &s), json!("foo"));
        assert!(fill_value_from_json(&json!(0), &s).is_err());
    }
}
