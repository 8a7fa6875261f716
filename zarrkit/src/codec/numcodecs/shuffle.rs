//! The `numcodecs.shuffle` bytes-to-bytes codec: groups the `i`-th byte of
//! every element together, as numcodecs' `Shuffle`.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/filter/shuffle.html>
//! Names: v3 `numcodecs.shuffle` (as zarr-python 3.1 writes it, a
//! bytes-to-bytes codec); v2 filter id `shuffle`.
//!
//! Byte `j` of element `i` moves to position `j * count + i`. The data
//! must be a whole number of elements; an `elementsize` of 0 or 1 is the identity.
//!
//! ```
//! # use zarrkit::codec::shuffle::ShuffleConfig;
//! let config: ShuffleConfig = serde_json::from_str(r#"{ "elementsize": 8 }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::{BytesToBytesCodec, Codec, CodecError, parse_configuration};
use crate::metadata::{ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "numcodecs.shuffle";

/// The configuration of the `numcodecs.shuffle` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShuffleConfig {
    /// The element size in bytes; absent means numcodecs' default, 4.
    #[serde(default = "default_elementsize")]
    pub elementsize: usize,
}

fn default_elementsize() -> usize {
    4
}

/// The `numcodecs.shuffle` codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShuffleCodec {
    elementsize: usize,
}

impl ShuffleCodec {
    /// A codec shuffling elements of `elementsize` bytes.
    #[must_use]
    pub fn new(elementsize: usize) -> Self {
        Self { elementsize }
    }

    fn check(&self, data: &[u8]) -> Result<usize, CodecError> {
        if !data.len().is_multiple_of(self.elementsize.max(1)) {
            return Err(CodecError::Corrupt {
                codec: NAME,
                reason: format!(
                    "{} bytes are not a whole number of {}-byte elements",
                    data.len(),
                    self.elementsize
                ),
            });
        }
        Ok(data.len() / self.elementsize.max(1))
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: ShuffleConfig = parse_configuration(metadata)?;
    Ok(Codec::BytesToBytes(Arc::new(ShuffleCodec::new(
        config.elementsize,
    ))))
}

impl BytesToBytesCodec for ShuffleCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert("elementsize".into(), self.elementsize.into());
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>, CodecError> {
        let count = self.check(&decoded)?;
        if self.elementsize <= 1 {
            return Ok(decoded);
        }
        let mut out = vec![0u8; decoded.len()];
        for (i, element) in decoded.chunks_exact(self.elementsize).enumerate() {
            for (j, &byte) in element.iter().enumerate() {
                out[j * count + i] = byte;
            }
        }
        Ok(out)
    }

    fn decode(
        &self,
        encoded: Vec<u8>,
        _decoded_size: Option<usize>,
    ) -> Result<Vec<u8>, CodecError> {
        let count = self.check(&encoded)?;
        if self.elementsize <= 1 {
            return Ok(encoded);
        }
        let mut out = vec![0u8; encoded.len()];
        for (i, element) in out.chunks_exact_mut(self.elementsize).enumerate() {
            for (j, byte) in element.iter_mut().enumerate() {
                *byte = encoded[j * count + i];
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bytes_are_grouped_by_position_in_the_element() {
        let encoded = ShuffleCodec::new(4).encode((0..8).collect()).unwrap();
        assert_eq!(encoded, [0, 4, 1, 5, 2, 6, 3, 7]);
        assert!(ShuffleCodec::new(4).decode(vec![0; 7], None).is_err());
        assert!(ShuffleCodec::new(3).encode(vec![0; 10]).is_err());
    }

    proptest! {
        #[test]
        fn shuffle_round_trips(n in 0usize..64, size in 0usize..9, seed in any::<u8>()) {
            let data: Vec<u8> = (0..n * size.max(1)).map(|i| (i as u8).wrapping_mul(seed)).collect();
            let c = ShuffleCodec::new(size);
            prop_assert_eq!(c.decode(c.encode(data.clone())?, None)?, data);
        }
    }
}
