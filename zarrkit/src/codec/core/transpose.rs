//! The `transpose` array-to-array codec: permutes the dimensions of a chunk.
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/transpose/index.html>
//! Names: v3 `transpose` (early zarr-python 3 versions wrote `order` as
//! `"C"` or `"F"`, which are read as the identity and the reversal).
//!
//! ```
//! # use zarrkit::codec::transpose::TransposeConfig;
//! let config: TransposeConfig = serde_json::from_str(r#"{ "order": [1, 0] }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::{ArrayToArrayCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::{ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::Arc;

/// The `order` of a `transpose` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawOrder", into = "RawOrder")]
pub enum TransposeOrder {
    /// A permutation of `0..n`, the form the spec requires.
    Permutation(Vec<usize>),
    /// `"C"`: the identity, as written before the spec dropped the constants.
    C,
    /// `"F"`: the reversal of the dimensions, as written before the spec
    /// dropped the constants.
    F,
}

#[derive(Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "`order` must be a permutation of dimension indices such as [1, 0] (or \"C\" or \"F\")"
)]
enum RawOrder {
    Permutation(Vec<usize>),
    Named(String),
}

impl TryFrom<RawOrder> for TransposeOrder {
    type Error = String;

    fn try_from(raw: RawOrder) -> Result<Self, Self::Error> {
        match raw {
            RawOrder::Permutation(order) => {
                check_permutation(&order)?;
                Ok(Self::Permutation(order))
            }
            RawOrder::Named(name) if name == "C" => Ok(Self::C),
            RawOrder::Named(name) if name == "F" => Ok(Self::F),
            RawOrder::Named(name) => Err(format!(
                "`order` is `{name}`, expected a permutation such as [1, 0]"
            )),
        }
    }
}

impl From<TransposeOrder> for RawOrder {
    fn from(order: TransposeOrder) -> Self {
        match order {
            TransposeOrder::Permutation(order) => Self::Permutation(order),
            TransposeOrder::C => Self::Named("C".to_string()),
            TransposeOrder::F => Self::Named("F".to_string()),
        }
    }
}

/// Checks that `order` holds each of `0..order.len()` once.
fn check_permutation(order: &[usize]) -> Result<(), String> {
    let mut seen = vec![false; order.len()];
    for &axis in order {
        match seen.get_mut(axis) {
            Some(slot) if !*slot => *slot = true,
            _ => {
                return Err(format!(
                    "`order` {order:?} is not a permutation of 0..{}",
                    order.len()
                ));
            }
        }
    }
    Ok(())
}

/// The configuration of the `transpose` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransposeConfig {
    /// The permutation: dimension `i` of the encoded chunk is dimension
    /// `order[i]` of the decoded one (v3 `transpose`, "Configuration
    /// parameters").
    pub order: TransposeOrder,
}

/// The `transpose` codec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransposeCodec {
    order: TransposeOrder,
}

impl TransposeCodec {
    /// A `transpose` codec with `order`, a permutation of `0..order.len()`.
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if `order` is not a permutation.
    pub fn new(order: Vec<usize>) -> Result<Self, CodecError> {
        check_permutation(&order).map_err(|reason| CodecError::InvalidConfiguration {
            codec: "transpose".to_string(),
            reason,
        })?;
        Ok(Self {
            order: TransposeOrder::Permutation(order),
        })
    }

    /// A codec from an `order` in any accepted form.
    #[must_use]
    pub fn from_order(order: TransposeOrder) -> Self {
        Self { order }
    }

    /// The order as configured.
    #[must_use]
    pub fn order(&self) -> &TransposeOrder {
        &self.order
    }

    /// The permutation for a chunk of `ndim` dimensions.
    fn permutation(&self, ndim: usize) -> Result<Cow<'_, [usize]>, CodecError> {
        match &self.order {
            TransposeOrder::Permutation(order) if order.len() == ndim => Ok(Cow::Borrowed(order)),
            TransposeOrder::Permutation(order) => Err(CodecError::Incompatible {
                codec: "transpose",
                what: format!(
                    "a {ndim}-dimensional chunk with `order` {order:?} of {} dimensions",
                    order.len()
                ),
            }),
            TransposeOrder::C => Ok((0..ndim).collect()),
            TransposeOrder::F => Ok((0..ndim).rev().collect()),
        }
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: TransposeConfig = parse_configuration(metadata)?;
    Ok(Codec::ArrayToArray(Arc::new(TransposeCodec::from_order(
        config.order,
    ))))
}

impl ArrayToArrayCodec for TransposeCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        let order = match &self.order {
            TransposeOrder::Permutation(order) => order
                .iter()
                .map(|&axis| serde_json::Value::from(axis))
                .collect(),
            // Without the chunk's dimensionality the constants cannot be
            // spelled out here; `metadata_for` does it when the chain knows
            // the representation.
            TransposeOrder::C => "C".into(),
            TransposeOrder::F => "F".into(),
        };
        configuration.insert("order".into(), order);
        ExtensionObject::with_configuration("transpose", configuration)
    }

    fn metadata_for(&self, decoded: &ChunkRepr) -> ExtensionObject {
        // v3 `transpose`: `order` is an array of integers. Old writers'
        // "C"/"F" are spelled out as the permutation they stand for.
        match self.permutation(decoded.shape.len()) {
            Ok(order) => {
                TransposeCodec::from_order(TransposeOrder::Permutation(order.into_owned()))
                    .metadata()
            }
            Err(_) => self.metadata(),
        }
    }

    fn permutes_elements(&self) -> bool {
        true
    }

    fn encoded_repr(&self, decoded: &ChunkRepr) -> Result<ChunkRepr, CodecError> {
        let order = self.permutation(decoded.shape.len())?;
        // v3 `transpose`, "Format and algorithm": B_shape[i] = A_shape[order[i]].
        Ok(ChunkRepr {
            shape: order.iter().map(|&axis| decoded.shape[axis]).collect(),
            data_type: decoded.data_type.clone(),
            fill_value: decoded.fill_value.clone(),
        })
    }

    crate::codec::fixed_array_to_array!("transpose");
}

impl TransposeCodec {
    fn encode_bytes(
        &self,
        decoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let order = self.permutation(decoded_repr.shape.len())?;
        permute(decoded, decoded_repr, &order)
    }
    fn decode_bytes(
        &self,
        encoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let order = self.permutation(decoded_repr.shape.len())?;
        let encoded_repr = self.encoded_repr(decoded_repr)?;
        let mut inverse = vec![0; order.len()];
        for (i, &axis) in order.iter().enumerate() {
            inverse[axis] = i;
        }
        permute(encoded, &encoded_repr, &inverse)
    }
}

/// Returns the array `src` of representation `repr` with its dimensions
/// permuted: output dimension `i` is input dimension `perm[i]`.
fn permute(src: Vec<u8>, repr: &ChunkRepr, perm: &[usize]) -> Result<Vec<u8>, CodecError> {
    let expected = repr.size_bytes()?;
    if src.len() != expected {
        return Err(CodecError::WrongSize {
            expected,
            actual: src.len(),
        });
    }
    let elem = repr.data_type.size();
    if expected == 0 || elem == 0 {
        return Ok(src);
    }
    // Every dimension fits in usize, since the product of all of them does.
    let shape: Vec<usize> = repr.shape.iter().map(|&n| n as usize).collect();
    let mut src_strides = vec![0; shape.len()];
    let mut stride = elem;
    for (s, &n) in src_strides.iter_mut().zip(&shape).rev() {
        *s = stride;
        stride *= n;
    }
    // Output dimensions as (length, byte stride in the source), dropping
    // length-1 dimensions and merging neighbours that are also neighbours,
    // in the same order, in the source.
    let mut dims: Vec<(usize, usize)> = Vec::with_capacity(perm.len());
    for &axis in perm {
        let (len, stride) = (shape[axis], src_strides[axis]);
        if len == 1 {
            continue;
        }
        match dims.last_mut() {
            Some((last_len, last_stride)) if *last_stride == stride * len => {
                *last_len *= len;
                *last_stride = stride;
            }
            _ => dims.push((len, stride)),
        }
    }
    match dims.as_slice() {
        // The permutation moves no data.
        [] | [(_, _)] => return Ok(src),
        _ => {}
    }
    let mut dst = vec![0u8; expected];
    if let [outer @ .., (len, stride)] = dims.as_slice()
        && *stride == elem
    {
        // The last output dimension is contiguous in the source: copy runs.
        let run = len * elem;
        for_each_block(outer, &mut dst, run, |block, base| {
            block.copy_from_slice(&src[base..base + run]);
        });
        return Ok(dst);
    }
    // Otherwise gather in square tiles spanning the last output dimension
    // (contiguous in the output) and the one contiguous in the source, so
    // that both sides use whole cache lines.
    let mut dims: Vec<Dim> = dims
        .iter()
        .rev()
        .scan(elem, |dst_stride, &(len, src_stride)| {
            let dim = Dim {
                len,
                src_stride,
                dst_stride: *dst_stride,
            };
            *dst_stride *= len;
            Some(dim)
        })
        .collect();
    dims.reverse();
    let Some(cols) = dims.pop() else {
        return Ok(src);
    };
    let row_index = dims
        .iter()
        .position(|d| d.src_stride == elem)
        .unwrap_or(dims.len() - 1);
    let rows = dims.remove(row_index);
    let tiles = Tiles { rows, cols };
    // Constant sizes let the compiler turn each element copy into one move.
    let (outer, out, input) = (dims.as_slice(), dst.as_mut_slice(), src.as_slice());
    match elem {
        1 => gather::<1>(outer, out, input, &tiles, elem),
        2 => gather::<2>(outer, out, input, &tiles, elem),
        4 => gather::<4>(outer, out, input, &tiles, elem),
        8 => gather::<8>(outer, out, input, &tiles, elem),
        16 => gather::<16>(outer, out, input, &tiles, elem),
        _ => gather::<0>(outer, out, input, &tiles, elem),
    }
    Ok(dst)
}

/// Calls `f(block, source_offset)` for each `block_len`-byte block of `dst`
/// in order, where the blocks are indexed C-order by `outer` (length, source
/// byte stride) and `source_offset` is where the block starts in the source.
fn for_each_block(
    outer: &[(usize, usize)],
    dst: &mut [u8],
    block_len: usize,
    mut f: impl FnMut(&mut [u8], usize),
) {
    let mut index = vec![0usize; outer.len()];
    let mut base = 0usize;
    for block in dst.chunks_exact_mut(block_len) {
        f(block, base);
        // Odometer step: advance the last outer index, carrying leftwards.
        for (i, &(len, stride)) in outer.iter().enumerate().rev() {
            index[i] += 1;
            base += stride;
            if index[i] < len {
                break;
            }
            index[i] = 0;
            base -= stride * len;
        }
    }
}

/// An output dimension: its length and its byte strides in the source and
/// in the output.
#[derive(Clone, Copy, Debug)]
struct Dim {
    len: usize,
    src_stride: usize,
    dst_stride: usize,
}

/// The two dimensions a gather walks in tiles: `cols` is the last output
/// dimension, `rows` the one contiguous in the source.
struct Tiles {
    rows: Dim,
    cols: Dim,
}

/// Side of the square tiles, in elements.
const TILE: usize = 16;

/// Fills `dst` from `src`, `N` bytes per element (or `elem` when `N` is 0),
/// for every position of the `outer` dimensions.
fn gather<const N: usize>(outer: &[Dim], dst: &mut [u8], src: &[u8], tiles: &Tiles, elem: usize) {
    let elem = if N == 0 { elem } else { N };
    let count: usize = outer.iter().map(|d| d.len).product();
    let mut index = vec![0usize; outer.len()];
    let (mut src_base, mut dst_base) = (0usize, 0usize);
    for _ in 0..count {
        tile(dst, src, src_base, dst_base, tiles, elem);
        // Odometer step over the outer dimensions.
        for (i, d) in outer.iter().enumerate().rev() {
            index[i] += 1;
            src_base += d.src_stride;
            dst_base += d.dst_stride;
            if index[i] < d.len {
                break;
            }
            index[i] = 0;
            src_base -= d.src_stride * d.len;
            dst_base -= d.dst_stride * d.len;
        }
    }
}

/// Copies the `rows` × `cols` elements at `src_base` / `dst_base`, tile by tile.
// Inlined into each `gather` with a constant `elem`, so copies are fixed-size moves.
#[inline(always)]
fn tile(dst: &mut [u8], src: &[u8], src_base: usize, dst_base: usize, tiles: &Tiles, elem: usize) {
    let Tiles { rows, cols } = tiles;
    for r0 in (0..rows.len).step_by(TILE) {
        for c0 in (0..cols.len).step_by(TILE) {
            for r in r0..(r0 + TILE).min(rows.len) {
                let row_src = src_base + r * rows.src_stride;
                let row_dst = dst_base + r * rows.dst_stride;
                for c in c0..(c0 + TILE).min(cols.len) {
                    let s = row_src + c * cols.src_stride;
                    let d = row_dst + c * elem;
                    dst[d..d + elem].copy_from_slice(&src[s..s + elem]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{DataType, FillValue};
    use proptest::prelude::*;

    fn repr(data_type: DataType, shape: &[u64]) -> ChunkRepr {
        ChunkRepr {
            shape: shape.to_vec(),
            fill_value: FillValue::zero(&data_type),
            data_type,
        }
    }

    /// The spec's definition, element by element: B[B_pos] = A[A_pos] with
    /// B_pos[i] = A_pos[order[i]].
    fn reference(a: &[u8], a_shape: &[usize], order: &[usize], elem: usize) -> Vec<u8> {
        let b_shape: Vec<usize> = order.iter().map(|&i| a_shape[i]).collect();
        let count: usize = a_shape.iter().product();
        let mut b = vec![0u8; count * elem];
        for a_flat in 0..count {
            let mut a_pos = vec![0; a_shape.len()];
            let mut rest = a_flat;
            for (p, &n) in a_pos.iter_mut().zip(a_shape).rev() {
                *p = rest % n;
                rest /= n;
            }
            let b_flat = order
                .iter()
                .zip(&b_shape)
                .fold(0, |acc, (&axis, &n)| acc * n + a_pos[axis]);
            b[b_flat * elem..(b_flat + 1) * elem]
                .copy_from_slice(&a[a_flat * elem..(a_flat + 1) * elem]);
        }
        b
    }

    fn data_type_of_size(elem: usize) -> DataType {
        match elem {
            1 => DataType::UInt8,
            2 => DataType::UInt16,
            4 => DataType::Float32,
            8 => DataType::Float64,
            16 => DataType::Complex128,
            n => DataType::RawBits(n * 8),
        }
    }

    #[test]
    fn two_by_three_transposes_to_three_by_two() {
        let codec = TransposeCodec::new(vec![1, 0]).unwrap();
        let r = repr(DataType::UInt8, &[2, 3]);
        assert_eq!(codec.encoded_repr(&r).unwrap().shape, [3, 2]);
        let encoded = codec.encode(vec![0, 1, 2, 3, 4, 5].into(), &r).unwrap();
        assert_eq!(encoded, [0, 3, 1, 4, 2, 5]);
        assert_eq!(codec.decode(encoded, &r).unwrap(), [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn encoded_dimension_i_is_decoded_dimension_order_i() {
        // A[i][j][k] = 100 i + 10 j + k, order [2, 0, 1]: B[k][i][j] = A[i][j][k].
        let codec = TransposeCodec::new(vec![2, 0, 1]).unwrap();
        let r = repr(DataType::UInt16, &[2, 3, 4]);
        assert_eq!(codec.encoded_repr(&r).unwrap().shape, [4, 2, 3]);
        let a: Vec<u16> = (0..2)
            .flat_map(|i| (0..3).flat_map(move |j| (0..4).map(move |k| 100 * i + 10 * j + k)))
            .collect();
        let bytes: Vec<u8> = a.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let encoded = codec.encode(bytes.clone().into(), &r).unwrap();
        let b: Vec<u16> = encoded
            .as_fixed("test")
            .unwrap()
            .chunks_exact(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect();
        for k in 0..4 {
            for i in 0..2 {
                for j in 0..3 {
                    assert_eq!(b[k * 6 + i * 3 + j], (100 * i + 10 * j + k) as u16);
                }
            }
        }
        assert_eq!(codec.decode(encoded, &r).unwrap(), bytes);
    }

    #[test]
    fn zero_and_one_dimensional_and_empty_chunks_pass_through() {
        let codec = TransposeCodec::new(vec![]).unwrap();
        let r = repr(DataType::Float64, &[]);
        assert_eq!(codec.encoded_repr(&r).unwrap().shape, Vec::<u64>::new());
        assert_eq!(codec.encode(vec![7; 8].into(), &r).unwrap(), [7; 8]);

        let codec = TransposeCodec::new(vec![0]).unwrap();
        let r = repr(DataType::UInt8, &[3]);
        assert_eq!(codec.decode(vec![1, 2, 3].into(), &r).unwrap(), [1, 2, 3]);

        let codec = TransposeCodec::new(vec![1, 2, 0]).unwrap();
        let r = repr(DataType::Int32, &[2, 0, 5]);
        assert_eq!(codec.encoded_repr(&r).unwrap().shape, [0, 5, 2]);
        assert_eq!(
            codec.encode(Vec::new().into(), &r).unwrap(),
            Vec::<u8>::new()
        );
        assert_eq!(
            codec.decode(Vec::new().into(), &r).unwrap(),
            Vec::<u8>::new()
        );
    }

    #[test]
    fn c_and_f_orders_are_identity_and_reversal() {
        let parse = |order: &str| -> TransposeCodec {
            let config: JsonMap =
                serde_json::from_str(&format!(r#"{{"order": {order}}}"#)).unwrap();
            let config: TransposeConfig =
                serde_json::from_value(serde_json::Value::Object(config)).unwrap();
            TransposeCodec::from_order(config.order)
        };
        let r = repr(DataType::UInt8, &[2, 3, 4]);
        assert_eq!(parse(r#""C""#).encoded_repr(&r).unwrap().shape, [2, 3, 4]);
        assert_eq!(parse(r#""F""#).encoded_repr(&r).unwrap().shape, [4, 3, 2]);
        let data: Vec<u8> = (0..24).collect();
        assert_eq!(
            parse(r#""F""#).encode(data.clone().into(), &r).unwrap(),
            reference(&data, &[2, 3, 4], &[2, 1, 0], 1)
        );
        assert_eq!(
            parse(r#""C""#).encode(data.clone().into(), &r).unwrap(),
            data
        );
        assert_eq!(
            serde_json::Value::Object(parse(r#""F""#).metadata().configuration_or_empty()),
            serde_json::json!({ "order": "F" })
        );
        assert_eq!(
            serde_json::Value::Object(parse("[2, 0, 1]").metadata().configuration_or_empty()),
            serde_json::json!({ "order": [2, 0, 1] })
        );
    }

    #[test]
    fn non_permutations_are_rejected_naming_the_codec() {
        let err = TransposeCodec::new(vec![0, 0]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid configuration for codec `transpose`: `order` [0, 0] is not a permutation of 0..2"
        );
        assert!(TransposeCodec::new(vec![0, 2]).is_err());
        for order in ["[0, 0]", "[1, 2]", "[-1, 0]", r#""X""#, "1", "[0.5]"] {
            let config: JsonMap =
                serde_json::from_str(&format!(r#"{{"order": {order}}}"#)).unwrap();
            let err =
                create(&ExtensionObject::with_configuration("transpose", config)).unwrap_err();
            assert!(
                err.to_string().contains("codec `transpose`"),
                "{order}: {err}"
            );
            assert!(err.to_string().contains("`order`"), "{order}: {err}");
        }
        let err = create(&ExtensionObject::new("transpose")).unwrap_err();
        assert!(err.to_string().contains("missing field `order`"), "{err}");
    }

    #[test]
    fn order_of_the_wrong_length_is_incompatible() {
        let codec = TransposeCodec::new(vec![1, 0]).unwrap();
        let r = repr(DataType::UInt8, &[2, 3, 4]);
        let err = codec.encoded_repr(&r).unwrap_err();
        assert!(matches!(
            err,
            CodecError::Incompatible {
                codec: "transpose",
                ..
            }
        ));
        assert_eq!(
            err.to_string(),
            "codec `transpose` cannot encode a 3-dimensional chunk with `order` [1, 0] of 2 dimensions"
        );
        assert!(codec.encode(vec![0; 24].into(), &r).is_err());
        assert!(codec.decode(vec![0; 24].into(), &r).is_err());
    }

    #[test]
    fn data_of_the_wrong_size_is_an_error() {
        let codec = TransposeCodec::new(vec![1, 0]).unwrap();
        let err = codec
            .encode(vec![0; 5].into(), &repr(DataType::UInt8, &[2, 3]))
            .unwrap_err();
        assert_eq!(err.to_string(), "decoded to 5 bytes, expected 6");
        assert!(
            codec
                .decode(vec![0; 7].into(), &repr(DataType::UInt8, &[2, 3]))
                .is_err()
        );
    }

    #[test]
    fn large_two_dimensional_transpose_matches_the_definition() {
        // Exercises tiles cut at the edges (37 and 53 are not multiples of TILE).
        for elem in [1, 2, 3, 4, 8, 16] {
            let shape = [37usize, 53];
            let data: Vec<u8> = (0..shape[0] * shape[1] * elem)
                .map(|i| (i * 7 % 256) as u8)
                .collect();
            let codec = TransposeCodec::new(vec![1, 0]).unwrap();
            let r = repr(data_type_of_size(elem), &[37, 53]);
            let encoded = codec.encode(data.clone().into(), &r).unwrap();
            assert_eq!(encoded, reference(&data, &shape, &[1, 0], elem), "{elem}");
            assert_eq!(codec.decode(encoded, &r).unwrap(), data);
        }
    }

    fn shape_and_order() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
        prop::collection::vec(0usize..6, 0..=5).prop_flat_map(|shape| {
            let n = shape.len();
            (Just(shape), Just((0..n).collect::<Vec<_>>()).prop_shuffle())
        })
    }

    proptest! {
        #[test]
        fn transpose_matches_the_definition_and_round_trips(
            (shape, order) in shape_and_order(),
            elem in prop::sample::select(vec![1usize, 2, 3, 4, 8, 16]),
            seed in any::<u8>(),
        ) {
            let count: usize = shape.iter().product();
            let data: Vec<u8> = (0..count * elem).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect();
            let codec = TransposeCodec::new(order.clone())?;
            let shape_u64: Vec<u64> = shape.iter().map(|&n| n as u64).collect();
            let r = repr(data_type_of_size(elem), &shape_u64);
            let encoded = codec.encode(data.clone().into(), &r)?;
            prop_assert_eq!(&encoded, &reference(&data, &shape, &order, elem));
            prop_assert_eq!(codec.decode(encoded, &r)?, data);
        }
    }
}
