//! The numcodecs 32-bit checksum codecs, bytes to bytes: `numcodecs.crc32`,
//! `numcodecs.adler32`, `numcodecs.fletcher32` and `numcodecs.jenkins_lookup3`.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/checksum32.html>
//! Names: v3 `numcodecs.<id>` (as zarr-python 3.1 writes them); v2 ids
//! `crc32`, `adler32`, `fletcher32`, `jenkins_lookup3` (as a compressor or
//! as the last filters).
//!
//! Each stores the checksum as 4 little-endian bytes: `crc32` (zlib's
//! CRC-32) and `adler32` before the data by default (`location` `"start"`
//! or `"end"`), `fletcher32` (HDF5's Fletcher-32 over big-endian 16-bit
//! words) and `jenkins_lookup3` (HDF5's lookup3 hash, seeded with
//! `initval`, over `prefix` then the data) after it. A mismatch on decode
//! is [`CodecError::ChecksumMismatch`].
//!
//! ```
//! # use zarrkit::codec::checksums::JenkinsLookup3Config;
//! let config: JenkinsLookup3Config = serde_json::from_str(r#"{ "initval": 0 }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::{BytesToBytesCodec, Codec, CodecError, parse_configuration};
use crate::metadata::{ExtensionObject, JsonMap};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The v3 name of the CRC-32 codec.
pub const CRC32_NAME: &str = "numcodecs.crc32";
/// The v3 name of the Adler-32 codec.
pub const ADLER32_NAME: &str = "numcodecs.adler32";
/// The v3 name of the Fletcher-32 codec.
pub const FLETCHER32_NAME: &str = "numcodecs.fletcher32";
/// The v3 name of the lookup3 codec.
pub const JENKINS_LOOKUP3_NAME: &str = "numcodecs.jenkins_lookup3";

/// Which checksum a [`ChecksumCodec`] computes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checksum {
    /// zlib's CRC-32.
    Crc32,
    /// zlib's Adler-32.
    Adler32,
    /// HDF5's Fletcher-32.
    Fletcher32,
    /// HDF5's lookup3 hash with a seed and bytes hashed before the data.
    JenkinsLookup3 {
        /// The seed.
        initval: u32,
        /// Bytes hashed before the data, if any.
        prefix: Option<Vec<u8>>,
    },
}

/// Where the checksum goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Location {
    /// Before the data.
    Start,
    /// After the data.
    End,
}

/// The configuration of `numcodecs.crc32` and `numcodecs.adler32`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocationConfig {
    /// Where the checksum goes; absent means `"start"`.
    #[serde(default)]
    pub location: Option<Location>,
}

/// The configuration of `numcodecs.fletcher32` (it has none).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fletcher32Config {}

/// The configuration of `numcodecs.jenkins_lookup3`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JenkinsLookup3Config {
    /// The seed; absent means 0.
    #[serde(default)]
    pub initval: u32,
    /// Bytes hashed before the data, as a list of byte values; absent or
    /// `null` means none. (numcodecs keeps it as a NumPy array, which it
    /// cannot write to JSON, so no writer stores one.)
    #[serde(default)]
    pub prefix: Option<Vec<u8>>,
}

/// A numcodecs checksum codec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChecksumCodec {
    checksum: Checksum,
    location: Location,
}

impl ChecksumCodec {
    /// A codec computing `checksum`, stored at `location`.
    #[must_use]
    pub fn new(checksum: Checksum, location: Location) -> Self {
        Self { checksum, location }
    }

    fn name(&self) -> &'static str {
        match self.checksum {
            Checksum::Crc32 => CRC32_NAME,
            Checksum::Adler32 => ADLER32_NAME,
            Checksum::Fletcher32 => FLETCHER32_NAME,
            Checksum::JenkinsLookup3 { .. } => JENKINS_LOOKUP3_NAME,
        }
    }

    fn compute(&self, data: &[u8]) -> u32 {
        match &self.checksum {
            Checksum::Crc32 => crc32(data),
            Checksum::Adler32 => adler32(data),
            Checksum::Fletcher32 => fletcher32(data),
            Checksum::JenkinsLookup3 { initval, prefix } => match prefix {
                None => lookup3(data, *initval),
                Some(prefix) => {
                    let mut all = prefix.clone();
                    all.extend_from_slice(data);
                    lookup3(&all, *initval)
                }
            },
        }
    }
}

/// Builds `numcodecs.crc32` from its metadata.
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create_crc32(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: LocationConfig = parse_configuration(metadata)?;
    let location = config.location.unwrap_or(Location::Start);
    Ok(Codec::BytesToBytes(Arc::new(ChecksumCodec::new(
        Checksum::Crc32,
        location,
    ))))
}

/// Builds `numcodecs.adler32` from its metadata.
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create_adler32(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: LocationConfig = parse_configuration(metadata)?;
    let location = config.location.unwrap_or(Location::Start);
    Ok(Codec::BytesToBytes(Arc::new(ChecksumCodec::new(
        Checksum::Adler32,
        location,
    ))))
}

/// Builds `numcodecs.fletcher32` from its metadata.
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration has options.
pub fn create_fletcher32(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let _: Fletcher32Config = parse_configuration(metadata)?;
    Ok(Codec::BytesToBytes(Arc::new(ChecksumCodec::new(
        Checksum::Fletcher32,
        Location::End,
    ))))
}

/// Builds `numcodecs.jenkins_lookup3` from its metadata.
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create_jenkins_lookup3(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: JenkinsLookup3Config = parse_configuration(metadata)?;
    Ok(Codec::BytesToBytes(Arc::new(ChecksumCodec::new(
        Checksum::JenkinsLookup3 {
            initval: config.initval,
            prefix: config.prefix,
        },
        Location::End,
    ))))
}

impl BytesToBytesCodec for ChecksumCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        match &self.checksum {
            Checksum::Crc32 | Checksum::Adler32 => {
                // As numcodecs writes it: `location` only when not the default.
                if self.location == Location::End {
                    configuration.insert("location".into(), "end".into());
                }
            }
            Checksum::Fletcher32 => {}
            Checksum::JenkinsLookup3 { initval, prefix } => {
                configuration.insert("initval".into(), (*initval).into());
                configuration.insert(
                    "prefix".into(),
                    prefix
                        .as_ref()
                        .map_or(serde_json::Value::Null, |p| p.clone().into()),
                );
            }
        }
        ExtensionObject::with_configuration(self.name(), configuration)
    }

    fn encode(&self, mut decoded: Vec<u8>) -> Result<Vec<u8>, CodecError> {
        let checksum = self.compute(&decoded).to_le_bytes();
        match self.location {
            Location::End => decoded.extend_from_slice(&checksum),
            Location::Start => {
                decoded.splice(0..0, checksum);
            }
        }
        Ok(decoded)
    }

    fn decode(
        &self,
        mut encoded: Vec<u8>,
        _decoded_size: Option<usize>,
    ) -> Result<Vec<u8>, CodecError> {
        if encoded.len() < 4 {
            return Err(CodecError::Corrupt {
                codec: self.name(),
                reason: format!("{} bytes cannot hold a 4-byte checksum", encoded.len()),
            });
        }
        let (stored, payload) = match self.location {
            Location::Start => {
                let (head, rest) = encoded.split_at(4);
                (head, rest)
            }
            Location::End => {
                let (rest, tail) = encoded.split_at(encoded.len() - 4);
                (tail, rest)
            }
        };
        let stored = u32::from_le_bytes([stored[0], stored[1], stored[2], stored[3]]);
        let computed = self.compute(payload);
        if stored != computed {
            return Err(CodecError::ChecksumMismatch {
                codec: self.name(),
                stored,
                computed,
            });
        }
        match self.location {
            Location::Start => {
                encoded.drain(..4);
            }
            Location::End => encoded.truncate(encoded.len() - 4),
        }
        Ok(encoded)
    }
}

/// zlib's CRC-32 (reflected polynomial 0xEDB88320).
#[must_use]
pub fn crc32(data: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            table[i] = c;
            i += 1;
        }
        table
    };
    !data.iter().fold(!0u32, |c, &b| {
        TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8)
    })
}

/// zlib's Adler-32.
#[must_use]
pub fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    for block in data.chunks(5552) {
        for &byte in block {
            a += u32::from(byte);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// HDF5's Fletcher-32: sums of big-endian 16-bit words (an odd last byte
/// is the high byte of a word), folded modulo 65535.
#[must_use]
pub fn fletcher32(data: &[u8]) -> u32 {
    let (mut sum1, mut sum2) = (0u32, 0u32);
    let mut words = data.chunks_exact(2);
    let blocks: Vec<&[u8]> = words.by_ref().collect();
    for block in blocks.chunks(360) {
        for word in block {
            sum1 += (u32::from(word[0]) << 8) | u32::from(word[1]);
            sum2 += sum1;
        }
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    if let [last] = words.remainder() {
        sum1 += u32::from(*last) << 8;
        sum2 += sum1;
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    (sum2 << 16) | sum1
}

/// Bob Jenkins' lookup3 `hashlittle` over bytes, as HDF5 computes it.
#[must_use]
pub fn lookup3(data: &[u8], initval: u32) -> u32 {
    fn word(k: &[u8]) -> u32 {
        k.iter().enumerate().fold(0u32, |acc, (i, &b)| {
            acc.wrapping_add(u32::from(b) << (8 * i))
        })
    }
    let seed = 0xdead_beef_u32
        .wrapping_add(data.len() as u32)
        .wrapping_add(initval);
    let (mut a, mut b, mut c) = (seed, seed, seed);
    let mut rest = data;
    while rest.len() > 12 {
        a = a.wrapping_add(word(&rest[0..4]));
        b = b.wrapping_add(word(&rest[4..8]));
        c = c.wrapping_add(word(&rest[8..12]));
        // mix(a, b, c)
        a = a.wrapping_sub(c);
        a ^= c.rotate_left(4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= a.rotate_left(6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= b.rotate_left(8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c);
        a ^= c.rotate_left(16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= a.rotate_left(19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= b.rotate_left(4);
        b = b.wrapping_add(a);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        return c;
    }
    a = a.wrapping_add(word(&rest[..rest.len().min(4)]));
    if rest.len() > 4 {
        b = b.wrapping_add(word(&rest[4..rest.len().min(8)]));
    }
    if rest.len() > 8 {
        c = c.wrapping_add(word(&rest[8..]));
    }
    // final(a, b, c)
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(24));
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn codec(
        create: fn(&ExtensionObject) -> Result<Codec, CodecError>,
        config: &str,
    ) -> Arc<dyn BytesToBytesCodec> {
        let config: JsonMap = serde_json::from_str(config).unwrap();
        match create(&ExtensionObject::with_configuration("x", config)).unwrap() {
            Codec::BytesToBytes(c) => c,
            _ => panic!("checksums are bytes-to-bytes"),
        }
    }

    #[test]
    fn encodings_of_0_to_9_match_numcodecs() {
        // numcodecs 0.16.6, encode(bytes(range(10))).
        let data: Vec<u8> = (0..10).collect();
        for (create, config, expected) in [
            (
                create_fletcher32 as fn(&ExtensionObject) -> _,
                "{}",
                "0001020304050607080919143728",
            ),
            (create_crc32, "{}", "46d76c4500010203040506070809"),
            (create_adler32, "{}", "2e00af0000010203040506070809"),
            (create_jenkins_lookup3, "{}", "00010203040506070809e3c10f61"),
            (
                create_jenkins_lookup3,
                r#"{"initval": 7, "prefix": [120, 121]}"#,
                "00010203040506070809eeeea5c0",
            ),
        ] {
            let c = codec(create, config);
            let encoded = c.encode(data.clone()).unwrap();
            assert_eq!(hex(&encoded), expected, "{config}");
            assert_eq!(c.decode(encoded, None).unwrap(), data);
        }
    }

    #[test]
    fn known_checksums_of_standard_inputs() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(lookup3(b"", 0), 0xdead_beef);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn corrupt_and_short_inputs_are_errors() {
        for create in [
            create_crc32,
            create_adler32,
            create_fletcher32,
            create_jenkins_lookup3,
        ] {
            let c = codec(create, "{}");
            let mut encoded = c.encode(vec![1, 2, 3, 4, 5]).unwrap();
            for len in 0..4 {
                assert!(c.decode(encoded[..len].to_vec(), None).is_err());
            }
            encoded[4] ^= 0x10;
            let err = c.decode(encoded, None).unwrap_err();
            assert!(matches!(err, CodecError::ChecksumMismatch { .. }), "{err}");
        }
        let config: JsonMap = serde_json::from_str(r#"{"location": "middle"}"#).unwrap();
        assert!(create_crc32(&ExtensionObject::with_configuration(CRC32_NAME, config)).is_err());
    }

    proptest! {
        #[test]
        fn checksums_round_trip(data in prop::collection::vec(any::<u8>(), 0..2000), end in any::<bool>()) {
            let location = if end { Location::End } else { Location::Start };
            for checksum in [Checksum::Crc32, Checksum::Adler32, Checksum::Fletcher32, Checksum::JenkinsLookup3 { initval: 3, prefix: None }] {
                let c = ChecksumCodec::new(checksum, location);
                prop_assert_eq!(c.decode(c.encode(data.clone())?, None)?, data.clone());
            }
        }
    }
}
