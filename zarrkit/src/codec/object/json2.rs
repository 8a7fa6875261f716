//! The `json2` array→bytes codec: a chunk of a v2 object (`|O`) array as
//! one JSON document, as numcodecs' `JSON` codec writes it.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/other/json.html>
//! Names: the v2 object codec id `json2` (zarrkit uses the same name in its
//! model; no v3 data type holds such arrays).
//!
//! The document (checked against numcodecs 0.16, see
//! `testdata/generate/object_codec_vectors.py`) is a JSON array: the
//! chunk's elements as NumPy's `tolist()` gives them (a flat list for a
//! 1-d chunk, nested lists of the chunk's shape otherwise, the one element
//! of a 0-d chunk alone), then the type string `"|O"`, then the shape. So
//! a 2×2 chunk is `[[1,"a"],[null,2.0],"|O",[2,2]]`.
//!
//! Decoded elements ([`DataType::Object`]) are each value's compact JSON
//! text (`serde_json`'s; an empty element, as the default fill value is,
//! stands for `null`). Writing follows Python's `json.dumps` with the
//! configuration (`ensure_ascii`, `sort_keys`, `separators`), floats in
//! Python's `repr` notation, so the bytes match numcodecs'; `indent` is
//! accepted but not applied (numcodecs reads either form). JSON cannot
//! hold Python's non-standard `NaN` and `Infinity` tokens, nor integers
//! beyond 64 bits exactly: a chunk with the former is an error, the latter
//! read as the nearest `f64`.
//!
//! ```
//! # use zarrkit::codec::json2::Json2Config;
//! let config: Json2Config = serde_json::from_str(r#"{ "sort_keys": true, "separators": [",", ":"] }"#)?;
//! assert!(config.ensure_ascii);
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::vlen::VlenChunk;
use crate::codec::{ArrayToBytesCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::python_json::PythonJson;
#[cfg(test)]
use crate::metadata::python_json::python_float_repr;
use crate::metadata::{DataType, ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// The codec's name (and numcodecs id).
pub const NAME: &str = "json2";

/// The NumPy type string numcodecs appends after the elements.
pub(crate) const OBJECT_DTYPE: &str = "|O";

fn default_true() -> bool {
    true
}

/// The configuration of the `json2` codec: the options numcodecs passes to
/// Python's `json` module.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Json2Config {
    /// The text encoding; only UTF-8 (`"utf-8"`, the default) is supported.
    #[serde(default = "default_encoding")]
    pub encoding: String,
    /// Python's `skipkeys` (no effect here: JSON values have string keys).
    #[serde(default)]
    pub skipkeys: bool,
    /// Whether written text escapes every non-ASCII character as `\uXXXX`.
    #[serde(default = "default_true")]
    pub ensure_ascii: bool,
    /// Python's `check_circular` (no effect here).
    #[serde(default = "default_true")]
    pub check_circular: bool,
    /// Python's `allow_nan` (no effect here: JSON values are finite).
    #[serde(default = "default_true")]
    pub allow_nan: bool,
    /// Python's `indent`: accepted, but zarrkit writes without indentation.
    #[serde(default)]
    pub indent: Option<Value>,
    /// The item and key separators; `null` means `[",", ":"]`.
    #[serde(default)]
    pub separators: Option<(String, String)>,
    /// Whether written objects have their keys sorted.
    #[serde(default = "default_true")]
    pub sort_keys: bool,
    /// Python's `strict` (control characters in strings are always rejected).
    #[serde(default = "default_true")]
    pub strict: bool,
}

fn default_encoding() -> String {
    "utf-8".to_string()
}

impl Default for Json2Config {
    /// numcodecs' defaults.
    fn default() -> Self {
        Self {
            encoding: default_encoding(),
            skipkeys: false,
            ensure_ascii: true,
            check_circular: true,
            allow_nan: true,
            indent: None,
            separators: None,
            sort_keys: true,
            strict: true,
        }
    }
}

/// The `json2` codec.
#[derive(Clone, Debug, PartialEq)]
pub struct Json2Codec {
    config: Json2Config,
}

/// Creates `json2` from its metadata.
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] for an unknown member, a member of
/// the wrong type, or an encoding other than UTF-8.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: Json2Config = parse_configuration(metadata)?;
    Ok(Codec::ArrayToBytes(Arc::new(Json2Codec::new(config)?)))
}

impl Json2Codec {
    /// A codec with `config`.
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] for an encoding other than UTF-8.
    pub fn new(config: Json2Config) -> Result<Self, CodecError> {
        if !matches!(
            config.encoding.to_ascii_lowercase().as_str(),
            "utf-8" | "utf8" | "utf_8"
        ) {
            return Err(CodecError::InvalidConfiguration {
                codec: NAME.to_string(),
                reason: format!(
                    "`encoding` is `{}`; only `utf-8` is supported",
                    config.encoding
                ),
            });
        }
        Ok(Self { config })
    }

    fn separators(&self) -> (&str, &str) {
        self.config
            .separators
            .as_ref()
            .map_or((",", ":"), |(item, key)| (item.as_str(), key.as_str()))
    }
}

fn corrupt(codec: &'static str, reason: String) -> CodecError {
    CodecError::Corrupt { codec, reason }
}

/// Checks that an object codec applies to `repr` (`object` elements).
pub(crate) fn validate_object(codec: &'static str, repr: &ChunkRepr) -> Result<(), CodecError> {
    if repr.data_type == DataType::Object {
        Ok(())
    } else {
        Err(CodecError::Incompatible {
            codec,
            what: format!("`{}` (it encodes only `object`)", repr.data_type),
        })
    }
}

/// The document numcodecs' object codecs encode for a chunk: its elements
/// nested as NumPy's `tolist()` gives them, then the dtype `"|O"` and the
/// chunk's shape.
///
/// # Errors
/// [`CodecError::WrongSize`] if `decoded` is not one chunk of `repr`, and
/// the errors of [`element_value`].
pub(crate) fn document_items(
    codec: &'static str,
    decoded: &VlenChunk,
    repr: &ChunkRepr,
) -> Result<Vec<Value>, CodecError> {
    let n = repr.element_count()?;
    if decoded.len() != n {
        return Err(CodecError::WrongSize {
            expected: n,
            actual: decoded.len(),
        });
    }
    let values = decoded
        .iter()
        .enumerate()
        .map(|(i, e)| element_value(codec, i, e))
        .collect::<Result<Vec<_>, _>>()?;
    let mut items = nest(values, &repr.shape, Value::Array);
    items.push(Value::String(OBJECT_DTYPE.to_string()));
    items.push(Value::Array(
        repr.shape.iter().map(|&n| Value::from(n)).collect(),
    ));
    Ok(items)
}

/// The JSON value of decoded element `i` (its compact JSON text; empty is
/// `null`).
///
/// # Errors
/// [`CodecError::Incompatible`] naming `codec` for an element that is not
/// JSON text.
pub(crate) fn element_value(
    codec: &'static str,
    i: usize,
    element: &[u8],
) -> Result<Value, CodecError> {
    if element.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(element).map_err(|e| CodecError::Incompatible {
        codec,
        what: format!("element {i}, which is not JSON text ({e})"),
    })
}

/// The elements, in C order of `shape`, of the document numcodecs writes
/// (`[items..., "|O", stored_shape]`), checking the type string and the
/// stored shape.
///
/// The stored shape is the chunk's, or its reverse: a writer that
/// transposed an F-order chunk to C order before the codec (as zarrkit's
/// chain does for other codecs) stores the reversed shape; such elements
/// are reordered to the chunk's shape. (zarr-python 2 and zarrkit write
/// F-order chunks in their own shape, nested logically; `format/v2.rs`
/// puts no `transpose` before `json2`/`msgpack2`.)
pub(crate) fn document_elements<V>(
    codec: &'static str,
    mut document: Vec<V>,
    shape: &[u64],
    as_str: impl Fn(&V) -> Option<&str>,
    as_shape: impl Fn(&V) -> Option<Vec<u64>>,
    into_list: impl Fn(V) -> Option<Vec<V>>,
) -> Result<Vec<V>, CodecError> {
    let (Some(stored_shape), Some(dtype)) = (document.pop(), document.pop()) else {
        return Err(corrupt(
            codec,
            "the document has fewer than 2 items (it ends with the type string and the shape)"
                .to_string(),
        ));
    };
    match as_str(&dtype) {
        Some(OBJECT_DTYPE) => {}
        Some(other) => {
            return Err(corrupt(
                codec,
                format!("the type string is `{other}`, expected `{OBJECT_DTYPE}`"),
            ));
        }
        None => {
            return Err(corrupt(
                codec,
                "the next-to-last item is not a type string".to_string(),
            ));
        }
    }
    let stored = as_shape(&stored_shape).ok_or_else(|| {
        corrupt(
            codec,
            "the last item is not a shape (a list of integers)".to_string(),
        )
    })?;
    if stored == shape {
        return flatten(codec, document, shape, into_list);
    }
    if stored.iter().rev().eq(shape.iter()) {
        let logical = flatten(codec, document, &stored, into_list)?;
        return Ok(reverse_axes(logical, &stored));
    }
    Err(corrupt(
        codec,
        format!("the stored shape is {stored:?}, the chunk's is {shape:?}"),
    ))
}

/// `elements` in C order of `shape`, rearranged to C order of the reversed
/// shape (the transpose that reverses every axis).
fn reverse_axes<V>(elements: Vec<V>, shape: &[u64]) -> Vec<V> {
    let n = elements.len();
    // C-order strides of `shape`; the reversed array's axis `d` is axis
    // `k - d` of `shape`.
    let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    let mut strides = vec![1usize; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * dims[d + 1];
    }
    let reversed_dims: Vec<usize> = dims.iter().rev().copied().collect();
    let reversed_strides: Vec<usize> = strides.iter().rev().copied().collect();
    let mut slots: Vec<Option<V>> = elements.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(n);
    let mut index = vec![0usize; reversed_dims.len()];
    for _ in 0..n {
        let source: usize = index
            .iter()
            .zip(&reversed_strides)
            .map(|(i, s)| i * s)
            .sum();
        if let Some(value) = slots.get_mut(source).and_then(Option::take) {
            out.push(value);
        }
        for d in (0..index.len()).rev() {
            index[d] += 1;
            if index[d] < reversed_dims[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

/// The elements, in C order, of `items` nested as NumPy's `tolist()` nests
/// a chunk of `shape` (flat for 0-d and 1-d chunks).
fn flatten<V>(
    codec: &'static str,
    items: Vec<V>,
    shape: &[u64],
    into_list: impl Fn(V) -> Option<Vec<V>>,
) -> Result<Vec<V>, CodecError> {
    let wrong_len = |level: usize, len: usize, want: u64| {
        corrupt(
            codec,
            format!("a list at depth {level} has {len} items, the chunk's shape says {want}"),
        )
    };
    let Some((&first, rest)) = shape.split_first() else {
        return if items.len() == 1 {
            Ok(items)
        } else {
            Err(wrong_len(0, items.len(), 1))
        };
    };
    if items.len() as u64 != first {
        return Err(wrong_len(0, items.len(), first));
    }
    let mut current = items;
    for (level, &len) in rest.iter().enumerate() {
        let mut next = Vec::with_capacity(current.len());
        for item in current {
            let list = into_list(item).ok_or_else(|| {
                corrupt(
                    codec,
                    format!("an item at depth {} is not a list", level + 1),
                )
            })?;
            if list.len() as u64 != len {
                return Err(wrong_len(level + 1, list.len(), len));
            }
            next.extend(list);
        }
        current = next;
    }
    Ok(current)
}

/// Nests `elements` (C order) as NumPy's `tolist()` nests a chunk of
/// `shape`; the inverse of [`flatten`].
pub(crate) fn nest<V>(elements: Vec<V>, shape: &[u64], list: impl Fn(Vec<V>) -> V) -> Vec<V> {
    let mut current = elements;
    for &len in shape.iter().skip(1).rev() {
        let len = usize::try_from(len).unwrap_or(usize::MAX).max(1);
        let mut grouped = Vec::with_capacity(current.len() / len);
        let mut iter = current.into_iter().peekable();
        while iter.peek().is_some() {
            grouped.push(list(iter.by_ref().take(len).collect()));
        }
        current = grouped;
    }
    current
}

impl ArrayToBytesCodec for Json2Codec {
    fn metadata(&self) -> ExtensionObject {
        // numcodecs' `get_config()`, member for member.
        let (item, key) = self.separators();
        let c = &self.config;
        let mut configuration = JsonMap::new();
        configuration.insert("encoding".into(), c.encoding.clone().into());
        configuration.insert("skipkeys".into(), c.skipkeys.into());
        configuration.insert("ensure_ascii".into(), c.ensure_ascii.into());
        configuration.insert("check_circular".into(), c.check_circular.into());
        configuration.insert("allow_nan".into(), c.allow_nan.into());
        configuration.insert("indent".into(), c.indent.clone().unwrap_or(Value::Null));
        configuration.insert("separators".into(), serde_json::json!([item, key]));
        configuration.insert("sort_keys".into(), c.sort_keys.into());
        configuration.insert("strict".into(), c.strict.into());
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn validate(&self, repr: &ChunkRepr) -> Result<(), CodecError> {
        validate_object(NAME, repr)
    }

    crate::codec::vlen_array_to_bytes!(NAME);
}

impl Json2Codec {
    pub(crate) fn encode_elements(
        &self,
        decoded: &VlenChunk,
        repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let items = document_items(NAME, decoded, repr)?;
        let (item_separator, key_separator) = self.separators();
        let writer = PythonJson {
            ensure_ascii: self.config.ensure_ascii,
            sort_keys: self.config.sort_keys,
            item_separator,
            key_separator,
            indent: None,
            bare_non_finite_under: None,
        };
        let mut out = String::with_capacity(decoded.data_len() + 16);
        writer.write(&Value::Array(items), &mut out);
        Ok(out.into_bytes())
    }
    pub(crate) fn decode_elements(
        &self,
        encoded: Vec<u8>,
        repr: &ChunkRepr,
    ) -> Result<VlenChunk, CodecError> {
        let n = repr.element_count()?;
        let document: Value = serde_json::from_slice(&encoded).map_err(|e| {
            let hint = if encoded.windows(3).any(|w| w == b"NaN")
                || encoded.windows(8).any(|w| w == b"Infinity")
            {
                " (Python's NaN and Infinity have no JSON form)"
            } else {
                ""
            };
            corrupt(NAME, format!("not JSON: {e}{hint}"))
        })?;
        let Value::Array(document) = document else {
            return Err(corrupt(
                NAME,
                "the document is not a JSON array".to_string(),
            ));
        };
        let elements = document_elements(
            NAME,
            document,
            &repr.shape,
            Value::as_str,
            |v| v.as_array()?.iter().map(Value::as_u64).collect(),
            |v| match v {
                Value::Array(list) => Some(list),
                _ => None,
            },
        )?;
        debug_assert_eq!(elements.len(), n);
        let mut chunk = VlenChunk::with_capacity(n);
        for element in &elements {
            chunk.push(element.to_string().as_bytes());
        }
        Ok(chunk)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::metadata::FillValue;
    use proptest::prelude::*;
    use serde_json::json;

    fn repr(shape: &[u64]) -> ChunkRepr {
        ChunkRepr {
            shape: shape.to_vec(),
            data_type: DataType::Object,
            fill_value: FillValue::zero(&DataType::Object),
        }
    }

    fn vector(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/../testdata/codecs/json2/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn codec() -> Json2Codec {
        Json2Codec::new(Json2Config::default()).unwrap()
    }

    fn texts(chunk: &VlenChunk) -> Vec<String> {
        chunk
            .iter()
            .map(|e| String::from_utf8(e.to_vec()).unwrap())
            .collect()
    }

    /// The objects of `JSON_ITEMS` in object_codec_vectors.py.
    fn one_d_items() -> Vec<Value> {
        vec![
            json!("a"),
            json!(1),
            json!(null),
            json!({"a": {}, "b": "é", "x": [1, 2.5]}),
            json!([1, "b", []]),
            json!(true),
            json!(false),
            json!(1e20),
            json!(1.5e16),
            json!(9_999_999_999_999_998.0),
            json!(1e-5),
            json!(0.0001),
            json!(0.1),
            json!(-0.0),
            json!(2.0),
            json!(i64::MIN),
            json!(i64::MAX),
            json!("\u{2603} snow \u{1f600}"),
            json!("q\"\\\n\t\u{1}\u{7f}/"),
            json!(""),
        ]
    }

    #[test]
    fn one_dimensional_chunk_matches_numcodecs_bytes() {
        let stored = vector("1d.json");
        let r = repr(&[20]);
        let chunk = codec().decode_elements(stored.clone(), &r).unwrap();
        let values: Vec<Value> = texts(&chunk)
            .iter()
            .map(|t| serde_json::from_str(t).unwrap())
            .collect();
        assert_eq!(values, one_d_items());
        // Integers stay integers, floats stay floats.
        assert_eq!(texts(&chunk)[1], "1");
        assert_eq!(texts(&chunk)[14], "2.0");
        assert_eq!(codec().encode_elements(&chunk, &r).unwrap(), stored);
    }

    #[test]
    fn two_and_zero_dimensional_chunks_nest_as_numpy_tolist() {
        let stored = vector("2d.json");
        let r = repr(&[2, 3]);
        let chunk = codec().decode_elements(stored.clone(), &r).unwrap();
        assert_eq!(
            texts(&chunk),
            ["1", "\"é\"", "null", "[2.0]", "{\"k\":1}", "\"z\""]
        );
        assert_eq!(codec().encode_elements(&chunk, &r).unwrap(), stored);

        let stored = vector("0d.json");
        let r = repr(&[]);
        let chunk = codec().decode_elements(stored.clone(), &r).unwrap();
        assert_eq!(texts(&chunk), ["{\"only\":[1,2]}"]);
        assert_eq!(codec().encode_elements(&chunk, &r).unwrap(), stored);
    }

    #[test]
    fn empty_elements_are_null_and_options_change_the_text() {
        let chunk = VlenChunk::from_items(["", "{\"b\":1,\"a\":\"é\"}"]);
        let r = repr(&[2]);
        assert_eq!(
            codec().encode_elements(&chunk, &r).unwrap(),
            br#"[null,{"a":"\u00e9","b":1},"|O",[2]]"#
        );
        let c = Json2Codec::new(Json2Config {
            ensure_ascii: false,
            sort_keys: false,
            separators: Some((", ".into(), ": ".into())),
            ..Json2Config::default()
        })
        .unwrap();
        assert_eq!(
            String::from_utf8(c.encode_elements(&chunk, &r).unwrap()).unwrap(),
            r#"[null, {"b": 1, "a": "é"}, "|O", [2]]"#
        );
        let bad = VlenChunk::from_items(["1", "not json"]);
        assert!(codec().encode_elements(&bad, &r).is_err());
    }

    #[test]
    fn a_chunk_stored_in_the_reversed_shape_is_reordered() {
        // zarr-python 2 stores an F-order 2x3 chunk logically; zarrkit's
        // chain sees it transposed, as 3x2.
        let stored = br#"[[1,2,3],[4,5,6],"|O",[2,3]]"#.to_vec();
        let r = repr(&[3, 2]);
        let chunk = codec().decode_elements(stored, &r).unwrap();
        assert_eq!(texts(&chunk), ["1", "4", "2", "5", "3", "6"]);
        let r = repr(&[2, 2, 2]);
        let stored = br#"[[[0,1],[2,3]],[[4,5],[6,7]],"|O",[2,2,2]]"#.to_vec();
        assert_eq!(
            texts(&codec().decode_elements(stored, &r).unwrap()),
            ["0", "1", "2", "3", "4", "5", "6", "7"]
        );
        let r = repr(&[4, 3, 2]);
        let mut text = String::from("[");
        for i in 0..2 {
            text.push('[');
            for j in 0..3 {
                text.push('[');
                for k in 0..4 {
                    text.push_str(&format!(
                        "{}{}",
                        i * 100 + j * 10 + k,
                        if k < 3 { "," } else { "" }
                    ));
                }
                text.push_str(if j < 2 { "]," } else { "]" });
            }
            text.push_str("],");
        }
        text.push_str(r#""|O",[2,3,4]]"#);
        let got = texts(&codec().decode_elements(text.into_bytes(), &r).unwrap());
        // Element (k, j, i) of the reversed chunk is (i, j, k) of the stored one.
        let want: Vec<String> = (0..4)
            .flat_map(|k| {
                (0..3).flat_map(move |j| (0..2).map(move |i| (i * 100 + j * 10 + k).to_string()))
            })
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn floats_are_written_as_python_repr() {
        for (f, want) in [
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123.456, "123.456"),
            (1e-4, "0.0001"),
            (1.25e-5, "1.25e-05"),
            (-2.5e-300, "-2.5e-300"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (0.1 + 0.2, "0.30000000000000004"),
        ] {
            let mut out = String::new();
            python_float_repr(f, &mut out);
            assert_eq!(out, want, "{f}");
        }
    }

    /// Arbitrary JSON values: strings over all of Unicode, integers over
    /// the whole 64-bit ranges, finite floats, nested lists and objects.
    pub(crate) fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            ".{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((".{0,4}", inner), 0..4)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_json_values_round_trip(values in prop::collection::vec(arb_json(), 1..6)) {
            let r = repr(&[values.len() as u64]);
            let chunk = VlenChunk::from_items(values.iter().map(Value::to_string));
            let encoded = codec().encode_elements(&chunk, &r).unwrap();
            // What Python reads back: ASCII-only text.
            prop_assert!(encoded.is_ascii());
            let decoded = codec().decode_elements(encoded, &r).unwrap();
            let back: Vec<Value> = texts(&decoded)
                .iter()
                .map(|t| serde_json::from_str(t).unwrap())
                .collect();
            // Keys come back sorted, which `Value` equality ignores.
            prop_assert_eq!(back, values);
        }

        #[test]
        fn python_float_repr_reads_back_as_the_same_float(f in any::<f64>().prop_filter("finite", |f| f.is_finite())) {
            let mut out = String::new();
            python_float_repr(f, &mut out);
            prop_assert_eq!(out.parse::<f64>().unwrap().to_bits(), f.to_bits());
            prop_assert!(out.contains('.') || out.contains('e'), "{}", out);
        }
    }

    #[test]
    fn configuration_is_numcodecs_get_config() {
        let c = codec();
        assert_eq!(
            Value::Object(c.metadata().configuration_or_empty()),
            json!({
                "encoding": "utf-8", "skipkeys": false, "ensure_ascii": true,
                "check_circular": true, "allow_nan": true, "indent": null,
                "separators": [",", ":"], "sort_keys": true, "strict": true
            })
        );
        let mut config = JsonMap::new();
        config.insert("encoding".into(), "latin-1".into());
        assert!(create(&ExtensionObject::with_configuration(NAME, config)).is_err());
        let mut config = JsonMap::new();
        config.insert("unknown".into(), 1.into());
        assert!(create(&ExtensionObject::with_configuration(NAME, config)).is_err());
    }

    #[test]
    fn corrupt_input_is_an_error_not_a_panic() {
        let r = repr(&[2]);
        for (bad, what) in [
            (&b"[1,2,\"|O\",\"x\"]"[..], "not a shape"),
            (b"[1,2,3,[2]]", "not a type string"),
            (b"[1,2,\"<i4\",[2]]", "`<i4`"),
            (b"[1,2,\"|O\",[3]]", "stored shape"),
            (b"[1,\"|O\",[2]]", "1 items"),
            (b"[[1]]", "fewer than 2"),
            (b"{}", "not a JSON array"),
            (b"[NaN,1,\"|O\",[2]]", "NaN and Infinity"),
            (b"[1,2,\"|O\",[2]", "not JSON"),
            (b"\xff", "not JSON"),
        ] {
            let err = codec().decode_elements(bad.to_vec(), &r).unwrap_err();
            assert!(err.to_string().contains(what), "{what}: {err}");
        }
        let r = repr(&[2, 2]);
        for (bad, what) in [
            (&b"[1,2,\"|O\",[2,2]]"[..], "depth 1 is not a list"),
            (b"[[1],[2],\"|O\",[2,2]]", "depth 1 has 1 items"),
        ] {
            let err = codec().decode_elements(bad.to_vec(), &r).unwrap_err();
            assert!(err.to_string().contains(what), "{what}: {err}");
        }
        // Deep nesting is bounded by serde_json's recursion limit.
        let deep = format!("[{}1{},\"|O\",[1]]", "[".repeat(10_000), "]".repeat(10_000));
        assert!(
            codec()
                .decode_elements(deep.into_bytes(), &repr(&[1]))
                .is_err()
        );
    }
}
