//! Reading a decompressor's output without trusting the stream's size.

use super::CodecError;

/// The error for a failure of a decompression stream: malformed input
/// (`InvalidInput`/`InvalidData`) and truncated input (`UnexpectedEof`)
/// mean the stored bytes are bad; anything else is the library's failure.
#[cfg(any(feature = "gzip", feature = "zlib", feature = "bz2"))]
pub(crate) fn stream_error(codec: &'static str, source: std::io::Error) -> CodecError {
    match source.kind() {
        std::io::ErrorKind::InvalidInput
        | std::io::ErrorKind::InvalidData
        | std::io::ErrorKind::UnexpectedEof => CodecError::Corrupt {
            codec,
            reason: source.to_string(),
        },
        _ => CodecError::Library { codec, source },
    }
}

/// Reads all of `reader`, stopping one byte past `decoded_size` when it is
/// known, so a stream that inflates beyond its chunk cannot exhaust memory
/// (the chain then reports the wrong size).
#[cfg(any(feature = "gzip", feature = "zlib", feature = "bz2", feature = "lzma"))]
pub(crate) fn read_bounded(
    reader: impl std::io::Read,
    decoded_size: Option<usize>,
    codec: &'static str,
    map_error: fn(std::io::Error) -> CodecError,
) -> Result<Vec<u8>, CodecError> {
    use std::io::Read as _;
    /// The largest allocation made up front from a size hint.
    const MAX_PREALLOCATION: usize = 256 << 20;
    let mut output = Vec::new();
    match decoded_size {
        Some(size) => {
            output
                .try_reserve_exact(size.min(MAX_PREALLOCATION))
                .map_err(|_| CodecError::TooLarge {
                    shape: vec![size as u64],
                })?;
            reader
                .take((size as u64).saturating_add(1))
                .read_to_end(&mut output)
                .map_err(map_error)?;
            if output.len() > size {
                return Err(CodecError::Corrupt {
                    codec,
                    reason: format!("the data decodes to more than the expected {size} bytes"),
                });
            }
        }
        None => {
            let mut reader = reader;
            reader.read_to_end(&mut output).map_err(map_error)?;
        }
    }
    Ok(output)
}
