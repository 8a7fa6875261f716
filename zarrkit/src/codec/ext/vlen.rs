//! Variable-length chunks, and the `vlen-utf8` and `vlen-bytes`
//! array→bytes codecs that serialise them.
//!
//! Spec: `extensions/codecs/vlen-utf8`, `extensions/codecs/vlen-bytes`
//! (numcodecs' `VLenUTF8`/`VLenBytes`, the same bytes under the v2 ids
//! `vlen-utf8`/`vlen-bytes`): a little-endian `u32` count of elements, then
//! for each element (in C order) a little-endian `u32` length and that
//! many bytes.
//!
//! ```
//! use zarrkit::codec::vlen::VlenChunk;
//! let chunk = VlenChunk::from_items(["ab", "", "ünï"]);
//! assert_eq!(chunk.get(2), Some("ünï".as_bytes()));
//! assert_eq!(chunk.len(), 3);
//! ```

use crate::codec::ChunkData;
use crate::codec::{ArrayToBytesCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::{DataType, ExtensionObject, JsonMap};
use serde::Deserialize;
use std::sync::Arc;

pub use crate::codec::data::VlenChunk;

/// `vlen-utf8` (elements must be UTF-8) or `vlen-bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VlenCodec {
    utf8: bool,
}

/// The name of the UTF-8 codec, in v3 and as a numcodecs id.
pub const UTF8_NAME: &str = "vlen-utf8";
/// The name of the bytes codec, in v3 and as a numcodecs id.
pub const BYTES_NAME: &str = "vlen-bytes";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoConfiguration {}

/// Creates `vlen-utf8` from its metadata (no configuration).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] for any configuration member.
pub fn create_utf8(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let _: NoConfiguration = parse_configuration(metadata)?;
    Ok(Codec::ArrayToBytes(Arc::new(VlenCodec { utf8: true })))
}

/// Creates `vlen-bytes` from its metadata (no configuration).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] for any configuration member.
pub fn create_bytes(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let _: NoConfiguration = parse_configuration(metadata)?;
    Ok(Codec::ArrayToBytes(Arc::new(VlenCodec { utf8: false })))
}

impl VlenCodec {
    /// The `vlen-utf8` codec.
    #[must_use]
    pub fn utf8() -> Self {
        Self { utf8: true }
    }

    /// The `vlen-bytes` codec.
    #[must_use]
    pub fn bytes() -> Self {
        Self { utf8: false }
    }

    fn name(self) -> &'static str {
        if self.utf8 { UTF8_NAME } else { BYTES_NAME }
    }

    fn corrupt(self, reason: String) -> CodecError {
        CodecError::Corrupt {
            codec: self.name(),
            reason,
        }
    }
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

impl ArrayToBytesCodec for VlenCodec {
    /// None: the encoded size depends on the elements' lengths.
    fn encoded_size_bound(&self, _repr: &ChunkRepr) -> Option<usize> {
        None
    }

    fn metadata(&self) -> ExtensionObject {
        ExtensionObject::with_configuration(self.name(), JsonMap::new())
    }

    fn validate(&self, repr: &ChunkRepr) -> Result<(), CodecError> {
        // extensions/codecs/vlen-utf8: "only compatible with the `string`
        // data type"; vlen-bytes likewise with `bytes`.
        let ok = if self.utf8 {
            repr.data_type == DataType::String
        } else {
            repr.data_type == DataType::Bytes
        };
        if ok {
            Ok(())
        } else {
            Err(CodecError::Incompatible {
                codec: self.name(),
                what: format!(
                    "`{}` (it encodes only `{}`)",
                    repr.data_type,
                    if self.utf8 { "string" } else { "bytes" }
                ),
            })
        }
    }

    fn encode(&self, decoded: ChunkData<'_>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        self.encode_elements(decoded.as_vlen(self.name())?, repr)
    }

    fn decode(&self, encoded: Vec<u8>, repr: &ChunkRepr) -> Result<ChunkData<'static>, CodecError> {
        self.decode_elements(encoded, repr).map(Into::into)
    }
}

impl VlenCodec {
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
        let too_long = |what: usize| CodecError::Incompatible {
            codec: self.name(),
            what: format!("{what} items or bytes (more than 2^32 - 1)"),
        };
        let mut out = Vec::with_capacity(4 + 4 * n + decoded.data_len());
        out.extend_from_slice(&u32::try_from(n).map_err(|_| too_long(n))?.to_le_bytes());
        for item in decoded.iter() {
            let len = u32::try_from(item.len()).map_err(|_| too_long(item.len()))?;
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(item);
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
            self.corrupt(format!(
                "{} bytes is too short for the header",
                encoded.len()
            ))
        })?;
        if count as usize != n {
            return Err(self.corrupt(format!(
                "the header says {count} items, the chunk has {n} elements"
            )));
        }
        // Every item takes at least its 4-byte length: bound the count by
        // the input before allocating for it.
        if n > encoded.len().saturating_sub(4) / 4 {
            return Err(self.corrupt(format!("{n} items cannot fit in {} bytes", encoded.len())));
        }
        let mut chunk = VlenChunk::with_capacity(n);
        chunk.reserve_data(encoded.len() - 4 - 4 * n);
        let mut at = 4;
        for i in 0..n {
            let len = read_u32(&encoded, at)
                .ok_or_else(|| self.corrupt(format!("truncated at the length of item {i}")))?
                as usize;
            at += 4;
            let item = encoded.get(at..at.saturating_add(len)).ok_or_else(|| {
                self.corrupt(format!("item {i} of {len} bytes runs past the end"))
            })?;
            if self.utf8 {
                std::str::from_utf8(item)
                    .map_err(|e| self.corrupt(format!("item {i} is not UTF-8: {e}")))?;
            }
            chunk.push(item);
            at += len;
        }
        if at != encoded.len() {
            return Err(self.corrupt(format!(
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
    use crate::metadata::FillValue;

    fn repr(data_type: DataType, shape: &[u64]) -> ChunkRepr {
        ChunkRepr {
            shape: shape.to_vec(),
            fill_value: FillValue::zero(&data_type),
            data_type,
        }
    }

    #[test]
    fn encoding_matches_numcodecs_layout() {
        let codec = VlenCodec::utf8();
        let r = repr(DataType::String, &[3]);
        let chunk = VlenChunk::from_items(["ab", "", "é"]);
        let encoded = codec.encode_elements(&chunk, &r).unwrap();
        assert_eq!(
            encoded,
            [
                3, 0, 0, 0, 2, 0, 0, 0, b'a', b'b', 0, 0, 0, 0, 2, 0, 0, 0, 0xc3, 0xa9
            ]
        );
        assert_eq!(codec.decode_elements(encoded, &r).unwrap(), chunk);
    }

    #[test]
    fn corrupt_input_is_an_error_not_a_panic() {
        let codec = VlenCodec::utf8();
        let r = repr(DataType::String, &[2]);
        for (bad, what) in [
            (vec![2, 0, 0], "too short"),
            (
                vec![3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                "3 items",
            ),
            (vec![2, 0, 0, 0, 1, 0, 0, 0, b'a', 0, 0, 0], "truncated"),
            (vec![2, 0, 0, 0, 1, 0, 0, 0, b'a'], "cannot fit"),
            (vec![2, 0, 0, 0, 9, 0, 0, 0, b'a', 0, 0, 0, 0], "runs past"),
            (vec![2, 0, 0, 0, 1, 0, 0, 0, 0xff, 0, 0, 0, 0], "not UTF-8"),
            (vec![2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7], "left over"),
            (vec![0xff, 0xff, 0xff, 0xff], "items"),
        ] {
            let err = codec.decode_elements(bad, &r).unwrap_err().to_string();
            assert!(err.contains(what), "{what}: {err}");
        }
        // vlen-bytes accepts any bytes.
        let r = repr(DataType::Bytes, &[2]);
        let chunk = VlenChunk::from_items([&[0xffu8][..], &[]]);
        let encoded = VlenCodec::bytes().encode_elements(&chunk, &r).unwrap();
        assert_eq!(
            VlenCodec::bytes().decode_elements(encoded, &r).unwrap(),
            chunk
        );
    }

    #[test]
    fn codecs_accept_only_their_data_type() {
        assert!(
            VlenCodec::utf8()
                .validate(&repr(DataType::String, &[1]))
                .is_ok()
        );
        assert!(
            VlenCodec::utf8()
                .validate(&repr(DataType::Bytes, &[1]))
                .is_err()
        );
        assert!(
            VlenCodec::bytes()
                .validate(&repr(DataType::Int32, &[1]))
                .is_err()
        );
    }

    #[test]
    fn gather_picks_elements_and_checks_indices() {
        let chunk = VlenChunk::from_items(["a", "bb", "ccc"]);
        let picked = chunk.gather(&[2, 0, 2], "test").unwrap();
        assert_eq!(picked, VlenChunk::from_items(["ccc", "a", "ccc"]));
        assert!(chunk.gather(&[3], "test").is_err());
    }
}
