//! The `vlen-array` array→bytes codec: a chunk of variable-length
//! one-dimensional numeric arrays, as numcodecs' `VLenArray` stores the
//! elements of a v2 object (`|O`) array.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/vlen.html>
//! Names: the v2 object codec id `vlen-array` (zarrkit uses the same name in
//! its model; no v3 data type holds such arrays).
//!
//! Layout (checked against numcodecs 0.16, see
//! `testdata/generate/object_codec_vectors.py`): a little-endian `u32`
//! count of elements, then for each element in C order a little-endian
//! `u32` byte length and the element's values in the byte order of the
//! configured `dtype` (so `">f8"` stores big-endian doubles). Decoded
//! elements are the native-endian bytes of the inner type
//! ([`DataType::VlenArray`]).
//!
//! ```
//! # use zarrkit::codec::vlen_array::VlenArrayConfig;
//! let config: VlenArrayConfig = serde_json::from_str(r#"{ "dtype": "<i4" }"#)?;
//! assert_eq!(config.dtype, "<i4");
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::numpy_dtype::NumpyDtype;
use crate::codec::vlen::VlenChunk;
use crate::codec::{ArrayToBytesCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::{DataType, ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The codec's name (and numcodecs id).
pub const NAME: &str = "vlen-array";

/// The configuration of the `vlen-array` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VlenArrayConfig {
    /// The type of the values of each element, a NumPy type string such as
    /// `"<i4"` or `">f8"`; its byte order is the stored byte order.
    pub dtype: String,
}

/// The `vlen-array` codec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VlenArrayCodec {
    dtype: NumpyDtype,
}

/// Creates `vlen-array` from its metadata.
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] for a missing or non-numeric
/// `dtype` or another member.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: VlenArrayConfig = parse_configuration(metadata)?;
    Ok(Codec::ArrayToBytes(Arc::new(VlenArrayCodec::new(
        parse_dtype(&config.dtype)?,
    ))))
}

/// A numeric NumPy type string: those of [`NumpyDtype::parse`], and the
/// complex types `c8` and `c16`.
fn parse_dtype(text: &str) -> Result<NumpyDtype, CodecError> {
    let (big_endian, rest) = match text.as_bytes().first() {
        Some(b'>') => (true, &text[1..]),
        Some(b'<' | b'=' | b'|') => (false, &text[1..]),
        _ => (false, text),
    };
    let complex = match rest {
        "c8" | "complex64" => DataType::Complex64,
        "c16" | "complex128" => DataType::Complex128,
        _ => return NumpyDtype::parse(NAME, "dtype", text),
    };
    Ok(NumpyDtype {
        data_type: complex,
        big_endian,
    })
}

/// The type string numcodecs writes for `dtype` (`"<i4"`, `"|u1"`, `">c8"`).
fn type_string(dtype: &NumpyDtype) -> String {
    let order = if dtype.big_endian { '>' } else { '<' };
    match dtype.data_type {
        DataType::Complex64 => format!("{order}c8"),
        DataType::Complex128 => format!("{order}c16"),
        _ => dtype.to_type_string(),
    }
}

impl VlenArrayCodec {
    /// A codec storing elements of `dtype` (its byte order is the stored one).
    #[must_use]
    pub fn new(dtype: NumpyDtype) -> Self {
        Self { dtype }
    }

    /// The type of the values of each element.
    #[must_use]
    pub fn inner(&self) -> &DataType {
        &self.dtype.data_type
    }

    fn corrupt(reason: String) -> CodecError {
        CodecError::Corrupt {
            codec: NAME,
            reason,
        }
    }

    /// Whether stored values must be byte-swapped to or from native order.
    fn swaps(&self) -> bool {
        self.dtype.data_type.size() > 1 && self.dtype.big_endian != cfg!(target_endian = "big")
    }

    fn swap(&self, values: &mut [u8]) {
        let size = self.dtype.data_type.size();
        // Each number on its own: a complex value is two of them.
        let units = self.dtype.data_type.endian_units();
        for value in values.chunks_exact_mut(size) {
            for &(offset, unit) in &units {
                value[offset..offset + unit].reverse();
            }
        }
    }
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

impl ArrayToBytesCodec for VlenArrayCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert("dtype".into(), type_string(&self.dtype).into());
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn validate(&self, repr: &ChunkRepr) -> Result<(), CodecError> {
        match &repr.data_type {
            DataType::VlenArray(inner) if **inner == self.dtype.data_type => Ok(()),
            other => Err(CodecError::Incompatible {
                codec: NAME,
                what: format!(
                    "`{other}` (it is configured for `{}`, `vlen_array<{}>`)",
                    type_string(&self.dtype),
                    self.dtype.data_type
                ),
            }),
        }
    }

    crate::codec::vlen_array_to_bytes!(NAME);
}

impl VlenArrayCodec {
    pub(crate) fn encode_elements(
        &self,
        decoded: &VlenChunk,
        repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let n = repr.element_count()?;
        if decoded.len() != n {
            return Err(CodecError::WrongSize {
                expected: n,
                actual: decoded.len(),
            });
        }
        let size = self.dtype.data_type.size();
        let too_long = |what: usize| CodecError::Incompatible {
            codec: NAME,
            what: format!("{what} elements or bytes (more than 2^32 - 1)"),
        };
        let mut out = Vec::with_capacity(4 + 4 * n + decoded.data_len());
        out.extend_from_slice(&u32::try_from(n).map_err(|_| too_long(n))?.to_le_bytes());
        for (i, item) in decoded.iter().enumerate() {
            if item.len() % size != 0 {
                return Err(CodecError::Incompatible {
                    codec: NAME,
                    what: format!(
                        "element {i} of {} bytes (not a whole number of {size}-byte `{}` values)",
                        item.len(),
                        self.dtype.data_type
                    ),
                });
            }
            let len = u32::try_from(item.len()).map_err(|_| too_long(item.len()))?;
            out.extend_from_slice(&len.to_le_bytes());
            let start = out.len();
            out.extend_from_slice(item);
            if self.swaps() {
                self.swap(&mut out[start..]);
            }
        }
        Ok(out)
    }
    pub(crate) fn decode_elements(
        &self,
        encoded: Vec<u8>,
        repr: &ChunkRepr,
    ) -> Result<VlenChunk, CodecError> {
        let n = repr.element_count()?;
        let count = read_u32(&encoded, 0).ok_or_else(|| {
            Self::corrupt(format!(
                "{} bytes is too short for the header",
                encoded.len()
            ))
        })?;
        if count as usize != n {
            return Err(Self::corrupt(format!(
                "the header says {count} items, the chunk has {n} elements"
            )));
        }
        // Each item takes at least its 4-byte length: bound the count by the
        // input before allocating for it.
        if n > encoded.len().saturating_sub(4) / 4 {
            return Err(Self::corrupt(format!(
                "{n} items cannot fit in {} bytes",
                encoded.len()
            )));
        }
        let size = self.dtype.data_type.size();
        let swaps = self.swaps();
        let mut chunk = VlenChunk::with_capacity(n);
        let mut item_buf = Vec::new();
        let mut at = 4;
        for i in 0..n {
            let len = read_u32(&encoded, at)
                .ok_or_else(|| Self::corrupt(format!("truncated at the length of item {i}")))?
                as usize;
            at += 4;
            let item = encoded.get(at..at.saturating_add(len)).ok_or_else(|| {
                Self::corrupt(format!("item {i} of {len} bytes runs past the end"))
            })?;
            if !len.is_multiple_of(size) {
                return Err(Self::corrupt(format!(
                    "item {i} has {len} bytes, not a whole number of {size}-byte `{}` values",
                    self.dtype.data_type
                )));
            }
            if swaps {
                item_buf.clear();
                item_buf.extend_from_slice(item);
                self.swap(&mut item_buf);
                chunk.push(&item_buf);
            } else {
                chunk.push(item);
            }
            at += len;
        }
        if at != encoded.len() {
            return Err(Self::corrupt(format!(
                "{} bytes left over after the last item",
                encoded.len() - at
            )));
        }
        Ok(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::CodecChain;
    use crate::metadata::FillValue;

    fn codec(dtype: &str) -> VlenArrayCodec {
        VlenArrayCodec::new(parse_dtype(dtype).unwrap())
    }

    fn repr(inner: DataType, n: u64) -> ChunkRepr {
        let data_type = DataType::VlenArray(Box::new(inner));
        ChunkRepr {
            shape: vec![n],
            fill_value: FillValue::zero(&data_type),
            data_type,
        }
    }

    fn vector(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/../testdata/codecs/vlen-array/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn i32s(values: &[i32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_ne_bytes()).collect()
    }

    #[test]
    fn little_endian_int32_matches_numcodecs() {
        // [[1, 2, 3], [], [7]] as "<i4".
        let chunk = VlenChunk::from_items([i32s(&[1, 2, 3]), i32s(&[]), i32s(&[7])]);
        let r = repr(DataType::Int32, 3);
        let c = codec("<i4");
        let stored = vector("i4_le.bin");
        assert_eq!(c.encode_elements(&chunk, &r).unwrap(), stored);
        assert_eq!(c.decode_elements(stored, &r).unwrap(), chunk);
    }

    #[test]
    fn big_endian_float64_is_swapped_to_native() {
        // [[1.5, -2.0], [], [1e300]] as ">f8".
        let values: [&[f64]; 3] = [&[1.5, -2.0], &[], &[1e300]];
        let chunk = VlenChunk::from_items(
            values
                .iter()
                .map(|v| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<_>>()),
        );
        let r = repr(DataType::Float64, 3);
        let c = codec(">f8");
        let stored = vector("f8_be.bin");
        // The first stored value is 1.5 big-endian.
        assert_eq!(&stored[8..16], &1.5f64.to_be_bytes());
        assert_eq!(c.encode_elements(&chunk, &r).unwrap(), stored);
        assert_eq!(c.decode_elements(stored, &r).unwrap(), chunk);
    }

    #[test]
    fn uint8_elements_decode_through_the_chain_as_numcodecs_stored_them() {
        // [[255, 0], [1, 2, 3, 4]] as "|u1".
        let chunk = VlenChunk::from_items([vec![255u8, 0], vec![1, 2, 3, 4]]);
        let r = repr(DataType::UInt8, 2);
        let stored = vector("u1.bin");
        assert_eq!(codec("|u1").encode_elements(&chunk, &r).unwrap(), stored);
        let chain = CodecChain::from_metadata(
            &[ExtensionObject::with_configuration(NAME, {
                let mut c = JsonMap::new();
                c.insert("dtype".into(), "|u1".into());
                c
            })],
            &r,
        )
        .unwrap();
        assert_eq!(chain.decode(stored, &r).unwrap(), chunk);
    }

    #[test]
    fn big_endian_complex_swaps_each_part() {
        // [[1+2j], [-0.5+0j]] as ">c8", as numcodecs stores it.
        let stored = vector("c8_be.bin");
        let chunk = VlenChunk::from_items(
            [[1.0f32, 2.0], [-0.5, 0.0]]
                .iter()
                .map(|v| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<_>>()),
        );
        let c = codec(">c8");
        let r = repr(DataType::Complex64, 2);
        assert_eq!(c.encode_elements(&chunk, &r).unwrap(), stored);
        assert_eq!(c.decode_elements(stored, &r).unwrap(), chunk);
        assert_eq!(
            c.metadata().configuration_or_empty()["dtype"],
            serde_json::json!(">c8")
        );
        assert_eq!(codec("complex128").inner(), &DataType::Complex128);
    }

    #[test]
    fn configuration_round_trips_and_rejects_bad_types() {
        let c = codec("int16");
        assert_eq!(
            c.metadata().configuration_or_empty()["dtype"],
            serde_json::json!("<i2")
        );
        for bad in [
            serde_json::json!({"dtype": "|O"}),
            serde_json::json!({"dtype": "<U4"}),
            serde_json::json!({}),
            serde_json::json!({"dtype": "<i4", "other": 1}),
        ] {
            let serde_json::Value::Object(map) = bad else {
                unreachable!()
            };
            let err = create(&ExtensionObject::with_configuration(NAME, map)).unwrap_err();
            assert!(
                matches!(err, CodecError::InvalidConfiguration { .. }),
                "{err}"
            );
        }
    }

    #[test]
    fn validates_against_the_inner_type() {
        let c = codec("<i4");
        assert!(c.validate(&repr(DataType::Int32, 1)).is_ok());
        let err = c.validate(&repr(DataType::Int64, 1)).unwrap_err();
        assert!(err.to_string().contains("vlen_array<int64>"), "{err}");
        let string = ChunkRepr {
            shape: vec![1],
            data_type: DataType::String,
            fill_value: FillValue::zero(&DataType::String),
        };
        assert!(c.validate(&string).is_err());
    }

    #[test]
    fn corrupt_input_is_an_error_not_a_panic() {
        let c = codec("<i4");
        let r = repr(DataType::Int32, 2);
        for (bad, what) in [
            (vec![2, 0], "too short"),
            (vec![3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], "3 items"),
            (vec![2, 0, 0, 0, 0, 0, 0, 0], "cannot fit"),
            (vec![2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0, 0], "truncated"),
            (
                vec![2, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0],
                "runs past",
            ),
            (
                vec![2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1, 2, 3],
                "whole number",
            ),
            (vec![2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9], "left over"),
            (vec![0xff, 0xff, 0xff, 0xff], "items"),
        ] {
            let err = c.decode_elements(bad, &r).unwrap_err().to_string();
            assert!(err.contains(what), "{what}: {err}");
        }
        // Elements of a wrong byte length cannot be encoded.
        let chunk = VlenChunk::from_items([vec![1u8, 2, 3], vec![]]);
        assert!(c.encode_elements(&chunk, &r).is_err());
        assert!(
            c.encode_elements(&VlenChunk::from_items([vec![0u8; 4]]), &r)
                .is_err()
        );
    }
}
