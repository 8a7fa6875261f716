//! The `numcodecs.fixedscaleoffset` array-to-array codec: stores
//! `round((x - offset) * scale)` as `astype`, as numcodecs' `FixedScaleOffset`.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/filter/fixedscaleoffset.html>
//! Names: v3 `numcodecs.fixedscaleoffset` (as zarr-python 3.1 writes it);
//! v2 filter id `fixedscaleoffset`.
//!
//! The arithmetic follows NumPy's promotion of a Python number with an
//! array: for a float `dtype` everything is computed in that type; for an
//! integer `dtype`, a JSON integer `offset` or `scale` keeps the step in
//! the integer type (wrapping), a JSON float moves it to `float64`.
//! Rounding is half to even (`numpy.around`). Decoding divides (`float64`
//! unless `astype` is a float type) and casts to `dtype`, truncating
//! toward zero for integer types.
//!
//! ```
//! # use zarrkit::codec::fixedscaleoffset::FixedScaleOffsetConfig;
//! let config: FixedScaleOffsetConfig = serde_json::from_str(
//!     r#"{ "offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1" }"#,
//! )?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::numpy_dtype::{
    Direction, Num, NumpyDtype, check_type, convert_chunk, is_float, is_integer, repr_as, round_to,
    wrap,
};
use crate::codec::{ArrayToArrayCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::{DataType, ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use serde_json::Number;
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "numcodecs.fixedscaleoffset";

/// The configuration of the `numcodecs.fixedscaleoffset` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedScaleOffsetConfig {
    /// Subtracted before scaling.
    pub offset: Number,
    /// The multiplier applied after subtracting `offset`.
    pub scale: Number,
    /// The decoded element type, a NumPy type string.
    pub dtype: String,
    /// The encoded element type; absent or `null` means `dtype`.
    #[serde(default)]
    pub astype: Option<String>,
}

/// The `numcodecs.fixedscaleoffset` codec.
#[derive(Clone, Debug, PartialEq)]
pub struct FixedScaleOffsetCodec {
    offset: Number,
    scale: Number,
    dtype: NumpyDtype,
    astype: NumpyDtype,
}

fn as_num(n: &Number) -> Num {
    match (n.as_i64(), n.as_u64()) {
        (Some(v), _) => Num::Int(i128::from(v)),
        (None, Some(v)) => Num::Int(i128::from(v)),
        _ => Num::Float(n.as_f64().unwrap_or(f64::NAN)),
    }
}

impl FixedScaleOffsetCodec {
    /// A codec with `offset` and `scale` (JSON numbers: integers and floats
    /// promote differently, as in NumPy).
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if a type is not an integer or
    /// float type, or `scale` is zero.
    pub fn new(
        offset: Number,
        scale: Number,
        dtype: NumpyDtype,
        astype: NumpyDtype,
    ) -> Result<Self, CodecError> {
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
        if as_num(&scale).to_f64() == 0.0 {
            return Err(CodecError::InvalidConfiguration {
                codec: NAME.to_string(),
                reason: "`scale` is 0".to_string(),
            });
        }
        Ok(Self {
            offset,
            scale,
            dtype,
            astype,
        })
    }

    /// One step of NumPy arithmetic between an element of type `t` and a
    /// Python number: integer × integer stays integer (wrapping to `t`).
    fn step(
        t: &DataType,
        a: Num,
        b: Num,
        f: fn(f64, f64) -> f64,
        i: fn(i128, i128) -> i128,
    ) -> Num {
        match (a, b) {
            (Num::Int(x), Num::Int(y)) if is_integer(t) => Num::Int(wrap(t, i(x, y))),
            _ if is_float(t) => Num::Float(round_to(t, f(a.to_f64(), round_to(t, b.to_f64())))),
            _ => Num::Float(f(a.to_f64(), b.to_f64())),
        }
    }

    fn encode_one(&self, x: Num) -> Num {
        let t = &self.dtype.data_type;
        let shifted = Self::step(t, x, as_num(&self.offset), |a, b| a - b, i128::wrapping_sub);
        // After the first step a float result is float64 (or the float dtype).
        let t2 = if matches!(shifted, Num::Float(_)) && !is_float(t) {
            &DataType::Float64
        } else {
            t
        };
        match Self::step(
            t2,
            shifted,
            as_num(&self.scale),
            |a, b| a * b,
            i128::wrapping_mul,
        ) {
            Num::Float(v) => Num::Float(v.round_ties_even()),
            int => int,
        }
    }

    fn decode_one(&self, e: Num) -> Num {
        let t = &self.astype.data_type;
        // True division: float64 for integer `astype`, else the float type.
        let t = if is_float(t) { t } else { &DataType::Float64 };
        let scale = round_to(t, as_num(&self.scale).to_f64());
        let offset = round_to(t, as_num(&self.offset).to_f64());
        Num::Float(round_to(t, round_to(t, e.to_f64() / scale) + offset))
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: FixedScaleOffsetConfig = parse_configuration(metadata)?;
    let dtype = NumpyDtype::parse(NAME, "dtype", &config.dtype)?;
    let astype = match &config.astype {
        Some(text) => NumpyDtype::parse(NAME, "astype", text)?,
        None => dtype.clone(),
    };
    Ok(Codec::ArrayToArray(Arc::new(FixedScaleOffsetCodec::new(
        config.offset,
        config.scale,
        dtype,
        astype,
    )?)))
}

impl ArrayToArrayCodec for FixedScaleOffsetCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert("scale".into(), self.scale.clone().into());
        configuration.insert("offset".into(), self.offset.clone().into());
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

impl FixedScaleOffsetCodec {
    fn encode_bytes(
        &self,
        decoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        convert_chunk(
            NAME,
            &decoded,
            decoded_repr,
            (&self.dtype, &self.astype),
            Direction::Encode,
            |x| self.encode_one(x),
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
            (&self.dtype, &self.astype),
            Direction::Decode,
            |e| self.decode_one(e),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::FillValue;
    use proptest::prelude::*;

    fn repr(data_type: DataType, n: u64) -> ChunkRepr {
        ChunkRepr {
            shape: vec![n],
            fill_value: FillValue::zero(&data_type),
            data_type,
        }
    }

    fn codec(offset: &str, scale: &str, dtype: &str, astype: &str) -> FixedScaleOffsetCodec {
        FixedScaleOffsetCodec::new(
            serde_json::from_str(offset).unwrap(),
            serde_json::from_str(scale).unwrap(),
            NumpyDtype::parse(NAME, "d", dtype).unwrap(),
            NumpyDtype::parse(NAME, "a", astype).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn the_numcodecs_docs_example_encodes_to_these_bytes() {
        // numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype='<f8',
        // astype='u1').encode(np.linspace(1000, 1001, 10)):
        // [0, 1, 2, 3, 4, 6, 7, 8, 9, 10] (4.444 → 4, 5.555 → 6).
        let data: Vec<u8> = (0..10)
            .map(|i| 1000.0 + f64::from(i) / 9.0)
            .flat_map(f64::to_ne_bytes)
            .collect();
        let c = codec("1000", "10", "<f8", "|u1");
        let r = repr(DataType::Float64, 10);
        let encoded = c.encode(data.into(), &r).unwrap();
        assert_eq!(encoded, [0, 1, 2, 3, 4, 6, 7, 8, 9, 10]);
        let decoded = c.decode(encoded, &r).unwrap();
        assert_eq!(
            decoded.as_fixed("test").unwrap()[8..16],
            1000.1f64.to_ne_bytes()
        );
    }

    #[test]
    fn rounding_is_half_to_even_and_zero_scale_is_refused() {
        let c = codec("0", "1", "<f8", "<i4");
        let data: Vec<u8> = [0.5f64, 1.5, 2.5, -0.5]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let encoded = c.encode(data.into(), &repr(DataType::Float64, 4)).unwrap();
        let ints: Vec<i32> = encoded
            .as_fixed("test")
            .unwrap()
            .chunks_exact(4)
            .map(|b| i32::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(ints, [0, 2, 2, 0]);
        assert!(
            FixedScaleOffsetCodec::new(
                0.into(),
                0.into(),
                NumpyDtype::parse(NAME, "d", "<f8").unwrap(),
                NumpyDtype::parse(NAME, "d", "<f8").unwrap()
            )
            .is_err()
        );
        assert!(
            c.decode(vec![0; 3].into(), &repr(DataType::Float64, 1))
                .is_err()
        );
    }

    proptest! {
        #[test]
        fn fixedscaleoffset_round_trips_integers(values in prop::collection::vec(0u8..=255, 0..64)) {
            // Integers offset by 100 into i2 and back.
            let data: Vec<u8> = values.iter().flat_map(|&v| i32::from(v).to_ne_bytes()).collect();
            let c = codec("100", "1", "<i4", "<i2");
            let r = repr(DataType::Int32, values.len() as u64);
            prop_assert_eq!(c.decode(c.encode(data.clone().into(), &r)?, &r)?, data);
        }
    }
}
