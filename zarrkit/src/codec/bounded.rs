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
                return Err(too_long(codec, size));
            }
        }
        None => {
            let mut reader = reader;
            reader.read_to_end(&mut output).map_err(map_error)?;
        }
    }
    Ok(output)
}

/// Reads all of `reader` into `out`, which the stream must fill exactly:
/// [`CodecError::WrongSize`] when it ends early, and an error rather than a
/// byte more when it runs past `out`.
#[cfg(any(feature = "gzip", feature = "zlib"))]
pub(crate) fn read_into(
    mut reader: impl std::io::Read,
    out: &mut [u8],
    codec: &'static str,
    map_error: fn(std::io::Error) -> CodecError,
) -> Result<(), CodecError> {
    let mut filled = 0;
    while filled < out.len() {
        match reader.read(&mut out[filled..]) {
            Ok(0) => {
                return Err(CodecError::WrongSize {
                    expected: out.len(),
                    actual: filled,
                });
            }
            Ok(n) => filled += n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(map_error(err)),
        }
    }
    let mut probe = [0u8; 1];
    match reader.read(&mut probe) {
        Ok(0) => Ok(()),
        Ok(_) => Err(too_long(codec, out.len())),
        Err(err) => Err(map_error(err)),
    }
}

/// The error for a stream that decodes to more than `size` bytes.
#[cfg(any(feature = "gzip", feature = "zlib", feature = "bz2", feature = "lzma"))]
fn too_long(codec: &'static str, size: usize) -> CodecError {
    CodecError::Corrupt {
        codec,
        reason: format!("the data decodes to more than the expected {size} bytes"),
    }
}

/// The DEFLATE wrapper a stream has.
#[cfg(any(feature = "gzip", feature = "zlib"))]
#[derive(Clone, Copy)]
pub(crate) enum Deflate {
    /// RFC 1950: a 2-byte header and an Adler-32 trailer.
    Zlib,
    /// RFC 1952: one gzip member (the caller handles concatenated members).
    Gzip,
}

/// Inflates the whole stream `encoded` into `out` in one call of
/// libdeflate, which decodes DEFLATE about twice as fast as a streaming
/// decoder (zlib-rs through `flate2`: 2.3× fewer instructions on the
/// benchmark's 64³ `uint16` chunks, 1.9× on noisy ones), and checks the
/// trailer's checksum. It never writes past `out`, so a stream that
/// inflates further is refused without allocating (a decompression bomb
/// costs no more than the chunk).
///
/// `Ok(Some(n))`: the stream decoded to its first `n` bytes of `out`.
/// `Ok(None)`: libdeflate refused the data; the caller decodes it again
/// with the streaming decoder, whose answer (its error message, or a
/// stream libdeflate does not take) stays the codec's.
#[cfg(any(feature = "gzip", feature = "zlib"))]
pub(crate) fn inflate(
    wrapper: Deflate,
    encoded: &[u8],
    out: &mut [u8],
    codec: &'static str,
) -> Result<Option<usize>, CodecError> {
    use libdeflater::{DecompressionError, Decompressor};
    thread_local! {
        // A decompressor holds its tables (about 11 KiB): one a thread.
        static DECOMPRESSOR: std::cell::RefCell<Option<Decompressor>> =
            const { std::cell::RefCell::new(None) };
    }
    let result = DECOMPRESSOR.with(|cell| {
        let mut cell = cell.borrow_mut();
        let decompressor = cell.get_or_insert_with(Decompressor::new);
        match wrapper {
            Deflate::Zlib => decompressor.zlib_decompress(encoded, out),
            Deflate::Gzip => decompressor.gzip_decompress(encoded, out),
        }
    });
    match result {
        Ok(n) => Ok(Some(n)),
        Err(DecompressionError::InsufficientSpace) => Err(too_long(codec, out.len())),
        Err(DecompressionError::BadData) => Ok(None),
    }
}

/// Compresses `decoded` whole into a `wrapper` stream at zlib's `level`
/// (0 to 9) with libdeflate, and returns exactly the compressed bytes.
///
/// libdeflate's levels follow zlib's (its level 1 is zlib's fast greedy
/// parse with real Huffman codes), while zlib-rs's level 1 is zlib-ng's
/// `deflate_quick`, static Huffman codes only. On the benchmark's 64³
/// `uint16` chunks: zlib-rs level 1 compressed 8.7:1, libdeflate level 1
/// 42:1 in about the same CPU time (zlib 1.2.13 at level 1: 40:1, twice
/// the time); on noisy chunks (8 random low bits) 1.09:1 against 1.52:1
/// (zlib: 1.47:1). Any DEFLATE decoder reads the result (RFC 1950/1952).
///
/// The compressor (its hash tables, 100 KiB to 1 MiB by level) is kept
/// per thread; the output goes to a pooled buffer of the worst-case
/// size, then is copied to one of its exact size.
#[cfg(any(feature = "gzip", feature = "zlib"))]
pub(crate) fn deflate(
    wrapper: Deflate,
    level: u32,
    decoded: &[u8],
    codec: &'static str,
) -> Result<Vec<u8>, CodecError> {
    use crate::store::buffers::BUFFERS;
    use libdeflater::{CompressionLvl, Compressor};
    thread_local! {
        static COMPRESSOR: std::cell::RefCell<Option<(u32, Compressor)>> =
            const { std::cell::RefCell::new(None) };
    }
    let invalid = || CodecError::InvalidConfiguration {
        codec: codec.to_string(),
        reason: format!("`level` is {level}, expected 0 to 9"),
    };
    let lvl = CompressionLvl::new(i32::try_from(level).map_err(|_| invalid())?)
        .ok()
        .filter(|_| level <= 9)
        .ok_or_else(invalid)?;
    COMPRESSOR.with(|cell| {
        let mut cell = cell.borrow_mut();
        if !matches!(*cell, Some((kept, _)) if kept == level) {
            *cell = None;
        }
        let (_, compressor) = cell.get_or_insert_with(|| (level, Compressor::new(lvl)));
        let bound = match wrapper {
            Deflate::Zlib => compressor.zlib_compress_bound(decoded.len()),
            Deflate::Gzip => compressor.gzip_compress_bound(decoded.len()),
        };
        let mut scratch = BUFFERS.buffer(bound).ok_or_else(|| CodecError::TooLarge {
            shape: vec![bound as u64],
        })?;
        let written = match wrapper {
            Deflate::Zlib => compressor.zlib_compress(decoded, &mut scratch),
            Deflate::Gzip => compressor.gzip_compress(decoded, &mut scratch),
        };
        let encoded = written.map(|n| scratch[..n].to_vec());
        BUFFERS.give([scratch]);
        // The bound is libdeflate's own worst case: running out of room
        // would be its bug, reported as the library's failure.
        encoded.map_err(|e| CodecError::Library {
            codec,
            source: std::io::Error::other(e.to_string()),
        })
    })
}

/// The largest output [`decode_whole`] allocates up front; a larger bound
/// goes through the streaming decoder, which allocates what the stream
/// yields.
#[cfg(any(feature = "gzip", feature = "zlib"))]
const MAX_WHOLE: usize = 256 << 20;

/// Decodes `encoded` to at most `decoded_size` bytes with [`inflate`]
/// into a buffer of that size, when the bound is known and at most
/// [`MAX_WHOLE`]; `Ok(None)` when the caller is to use its streaming
/// decoder (no bound, a larger one, or data libdeflate refused). With
/// `exact`, a stream shorter than the bound goes to the streaming decoder
/// too (a gzip stream may hold several members, of which libdeflate reads
/// the first).
#[cfg(any(feature = "gzip", feature = "zlib"))]
pub(crate) fn decode_whole(
    wrapper: Deflate,
    encoded: &[u8],
    decoded_size: Option<usize>,
    exact: bool,
    codec: &'static str,
) -> Result<Option<Vec<u8>>, CodecError> {
    let Some(size) = decoded_size.filter(|&size| size <= MAX_WHOLE) else {
        return Ok(None);
    };
    // Zeroed pages from the allocator (calloc), not a fill.
    let mut out =
        bytemuck::allocation::try_zeroed_vec(size).map_err(|()| CodecError::TooLarge {
            shape: vec![size as u64],
        })?;
    match inflate(wrapper, encoded, &mut out, codec)? {
        Some(n) if n == size || !exact => {
            out.truncate(n);
            Ok(Some(out))
        }
        _ => Ok(None),
    }
}
