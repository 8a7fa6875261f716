//! The `numcodecs.delta` array-to-array codec: stores the first element and
//! then the differences between neighbours, as numcodecs' `Delta`.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/filter/delta.html>
//! Names: v3 `numcodecs.delta` (as zarr-python 3.1 writes it); v2 filter id `delta`.
//!
//! Elements are taken in the chunk's memory order (C order; `format/v2.rs`
//! puts a `transpose` first for F-order arrays). Integer differences wrap
//! as NumPy's do; float differences round to `dtype`. The encoded elements
//! are `astype` (default `dtype`).
//!
//! ```
//! # use zarrkit::codec::delta::DeltaConfig;
//! let config: DeltaConfig = serde_json::from_str(r#"{ "dtype": "<i4", "astype": "<i2" }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::numpy_dtype::{
    Num, NumpyDtype, check_len, check_type, is_float, is_integer, load, repr_as, round_to, store,
    wrap,
};
use crate::codec::{ArrayToArrayCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::{ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "numcodecs.delta";

/// The configuration of the `numcodecs.delta` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeltaConfig {
    /// The decoded element type, a NumPy type string such as `"<i4"`.
    pub dtype: String,
    /// The encoded element type; absent or `null` means `dtype`.
    #[serde(default)]
    pub astype: Option<String>,
}

/// The `numcodecs.delta` codec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeltaCodec {
    dtype: NumpyDtype,
    astype: NumpyDtype,
}

impl DeltaCodec {
    /// A codec differencing `dtype` elements into `astype` elements.
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if either is not an integer or
    /// float type.
    pub fn new(dtype: NumpyDtype, astype: NumpyDtype) -> Result<Self, CodecError> {
        for (field, t) in [("dtype", &dtype), ("astype", &astype)] {
            if !is_integer(&t.data_type) && !is_float(&t.data_type) {
                return Err(CodecError::InvalidConfiguration {
                    codec: NAME.to_string(),
                    reason: format!(
                        "`{field}` is {}, expected an integer or float type",
                        t.to_type_string()
                    ),
                });
            }
        }
        Ok(Self { dtype, astype })
    }

    /// The decoded element type.
    #[must_use]
    pub fn dtype(&self) -> &NumpyDtype {
        &self.dtype
    }

    /// The encoded element type.
    #[must_use]
    pub fn astype(&self) -> &NumpyDtype {
        &self.astype
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: DeltaConfig = parse_configuration(metadata)?;
    let dtype = NumpyDtype::parse(NAME, "dtype", &config.dtype)?;
    let astype = match &config.astype {
        Some(text) => NumpyDtype::parse(NAME, "astype", text)?,
        None => dtype.clone(),
    };
    Ok(Codec::ArrayToArray(Arc::new(DeltaCodec::new(
        dtype, astype,
    )?)))
}

impl ArrayToArrayCodec for DeltaCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert("dtype".into(), self.dtype.to_type_string().into());
        configuration.insert("astype".into(), self.astype.to_type_string().into());
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn encoded_repr(&self, decoded: &ChunkRepr) -> Result<ChunkRepr, CodecError> {
        check_type(NAME, &decoded.data_type, &self.dtype)?;
        Ok(repr_as(decoded, self.astype.data_type.clone()))
    }

    crate::codec::fixed_array_to_array!(NAME);
}

impl DeltaCodec {
    fn encode_bytes(
        &self,
        decoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        check_type(NAME, &decoded_repr.data_type, &self.dtype)?;
        let (from, to) = (&self.dtype.data_type, &self.astype.data_type);
        let count = decoded_repr.size_bytes()? / from.size();
        check_len(&decoded, count, from.size())?;
        let mut out = vec![0u8; count * to.size()];
        let mut previous: Option<Num> = None;
        for (src, dst) in decoded
            .chunks_exact(from.size())
            .zip(out.chunks_exact_mut(to.size()))
        {
            let value = load(from, src);
            let difference = match (previous, value) {
                (None, v) => v,
                (Some(Num::Int(p)), Num::Int(v)) => Num::Int(wrap(from, v.wrapping_sub(p))),
                (Some(p), v) => Num::Float(round_to(from, v.to_f64() - p.to_f64())),
            };
            store(to, difference, dst);
            previous = Some(value);
        }
        Ok(out)
    }
    fn decode_bytes(
        &self,
        encoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        check_type(NAME, &decoded_repr.data_type, &self.dtype)?;
        let (to, from) = (&self.dtype.data_type, &self.astype.data_type);
        let count = decoded_repr.size_bytes()? / to.size();
        check_len(&encoded, count, from.size())?;
        let mut out = vec![0u8; count * to.size()];
        // NumPy's cumsum accumulates in the encoded type (integers in at
        // least 64 bits, which wraps the same modulo the decoded width).
        let mut sum: Option<Num> = None;
        for (src, dst) in encoded
            .chunks_exact(from.size())
            .zip(out.chunks_exact_mut(to.size()))
        {
            let value = load(from, src);
            let next = match (sum, value) {
                (None, v) => v,
                (Some(Num::Int(s)), Num::Int(v)) => Num::Int(s.wrapping_add(v) as i64 as i128),
                (Some(s), v) => Num::Float(round_to(from, s.to_f64() + v.to_f64())),
            };
            store(to, next, dst);
            sum = Some(next);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{DataType, FillValue};
    use proptest::prelude::*;

    fn repr(data_type: DataType, n: u64) -> ChunkRepr {
        ChunkRepr {
            shape: vec![n],
            fill_value: FillValue::zero(&data_type),
            data_type,
        }
    }

    fn codec(dtype: &str, astype: &str) -> DeltaCodec {
        DeltaCodec::new(
            NumpyDtype::parse(NAME, "dtype", dtype).unwrap(),
            NumpyDtype::parse(NAME, "astype", astype).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn differences_wrap_like_numpy_into_a_narrower_type() {
        // numcodecs.Delta('<i4', astype='<i1').encode([100, 300, 50, -2**31])
        let data: Vec<u8> = [100i32, 300, 50, i32::MIN]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let codec = codec("<i4", "<i1");
        let encoded = codec
            .encode(data.into(), &repr(DataType::Int32, 4))
            .unwrap();
        // 100, 200 → -56, -250 → 6, MIN - 50 wraps to 2147483598 → -50.
        assert_eq!(encoded, [100u8, 200, 6, (-50i8) as u8]);
    }

    #[test]
    fn wrong_sizes_and_types_are_errors() {
        let codec = codec("<i4", "<i4");
        assert!(
            codec
                .decode(vec![0; 7].into(), &repr(DataType::Int32, 2))
                .is_err()
        );
        assert!(
            codec
                .encode(vec![0; 8].into(), &repr(DataType::Float32, 2))
                .is_err()
        );
        assert!(codec.encoded_repr(&repr(DataType::Int64, 2)).is_err());
        let bad = ExtensionObject::with_configuration(
            NAME,
            serde_json::from_str(r#"{"dtype": "|b1"}"#).unwrap(),
        );
        assert!(create(&bad).is_err());
    }

    proptest! {
        #[test]
        fn delta_round_trips_integers(values in prop::collection::vec(any::<i64>(), 0..64)) {
            let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let r = repr(DataType::Int64, values.len() as u64);
            let codec = codec("<i8", ">i8");
            prop_assert_eq!(codec.decode(codec.encode(data.clone().into(), &r)?, &r)?, data);
        }

        #[test]
        fn delta_decode_of_garbage_does_not_panic(data in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = codec("<f4", "<f8").decode(data.into(), &repr(DataType::Float32, 4));
        }
    }
}
