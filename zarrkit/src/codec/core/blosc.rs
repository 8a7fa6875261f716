//! The `blosc` bytes-to-bytes codec: the c-blosc 1.x container, whose blocks
//! are shuffled and then compressed by an internal compressor.
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/blosc/index.html>
//! Names: v3 `blosc`; v2 compressor id `blosc`.
//!
//! ```
//! # use zarrkit::codec::blosc::BloscConfig;
//! let config: BloscConfig = serde_json::from_str(
//!     r#"{ "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0 }"#,
//! )?;
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! This module calls c-blosc through its thread-safe context functions
//! (`blosc_compress_ctx`, `blosc_decompress_ctx`), which need no global
//! initialisation and take no lock; they get as many internal threads as
//! the caller allows one chunk ([`threads::chunk_threads`]) for values of
//! 2 MiB or more. A partial read decodes only the blocks it needs, each
//! with `blosc_getitem` (also lock-free), after `blosc_cbuffer_validate`
//! has checked the header against the value's length.

use crate::codec::{BytesToBytesCodec, Codec, CodecError, parse_configuration, partial, threads};
use crate::metadata::{ExtensionObject, JsonMap};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::ffi::{CStr, c_int, c_void};
use std::sync::Arc;

/// The header c-blosc writes before the data (and the most it adds).
const MAX_OVERHEAD: usize = blosc_src::BLOSC_MAX_OVERHEAD as usize;
/// The largest input c-blosc 1.x compresses.
const MAX_BUFFER_SIZE: usize = blosc_src::BLOSC_MAX_BUFFERSIZE as usize;

/// The compressor blosc applies to each block (`cname`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BloscCompressor {
    /// `blosclz`, blosc's own fast compressor.
    Blosclz,
    /// `lz4`.
    Lz4,
    /// `lz4hc`: LZ4's high-compression mode, decoded as `lz4`.
    Lz4hc,
    /// `snappy`: defined by the spec, but not included in this build.
    Snappy,
    /// `zlib`.
    Zlib,
    /// `zstd`.
    Zstd,
}

impl BloscCompressor {
    /// The spec's (and c-blosc's) name for the compressor.
    #[must_use]
    pub fn name(self) -> &'static str {
        self.c_name().to_str().unwrap_or("")
    }

    fn c_name(self) -> &'static CStr {
        match self {
            Self::Blosclz => c"blosclz",
            Self::Lz4 => c"lz4",
            Self::Lz4hc => c"lz4hc",
            Self::Snappy => c"snappy",
            Self::Zlib => c"zlib",
            Self::Zstd => c"zstd",
        }
    }
}

/// How blosc rearranges the bytes of each block before compressing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BloscShuffle {
    /// `noshuffle`.
    #[serde(rename = "noshuffle")]
    NoShuffle,
    /// `shuffle`: byte-wise, grouping the i-th byte of every element.
    #[serde(rename = "shuffle")]
    Shuffle,
    /// `bitshuffle`: bit-wise.
    #[serde(rename = "bitshuffle")]
    BitShuffle,
}

impl BloscShuffle {
    fn name(self) -> &'static str {
        match self {
            Self::NoShuffle => "noshuffle",
            Self::Shuffle => "shuffle",
            Self::BitShuffle => "bitshuffle",
        }
    }

    fn code(self) -> c_int {
        let code = match self {
            Self::NoShuffle => blosc_src::BLOSC_NOSHUFFLE,
            Self::Shuffle => blosc_src::BLOSC_SHUFFLE,
            Self::BitShuffle => blosc_src::BLOSC_BITSHUFFLE,
        };
        code as c_int
    }
}

/// The configuration of the `blosc` codec (v3 `blosc`, "Configuration
/// parameters").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BloscConfig {
    /// The compressor applied to each block.
    pub cname: BloscCompressor,
    /// The compression level, 0 (none) to 9.
    pub clevel: u32,
    /// The shuffle applied before compressing.
    pub shuffle: BloscShuffle,
    /// The element size in bytes over which shuffling works. The spec
    /// requires it unless `shuffle` is `noshuffle`; when absent, 1 is used.
    #[serde(default)]
    pub typesize: Option<usize>,
    /// The block size in bytes, 0 for automatic (absent means 0).
    #[serde(default)]
    pub blocksize: usize,
}

/// The `blosc` codec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BloscCodec {
    cname: BloscCompressor,
    clevel: u32,
    shuffle: BloscShuffle,
    typesize: usize,
    blocksize: usize,
}

fn invalid(reason: String) -> CodecError {
    CodecError::InvalidConfiguration {
        codec: "blosc".to_string(),
        reason,
    }
}

impl BloscCodec {
    /// A `blosc` codec. `typesize` `None` means 1 (no effect of shuffling).
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] if `cname` is `snappy` (not
    /// included in this build), `clevel` is not in `0..=9`, or `typesize`
    /// is 0 with a shuffle.
    pub fn new(
        cname: BloscCompressor,
        clevel: u32,
        shuffle: BloscShuffle,
        typesize: Option<usize>,
        blocksize: usize,
    ) -> Result<Self, CodecError> {
        if cname == BloscCompressor::Snappy {
            return Err(invalid(
                "`cname` `snappy` is not supported (this build of c-blosc has no snappy)"
                    .to_string(),
            ));
        }
        if clevel > 9 {
            return Err(invalid(format!("`clevel` is {clevel}, expected 0 to 9")));
        }
        let typesize = match (typesize, shuffle) {
            // v3 `blosc`: with `noshuffle` the value is ignored.
            (_, BloscShuffle::NoShuffle) => typesize.filter(|&n| n > 0).unwrap_or(1),
            (Some(0), _) => {
                return Err(invalid(format!(
                    "`typesize` is 0, expected a positive integer with `shuffle` `{}`",
                    shuffle.name()
                )));
            }
            (typesize, _) => typesize.unwrap_or(1),
        };
        Ok(Self {
            cname,
            clevel,
            shuffle,
            typesize,
            blocksize,
        })
    }

    /// The compressor applied to each block.
    #[must_use]
    pub fn cname(&self) -> BloscCompressor {
        self.cname
    }

    /// The compression level.
    #[must_use]
    pub fn clevel(&self) -> u32 {
        self.clevel
    }

    /// The shuffle.
    #[must_use]
    pub fn shuffle(&self) -> BloscShuffle {
        self.shuffle
    }

    /// The element size shuffling works over.
    #[must_use]
    pub fn typesize(&self) -> usize {
        self.typesize
    }

    /// The block size, 0 for automatic.
    #[must_use]
    pub fn blocksize(&self) -> usize {
        self.blocksize
    }
}

/// Builds the codec from its metadata (the registry's constructor).
///
/// # Errors
/// [`CodecError::InvalidConfiguration`] if the configuration is invalid.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    let config: BloscConfig = parse_configuration(metadata)?;
    Ok(Codec::BytesToBytes(Arc::new(BloscCodec::new(
        config.cname,
        config.clevel,
        config.shuffle,
        config.typesize,
        config.blocksize,
    )?)))
}

fn corrupt(reason: &str) -> CodecError {
    CodecError::Corrupt {
        codec: "blosc",
        reason: reason.to_string(),
    }
}

/// The decoded size from which one chunk is compressed or decompressed
/// on several threads, when the caller allows more than one
/// ([`threads::chunk_threads`]): below it, starting c-blosc's threads
/// (it starts and joins them in every call) costs more than they save.
const MIN_PARALLEL_BYTES: usize = 2 << 20;

/// The smallest block the partial decoder decodes block by block; a value
/// of smaller blocks is decoded whole (c-blosc makes blocks of at least
/// 32 KiB for values that large, so only small or hand-made values have
/// them).
const MIN_PARTIAL_BLOCK: usize = 1024;

/// The threads c-blosc uses for one value of `size` decoded bytes.
fn internal_threads(size: usize) -> c_int {
    if size < MIN_PARALLEL_BYTES {
        return 1;
    }
    let threads = threads::chunk_threads().min(blosc_src::BLOSC_MAX_THREADS as usize);
    c_int::try_from(threads).unwrap_or(1)
}

/// Validates the header of `encoded` and returns the decoded size it
/// declares, refusing one above `bound`.
fn validated_size(encoded: &[u8], bound: Option<usize>) -> Result<usize, CodecError> {
    if encoded.len() < blosc_src::BLOSC_MIN_HEADER_LENGTH as usize {
        return Err(corrupt(&format!(
            "{} bytes is shorter than the 16-byte header",
            encoded.len()
        )));
    }
    let mut nbytes = 0usize;
    // SAFETY: `encoded` is readable for `encoded.len()` bytes, at least
    // the 16 the header needs, and `nbytes` is a valid out-pointer.
    let status = unsafe {
        blosc_src::blosc_cbuffer_validate(
            encoded.as_ptr().cast::<c_void>(),
            encoded.len(),
            &raw mut nbytes,
        )
    };
    // Validation checks that the header's compressed size is exactly the
    // length of `encoded`, so decompression cannot read past it, and
    // that the decoded size is at most 2 GiB, bounding the allocation.
    if status != 0 {
        return Err(corrupt(
            "invalid header (unknown version, or the compressed size does not match the data)",
        ));
    }
    // The header's size is untrusted: one beyond the chunk is refused
    // before the output is allocated (a 16-byte header can claim 2 GiB).
    if let Some(bound) = bound.filter(|&bound| nbytes > bound) {
        return Err(corrupt(&format!(
            "the header declares {nbytes} decoded bytes, more than the chunk's {bound}"
        )));
    }
    Ok(nbytes)
}

/// Decompresses `encoded`, validated by [`validated_size`] as `nbytes`
/// decoded bytes, into `dest`.
///
/// # Safety
/// `encoded` passed [`validated_size`], which returned `nbytes`, and `dest`
/// is writable for `nbytes` bytes and does not overlap `encoded`.
unsafe fn decompress(encoded: &[u8], dest: *mut u8, nbytes: usize) -> Result<(), CodecError> {
    // SAFETY: the header of `encoded` is valid and names its own length
    // (`blosc_cbuffer_validate`), `dest` has `nbytes` writable bytes,
    // passed as `destsize`, and c-blosc never writes more than
    // `destsize`. The `_ctx` function is safe to call concurrently; its
    // internal threads are joined before it returns.
    let written = unsafe {
        blosc_src::blosc_decompress_ctx(
            encoded.as_ptr().cast::<c_void>(),
            dest.cast::<c_void>(),
            nbytes,
            internal_threads(nbytes),
        )
    };
    if usize::try_from(written).ok() != Some(nbytes) {
        return Err(corrupt(&format!(
            "decompression failed (blosc_decompress_ctx returned {written}, expected {nbytes})"
        )));
    }
    Ok(())
}

/// The layout of a validated blosc value's blocks, when they can be
/// decoded one at a time with `blosc_getitem`: every block a whole number
/// of items (`typesize` bytes), and blocks at least
/// [`MIN_PARTIAL_BLOCK`] bytes.
struct Blocks {
    /// The decoded size.
    nbytes: usize,
    /// The size of every block but the last.
    blocksize: usize,
    /// The item size `blosc_getitem` counts in.
    typesize: usize,
}

impl Blocks {
    fn of(encoded: &[u8], nbytes: usize) -> Option<Self> {
        let typesize = usize::from(encoded[3]);
        let blocksize = u32::from_le_bytes([encoded[8], encoded[9], encoded[10], encoded[11]]);
        let blocksize = usize::try_from(blocksize).ok()?;
        (typesize > 0
            && blocksize >= MIN_PARTIAL_BLOCK
            && blocksize <= nbytes
            && blocksize.is_multiple_of(typesize)
            && nbytes.is_multiple_of(typesize))
        .then_some(Self {
            nbytes,
            blocksize,
            typesize,
        })
    }

    fn count(&self) -> usize {
        self.nbytes.div_ceil(self.blocksize)
    }

    /// Decodes block `j` of `encoded` into `dest`, a slot at least as long
    /// as a block, and zeroes the rest of the slot: on `Ok`, all of `dest`
    /// is initialised.
    fn decode(
        &self,
        encoded: &[u8],
        j: usize,
        dest: &mut [std::mem::MaybeUninit<u8>],
    ) -> Result<(), CodecError> {
        let start = j * self.blocksize;
        let size = self.blocksize.min(self.nbytes - start);
        let failed = |code: c_int| {
            corrupt(&format!(
                "decompression of block {j} failed (blosc_getitem returned {code}, expected {size})"
            ))
        };
        // Both fit in a c_int: the decoded size is at most 2 GiB
        // (validated), and items are at least a byte.
        let first = c_int::try_from(start / self.typesize).map_err(|_| failed(-1))?;
        let items = c_int::try_from(size / self.typesize).map_err(|_| failed(-1))?;
        assert!(dest.len() >= size, "a block's buffer holds the block");
        // SAFETY: `encoded` passed `blosc_cbuffer_validate` (so its
        // compressed size is its length, and c-blosc checks every block
        // offset and length against it), `first..first + items` lies
        // within its `nbytes / typesize` items (so `blosc_getitem` takes
        // none of its early returns, which print and leak), and `dest` is
        // writable for the `size` bytes it writes (c-blosc only writes to
        // it, never reads). `blosc_getitem` keeps
        // its state on its stack and in its own allocation: concurrent
        // calls are sound.
        let written = unsafe {
            blosc_src::blosc_getitem(
                encoded.as_ptr().cast::<c_void>(),
                first,
                items,
                dest.as_mut_ptr().cast::<c_void>(),
            )
        };
        if usize::try_from(written).ok() != Some(size) {
            return Err(failed(written));
        }
        dest[size..].fill(std::mem::MaybeUninit::new(0));
        Ok(())
    }
}

impl BytesToBytesCodec for BloscCodec {
    fn metadata(&self) -> ExtensionObject {
        let mut configuration = JsonMap::new();
        configuration.insert("cname".into(), self.cname.name().into());
        configuration.insert("clevel".into(), self.clevel.into());
        configuration.insert("shuffle".into(), self.shuffle.name().into());
        // v3 `blosc`: implementations must record the typesize they use.
        configuration.insert("typesize".into(), self.typesize.into());
        configuration.insert("blocksize".into(), self.blocksize.into());
        ExtensionObject::with_configuration("blosc", configuration)
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>, CodecError> {
        self.encode_slice(&decoded)
    }

    /// Compresses straight from the caller's bytes (c-blosc only reads them).
    fn encode_slice(&self, decoded: &[u8]) -> Result<Vec<u8>, CodecError> {
        if decoded.len() > MAX_BUFFER_SIZE {
            return Err(CodecError::Incompatible {
                codec: "blosc",
                what: format!(
                    "{} bytes (c-blosc takes at most {MAX_BUFFER_SIZE})",
                    decoded.len()
                ),
            });
        }
        let capacity = decoded.len() + MAX_OVERHEAD;
        let mut encoded: Vec<u8> = Vec::new();
        encoded
            .try_reserve_exact(capacity)
            .map_err(|_| CodecError::TooLarge {
                shape: vec![capacity as u64],
            })?;
        // The level and shuffle were checked in `new`: both fit in a c_int.
        let clevel = self.clevel as c_int;
        // SAFETY: `decoded` is readable for `decoded.len()` bytes and
        // `encoded` has `capacity` writable bytes of spare capacity, which
        // is what we pass as `destsize`; c-blosc writes at most `destsize`
        // bytes. The compressor name is a NUL-terminated static string. The
        // `_ctx` function keeps its state on the stack (its internal
        // threads are joined before it returns), so concurrent calls are
        // sound.
        let written = unsafe {
            blosc_src::blosc_compress_ctx(
                clevel,
                self.shuffle.code(),
                self.typesize,
                decoded.len(),
                decoded.as_ptr().cast::<c_void>(),
                encoded.as_mut_ptr().cast::<c_void>(),
                capacity,
                self.cname.c_name().as_ptr(),
                self.blocksize,
                internal_threads(decoded.len()),
            )
        };
        // With MAX_OVERHEAD spare bytes blosc always fits (it falls back
        // to a plain copy), so 0 or a negative value is an internal error.
        let written = usize::try_from(written)
            .ok()
            .filter(|&n| n > 0 && n <= capacity)
            .ok_or_else(|| CodecError::Library {
                codec: "blosc",
                source: std::io::Error::other(format!("blosc_compress_ctx returned {written}")),
            })?;
        // SAFETY: c-blosc initialised the first `written` bytes, and
        // `written <= capacity` was checked above.
        unsafe { encoded.set_len(written) };
        // Give the unwritten tail back to the allocator (glibc shrinks in
        // place). Kept, it holds pages c-blosc's temporary buffers of the
        // chunk before had touched: a 256³ shard of 32³ inner chunks, whose
        // 512 encodings live until the shard is assembled, held 32 MiB
        // more than its 1.4 MiB of encoded bytes, and every inner chunk
        // faulted fresh pages for those buffers (8,100 faults a shard).
        encoded.shrink_to_fit();
        Ok(encoded)
    }

    fn decode(&self, encoded: Vec<u8>, decoded_size: Option<usize>) -> Result<Vec<u8>, CodecError> {
        let nbytes = validated_size(&encoded, decoded_size)?;
        if nbytes == 0 {
            return Ok(Vec::new());
        }
        let mut decoded: Vec<u8> = Vec::new();
        decoded
            .try_reserve_exact(nbytes)
            .map_err(|_| CodecError::TooLarge {
                shape: vec![nbytes as u64],
            })?;
        // SAFETY: `validated_size` returned `nbytes`; `decoded` has
        // `nbytes` bytes of spare capacity, and is a new allocation.
        unsafe { decompress(&encoded, decoded.as_mut_ptr(), nbytes) }?;
        // SAFETY: c-blosc reported writing exactly `nbytes` bytes, the
        // reserved capacity.
        unsafe { decoded.set_len(nbytes) };
        Ok(decoded)
    }

    /// Decompresses straight into `out`: no buffer of its own, no copy.
    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
        let nbytes = validated_size(encoded, Some(out.len()))?;
        if nbytes != out.len() {
            return Err(CodecError::WrongSize {
                expected: out.len(),
                actual: nbytes,
            });
        }
        if nbytes == 0 {
            return Ok(());
        }
        // SAFETY: `validated_size` returned `nbytes`, `out.len()`; `out` is
        // a distinct, writable buffer.
        unsafe { decompress(encoded, out.as_mut_ptr(), nbytes) }
    }

    fn decodes_ranges(&self) -> bool {
        true
    }

    /// Decodes only the blocks the ranges touch (`blosc_getitem`, one
    /// block at a time, in parallel on the caller's rayon pool), into one
    /// buffer of those blocks, then gathers the ranges from it. A value
    /// whose blocks are all needed, or that `blosc_getitem` cannot take
    /// block by block, is decoded whole.
    fn decode_ranges(
        &self,
        encoded: Vec<u8>,
        decoded_size: usize,
        ranges: &[(usize, usize)],
    ) -> Result<Vec<u8>, CodecError> {
        let nbytes = validated_size(&encoded, Some(decoded_size))?;
        if nbytes != decoded_size {
            return Err(CodecError::WrongSize {
                expected: decoded_size,
                actual: nbytes,
            });
        }
        let total = partial::ranges_len(ranges, nbytes)?;
        let whole = |encoded: Vec<u8>| {
            let decoded = self.decode(encoded, Some(nbytes))?;
            partial::gather_ranges(&decoded, nbytes, ranges)
        };
        let Some(blocks) = Blocks::of(&encoded, nbytes) else {
            return whole(encoded);
        };
        // For each block, its place among the blocks decoded (u32::MAX: not needed).
        let mut slots = vec![u32::MAX; blocks.count()];
        for &(offset, length) in ranges.iter().filter(|r| r.1 > 0) {
            for slot in
                &mut slots[offset / blocks.blocksize..=(offset + length - 1) / blocks.blocksize]
            {
                *slot = 0;
            }
        }
        let needed: Vec<usize> = (0..slots.len()).filter(|&j| slots[j] == 0).collect();
        if needed.len() == slots.len() {
            return whole(encoded);
        }
        for (slot, &j) in needed.iter().enumerate() {
            // At most 2^31 blocks of at least MIN_PARTIAL_BLOCK bytes: fits.
            slots[j] = slot as u32;
        }
        // At most the decoded size plus one block: the chunk's size, checked
        // above. Not zeroed (a calloc from the heap would write every byte
        // once more): each block fills its slot, and a short last block
        // zeroes the rest of its own, before the length is set.
        let len = needed.len() * blocks.blocksize;
        let mut buffer: Vec<u8> = Vec::new();
        buffer
            .try_reserve_exact(len)
            .map_err(|_| CodecError::TooLarge {
                shape: vec![len as u64],
            })?;
        buffer.spare_capacity_mut()[..len]
            .par_chunks_mut(blocks.blocksize)
            .zip(needed.par_iter())
            .try_for_each(|(slot, &j)| blocks.decode(&encoded, j, slot))?;
        // SAFETY: every slot of the first `len` bytes was initialised by
        // `Blocks::decode`, which returned `Ok` for each.
        unsafe { buffer.set_len(len) };
        let mut out = Vec::with_capacity(total);
        for &(mut offset, length) in ranges {
            let end = offset + length;
            while offset < end {
                let j = offset / blocks.blocksize;
                let within = offset - j * blocks.blocksize;
                let n = (blocks.blocksize - within).min(end - offset);
                let at = slots[j] as usize * blocks.blocksize + within;
                out.extend_from_slice(&buffer[at..at + n]);
                offset += n;
            }
        }
        Ok(out)
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

    fn codec(cname: BloscCompressor, shuffle: BloscShuffle) -> BloscCodec {
        BloscCodec::new(cname, 5, shuffle, Some(4), 0).unwrap()
    }

    const COMPRESSORS: [BloscCompressor; 5] = [
        BloscCompressor::Blosclz,
        BloscCompressor::Lz4,
        BloscCompressor::Lz4hc,
        BloscCompressor::Zlib,
        BloscCompressor::Zstd,
    ];

    const SHUFFLES: [BloscShuffle; 3] = [
        BloscShuffle::NoShuffle,
        BloscShuffle::Shuffle,
        BloscShuffle::BitShuffle,
    ];

    #[test]
    fn header_records_sizes_typesize_and_shuffle() {
        let data: Vec<u8> = (0u32..10_000).flat_map(u32::to_le_bytes).collect();
        let encoded = codec(BloscCompressor::Lz4, BloscShuffle::Shuffle)
            .encode(data.clone())
            .unwrap();
        // Blosc chunk format: version 2, versionlz, flags, typesize, then
        // nbytes, blocksize and cbytes as little-endian u32.
        assert_eq!(encoded[0], 2);
        assert_eq!(encoded[2] & 0x1, 0x1, "byte-shuffle flag");
        assert_eq!(encoded[2] >> 5, 1, "lz4 format code");
        assert_eq!(encoded[3], 4);
        assert_eq!(encoded[4..8], 40_000u32.to_le_bytes());
        assert_eq!(encoded[12..16], (encoded.len() as u32).to_le_bytes());
        assert!(encoded.len() < data.len() / 4, "{}", encoded.len());
    }

    #[test]
    fn an_encoding_holds_no_more_memory_than_its_bytes() {
        // A shard keeps every inner chunk's encoding until it is
        // assembled: each must not keep the chunk-sized output buffer
        // c-blosc was given.
        let data: Vec<u8> = (0u32..16_384).flat_map(u32::to_le_bytes).collect();
        let encoded = codec(BloscCompressor::Lz4, BloscShuffle::Shuffle)
            .encode_slice(&data)
            .unwrap();
        assert!(encoded.len() < data.len() / 4, "{}", encoded.len());
        assert_eq!(encoded.capacity(), encoded.len());
    }

    #[test]
    fn every_compressor_and_shuffle_round_trips() {
        let data = sample(100_000);
        for cname in COMPRESSORS {
            for shuffle in SHUFFLES {
                let codec = codec(cname, shuffle);
                let encoded = codec.encode(data.clone()).unwrap();
                assert!(encoded.len() < data.len(), "{cname:?} {shuffle:?}");
                let decoded = codec.decode(encoded, Some(data.len())).unwrap();
                assert_eq!(decoded, data, "{cname:?} {shuffle:?}");
            }
        }
    }

    #[test]
    fn level_zero_and_empty_input_round_trip() {
        let codec =
            BloscCodec::new(BloscCompressor::Zstd, 0, BloscShuffle::NoShuffle, None, 0).unwrap();
        let data = sample(1000);
        let encoded = codec.encode(data.clone()).unwrap();
        assert_eq!(encoded.len(), data.len() + MAX_OVERHEAD);
        assert_eq!(codec.decode(encoded, None).unwrap(), data);
        let encoded = codec.encode(Vec::new()).unwrap();
        assert_eq!(encoded.len(), MAX_OVERHEAD);
        assert_eq!(codec.decode(encoded, None).unwrap(), b"");
    }

    #[test]
    fn decoding_ignores_the_configuration() {
        // The header says how the data was compressed.
        let data = sample(20_000);
        let encoded = codec(BloscCompressor::Zlib, BloscShuffle::BitShuffle)
            .encode(data.clone())
            .unwrap();
        let other = codec(BloscCompressor::Lz4, BloscShuffle::NoShuffle);
        assert_eq!(other.decode(encoded.clone(), Some(20_000)).unwrap(), data);
        // The size is a bound, never exceeded: a header claiming more than
        // the chunk is refused before anything is allocated.
        let err = other.decode(encoded, Some(3)).unwrap_err();
        assert!(
            err.to_string()
                .contains("declares 20000 decoded bytes, more than the chunk's 3"),
            "{err}"
        );
    }

    #[test]
    fn corrupt_truncated_and_empty_inputs_are_errors() {
        for cname in COMPRESSORS {
            let codec = codec(cname, BloscShuffle::Shuffle);
            let encoded = codec.encode(sample(50_000)).unwrap();
            for len in [0, 1, 15, 16, 17, encoded.len() / 2, encoded.len() - 1] {
                let err = codec.decode(encoded[..len].to_vec(), None).unwrap_err();
                assert!(
                    err.to_string().starts_with("blosc data is corrupt"),
                    "{cname:?} {len}: {err}"
                );
            }
            let mut longer = encoded.clone();
            longer.push(0);
            assert!(codec.decode(longer, None).is_err());
            // A decoded size larger than the data was compressed from.
            let mut corrupt = encoded.clone();
            corrupt[4..8].copy_from_slice(&60_000u32.to_le_bytes());
            assert!(codec.decode(corrupt, None).is_err(), "{cname:?}");
            // Garbage in the compressed blocks.
            let mut corrupt = encoded;
            for byte in &mut corrupt[40..] {
                *byte = byte.wrapping_mul(13).wrapping_add(7);
            }
            let _ = codec.decode(corrupt, None);
        }
    }

    #[test]
    fn invalid_configurations_are_rejected_naming_the_codec() {
        let cases = [
            (
                r#"{"cname": "lz5", "clevel": 5, "shuffle": "shuffle", "typesize": 4}"#,
                "unknown variant `lz5`",
            ),
            (
                r#"{"cname": "lz4", "clevel": 10, "shuffle": "shuffle", "typesize": 4}"#,
                "`clevel` is 10, expected 0 to 9",
            ),
            (
                r#"{"cname": "snappy", "clevel": 5, "shuffle": "shuffle", "typesize": 4}"#,
                "`snappy` is not supported",
            ),
            (
                r#"{"cname": "lz4", "clevel": 5, "shuffle": 1, "typesize": 4}"#,
                "invalid type: integer `1`",
            ),
            (
                r#"{"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 0}"#,
                "`typesize` is 0",
            ),
            (
                r#"{"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "nthreads": 2}"#,
                "unknown field `nthreads`",
            ),
            (
                r#"{"clevel": 5, "shuffle": "shuffle", "typesize": 4}"#,
                "missing field `cname`",
            ),
        ];
        for (config, expected) in cases {
            let config: JsonMap = serde_json::from_str(config).unwrap();
            let err = create(&ExtensionObject::with_configuration("blosc", config)).unwrap_err();
            let message = err.to_string();
            assert!(
                message.starts_with("invalid configuration for codec `blosc`"),
                "{message}"
            );
            assert!(message.contains(expected), "{message}");
        }
    }

    #[test]
    fn typesize_and_blocksize_default_and_are_always_written() {
        let config: JsonMap =
            serde_json::from_str(r#"{"cname": "zstd", "clevel": 3, "shuffle": "noshuffle"}"#)
                .unwrap();
        let Codec::BytesToBytes(codec) =
            create(&ExtensionObject::with_configuration("blosc", config)).unwrap()
        else {
            panic!("blosc is bytes-to-bytes");
        };
        assert_eq!(
            serde_json::Value::Object(codec.metadata().configuration_or_empty()),
            serde_json::json!({
                "cname": "zstd", "clevel": 3, "shuffle": "noshuffle", "typesize": 1, "blocksize": 0
            })
        );
    }

    #[test]
    fn explicit_blocksize_is_used() {
        // c-blosc enlarges the blocks of codecs it splits (lz4, blosclz) but not zstd's.
        let codec = BloscCodec::new(
            BloscCompressor::Zstd,
            5,
            BloscShuffle::Shuffle,
            Some(2),
            4096,
        )
        .unwrap();
        let data = sample(50_000);
        let encoded = codec.encode(data.clone()).unwrap();
        assert_eq!(encoded[8..12], 4096u32.to_le_bytes());
        assert_eq!(codec.decode(encoded, None).unwrap(), data);
    }

    /// Byte ranges of a value of `size` bytes: every block boundary of
    /// `block` bytes and its neighbours, runs crossing boundaries, empty
    /// ranges, the first and last bytes, and a strided pattern like a
    /// box's rows.
    fn ranges_for(size: usize, block: usize) -> Vec<(usize, usize)> {
        let mut ranges = vec![(0, 1), (size - 1, 1), (0, 0), (size, 0), (3, 5)];
        let mut edge = block;
        while edge < size {
            ranges.push((edge - 1, 2.min(size - edge + 1)));
            ranges.push((edge - 7, (block + 14).min(size - edge + 7)));
            edge += block;
        }
        // Rows of 48 bytes every 1000 bytes within the first third.
        ranges.extend((0..size / 3000).map(|i| (i * 1000 + 17, 48)));
        ranges
    }

    #[test]
    fn range_decoding_equals_whole_decoding() {
        // 100,000 bytes in explicit 4 KiB blocks: 25 blocks, the last one
        // short (and unsplit), so ranges cross block boundaries.
        let data = sample(400_000 - 4);
        for cname in [
            BloscCompressor::Blosclz,
            BloscCompressor::Lz4,
            BloscCompressor::Zstd,
        ] {
            for shuffle in SHUFFLES {
                for typesize in [1, 2, 4, 8] {
                    let codec = BloscCodec::new(cname, 5, shuffle, Some(typesize), 4096).unwrap();
                    let encoded = codec.encode(data.clone()).unwrap();
                    let block = u32::from_le_bytes(encoded[8..12].try_into().unwrap()) as usize;
                    assert!(block >= 4096 && block < data.len() / 4, "{cname:?} {block}");
                    let ranges = ranges_for(data.len(), block);
                    let expected: Vec<u8> = ranges
                        .iter()
                        .flat_map(|&(o, n)| data[o..o + n].iter().copied())
                        .collect();
                    let got = codec.decode_ranges(encoded.clone(), data.len(), &ranges);
                    let what = format!("{cname:?} {shuffle:?} typesize {typesize}");
                    assert_eq!(got.unwrap(), expected, "{what}");
                    // One range in one block decodes that block alone, and
                    // all ranges of a block only once.
                    let one = codec.decode_ranges(
                        encoded.clone(),
                        data.len(),
                        &[(block + 5, 3), (block, 9)],
                    );
                    assert_eq!(
                        one.unwrap(),
                        [&data[block + 5..block + 8], &data[block..block + 9]].concat(),
                        "{what}"
                    );
                    // Every byte: decoded whole.
                    let all = codec.decode_ranges(encoded, data.len(), &[(0, data.len())]);
                    assert_eq!(all.unwrap(), data, "{what}");
                }
            }
        }
    }

    #[test]
    fn range_decoding_of_odd_layouts_falls_back_to_whole_decoding() {
        let data = sample(30_001);
        // Typesize 4 does not divide 30,001 bytes; one block of small data;
        // level 0 stores the data as a plain copy.
        for (typesize, blocksize, clevel) in [(4, 4096, 5), (2, 0, 5), (1, 4096, 0)] {
            let codec = BloscCodec::new(
                BloscCompressor::Lz4,
                clevel,
                BloscShuffle::Shuffle,
                Some(typesize),
                blocksize,
            )
            .unwrap();
            let encoded = codec.encode(data.clone()).unwrap();
            let ranges = [(10, 100), (20_000, 9_000), (30_000, 1)];
            let got = codec.decode_ranges(encoded, data.len(), &ranges).unwrap();
            let expected = [&data[10..110], &data[20_000..29_000], &data[30_000..]].concat();
            assert_eq!(
                got, expected,
                "typesize {typesize} blocksize {blocksize} clevel {clevel}"
            );
        }
    }

    #[test]
    fn range_decoding_refuses_bad_sizes_ranges_and_blocks() {
        let data = sample(64_000);
        let codec = BloscCodec::new(
            BloscCompressor::Zstd,
            5,
            BloscShuffle::Shuffle,
            Some(2),
            4096,
        )
        .unwrap();
        let encoded = codec.encode(data).unwrap();
        let message = |r: Result<Vec<u8>, CodecError>| r.unwrap_err().to_string();
        // A header declaring more, or less, than the chunk.
        let err = message(codec.decode_ranges(encoded.clone(), 1000, &[(0, 10)]));
        assert!(
            err.contains("declares 64000 decoded bytes, more than the chunk's 1000"),
            "{err}"
        );
        let err = message(codec.decode_ranges(encoded.clone(), 70_000, &[(0, 10)]));
        assert_eq!(err, "decoded to 64000 bytes, expected 70000");
        // A range past the end.
        let err = message(codec.decode_ranges(encoded.clone(), 64_000, &[(63_990, 11)]));
        assert!(err.contains("out of bounds"), "{err}");
        // Truncated data.
        let err =
            message(codec.decode_ranges(encoded[..encoded.len() - 1].to_vec(), 64_000, &[(0, 10)]));
        assert!(err.starts_with("blosc data is corrupt"), "{err}");
        // A block's start pointing past the data, and garbage in the blocks:
        // an error naming the block, never a crash.
        let mut forged = encoded.clone();
        forged[16 + 4 * 3..16 + 4 * 4].copy_from_slice(&(encoded.len() as u32 + 100).to_le_bytes());
        let err = message(codec.decode_ranges(forged, 64_000, &[(3 * 4096 + 1, 2)]));
        assert!(err.contains("decompression of block 3 failed"), "{err}");
        let mut garbage = encoded.clone();
        let start =
            u32::from_le_bytes(encoded[16 + 4 * 5..16 + 4 * 6].try_into().unwrap()) as usize;
        for byte in &mut garbage[start..start + 64] {
            *byte = byte.wrapping_mul(13).wrapping_add(7);
        }
        let _ = codec.decode_ranges(garbage, 64_000, &[(5 * 4096, 4096)]);
    }

    #[test]
    fn several_internal_threads_code_one_chunk_one_thread_decodes() {
        // 4 MiB: above MIN_PARALLEL_BYTES, so two threads split it.
        let data = sample(4 << 20);
        for (cname, shuffle) in [
            (BloscCompressor::Blosclz, BloscShuffle::BitShuffle),
            (BloscCompressor::Lz4, BloscShuffle::Shuffle),
        ] {
            let codec = BloscCodec::new(cname, 9, shuffle, Some(2), 0).unwrap();
            let serial = codec.encode(data.clone()).unwrap();
            let parallel = threads::with_chunk_threads(2, || codec.encode(data.clone())).unwrap();
            // Blocks may be stored in another order: the same header, and
            // one thread decodes what two encoded.
            assert_eq!(parallel[..16], serial[..16], "{cname:?}");
            assert!(
                codec.decode(parallel.clone(), None).unwrap() == data,
                "{cname:?}"
            );
            let decoded =
                threads::with_chunk_threads(2, || codec.decode(parallel.clone(), Some(data.len())));
            assert!(decoded.unwrap() == data, "{cname:?}");
            let mut out = vec![0u8; data.len()];
            threads::with_chunk_threads(2, || codec.decode_into(&parallel, &mut out)).unwrap();
            assert!(out == data, "{cname:?}");
            let err = codec
                .decode_into(&parallel, &mut out[1..])
                .unwrap_err()
                .to_string();
            assert!(err.contains("more than the chunk's"), "{err}");
        }
    }

    proptest! {
        #[test]
        fn blosc_round_trips(
            data in prop::collection::vec(any::<u8>(), 0..4096),
            cname in prop::sample::select(COMPRESSORS.to_vec()),
            shuffle in prop::sample::select(SHUFFLES.to_vec()),
            clevel in 0u32..=9,
            typesize in 1usize..=16,
        ) {
            let codec = BloscCodec::new(cname, clevel, shuffle, Some(typesize), 0)?;
            let decoded = codec.decode(codec.encode(data.clone())?, Some(data.len()))?;
            prop_assert_eq!(decoded, data);
        }

        #[test]
        fn blosc_decode_of_garbage_does_not_panic(data in prop::collection::vec(any::<u8>(), 16..512)) {
            let codec = codec(BloscCompressor::Lz4, BloscShuffle::Shuffle);
            // Make the header plausible so that decompression itself runs.
            let mut data = data;
            data[0] = 2;
            let len = data.len() as u32;
            data[12..16].copy_from_slice(&len.to_le_bytes());
            let _ = codec.decode(data, None);
        }
    }
}
