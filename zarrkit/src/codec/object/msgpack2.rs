//! The `msgpack2` array→bytes codec: a chunk of a v2 object (`|O`) array as
//! one MessagePack document, as numcodecs' `MsgPack` codec writes it.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/other/msgpack.html>
//! and the MessagePack specification.
//! Names: the v2 object codec id `msgpack2` (zarrkit uses the same name in
//! its model; no v3 data type holds such arrays).
//!
//! The document has the shape of `json2`'s (see [`crate::codec::json2`]): an array
//! of the chunk's elements nested as NumPy's `tolist()` nests them, then
//! `"|O"`, then the shape. Decoded elements
//! ([`DataType::Object`](crate::metadata::DataType::Object)) are
//! compact JSON text, converted from MessagePack as follows:
//!
//! | MessagePack | JSON |
//! | --- | --- |
//! | nil, boolean, integer, array | `null`, `true`/`false`, number, array |
//! | float 32/64 | number (a float32 widened exactly to `f64`) |
//! | str (must be UTF-8, as numcodecs' `raw=False` requires) | string |
//! | map (keys must be str) | object, in stored order |
//! | bin | `{"$bin": "<base64>"}` (standard alphabet, padded) |
//! | ext | `{"$ext": {"type": <-128..127>, "data": "<base64>"}}` |
//!
//! Writing maps back: an object whose only member is `$bin` (a base64
//! string) is written as bin, one whose only member is `$ext` (with `type`
//! and `data`) as ext, so a chunk read and written back decodes in numcodecs
//! to the same objects. A map with keys that are not strings, and floats
//! that are not finite, have no JSON form: such a chunk is an error.
//! Integers are written in the smallest form, floats as float64 (float32
//! with `use_single_float`), bin as str with `use_bin_type: false` (using
//! only the old spec's str forms, as msgpack-python does), which gives the
//! bytes msgpack-python gives.
//!
//! ```
//! # use zarrkit::codec::msgpack2::MsgPack2Config;
//! let config: MsgPack2Config = serde_json::from_str(r#"{ "use_bin_type": true }"#)?;
//! assert!(!config.use_single_float);
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::json2::{document_elements, document_items, validate_object};
use crate::codec::vlen::VlenChunk;
use crate::codec::{ArrayToBytesCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::{ExtensionObject, JsonMap};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// The codec's name (and numcodecs id).
pub const NAME: &str = "msgpack2";

/// The tag of a MessagePack bin value in JSON.
pub const BIN_TAG: &str = "$bin";
/// The tag of a MessagePack ext value in JSON.
pub const EXT_TAG: &str = "$ext";

/// Nesting deeper than this is refused (serde_json's own limit is 128).
const MAX_DEPTH: usize = 120;

fn default_true() -> bool {
    true
}

/// The configuration of the `msgpack2` codec: msgpack-python's options.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MsgPack2Config {
    /// msgpack-python's `raw`: whether Python reads str as bytes (no
    /// effect here: str must be UTF-8 and reads as a JSON string).
    #[serde(default)]
    pub raw: bool,
    /// Whether floats are written as float32.
    #[serde(default)]
    pub use_single_float: bool,
    /// Whether bytes are written as bin (else as str).
    #[serde(default = "default_true")]
    pub use_bin_type: bool,
}

/// The `msgpack2` codec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MsgPack2Codec {
    config: MsgPack2Config,
}

/// Creates `msgpack2` from its metadata.
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] for an unknown member or one of the
/// wrong type.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: MsgPack2Config = parse_configuration(metadata)?;
    Ok(Codec::ArrayToBytes(Arc::new(MsgPack2Codec::new(config))))
}

fn corrupt(reason: String) -> CodecError {
    CodecError::Corrupt {
        codec: NAME,
        reason,
    }
}

fn incompatible(what: String) -> CodecError {
    CodecError::Incompatible { codec: NAME, what }
}

/// A MessagePack value as JSON (see the module documentation).
fn to_json(value: rmpv::Value) -> Result<Value, String> {
    use rmpv::Value as M;
    Ok(match value {
        M::Nil => Value::Null,
        M::Boolean(b) => Value::Bool(b),
        M::Integer(i) => match (i.as_u64(), i.as_i64()) {
            (Some(u), _) => Value::from(u),
            (None, Some(i)) => Value::from(i),
            (None, None) => return Err(format!("integer {i} is out of range")),
        },
        M::F32(f) => float(f64::from(f))?,
        M::F64(f) => float(f)?,
        M::String(s) => Value::String(
            s.into_str()
                .ok_or_else(|| "a str that is not UTF-8".to_string())?,
        ),
        M::Binary(bytes) => tagged(BIN_TAG, Value::String(BASE64.encode(bytes))),
        M::Array(items) => Value::Array(items.into_iter().map(to_json).collect::<Result<_, _>>()?),
        M::Map(entries) => {
            let mut map = JsonMap::with_capacity(entries.len());
            for (key, item) in entries {
                let key = match key {
                    M::String(s) => s
                        .into_str()
                        .ok_or_else(|| "a map key that is not UTF-8".to_string())?,
                    other => {
                        return Err(format!(
                            "a map key that is not a string ({other}); JSON objects have string keys"
                        ));
                    }
                };
                map.insert(key, to_json(item)?);
            }
            Value::Object(map)
        }
        M::Ext(ty, data) => tagged(
            EXT_TAG,
            serde_json::json!({"type": ty, "data": BASE64.encode(data)}),
        ),
    })
}

fn float(f: f64) -> Result<Value, String> {
    serde_json::Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| format!("the float {f}, which JSON cannot hold"))
}

fn tagged(tag: &str, value: Value) -> Value {
    let mut map = JsonMap::with_capacity(1);
    map.insert(tag.to_string(), value);
    Value::Object(map)
}

/// The bytes of a `$bin` object, or of a `$ext` object with its type;
/// `None` for any other value.
enum Tagged {
    Bin(Vec<u8>),
    Ext(i8, Vec<u8>),
}

fn untag(map: &JsonMap) -> Result<Option<Tagged>, String> {
    if map.len() != 1 {
        return Ok(None);
    }
    let decode = |text: &Value, tag: &str| -> Result<Vec<u8>, String> {
        text.as_str()
            .and_then(|t| BASE64.decode(t).ok())
            .ok_or_else(|| format!("a `{tag}` value that is not a base64 string: {text}"))
    };
    if let Some(bin) = map.get(BIN_TAG) {
        return decode(bin, BIN_TAG).map(|b| Some(Tagged::Bin(b)));
    }
    if let Some(ext) = map.get(EXT_TAG) {
        let parsed = ext.as_object().filter(|o| o.len() == 2).and_then(|o| {
            let ty = o.get("type")?.as_i64().and_then(|t| i8::try_from(t).ok())?;
            Some((ty, o.get("data")?))
        });
        let (ty, data) = parsed.ok_or_else(|| {
            format!(
                "a `{EXT_TAG}` value that is not {{\"type\": -128..127, \"data\": base64}}: {ext}"
            )
        })?;
        return decode(data, EXT_TAG).map(|d| Some(Tagged::Ext(ty, d)));
    }
    Ok(None)
}

impl MsgPack2Codec {
    /// A codec with `config`.
    #[must_use]
    pub fn new(config: MsgPack2Config) -> Self {
        Self { config }
    }

    /// Writes a str (or, without `use_bin_type`, raw bytes) header.
    fn write_str_len(&self, out: &mut Vec<u8>, len: usize) -> Result<(), String> {
        let len = u32::try_from(len).map_err(|_| format!("a string of {len} bytes"))?;
        if self.config.use_bin_type {
            rmp::encode::write_str_len(out, len).map_err(|e| e.to_string())?;
        } else if len < 32 {
            out.push(0xa0 | len as u8);
        } else if let Ok(len) = u16::try_from(len) {
            // The old spec has no str8: msgpack-python skips it here.
            out.push(0xda);
            out.extend_from_slice(&len.to_be_bytes());
        } else {
            out.push(0xdb);
            out.extend_from_slice(&len.to_be_bytes());
        }
        Ok(())
    }

    fn write(&self, value: &Value, out: &mut Vec<u8>) -> Result<(), String> {
        let len = |n: usize| u32::try_from(n).map_err(|_| format!("a collection of {n} items"));
        match value {
            Value::Null => rmp::encode::write_nil(out).map_err(|e| e.to_string())?,
            Value::Bool(b) => rmp::encode::write_bool(out, *b).map_err(|e| e.to_string())?,
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    rmp::encode::write_uint(out, u).map_err(|e| e.to_string())?;
                } else if let Some(i) = n.as_i64() {
                    rmp::encode::write_sint(out, i).map_err(|e| e.to_string())?;
                } else {
                    let f = n.as_f64().unwrap_or(f64::NAN);
                    if self.config.use_single_float {
                        #[allow(clippy::cast_possible_truncation)]
                        rmp::encode::write_f32(out, f as f32).map_err(|e| e.to_string())?;
                    } else {
                        rmp::encode::write_f64(out, f).map_err(|e| e.to_string())?;
                    }
                }
            }
            Value::String(s) => {
                self.write_str_len(out, s.len())?;
                out.extend_from_slice(s.as_bytes());
            }
            Value::Array(items) => {
                rmp::encode::write_array_len(out, len(items.len())?).map_err(|e| e.to_string())?;
                for item in items {
                    self.write(item, out)?;
                }
            }
            Value::Object(map) => match untag(map)? {
                Some(Tagged::Bin(bytes)) => {
                    if self.config.use_bin_type {
                        rmp::encode::write_bin_len(out, len(bytes.len())?)
                            .map_err(|e| e.to_string())?;
                    } else {
                        self.write_str_len(out, bytes.len())?;
                    }
                    out.extend_from_slice(&bytes);
                }
                Some(Tagged::Ext(ty, data)) => {
                    rmp::encode::write_ext_meta(out, len(data.len())?, ty)
                        .map_err(|e| e.to_string())?;
                    out.extend_from_slice(&data);
                }
                None => {
                    rmp::encode::write_map_len(out, len(map.len())?).map_err(|e| e.to_string())?;
                    for (key, item) in map {
                        self.write_str_len(out, key.len())?;
                        out.extend_from_slice(key.as_bytes());
                        self.write(item, out)?;
                    }
                }
            },
        }
        Ok(())
    }
}

impl ArrayToBytesCodec for MsgPack2Codec {
    fn metadata(&self) -> ExtensionObject {
        // numcodecs' `get_config()`, member for member.
        let mut configuration = JsonMap::new();
        configuration.insert("raw".into(), self.config.raw.into());
        configuration.insert(
            "use_single_float".into(),
            self.config.use_single_float.into(),
        );
        configuration.insert("use_bin_type".into(), self.config.use_bin_type.into());
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn validate(&self, repr: &ChunkRepr) -> Result<(), CodecError> {
        validate_object(NAME, repr)
    }

    crate::codec::vlen_array_to_bytes!(NAME);
}

impl MsgPack2Codec {
    pub(crate) fn encode_elements(
        &self,
        decoded: &VlenChunk,
        repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let items = document_items(NAME, decoded, repr)?;
        let mut out = Vec::with_capacity(decoded.data_len() + 16);
        self.write(&Value::Array(items), &mut out)
            .map_err(incompatible)?;
        Ok(out)
    }
    pub(crate) fn decode_elements(
        &self,
        encoded: Vec<u8>,
        repr: &ChunkRepr,
    ) -> Result<VlenChunk, CodecError> {
        let n = repr.element_count()?;
        let mut reader = encoded.as_slice();
        let document = rmpv::decode::read_value_with_max_depth(&mut reader, MAX_DEPTH)
            .map_err(|e| corrupt(format!("not MessagePack: {e}")))?;
        if !reader.is_empty() {
            return Err(corrupt(format!(
                "{} bytes left over after the document",
                reader.len()
            )));
        }
        let rmpv::Value::Array(document) = document else {
            return Err(corrupt("the document is not an array".to_string()));
        };
        let elements = document_elements(
            NAME,
            document,
            &repr.shape,
            rmpv::Value::as_str,
            |v| v.as_array()?.iter().map(rmpv::Value::as_u64).collect(),
            |v| match v {
                rmpv::Value::Array(list) => Some(list),
                _ => None,
            },
        )?;
        let mut chunk = VlenChunk::with_capacity(n);
        for (i, element) in elements.into_iter().enumerate() {
            let value = to_json(element).map_err(|what| corrupt(format!("element {i}: {what}")))?;
            chunk.push(value.to_string().as_bytes());
        }
        Ok(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{DataType, FillValue};
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
            "{}/../testdata/codecs/msgpack2/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn codec() -> MsgPack2Codec {
        MsgPack2Codec::new(MsgPack2Config {
            use_bin_type: true,
            ..MsgPack2Config::default()
        })
    }

    fn values(chunk: &VlenChunk) -> Vec<Value> {
        chunk
            .iter()
            .map(|e| serde_json::from_slice(e).unwrap())
            .collect()
    }

    #[test]
    fn one_dimensional_chunk_matches_numcodecs_bytes() {
        let stored = vector("1d.msgpack");
        let r = repr(&[17]);
        let chunk = codec().decode_elements(stored.clone(), &r).unwrap();
        let keys: JsonMap = (0..17).map(|i| (format!("k{i:02}"), json!(i))).collect();
        assert_eq!(
            values(&chunk),
            [
                json!("a"),
                json!(1),
                json!(null),
                json!({"x": [1, 2.5], "b": "é"}),
                json!([1, "b", []]),
                json!(true),
                json!({"$bin": "AP8="}),
                json!({"$bin": ""}),
                json!(-3),
                json!(-200),
                json!(1u64 << 40),
                json!(-(1i64 << 40)),
                json!(u64::MAX),
                json!(1.5),
                json!("é".repeat(40)),
                json!((0..20).collect::<Vec<_>>()),
                Value::Object(keys),
            ]
        );
        // Map order is kept as stored.
        assert_eq!(chunk.get(3).unwrap(), r#"{"x":[1,2.5],"b":"é"}"#.as_bytes());
        assert_eq!(codec().encode_elements(&chunk, &r).unwrap(), stored);
    }

    #[test]
    fn two_dimensional_chunk_nests_as_numpy_tolist() {
        let stored = vector("2d.msgpack");
        let r = repr(&[2, 3]);
        let chunk = codec().decode_elements(stored.clone(), &r).unwrap();
        assert_eq!(
            values(&chunk),
            [
                json!(1),
                json!("é"),
                json!(null),
                json!([2.0]),
                json!({"k": 1}),
                json!("z")
            ]
        );
        assert_eq!(codec().encode_elements(&chunk, &r).unwrap(), stored);
    }

    #[test]
    fn single_floats_and_bytes_as_str_match_numcodecs() {
        let c = MsgPack2Codec::new(MsgPack2Config {
            use_single_float: true,
            use_bin_type: false,
            raw: false,
        });
        let stored = vector("single_float_no_bin.msgpack");
        let r = repr(&[3]);
        let chunk = c.decode_elements(stored.clone(), &r).unwrap();
        // Without bin, numcodecs wrote b"ab" as a str.
        assert_eq!(values(&chunk), [json!(0.5), json!("ab"), json!("c")]);
        assert_eq!(c.encode_elements(&chunk, &r).unwrap(), stored);
        // Old-spec strings skip str8: a 40-byte string takes str16.
        let long = VlenChunk::from_items([json!("x".repeat(40)).to_string()]);
        let encoded = c.encode_elements(&long, &repr(&[1])).unwrap();
        assert_eq!(&encoded[1..4], &[0xda, 0, 40]);
        let encoded = codec().encode_elements(&long, &repr(&[1])).unwrap();
        assert_eq!(&encoded[1..3], &[0xd9, 40]);
    }

    #[test]
    fn ext_and_bin_round_trip_through_their_tags() {
        // [ext(5, b"\x01\x02"), bin(b"\xff"), "|O", [2]]
        let stored = vec![
            0x94, 0xd5, 0x05, 0x01, 0x02, 0xc4, 0x01, 0xff, 0xa2, b'|', b'O', 0x91, 0x02,
        ];
        let r = repr(&[2]);
        let chunk = codec().decode_elements(stored.clone(), &r).unwrap();
        assert_eq!(
            values(&chunk),
            [
                json!({"$ext": {"type": 5, "data": "AQI="}}),
                json!({"$bin": "/w=="})
            ]
        );
        assert_eq!(codec().encode_elements(&chunk, &r).unwrap(), stored);
        // A `$bin` member next to others is an ordinary map member.
        let plain = VlenChunk::from_items([r#"{"$bin":"x","y":1}"#, "null"]);
        let encoded = codec().encode_elements(&plain, &r).unwrap();
        assert_eq!(codec().decode_elements(encoded, &r).unwrap(), plain);
        // A lone `$bin` that is not base64 cannot be written.
        let bad = VlenChunk::from_items([r#"{"$bin":"!!"}"#, "null"]);
        let err = codec().encode_elements(&bad, &r).unwrap_err();
        assert!(err.to_string().contains("not a base64 string"), "{err}");
        let bad = VlenChunk::from_items([r#"{"$ext":{"type":300,"data":""}}"#, "null"]);
        assert!(codec().encode_elements(&bad, &r).is_err());
    }

    proptest::proptest! {
        #[test]
        fn any_json_values_round_trip(
            items in proptest::collection::vec(crate::codec::json2::tests::arb_json(), 1..6)
        ) {
            let r = repr(&[items.len() as u64]);
            let chunk = VlenChunk::from_items(items.iter().map(Value::to_string));
            let encoded = codec().encode_elements(&chunk, &r).unwrap();
            let decoded = codec().decode_elements(encoded, &r).unwrap();
            proptest::prop_assert_eq!(values(&decoded), items);
        }
    }

    #[test]
    fn configuration_is_numcodecs_get_config() {
        let c = create(&ExtensionObject::new(NAME)).unwrap();
        assert_eq!(
            Value::Object(c.metadata().configuration_or_empty()),
            json!({"raw": false, "use_single_float": false, "use_bin_type": true})
        );
        let mut config = JsonMap::new();
        config.insert("strict_map_key".into(), true.into());
        assert!(create(&ExtensionObject::with_configuration(NAME, config)).is_err());
    }

    #[test]
    fn corrupt_input_is_an_error_not_a_panic() {
        let r = repr(&[1]);
        for (bad, what) in [
            (vec![], "not MessagePack"),
            (vec![0x93, 0x01, 0xa2, b'|', b'O'], "not MessagePack"),
            (
                vec![0x93, 0x01, 0xa2, b'|', b'O', 0x91, 0x01, 0x00],
                "left over",
            ),
            (vec![0x01], "not an array"),
            (vec![0x93, 0x01, 0xa2, b'<', b'i', 0x91, 0x01], "`<i`"),
            (
                vec![0x93, 0x01, 0xa2, b'|', b'O', 0x91, 0x02],
                "stored shape",
            ),
            // A map with an integer key.
            (
                vec![0x93, 0x81, 0x01, 0x02, 0xa2, b'|', b'O', 0x91, 0x01],
                "not a string",
            ),
            // A str that is not UTF-8.
            (
                vec![0x93, 0xa1, 0xff, 0xa2, b'|', b'O', 0x91, 0x01],
                "not UTF-8",
            ),
            // A NaN float64.
            (
                [
                    &[0x93, 0xcb][..],
                    &f64::NAN.to_be_bytes(),
                    &[0xa2, b'|', b'O', 0x91, 0x01],
                ]
                .concat(),
                "JSON cannot hold",
            ),
            // An array header claiming 2^32 - 1 items.
            (vec![0xdd, 0xff, 0xff, 0xff, 0xff], "not MessagePack"),
        ] {
            let err = codec().decode_elements(bad, &r).unwrap_err();
            assert!(err.to_string().contains(what), "{what}: {err}");
        }
        // Deep nesting is refused, not a stack overflow.
        let mut deep = vec![0x91; 100_000];
        deep.push(0xc0);
        assert!(codec().decode_elements(deep, &r).is_err());
    }
}
