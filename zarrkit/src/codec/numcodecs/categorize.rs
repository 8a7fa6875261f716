//! The `numcodecs.categorize` array→array codec: strings to integer labels,
//! as numcodecs' `Categorize` filter.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/filter/categorize.html>
//! Names: v3 `numcodecs.categorize` (as zarr-python 3.1 names numcodecs
//! filters; `categorize` is accepted too); v2 filter id `categorize`.
//!
//! Encoding maps each string to its position in `labels` plus one, and
//! every string that is not a label to 0; a label listed twice takes its
//! last position (numcodecs assigns the labels in order). Decoding maps
//! `1..=labels.len()` back to the labels and anything else to the empty
//! string. The decoded strings are variable-length (`dtype` `"|O"`:
//! [`DataType::String`]) or NumPy `U` (`dtype` `"<U3"`:
//! [`DataType::FixedUtf32`], where a label longer than the type reads back
//! cut to its length, as NumPy assigns it); the labels are `astype`, an
//! integer type.
//!
//! ```
//! # use zarrkit::codec::categorize::CategorizeConfig;
//! let config: CategorizeConfig = serde_json::from_str(
//!     r#"{ "labels": ["a", "b"], "dtype": "|O", "astype": "|u1" }"#,
//! )?;
//! assert_eq!(config.labels.len(), 2);
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::ChunkData;
use crate::codec::numpy_dtype::{NumpyDtype, is_integer, repr_as};
use crate::codec::vlen::VlenChunk;
use crate::codec::{ArrayToArrayCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::{DataType, ExtensionObject, FillValue, JsonMap, strings};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "numcodecs.categorize";
/// The numcodecs id, also accepted as a name.
pub const ID: &str = "categorize";

/// The configuration of the `numcodecs.categorize` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CategorizeConfig {
    /// The strings that get labels `1..=labels.len()`, in order.
    pub labels: Vec<String>,
    /// The decoded type: `"|O"` (variable-length strings) or a NumPy `U`
    /// type such as `"<U3"`.
    pub dtype: String,
    /// The encoded label type, a NumPy integer type such as `"|u1"`.
    pub astype: String,
}

/// The decoded type of [`CategorizeCodec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Strings {
    /// `|O`: variable-length UTF-8.
    Object,
    /// `U<n>`: `length_bytes` and whether the type string says big-endian.
    Utf32 {
        length_bytes: usize,
        big_endian: bool,
    },
}

/// The `numcodecs.categorize` codec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CategorizeCodec {
    labels: Vec<String>,
    /// Each label's code: its last position plus one.
    codes: HashMap<String, u64>,
    dtype: Strings,
    astype: NumpyDtype,
}

/// Creates `numcodecs.categorize` from its metadata.
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] for a missing member, a `dtype`
/// that is not `|O` or `U<n>`, or an `astype` that is not an integer type.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: CategorizeConfig = parse_configuration(metadata)?;
    Ok(Codec::ArrayToArray(Arc::new(CategorizeCodec::new(
        &config,
    )?)))
}

fn invalid(reason: String) -> CodecError {
    CodecError::InvalidConfiguration {
        codec: NAME.to_string(),
        reason,
    }
}

fn parse_strings(text: &str) -> Result<Strings, CodecError> {
    if matches!(text, "|O" | "O" | "object") {
        return Ok(Strings::Object);
    }
    let (big_endian, rest) = match text.as_bytes().first() {
        Some(b'>') => (true, &text[1..]),
        Some(b'<' | b'=' | b'|') => (false, &text[1..]),
        _ => (false, text),
    };
    rest.strip_prefix('U')
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .and_then(|n| n.checked_mul(4))
        .map(|length_bytes| Strings::Utf32 {
            length_bytes,
            big_endian,
        })
        .ok_or_else(|| {
            invalid(format!(
                "`dtype` is `{text}`, expected `|O` or a NumPy `U` type such as `<U8`"
            ))
        })
}

impl CategorizeCodec {
    /// A codec from its configuration.
    ///
    /// # Errors
    /// As [`create`].
    pub fn new(config: &CategorizeConfig) -> Result<Self, CodecError> {
        let dtype = parse_strings(&config.dtype)?;
        let astype = NumpyDtype::parse(NAME, "astype", &config.astype)?;
        if !is_integer(&astype.data_type) {
            return Err(invalid(format!(
                "`astype` is `{}`, expected an integer type",
                config.astype
            )));
        }
        let codes = config
            .labels
            .iter()
            .enumerate()
            .map(|(i, label)| (label.clone(), i as u64 + 1))
            .collect();
        Ok(Self {
            labels: config.labels.clone(),
            codes,
            dtype,
            astype,
        })
    }

    fn data_type(&self) -> DataType {
        match self.dtype {
            Strings::Object => DataType::String,
            Strings::Utf32 { length_bytes, .. } => DataType::FixedUtf32(length_bytes),
        }
    }

    fn check(&self, decoded: &ChunkRepr) -> Result<(), CodecError> {
        if decoded.data_type == self.data_type() {
            Ok(())
        } else {
            Err(CodecError::Incompatible {
                codec: NAME,
                what: format!(
                    "`{}` (it is configured for `{}`)",
                    decoded.data_type,
                    self.dtype_string()
                ),
            })
        }
    }

    fn dtype_string(&self) -> String {
        match self.dtype {
            Strings::Object => "|O".to_string(),
            Strings::Utf32 {
                length_bytes,
                big_endian,
            } => format!(
                "{}U{}",
                if big_endian { '>' } else { '<' },
                length_bytes / 4
            ),
        }
    }

    /// The code of `value`: its label's, or 0.
    fn code(&self, value: &str) -> u64 {
        self.codes.get(value).copied().unwrap_or(0)
    }

    /// The string of `code`, or `None` for 0 and codes past the labels.
    fn label(&self, code: u64) -> Option<&str> {
        let i = usize::try_from(code.checked_sub(1)?).ok()?;
        self.labels.get(i).map(String::as_str)
    }

    /// Appends `code` as one native-endian `astype` element.
    fn push_code(&self, code: u64, out: &mut Vec<u8>) -> Result<(), CodecError> {
        let fits = |max: u64| {
            if code <= max {
                Ok(())
            } else {
                Err(CodecError::Incompatible {
                    codec: NAME,
                    what: format!(
                        "label {code} as `{}` (there are too many labels)",
                        self.astype.to_type_string()
                    ),
                })
            }
        };
        match self.astype.data_type {
            DataType::UInt8 | DataType::Int8 => {
                fits(if self.astype.data_type == DataType::UInt8 {
                    u8::MAX.into()
                } else {
                    i8::MAX as u64
                })?;
                out.push(code as u8);
            }
            DataType::UInt16 | DataType::Int16 => {
                fits(if self.astype.data_type == DataType::UInt16 {
                    u16::MAX.into()
                } else {
                    i16::MAX as u64
                })?;
                out.extend_from_slice(&(code as u16).to_ne_bytes());
            }
            DataType::UInt32 | DataType::Int32 => {
                fits(if self.astype.data_type == DataType::UInt32 {
                    u32::MAX.into()
                } else {
                    i32::MAX as u64
                })?;
                out.extend_from_slice(&(code as u32).to_ne_bytes());
            }
            _ => {
                fits(if self.astype.data_type == DataType::UInt64 {
                    u64::MAX
                } else {
                    i64::MAX as u64
                })?;
                out.extend_from_slice(&code.to_ne_bytes());
            }
        }
        Ok(())
    }

    /// The codes of a chunk of native-endian `astype` elements (negative
    /// ones as 0, which no label has).
    fn codes_of(&self, encoded: &[u8], n: usize) -> Result<Vec<u64>, CodecError> {
        let size = self.astype.data_type.size();
        if Some(encoded.len()) != n.checked_mul(size) {
            return Err(CodecError::WrongSize {
                expected: n.saturating_mul(size),
                actual: encoded.len(),
            });
        }
        let signed = matches!(
            self.astype.data_type,
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64
        );
        Ok(encoded
            .chunks_exact(size)
            .map(|b| {
                let mut wide = [0u8; 8];
                let value = if cfg!(target_endian = "little") {
                    wide[..size].copy_from_slice(b);
                    u64::from_le_bytes(wide)
                } else {
                    wide[8 - size..].copy_from_slice(b);
                    u64::from_be_bytes(wide)
                };
                let negative = signed
                    && b[if cfg!(target_endian = "little") {
                        size - 1
                    } else {
                        0
                    }] & 0x80
                        != 0;
                if negative { 0 } else { value }
            })
            .collect())
    }

    fn fill_code(&self, decoded: &ChunkRepr) -> u64 {
        let bytes = decoded.fill_value.as_bytes();
        let fill = match self.dtype {
            Strings::Object => std::str::from_utf8(bytes).ok().map(str::to_string),
            Strings::Utf32 { .. } => strings::decode_utf32(bytes).ok(),
        };
        fill.map_or(0, |s| self.code(&s))
    }

    fn count(decoded: &ChunkRepr) -> Result<usize, CodecError> {
        decoded
            .num_elements()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| CodecError::TooLarge {
                shape: decoded.shape.clone(),
            })
    }
}

impl ArrayToArrayCodec for CategorizeCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert("labels".into(), self.labels.clone().into());
        configuration.insert("dtype".into(), self.dtype_string().into());
        configuration.insert("astype".into(), self.astype.to_type_string().into());
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn encoded_repr(&self, decoded: &ChunkRepr) -> Result<ChunkRepr, CodecError> {
        self.check(decoded)?;
        let mut repr = repr_as(decoded, self.astype.data_type.clone());
        let mut fill = Vec::with_capacity(8);
        self.push_code(self.fill_code(decoded), &mut fill)?;
        repr.fill_value = FillValue::new(fill);
        Ok(repr)
    }

    /// Variable-length strings map to codes as NumPy `U` strings do.
    fn encode(
        &self,
        decoded: ChunkData<'_>,
        decoded_repr: &ChunkRepr,
    ) -> Result<ChunkData<'static>, CodecError> {
        match &decoded {
            ChunkData::Vlen(chunk) => self.encode_elements(chunk, decoded_repr),
            ChunkData::Fixed(bytes) => self.encode_bytes(bytes, decoded_repr),
        }
        .map(Into::into)
    }

    /// Codes decode to variable-length strings for a variable-length
    /// decoded type, else to NumPy `U` strings.
    fn decode(
        &self,
        encoded: ChunkData<'_>,
        decoded_repr: &ChunkRepr,
    ) -> Result<ChunkData<'static>, CodecError> {
        let encoded = encoded.into_fixed(NAME)?;
        if decoded_repr.data_type.is_variable_length() {
            self.decode_elements(encoded, decoded_repr).map(Into::into)
        } else {
            self.decode_bytes(encoded, decoded_repr).map(Into::into)
        }
    }
}

impl CategorizeCodec {
    fn encode_bytes(
        &self,
        decoded: &[u8],
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        self.check(decoded_repr)?;
        let size = decoded_repr.data_type.size();
        let n = Self::count(decoded_repr)?;
        if Some(decoded.len()) != n.checked_mul(size) {
            return Err(CodecError::WrongSize {
                expected: n.saturating_mul(size),
                actual: decoded.len(),
            });
        }
        let mut out = Vec::with_capacity(n * self.astype.data_type.size());
        for (i, element) in decoded.chunks_exact(size.max(1)).enumerate() {
            let s = strings::decode_utf32(element).map_err(|reason| CodecError::Incompatible {
                codec: NAME,
                what: format!("element {i}, which is not a string: {reason}"),
            })?;
            self.push_code(self.code(&s), &mut out)?;
        }
        Ok(out)
    }

    fn decode_bytes(
        &self,
        encoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        self.check(decoded_repr)?;
        let Strings::Utf32 { length_bytes, .. } = self.dtype else {
            return Err(CodecError::Incompatible {
                codec: NAME,
                what: "variable-length strings as fixed-size elements".to_string(),
            });
        };
        let n = Self::count(decoded_repr)?;
        let codes = self.codes_of(&encoded, n)?;
        let mut out = Vec::with_capacity(n.saturating_mul(length_bytes));
        for code in codes {
            let label = self.label(code).unwrap_or("");
            // NumPy cuts a longer label to the type's length on assignment.
            let cut: String = label.chars().take(length_bytes / 4).collect();
            let element = strings::encode_utf32(&cut, length_bytes).unwrap_or_default();
            out.extend_from_slice(&element);
            out.resize(out.len().next_multiple_of(length_bytes.max(1)), 0);
        }
        Ok(out)
    }

    pub(crate) fn encode_elements(
        &self,
        decoded: &VlenChunk,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        self.check(decoded_repr)?;
        let n = Self::count(decoded_repr)?;
        if decoded.len() != n {
            return Err(CodecError::WrongSize {
                expected: n,
                actual: decoded.len(),
            });
        }
        let mut out = Vec::with_capacity(n * self.astype.data_type.size());
        for element in decoded.iter() {
            // Bytes that are not UTF-8 are no label's.
            let code = std::str::from_utf8(element).map_or(0, |s| self.code(s));
            self.push_code(code, &mut out)?;
        }
        Ok(out)
    }

    pub(crate) fn decode_elements(
        &self,
        encoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<VlenChunk, CodecError> {
        self.check(decoded_repr)?;
        let n = Self::count(decoded_repr)?;
        let codes = self.codes_of(&encoded, n)?;
        let mut out = VlenChunk::with_capacity(n);
        for code in codes {
            out.push(self.label(code).unwrap_or("").as_bytes());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::CodecChain;

    fn vector(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/../testdata/codecs/categorize/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn codec(labels: &[&str], dtype: &str, astype: &str) -> CategorizeCodec {
        CategorizeCodec::new(&CategorizeConfig {
            labels: labels.iter().map(|s| (*s).to_string()).collect(),
            dtype: dtype.into(),
            astype: astype.into(),
        })
        .unwrap()
    }

    fn utf32(strings: &[&str], length_bytes: usize) -> Vec<u8> {
        strings
            .iter()
            .flat_map(|s| strings::encode_utf32(s, length_bytes).unwrap())
            .collect()
    }

    #[test]
    fn fixed_utf32_strings_match_numcodecs_labels() {
        let c = codec(&["foo", "bar", "baz"], "<U3", "|u1");
        let data_type = DataType::FixedUtf32(12);
        let repr = ChunkRepr {
            shape: vec![7],
            fill_value: FillValue::zero(&data_type),
            data_type,
        };
        let strings = ["foo", "bar", "qux", "baz", "", "fo", "foo"];
        let encoded = c.encode(utf32(&strings, 12).into(), &repr).unwrap();
        assert_eq!(encoded, vector("u3_u1.bin"));
        assert_eq!(encoded, [1, 2, 0, 3, 0, 0, 1]);
        let decoded = c.decode(encoded, &repr).unwrap();
        assert_eq!(
            decoded,
            utf32(&["foo", "bar", "", "baz", "", "", "foo"], 12)
        );
        assert_eq!(c.encoded_repr(&repr).unwrap().data_type, DataType::UInt8);
    }

    #[test]
    fn variable_length_strings_through_the_chain_match_numcodecs() {
        // Labels ["α", "b", "α"] (a repeated label takes its last
        // position), stored as little-endian uint16.
        let repr = ChunkRepr {
            shape: vec![5],
            data_type: DataType::String,
            fill_value: FillValue::zero(&DataType::String),
        };
        let mut config = JsonMap::new();
        config.insert("labels".into(), serde_json::json!(["α", "b", "α"]));
        config.insert("dtype".into(), "|O".into());
        config.insert("astype".into(), "<u2".into());
        let mut bytes = JsonMap::new();
        bytes.insert("endian".into(), "little".into());
        let chain = CodecChain::from_metadata(
            &[
                ExtensionObject::with_configuration(ID, config),
                ExtensionObject::with_configuration("bytes", bytes),
            ],
            &repr,
        )
        .unwrap();
        let strings = VlenChunk::from_items(["b", "α", "zz", "b", ""]);
        let stored = chain.encode(&strings, &repr).unwrap();
        assert_eq!(stored, vector("object_u2.bin"));
        assert_eq!(
            chain.decode(stored, &repr).unwrap(),
            VlenChunk::from_items(["b", "α", "", "b", ""])
        );
        assert_eq!(chain.metadata()[0].name, NAME);
    }

    #[test]
    fn codes_outside_the_labels_and_long_labels_decode_as_numpy_does() {
        let c = codec(&["abcd", "b"], "<U3", "<i2");
        let data_type = DataType::FixedUtf32(12);
        let repr = ChunkRepr {
            shape: vec![4],
            fill_value: FillValue::zero(&data_type),
            data_type,
        };
        let codes: Vec<u8> = [1i16, 2, 9, -1]
            .iter()
            .flat_map(|c| c.to_ne_bytes())
            .collect();
        assert_eq!(
            c.decode(codes.into(), &repr).unwrap(),
            utf32(&["abc", "b", "", ""], 12)
        );
        assert!(c.decode(vec![0; 3].into(), &repr).is_err());
        let vlen = codec(&["x"], "|O", "|u1");
        let repr = ChunkRepr {
            shape: vec![3],
            data_type: DataType::String,
            fill_value: FillValue::new(b"x".to_vec()),
        };
        assert_eq!(
            vlen.decode_elements(vec![0, 1, 200], &repr).unwrap(),
            VlenChunk::from_items(["", "x", ""])
        );
        // The fill value maps to its label.
        assert_eq!(
            vlen.encoded_repr(&repr).unwrap().fill_value.as_bytes(),
            &[1]
        );
    }

    #[test]
    fn too_many_labels_for_the_label_type_fail_to_encode() {
        let labels: Vec<String> = (0..300).map(|i| i.to_string()).collect();
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        let c = codec(&labels, "|O", "|u1");
        let repr = ChunkRepr {
            shape: vec![2],
            data_type: DataType::String,
            fill_value: FillValue::zero(&DataType::String),
        };
        assert_eq!(
            c.encode_elements(&VlenChunk::from_items(["3", "nope"]), &repr)
                .unwrap(),
            [4, 0]
        );
        let err = c
            .encode_elements(&VlenChunk::from_items(["299", "0"]), &repr)
            .unwrap_err();
        assert!(err.to_string().contains("too many labels"), "{err}");
    }

    #[test]
    fn configuration_is_checked_and_written_as_numcodecs_does() {
        let c = codec(&["a"], "U2", "uint8");
        assert_eq!(
            serde_json::Value::Object(c.metadata().configuration_or_empty()),
            serde_json::json!({"labels": ["a"], "dtype": "<U2", "astype": "|u1"})
        );
        for (dtype, astype) in [("<S2", "|u1"), ("|O", "<f4"), ("<U0", "|u1"), ("|O", "|O")] {
            let mut config = JsonMap::new();
            config.insert("labels".into(), serde_json::json!([]));
            config.insert("dtype".into(), dtype.into());
            config.insert("astype".into(), astype.into());
            let err = create(&ExtensionObject::with_configuration(NAME, config)).unwrap_err();
            assert!(
                matches!(err, CodecError::InvalidConfiguration { .. }),
                "{dtype} {astype}: {err}"
            );
        }
        // The decoded type must be the configured one.
        let repr = ChunkRepr {
            shape: vec![1],
            data_type: DataType::FixedUtf32(8),
            fill_value: FillValue::zero(&DataType::FixedUtf32(8)),
        };
        assert!(c.encoded_repr(&repr).is_ok());
        let other = ChunkRepr {
            data_type: DataType::String,
            fill_value: FillValue::zero(&DataType::String),
            ..repr
        };
        assert!(c.encoded_repr(&other).is_err());
    }
}
