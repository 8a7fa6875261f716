//! The `numcodecs.astype` array-to-array codec: converts elements from
//! `decode_dtype` to `encode_dtype` with NumPy's casting, as numcodecs' `AsType`.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/filter/astype.html>
//! Names: v3 `numcodecs.astype` (as zarr-python 3.1 writes it); v2 filter id `astype`.
//!
//! Casts follow NumPy's `astype`: integers wrap, floats truncate toward zero
//! when cast to integers. Floats outside an integer type's range saturate
//! here; NumPy leaves that case platform-dependent.
//!
//! ```
//! # use zarrkit::codec::astype::AsTypeConfig;
//! let config: AsTypeConfig =
//!     serde_json::from_str(r#"{ "encode_dtype": "<f4", "decode_dtype": "<f8" }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::numpy_dtype::{Direction, NumpyDtype, check_type, convert_chunk, repr_as};
use crate::codec::{ArrayToArrayCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::{ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "numcodecs.astype";

/// The configuration of the `numcodecs.astype` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AsTypeConfig {
    /// The stored element type, a NumPy type string such as `"<f4"`.
    pub encode_dtype: String,
    /// The array's element type.
    pub decode_dtype: String,
}

/// The `numcodecs.astype` codec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsTypeCodec {
    encode_dtype: NumpyDtype,
    decode_dtype: NumpyDtype,
}

impl AsTypeCodec {
    /// A codec storing `decode_dtype` elements as `encode_dtype`.
    #[must_use]
    pub fn new(encode_dtype: NumpyDtype, decode_dtype: NumpyDtype) -> Self {
        Self {
            encode_dtype,
            decode_dtype,
        }
    }

    /// The stored element type.
    #[must_use]
    pub fn encode_dtype(&self) -> &NumpyDtype {
        &self.encode_dtype
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: AsTypeConfig = parse_configuration(metadata)?;
    Ok(Codec::ArrayToArray(Arc::new(AsTypeCodec::new(
        NumpyDtype::parse(NAME, "encode_dtype", &config.encode_dtype)?,
        NumpyDtype::parse(NAME, "decode_dtype", &config.decode_dtype)?,
    ))))
}

impl ArrayToArrayCodec for AsTypeCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert(
            "encode_dtype".into(),
            self.encode_dtype.to_type_string().into(),
        );
        configuration.insert(
            "decode_dtype".into(),
            self.decode_dtype.to_type_string().into(),
        );
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn encoded_repr(&self, decoded: &ChunkRepr) -> Result<ChunkRepr, CodecError> {
        check_type(NAME, &decoded.data_type, &self.decode_dtype)?;
        Ok(repr_as(decoded, self.encode_dtype.data_type.clone()))
    }

    crate::codec::fixed_array_to_array!(NAME);
}

impl AsTypeCodec {
    fn encode_bytes(
        &self,
        decoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        convert_chunk(
            NAME,
            &decoded,
            decoded_repr,
            (&self.decode_dtype, &self.encode_dtype),
            Direction::Encode,
            |v| v,
        )
    }
    fn decode_bytes(
        &self,
        encoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        convert_chunk(
            NAME,
            &encoded,
            decoded_repr,
            (&self.decode_dtype, &self.encode_dtype),
            Direction::Decode,
            |v| v,
        )
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

    fn codec(encode: &str, decode: &str) -> AsTypeCodec {
        AsTypeCodec::new(
            NumpyDtype::parse(NAME, "e", encode).unwrap(),
            NumpyDtype::parse(NAME, "d", decode).unwrap(),
        )
    }

    #[test]
    fn float64_to_float32_rounds_and_back_widens() {
        let data: Vec<u8> = [0.1f64, -2.5]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let c = codec("<f4", "<f8");
        let r = repr(DataType::Float64, 2);
        let encoded = c.encode(data.into(), &r).unwrap();
        assert_eq!(encoded.len(), 8);
        let decoded = c.decode(encoded, &r).unwrap();
        assert_eq!(
            decoded.as_fixed("test").unwrap()[..8],
            f64::from(0.1f32).to_ne_bytes()
        );
    }

    #[test]
    fn int_to_narrower_int_wraps_and_wrong_sizes_are_errors() {
        let c = codec("|u1", "<i4");
        let r = repr(DataType::Int32, 2);
        let data: Vec<u8> = [257i32, -1].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(c.encode(data.into(), &r).unwrap(), [1, 255]);
        assert!(c.decode(vec![1, 2, 3].into(), &r).is_err());
        assert!(c.encoded_repr(&repr(DataType::Int8, 2)).is_err());
    }

    proptest! {
        #[test]
        fn astype_round_trips_widening(values in prop::collection::vec(any::<i16>(), 0..64)) {
            let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let r = repr(DataType::Int16, values.len() as u64);
            let c = codec("<i8", "<i2");
            prop_assert_eq!(c.decode(c.encode(data.clone().into(), &r)?, &r)?, data);
        }
    }
}
