//! Codecs: numcodecs' test vectors and chains of real codecs, the
//! registered v3 extension codecs, and numcodecs' filters and checksums
//! against zarr-python.

mod ext;
// The hierarchies here use the default zstd codec.
mod ext_compression;
// The v2 filter cases use zlib as the compressor.
#[cfg(feature = "zlib")]
mod numcodecs;
#[cfg(any(feature = "blosc", feature = "zstd"))]
mod partial_decode;
// The codec tests use every compressor, so they need every codec feature.
#[cfg(all(
    feature = "gzip",
    feature = "zstd",
    feature = "blosc",
    feature = "crc32c"
))]
mod vectors;
