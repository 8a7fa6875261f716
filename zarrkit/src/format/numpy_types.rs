//! NumPy's fixed-length string and structured types in the formats that
//! spell data types as NumPy does (v1, zarr-python 2.x's experimental v3,
//! the v3 drafts' string and struct extension types) ↔ the model.
//!
//! Spec: `seeds/v3-ext-string-dtypes-2022-03-02-draft.rst` ("Data Types
//! added by this extension"), `draft-2022-companions/extensions/data-types/
//! {string,struct}/v1.0.rst`, and the v1 text ("Data type encoding", which
//! defers to NumPy's `dtype.str` and `dtype.descr`).
//!
//! | NumPy | model | element |
//! |---|---|---|
//! | `\|S7` (also `S7`) | [`DataType::FixedBytes`]`(7)` | 7 bytes, zero-padded |
//! | `<U5`, `>U5` | [`DataType::FixedUtf32`]`(20)` | 5 UTF-32 code units, zero-padded, in that byte order |
//! | `[["a", "<i4"], ["b", "<U3"], ["c", "<f8", [2]]]` | [`DataType::Struct`] | the fields packed in order |
//!
//! The byte order of `U` and of a structure's fields becomes the `bytes`
//! codec's `endian`, as for numbers. A structure whose multi-byte fields
//! disagree on byte order (NumPy allows `[["a", "<i4"], ["b", ">i4"]]`) has
//! no `bytes` codec that says it; it is refused naming the fields.
//!
//! The v2 mapping ([`super::v2`]) knows none of these types, so v1 and
//! zarr-python 2.x documents with them are read by handing v2 a raw type of
//! the same size (`|V<n>`) and putting the real type back afterwards
//! ([`parse_zarray`], [`zarray_of`]).

use super::v2;
use crate::metadata::{ArrayMetadata, DataType, JsonMap, MetadataError, StructField, numpy};
use serde_json::Value;

/// The longest string length accepted, in characters (64 MiB per `U`
/// element): the length is untrusted, and a fill value or chunk of such
/// elements is allocated whole.
const MAX_LENGTH: usize = 1 << 24;

/// A parsed NumPy type: the model's data type and whether it is stored big
/// endian (`None`: single-byte units, no byte order).
pub(crate) type Parsed = (DataType, Option<bool>);

fn unsupported(name: String) -> MetadataError {
    MetadataError::UnsupportedExtension {
        point: "data type",
        name,
    }
}

/// Parses the string and structured NumPy types. `Ok(None)` for any other
/// type string (the caller's own parser handles numbers).
///
/// # Errors
/// [`MetadataError::InvalidField`] naming `field` for a malformed string or
/// structure; [`MetadataError::UnsupportedExtension`] for a structure with
/// mixed byte order or a field type that is not supported.
pub(crate) fn from_json(value: &Value, field: &str) -> Result<Option<Parsed>, MetadataError> {
    match value {
        Value::String(text) => Ok(string_type(text)),
        Value::Array(items) => structured(items, field).map(Some),
        _ => Ok(None),
    }
}

/// `|S7`, `S7`, `<U5`, `>U5`.
fn string_type(text: &str) -> Option<Parsed> {
    let (order, rest) = match text.as_bytes().first()? {
        b'<' => (Some(false), &text[1..]),
        b'>' => (Some(true), &text[1..]),
        b'|' => (None, &text[1..]),
        _ => (None, text),
    };
    // The digits follow the kind character, which may be several bytes
    // long in a malformed document (`ʤ2`): never slice at byte 1.
    let mut chars = rest.chars();
    let kind = chars.next()?;
    let digits = chars.as_str();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 9 {
        return None;
    }
    let n: usize = digits.parse().ok().filter(|&n| n > 0 && n <= MAX_LENGTH)?;
    match (kind, order) {
        ('S', None | Some(false)) => Some((DataType::FixedBytes(n), None)),
        // String dtypes extension: `<Un` / `>Un`, "4n" bytes.
        ('U', Some(big)) => Some((DataType::FixedUtf32(n * 4), Some(big))),
        _ => None,
    }
}

/// A field's type: a string or structured type of this module, or a
/// numeric NumPy type string as v2 reads it.
fn field_type(value: &Value, field: &str) -> Result<Parsed, MetadataError> {
    if let Some(parsed) = from_json(value, field)? {
        return Ok(parsed);
    }
    let (data_type, endian) = v2::dtype_from_json(value).map_err(|_| {
        MetadataError::invalid(field, "a NumPy type string such as `\"<i4\"`", value)
    })?;
    if let DataType::RawBits(_) = data_type {
        return Err(unsupported(format!("`{}` in a structure", compact(value))));
    }
    Ok((data_type, endian.map(|e| e == "big")))
}

fn compact(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_string)
}

/// A structured type: a list of `[name, type]` or `[name, type, shape]`.
fn structured(items: &[Value], field: &str) -> Result<Parsed, MetadataError> {
    let expected = "a list of `[name, type]` or `[name, type, shape]` fields";
    if items.is_empty() {
        return Err(MetadataError::invalid(
            field,
            expected,
            &Value::Array(Vec::new()),
        ));
    }
    let mut fields: Vec<StructField> = Vec::with_capacity(items.len());
    let mut order: Option<(bool, String)> = None;
    for (i, item) in items.iter().enumerate() {
        let at = format!("{field}[{i}]");
        let parts = item
            .as_array()
            .filter(|p| (2..=3).contains(&p.len()))
            .ok_or_else(|| MetadataError::invalid(&at, expected, item))?;
        let name = parts[0]
            .as_str()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| MetadataError::invalid(format!("{at}[0]"), "a field name", &parts[0]))?;
        if fields.iter().any(|f| f.name == name) {
            return Err(MetadataError::invalid(
                format!("{at}[0]"),
                "a name no other field has",
                &parts[0],
            ));
        }
        let (data_type, big) = field_type(&parts[1], &format!("{at}[1]"))?;
        let shape = match parts.get(2) {
            None => Vec::new(),
            Some(value) => value
                .as_array()
                .and_then(|dims| dims.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
                .filter(|dims| dims.iter().all(|&d| d > 0))
                .ok_or_else(|| {
                    MetadataError::invalid(format!("{at}[2]"), "a list of positive lengths", value)
                })?,
        };
        if let Some(big) = big {
            match &order {
                None => order = Some((big, name.to_string())),
                Some((first, first_name)) if *first != big => {
                    let word = |b: bool| if b { "big" } else { "little" };
                    return Err(unsupported(format!(
                        "structure with mixed byte order (field `{first_name}` {}-endian, \
                         field `{name}` {}-endian)",
                        word(*first),
                        word(big)
                    )));
                }
                Some(_) => {}
            }
        }
        fields.push(StructField {
            name: name.to_string(),
            data_type,
            shape,
        });
    }
    let data_type = DataType::Struct(fields);
    // The size must be countable: sub-array shapes are untrusted.
    checked_size(&data_type).ok_or_else(|| {
        MetadataError::invalid(
            field,
            "a structure of at most 64 MiB per element",
            &Value::Array(items.to_vec()),
        )
    })?;
    Ok((data_type, order.map(|(big, _)| big)))
}

fn checked_size(data_type: &DataType) -> Option<usize> {
    match data_type {
        DataType::Struct(fields) => fields.iter().try_fold(0usize, |sum, field| {
            let count = field
                .shape
                .iter()
                .try_fold(1u64, |n, &d| n.checked_mul(d))?;
            let size = checked_size(&field.data_type)?.checked_mul(usize::try_from(count).ok()?)?;
            sum.checked_add(size).filter(|&s| s <= 1 << 26)
        }),
        other => Some(other.size()),
    }
}

/// The NumPy spelling of a string or structured type stored in byte order
/// `big`; `None` for other types.
pub(crate) fn to_json(data_type: &DataType, big: bool) -> Option<Value> {
    Some(match data_type {
        DataType::FixedBytes(_) | DataType::FixedUtf32(_) => {
            Value::String(numpy::type_string(data_type, big))
        }
        DataType::Struct(fields) => Value::Array(
            fields
                .iter()
                .map(|field| {
                    let data_type = to_json(&field.data_type, big).unwrap_or_else(|| {
                        Value::String(numpy::type_string(&field.data_type, big))
                    });
                    let mut item = vec![Value::String(field.name.clone()), data_type];
                    if !field.shape.is_empty() {
                        item.push(Value::from(field.shape.clone()));
                    }
                    Value::Array(item)
                })
                .collect(),
        ),
        _ => return None,
    })
}

/// Whether `data_type` is one of this module's.
pub(crate) fn is_numpy_string_or_struct(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::FixedBytes(_) | DataType::FixedUtf32(_) | DataType::Struct(_)
    )
}

/// Whether NumPy can spell `data_type` in these formats: the fixed-size
/// numbers, `bool`, datetimes, the string types, and structures of them.
pub(crate) fn is_representable(data_type: &DataType) -> bool {
    match data_type {
        DataType::Struct(fields) => fields.iter().all(|f| is_representable(&f.data_type)),
        // Raw bytes (`V`) have no type of these formats.
        DataType::RawBits(_) => false,
        other => numpy::has_type_string(other),
    }
}

/// The text NumPy casts a JSON number to when it becomes an `S<n>` or
/// `U<n>` element (`np.array(0, dtype="S1")` is `b"0"`): Python's `str` of
/// the number, which for floats is `repr` (shortest round-trip digits,
/// positional from `1e-4` up to below `1e16`, else `1e+16` / `1e-05`).
/// The caller truncates it to the element's length, as NumPy does.
pub(crate) fn number_as_numpy_text(number: &serde_json::Number) -> String {
    if number.is_i64() || number.is_u64() {
        return number.to_string();
    }
    let Some(x) = number.as_f64() else {
        return number.to_string();
    };
    // JSON numbers are finite; Rust's `{:e}` gives the shortest digits too.
    let scientific = format!("{x:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..16).contains(&exponent) {
        let mut text = format!("{x}");
        if !text.contains('.') {
            text.push_str(".0");
        }
        text
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
    }
}

/// Parses a `.zarray`-shaped document (v1's and zarr-python 2.x's are
/// turned into one) with [`v2::parse_array`], which reads NumPy string and
/// structured types too (mixed byte orders through
/// `zarrkit.struct_bytes`).
///
/// # Errors
/// As [`v2::parse_array`].
pub(crate) fn parse_zarray(
    zarray: JsonMap,
    attributes: Option<JsonMap>,
) -> Result<ArrayMetadata, MetadataError> {
    v2::parse_array(&v2::to_bytes(&Value::Object(zarray)), attributes)
}

/// The `.zarray`-shaped document of `array` by [`v2::array_to_json`]
/// (string and structured types as zarr-python 2.x writes them).
///
/// # Errors
/// As [`v2::array_to_json`].
pub(crate) fn zarray_of(array: &ArrayMetadata) -> Result<JsonMap, MetadataError> {
    match v2::array_to_json(array)? {
        Value::Object(zarray) => Ok(zarray),
        _ => Err(MetadataError::NotAnObject),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_become_the_text_numpy_casts_them_to() {
        // Each expected text is what `np.array(v, dtype="U30")[()]` gives
        // with NumPy 1.26 (zarr-python 2.18's venv).
        for (value, text) in [
            (json!(0), "0"),
            (json!(12345), "12345"),
            (json!(-3), "-3"),
            (json!(1.5), "1.5"),
            (json!(1e16), "1e+16"),
            (json!(1e15), "1000000000000000.0"),
            (json!(123_456_789_012_345_678.0), "1.2345678901234568e+17"),
            (json!(1e-5), "1e-05"),
            (json!(0.0001), "0.0001"),
            (json!(-0.0), "-0.0"),
            (json!(1e300), "1e+300"),
            (json!(0.1 + 0.2), "0.30000000000000004"),
        ] {
            let Value::Number(number) = &value else {
                unreachable!()
            };
            assert_eq!(number_as_numpy_text(number), text, "{value}");
        }
    }

    #[test]
    fn string_types_follow_the_extension_table() {
        let parse = |v: Value| from_json(&v, "dtype").unwrap();
        assert_eq!(parse(json!("|S7")), Some((DataType::FixedBytes(7), None)));
        assert_eq!(parse(json!("S12")), Some((DataType::FixedBytes(12), None)));
        assert_eq!(
            parse(json!("<U5")),
            Some((DataType::FixedUtf32(20), Some(false)))
        );
        assert_eq!(
            parse(json!(">U1")),
            Some((DataType::FixedUtf32(4), Some(true)))
        );
        for other in [
            "<i4",
            "|U5",
            "U5",
            "|S0",
            "|S",
            "|Sx",
            ">S3",
            "|S99999999999",
            "",
        ] {
            assert_eq!(parse(json!(other)), None, "{other}");
        }
        for (data_type, big, text) in [
            (DataType::FixedBytes(7), false, "|S7"),
            (DataType::FixedUtf32(20), false, "<U5"),
            (DataType::FixedUtf32(8), true, ">U2"),
        ] {
            assert_eq!(to_json(&data_type, big), Some(json!(text)));
        }
    }

    #[test]
    fn structures_keep_their_fields_and_refuse_mixed_byte_order() {
        let (data_type, big) = from_json(
            &json!([
                ["name", "<U3"],
                ["age", "<i2"],
                ["flag", "|b1"],
                ["xy", "<f4", [2]]
            ]),
            "dtype",
        )
        .unwrap()
        .unwrap();
        assert_eq!(big, Some(false));
        let DataType::Struct(fields) = &data_type else {
            panic!("{data_type:?}");
        };
        assert_eq!(fields[0].data_type, DataType::FixedUtf32(12));
        assert_eq!(fields[3].shape, [2]);
        assert_eq!(data_type.size(), 12 + 2 + 1 + 8);
        assert_eq!(
            to_json(&data_type, false),
            Some(json!([
                ["name", "<U3"],
                ["age", "<i2"],
                ["flag", "|b1"],
                ["xy", "<f4", [2]]
            ]))
        );
        let (_, big) = from_json(&json!([["a", ">i4"], ["b", "|u1"]]), "dtype")
            .unwrap()
            .unwrap();
        assert_eq!(big, Some(true));
        let err = from_json(&json!([["a", "<i4"], ["b", ">f8"]]), "dtype").unwrap_err();
        assert!(err.to_string().contains("`a` little-endian"), "{err}");
        assert!(err.to_string().contains("`b` big-endian"), "{err}");
        for bad in [
            json!([]),
            json!([["a"]]),
            json!([["a", "<i4"], ["a", "<i4"]]),
            json!([[5, "<i4"]]),
            json!([["a", "<q9"]]),
            json!([["a", "<i4", [0]]]),
            json!([["a", "<i4", [65536, 65536, 65536]]]),
            json!([["a", "|V3"]]),
        ] {
            assert!(from_json(&bad, "dtype").is_err(), "{bad}");
        }
    }
}
