//! The `n5_default` array-to-bytes codec (v3 extension): chunks stored as
//! N5 blocks in "default" mode, so Zarr can read and write N5 data.
//!
//! Spec: <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/n5_default>
//! Names: v3 `n5_default`.
//!
//! A block is a header, then the chunk encoded by the nested `codecs`:
//!
//! | bytes | field |
//! | --- | --- |
//! | 2 | mode, `uint16` big endian: `0` default (`1` varlength and `2` object are refused) |
//! | 2 | number of dimensions `N`, `uint16` big endian |
//! | `4 * N` | the block's shape, `uint32` big endian each, in the order of the Zarr chunk's dimensions |
//! | rest | the nested codecs' output |
//!
//! The nested `codecs` are a `transpose` with order `[N-1, ..., 0]` (N5 is
//! column-major), `bytes` with `"endian": "big"` (which may be left out for
//! one-byte types), and at most one bytes-to-bytes codec (the N5
//! compression). Encoding writes the whole chunk shape into the header, as
//! tensorstore does; decoding takes the shape from the header, so a block
//! that another writer (N5's Java library) truncated at the array's edge is
//! padded with the fill value, and a larger one is cut down to the chunk
//! (spec, "Decoding", step 4).
//!
//! ```
//! # use zarrkit::codec::n5_default::N5DefaultConfig;
//! let config: N5DefaultConfig = serde_json::from_str(r#"{ "codecs": [
//!     { "name": "transpose", "configuration": { "order": [1, 0] } },
//!     { "name": "bytes", "configuration": { "endian": "big" } },
//!     { "name": "gzip", "configuration": { "level": 5 } }
//! ] }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::copy::BoxCopy;
use crate::codec::{
    ArrayToBytesCodec, ChunkRepr, Codec, CodecChain, CodecError, codec_from_metadata,
};
use crate::metadata::json::{extension_from_json, extension_to_json};
use crate::metadata::{DataType, ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "n5_default";

/// N5's block mode for default blocks (N5 spec 4.0.0, "chunks are stored
/// in the following binary format").
const MODE_DEFAULT: u16 = 0;

/// How much larger than the chunk a stored block may claim to be: block
/// headers are untrusted, and decoding allocates the block's size.
const MAX_BLOCK_GROWTH: usize = 16;

/// The configuration of the `n5_default` codec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct N5DefaultConfig {
    /// `transpose` (full reversal), `bytes` (big endian), and at most one
    /// bytes-to-bytes codec.
    pub codecs: Vec<Value>,
}

/// The `n5_default` codec.
#[derive(Clone, Debug)]
pub struct N5DefaultCodec {
    codecs: Vec<Codec>,
}

fn invalid(reason: impl Into<String>) -> CodecError {
    CodecError::InvalidConfiguration {
        codec: NAME.into(),
        reason: reason.into(),
    }
}

fn incompatible(what: String) -> CodecError {
    CodecError::Incompatible { codec: NAME, what }
}

fn corrupt(reason: String) -> CodecError {
    CodecError::Corrupt {
        codec: NAME,
        reason,
    }
}

impl N5DefaultCodec {
    /// A codec with the resolved nested `codecs`.
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] naming the position of a nested
    /// codec that breaks the spec's rules ("Configuration parameters"):
    /// `transpose` first, `bytes` (big endian or without `endian`) second,
    /// then at most one bytes-to-bytes codec.
    pub fn new(codecs: Vec<Codec>) -> Result<Self, CodecError> {
        let at = |position: usize, codec: &Codec, rule: &str| {
            invalid(format!(
                "codec `{}` at position {position} of `codecs` {rule}",
                codec.name()
            ))
        };
        match codecs.first() {
            Some(c @ Codec::ArrayToArray(_)) if c.name() == "transpose" => {}
            Some(c) => return Err(at(0, c, "must be `transpose`")),
            None => return Err(invalid("`codecs` must start with `transpose` and `bytes`")),
        }
        match codecs.get(1) {
            Some(c @ Codec::ArrayToBytes(_)) if c.name() == "bytes" => {
                let endian = c.metadata().configuration_or_empty().get("endian").cloned();
                if endian.as_ref().is_some_and(|e| e != "big") {
                    return Err(at(1, c, "must have `\"endian\": \"big\"`"));
                }
            }
            Some(c) => return Err(at(1, c, "must be `bytes`")),
            None => return Err(invalid("`codecs` must have `bytes` after `transpose`")),
        }
        match codecs.get(2) {
            None | Some(Codec::BytesToBytes(_)) => {}
            Some(c) => return Err(at(2, c, "must be bytes-to-bytes")),
        }
        if let Some(c) = codecs.get(3) {
            return Err(at(3, c, "is one codec too many (at most 3)"));
        }
        Ok(Self { codecs })
    }

    /// The nested chain for a block of `repr`.
    fn chain(&self, repr: &ChunkRepr) -> Result<CodecChain, CodecError> {
        CodecChain::new(self.codecs.clone(), repr)
    }

    /// Whether the nested `bytes` codec leaves out `endian`.
    fn bytes_without_endian(&self) -> bool {
        self.codecs
            .get(1)
            .is_some_and(|c| !c.metadata().configuration_or_empty().contains_key("endian"))
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid,
/// naming the position in `codecs` of a nested codec that is unknown,
/// invalid, or not the one the spec requires there.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: N5DefaultConfig = crate::codec::parse_configuration(metadata)?;
    let mut codecs = Vec::with_capacity(config.codecs.len());
    for (position, value) in config.codecs.iter().enumerate() {
        let nested = extension_from_json(value, &format!("codecs[{position}]"))
            .map_err(|e| invalid(format!("codec at position {position} of `codecs`: {e}")))?;
        let codec = codec_from_metadata(&nested).map_err(|e| {
            invalid(format!(
                "codec `{}` at position {position} of `codecs`: {e}",
                nested.name
            ))
        })?;
        codecs.push(codec);
    }
    Ok(Codec::ArrayToBytes(Arc::new(N5DefaultCodec::new(codecs)?)))
}

/// The header of a default-mode block for a chunk of `shape`.
fn header(shape: &[u64]) -> Result<Vec<u8>, CodecError> {
    let ndim = u16::try_from(shape.len())
        .map_err(|_| incompatible(format!("{} dimensions (N5 allows 65535)", shape.len())))?;
    let mut out = Vec::with_capacity(4 + 4 * shape.len());
    out.extend_from_slice(&MODE_DEFAULT.to_be_bytes());
    out.extend_from_slice(&ndim.to_be_bytes());
    for &n in shape {
        let n = u32::try_from(n)
            .map_err(|_| incompatible(format!("chunk shape {shape:?} (N5 sizes are uint32)")))?;
        out.extend_from_slice(&n.to_be_bytes());
    }
    Ok(out)
}

/// Parses a block's header: the block shape and the header's length.
fn parse_header(encoded: &[u8], ndim: usize) -> Result<(Vec<u64>, usize), CodecError> {
    let u16_at = |i: usize| {
        encoded
            .get(i..i + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
    };
    let (Some(mode), Some(n)) = (u16_at(0), u16_at(2)) else {
        return Err(corrupt(format!(
            "{} bytes are too short for a block header",
            encoded.len()
        )));
    };
    // Spec, "Decoding", step 2: default mode only.
    match mode {
        MODE_DEFAULT => {}
        1 => {
            return Err(corrupt(
                "the block is in varlength mode (1), not default mode".into(),
            ));
        }
        2 => {
            return Err(corrupt(
                "the block is in object mode (2), not default mode".into(),
            ));
        }
        m => {
            return Err(corrupt(format!(
                "the block mode {m} is not default mode (0)"
            )));
        }
    }
    if usize::from(n) != ndim {
        return Err(corrupt(format!(
            "the block has {n} dimensions, the array {ndim}"
        )));
    }
    let len = 4 + 4 * ndim;
    let dims = encoded.get(4..len).ok_or_else(|| {
        corrupt(format!(
            "{} bytes are too short for a {ndim}-dimensional block header",
            encoded.len()
        ))
    })?;
    let shape = dims
        .chunks_exact(4)
        .map(|b| u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]])))
        .collect();
    Ok((shape, len))
}

/// Whether N5 has the data type (spec, "Limitations").
fn is_n5_type(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Float32
            | DataType::Float64
    )
}

impl ArrayToBytesCodec for N5DefaultCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert(
            "codecs".into(),
            Value::Array(
                self.codecs
                    .iter()
                    .map(|c| extension_to_json(&c.metadata()))
                    .collect(),
            ),
        );
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn validate(&self, repr: &ChunkRepr) -> Result<(), CodecError> {
        if !is_n5_type(&repr.data_type) {
            return Err(incompatible(format!(
                "`{}` (N5 has only integers of 8 to 64 bits, float32 and float64)",
                repr.data_type
            )));
        }
        if self.bytes_without_endian() && repr.data_type.size() > 1 {
            return Err(incompatible(format!(
                "`{}` with a nested `bytes` that has no `endian` (N5 is big endian)",
                repr.data_type
            )));
        }
        header(&repr.shape)?;
        let Codec::ArrayToArray(transpose) = &self.codecs[0] else {
            return Err(invalid(
                "codec at position 0 of `codecs` must be `transpose`",
            ));
        };
        let order = transpose
            .metadata_for(repr)
            .configuration_or_empty()
            .get("order")
            .cloned();
        let reversed: Vec<usize> = (0..repr.shape.len()).rev().collect();
        if order != Some(Value::from(reversed.clone())) {
            return Err(invalid(format!(
                "codec `transpose` at position 0 of `codecs` must have order {reversed:?} \
                 for a {}-dimensional array",
                repr.shape.len()
            )));
        }
        self.chain(repr).map(|_| ())
    }

    /// The header and the elements, when no compression follows `bytes`;
    /// a compressor may expand its input, so then there is no bound.
    fn encoded_size_bound(&self, repr: &ChunkRepr) -> Option<usize> {
        if self.codecs.len() > 2 {
            return None;
        }
        repr.size_bytes()
            .ok()?
            .checked_add(4 + 4 * repr.shape.len())
    }

    crate::codec::fixed_array_to_bytes!(NAME);

    // Spec, "Procedure", "Decoding": parse the header, decode the rest as a
    // block of the header's shape, then pad or truncate it to the chunk.
}

impl N5DefaultCodec {
    fn encode_bytes(&self, decoded: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        let mut out = header(&repr.shape)?;
        out.extend_from_slice(&self.chain(repr)?.encode(decoded, repr)?);
        Ok(out)
    }
    fn decode_bytes(&self, encoded: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        let (block_shape, header_len) = parse_header(&encoded, repr.shape.len())?;
        let chunk_size = repr.size_bytes()?;
        let block_repr = ChunkRepr {
            shape: block_shape,
            ..repr.clone()
        };
        let block_size = block_repr.size_bytes()?;
        if block_size > chunk_size.saturating_mul(MAX_BLOCK_GROWTH).max(1 << 16) {
            return Err(corrupt(format!(
                "the block's shape {:?} is far larger than the chunk's {:?}",
                block_repr.shape, repr.shape
            )));
        }
        let data = encoded[header_len..].to_vec();
        let block = self
            .chain(&block_repr)?
            .decode(data, &block_repr)?
            .into_fixed(NAME)?;
        if block_repr.shape == repr.shape {
            return Ok(block);
        }
        let mut out = vec![0u8; chunk_size];
        repr.fill_value.fill(&mut out);
        let common: Vec<u64> = repr
            .shape
            .iter()
            .zip(&block_repr.shape)
            .map(|(&a, &b)| a.min(b))
            .collect();
        let origin = vec![0; common.len()];
        BoxCopy {
            src_shape: &block_repr.shape,
            src_start: &origin,
            dst_shape: &repr.shape,
            dst_start: &origin,
            shape: &common,
            elem: repr.data_type.size(),
        }
        .run(&block, &mut out);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::FillValue;
    use serde_json::json;

    fn codec(codecs: Value) -> Result<Codec, CodecError> {
        create(
            &extension_from_json(
                &json!({"name": NAME, "configuration": {"codecs": codecs}}),
                "codec",
            )
            .unwrap(),
        )
    }

    fn raw_n5(ndim: usize) -> Arc<dyn ArrayToBytesCodec> {
        let order: Vec<usize> = (0..ndim).rev().collect();
        let Ok(Codec::ArrayToBytes(c)) = codec(json!([
            {"name": "transpose", "configuration": {"order": order}},
            {"name": "bytes", "configuration": {"endian": "big"}},
        ])) else {
            panic!("not array-to-bytes")
        };
        c
    }

    fn repr(data_type: DataType, shape: &[u64], fill: Vec<u8>) -> ChunkRepr {
        ChunkRepr {
            shape: shape.to_vec(),
            data_type,
            fill_value: FillValue::new(fill),
        }
    }

    fn u16s(values: &[u16]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_ne_bytes()).collect()
    }

    #[test]
    fn encodes_a_header_then_big_endian_column_major_elements() {
        // A 2x3 uint16 chunk [[1, 2, 3], [4, 5, 6]].
        let r = repr(DataType::UInt16, &[2, 3], vec![0, 0]);
        let c = raw_n5(2);
        c.validate(&r).unwrap();
        let encoded = c.encode(u16s(&[1, 2, 3, 4, 5, 6]).into(), &r).unwrap();
        let expected: Vec<u8> = [
            vec![0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 3],
            // Column-major: 1, 4, 2, 5, 3, 6, each big endian.
            vec![0, 1, 0, 4, 0, 2, 0, 5, 0, 3, 0, 6],
        ]
        .concat();
        assert_eq!(encoded, expected);
        assert_eq!(c.decode(encoded, &r).unwrap(), u16s(&[1, 2, 3, 4, 5, 6]));
    }

    #[test]
    fn a_truncated_edge_block_is_padded_with_the_fill_value() {
        // The header says 2x2: the block holds [[1, 2], [4, 5]] (column-major
        // 1, 4, 2, 5) of a 2x3 chunk whose fill value is 9.
        let r = repr(DataType::UInt16, &[2, 3], 9u16.to_ne_bytes().to_vec());
        let block = [
            vec![0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2],
            vec![0, 1, 0, 4, 0, 2, 0, 5],
        ]
        .concat();
        let decoded = raw_n5(2).decode(block, &r).unwrap();
        assert_eq!(decoded, u16s(&[1, 2, 9, 4, 5, 9]));
    }

    #[test]
    fn a_larger_block_is_cut_down_to_the_chunk() {
        let r = repr(DataType::UInt8, &[2], vec![0]);
        let block = vec![0, 0, 0, 1, 0, 0, 0, 3, 7, 8, 9];
        assert_eq!(raw_n5(1).decode(block, &r).unwrap(), [7, 8]);
    }

    #[test]
    fn bad_blocks_are_errors_not_panics() {
        let r = repr(DataType::UInt8, &[2, 2], vec![0]);
        let c = raw_n5(2);
        for (block, why) in [
            (vec![], "too short for a block header"),
            (
                vec![0, 1, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 4],
                "varlength",
            ),
            (vec![0, 2, 0, 2], "object mode"),
            (vec![0, 0, 0, 3], "3 dimensions, the array 2"),
            (vec![0, 0, 0, 2, 0, 0, 0], "too short for a 2-dimensional"),
            (
                vec![0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
                "far larger",
            ),
            (vec![0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2], "expected 4"),
        ] {
            let err = c.decode(block, &r).unwrap_err();
            assert!(err.to_string().contains(why), "{why}: {err}");
        }
    }

    #[test]
    fn nested_codecs_must_follow_the_spec_naming_the_position() {
        for (codecs, why) in [
            (
                json!([{"name": "bytes", "configuration": {"endian": "big"}}]),
                "`bytes` at position 0",
            ),
            (
                json!([{"name": "transpose", "configuration": {"order": [0]}}]),
                "must have `bytes`",
            ),
            (
                json!([{"name": "transpose", "configuration": {"order": [0]}},
                       {"name": "bytes", "configuration": {"endian": "little"}}]),
                "`bytes` at position 1 of `codecs` must have",
            ),
            (
                json!([{"name": "transpose", "configuration": {"order": [0]}},
                       {"name": "bytes", "configuration": {"endian": "big"}},
                       {"name": "nope"}]),
                "codec `nope` at position 2 of `codecs`: unknown codec `nope`",
            ),
            (
                json!([{"name": "transpose", "configuration": {"order": [0]}},
                       {"name": "bytes", "configuration": {"endian": "big"}},
                       {"name": "transpose", "configuration": {"order": [0]}}]),
                "`transpose` at position 2 of `codecs` must be bytes-to-bytes",
            ),
        ] {
            let err = codec(codecs).unwrap_err();
            let text = err.to_string();
            assert!(text.contains(why), "{why}: {text}");
            assert!(text.contains("`n5_default`"), "{text}");
        }
    }

    #[test]
    fn validate_refuses_a_partial_transpose_and_non_n5_types() {
        let c = raw_n5(2);
        let err = c
            .validate(&repr(DataType::UInt8, &[2, 2, 2], vec![0]))
            .unwrap_err();
        assert!(err.to_string().contains("order [2, 1, 0]"), "{err}");
        let err = c
            .validate(&repr(DataType::Bool, &[2, 2], vec![0]))
            .unwrap_err();
        assert!(err.to_string().contains("`bool`"), "{err}");
    }

    proptest::proptest! {
        #[test]
        fn chunks_round_trip_and_blocks_of_any_shape_decode(
            shape in proptest::collection::vec(1u64..5, 1..4),
            block in proptest::collection::vec(0u64..6, 3),
            seed in proptest::prelude::any::<u8>(),
        ) {
            let r = repr(DataType::UInt16, &shape, 9u16.to_ne_bytes().to_vec());
            let c = raw_n5(shape.len());
            let n: u64 = shape.iter().product();
            let data: Vec<u8> = (0..n * 2).map(|i| (i as u8).wrapping_mul(seed)).collect();
            let encoded = c.encode(data.clone().into(), &r).unwrap();
            proptest::prop_assert_eq!(c.decode(encoded, &r).unwrap(), data);
            // A block of another shape (as another writer may store at the
            // edge) decodes to the chunk's shape: its overlap, then fill.
            let block_shape = &block[..shape.len()];
            let br = repr(DataType::UInt16, block_shape, vec![0, 0]);
            let bn: u64 = block_shape.iter().product();
            let block_data: Vec<u8> = (0..bn).flat_map(|i| (i as u16).to_ne_bytes()).collect();
            let stored = c.encode(block_data.into(), &br).unwrap();
            let decoded = c.decode(stored, &r).unwrap();
            proptest::prop_assert_eq!(decoded.len() as u64, n * 2);
            // The chunk's first element is the block's first, or the fill
            // value when the block is empty.
            let first = u16::from_ne_bytes([decoded.as_fixed("test").unwrap()[0], decoded.as_fixed("test").unwrap()[1]]);
            proptest::prop_assert_eq!(first, if bn == 0 { 9 } else { 0 });
        }
    }
}
