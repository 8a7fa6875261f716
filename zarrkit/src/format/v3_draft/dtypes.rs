//! Extension data types of the v3 drafts and their `fallback`.
//!
//! Spec: the May 2022 draft ("data_type": an extension data type is an
//! object with `extension`, `type` and an optional `fallback`, "one or a
//! list of the data type identifiers"; "If an implementation does not
//! recognise the extension or specific data type, but a fallback is present,
//! then the implementation may proceed using the first known fallback
//! value"; "Silently using a fallback without explicit approval might cause
//! problems for users"), the June 2019 draft (the same with one fallback),
//! `seeds/v3-ext-string-dtypes-2022-03-02-draft.rst` and
//! `draft-2022-companions/extensions/data-types/{string,datetime,struct}`.
//!
//! Known extensions, in every draft (zarr-python 2.x's own URIs are read by
//! its module):
//!
//! | extension URIs | `type` | model |
//! |---|---|---|
//! | [`STRING_URI`], [`STRING_URI_2022_03`] | `S12` (also `\|S12`), `<U4`, `>U4` | `FixedBytes(12)`, `FixedUtf32(16)` |
//! | [`DATETIME_URI`], [`DATETIME_URI_2019`] | `<M8[ns]`, `>m8[s]`, … | `NumpyDateTime64`, `NumpyTimeDelta64` |
//! | [`STRUCT_URI`] | `[["name", "<U10"], ["age", "<i4"]]` (NumPy's `descr`) | `Struct` |
//!
//! The byte order in `type` is the stored byte order (the `bytes` codec's
//! `endian`). Any other extension, or a known one with a `type` it does not
//! define, is used through its first known `fallback` only when the caller
//! allows it ([`DraftReadOptions::allow_data_type_fallback`], and
//! [`Array::open_draft`](crate::Array::open_draft)); otherwise it is an error naming the fallback on offer.
//! An array read through a fallback is written back with the fallback type.

use super::{draft2019, draft2022};
use crate::error::Error;
use crate::format::{ZarrFormat, numpy_types, v2};
use crate::metadata::NodePath;
use crate::metadata::{DataType, JsonMap, MetadataError, NodeMetadata};
use crate::store::Store;
use serde_json::Value;

/// The string data types extension as the May 2022 draft's companions name it.
pub const STRING_URI: &str = "https://purl.org/zarr/spec/extensions/data-types/string/1.0";
/// The string data types extension as its 2 March 2022 text names it.
pub const STRING_URI_2022_03: &str = "http://purl.org/zarr/spec/extensions/string-dtypes/1.0";
/// The datetime data types extension of the May 2022 draft's era.
pub const DATETIME_URI: &str = "https://purl.org/zarr/spec/extensions/data-types/datetime/1.0";
/// The datetime extension as the June 2019 draft's example names it.
pub const DATETIME_URI_2019: &str =
    "http://purl.org/zarr/spec/protocol/extensions/datetime-dtypes/1.0";
/// The struct data type extension of the May 2022 draft's era.
pub const STRUCT_URI: &str = "https://purl.org/zarr/spec/extensions/data-types/struct/1.0";

/// How draft documents are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DraftReadOptions {
    /// Use an unknown extension data type's first known `fallback` instead
    /// of refusing the array (the drafts allow it; zarrkit asks for consent).
    pub allow_data_type_fallback: bool,
}

impl DraftReadOptions {
    /// Options that allow data type fallbacks.
    #[must_use]
    pub fn allowing_fallback() -> Self {
        Self {
            allow_data_type_fallback: true,
        }
    }
}

/// A parsed data type and its stored byte order (`None`: no byte order).
pub(crate) type Parsed = (DataType, Option<bool>);

/// Parses an extension data type object. `core` parses one of the draft's
/// own identifiers (for fallbacks).
///
/// # Errors
/// [`MetadataError::UnsupportedExtension`] naming the URI (and the fallback
/// on offer, when not allowed); [`MetadataError::InvalidField`] for a
/// malformed object.
pub(crate) fn extension_from_json(
    object: &JsonMap,
    core: &dyn Fn(&Value) -> Option<Parsed>,
    options: DraftReadOptions,
) -> Result<Parsed, MetadataError> {
    let uri = match object.get("extension") {
        Some(Value::String(uri)) => uri.as_str(),
        Some(other) => {
            return Err(MetadataError::invalid(
                "data_type.extension",
                "a URI",
                other,
            ));
        }
        None => {
            return Err(MetadataError::MissingField {
                field: "data_type.extension",
            });
        }
    };
    if let Some((key, other)) = object
        .iter()
        .find(|(k, _)| !["extension", "type", "fallback"].contains(&k.as_str()))
    {
        return Err(MetadataError::invalid(
            format!("data_type.{key}"),
            "no member other than `extension`, `type` and `fallback`",
            other,
        ));
    }
    let type_value = object.get("type").ok_or(MetadataError::MissingField {
        field: "data_type.type",
    })?;
    if let Some(parsed) = known(uri, type_value)? {
        return Ok(parsed);
    }
    let fallbacks: Vec<&Value> = match object.get("fallback") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.iter().collect(),
        Some(one) => vec![one],
    };
    let shown = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    let type_shown = shown(type_value);
    if fallbacks.is_empty() {
        return Err(MetadataError::UnsupportedExtension {
            point: "data type",
            name: format!("{uri}` (type `{type_shown}`, no fallback"),
        });
    }
    let first_known = fallbacks.iter().find_map(|f| match f {
        Value::Object(nested) => {
            let uri = nested.get("extension").and_then(Value::as_str)?;
            known(uri, nested.get("type")?).ok().flatten()
        }
        other => core(other),
    });
    let offered: Vec<String> = fallbacks.iter().map(|f| shown(f)).collect();
    match first_known {
        Some(parsed) if options.allow_data_type_fallback => Ok(parsed),
        Some(_) => Err(MetadataError::UnsupportedExtension {
            point: "data type",
            name: format!(
                "{uri}` (type `{type_shown}`); it offers the fallback `{}`, which zarrkit \
                 uses only when allowed (`format::draft_dtypes::open_array` with \
                 `allow_data_type_fallback`",
                offered.join("`, `")
            ),
        }),
        None => Err(MetadataError::UnsupportedExtension {
            point: "data type",
            name: format!(
                "{uri}` (type `{type_shown}`); none of its fallbacks `{}` is known either",
                offered.join("`, `")
            ),
        }),
    }
}

/// The data type of a known extension with `type`, `Ok(None)` when the
/// extension or the type is unknown.
fn known(uri: &str, type_value: &Value) -> Result<Option<Parsed>, MetadataError> {
    Ok(match uri {
        STRING_URI | STRING_URI_2022_03 => {
            match numpy_types::from_json(type_value, "data_type.type")? {
                Some(parsed @ (DataType::FixedBytes(_) | DataType::FixedUtf32(_), _)) => {
                    Some(parsed)
                }
                _ => None,
            }
        }
        DATETIME_URI | DATETIME_URI_2019 => match v2::dtype_from_json(type_value) {
            Ok((
                data_type @ (DataType::NumpyDateTime64 { .. } | DataType::NumpyTimeDelta64 { .. }),
                endian,
            )) => Some((data_type, endian.map(|e| e == "big"))),
            _ => None,
        },
        STRUCT_URI if type_value.is_array() => {
            numpy_types::from_json(type_value, "data_type.type")?
        }
        _ => None,
    })
}

/// The extension data type object of `data_type` stored in byte order
/// `big`, with `fallback` when given; `None` for types no extension here
/// defines.
pub(crate) fn extension_to_json(
    data_type: &DataType,
    big: bool,
    string_uri: &str,
    datetime_uri: &str,
    fallback: Option<Value>,
) -> Option<Value> {
    let (uri, type_value) = match data_type {
        DataType::FixedBytes(n) => (string_uri, Value::String(format!("S{n}"))),
        DataType::FixedUtf32(_) => (string_uri, numpy_types::to_json(data_type, big)?),
        DataType::Struct(_) if numpy_types::is_representable(data_type) => {
            (STRUCT_URI, numpy_types::to_json(data_type, big)?)
        }
        DataType::NumpyDateTime64 { .. } | DataType::NumpyTimeDelta64 { .. } => (
            datetime_uri,
            Value::String(v2::dtype_to_string(data_type, big)),
        ),
        _ => return None,
    };
    let mut object = JsonMap::new();
    object.insert("extension".into(), uri.into());
    object.insert("type".into(), type_value);
    if let Some(fallback) = fallback {
        object.insert("fallback".into(), fallback);
    }
    Some(Value::Object(object))
}

/// Reads the node at `path` of a v3 draft hierarchy (May 2022, June or
/// early 2019, zarr-python 2.x's layout) with `options`, trying the drafts
/// in the probe order of [`crate::format`]; `None` when no draft has a node
/// there. [`Array::open_draft`](crate::Array::open_draft) opens an array
/// through it.
///
/// # Errors
/// The errors of reading the document.
pub fn read_node(
    store: &dyn Store,
    path: &NodePath,
    options: DraftReadOptions,
) -> Result<Option<(ZarrFormat, NodeMetadata)>, Error> {
    if let Some(node) = draft2022::read_node_with(store, path, options)? {
        return Ok(Some((ZarrFormat::V3Draft2022, node)));
    }
    for format in [
        ZarrFormat::V3Draft2019Json,
        ZarrFormat::V3Draft2019,
        ZarrFormat::V3Draft2019a,
    ] {
        if let Some(node) = draft2019::read_node_with(store, path, format, options)? {
            return Ok(Some((format, node)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn core(value: &Value) -> Option<Parsed> {
        let name = value.as_str()?;
        DataType::from_name(name)
            .filter(|d| !d.is_extension())
            .map(|d| (d, None))
    }

    fn parse(value: Value, allow: bool) -> Result<Parsed, MetadataError> {
        let options = DraftReadOptions {
            allow_data_type_fallback: allow,
        };
        extension_from_json(value.as_object().unwrap(), &core, options)
    }

    #[test]
    fn string_datetime_and_struct_extensions_are_known_in_every_spelling() {
        for (value, expected) in [
            (
                json!({"extension": STRING_URI, "type": "S12", "fallback": "r96"}),
                (DataType::FixedBytes(12), None),
            ),
            (
                json!({"extension": STRING_URI_2022_03, "type": ">U4"}),
                (DataType::FixedUtf32(16), Some(true)),
            ),
            (
                json!({"extension": DATETIME_URI_2019, "type": "<M8[ns]", "fallback": "<i8"}),
                (
                    DataType::NumpyDateTime64 {
                        unit: crate::metadata::TimeUnit::Nanosecond,
                        scale_factor: 1,
                    },
                    Some(false),
                ),
            ),
        ] {
            assert_eq!(parse(value.clone(), false).unwrap(), expected, "{value}");
        }
        let (data_type, big) = parse(
            json!({"extension": STRUCT_URI, "type": [["a", ">i2"], ["b", "|S3"]]}),
            false,
        )
        .unwrap();
        assert_eq!(data_type.size(), 5);
        assert_eq!(big, Some(true));
        for data_type in [DataType::FixedBytes(3), DataType::FixedUtf32(8), data_type] {
            let written =
                extension_to_json(&data_type, true, STRING_URI, DATETIME_URI, None).unwrap();
            assert_eq!(
                parse(written.clone(), false).unwrap().0,
                data_type,
                "{written}"
            );
        }
    }

    #[test]
    fn fallbacks_are_used_only_when_allowed_and_named_otherwise() {
        let doc = json!({"extension": "https://x.org/dt", "type": "q7",
                         "fallback": ["float8", "int16", "r16"]});
        assert_eq!(parse(doc.clone(), true).unwrap(), (DataType::Int16, None));
        let err = parse(doc, false).unwrap_err().to_string();
        assert!(err.contains("`https://x.org/dt`"), "{err}");
        assert!(err.contains("`float8`, `int16`, `r16`"), "{err}");
        assert!(err.contains("allow_data_type_fallback"), "{err}");
        // One fallback, not a list; a known extension with an unknown type.
        let one = json!({"extension": STRING_URI, "type": "Z3", "fallback": "r24"});
        assert_eq!(parse(one, true).unwrap(), (DataType::RawBits(24), None));
        let none = parse(json!({"extension": "https://x.org/dt", "type": "q7"}), true)
            .unwrap_err()
            .to_string();
        assert!(none.contains("no fallback"), "{none}");
        let unknown = parse(
            json!({"extension": "https://x.org/dt", "type": "q7", "fallback": "float8"}),
            true,
        )
        .unwrap_err()
        .to_string();
        assert!(
            unknown.contains("none of its fallbacks `float8`"),
            "{unknown}"
        );
        for bad in [
            json!({"type": "S3"}),
            json!({"extension": 5, "type": "S3"}),
            json!({"extension": STRING_URI}),
            json!({"extension": STRING_URI, "type": "S3", "endian": "big"}),
        ] {
            assert!(parse(bad.clone(), true).is_err(), "{bad}");
        }
    }
}
