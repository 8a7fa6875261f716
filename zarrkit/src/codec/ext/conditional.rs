//! The `conditional` bytes-to-bytes codec (v3 extension): a list of
//! bytes-to-bytes codecs, each applied or skipped per chunk, with the choice
//! stored in a bitmask header in front of the chunk.
//!
//! Spec: <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/conditional>
//! Names: v3 `conditional`.
//!
//! The stored chunk is `header_bits / 8` header bytes, then the data.
//! Bit `i` of the header (byte `i / 8`, bit `i % 8`, least significant
//! first) is 1 when `codecs[i]` was applied. Decoding reads the header and
//! undoes the applied codecs in reverse order. A set bit at or past
//! `codecs.len()` is an error: the chunk was written with codecs this
//! metadata does not list.
//!
//! Which codecs to apply is not part of the metadata but a runtime choice,
//! a [`ConditionalDecision`]. The spec's default, and so the default of a
//! codec read from metadata, is [`ConditionalDecision::NeverApply`] (store
//! every chunk as it is); [`ConditionalCodec::with_decision`] picks another,
//! such as [`ConditionalDecision::CompressIfSmaller`], and
//! [`Array::set_codecs`](crate::Array::set_codecs) attaches the codec so
//! decided to an array for its writes (spec, "Implementation", phase 2).
//! The decision sees the bytes each nested codec would encode, that is the
//! output of the codecs applied before it; the spec's phase 2 words it as
//! the original chunk, which for `shuffle` then `zstd` would judge `zstd`
//! on bytes it never compresses. The stored format is the same either way.
//!
//! ```
//! # use zarrkit::codec::conditional::ConditionalConfig;
//! let config: ConditionalConfig = serde_json::from_str(
//!     r#"{ "codecs": [ { "name": "zstd", "configuration": { "level": 5 } } ], "header_bits": 8 }"#,
//! )?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::{BytesToBytesCodec, Codec, CodecError, codec_from_metadata};
use crate::metadata::json::{extension_from_json, extension_to_json};
use crate::metadata::{ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "conditional";

/// The largest `header_bits` accepted: metadata is untrusted, and every
/// chunk carries `header_bits / 8` bytes.
pub const MAX_HEADER_BITS: u64 = 1 << 16;

/// The configuration of the `conditional` codec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionalConfig {
    /// The bytes-to-bytes codecs that may be applied, in encoding order.
    pub codecs: Vec<Value>,
    /// The header's size in bits: a multiple of 8, at least `codecs.len()`
    /// (default: the smallest such multiple).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_bits: Option<u64>,
}

/// A signature for a caller's own decision: given the position of a nested
/// codec, the codec, the bytes it would encode, and (for a decision made
/// with trial encoding) what it encodes them to, whether to apply it.
pub type DecisionFn =
    dyn Fn(usize, &dyn BytesToBytesCodec, &[u8], Option<&[u8]>) -> bool + Send + Sync;

/// How the writer chooses, per chunk, which nested codecs to apply
/// (spec, "Implementation", phases 2 and 3). Decoding ignores it: the
/// choice is read from each chunk's header.
#[derive(Clone, Default)]
pub enum ConditionalDecision {
    /// Skip every nested codec (`never_apply`): the spec's default when no
    /// mask is set.
    #[default]
    NeverApply,
    /// Apply every nested codec (`always_apply`).
    AlwaysApply,
    /// Apply a codec only when its output is smaller than its input
    /// (`compress_if_smaller`, which trial-encodes).
    CompressIfSmaller,
    /// A fixed bitmask: bit `i` set applies `codecs[i]`.
    Mask(u64),
    /// The caller's function; `trial_encode` says whether it is given the
    /// trial encoding.
    Custom {
        /// The decision function.
        decide: Arc<DecisionFn>,
        /// Whether to trial-encode before calling `decide`.
        trial_encode: bool,
    },
}

impl fmt::Debug for ConditionalDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NeverApply => f.write_str("NeverApply"),
            Self::AlwaysApply => f.write_str("AlwaysApply"),
            Self::CompressIfSmaller => f.write_str("CompressIfSmaller"),
            Self::Mask(mask) => write!(f, "Mask({mask:#b})"),
            Self::Custom { trial_encode, .. } => f
                .debug_struct("Custom")
                .field("trial_encode", trial_encode)
                .finish_non_exhaustive(),
        }
    }
}

/// A decision name that is not one of the built-in heuristics.
#[derive(Debug, thiserror::Error)]
#[error(
    "unknown `conditional` decision `{name}` (expected `never_apply`, `always_apply` or `compress_if_smaller`)"
)]
pub struct UnknownDecision {
    /// The name given.
    pub name: String,
}

impl FromStr for ConditionalDecision {
    type Err = UnknownDecision;

    /// Selects a built-in heuristic by its spec keyword (phase 3).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "never_apply" => Ok(Self::NeverApply),
            "always_apply" => Ok(Self::AlwaysApply),
            "compress_if_smaller" => Ok(Self::CompressIfSmaller),
            _ => Err(UnknownDecision { name: name.into() }),
        }
    }
}

/// The `conditional` codec.
#[derive(Clone, Debug)]
pub struct ConditionalCodec {
    codecs: Vec<Arc<dyn BytesToBytesCodec>>,
    /// `header_bits` as configured (`None`: the default).
    header_bits: Option<u64>,
    decision: ConditionalDecision,
}

fn invalid(reason: impl Into<String>) -> CodecError {
    CodecError::InvalidConfiguration {
        codec: NAME.into(),
        reason: reason.into(),
    }
}

fn corrupt(reason: String) -> CodecError {
    CodecError::Corrupt {
        codec: NAME,
        reason,
    }
}

impl ConditionalCodec {
    /// A codec over the resolved `codecs` (all bytes-to-bytes), with a
    /// header of `header_bits` bits (`None`: the smallest multiple of 8
    /// that has a bit per codec), deciding with
    /// [`ConditionalDecision::NeverApply`].
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] naming the position of a codec
    /// that is not bytes-to-bytes, or for a `header_bits` that is not a
    /// multiple of 8, is smaller than the number of codecs, or is above
    /// [`MAX_HEADER_BITS`].
    pub fn new(codecs: Vec<Codec>, header_bits: Option<u64>) -> Result<Self, CodecError> {
        let mut nested = Vec::with_capacity(codecs.len());
        for (position, codec) in codecs.into_iter().enumerate() {
            match codec {
                Codec::BytesToBytes(c) => nested.push(c),
                Codec::ArrayToArray(_) | Codec::ArrayToBytes(_) => {
                    return Err(invalid(format!(
                        "codec `{}` at position {position} of `codecs` is not bytes-to-bytes",
                        codec.name()
                    )));
                }
            }
        }
        if let Some(bits) = header_bits {
            if bits % 8 != 0 {
                return Err(invalid(format!(
                    "`header_bits` {bits} is not a multiple of 8"
                )));
            }
            if bits < nested.len() as u64 {
                return Err(invalid(format!(
                    "`header_bits` {bits} is fewer than the {} codecs",
                    nested.len()
                )));
            }
            if bits > MAX_HEADER_BITS {
                return Err(invalid(format!(
                    "`header_bits` {bits} is above the limit of {MAX_HEADER_BITS}"
                )));
            }
        } else if nested.len() as u64 > MAX_HEADER_BITS {
            return Err(invalid(format!(
                "{} codecs are more than the limit of {MAX_HEADER_BITS}",
                nested.len()
            )));
        }
        Ok(Self {
            codecs: nested,
            header_bits,
            decision: ConditionalDecision::NeverApply,
        })
    }

    /// The same codec deciding with `decision` when it encodes.
    #[must_use]
    pub fn with_decision(mut self, decision: ConditionalDecision) -> Self {
        self.decision = decision;
        self
    }

    /// The header's size in bytes (spec, "Codec Configuration").
    #[must_use]
    pub fn header_bytes(&self) -> usize {
        match self.header_bits {
            // At most MAX_HEADER_BITS / 8, which fits any usize.
            Some(bits) => usize::try_from(bits / 8).unwrap_or(usize::MAX),
            None => self.codecs.len().div_ceil(8),
        }
    }

    /// Whether to apply `codecs[index]` to `input`, and its encoding of
    /// `input` when that was computed to decide.
    fn decide(&self, index: usize, input: &[u8]) -> Result<(bool, Option<Vec<u8>>), CodecError> {
        let codec = &self.codecs[index];
        Ok(match &self.decision {
            ConditionalDecision::NeverApply => (false, None),
            ConditionalDecision::AlwaysApply => (true, None),
            ConditionalDecision::Mask(mask) => (index < 64 && mask >> index & 1 == 1, None),
            ConditionalDecision::CompressIfSmaller => {
                let trial = codec.encode(input.to_vec())?;
                (trial.len() < input.len(), Some(trial))
            }
            ConditionalDecision::Custom {
                decide,
                trial_encode,
            } => {
                let trial = if *trial_encode {
                    Some(codec.encode(input.to_vec())?)
                } else {
                    None
                };
                (
                    decide(index, codec.as_ref(), input, trial.as_deref()),
                    trial,
                )
            }
        })
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid,
/// naming the position in `codecs` of a nested codec that is unknown,
/// invalid or not bytes-to-bytes.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: ConditionalConfig = crate::codec::parse_configuration(metadata)?;
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
    Ok(Codec::BytesToBytes(Arc::new(ConditionalCodec::new(
        codecs,
        config.header_bits,
    )?)))
}

impl BytesToBytesCodec for ConditionalCodec {
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
        if let Some(bits) = self.header_bits {
            configuration.insert("header_bits".into(), bits.into());
        }
        ExtensionObject::with_configuration(NAME, configuration)
    }

    // Spec, "Encoding Process": apply the chosen codecs in order, then
    // prepend the mask with the reserved bits zero.
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>, CodecError> {
        let mut header = vec![0u8; self.header_bytes()];
        let mut data = decoded;
        for index in 0..self.codecs.len() {
            let (apply, trial) = self.decide(index, &data)?;
            if apply {
                data = match trial {
                    Some(encoded) => encoded,
                    None => self.codecs[index].encode(data)?,
                };
                header[index / 8] |= 1 << (index % 8);
            }
        }
        header.extend_from_slice(&data);
        Ok(header)
    }

    // Spec, "Decoding Process": read the mask, then undo the applied codecs
    // in reverse order.
    fn decode(&self, encoded: Vec<u8>, decoded_size: Option<usize>) -> Result<Vec<u8>, CodecError> {
        let header_len = self.header_bytes();
        if encoded.len() < header_len {
            return Err(corrupt(format!(
                "{} bytes are shorter than the {header_len}-byte header",
                encoded.len()
            )));
        }
        let applied = |index: usize| encoded[index / 8] >> (index % 8) & 1 == 1;
        if let Some(bit) = (self.codecs.len()..header_len * 8).find(|&i| applied(i)) {
            return Err(corrupt(format!(
                "header bit {bit} is set but there are only {} codecs",
                self.codecs.len()
            )));
        }
        let mask: Vec<bool> = (0..self.codecs.len()).map(applied).collect();
        // The size bound belongs to the codec whose output is the result,
        // the first applied one; each applied one further out gets it plus
        // an encoder's slack, as in a chain.
        let mut data = encoded[header_len..].to_vec();
        let mut steps_out = mask.iter().filter(|&&m| m).count();
        for (index, codec) in self.codecs.iter().enumerate().rev() {
            if mask[index] {
                steps_out -= 1;
                let bound = crate::codec::chain::outer_bound(decoded_size, steps_out);
                data = codec.decode(data, bound)?;
            }
        }
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn from_json(value: Value) -> Result<Codec, CodecError> {
        create(&extension_from_json(&value, "codec").unwrap())
    }

    /// A concrete codec from `{"name": "conditional", ...}` metadata, built
    /// the way [`create`] builds it.
    fn conditional(value: Value) -> ConditionalCodec {
        let metadata = extension_from_json(&value, "codec").unwrap();
        let config: ConditionalConfig = crate::codec::parse_configuration(&metadata).unwrap();
        let codecs = config
            .codecs
            .iter()
            .map(|v| codec_from_metadata(&extension_from_json(v, "codecs").unwrap()).unwrap())
            .collect();
        ConditionalCodec::new(codecs, config.header_bits).unwrap()
    }

    #[test]
    fn default_decision_stores_the_data_behind_a_zero_header() {
        let codec = conditional(json!({"name": "conditional", "configuration": {
            "codecs": [{"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}]}}));
        assert_eq!(codec.header_bytes(), 1);
        let encoded = codec.encode(vec![1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        assert_eq!(encoded, [0, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(
            codec.decode(encoded, Some(8)).unwrap(),
            [1, 2, 3, 4, 5, 6, 7, 8]
        );
    }

    #[test]
    fn mask_sets_the_header_bits_of_the_applied_codecs_least_significant_first() {
        let codec = conditional(json!({"name": "conditional", "configuration": {
            "codecs": [{"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}],
            "header_bits": 16}}))
        .with_decision(ConditionalDecision::Mask(0b1));
        let encoded = codec.encode(vec![1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        // Shuffled: the first bytes of each element, then the second bytes, ...
        assert_eq!(encoded, [1, 0, 1, 5, 2, 6, 3, 7, 4, 8]);
        assert_eq!(
            codec.decode(encoded, None).unwrap(),
            [1, 2, 3, 4, 5, 6, 7, 8]
        );
    }

    #[test]
    fn a_set_reserved_bit_is_corrupt_data_not_a_panic() {
        let codec = conditional(json!({"name": "conditional", "configuration": {
            "codecs": [{"name": "numcodecs.shuffle", "configuration": {"elementsize": 2}}]}}));
        let err = codec.decode(vec![0b10, 1, 2], None).unwrap_err();
        assert!(err.to_string().contains("header bit 1 is set"), "{err}");
        let err = codec.decode(vec![], None).unwrap_err();
        assert!(
            err.to_string().contains("shorter than the 1-byte header"),
            "{err}"
        );
    }

    #[test]
    fn decision_names_parse_and_unknown_ones_are_named_in_the_error() {
        assert!(matches!(
            "compress_if_smaller".parse::<ConditionalDecision>(),
            Ok(ConditionalDecision::CompressIfSmaller)
        ));
        let err = "smallest".parse::<ConditionalDecision>().unwrap_err();
        assert!(err.to_string().contains("`smallest`"), "{err}");
    }

    #[test]
    fn header_bits_must_be_a_bounded_multiple_of_eight_covering_the_codecs() {
        let shuffle = json!({"name": "numcodecs.shuffle", "configuration": {"elementsize": 2}});
        for (bits, why) in [
            (json!(4), "not a multiple of 8"),
            (json!(0), "fewer than the 1 codecs"),
            (json!(1u64 << 20), "above the limit"),
            (json!(-8), "-8"),
        ] {
            let err = from_json(json!({"name": "conditional", "configuration": {
                "codecs": [shuffle], "header_bits": bits}}))
            .unwrap_err();
            assert!(err.to_string().contains(why), "{why}: {err}");
            assert!(err.to_string().contains("`conditional`"), "{err}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_mask_round_trips_and_is_recorded_in_the_header(
            words in proptest::collection::vec(proptest::prelude::any::<u32>(), 0..128),
            mask in 0u64..4,
        ) {
            // Whole 4-byte elements, as the shuffle needs.
            let data: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
            let codec = conditional(json!({"name": "conditional", "configuration": {
                "codecs": [
                    {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
                    {"name": "numcodecs.zlib", "configuration": {"level": 1}}]}}))
            .with_decision(ConditionalDecision::Mask(mask));
            let encoded = codec.encode(data.clone()).unwrap();
            proptest::prop_assert_eq!(u64::from(encoded[0]), mask);
            proptest::prop_assert_eq!(codec.decode(encoded, Some(data.len())).unwrap(), data);
        }
    }
}
