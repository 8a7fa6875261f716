//! The `zstd` bytes-to-bytes codec: Zstandard frames (RFC 8878).
//!
//! Spec: <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/zstd>
//! Names: v3 `zstd`; v2 compressor id `zstd`.
//!
//! A read of part of a chunk decodes it only up to the last byte the read
//! needs, a block at a time ([`BytesToBytesCodec::decode_ranges`]); a
//! whole chunk is decoded in one call, straight into the caller's buffer.
//!
//! ```
//! # use zarrkit::codec::zstd::ZstdConfig;
//! let config: ZstdConfig = serde_json::from_str(r#"{ "level": 1, "checksum": true }"#)?;
//! # Ok::<(), serde_json::Error>(())
//! ```

use crate::codec::{BytesToBytesCodec, Codec, CodecError, parse_configuration, partial};
use crate::metadata::{ExtensionObject, JsonMap};
use crate::store::buffers::BUFFERS;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::io::Read;
use std::sync::Arc;
use zstd::bulk::{Compressor, Decompressor};
use zstd::zstd_safe::{CParameter, DCtx, InBuffer, OutBuffer, ResetDirective};

/// The largest output allocated up front from the sizes the frames record;
/// a larger claim is decoded as a stream, so a forged header cannot reserve
/// much memory.
const MAX_PREALLOCATION: usize = 256 << 20;

/// Without a bound from the chain (variable-length chunks), the largest
/// ratio of recorded content size to compressed size that is allocated up
/// front; a frame claiming more decodes as a stream, growing with what it
/// really holds.
const UNBOUNDED_RATIO: u64 = 1024;

fn too_long(bound: usize) -> CodecError {
    CodecError::Corrupt {
        codec: "zstd",
        reason: format!("the data decodes to more than the expected {bound} bytes"),
    }
}

/// The range of levels the extension's schema allows.
const LEVELS: std::ops::RangeInclusive<i32> = -131_072..=22;

/// The configuration of the `zstd` codec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZstdConfig {
    /// The compression level, -131072 to 22; 0 means zstd's default.
    pub level: i32,
    /// Whether frames carry a content checksum. Optional in the extension;
    /// absent means `false`.
    #[serde(default)]
    pub checksum: bool,
}

/// The `zstd` codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZstdCodec {
    level: i32,
    checksum: bool,
}

impl ZstdCodec {
    /// A `zstd` codec compressing at `level` (0 for zstd's default), storing a
    /// content checksum in each frame if `checksum`.
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if `level` is outside -131072 to 22.
    pub fn new(level: i32, checksum: bool) -> Result<Self, CodecError> {
        if !LEVELS.contains(&level) {
            return Err(CodecError::InvalidConfiguration {
                codec: "zstd".to_string(),
                reason: format!(
                    "`level` is {level}, expected {} to {}",
                    LEVELS.start(),
                    LEVELS.end()
                ),
            });
        }
        Ok(Self { level, checksum })
    }

    /// The compression level.
    #[must_use]
    pub fn level(&self) -> i32 {
        self.level
    }

    /// Whether frames carry a content checksum.
    #[must_use]
    pub fn checksum(&self) -> bool {
        self.checksum
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: ZstdConfig = parse_configuration(metadata)?;
    Ok(Codec::BytesToBytes(Arc::new(ZstdCodec::new(
        config.level,
        config.checksum,
    )?)))
}

/// The error for a value of no bytes: a zstd frame has at least a header.
fn empty() -> CodecError {
    CodecError::Corrupt {
        codec: "zstd",
        reason: "the data is empty (a zstd frame has at least a header)".to_string(),
    }
}

fn library_error(source: std::io::Error) -> CodecError {
    CodecError::Library {
        codec: "zstd",
        source,
    }
}

fn corrupt(source: &std::io::Error) -> CodecError {
    CodecError::Corrupt {
        codec: "zstd",
        reason: source.to_string(),
    }
}

/// A compression context and the (level, checksum) it is set up for.
type CachedCompressor = (i32, bool, Compressor<'static>);

thread_local! {
    // Creating a context costs more than compressing a small chunk, and
    // chunks are encoded on rayon's threads, so each thread keeps one.
    static COMPRESSOR: RefCell<Option<CachedCompressor>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<Decompressor<'static>>> = const { RefCell::new(None) };
    // The streaming context of prefix decodes ([`decode_prefix`]).
    static STREAM: RefCell<Option<DCtx<'static>>> = const { RefCell::new(None) };
}

impl ZstdCodec {
    fn configure(
        compressor: &mut Compressor<'static>,
        level: i32,
        checksum: bool,
    ) -> std::io::Result<()> {
        compressor.set_parameter(CParameter::CompressionLevel(level))?;
        compressor.set_parameter(CParameter::ChecksumFlag(checksum))?;
        // Readers size their output from the content size in the header.
        compressor.set_parameter(CParameter::ContentSizeFlag(true))
    }

    fn compress(&self, data: &[u8]) -> std::io::Result<Vec<u8>> {
        COMPRESSOR.with(|cell| {
            let mut cached = cell.borrow_mut();
            let ready =
                matches!(&*cached, Some((l, c, _)) if *l == self.level && *c == self.checksum);
            if !ready {
                let mut compressor = match cached.take() {
                    Some((_, _, compressor)) => compressor,
                    None => Compressor::new(self.level)?,
                };
                Self::configure(&mut compressor, self.level, self.checksum)?;
                *cached = Some((self.level, self.checksum, compressor));
            }
            match cached.as_mut() {
                Some((_, _, compressor)) => compressor.compress(data),
                None => Err(std::io::Error::other("no compression context")),
            }
        })
    }

    /// Decodes frames that all record their content size, totalling `size`.
    fn decompress_exact(encoded: &[u8], size: usize) -> std::io::Result<Vec<u8>> {
        DECOMPRESSOR.with(|cell| {
            let mut cached = cell.borrow_mut();
            let decompressor = match &mut *cached {
                Some(decompressor) => decompressor,
                empty => empty.insert(Decompressor::new()?),
            };
            decompressor.decompress(encoded, size)
        })
    }

    /// Decodes frames, some of which do not record their content size (as
    /// written by streaming compressors, such as some numcodecs versions).
    /// With a `bound`, reading stops one byte past it, so the output never
    /// grows beyond the chunk whatever the frames hold.
    fn decompress_streaming(encoded: &[u8], bound: Option<usize>) -> Result<Vec<u8>, CodecError> {
        let mut output = Vec::new();
        // A failed reservation only costs speed; the data decides the size.
        let _ = output.try_reserve(bound.unwrap_or(0).min(MAX_PREALLOCATION));
        // The streaming decoder continues into concatenated frames.
        let decoder = zstd::stream::read::Decoder::with_buffer(encoded).map_err(library_error)?;
        match bound {
            Some(bound) => {
                decoder
                    .take((bound as u64).saturating_add(1))
                    .read_to_end(&mut output)
                    .map_err(|e| corrupt(&e))?;
                if output.len() > bound {
                    return Err(too_long(bound));
                }
            }
            None => {
                let mut decoder = decoder;
                decoder.read_to_end(&mut output).map_err(|e| corrupt(&e))?;
            }
        }
        Ok(output)
    }
}

/// The total of the content sizes the frames in `data` record, or `None` if
/// a frame records none (or the total overflows).
///
/// # Errors
/// [`CodecError::Corrupt`] if `data` is not a sequence of whole frames.
fn total_content_size(mut data: &[u8]) -> Result<Option<u64>, CodecError> {
    let invalid = |what: &str| CodecError::Corrupt {
        codec: "zstd",
        reason: format!("invalid frame: {what}"),
    };
    let mut total = 0u64;
    while !data.is_empty() {
        let frame_len = zstd::zstd_safe::find_frame_compressed_size(data)
            .map_err(|code| invalid(zstd::zstd_safe::get_error_name(code)))?;
        let Some(content) = zstd::zstd_safe::get_frame_content_size(data)
            .map_err(|_| invalid("unreadable header"))?
        else {
            return Ok(None);
        };
        let Some(sum) = total.checked_add(content) else {
            return Ok(None);
        };
        total = sum;
        data = data
            .get(frame_len..)
            .ok_or_else(|| invalid("length past the end of the data"))?;
    }
    Ok(Some(total))
}

/// The places `data` may be cut so that a streaming decoder given the
/// bytes up to one holds whole blocks (RFC 8878, "Blocks"): the end of
/// each block, and of each frame (its checksum included), in order; the
/// last is `data.len()`. Where the frames do not parse (a skippable frame
/// is stepped over), the rest is one piece: the decoder itself checks the
/// data, and the cuts only decide how much it is given at a time.
fn block_ends(data: &[u8]) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut at = 0usize;
    let le = |at: usize, n: usize| -> Option<u64> {
        let bytes = data.get(at..at.checked_add(n)?)?;
        Some(bytes.iter().rev().fold(0, |v, &b| (v << 8) | u64::from(b)))
    };
    'frames: while at < data.len() {
        let Some(magic) = le(at, 4) else { break };
        if magic & 0xffff_fff0 == 0x184d_2a50 {
            // A skippable frame: its size, then that many bytes.
            let size = le(at + 4, 4).and_then(|n| usize::try_from(n).ok()?.checked_add(8));
            match size.and_then(|n| at.checked_add(n)) {
                Some(end) if end <= data.len() => {
                    at = end;
                    ends.push(at);
                    continue;
                }
                _ => break,
            }
        }
        if magic != 0xfd2f_b528 {
            break;
        }
        let Some(&descriptor) = data.get(at + 4) else {
            break;
        };
        let single_segment = descriptor & 0b10_0000 != 0;
        let content_size_bytes = match descriptor >> 6 {
            0 => usize::from(single_segment),
            1 => 2,
            2 => 4,
            _ => 8,
        };
        let dictionary_bytes = [0, 1, 2, 4][usize::from(descriptor & 0b11)];
        let checksum_bytes = if descriptor & 0b100 != 0 { 4 } else { 0 };
        at += 5 + usize::from(!single_segment) + dictionary_bytes + content_size_bytes;
        loop {
            let Some(header) = le(at, 3) else {
                break 'frames;
            };
            let size = (header >> 3) as usize;
            let content = match (header >> 1) & 0b11 {
                // Raw and compressed blocks hold `size` bytes; an RLE
                // block one, repeated `size` times.
                0 | 2 => size,
                1 => 1,
                _ => break 'frames,
            };
            at += 3 + content;
            if header & 1 != 0 {
                at += checksum_bytes;
                if at <= data.len() {
                    ends.push(at);
                }
                continue 'frames;
            }
            if at > data.len() {
                break 'frames;
            }
            ends.push(at);
        }
    }
    if ends.last() != Some(&data.len()) {
        ends.push(data.len());
    }
    ends
}

/// Decodes the first `out.len()` bytes of the frames in `encoded` into
/// `out`, and no more than the blocks that hold them: the streaming
/// decoder is given one block at a time (it decodes every whole block it
/// holds before returning), and stops once `out` is full. Nothing past
/// those blocks is read, so neither the rest of the data nor a content
/// checksum is checked.
///
/// # Errors
/// [`CodecError::Corrupt`] if the data is corrupt or ends before `out` is
/// full.
fn decode_prefix(encoded: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
    let error = |code| CodecError::Corrupt {
        codec: "zstd",
        reason: zstd::zstd_safe::get_error_name(code).to_string(),
    };
    let want = out.len();
    STREAM.with(|cell| {
        let mut cached = cell.borrow_mut();
        let stream = cached.get_or_insert_with(DCtx::create);
        stream.reset(ResetDirective::SessionOnly).map_err(error)?;
        let mut output = OutBuffer::around(out);
        let mut consumed = 0;
        for end in block_ends(encoded) {
            while output.pos() < want && consumed < end {
                let mut input = InBuffer::around(&encoded[..end]);
                input.set_pos(consumed);
                stream
                    .decompress_stream(&mut output, &mut input)
                    .map_err(error)?;
                if input.pos() == consumed && output.pos() < want {
                    // No progress with the whole block in hand: the
                    // decoder waits for more than the block (a piece the
                    // cuts did not parse).
                    break;
                }
                consumed = input.pos();
            }
            if output.pos() == want {
                return Ok(());
            }
        }
        Err(CodecError::Corrupt {
            codec: "zstd",
            reason: format!(
                "the data ends after {} decoded bytes, before the {want} a read needs",
                output.pos()
            ),
        })
    })
}

impl BytesToBytesCodec for ZstdCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert("level".into(), self.level.into());
        // zarr-python writes `checksum` always; writing it too keeps
        // rewritten metadata identical.
        configuration.insert("checksum".into(), self.checksum.into());
        ExtensionObject::with_configuration("zstd", configuration)
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>, CodecError> {
        self.compress(&decoded).map_err(library_error)
    }

    fn decode(&self, encoded: Vec<u8>, decoded_size: Option<usize>) -> Result<Vec<u8>, CodecError> {
        if encoded.is_empty() {
            return Err(empty());
        }
        // The sizes recorded in the frame headers are untrusted: a total
        // beyond the chunk's bound is refused before anything is allocated,
        // and only an exact total small enough to allocate (and, without a
        // bound, plausible for the compressed length) sizes the output.
        let recorded = total_content_size(&encoded)?;
        if let (Some(size), Some(bound)) = (recorded, decoded_size)
            && size > bound as u64
        {
            return Err(CodecError::Corrupt {
                codec: "zstd",
                reason: format!(
                    "the frame header records {size} bytes of content, more than the chunk's {bound}"
                ),
            });
        }
        let plausible = decoded_size.map_or_else(
            || (encoded.len() as u64).saturating_mul(UNBOUNDED_RATIO),
            |bound| bound as u64,
        );
        match recorded {
            Some(size) if size <= (MAX_PREALLOCATION as u64).min(plausible) => {
                // The bound above makes the cast lossless.
                Self::decompress_exact(&encoded, size as usize).map_err(|e| corrupt(&e))
            }
            _ => Self::decompress_streaming(&encoded, decoded_size),
        }
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
        // Straight into the caller's buffer when the frames say they hold
        // exactly that many bytes; otherwise through the checked path.
        if !encoded.is_empty() && total_content_size(encoded)? == Some(out.len() as u64) {
            let written = DECOMPRESSOR
                .with(|cell| {
                    let mut cached = cell.borrow_mut();
                    let decompressor = match &mut *cached {
                        Some(decompressor) => decompressor,
                        empty => empty.insert(Decompressor::new()?),
                    };
                    decompressor.decompress_to_buffer(encoded, out)
                })
                .map_err(|e| corrupt(&e))?;
            if written != out.len() {
                return Err(CodecError::WrongSize {
                    expected: out.len(),
                    actual: written,
                });
            }
            return Ok(());
        }
        let decoded = self.decode(encoded.to_vec(), Some(out.len()))?;
        if decoded.len() != out.len() {
            return Err(CodecError::WrongSize {
                expected: out.len(),
                actual: decoded.len(),
            });
        }
        out.copy_from_slice(&decoded);
        Ok(())
    }

    fn encode_slice(&self, decoded: &[u8]) -> Result<Vec<u8>, CodecError> {
        self.compress(decoded).map_err(library_error)
    }

    fn decodes_ranges(&self) -> bool {
        true
    }

    /// Decodes the value up to the end of the last range, and no further
    /// (the frames are given to the decoder a block at a time): a box of a
    /// C-order chunk ends at some index of the chunk's first dimension,
    /// and the blocks past it (a 64³ `uint16` chunk is at least four
    /// blocks, of 128 KiB at most) are never decoded. The content sizes
    /// the frames record must total the chunk's size; the rest of the data
    /// and a content checksum are checked only by a whole decode. A value
    /// the ranges need to its end, or whose frames do not all record their
    /// size, is decoded whole.
    fn decode_ranges(
        &self,
        encoded: Vec<u8>,
        decoded_size: usize,
        ranges: &[(usize, usize)],
    ) -> Result<Vec<u8>, CodecError> {
        partial::ranges_len(ranges, decoded_size)?;
        if encoded.is_empty() {
            return Err(empty());
        }
        match total_content_size(&encoded)? {
            Some(recorded) if recorded != decoded_size as u64 => {
                return Err(CodecError::Corrupt {
                    codec: "zstd",
                    reason: format!(
                        "the frame headers record {recorded} bytes of content, not the chunk's {decoded_size}"
                    ),
                });
            }
            Some(_) => {}
            None => {
                // A frame that records no size could make the streaming
                // decoder hold a window as large as its header claims:
                // the whole decode bounds its output by the chunk's size.
                let decoded = self.decode(encoded, Some(decoded_size))?;
                return partial::gather_ranges(&decoded, decoded_size, ranges);
            }
        }
        let end = ranges.iter().map(|&(o, n)| o + n).max().unwrap_or(0);
        let too_large = || CodecError::TooLarge {
            shape: vec![end as u64],
        };
        let mut buffer = BUFFERS.buffer(end).ok_or_else(too_large)?;
        let decoded = if end == decoded_size {
            self.decode_into(&encoded, &mut buffer)
        } else {
            decode_prefix(&encoded, &mut buffer)
        };
        let gathered = decoded.and_then(|()| partial::gather_ranges(&buffer, end, ranges));
        BUFFERS.give([encoded, buffer]);
        gathered
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (i % 251) as u8 ^ (i / 1000) as u8)
            .collect()
    }

    /// The frame header descriptor byte (RFC 8878, "Frame_Header_Descriptor").
    fn descriptor(frame: &[u8]) -> u8 {
        assert_eq!(frame[..4], [0x28, 0xb5, 0x2f, 0xfd], "zstd magic number");
        frame[4]
    }

    #[test]
    fn frames_record_content_size_and_checksum_as_configured() {
        let data = sample(10_000);
        let plain = ZstdCodec::new(3, false)
            .unwrap()
            .encode(data.clone())
            .unwrap();
        let checked = ZstdCodec::new(3, true)
            .unwrap()
            .encode(data.clone())
            .unwrap();
        assert_eq!(
            zstd::zstd_safe::get_frame_content_size(&plain).unwrap(),
            Some(10_000)
        );
        assert_eq!(descriptor(&plain) & 0b100, 0, "no checksum flag");
        assert_eq!(descriptor(&checked) & 0b100, 0b100, "checksum flag");
        assert_eq!(checked.len(), plain.len() + 4);
        assert!(plain.len() < data.len() / 4);
        assert_eq!(zstd::decode_all(checked.as_slice()).unwrap(), data);
    }

    #[test]
    fn switching_configuration_on_one_thread_uses_each_configuration() {
        let data = sample(4000);
        for (level, checksum) in [(1, true), (19, false), (1, false), (-5, true)] {
            let codec = ZstdCodec::new(level, checksum).unwrap();
            let encoded = codec.encode(data.clone()).unwrap();
            assert_eq!(descriptor(&encoded) & 0b100 != 0, checksum, "{level}");
            assert_eq!(codec.decode(encoded, Some(data.len())).unwrap(), data);
        }
    }

    #[test]
    fn frame_without_content_size_decodes() {
        let data = sample(300_000);
        let mut frame = Vec::new();
        let mut encoder = zstd::stream::write::Encoder::new(&mut frame, 3).unwrap();
        encoder.include_contentsize(false).unwrap();
        std::io::Write::write_all(&mut encoder, &data).unwrap();
        encoder.finish().unwrap();
        assert_eq!(
            zstd::zstd_safe::get_frame_content_size(&frame).unwrap(),
            None
        );
        let codec = ZstdCodec::new(0, false).unwrap();
        assert_eq!(codec.decode(frame.clone(), None).unwrap(), data);
        assert_eq!(codec.decode(frame.clone(), Some(300_000)).unwrap(), data);
        // Without a recorded size the stream stops at the bound.
        let err = codec.decode(frame, Some(16)).unwrap_err();
        assert!(
            err.to_string().contains("more than the expected 16 bytes"),
            "{err}"
        );
    }

    #[test]
    fn concatenated_frames_decode_with_and_without_content_sizes() {
        let codec = ZstdCodec::new(1, false).unwrap();
        let mut both = codec.encode(b"hello ".to_vec()).unwrap();
        both.extend(codec.encode(b"world".to_vec()).unwrap());
        assert_eq!(codec.decode(both.clone(), None).unwrap(), b"hello world");

        let mut no_size = Vec::new();
        let mut encoder = zstd::stream::write::Encoder::new(&mut no_size, 1).unwrap();
        encoder.include_contentsize(false).unwrap();
        std::io::Write::write_all(&mut encoder, b"!").unwrap();
        encoder.finish().unwrap();
        both.extend(no_size);
        assert_eq!(codec.decode(both, None).unwrap(), b"hello world!");
    }

    #[test]
    fn checksum_mismatch_is_an_error() {
        let codec = ZstdCodec::new(3, true).unwrap();
        let mut encoded = codec.encode(sample(1000)).unwrap();
        let last = encoded.len() - 1;
        encoded[last] ^= 0xff;
        let err = codec.decode(encoded, None).unwrap_err();
        assert!(err.to_string().starts_with("zstd data is corrupt"), "{err}");
    }

    #[test]
    fn corrupt_truncated_and_empty_inputs_are_errors() {
        let codec = ZstdCodec::new(3, true).unwrap();
        let encoded = codec.encode(sample(5000)).unwrap();
        for len in [0, 1, 4, 5, 8, encoded.len() / 2, encoded.len() - 1] {
            let err = codec.decode(encoded[..len].to_vec(), None).unwrap_err();
            assert!(
                err.to_string().starts_with("zstd data is corrupt"),
                "{len}: {err}"
            );
        }
        let mut corrupt = encoded.clone();
        corrupt[0] = 0;
        assert!(codec.decode(corrupt, None).is_err());
        let mut corrupt = encoded;
        let middle = corrupt.len() / 2;
        corrupt[middle] ^= 0x55;
        assert!(codec.decode(corrupt, None).is_err());
    }

    #[test]
    fn forged_huge_content_size_does_not_allocate_it() {
        // A frame header claiming 2^62 bytes followed by nothing: decoding
        // must fail on the data rather than reserve the claimed size.
        let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd];
        // Frame_Content_Size_Flag = 3 (8 bytes), Single_Segment_Flag set.
        frame.push(0b1110_0000);
        frame.extend((1u64 << 62).to_le_bytes());
        // One last raw block holding one byte.
        frame.extend([0b1001, 0, 0, 42]);
        assert_eq!(total_content_size(&frame).unwrap(), Some(1 << 62));
        let err = ZstdCodec::new(0, false)
            .unwrap()
            .decode(frame, None)
            .unwrap_err();
        assert!(err.to_string().starts_with("zstd data is corrupt"), "{err}");
    }

    #[test]
    fn out_of_range_level_is_rejected_naming_the_codec() {
        let err = ZstdCodec::new(23, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid configuration for codec `zstd`: `level` is 23, expected -131072 to 22"
        );
        assert!(ZstdCodec::new(-131_073, false).is_err());
        assert!(ZstdCodec::new(-131_072, false).is_ok());
    }

    #[test]
    fn checksum_is_optional_on_read_and_always_written() {
        let config: JsonMap = serde_json::from_str(r#"{"level": -3}"#).unwrap();
        let Codec::BytesToBytes(codec) =
            create(&ExtensionObject::with_configuration("zstd", config)).unwrap()
        else {
            panic!("zstd is bytes-to-bytes");
        };
        assert_eq!(
            serde_json::Value::Object(codec.metadata().configuration_or_empty()),
            serde_json::json!({ "level": -3, "checksum": false })
        );
        for bad in [
            r#"{"checksum": true}"#,
            r#"{"level": 1, "checksum": 1}"#,
            r#"{"level": 1, "dict": "x"}"#,
        ] {
            let config: JsonMap = serde_json::from_str(bad).unwrap();
            let err = create(&ExtensionObject::with_configuration("zstd", config)).unwrap_err();
            assert!(err.to_string().contains("codec `zstd`"), "{err}");
        }
    }

    /// A smooth field with 4 bits of noise, as little-endian `uint16`:
    /// zstd compresses it about 2:1 in compressed blocks of 128 KiB.
    fn noisy(len: usize, seed: u64) -> Vec<u8> {
        let mut state = seed | 1;
        (0..len.div_ceil(2))
            .flat_map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (((i / 64) as u16).wrapping_add(state as u16 & 15)).to_le_bytes()
            })
            .take(len)
            .collect()
    }

    fn gather_whole(data: &[u8], ranges: &[(usize, usize)]) -> Vec<u8> {
        ranges
            .iter()
            .flat_map(|&(o, n)| data[o..o + n].iter().copied())
            .collect()
    }

    /// How many bytes the streaming decoder produces from `encoded`, a
    /// stream cut anywhere.
    fn streamed_len(encoded: &[u8]) -> usize {
        let mut stream = DCtx::create();
        let mut out = vec![0u8; 1 << 22];
        let mut output = OutBuffer::around(&mut out[..]);
        let mut input = InBuffer::around(encoded);
        while input.pos() < encoded.len() {
            let before = (input.pos(), output.pos());
            if stream.decompress_stream(&mut output, &mut input).is_err()
                || before == (input.pos(), output.pos())
            {
                break;
            }
        }
        output.pos()
    }

    #[test]
    fn block_ends_cut_after_each_block_and_frame() {
        let data = noisy(300_000, 7);
        let codec = ZstdCodec::new(3, true).unwrap();
        let frame = codec.encode(data.clone()).unwrap();
        let ends = block_ends(&frame);
        // Blocks hold at most 128 KiB: at least three for 300,000 bytes.
        // The last cut is the frame's end, after its checksum.
        assert!(ends.len() >= 3, "{ends:?}");
        assert_eq!(*ends.last().unwrap(), frame.len());
        // Each cut is a block's end: the bytes up to it decode to more
        // than the bytes up to one short of it (up to the 4 bytes of the
        // checksum short, at the frame's end), and the cuts are all.
        let mut decoded = 0;
        for (k, &end) in ends.iter().enumerate() {
            let short = if k + 1 == ends.len() { 5 } else { 1 };
            let upto = streamed_len(&frame[..end]);
            assert!(upto > decoded, "{end}");
            assert_eq!(streamed_len(&frame[..end - short]), decoded, "{end}");
            decoded = upto;
        }
        assert_eq!(decoded, data.len());
        // A skippable frame and a second frame: cut after each.
        let mut two = vec![0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3];
        two.extend(&frame);
        let small = codec.encode(b"tail".to_vec()).unwrap();
        two.extend(&small);
        let cuts = block_ends(&two);
        assert_eq!(cuts[0], 11);
        assert_eq!(cuts[ends.len()], 11 + frame.len());
        assert_eq!(cuts[ends.len() + 1..], [two.len()]);
        // What does not parse is one piece.
        assert_eq!(block_ends(b"not zstd"), [8]);
        let cut = &frame[..frame.len() - 5];
        assert_eq!(
            block_ends(cut),
            ends[..ends.len() - 1]
                .iter()
                .copied()
                .chain([cut.len()])
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn ranges_decode_only_the_blocks_up_to_their_end() {
        let data = noisy(4 << 17, 11);
        let codec = ZstdCodec::new(3, false).unwrap();
        let mut frame = codec.encode(data.clone()).unwrap();
        let ends = block_ends(&frame);
        let [.., before_last, last] = ends[..] else {
            panic!("{ends:?}")
        };
        // Break the last block (zeros after its header, which says it is
        // compressed): ranges that end before it still decode, and the
        // whole value no longer does.
        assert_eq!((frame[before_last] >> 1) & 0b11, 2, "a compressed block");
        let kept = streamed_len(&frame[..before_last]);
        frame[before_last + 3..last].fill(0);
        let ranges = [(10, 20), (kept - 5, 5), (kept - 1000, 1000)];
        let decoded = codec
            .decode_ranges(frame.clone(), data.len(), &ranges)
            .unwrap();
        assert_eq!(decoded, gather_whole(&data, &ranges));
        assert!(codec.decode(frame.clone(), Some(data.len())).is_err());
        for end in [kept + 1, data.len()] {
            let err = codec
                .decode_ranges(frame.clone(), data.len(), &[(0, 1), (end - 1, 1)])
                .unwrap_err();
            assert!(err.to_string().starts_with("zstd data is corrupt"), "{err}");
        }
    }

    #[test]
    fn ranges_of_concatenated_frames_match_a_whole_decode() {
        let data = noisy(500_000, 3);
        let (head, tail) = data.split_at(200_000);
        let tail = ZstdCodec::new(5, true)
            .unwrap()
            .encode(tail.to_vec())
            .unwrap();
        // Two frames that record their sizes, the second with a checksum
        // (decoded a prefix at a time), and the first without its size
        // (decoded whole).
        let mut sized = ZstdCodec::new(1, false)
            .unwrap()
            .encode(head.to_vec())
            .unwrap();
        sized.extend(&tail);
        let mut unsized_head = Vec::new();
        let mut encoder = zstd::stream::write::Encoder::new(&mut unsized_head, 1).unwrap();
        encoder.include_contentsize(false).unwrap();
        std::io::Write::write_all(&mut encoder, head).unwrap();
        encoder.finish().unwrap();
        unsized_head.extend(&tail);
        let codec = ZstdCodec::new(0, false).unwrap();
        for encoded in [sized, unsized_head] {
            for ranges in [
                vec![(0, 0)],
                vec![(0, 1)],
                vec![(199_999, 2)],
                vec![(5, 100), (150_000, 60_000), (300_000, 1)],
                vec![(499_999, 1)],
                vec![(0, 500_000)],
            ] {
                let decoded = codec
                    .decode_ranges(encoded.clone(), data.len(), &ranges)
                    .unwrap();
                assert!(decoded == gather_whole(&data, &ranges), "{ranges:?}");
            }
        }
    }

    #[test]
    fn ranges_of_short_corrupt_or_missized_values_are_errors() {
        let data = noisy(300_000, 5);
        let codec = ZstdCodec::new(3, false).unwrap();
        let frame = codec.encode(data.clone()).unwrap();
        let message = |encoded: Vec<u8>, size: usize, ranges: &[(usize, usize)]| {
            codec
                .decode_ranges(encoded, size, ranges)
                .unwrap_err()
                .to_string()
        };
        // Frames that record another size than the chunk's.
        let err = message(frame.clone(), 400_000, &[(0, 1)]);
        assert!(
            err.contains("record 300000 bytes of content, not the chunk's 400000"),
            "{err}"
        );
        // A range past the chunk.
        let err = message(frame.clone(), 300_000, &[(299_999, 2)]);
        assert!(err.contains("out of bounds"), "{err}");
        // Data cut short, and empty.
        for len in [0, 3, 6, frame.len() / 2] {
            let err = message(frame[..len].to_vec(), 300_000, &[(299_000, 10)]);
            assert!(err.starts_with("zstd data is corrupt"), "{len}: {err}");
        }
        // A frame without a recorded size that holds too little: decoded
        // whole, and short of the chunk; a prefix of it, short of the read.
        let mut short = Vec::new();
        let mut encoder = zstd::stream::write::Encoder::new(&mut short, 1).unwrap();
        encoder.include_contentsize(false).unwrap();
        std::io::Write::write_all(&mut encoder, &data[..1000]).unwrap();
        encoder.finish().unwrap();
        let err = message(short.clone(), 300_000, &[(2000, 1)]);
        assert!(
            err.contains("decoded to 1000 bytes, expected 300000"),
            "{err}"
        );
        let err = decode_prefix(&short, &mut [0; 2001])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ends after 1000 decoded bytes, before the 2001"),
            "{err}"
        );
    }

    proptest! {
        #[test]
        fn ranges_decode_as_a_whole_decode_gathers(
            len in 1usize..400_000,
            seed in any::<u64>(),
            level in 1i32..=5,
            picks in prop::collection::vec((any::<prop::sample::Index>(), 0usize..5000), 1..4),
        ) {
            let data = noisy(len, seed);
            let codec = ZstdCodec::new(level, false)?;
            let frame = codec.encode(data.clone())?;
            let ranges: Vec<(usize, usize)> = picks
                .iter()
                .map(|(at, n)| {
                    let offset = at.index(len);
                    (offset, (*n).min(len - offset))
                })
                .collect();
            let decoded = codec.decode_ranges(frame, len, &ranges)?;
            prop_assert!(decoded == gather_whole(&data, &ranges));
        }

        #[test]
        fn zstd_ranges_of_garbage_do_not_panic(data in prop::collection::vec(any::<u8>(), 0..256)) {
            let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd];
            frame.extend(&data);
            let codec = ZstdCodec::new(0, false)?;
            let _ = codec.decode_ranges(frame, 1000, &[(10, 20)]);
            let _ = codec.decode_ranges(data, 64, &[(0, 1)]);
        }

        #[test]
        fn zstd_round_trips(
            data in prop::collection::vec(any::<u8>(), 0..4096),
            level in -10i32..=19,
            checksum in any::<bool>(),
        ) {
            let codec = ZstdCodec::new(level, checksum)?;
            let decoded = codec.decode(codec.encode(data.clone())?, Some(data.len()))?;
            prop_assert_eq!(decoded, data);
        }

        #[test]
        fn zstd_decode_of_garbage_does_not_panic(data in prop::collection::vec(any::<u8>(), 0..256)) {
            let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd];
            frame.extend(&data);
            let _ = ZstdCodec::new(0, false)?.decode(frame, None);
            let _ = ZstdCodec::new(0, false)?.decode(data, Some(64));
        }
    }
}
