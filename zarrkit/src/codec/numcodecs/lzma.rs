//! The `numcodecs.lzma` bytes-to-bytes codec: xz, legacy `.lzma` ("alone")
//! or raw LZMA streams with optional custom filter chains, as numcodecs'
//! `LZMA` (which calls Python's `lzma` module).
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/compression/lzma.html>
//! Names: v3 `numcodecs.lzma` (as zarr-python 3.1 writes it); v2 compressor id `lzma`.
//!
//! ```
//! # use zarrkit::codec::lzma::LzmaConfig;
//! let config: LzmaConfig = serde_json::from_str(
//!     r#"{ "format": 3, "check": -1, "preset": null,
//!          "filters": [{"id": 3, "dist": 4}, {"id": 33, "preset": 1}] }"#,
//! )?;
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! The configuration has Python's `lzma` meanings: `format` 1 (xz), 2
//! (alone) or 3 (raw); `check` -1 (the format's default: CRC-64 for xz,
//! none otherwise), 0 (none), 1 (CRC-32), 4 (CRC-64) or 10 (SHA-256);
//! `preset` 0 to 9, optionally or-ed with `0x80000000` (extreme), null for
//! 6; `filters` null or a list of filter specifications, each an object
//! with an `id` (`0x4000000000000001` LZMA1, 33 LZMA2, 3 delta, 4 x86,
//! 5 PowerPC, 6 IA-64, 7 ARM, 8 ARM-Thumb, 9 SPARC) and that filter's
//! options (`preset`, `dict_size`, `lc`, `lp`, `pb`, `mode`, `nice_len`,
//! `mf`, `depth` for LZMA; `dist` for delta; `start_offset` for the
//! branch-call-jump filters).

use crate::codec::bounded::read_bounded;
use crate::codec::{BytesToBytesCodec, Codec, CodecError, parse_configuration};
use crate::metadata::{ExtensionObject, JsonMap};
use liblzma::stream::{Check, Filters, LzmaOptions, MatchFinder, Mode, Stream};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::Write;
use std::sync::Arc;

/// The codec's name in v3 metadata.
pub const NAME: &str = "numcodecs.lzma";

/// Python's `lzma.FORMAT_XZ`.
pub const FORMAT_XZ: i32 = 1;
/// Python's `lzma.FORMAT_ALONE`.
pub const FORMAT_ALONE: i32 = 2;
/// Python's `lzma.FORMAT_RAW`.
pub const FORMAT_RAW: i32 = 3;

const FILTER_LZMA1: u64 = 0x4000_0000_0000_0001;
const FILTER_LZMA2: u64 = 0x21;
const FILTER_DELTA: u64 = 0x03;
const FILTER_X86: u64 = 0x04;
const FILTER_POWERPC: u64 = 0x05;
const FILTER_IA64: u64 = 0x06;
const FILTER_ARM: u64 = 0x07;
const FILTER_ARMTHUMB: u64 = 0x08;
const FILTER_SPARC: u64 = 0x09;

/// liblzma's default preset (Python's `lzma.PRESET_DEFAULT`).
const PRESET_DEFAULT: u32 = 6;
/// Python's `lzma.PRESET_EXTREME` flag.
const PRESET_EXTREME: u32 = 0x8000_0000;

/// The decoder's memory limit: above any preset's needs (preset 9 uses 674
/// MiB to encode and 65 MiB to decode), below what a forged header may ask.
const MEMLIMIT: u64 = 1 << 30;

/// The configuration of the `numcodecs.lzma` codec (numcodecs' names and defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LzmaConfig {
    /// The container: 1 xz, 2 alone, 3 raw.
    #[serde(default = "default_format")]
    pub format: i32,
    /// The integrity check (-1 for the format's default).
    #[serde(default = "default_check")]
    pub check: i32,
    /// The compression preset, or `None` for the default (6).
    #[serde(default)]
    pub preset: Option<u32>,
    /// A custom filter chain, or `None` for the preset's.
    #[serde(default)]
    pub filters: Option<Vec<JsonMap>>,
}

fn default_format() -> i32 {
    FORMAT_XZ
}

fn default_check() -> i32 {
    -1
}

/// The `numcodecs.lzma` codec.
#[derive(Clone, Debug, PartialEq)]
pub struct LzmaCodec {
    config: LzmaConfig,
}

fn invalid(reason: String) -> CodecError {
    CodecError::InvalidConfiguration {
        codec: NAME.to_string(),
        reason,
    }
}

impl LzmaCodec {
    /// A codec with this configuration, checked as Python's `lzma` checks it.
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] naming the option at fault: an
    /// unknown format or check, a check other than none with alone or raw,
    /// both a preset and filters, raw without filters, alone with anything
    /// but one LZMA1 filter, or an invalid filter specification.
    pub fn new(config: LzmaConfig) -> Result<Self, CodecError> {
        if !(FORMAT_XZ..=FORMAT_RAW).contains(&config.format) {
            return Err(invalid(format!(
                "`format` is {}, expected 1 (xz), 2 (alone) or 3 (raw)",
                config.format
            )));
        }
        if ![-1, 0, 1, 4, 10].contains(&config.check) {
            return Err(invalid(format!(
                "`check` is {}, expected -1, 0, 1, 4 or 10",
                config.check
            )));
        }
        if config.format != FORMAT_XZ && ![-1, 0].contains(&config.check) {
            return Err(invalid(format!(
                "`check` is {}, but only xz streams carry an integrity check",
                config.check
            )));
        }
        if let Some(preset) = config.preset {
            if preset & !PRESET_EXTREME > 9 {
                return Err(invalid(format!("`preset` is {preset}, expected 0 to 9")));
            }
            if config.filters.is_some() {
                return Err(invalid(
                    "`preset` and `filters` are both set (Python's lzma takes one)".to_string(),
                ));
            }
        }
        let codec = Self { config };
        match (codec.config.format, &codec.config.filters) {
            (FORMAT_RAW, None) => {
                return Err(invalid(
                    "`format` 3 (raw) needs `filters`: a raw stream does not record them"
                        .to_string(),
                ));
            }
            (FORMAT_ALONE, Some(filters)) => {
                if filters.len() != 1 || filter_id(&filters[0], 0)? != FILTER_LZMA1 {
                    return Err(invalid(
                        "`format` 2 (alone) takes exactly one LZMA1 filter".to_string(),
                    ));
                }
                lzma_options(&filters[0], 0)?;
            }
            (_, Some(_)) => {
                codec.filters()?;
            }
            _ => {}
        }
        Ok(codec)
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &LzmaConfig {
        &self.config
    }

    fn preset(&self) -> u32 {
        self.config.preset.unwrap_or(PRESET_DEFAULT)
    }

    fn check(&self) -> Check {
        match self.config.check {
            0 => Check::None,
            1 => Check::Crc32,
            10 => Check::Sha256,
            _ => Check::Crc64,
        }
    }

    fn filters(&self) -> Result<Filters, CodecError> {
        let mut filters = Filters::new();
        for (i, spec) in self.config.filters.iter().flatten().enumerate() {
            let id = filter_id(spec, i)?;
            let library = |e: liblzma::stream::Error| invalid(format!("`filters[{i}]`: {e}"));
            match id {
                FILTER_LZMA1 => {
                    filters.lzma1(&lzma_options(spec, i)?);
                }
                FILTER_LZMA2 => {
                    filters.lzma2(&lzma_options(spec, i)?);
                }
                FILTER_DELTA => {
                    check_keys(spec, i, &["id", "dist"])?;
                    let dist = match spec.get("dist") {
                        None => 1,
                        Some(value) => option_u32(spec, i, "dist", value)?,
                    };
                    // liblzma's delta properties: one byte, the distance minus 1.
                    let property = u8::try_from(dist.wrapping_sub(1))
                        .ok()
                        .filter(|_| dist >= 1)
                        .ok_or_else(|| {
                            invalid(format!("`filters[{i}].dist` is {dist}, expected 1 to 256"))
                        })?;
                    filters.delta_properties(&[property]).map_err(library)?;
                }
                FILTER_X86 | FILTER_POWERPC | FILTER_IA64 | FILTER_ARM | FILTER_ARMTHUMB
                | FILTER_SPARC => {
                    check_keys(spec, i, &["id", "start_offset"])?;
                    let offset = match spec.get("start_offset") {
                        None => 0,
                        Some(value) => option_u32(spec, i, "start_offset", value)?,
                    };
                    // BCJ properties: empty, or the start offset as 4 little-endian bytes.
                    let properties: &[u8] = &offset.to_le_bytes();
                    let properties = if offset == 0 { &[][..] } else { properties };
                    match id {
                        FILTER_X86 => filters.x86_properties(properties),
                        FILTER_POWERPC => filters.powerpc_properties(properties),
                        FILTER_IA64 => filters.ia64_properties(properties),
                        FILTER_ARM => filters.arm_properties(properties),
                        FILTER_ARMTHUMB => filters.arm_thumb_properties(properties),
                        _ => filters.sparc_properties(properties),
                    }
                    .map_err(library)?;
                }
                other => {
                    return Err(invalid(format!(
                        "`filters[{i}].id` {other} is not a filter this codec supports"
                    )));
                }
            }
        }
        Ok(filters)
    }

    fn encoder(&self) -> Result<Stream, CodecError> {
        let library = |e: liblzma::stream::Error| invalid(e.to_string());
        match (self.config.format, &self.config.filters) {
            (FORMAT_XZ, None) => Stream::new_easy_encoder(self.preset(), self.check()),
            (FORMAT_XZ, Some(_)) => Stream::new_stream_encoder(&self.filters()?, self.check()),
            (FORMAT_ALONE, None) => {
                Stream::new_lzma_encoder(&LzmaOptions::new_preset(self.preset()).map_err(library)?)
            }
            (FORMAT_ALONE, Some(filters)) => {
                Stream::new_lzma_encoder(&lzma_options(&filters[0], 0)?)
            }
            _ => Stream::new_raw_encoder(&self.filters()?),
        }
        .map_err(library)
    }

    fn decoder(&self) -> Result<Stream, CodecError> {
        let library = |e: liblzma::stream::Error| invalid(e.to_string());
        match self.config.format {
            // Python's `lzma.decompress` reads concatenated xz streams as one.
            FORMAT_XZ => Stream::new_stream_decoder(MEMLIMIT, liblzma::stream::CONCATENATED),
            FORMAT_ALONE => Stream::new_lzma_decoder(MEMLIMIT),
            _ => Stream::new_raw_decoder(&self.filters()?),
        }
        .map_err(library)
    }
}

fn filter_id(spec: &JsonMap, i: usize) -> Result<u64, CodecError> {
    spec.get("id")
        .and_then(Value::as_u64)
        .ok_or_else(|| invalid(format!("`filters[{i}]` has no integer `id`")))
}

fn check_keys(spec: &JsonMap, i: usize, allowed: &[&str]) -> Result<(), CodecError> {
    match spec.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(invalid(format!(
            "`filters[{i}].{key}` is not an option of this filter"
        ))),
        None => Ok(()),
    }
}

fn option_u32(_spec: &JsonMap, i: usize, key: &str, value: &Value) -> Result<u32, CodecError> {
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            invalid(format!(
                "`filters[{i}].{key}` is `{value}`, expected an integer"
            ))
        })
}

/// The LZMA1/LZMA2 options of a filter specification, as Python's `lzma`
/// builds them: the preset's options, then each option given.
fn lzma_options(spec: &JsonMap, i: usize) -> Result<LzmaOptions, CodecError> {
    check_keys(
        spec,
        i,
        &[
            "id",
            "preset",
            "dict_size",
            "lc",
            "lp",
            "pb",
            "mode",
            "nice_len",
            "mf",
            "depth",
        ],
    )?;
    let get = |key: &str| -> Result<Option<u32>, CodecError> {
        spec.get(key)
            .map(|value| option_u32(spec, i, key, value))
            .transpose()
    };
    let preset = get("preset")?.unwrap_or(PRESET_DEFAULT);
    let mut options = LzmaOptions::new_preset(preset).map_err(|_| {
        invalid(format!(
            "`filters[{i}].preset` is {preset}, expected 0 to 9"
        ))
    })?;
    if let Some(n) = get("dict_size")? {
        options.dict_size(n);
    }
    if let Some(n) = get("lc")? {
        options.literal_context_bits(n);
    }
    if let Some(n) = get("lp")? {
        options.literal_position_bits(n);
    }
    if let Some(n) = get("pb")? {
        options.position_bits(n);
    }
    if let Some(n) = get("mode")? {
        options.mode(match n {
            1 => Mode::Fast,
            2 => Mode::Normal,
            _ => {
                return Err(invalid(format!(
                    "`filters[{i}].mode` is {n}, expected 1 or 2"
                )));
            }
        });
    }
    if let Some(n) = get("nice_len")? {
        options.nice_len(n);
    }
    if let Some(n) = get("mf")? {
        options.match_finder(match n {
            0x03 => MatchFinder::HashChain3,
            0x04 => MatchFinder::HashChain4,
            0x12 => MatchFinder::BinaryTree2,
            0x13 => MatchFinder::BinaryTree3,
            0x14 => MatchFinder::BinaryTree4,
            _ => {
                return Err(invalid(format!(
                    "`filters[{i}].mf` is {n}, not a match finder"
                )));
            }
        });
    }
    if let Some(n) = get("depth")? {
        options.depth(n);
    }
    Ok(options)
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: LzmaConfig = parse_configuration(metadata)?;
    Ok(Codec::BytesToBytes(Arc::new(LzmaCodec::new(config)?)))
}

fn library_error(source: std::io::Error) -> CodecError {
    match source.kind() {
        std::io::ErrorKind::InvalidInput
        | std::io::ErrorKind::InvalidData
        | std::io::ErrorKind::UnexpectedEof
        | std::io::ErrorKind::Other => CodecError::Corrupt {
            codec: NAME,
            reason: source.to_string(),
        },
        _ => CodecError::Library {
            codec: NAME,
            source,
        },
    }
}

impl BytesToBytesCodec for LzmaCodec {
    fn metadata(&self) -> ExtensionObject {
        // As zarr-python 3.1 writes it: the options that are not null.
        let mut configuration = JsonMap::new();
        configuration.insert("format".into(), self.config.format.into());
        configuration.insert("check".into(), self.config.check.into());
        if let Some(preset) = self.config.preset {
            configuration.insert("preset".into(), preset.into());
        }
        if let Some(filters) = &self.config.filters {
            configuration.insert(
                "filters".into(),
                Value::Array(filters.iter().cloned().map(Value::Object).collect()),
            );
        }
        ExtensionObject::with_configuration(NAME, configuration)
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>, CodecError> {
        let output = Vec::with_capacity(decoded.len() / 2 + 64);
        let mut encoder = liblzma::write::XzEncoder::new_stream(output, self.encoder()?);
        encoder.write_all(&decoded).map_err(library_error)?;
        encoder.finish().map_err(library_error)
    }

    fn decode(&self, encoded: Vec<u8>, decoded_size: Option<usize>) -> Result<Vec<u8>, CodecError> {
        if encoded.is_empty() {
            return Err(CodecError::Corrupt {
                codec: NAME,
                reason: "the data is empty".to_string(),
            });
        }
        let decoder = liblzma::read::XzDecoder::new_stream(encoded.as_slice(), self.decoder()?);
        read_bounded(decoder, decoded_size, NAME, library_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn sample(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (i % 251) as u8 ^ (i / 700) as u8)
            .collect()
    }

    fn codec(config: Value) -> Result<LzmaCodec, CodecError> {
        let Value::Object(config) = config else {
            panic!("an object")
        };
        let Codec::BytesToBytes(_) =
            create(&ExtensionObject::with_configuration(NAME, config.clone()))?
        else {
            panic!("lzma is bytes-to-bytes");
        };
        LzmaCodec::new(serde_json::from_value(Value::Object(config)).unwrap())
    }

    #[test]
    fn each_format_writes_its_container() {
        let data = sample(10_000);
        let xz = codec(json!({})).unwrap().encode(data.clone()).unwrap();
        assert_eq!(xz[..6], [0xfd, b'7', b'z', b'X', b'Z', 0]);
        // Stream flags byte 2: the check id, CRC-64 (4) by default.
        assert_eq!(xz[7], 4);
        let sha = codec(json!({"check": 10}))
            .unwrap()
            .encode(data.clone())
            .unwrap();
        assert_eq!(sha[7], 10);
        let alone = codec(json!({"format": 2, "preset": 1})).unwrap();
        let encoded = alone.encode(data.clone()).unwrap();
        // The .lzma header: properties byte 0x5d (lc 3, lp 0, pb 2).
        assert_eq!(encoded[0], 0x5d);
        assert_eq!(alone.decode(encoded, Some(data.len())).unwrap(), data);
        let raw =
            codec(json!({"format": 3, "filters": [{"id": 3, "dist": 4}, {"id": 33, "preset": 1}]}))
                .unwrap();
        let encoded = raw.encode(data.clone()).unwrap();
        assert_ne!(encoded[..6], xz[..6]);
        assert_eq!(raw.decode(encoded, Some(data.len())).unwrap(), data);
    }

    #[test]
    fn invalid_configurations_name_the_option() {
        for (config, needle) in [
            (json!({"format": 4}), "`format` is 4"),
            (json!({"check": 2}), "`check` is 2"),
            (json!({"format": 2, "check": 4}), "only xz streams"),
            (json!({"preset": 10}), "`preset` is 10"),
            (json!({"format": 3}), "needs `filters`"),
            (json!({"preset": 1, "filters": [{"id": 33}]}), "both set"),
            (
                json!({"format": 2, "filters": [{"id": 33}]}),
                "exactly one LZMA1",
            ),
            (
                json!({"filters": [{"id": 33, "bogus": 1}]}),
                "`filters[0].bogus`",
            ),
            (
                json!({"filters": [{"dist": 1}]}),
                "`filters[0]` has no integer `id`",
            ),
            (
                json!({"filters": [{"id": 3, "dist": 0}, {"id": 33}]}),
                "`filters[0].dist` is 0",
            ),
            (json!({"filters": [{"id": 99}]}), "`filters[0].id` 99"),
            (
                json!({"filters": [{"id": 33, "mf": 7}]}),
                "`filters[0].mf` is 7",
            ),
        ] {
            let err = codec(config.clone()).unwrap_err();
            assert!(err.to_string().contains(needle), "{config}: {err}");
            assert!(
                err.to_string().contains("`numcodecs.lzma`"),
                "{config}: {err}"
            );
        }
    }

    #[test]
    fn metadata_keeps_non_null_options() {
        let c = codec(json!({"format": 1, "check": -1, "preset": null, "filters": null})).unwrap();
        assert_eq!(
            Value::Object(c.metadata().configuration_or_empty()),
            json!({"format": 1, "check": -1})
        );
        let c = codec(json!({"preset": 9})).unwrap();
        assert_eq!(
            Value::Object(c.metadata().configuration_or_empty()),
            json!({"format": 1, "check": -1, "preset": 9})
        );
    }

    #[test]
    fn corrupt_truncated_and_oversized_inputs_are_errors() {
        let c = codec(json!({})).unwrap();
        let encoded = c.encode(sample(5000)).unwrap();
        for len in [0, 1, 6, encoded.len() / 2, encoded.len() - 1] {
            assert!(c.decode(encoded[..len].to_vec(), None).is_err(), "{len}");
        }
        let mut corrupt = encoded.clone();
        let middle = corrupt.len() / 2;
        corrupt[middle] ^= 0x55;
        assert!(c.decode(corrupt, None).is_err());
        assert!(c.decode(encoded, Some(10)).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn lzma_round_trips(data in prop::collection::vec(any::<u8>(), 0..2048), format in 1i32..=3) {
            let c = match format {
                1 => codec(json!({"preset": 1}))?,
                2 => codec(json!({"format": 2, "preset": 0}))?,
                _ => codec(json!({"format": 3, "filters": [{"id": 3, "dist": 2}, {"id": 33, "preset": 0}]}))?,
            };
            let decoded = c.decode(c.encode(data.clone())?, Some(data.len()))?;
            prop_assert_eq!(decoded, data);
        }

        #[test]
        fn lzma_decode_of_garbage_does_not_panic(data in prop::collection::vec(any::<u8>(), 0..256)) {
            let _ = codec(json!({}))?.decode(data.clone(), Some(100));
            let _ = codec(json!({"format": 2}))?.decode(data, Some(100));
        }
    }
}
