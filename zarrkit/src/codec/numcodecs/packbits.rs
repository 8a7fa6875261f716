//! The `numcodecs.packbits` array-to-array codec: packs `bool` elements
//! eight to a byte, as numcodecs' `PackBits`.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/filter/packbits.html>
//! Names: v3 `numcodecs.packbits` (as zarr-python 3.1 writes it); v2 filter id `packbits`.
//!
//! The encoded array is one-dimensional `uint8`: a first byte giving the
//! number of padding bits in the last byte, then the bits, most significant
//! first (`numpy.packbits`).

use crate::codec::{ArrayToArrayCodec, ChunkRepr, Codec, CodecError, parse_configuration};
use crate::metadata::{DataType, ExtensionObject, FillValue, JsonMap};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "numcodecs.packbits";

/// The configuration of the `numcodecs.packbits` codec (it has none).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackBitsConfig {}

/// The `numcodecs.packbits` codec.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PackBitsCodec;

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration has options.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let _: PackBitsConfig = parse_configuration(metadata)?;
    Ok(Codec::ArrayToArray(Arc::new(PackBitsCodec)))
}

fn count(repr: &ChunkRepr) -> Result<usize, CodecError> {
    if repr.data_type != DataType::Bool {
        return Err(CodecError::Incompatible {
            codec: NAME,
            what: format!("{} (only bool)", repr.data_type.name()),
        });
    }
    repr.size_bytes()
}

impl ArrayToArrayCodec for PackBitsCodec {
    fn metadata(&self) -> ExtensionObject {
        ExtensionObject::with_configuration(NAME, JsonMap::new())
    }

    fn encoded_repr(&self, decoded: &ChunkRepr) -> Result<ChunkRepr, CodecError> {
        let n = count(decoded)?;
        Ok(ChunkRepr {
            shape: vec![n.div_ceil(8) as u64 + 1],
            data_type: DataType::UInt8,
            fill_value: FillValue::zero(&DataType::UInt8),
        })
    }

    crate::codec::fixed_array_to_array!(NAME);
}

impl PackBitsCodec {
    fn encode_bytes(
        &self,
        decoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let n = count(decoded_repr)?;
        if decoded.len() != n {
            return Err(CodecError::WrongSize {
                expected: n,
                actual: decoded.len(),
            });
        }
        let mut out = vec![0u8; n.div_ceil(8) + 1];
        out[0] = ((8 - n % 8) % 8) as u8;
        for (i, &b) in decoded.iter().enumerate() {
            if b != 0 {
                out[1 + i / 8] |= 0x80 >> (i % 8);
            }
        }
        Ok(out)
    }
    fn decode_bytes(
        &self,
        encoded: Vec<u8>,
        decoded_repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let n = count(decoded_repr)?;
        let Some((&padding, bits)) = encoded.split_first() else {
            return Err(CodecError::Corrupt {
                codec: NAME,
                reason: "the data is empty (it starts with a padding count)".to_string(),
            });
        };
        let available = (bits.len() * 8).checked_sub(usize::from(padding));
        if padding > 7 || available != Some(n) {
            return Err(CodecError::Corrupt {
                codec: NAME,
                reason: format!(
                    "{} packed bytes with {padding} padding bits do not hold {n} elements",
                    bits.len()
                ),
            });
        }
        Ok((0..n)
            .map(|i| u8::from(bits[i / 8] & (0x80 >> (i % 8)) != 0))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn repr(n: u64) -> ChunkRepr {
        ChunkRepr {
            shape: vec![n],
            data_type: DataType::Bool,
            fill_value: FillValue::zero(&DataType::Bool),
        }
    }

    #[test]
    fn ten_bools_pack_as_numcodecs_does() {
        // numcodecs.PackBits().encode(np.array([1,0,1,1,0,0,0,1,1,1], bool))
        let data = vec![1, 0, 1, 1, 0, 0, 0, 1, 1, 1];
        let encoded = PackBitsCodec
            .encode(data.clone().into(), &repr(10))
            .unwrap();
        assert_eq!(encoded, [6, 0b1011_0001, 0b1100_0000]);
        assert_eq!(PackBitsCodec.encoded_repr(&repr(10)).unwrap().shape, [3]);
        assert_eq!(PackBitsCodec.decode(encoded, &repr(10)).unwrap(), data);
    }

    #[test]
    fn corrupt_padding_and_sizes_are_errors() {
        assert!(PackBitsCodec.decode(vec![].into(), &repr(1)).is_err());
        assert!(PackBitsCodec.decode(vec![9, 0].into(), &repr(0)).is_err());
        assert!(
            PackBitsCodec
                .decode(vec![6, 0, 0].into(), &repr(11))
                .is_err()
        );
        assert!(PackBitsCodec.decode(vec![0, 0].into(), &repr(16)).is_err());
        let not_bool = ChunkRepr {
            data_type: DataType::UInt8,
            ..repr(1)
        };
        assert!(PackBitsCodec.encoded_repr(&not_bool).is_err());
    }

    proptest! {
        #[test]
        fn packbits_round_trips(bits in prop::collection::vec(0u8..=1, 0..100)) {
            let r = repr(bits.len() as u64);
            prop_assert_eq!(PackBitsCodec.decode(PackBitsCodec.encode(bits.clone().into(), &r)?, &r)?, bits);
        }

        #[test]
        fn packbits_decode_of_garbage_does_not_panic(data in prop::collection::vec(any::<u8>(), 0..16), n in 0u64..100) {
            let _ = PackBitsCodec.decode(data.into(), &repr(n));
        }
    }
}
