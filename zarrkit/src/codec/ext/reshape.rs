//! The `reshape` array-to-array codec (v3 extension): gives the chunk a new
//! shape with the same elements in the same C order.
//!
//! Spec: <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/reshape>
//! Names: v3 `reshape`.
//!
//! Each output dimension is a size, the product of a run of input
//! dimensions (`[0, 1]`), or `-1` (whatever makes the element counts agree).
//! The bytes are unchanged; only the shape the next codec sees changes.
//!
//! ```
//! # use zarrkit::codec::reshape::ReshapeConfig;
//! let config: ReshapeConfig = serde_json::from_str(r#"{ "shape": [[0, 1], [2], 3] }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::numpy_dtype::check_len;
use crate::codec::{ArrayToArrayCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::{ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "reshape";

/// One output dimension of `reshape`'s `shape`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ReshapeDim {
    /// A fixed size, or `-1` for the size that keeps the element count.
    Size(i64),
    /// The product of these input dimensions (strictly increasing).
    InputDims(Vec<u64>),
}

/// The configuration of the `reshape` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReshapeConfig {
    /// The output shape, one entry per output dimension.
    pub shape: Vec<ReshapeDim>,
}

/// The `reshape` codec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReshapeCodec {
    shape: Vec<ReshapeDim>,
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

fn product(dims: &[u64]) -> Option<u64> {
    dims.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n))
}

impl ReshapeCodec {
    /// A codec producing `shape`.
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if a size is 0 or below -1, `-1`
    /// appears twice, or the input dimensions are not strictly increasing
    /// over the whole of `shape`.
    pub fn new(shape: Vec<ReshapeDim>) -> Result<Self, CodecError> {
        let mut auto = 0;
        let mut last: Option<u64> = None;
        for dim in &shape {
            match dim {
                ReshapeDim::Size(-1) => auto += 1,
                ReshapeDim::Size(n) if *n < 1 => {
                    return Err(invalid(format!(
                        "`shape` entry {n} is neither a positive size nor -1"
                    )));
                }
                ReshapeDim::Size(_) => {}
                ReshapeDim::InputDims(dims) => {
                    for &d in dims {
                        if last.is_some_and(|l| d <= l) {
                            return Err(invalid(
                                "input dimensions in `shape` must be strictly increasing",
                            ));
                        }
                        last = Some(d);
                    }
                }
            }
        }
        if auto > 1 {
            return Err(invalid("`shape` may contain -1 at most once"));
        }
        Ok(Self { shape })
    }

    /// The output shape for an input of `input` shape.
    fn output_shape(&self, input: &[u64]) -> Result<Vec<u64>, CodecError> {
        let total = product(input).ok_or_else(|| incompatible(format!("shape {input:?}")))?;
        let mut out: Vec<Option<u64>> = Vec::with_capacity(self.shape.len());
        for dim in &self.shape {
            out.push(match dim {
                ReshapeDim::Size(-1) => None,
                ReshapeDim::Size(n) => Some(u64::try_from(*n).unwrap_or(0)),
                ReshapeDim::InputDims(dims) => {
                    let mut size = 1u64;
                    for &d in dims {
                        let extent = usize::try_from(d)
                            .ok()
                            .and_then(|d| input.get(d))
                            .ok_or_else(|| {
                                incompatible(format!(
                                    "shape {input:?} (input dimension {d} does not exist)"
                                ))
                            })?;
                        size = size
                            .checked_mul(*extent)
                            .ok_or_else(|| incompatible(format!("shape {input:?}")))?;
                    }
                    Some(size)
                }
            });
        }
        let known = out
            .iter()
            .flatten()
            .try_fold(1u64, |acc, &n| acc.checked_mul(n));
        let shape: Vec<u64> = match (known, out.iter().position(Option::is_none)) {
            (Some(known), Some(auto)) if known != 0 && total % known == 0 => {
                out[auto] = Some(total / known);
                out.into_iter().flatten().collect()
            }
            (Some(known), None) if known == total => out.into_iter().flatten().collect(),
            _ => {
                return Err(incompatible(format!(
                    "shape {input:?} to {:?} (the element counts differ)",
                    self.shape
                )));
            }
        };
        // The runs of input dimensions must line up with the raveled index.
        for (i, dim) in self.shape.iter().enumerate() {
            if let ReshapeDim::InputDims(dims) = dim
                && let (Some(&first), Some(&last)) = (dims.first(), dims.last())
            {
                let (first, last) = (first as usize, last as usize);
                if product(&shape[..i]) != product(&input[..first])
                    || product(&shape[i + 1..]) != product(&input[last + 1..])
                {
                    return Err(incompatible(format!(
                        "shape {input:?}: output dimension {i} does not ravel input dimensions {dims:?}"
                    )));
                }
            }
        }
        Ok(shape)
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: ReshapeConfig = parse_configuration(metadata)?;
    Ok(Codec::ArrayToArray(Arc::new(ReshapeCodec::new(
        config.shape,
    )?)))
}

impl ArrayToArrayCodec for ReshapeCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert(
            "shape".into(),
            serde_json::to_value(&self.shape).unwrap_or_default(),
        );
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn permutes_elements(&self) -> bool {
        true
    }

    fn encoded_repr(&self, decoded: &ChunkRepr) -> Result<ChunkRepr, CodecError> {
        Ok(ChunkRepr {
            shape: self.output_shape(&decoded.shape)?,
            data_type: decoded.data_type.clone(),
            fill_value: decoded.fill_value.clone(),
        })
    }

    crate::codec::fixed_array_to_array!(NAME);
}

impl ReshapeCodec {
    fn encode_bytes(
        &self,
        decoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        self.output_shape(&decoded_repr.shape)?;
        check_len(&decoded, decoded_repr.size_bytes()?, 1)?;
        Ok(decoded)
    }
    fn decode_bytes(
        &self,
        encoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        self.output_shape(&decoded_repr.shape)?;
        check_len(&encoded, decoded_repr.size_bytes()?, 1)?;
        Ok(encoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{DataType, FillValue};
    use serde_json::json;

    fn codec(shape: serde_json::Value) -> Result<ReshapeCodec, CodecError> {
        let mut configuration = JsonMap::new();
        configuration.insert("shape".into(), shape);
        let metadata = ExtensionObject::with_configuration(NAME, configuration);
        create(&metadata)?;
        let config: ReshapeConfig = parse_configuration(&metadata)?;
        ReshapeCodec::new(config.shape)
    }

    fn repr(shape: &[u64]) -> ChunkRepr {
        ChunkRepr {
            shape: shape.to_vec(),
            data_type: DataType::UInt8,
            fill_value: FillValue::zero(&DataType::UInt8),
        }
    }

    fn out(c: &ReshapeCodec, shape: &[u64]) -> Result<Vec<u64>, CodecError> {
        c.encoded_repr(&repr(shape)).map(|r| r.shape)
    }

    #[test]
    fn readme_example_merges_the_first_two_dimensions() {
        let c = codec(json!([[0, 1], [2], 3])).unwrap();
        assert_eq!(out(&c, &[100, 50, 64, 3]).unwrap(), [5000, 64, 3]);
    }

    #[test]
    fn minus_one_takes_the_remaining_elements() {
        let c = codec(json!([-1, 4])).unwrap();
        assert_eq!(out(&c, &[3, 8]).unwrap(), [6, 4]);
        assert!(out(&c, &[3, 3]).is_err());
        let c = codec(json!([2, [1, 2]])).unwrap();
        assert_eq!(out(&c, &[2, 3, 5]).unwrap(), [2, 15]);
        assert!(out(&c, &[4, 3, 5]).is_err());
    }

    #[test]
    fn input_dims_must_line_up_with_the_ravel() {
        // [1] as the first output dimension would leave dimension 0's extent unaccounted.
        let c = codec(json!([[1], -1])).unwrap();
        let err = out(&c, &[4, 5]).unwrap_err();
        assert!(err.to_string().contains("reshape"), "{err}");
        // Unknown input dimensions are refused, not indexed out of bounds.
        let c = codec(json!([[0, 7]])).unwrap();
        assert!(out(&c, &[4, 5]).is_err());
    }

    #[test]
    fn bad_configurations_are_refused_naming_the_codec() {
        for bad in [
            json!([[1], [0]]),
            json!([[1, 0], 10, [3, 4]]),
            json!([[3, 4], 10, [0, 1]]),
            json!([-1, -1]),
            json!([0]),
            json!([-2]),
            json!("x"),
        ] {
            let err = codec(bad.clone()).unwrap_err();
            assert!(err.to_string().contains("`reshape`"), "{bad}: {err}");
        }
    }

    #[test]
    fn bytes_pass_through_and_sizes_are_checked() {
        let c = codec(json!([-1])).unwrap();
        let r = repr(&[2, 3]);
        let data = vec![1, 2, 3, 4, 5, 6];
        assert_eq!(c.encode(data.clone().into(), &r).unwrap(), data);
        assert_eq!(c.decode(data.clone().into(), &r).unwrap(), data);
        assert!(c.decode(vec![1, 2].into(), &r).is_err());
    }

    #[test]
    fn metadata_is_canonical() {
        let c = codec(json!([[0, 1], 3, -1])).unwrap();
        assert_eq!(
            serde_json::Value::Object(c.metadata().configuration_or_empty()),
            json!({"shape": [[0, 1], 3, -1]})
        );
    }
}
