//! The `bytes` array-to-bytes codec: elements in C order, little or big endian.
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/bytes/index.html>
//! Names: v3 `bytes` (zarr-python 3.0 betas wrote `endian`).
//!
//! ```
//! # use zarrkit::codec::bytes::BytesConfig;
//! let config: BytesConfig = serde_json::from_str(r#"{ "endian": "big" }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::ChunkData;
use crate::codec::CodecCapabilities;
use crate::codec::copy::BoxCopy;
use crate::codec::partial;
use crate::codec::{
    ArrayToBytesCodec, BytesRangeReader, ChunkBox, ChunkRepr, Codec, CodecError,
    parse_configuration,
};
use crate::metadata::{DataType, ExtensionObject, JsonMap};
use crate::store::ByteRange;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Byte order of multi-byte elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Endian {
    /// Least significant byte first.
    Little,
    /// Most significant byte first.
    Big,
}

impl Endian {
    /// The byte order of this machine.
    #[must_use]
    pub const fn native() -> Self {
        if cfg!(target_endian = "big") {
            Self::Big
        } else {
            Self::Little
        }
    }
}

/// The configuration of the `bytes` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BytesConfig {
    /// Required when the data type has more than one byte per element
    /// (v3 `bytes`, "Configuration parameters").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endian: Option<Endian>,
}

/// The `bytes` codec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BytesCodec {
    endian: Option<Endian>,
}

impl BytesCodec {
    /// A `bytes` codec with the given byte order (`None` only for 1-byte types).
    #[must_use]
    pub fn new(endian: Option<Endian>) -> Self {
        Self { endian }
    }

    /// A little-endian `bytes` codec, the usual choice.
    #[must_use]
    pub fn little() -> Self {
        Self::new(Some(Endian::Little))
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: BytesConfig = parse_configuration(metadata)?;
    Ok(Codec::ArrayToBytes(Arc::new(BytesCodec::new(
        config.endian,
    ))))
}

/// Reverses the bytes of each `unit`-sized group in place.
pub(crate) fn swap_bytes(data: &mut [u8], unit: usize) {
    match unit {
        0 | 1 => {}
        2 => data.chunks_exact_mut(2).for_each(|c| c.swap(0, 1)),
        4 => data.chunks_exact_mut(4).for_each(|c| {
            let v = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]).swap_bytes();
            c.copy_from_slice(&v.to_ne_bytes());
        }),
        8 => data.chunks_exact_mut(8).for_each(|c| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            c.copy_from_slice(&u64::from_ne_bytes(a).swap_bytes().to_ne_bytes());
        }),
        n => data.chunks_exact_mut(n).for_each(<[u8]>::reverse),
    }
}

/// Reverses the byte order of every multi-byte number in `data`, a whole
/// number of elements of `data_type` (per field for structs).
pub(crate) fn swap_element_bytes(data: &mut [u8], data_type: &DataType) {
    if let DataType::Struct(_) = data_type {
        let units = data_type.endian_units();
        let size = data_type.size();
        if units.is_empty() || size == 0 {
            return;
        }
        for element in data.chunks_exact_mut(size) {
            for &(offset, unit) in &units {
                element[offset..offset + unit].reverse();
            }
        }
    } else {
        swap_bytes(data, data_type.endian_unit());
    }
}

impl BytesCodec {
    /// The byte order to use for `repr`: the configured one, little-endian
    /// for a struct without one (extensions/data-types/structured,
    /// "Missing endian configuration": legacy `structured` arrays written
    /// by zarr-python have `{"name": "bytes"}` and MUST be read as
    /// little-endian), or an error for other multi-byte types.
    fn endian_for(&self, repr: &ChunkRepr) -> Result<Option<Endian>, CodecError> {
        match self.endian {
            Some(endian) => Ok(Some(endian)),
            None if matches!(repr.data_type, DataType::Struct(_)) => Ok(Some(Endian::Little)),
            None if repr.data_type.endian_unit() > 1 => Err(self.missing_endian(repr)),
            None => Ok(None),
        }
    }

    fn convert(&self, mut data: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        if self
            .endian_for(repr)?
            .is_some_and(|e| e != Endian::native())
        {
            swap_element_bytes(&mut data, &repr.data_type);
        }
        Ok(data)
    }

    fn missing_endian(&self, repr: &ChunkRepr) -> CodecError {
        CodecError::Incompatible {
            codec: "bytes",
            what: format!(
                "`{}` without `endian` (required for multi-byte data types)",
                repr.data_type
            ),
        }
    }
}

impl ArrayToBytesCodec for BytesCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        if let Some(endian) = self.endian {
            let value = match endian {
                Endian::Little => "little",
                Endian::Big => "big",
            };
            configuration.insert("endian".into(), value.into());
        }
        ExtensionObject::with_configuration("bytes", configuration)
    }

    fn validate(&self, repr: &ChunkRepr) -> Result<(), CodecError> {
        if repr.data_type.is_variable_length() {
            return Err(CodecError::Incompatible {
                codec: "bytes",
                what: format!(
                    "`{}`: it has no fixed size (use the `vlen-utf8` or `vlen-bytes` codec)",
                    repr.data_type
                ),
            });
        }
        self.endian_for(repr).map(drop)
    }

    crate::codec::fixed_array_to_bytes!("bytes");

    fn capabilities(&self) -> CodecCapabilities {
        CodecCapabilities {
            decodes_in_place: true,
            partial_decode: true,
            ..CodecCapabilities::default()
        }
    }

    fn encodes_as_is(&self, repr: &ChunkRepr) -> bool {
        !repr.data_type.is_variable_length()
            && self
                .endian_for(repr)
                .is_ok_and(|endian| endian.is_none_or(|e| e == Endian::native()))
    }

    fn decode_in_place(&self, data: &mut [u8], repr: &ChunkRepr) -> Result<(), CodecError> {
        self.endian_for(repr).map(|endian| {
            if endian.is_some_and(|e| e != Endian::native()) {
                swap_element_bytes(data, &repr.data_type);
            }
        })
    }

    /// Reads only the element runs of each box (runs closer than
    /// [`COALESCE_GAP`](crate::codec::partial::COALESCE_GAP) read as one range),
    /// all in one batch.
    fn decode_partial(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        boxes: &[ChunkBox],
    ) -> Result<Option<Vec<ChunkData<'static>>>, CodecError> {
        partial::check_boxes(repr, boxes)?;
        self.validate(repr)?;
        let elem = repr.data_type.size();
        let mut outs = boxes
            .iter()
            .map(|b| partial::box_size_bytes(b, elem).map(|n| vec![0u8; n]))
            .collect::<Result<Vec<_>, _>>()?;
        // (box, offset in the box's buffer, offset in the chunk, length)
        let mut runs: Vec<(usize, usize, u64, u64)> = Vec::new();
        for (i, b) in boxes.iter().enumerate() {
            BoxCopy {
                src_shape: &repr.shape,
                src_start: b.start(),
                dst_shape: b.shape(),
                dst_start: &vec![0; b.ndim()],
                shape: b.shape(),
                elem,
            }
            .for_each_run(|s, d, len| runs.push((i, d, s as u64, len as u64)));
        }
        let ranges: Vec<(u64, u64)> = runs.iter().map(|r| (r.2, r.3)).collect();
        let (merged, placement) = partial::coalesce(&ranges);
        let requests: Vec<ByteRange> = merged
            .iter()
            .map(|&(offset, length)| ByteRange::new(offset, length))
            .collect();
        let Some(values) = reader.read_ranges(&requests)? else {
            return Ok(None);
        };
        for (value, &(_, length)) in values.iter().zip(&merged) {
            if value.len() as u64 != length {
                return Err(CodecError::Corrupt {
                    codec: "bytes",
                    reason: format!("a read of {length} bytes returned {}", value.len()),
                });
            }
        }
        if values.len() != merged.len() {
            return Err(CodecError::Corrupt {
                codec: "bytes",
                reason: format!(
                    "{} ranges requested, {} returned",
                    merged.len(),
                    values.len()
                ),
            });
        }
        for ((i, d, _, len), (m, within)) in runs.into_iter().zip(placement) {
            let (within, len) = (within as usize, len as usize);
            outs[i][d..d + len].copy_from_slice(&values[m][within..within + len]);
        }
        if self
            .endian_for(repr)?
            .is_some_and(|e| e != Endian::native())
        {
            for out in &mut outs {
                swap_element_bytes(out, &repr.data_type);
            }
        }
        Ok(Some(outs.into_iter().map(ChunkData::from).collect()))
    }
}

impl BytesCodec {
    fn encode_bytes(&self, decoded: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        self.convert(decoded, repr)
    }
    fn decode_bytes(&self, encoded: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        let expected = repr.size_bytes()?;
        if encoded.len() != expected {
            return Err(CodecError::WrongSize {
                expected,
                actual: encoded.len(),
            });
        }
        self.convert(encoded, repr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{DataType, FillValue};

    fn repr(data_type: DataType, shape: &[u64]) -> ChunkRepr {
        ChunkRepr {
            shape: shape.to_vec(),
            fill_value: FillValue::zero(&data_type),
            data_type,
        }
    }

    #[test]
    fn big_endian_swaps_each_element_and_complex_swaps_each_component() {
        let codec = BytesCodec::new(Some(Endian::Big));
        let r = repr(DataType::UInt32, &[2]);
        let data: Vec<u8> = [1u32, 0x0102_0304]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let encoded = codec.encode(data.clone().into(), &r).unwrap();
        assert_eq!(encoded, vec![0, 0, 0, 1, 1, 2, 3, 4]);
        assert_eq!(codec.decode(encoded, &r).unwrap(), data);

        let r = repr(DataType::Complex64, &[1]);
        let data: Vec<u8> = [1.0f32, -2.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let encoded = codec.encode(data.into(), &r).unwrap();
        let mut expected = 1.0f32.to_be_bytes().to_vec();
        expected.extend((-2.0f32).to_be_bytes());
        assert_eq!(encoded, expected);
    }

    #[test]
    fn truncated_chunk_is_an_error() {
        let err = BytesCodec::little()
            .decode(vec![0; 7], &repr(DataType::UInt16, &[4]))
            .unwrap_err();
        assert_eq!(err.to_string(), "decoded to 7 bytes, expected 8");
    }

    #[test]
    fn endian_is_required_for_multi_byte_types_only() {
        let codec = BytesCodec::new(None);
        assert!(codec.validate(&repr(DataType::UInt8, &[4])).is_ok());
        assert!(codec.validate(&repr(DataType::RawBits(24), &[4])).is_ok());
        let err = codec.validate(&repr(DataType::Int16, &[4])).unwrap_err();
        assert!(err.to_string().contains("`int16` without `endian`"));
    }

    #[test]
    fn partial_decode_reads_only_the_runs_of_the_box() {
        use crate::codec::partial::SliceReader;
        use std::sync::Mutex;
        // A 4x8 big-endian uint16 chunk; the box is rows 1..3, columns 2..5.
        let codec = BytesCodec::new(Some(Endian::Big));
        let r = repr(DataType::UInt16, &[4, 8]);
        let values: Vec<u16> = (0..32).map(|v| v * 100).collect();
        let decoded: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let encoded = codec.encode(decoded.into(), &r).unwrap();
        let requested = Mutex::new(Vec::new());
        let reader = |ranges: &[ByteRange]| {
            requested.lock().unwrap().extend_from_slice(ranges);
            SliceReader(Some(&encoded)).read_ranges(ranges)
        };
        let b = ChunkBox::new(vec![1, 2], vec![2, 3]);
        let out = codec.decode_partial(&reader, &r, &[b]).unwrap().unwrap();
        let got: Vec<u16> = out[0]
            .as_fixed("test")
            .unwrap()
            .chunks_exact(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(got, vec![1000, 1100, 1200, 1800, 1900, 2000]);
        // Two runs 10 bytes apart coalesce into one range from (1, 2) to (2, 5).
        assert_eq!(*requested.lock().unwrap(), vec![ByteRange::new(20, 22)]);
        let outside = ChunkBox::new(vec![3, 0], vec![2, 1]);
        assert!(matches!(
            codec.decode_partial(&reader, &r, &[outside]),
            Err(CodecError::OutsideChunk { .. })
        ));
        assert!(
            codec
                .decode_partial(&SliceReader(None), &r, &[])
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn unknown_configuration_fields_are_rejected() {
        let mut config = JsonMap::new();
        config.insert("endianness".into(), "little".into());
        let err = create(&ExtensionObject::with_configuration("bytes", config)).unwrap_err();
        assert!(
            err.to_string().contains("unknown field `endianness`"),
            "{err}"
        );
    }
}
